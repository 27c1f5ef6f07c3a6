/* profiler: see profiler.h.
 *
 * The sampling loop is the session's (session_run: the tick clock, the
 * signalfd, the target's events); the profiler adds what a recording does
 * with a stop signal and the progress line drawn every second. */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "address.h"
#include "addrmap.h"
#include "array.h"
#include "error.h"
#include "procfs.h"
#include "profile.h"
#include "profiler.h"
#include "report.h"
#include "sampler.h"
#include "session.h"
#include "stackmap.h"
#include "symcache.h"
#include "target.h"
#include "tempfile.h"
#include "timeline.h"
#include "tracer.h"
#include "write.h"


struct run {
	const struct options *opt;
	struct session s;            /* target, stackmap, sampler, signalfd */
	uint64_t start_realtime_ns, start_ns, end_ns;
	int stop_signal;             /* the last stop signal received, or 0 */
	unsigned stop_signals;       /* how many were received */
	bool progress;               /* draw a status line on stderr */
	bool attached;               /* the session sampled (the tracer thread says) */
	struct timeline *timeline;   /* every sample in time order, for timeline outputs */
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void draw_progress(const struct run *r, uint64_t now)
{
	struct recorder_stats st;
	recorder_get_stats(r->s.recorder, &st);
	double elapsed = (double)(now - r->start_ns) / 1e9;
	char dur[32] = "";
	if (r->opt->duration > 0)
		snprintf(dur, sizeof dur, " / %.0fs", r->opt->duration);
	size_t nthreads = recorder_nthreads(r->s.recorder);
	fprintf(stderr, "\r\033[K[%.1fs%s] %llu samples, %zu %s, %.1f samples/s", elapsed, dur,
		(unsigned long long)st.samples, nthreads, nthreads == 1 ? "thread" : "threads",
		elapsed > 0 ? (double)st.samples / elapsed : 0.0);
	fflush(stderr);
}

/* A stop signal. Attach mode: any ends sampling. Launch mode: Ctrl-C
 * reached the program too (same process group), so sample on until it
 * exits; a second signal stops us. */
static bool on_stop_signal(void *ctx, int signo)
{
	struct run *r = ctx;
	r->stop_signal = signo;
	r->stop_signals++;
	return r->stop_signals > (r->opt->command ? 1u : 0u);
}

static int on_second(void *ctx, uint64_t now)
{
	draw_progress(ctx, now);
	return 0;
}

/* Sample until the duration elapses, a stop signal arrives, or every traced
 * process is gone. Returns 0 or -1 on a fatal error. */
static int sample_loop(struct run *r)
{
	struct session_hooks h = {
		.ctx = r, .on_stop_signal = on_stop_signal, .extra_fd = -1,
		.on_second = r->progress ? on_second : NULL,
	};
	enum session_end end = session_run(&r->s, r->start_ns, &h);
	if (r->progress)
		fputs("\r\033[K", stderr);
	return end == SESSION_END_ERROR ? -1 : 0;
}

/* ---- from raw stacks to a profile --------------------------------------------------- */

struct build {
	struct run *run;
	struct profile *profile;
	struct symcache *symbols;    /* the recorder's processes, symbolized once */
	struct addrmap locations;    /* (pid, address) -> profile location */
	uint32_t *locs;
	uint32_t blocked_loc;        /* "[blocked]" pseudo location, lazily made */
	struct mapping_seen {        /* per profile mapping: what its locations got */
		bool located, unresolved, files, lines, inlined;
	} *seen;
	size_t seen_cap;
	int error;
};

/* The profile mapping of MOD (its has_* flags are set at the end). */
static uint32_t add_mapping(struct build *b, const struct symbol_module *mod)
{
	struct profile_mapping pm = {
		.start = mod->start, .limit = mod->limit, .offset = mod->offset,
		.filename = mod->path ? mod->path : "",
		.build_id = mod->build_id ? mod->build_id : "",
	};
	return profile_add_mapping(b->profile, &pm);
}

/* A location of MAPPING got LINES (N, innermost first), RESOLVED if every
 * frame has a real name: what the mapping's has_* flags will say. */
static void note_mapping_seen(struct build *b, uint32_t mapping, const struct profile_line *lines,
			      size_t n, bool resolved)
{
	if (mapping == PROFILE_NONE)
		return;
	size_t old = b->seen_cap;
	if (array_grow(&b->seen, &b->seen_cap, (size_t)mapping + 1, sizeof *b->seen, 64) < 0) {
		b->error = ENOMEM;
		return;
	}
	memset(b->seen + old, 0, (b->seen_cap - old) * sizeof *b->seen);
	struct mapping_seen *m = &b->seen[mapping];
	m->located = true;
	m->unresolved |= !resolved;
	m->inlined |= n > 1;
	for (size_t i = 0; i < n; i++) {
		const struct profile_function *f = &b->profile->functions[lines[i].function];
		m->files |= f->filename && *f->filename;
		m->lines |= lines[i].line > 0;
	}
}

/* pprof reads a mapping's has_* flags as "symbolized already": it looks up
 * again (PPROF_BINARY_PATH, source and disassembly views) only a mapping
 * that claims nothing. So they say what its locations really got: functions
 * when every one of them has a real name (not module+0xOFF), file names and
 * line numbers when any has one, inline frames when any has them. */
static void set_mapping_flags(struct build *b)
{
	for (size_t i = 0; i < b->profile->nmappings; i++) {
		struct profile_mapping *m = &b->profile->mappings[i];
		struct mapping_seen none = { 0 }, *seen = i < b->seen_cap ? &b->seen[i] : &none;
		m->has_functions = seen->located && !seen->unresolved;
		m->has_filenames = seen->files;
		m->has_line_numbers = seen->lines;
		m->has_inline_frames = seen->inlined;
	}
}

static uint32_t location_for(struct build *b, pid_t pid, uint64_t addr)
{
	uint32_t *slot = addrmap_slot(&b->locations, pid, addr);
	if (!slot)
		return PROFILE_NONE;
	if (*slot != ADDRMAP_EMPTY)
		return *slot;
	struct symcache_result r;
	if (symcache_lookup(b->symbols, pid, addr, &r) < 0)
		return PROFILE_NONE;
	uint32_t mapping = r.has_module ? add_mapping(b, &r.module) : PROFILE_NONE;
	struct profile_line lines[SYMCACHE_MAX_FRAMES];
	for (size_t i = 0; i < r.n; i++) {
		const struct symbol_frame *f = &r.frames[i];
		lines[i].function = profile_add_function(b->profile, f->function,
							 f->system_name ? f->system_name : f->function,
							 f->file ? f->file : "", f->decl_line);
		lines[i].line = f->line;
		if (lines[i].function == PROFILE_NONE)
			return PROFILE_NONE;
	}
	note_mapping_seen(b, mapping, lines, r.n, r.resolved);
	/* a caller's location is its call instruction (the return address - 1),
	 * as pprof and every tool that looks the address up again expect */
	*slot = profile_add_location(b->profile, addr_lookup_pc(addr), mapping, lines, r.n, r.jit);
	return *slot;
}

static uint32_t blocked_location(struct build *b)
{
	if (b->blocked_loc == PROFILE_NONE) {
		struct profile_line line = {
			.function = profile_add_function(b->profile, "[blocked]", "[blocked]", "", 0),
		};
		b->blocked_loc = profile_add_location(b->profile, 0, PROFILE_NONE, &line, 1, false);
	}
	return b->blocked_loc;
}

/* The thread's name after --thread-group: the first matching group wins and
 * its threads are merged (tid 0). */
static uint32_t thread_for(struct build *b, const struct recorder_thread *ti)
{
	const struct options *o = b->run->opt;
	for (size_t g = 0; g < o->ngroups; g++)
		if (regexec(&o->groups[g].re, ti->name, 0, NULL, 0) == 0)
			return profile_add_thread(b->profile, ti->pid, 0, o->groups[g].name, ti->process);
	return profile_add_thread(b->profile, ti->pid, ti->tid, ti->name, ti->process);
}

/* Add one stack of thread KEY to the profile; 0, or 1 with b->error set. */
static int add_stack(struct build *b, uint32_t key, uint32_t stack_flags, const uint64_t *addrs,
		     uint32_t depth, uint64_t count, uint64_t time)
{
	const struct recorder_thread *ti = recorder_thread(b->run->s.recorder, key);
	if (!ti)
		return 0;
	uint32_t thread = thread_for(b, ti);
	size_t n = 0;
	for (uint32_t i = 0; i < depth && i < b->run->opt->max_depth; i++) {
		uint32_t loc = location_for(b, ti->pid, addrs[i]);
		if (loc != PROFILE_NONE)
			b->locs[n++] = loc;
	}
	if (stack_flags & STACK_NOT_CAPTURED)
		b->locs[n++] = blocked_location(b);
	uint32_t flags = (stack_flags & (STACK_TRUNCATED_DEPTH | STACK_TRUNCATED_WINDOW |
					 STACK_UNWIND_ERROR)) ? PROFILE_SAMPLE_TRUNCATED : 0;
	if (thread == PROFILE_NONE ||
	    profile_add_timed_sample(b->profile, thread, b->locs, n, flags, count, time) < 0) {
		b->error = errno ? errno : ENOMEM;
		return 1;
	}
	return 0;
}

static int add_entry(void *ctx, const struct stackmap_entry *e)
{
	struct build *b = ctx;
	return add_stack(b, e->thread_key, e->flags, e->addrs, e->depth, e->count, PROFILE_NO_TIME);
}

static int add_timeline_entry(void *ctx, const struct timeline_entry *e)
{
	struct build *b = ctx;
	uint64_t t = e->time_ns > b->run->start_ns ? e->time_ns - b->run->start_ns : 0;
	return add_stack(b, e->thread_key, e->flags, e->addrs, e->depth, e->count, t);
}

static char *join_command(const struct run *r, const struct recorder_thread *first)
{
	const struct options *o = r->opt;
	size_t len = 1;
	if (o->command) {
		for (char **a = o->command; *a; a++)
			len += strlen(*a) + 1;
		char *s = malloc(len), *p = s;
		if (!s)
			return NULL;
		for (char **a = o->command; *a; a++)
			p += sprintf(p, "%s%s", a == o->command ? "" : " ", *a);
		*p = '\0';
		return s;
	}
	/* Attach mode: the process's own command line. */
	char buf[4096];
	if (procfs_read_cmdline(o->pid, buf, sizeof buf) == 0 && first)
		snprintf(buf, sizeof buf, "%s", first->process);
	return strdup(buf);
}

/* The main process's program: its file-backed mapping at the lowest address
 * (the kernel and ld.so put the program below its heap, and libraries and
 * the vdso far above), then that file's mapping that holds code. */
static const struct procmaps_entry *main_program_text(const struct procmaps *pm)
{
	const struct procmaps_entry *first = NULL, *text = NULL;
	size_t n = procmaps_count(pm);
	for (size_t i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps_at(pm, i);
		if (e->path[0] == '/' && (!first || e->start < first->start))
			first = e;
	}
	for (size_t i = 0; first && i < n; i++) {
		const struct procmaps_entry *e = procmaps_at(pm, i);
		if (e->executable && e->inode == first->inode && e->dev_major == first->dev_major &&
		    e->dev_minor == first->dev_minor && strcmp(e->path, first->path) == 0 &&
		    (!text || e->start < text->start))
			text = e;
	}
	return text;
}

/* pprof takes the first mapping for the program (its "File:" line, and the
 * binary it looks symbols up in first): add the main process's program
 * before any location adds a library, the vdso or a child's program. */
static void add_main_mapping(struct build *b)
{
	pid_t pid = target_main_pid(b->run->s.target);
	for (size_t i = recorder_nprocesses(b->run->s.recorder); i-- > 0;) {
		const struct procmaps *pm = recorder_process_maps(b->run->s.recorder, i);
		if (procmaps_pid(pm) != pid)
			continue;
		const struct procmaps_entry *text = main_program_text(pm);
		struct symbol_module mod;
		if (text && symcache_module(b->symbols, pid, text->start | ADDR_ACTIVATION, &mod))
			add_mapping(b, &mod);
		return;
	}
}

static struct profile *build_profile(struct run *r, const struct symbolize_options *so)
{
	struct build b = { .run = r, .blocked_loc = PROFILE_NONE };
	b.profile = profile_new();
	b.symbols = symcache_new(so, r->opt->verbose);
	b.locs = malloc((r->opt->max_depth + 1) * sizeof *b.locs);
	if (!b.profile || !b.symbols || !b.locs)
		goto fail;
	for (size_t i = 0; i < recorder_nprocesses(r->s.recorder); i++)
		if (symcache_add_process(b.symbols, recorder_process_maps(r->s.recorder, i)) < 0)
			goto fail;
	add_main_mapping(&b);
	/* with a timeline output, one sample per sample taken, in time order */
	int walk = r->timeline ? timeline_foreach(r->timeline, add_timeline_entry, &b)
			       : stackmap_foreach(r->s.map, add_entry, &b);
	b.profile->timeline = r->timeline != NULL;
	if (walk != 0 || b.error) {
		if (b.error)
			errno = b.error;
		warn_errno("cannot build the profile");
		goto fail;
	}
	set_mapping_flags(&b);
	char *cmd = join_command(r, recorder_thread(r->s.recorder, 0));
	profile_set_command(b.profile, cmd ? cmd : "");
	free(cmd);
	b.profile->pid = target_main_pid(r->s.target);
	b.profile->time_nanos = r->start_realtime_ns;
	b.profile->duration_nanos = r->end_ns - r->start_ns;
	b.profile->period_nanos = 1000000000u / r->opt->rate;
	b.profile->wall = r->opt->idle;
	goto done;
fail:
	profile_free(b.profile);
	b.profile = NULL;
done:
	symcache_free(b.symbols);
	addrmap_free(&b.locations);
	free(b.locs);
	free(b.seen);
	return b.profile;
}

/* ---- reporting -------------------------------------------------------------------- */

static int write_outputs(const struct run *r, const struct profile *p)
{
	const struct options *o = r->opt;
	struct write_options wo = { .threads = o->threads, .annotate = o->annotate };
	char deflt[128];
	struct output_spec def;
	const struct output_spec *outs = o->outputs;
	size_t nouts = o->noutputs;
	int status = CS_EXIT_OK;

	if (nouts == 0) {
		char date[32];
		time_t now = time(NULL);
		struct tm tm;
		strftime(date, sizeof date, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
		snprintf(deflt, sizeof deflt, "csampler-%d-%s.pb.gz", (int)p->pid, date);
		def.path = deflt;
		def.format = FORMAT_PPROF;
		outs = &def;
		nouts = 1;
	}
	for (size_t i = 0; i < nouts; i++) {
		if (write_output(p, outs[i].path, outs[i].format, &wo) < 0) {
			status = CS_EXIT_OUTPUT;
			continue;
		}
		if (strcmp(outs[i].path, "-") != 0)
			report_written(o, outs[i].path, outs[i].format, p->total_samples);
	}
	return status;
}

/* Launch mode, after sampling stopped early: wait for the program. */
static int wait_program(struct run *r)
{
	while (!target_done(r->s.target)) {
		int status;
		pid_t pid = waitpid(target_main_pid(r->s.target), &status, 0);
		if (pid < 0 && errno != EINTR)
			break;
		if (pid > 0)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	return target_exit_status(r->s.target);
}

/* The tracer thread's part of a recording: attach or launch, sample, let
 * go. Returns 0, CS_EXIT_FAILURE when sampling failed (what was sampled is
 * still written), or the status to exit with when nothing was sampled. */
static int record(void *arg)
{
	struct run *r = arg;
	const struct options *o = r->opt;
	int status = session_attach(&r->s, o->max_stacks, NULL, NULL, NULL);
	if (status != 0)
		return status;
	r->attached = true;
	recorder_set_timeline(r->s.recorder, r->timeline);
	/* A closed stdout (-o - | head) must be an error we report, not a kill.
	 * Set after the launch fork: an ignored signal stays ignored across exec. */
	signal(SIGPIPE, SIG_IGN);
	r->progress = !o->quiet && isatty(STDERR_FILENO);
	report_start(o, target_main_pid(r->s.target));
	r->start_realtime_ns = clock_ns(CLOCK_REALTIME);
	r->start_ns = clock_ns(CLOCK_MONOTONIC);
	if (target_start(r->s.target) < 0) {
		session_detach(&r->s);
		r->attached = false;
		return CS_EXIT_FAILURE;
	}
	int loop = sample_loop(r);
	r->end_ns = clock_ns(CLOCK_MONOTONIC);
	session_detach(&r->s);
	sampler_close_threads(r->s.sampler);
	return loop < 0 ? CS_EXIT_FAILURE : 0;
}

int profiler_run(const struct options *o)
{

	struct run r = { .opt = o };
	for (size_t i = 0; i < o->noutputs; i++)
		if (write_output_check(o->outputs[i].path) < 0)
			return CS_EXIT_OUTPUT;
	int status = session_open(&r.s, o, 0);
	if (status != 0)
		return status;
	for (size_t i = 0; i < o->noutputs && !r.timeline; i++) {
		if (!write_format_is_timeline(o->outputs[i].format))
			continue;
		r.timeline = timeline_new(o->max_depth);
		if (!r.timeline) {
			warn_errno("cannot make the timeline");
			status = CS_EXIT_SYSTEM;
			goto out;
		}
	}
	status = tracer_run(record, &r);
	if (status < 0) {
		warn_errno("cannot start the tracer thread");
		status = CS_EXIT_SYSTEM;
	}
	if (!r.attached)
		goto out;
	struct sampler_stats sst;
	struct recorder_stats rst;
	sampler_get_stats(r.s.sampler, &sst);
	recorder_get_stats(r.s.recorder, &rst);
	/* Most stacks refused (a program that made itself non-dumpable after a
	 * sample or two of its start): the profile is not its profile. */
	if (rst.unreadable > 0 && rst.unreadable >= rst.samples && status == CS_EXIT_OK)
		status = CS_EXIT_PERMISSION;  /* said in the recorder's warning */

	report_summary(o, target_main_pid(r.s.target), &sst, &rst,
		       (double)(r.end_ns - r.start_ns) / 1e9);
	struct symbolize_options so = { .no_inline = o->no_inline, .addresses_only = o->addresses };
	struct profile *p = build_profile(&r, &so);
	if (!p) {
		status = CS_EXIT_SYSTEM;
		goto out;
	}
	int wstatus = write_outputs(&r, p);
	profile_free(p);
	struct stackmap_stats ms;
	stackmap_get_stats(r.s.map, &ms);
	if (ms.lost) {
		warn("%llu samples lost: the spill file in %s could not be written; the profile "
		     "lacks them", (unsigned long long)ms.lost, tempfile_dir());
		if (wstatus == CS_EXIT_OK && status == CS_EXIT_OK)
			status = CS_EXIT_SYSTEM;
	}
	if (r.timeline && timeline_lost(r.timeline)) {
		warn("%llu samples lost from the timeline: its file in %s could not be written",
		     (unsigned long long)timeline_lost(r.timeline), tempfile_dir());
		if (wstatus == CS_EXIT_OK && status == CS_EXIT_OK)
			status = CS_EXIT_SYSTEM;
	}
	if (wstatus != CS_EXIT_OK)
		status = wstatus;
	else if (status == CS_EXIT_OK && o->command)
		status = r.stop_signals > 1 ? 128 + r.stop_signal : wait_program(&r);
out:
	session_end(&r.s);
	timeline_free(r.timeline);
	return status;
}
