/* profiler: see profiler.h.
 *
 * The sampling loop is the session's (session_run: the tick clock, the
 * signalfd, the target's events); the profiler adds what a recording does
 * with a stop signal and the progress line drawn every second. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder.h"
#include "clock.h"
#include "error.h"
#include "profiler.h"
#include "progress.h"
#include "report.h"
#include "backend.h"
#include "session.h"
#include "stackmap.h"
#include "target.h"
#include "tempfile.h"
#include "timeline.h"
#include "tracer.h"
#include "write.h"


struct run {
	const struct options *opt;
	struct report_config report; /* what report says of the run */
	struct session s;            /* target, stackmap, backend, signalfd */
	uint64_t start_realtime_ns, start_ns, end_ns;
	int stop_signal;             /* the last stop signal received, or 0 */
	unsigned stop_signals;       /* how many were received */
	bool progress;               /* draw a status line on stderr */
	struct progress *line;       /* the status line of a phase after sampling */
	bool attached;               /* the session sampled (the tracer thread says) */
	struct timeline *timeline;   /* every sample in time order, for timeline outputs */
	/* the window being sampled: the whole run, or with --interval the
	 * current interval (its stackmap is s.map, its timeline timeline) */
	uint64_t window_start_ns, window_start_realtime_ns;
	uint64_t windows_closed;     /* --interval: window k is due to end at
	                              * start_ns + (k + 1) x interval */
	struct symcache *symbols;    /* kept across the windows */
	uint64_t lost, timeline_lost; /* samples the windows' spill or timeline files lost */
	uint64_t closed_total;       /* periods the windows built showed, and of them */
	uint64_t closed_truncated;   /* those marked [truncated] */
	int write_status;            /* CS_EXIT_OUTPUT once a window's file failed */
	bool build_failed;           /* a window's profile could not be made */
	unsigned windows_written;    /* (how to view a file is said with the first) */
	pid_t main_pid;              /* the process sampled (kept across a suspension) */
	char *command_line;          /* its command line (builder_command_line) */
	bool suspending;             /* SIGTSTP: let the target go, stop, resume */
	bool said_repeat;            /* --interval: a repeated name was said */
	struct backend_stats before; /* the samplers' of the sessions before this one */
	int *out_dirs;               /* by output (the default one: [0]): its
	                              * directory, opened at the check and written
	                              * in (outfile.h), or -1 */
};

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

/* SIGTSTP (Ctrl-Z): the loop ends so the target is let go before csampler
 * stops (stopped mid-tick, or at a signal or a new thread of the target's,
 * csampler would hold those threads stopped for as long as it is). */
static bool on_suspend(void *ctx, int signo)
{
	struct run *r = ctx;
	(void)signo;
	r->suspending = true;
	return true;
}

static int close_window(struct run *r, uint64_t now);

static int on_second(void *ctx, uint64_t now)
{
	struct run *r = ctx;
	/* (half a second of slack: the hook runs at the first wake after each
	 * second) */
	uint64_t interval_ns = (uint64_t)(r->opt->interval * 1e9);
	if (interval_ns && now + 500000000u >= r->start_ns + (r->windows_closed + 1) * interval_ns &&
	    close_window(r, now) < 0)
		return -1;
	if (r->progress)
		draw_progress(r, now);
	return 0;
}

/* Sample until the duration elapses, a stop signal arrives, or every traced
 * process is gone. Returns 0 or -1 on a fatal error. */
static int sample_loop(struct run *r)
{
	struct session_hooks h = {
		.ctx = r, .on_stop_signal = on_stop_signal, .on_extra_signal = on_suspend,
		.extra_fd = -1,
		.on_second = r->progress || r->opt->interval > 0 ? on_second : NULL,
	};
	enum session_end end = session_run(&r->s, r->start_ns, &h);
	if (r->progress)
		fputs("\r\033[K", stderr);
	return end == SESSION_END_ERROR ? -1 : 0;
}

/* ---- reporting -------------------------------------------------------------------- */

/* The path of output PATTERN for a profile starting at REALTIME_NS: with
 * --interval its strftime fields filled, else PATTERN itself. false when
 * the name does not fit. */
