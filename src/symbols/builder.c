/* builder: see builder.h. */
#include "config.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address.h"
#include "addrmap.h"
#include "array.h"
#include "builder.h"
#include "clock.h"
#include "error.h"
#include "escape.h"
#include "procfs.h"
#include "symcache.h"
#include "tidmap.h"
#include "timeline.h"

struct build {
	const struct build_input *in;
	struct profile *profile;
	struct symcache *symbols;    /* the recorder's processes, symbolized once */
	struct addrmap locations;    /* (pid, address) -> profile location */
	uint32_t *locs;
	uint32_t blocked_loc;        /* "[blocked]" pseudo location, lazily made */
	uint32_t no_user_loc;        /* the one of samples without user registers */
	uint32_t not_stopped_loc;    /* the one of threads not stopped (STACK_NOT_STOPPED) */
	uint32_t lost_loc;           /* the one of samples the scratch file could not keep */
	struct mapping_seen {        /* per profile mapping: what its locations got */
		bool located, unresolved, files, lines, inlined;
	} *seen;
	size_t seen_cap;
	struct stackmap_scaler scale; /* each thread's total: the kernel's account */
	uint64_t walked_stacks, walked_samples, total_samples; /* on_progress's */
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

/* Samples fell in MOD, which has no symbols: say once a run why they are
 * named by address, and how to get its symbols. */
static void say_unnamed(struct build *b, const struct symbol_module *mod)
{
	if (b->in->cfg->quiet || !symcache_first_unnamed(b->symbols, mod))
		return;
	char path[512], where[160] = "";
	escape_terminal(mod->path, path, sizeof path);
	if (mod->build_id && strlen(mod->build_id) > 2 && strlen(mod->build_id) <= 80 &&
	    strspn(mod->build_id, "0123456789abcdef") == strlen(mod->build_id))
		snprintf(where, sizeof where, ", the debug file /usr/lib/debug/.build-id/%.2s/%s.debug",
			 mod->build_id, mod->build_id + 2);
	warn("no symbols in %s (stripped, and no debug file found): its samples are named by "
	     "address; install its debug symbols (its package's -dbgsym or -dbg%s), or set "
	     "DEBUGINFOD_URLS", path, where);
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
	if (r.has_module && r.module.unnamed && !r.resolved)
		say_unnamed(b, &r.module);
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

/* A pseudo location named NAME (made once, kept in *LOC): a sample with no
 * user stack to show. */
static uint32_t named_location(struct build *b, uint32_t *loc, const char *name)
{
	if (*loc == PROFILE_NONE) {
		struct profile_line line = {
			.function = profile_add_function(b->profile, name, name, "", 0),
		};
		*loc = profile_add_location(b->profile, 0, PROFILE_NONE, &line, 1, false);
	}
	return *loc;
}

/* The thread's name after --thread-group: the first matching group wins and
 * its threads are merged (tid 0). */
static uint32_t thread_for(struct build *b, const struct recorder_thread *ti)
{
	const struct build_config *o = b->in->cfg;
	for (size_t g = 0; g < o->ngroups; g++)
		if (regexec(&o->groups[g].re, ti->name, 0, NULL, 0) == 0)
			return profile_add_thread(b->profile, ti->pid, 0, o->groups[g].name, ti->process);
	return profile_add_thread(b->profile, ti->pid, ti->tid, ti->name, ti->process);
}

/* Add one stack of thread KEY to the profile; 0, or 1 with b->error set. */
static int add_stack(struct build *b, uint32_t key, uint32_t stack_flags, const uint64_t *addrs,
		     uint32_t depth, uint64_t count, uint64_t time)
{
	const struct recorder_thread *ti = recorder_thread(b->in->recorder, key);
	if (!ti)
		return 0;
	if (!tids_allow(b->in->cfg->tids, b->in->cfg->ntids, ti->tid))
		return 0;   /* -t, or --serve's tid=: the threads chosen only */
	uint32_t thread = thread_for(b, ti);
	size_t n = 0;
	for (uint32_t i = 0; i < depth && i < b->in->cfg->max_depth; i++) {
		uint32_t loc = location_for(b, ti->pid, addrs[i]);
		if (loc != PROFILE_NONE)
			b->locs[n++] = loc;
	}
	if (stack_flags & STACK_NOT_CAPTURED)
		b->locs[n++] = named_location(b, &b->blocked_loc, "[blocked]");
	else if (stack_flags & STACK_NO_USER_CONTEXT)
		b->locs[n++] = named_location(b, &b->no_user_loc,
					      "[kernel: no user context (exec, exit, thread start)]");
	else if (stack_flags & STACK_NOT_STOPPED)
		b->locs[n++] = named_location(b, &b->not_stopped_loc,
					      "[not stopped: it has child processes]");
	uint32_t flags = (stack_flags & (STACK_TRUNCATED_DEPTH | STACK_TRUNCATED_WINDOW |
					 STACK_UNWIND_ERROR)) ? PROFILE_SAMPLE_TRUNCATED : 0;
	if (stack_flags & STACK_TRUNCATED_DEPTH)
		flags |= PROFILE_SAMPLE_CUT_DEPTH;
	else if (stack_flags & STACK_TRUNCATED_WINDOW)
		flags |= PROFILE_SAMPLE_CUT_WINDOW |
			 ((stack_flags & STACK_COPY_SHORT) ? PROFILE_SAMPLE_CUT_COPY : 0);
	else if (stack_flags & STACK_UNWIND_NO_INFO)
		flags |= PROFILE_SAMPLE_NO_INFO;
	if (thread == PROFILE_NONE ||
	    profile_add_timed_sample(b->profile, thread, b->locs, n, flags, count, time) < 0) {
		b->error = errno ? errno : ENOMEM;
		return 1;
	}
	return 0;
}

/* One more stack of RAW samples walked: the caller told every
 * BUILD_PROGRESS_EVERY stacks. */
static void walked(struct build *b, uint64_t raw)
{
	b->walked_samples += raw;
	if (b->in->on_progress && ++b->walked_stacks % BUILD_PROGRESS_EVERY == 0)
		b->in->on_progress(b->in->progress_ctx, b->walked_samples, b->total_samples);
}

static int add_entry(void *ctx, const struct stackmap_entry *e)
{
	struct build *b = ctx;
	walked(b, e->count);
	/* its share of its thread's total: the kernel's account of the
	 * thread's CPU where the map has one (stackmap_scaler_init) */
	uint64_t count = stackmap_scaler_count(&b->scale, e->thread_key, e->flags, e->count);
	return count ? add_stack(b, e->thread_key, e->flags, e->addrs, e->depth, count,
				 PROFILE_NO_TIME) : 0;
}

static int add_timeline_entry(void *ctx, const struct timeline_entry *e)
{
	struct build *b = ctx;
	walked(b, e->count);
	uint64_t t = e->time_ns > b->in->start_ns ? e->time_ns - b->in->start_ns : 0;
	uint64_t count = stackmap_scaler_count(&b->scale, e->thread_key, e->flags, e->count);
	return count ? add_stack(b, e->thread_key, e->flags, e->addrs, e->depth, count, t) : 0;
}

char *builder_command_line(char *const *argv, pid_t pid)
{
	if (argv) {
		size_t len = 1;
		for (char *const *a = argv; *a; a++)
			len += strlen(*a) + 1;
		char *s = malloc(len), *p = s;
		if (!s)
			return NULL;
		for (char *const *a = argv; *a; a++)
			p += sprintf(p, "%s%s", a == argv ? "" : " ", *a);
		*p = '\0';
		return s;
	}
	/* attach mode: the process's own command line */
	char buf[4096];
	return pid > 0 && procfs_read_cmdline(pid, buf, sizeof buf) != 0 ? strdup(buf) : NULL;
}

/* The main process's program: its file-backed mapping at the lowest address
 * (the kernel and ld.so put the program below its heap, and libraries and
 * the vdso far above), then that file's mapping that holds code. */
static const struct procmaps_entry *main_program_text(const struct procmaps *pm)
{
	const struct procmaps_entry *first = NULL, *text = NULL;
	size_t n = procmaps_count(pm);
	/* the latest program image's (a launched program's first image is
	 * csampler's own, forked before its exec) */
	unsigned image = procmaps_image(pm);
	for (size_t i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps_at(pm, i);
		if (e->image == image && e->path[0] == '/' && (!first || e->start < first->start))
			first = e;
	}
	for (size_t i = 0; first && i < n; i++) {
		const struct procmaps_entry *e = procmaps_at(pm, i);
		if (e->image == image && e->executable && e->inode == first->inode &&
		    e->dev_major == first->dev_major &&
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
	pid_t pid = b->in->main_pid;
	for (size_t i = recorder_nprocesses(b->in->recorder); i-- > 0;) {
		const struct procmaps *pm = recorder_process_maps(b->in->recorder, i);
		if (procmaps_pid(pm) != pid)
			continue;
		const struct procmaps_entry *text = main_program_text(pm);
		struct symbol_module mod;
		if (text && symcache_module(b->symbols, pid, text->start | ADDR_ACTIVATION, &mod))
			add_mapping(b, &mod);
		return;
	}
}

/* The samples taken that the scratch file could not keep (TMPDIR filled
 * up): counted under a frame of their own, so every output shows that part
 * of the profile is missing and its total is what was taken. 0, or -1. */
static int add_lost(struct build *b)
{
	const struct build_input *in = b->in;
	uint64_t lost = 0;
	if (in->timeline) {
		lost = timeline_lost(in->timeline);
	} else if (in->map) {
		struct stackmap_stats ms;
		stackmap_get_stats(in->map, &ms);
		lost = ms.lost;
	}
	if (!lost)
		return 0;
	const struct recorder_thread *first = recorder_thread(in->recorder, 0);
	uint32_t thread = profile_add_thread(b->profile, in->main_pid, 0, "[lost]",
					     first ? first->process : "");
	uint32_t loc = named_location(b, &b->lost_loc,
				      "[lost: samples the scratch file (TMPDIR) could not keep]");
	if (thread == PROFILE_NONE || loc == PROFILE_NONE) {
		errno = ENOMEM;
		return -1;
	}
	return profile_add_timed_sample(b->profile, thread, &loc, 1, 0, lost,
					in->timeline ? in->duration_ns : 0);
}

struct profile *builder_build(const struct build_input *in)
{
	struct build b = { .in = in, .blocked_loc = PROFILE_NONE, .no_user_loc = PROFILE_NONE,
			   .not_stopped_loc = PROFILE_NONE,
			   .lost_loc = PROFILE_NONE };
	const struct build_config *o = in->cfg;
	struct symbolize_options so = { .no_inline = o->no_inline, .addresses_only = o->addresses };
	b.profile = profile_new();
	b.symbols = in->symbols ? in->symbols : symcache_new(&so, o->verbose);
	b.locs = malloc((o->max_depth + 1) * sizeof *b.locs);
	int scale = stackmap_scaler_init(&b.scale, in->map, o->idle ? 0 : clock_period_ns(o->rate));
	if (!b.profile || !b.symbols || !b.locs || scale < 0)
		goto fail;
	for (size_t i = symcache_nprocesses(b.symbols); i < recorder_nprocesses(in->recorder); i++)
		if (symcache_add_process(b.symbols, recorder_process_maps(in->recorder, i)) < 0)
			goto fail;
	symcache_share_kernel(b.symbols, recorder_kernel_symbols(in->recorder));
	bool more_unnamed = symcache_more_unnamed(b.symbols);
	add_main_mapping(&b);
	if (in->map) {
		struct stackmap_stats ms;
		stackmap_get_stats(in->map, &ms);
		b.total_samples = ms.samples;
	}
	/* with a timeline output, one sample per sample taken, in time order */
	int walk = in->timeline ? timeline_foreach(in->timeline, add_timeline_entry, &b)
				: stackmap_foreach(in->map, add_entry, &b);
	b.profile->timeline = in->timeline != NULL;
	if (walk != 0 || b.error) {
		if (b.error)
			errno = b.error;
		warn_errno("cannot build the profile");
		goto fail;
	}
	if (add_lost(&b) < 0) {
		warn_errno("cannot build the profile");
		goto fail;
	}
	set_mapping_flags(&b);
	if (!more_unnamed && symcache_more_unnamed(b.symbols) && !o->quiet)
		warn("more programs and libraries without symbols were sampled (the first %d are "
		     "named above)", SYMCACHE_UNNAMED_SAID);
	const struct recorder_thread *first = recorder_thread(in->recorder, 0);
	profile_set_command(b.profile, o->command_line ? o->command_line : first ? first->process : "");
	for (size_t i = 0; i < o->nlabels; i++)
		if (profile_add_label(b.profile, o->labels[i].key, o->labels[i].value) < 0) {
			warn("cannot build the profile: out of memory");
			goto fail;
		}
	b.profile->pid = in->main_pid;
	b.profile->time_nanos = in->start_realtime_ns;
	b.profile->duration_nanos = in->duration_ns;
	b.profile->period_nanos = clock_period_ns(o->rate);
	b.profile->wall = o->idle;
	goto done;
fail:
	profile_free(b.profile);
	b.profile = NULL;
done:
	if (b.symbols != in->symbols)
		symcache_free(b.symbols);
	addrmap_free(&b.locations);
	free(b.locs);
	free(b.seen);
	stackmap_scaler_fini(&b.scale);
	return b.profile;
}