static bool output_path(const struct options *o, const char *pattern, uint64_t realtime_ns,
			char *out, size_t size)
{
	if (o->interval <= 0)
		return (size_t)snprintf(out, size, "%s", pattern) < size;
	time_t when = (time_t)(realtime_ns / 1000000000u);
	struct tm tm;
	/* (the pattern is the user's -o: strftime is what it is for) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	return localtime_r(&when, &tm) && strftime(out, size, pattern, &tm) > 0;
#pragma GCC diagnostic pop
}

/* The default output when no -o was given: csampler-PID-DATE.pb.gz (a
 * pattern with --interval). */
static void default_output(const struct options *o, pid_t pid, char *out, size_t size)
{
	char date[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(date, sizeof date, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
	snprintf(out, size, "csampler-%d-%s.pb.gz", (int)pid, o->interval > 0 ? "%Y%m%d-%H%M%S" : date);
}

/* --interval: PATH was written by this run already (a file there changed
 * since the run began): a pattern whose fields repeat (%H%M%S, each day)
 * came round. Then the next free "NAME-2.EXT", "NAME-3.EXT"... into PATH
 * (SIZE bytes), said once, so no interval overwrites another. */
static void avoid_overwrite(const struct run *r, char *path, size_t size, bool *said)
{
	struct stat st;
	uint64_t since = r->start_realtime_ns / 1000000000u;
	if (lstat(path, &st) < 0 || (uint64_t)st.st_mtime < since)
		return;
	char orig[PATH_MAX];
	snprintf(orig, sizeof orig, "%s", path);
	const char *base = write_base_name(orig);
	const char *dot = strchr(base + (*base == '.'), '.');
	size_t stem = dot ? (size_t)(dot - orig) : strlen(orig);
	for (unsigned k = 2; k < 100000; k++) {
		if ((size_t)snprintf(path, size, "%.*s-%u%s", (int)stem, orig, k, dot ? dot : "") >= size)
			break;
		if (lstat(path, &st) < 0 || (uint64_t)st.st_mtime < since) {
			if (!*said && !r->opt->quiet)
				warn("'%s' was written by this run already (the pattern's fields came "
				     "round): written as '%s' (and so on) instead of over it", orig, path);
			*said = true;
			return;
		}
	}
	snprintf(path, size, "%s", orig);
}

static int write_outputs(struct run *r, const struct profile *p)
{
	const struct options *o = r->opt;
	struct write_options wo = { .threads = o->threads || o->ngroups, .annotate = o->annotate };
	char deflt[128], path[PATH_MAX];
	struct output_spec def;
	const struct output_spec *outs = o->outputs;
	size_t nouts = o->noutputs;
	int status = CS_EXIT_OK;

	if (nouts == 0) {
		default_output(o, p->pid, deflt, sizeof deflt);
		def.path = deflt;
		def.format = FORMAT_PPROF;
		outs = &def;
		nouts = 1;
	}
	for (size_t i = 0; i < nouts; i++) {
		if (!output_path(o, outs[i].path, r->window_start_realtime_ns, path, sizeof path)) {
			warn("cannot name the output '%s': the name is too long", outs[i].path);
			status = CS_EXIT_OUTPUT;
			continue;
		}
		if (o->interval > 0)
			avoid_overwrite(r, path, sizeof path, &r->said_repeat);
		if (r->progress)
			fputs("\r\033[K", stderr);
		/* (a line if it takes over a second: 60,000 deep stacks as
		 * folded stacks take 1.2 s; gone before the "wrote" line) */
		struct progress *line = progress_start(r->progress, "writing the profile");
		progress_doing(line, "to", path);
		int written = write_output(p, path, r->out_dirs ? r->out_dirs[i] : -1, outs[i].format, &wo);
		progress_end(line);
		if (written < 0) {
			status = CS_EXIT_OUTPUT;
			continue;
		}
		if (strcmp(path, "-") != 0)
			report_written(&r->report, path, outs[i].format, p, !r->windows_written);
	}
	return status;
}

/* Build the profile of the window that ends at END_NS from MAP (and TL)
 * and write it. After the LAST, nothing is symbolized again: the
 * symbolizers' files are closed before the outputs are made (a --children
 * run of many processes near the descriptor limit). */
/* The symbolizers open a file for its symbols (symbolize_options.on_open). */
static void tell_reading(void *ctx, const char *path)
{
	struct run *r = ctx;
	progress_reading(r->line, path);
}

static void tell_built(void *ctx, uint64_t done, uint64_t total)
{
	struct run *r = ctx;
	progress_count(r->line, done, total);
}

static void write_window(struct run *r, struct stackmap *map, struct timeline *tl, uint64_t end_ns,
			 bool last, void (*before_writing)(struct run *r, const struct profile *p))
{
	struct build_config bc;
	options_build_config(r->opt, r->command_line, &bc);
	struct build_input in = {
		.cfg = &bc, .recorder = r->s.recorder, .map = map, .timeline = tl,
		.main_pid = r->main_pid, .start_ns = r->window_start_ns,
		.start_realtime_ns = r->window_start_realtime_ns,
		.duration_ns = end_ns - r->window_start_ns, .symbols = r->symbols,
		.on_progress = tell_built, .progress_ctx = r,
	};
	/* (a line if it takes over a second: reading the programs' symbols and
	 * debug files took 14-28 s for python3.11 on a busy host) */
	r->line = progress_start(r->progress, "naming the samples' addresses:");
	struct profile *p = builder_build(&in);
	progress_end(r->line);
	r->line = NULL;
	if (last) {
		symcache_free(r->symbols);
		r->symbols = NULL;
	} else {
		symcache_release_gone(r->symbols);
	}
	if (!p) {
		/* (said; the run's last line: no summary of outputs not made) */
		r->build_failed = true;
		return;
	}
	r->closed_total += p->total_samples;
	r->closed_truncated += p->truncated_samples;
	if (before_writing)
		before_writing(r, p);
	if (write_outputs(r, p) != CS_EXIT_OK)
		r->write_status = CS_EXIT_OUTPUT;
	r->windows_written++;
	profile_free(p);
	struct stackmap_stats ms;
	stackmap_get_stats(map, &ms);
	r->lost += ms.lost;
	r->timeline_lost += tl ? timeline_lost(tl) : 0;
}

/* --interval: the window ends at NOW; sampling goes on into a fresh
 * stackmap (and timeline) while the old ones become the window's profile.
 * -1 when the next window cannot be made (said). */
static int close_window(struct run *r, uint64_t now)
{
	const struct options *o = r->opt;
	struct stackmap *fresh = stackmap_new(o->max_stacks, o->max_depth);
	struct timeline *tl = r->timeline ? timeline_new(o->max_depth) : NULL;
	if (!fresh || (r->timeline && !tl)) {
		warn_errno("cannot start the next interval");
		stackmap_free(fresh);
		timeline_free(tl);
		return -1;
	}
	struct stackmap *old = r->s.map;
	struct timeline *old_tl = r->timeline;
	recorder_set_stackmap(r->s.recorder, fresh);
	r->s.map = fresh;
	recorder_set_timeline(r->s.recorder, tl);
	r->timeline = tl;
	write_window(r, old, old_tl, now, false, NULL);
	stackmap_free(old);
	timeline_free(old_tl);
	/* the keys of threads gone, and of names no longer worn, go with it */
	recorder_collect_threads(r->s.recorder);
	/* the next window's samples are those from now; its name is its place
	 * on the grid of intervals from the start (no two share a second,
	 * whatever a late wake cost one of them) */
	r->windows_closed++;
	r->window_start_ns = now;
	r->window_start_realtime_ns = r->start_realtime_ns +
				      r->windows_closed * (uint64_t)(r->opt->interval * 1e9);
	return 0;
}

/* The tracer thread's sampling, once attached: until the run's end or a
 * SIGTSTP, then let the target go. */
static int sample_until_end(struct run *r)
{
	int loop = sample_loop(r);
	r->end_ns = r->s.ticks_end_ns ? r->s.ticks_end_ns : clock_monotonic_ns();
	session_detach(&r->s);
	return loop < 0 ? CS_EXIT_FAILURE : 0;
}

/* The tracer thread's part after a suspension: attach to the process
 * again (its threads, the recorder and the stackmap as they were) and
 * sample on. A process that exited meanwhile ends the run (0). */
static int resume(struct run *r)
{
	const struct options *o = r->opt;
	if (kill(r->main_pid, 0) < 0 && errno == ESRCH) {
		if (!o->quiet)
			warn("process %d exited while csampler was stopped", (int)r->main_pid);
		return 0;
	}
	int status = session_attach(&r->s, o->max_stacks, NULL, NULL, NULL);
	if (status != 0)
		return status == CS_EXIT_NO_PROCESS || status == CS_EXIT_BAD_TARGET ? 0 : status;
	if (!o->quiet)
		fprintf(stderr, "csampler: continued: sampling process %d again\n", (int)r->main_pid);
	return sample_until_end(r);
}

/* SIGTSTP was taken and the target let go (the tracer thread is gone):
 * stop csampler itself as the signal asked, and when continued set up the
 * next session to attach again. The time stopped is not the run's: the
 * run's start moves by it, so -d counts sampling time and the profile's
 * duration is the time sampled. */
static void suspend(struct run *r)
{
	struct backend_stats st;
	backend_get_stats(r->s.backend, &st);
	backend_stats_add(&r->before, &st);
	session_release_target(&r->s);
	r->suspending = false;
	if (r->progress)
		fputs("\r\033[K", stderr);
	if (!r->opt->quiet)
		fprintf(stderr, "csampler: stopped: process %d was let go; sampling resumes when "
			"csampler is continued (fg)\n", (int)r->main_pid);
	uint64_t t0 = clock_monotonic_ns();
	raise(SIGSTOP);  /* (the whole process: only this thread is left) */
	uint64_t stopped = clock_monotonic_ns() - t0;
	r->start_ns += stopped;
	r->window_start_ns += stopped;
	r->end_ns += stopped;
}

/* The tracer thread's part of a recording: attach or launch, sample, let
 * go. Returns 0, CS_EXIT_FAILURE when sampling failed (what was sampled is
 * still written), or the status to exit with when nothing was sampled. */
static int record(void *arg)
{
	struct run *r = arg;
	const struct options *o = r->opt;
	if (r->s.reattach_pid)
		return resume(r);
	int status = session_attach(&r->s, o->max_stacks, NULL, NULL, NULL);
	if (status != 0)
		return status;
	r->attached = true;
	r->main_pid = target_main_pid(r->s.target);
	r->command_line = builder_command_line(o->command, r->main_pid);
	recorder_set_timeline(r->s.recorder, r->timeline);
	/* A closed stdout (-o - | head) must be an error we report, not a kill.
	 * Set after the launch fork: an ignored signal stays ignored across exec. */
	signal(SIGPIPE, SIG_IGN);
	r->progress = !o->quiet && isatty(STDERR_FILENO);
	report_start(&r->report, target_main_pid(r->s.target));
	r->start_realtime_ns = r->window_start_realtime_ns = clock_realtime_ns();
	r->start_ns = r->window_start_ns = clock_monotonic_ns();
	if (target_start(r->s.target) < 0) {
		session_detach(&r->s);
		r->attached = false;
		return CS_EXIT_FAILURE;
	}
	return sample_until_end(r);
}

/* The samplers' counters over the whole run (every session of it). */
static void run_backend_stats(const struct run *r, struct backend_stats *st)
{
	*st = r->before;
	if (r->s.backend) {
		struct backend_stats now;
		backend_get_stats(r->s.backend, &now);
		backend_stats_add(st, &now);
	}
}

/* After the last window is built, before its files are written: the
 * summary, which shows what the outputs show (each thread's CPU the
 * kernel's, the stacks marked [truncated]) beside the samples taken. */
static void summarize(struct run *r, const struct profile *last)
{
	struct backend_stats sst;
	struct recorder_stats rst;
	run_backend_stats(r, &sst);
	recorder_get_stats(r->s.recorder, &rst);
	uint64_t taken = rst.samples;
	rst.samples = r->closed_total;
	rst.truncated = r->closed_truncated;
	int exited = r->opt->command && r->s.target ? target_exit_status(r->s.target) : -1;
	report_summary(&r->report, r->main_pid, &sst, &rst, taken,
		       (double)(r->end_ns - r->start_ns) / 1e9, exited);
	report_stops(&r->report, last, rst.window_widest);
}

static void close_out_dirs(struct run *r)
{
	size_t n = r->opt->noutputs ? r->opt->noutputs : 1;
	for (size_t i = 0; r->out_dirs && i < n; i++)
		if (r->out_dirs[i] >= 0)
			close(r->out_dirs[i]);
	free(r->out_dirs);
	r->out_dirs = NULL;
}

/* Every output judged before sampling, the default one too (a mistake
 * costs no run), each one's directory held for its writes: a directory of
 * its path swapped for a link meanwhile changes nothing (outfile.h). Not
 * held where --interval's pattern names the directory by the time. 0, or
 * -1 said. */
static int check_outputs(struct run *r)
{
	const struct options *o = r->opt;
	size_t n = o->noutputs ? o->noutputs : 1;
	char path[PATH_MAX], deflt[PATH_MAX];
	r->out_dirs = malloc(n * sizeof *r->out_dirs);
	if (!r->out_dirs) {
		warn_errno("cannot check the outputs");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		r->out_dirs[i] = -1;
	for (size_t i = 0; i < n; i++) {
		const char *pattern = deflt;
		if (o->noutputs)
			pattern = o->outputs[i].path;
		else   /* (the process named when attaching; 0 for a launch) */
			default_output(o, o->pid, deflt, sizeof deflt);
		const char *slash = strrchr(pattern, '/');
		bool timed_dir = o->interval > 0 && slash && memchr(pattern, '%', (size_t)(slash - pattern));
		int dir;
		if (!output_path(o, pattern, clock_realtime_ns(), path, sizeof path) ||
		    write_output_check(path, &dir) < 0)
			return -1;
		if (timed_dir && dir >= 0) {
			close(dir);
			dir = -1;
		}
		r->out_dirs[i] = dir;
	}
	return 0;
}

int profiler_run(const struct options *o)
{
	struct run r = { .opt = o };
	if (check_outputs(&r) < 0) {
		close_out_dirs(&r);
		return CS_EXIT_OUTPUT;
	}
	options_report_config(o, &r.report);
	struct session_config sc;
	options_session_config(o, &sc);
	int status = session_open(&r.s, &sc, SIGTSTP);
	if (status != 0) {
		close_out_dirs(&r);
		return status;
	}
	struct symbolize_options so = { .no_inline = o->no_inline, .addresses_only = o->addresses,
					.on_open = tell_reading, .open_ctx = &r };
	r.symbols = symcache_new(&so, o->verbose);
	if (!r.symbols) {
		warn_errno("cannot set up symbolization");
		status = CS_EXIT_SYSTEM;
		goto out;
	}
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
	for (;;) {
		status = tracer_run(record, &r);
		if (status != 0 || !r.suspending)
			break;
		suspend(&r);
	}
	if (status < 0) {
		warn_errno("cannot start the tracer thread");
		status = CS_EXIT_SYSTEM;
	}
	if (!r.attached)
		goto out;
	struct recorder_stats rst;
	recorder_get_stats(r.s.recorder, &rst);
	/* Most stacks refused (a program that made itself non-dumpable after a
	 * sample or two of its start): the profile is not its profile. */
	if (rst.unreadable > 0 && rst.unreadable >= rst.samples && status == CS_EXIT_OK)
		status = CS_EXIT_PERMISSION;  /* said in the recorder's warning */
	write_window(&r, r.s.map, r.timeline, r.end_ns, true, summarize);
	if (r.build_failed && status == CS_EXIT_OK)
		status = CS_EXIT_SYSTEM;
	int wstatus = r.write_status;
	if (r.lost) {
		warn("%llu samples lost: the spill file in %s could not be written; the profile "
		     "lacks them", (unsigned long long)r.lost, tempfile_dir());
		if (wstatus == CS_EXIT_OK && status == CS_EXIT_OK)
			status = CS_EXIT_SYSTEM;
	}
	if (r.timeline_lost) {
		warn("%llu samples lost from the timeline: its file in %s could not be written",
		     (unsigned long long)r.timeline_lost, tempfile_dir());
		if (wstatus == CS_EXIT_OK && status == CS_EXIT_OK)
			status = CS_EXIT_SYSTEM;
	}
	if (wstatus != CS_EXIT_OK)
		status = wstatus;
	else if (status == CS_EXIT_OK && o->command)
		status = r.stop_signals > 1 ? 128 + r.stop_signal : session_program_status(&r.s);
out:
	close_out_dirs(&r);
	symcache_free(r.symbols);  /* (before the recorder's mappings go) */
	free(r.command_line);
	session_drop_signals(&r.s);
	session_end(&r.s);
	timeline_free(r.timeline);
	return status;
}
