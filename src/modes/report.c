/* report: the user's view of a recording on stderr (see report.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "clock.h"
#include "error.h"
#include "escape.h"
#include "procfs.h"
#include "report.h"
#include "tempfile.h"
#include "unwind.h"

/* A rate this far below the one asked is worth a warning: fewer samples
 * (shares stay unbiased, their noise grows). */
#define RATE_WARN_FRACTION 0.8

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void report_start(const struct report_config *o, pid_t pid)
{
	char what[128];
	if (o->quiet)
		return;
	if (o->command)
		snprintf(what, sizeof what, "%.80s (pid %d)", o->command[0], (int)pid);
	else if (o->ntids == 1)
		snprintf(what, sizeof what, "thread %d of process %d", (int)o->tids[0], (int)pid);
	else if (o->ntids)
		snprintf(what, sizeof what, "%zu threads of process %d", o->ntids, (int)pid);
	else
		snprintf(what, sizeof what, "process %d", (int)pid);
	const struct backend_caps *caps = backend_caps(o->backend);
	const char *backend = caps ? caps->name : "?";
	if (o->duration > 0)
		fprintf(stderr, "csampler: sampling %s%s at %u Hz for %g s%s; backend: %s\n", what,
			o->children ? " and its children" : "", o->rate, o->duration,
			o->command ? " (or until it exits)" : "", backend);
	else
		fprintf(stderr, "csampler: sampling %s%s at %u Hz until it exits; Ctrl-C to stop; "
			"backend: %s\n", what, o->children ? " and its children" : "", o->rate, backend);
}

/* The -v line: every counter a bug report needs. */
static void report_diagnostics(const struct report_config *o, const struct backend_stats *st,
			       const struct recorder_stats *rs, uint64_t taken)
{
	char unw[256] = "";
	size_t off = 0;
	for (int i = 1; i < UNWIND_NRESULTS; i++)
		if (rs->unwind_results[i] && off < sizeof unw)
			off += (size_t)snprintf(unw + off, sizeof unw - off, "%s%s %llu", off ? ", " : "",
						unwind_result_name((enum unwind_result)i),
						(unsigned long long)rs->unwind_results[i]);
	backend_print_diagnostics(o->backend, st, rs, off ? unw : "none", taken);
}

/* An empty CPU profile of -p PID: say why, and what to do. */
static void report_empty(const struct report_config *o, pid_t pid, const struct backend_stats *st,
			 double seconds, int exited)
{
	size_t children = o->command || o->children ? 0 : procfs_count_children(pid);
	/* a launched program that failed (a port in use, a missing file), or
	 * ended before a few ticks, had nothing to sample */
	if (o->command && exited > 0)
		fprintf(stderr, "csampler: hint: %s exited with status %d after %.3f s without "
			"running on a CPU at a tick (see its own messages above)\n", o->command[0],
			exited, seconds);
	else if (o->command && exited == 0 && seconds * o->rate < 3)
		fprintf(stderr, "csampler: hint: %s ended after %.3f s, before a sample was due at %u "
			"Hz\n", o->command[0], seconds, o->rate);
	else if (!o->idle && seconds > 0 && (double)st->waited_ns / 1e9 >= seconds / 2)
		/* runnable all along, given no CPU: a busy machine, a low
		 * priority, a CPU set shared with busier processes */
		fprintf(stderr, "csampler: hint: the target's threads waited %.2f s for a CPU in "
			"the %.1f s sampled (runnable, but given none: the machine is busy, or the "
			"target's priority or CPU set leaves it none); a CPU profile shows only where "
			"a thread runs: --idle shows where they wait\n",
			/* (a wait that began before the window ends in it) */
			(double)st->waited_ns / 1e9 < seconds ? (double)st->waited_ns / 1e9 : seconds,
			seconds);
	else if (children)
		fprintf(stderr, "csampler: hint: process %d ran on no CPU, but it has %zu child "
			"%s: add --children to profile %s\n", (int)pid, children,
			plural(children, "process", "processes"), plural(children, "it", "them"));
	else if (!o->idle)
		fprintf(stderr, "csampler: hint: no thread ran on a CPU while sampled: --idle "
			"profiles where blocked threads wait\n");
}

/* Threads that get a CPU this often a second (all of them together, the
 * arrivals our own stops make left out) are perturbed by the stops: a
 * socketpair read/write pair, switching about 4,800 times a second at 499
 * Hz, showed its reader 7% to 67% in user code from run to run where the
 * kernel accounted 66% (--backend=perf: 65%). Measured at 999 Hz, our stops
 * left out: an epoll ping-pong 5,700 a second (its waits 1-3% for 12-16%),
 * a thread that fdatasyncs 4 KiB and computes 500 us 1,800 (fdatasync
 * 19-21% for 9-12%), xz -T2 1,040 (right within a point; counted with our
 * stops, 2,400, it had the note and the fdatasync one did not). A thread
 * that never sleeps switches only when preempted, and a skid into its next
 * system call is not told by this (man page: "The limit of stopping
 * threads"). */
#define SWITCH_RISK_PER_SEC 1500.0
/* ...unless nearly every stop was of a thread the tick took a CPU from
 * (csampler's own or a holder's: sampling/holders.h), which stops where it
 * was at the tick. The error grows with the share of the other stops:
 * pingpong's epoll pair at 999 Hz was within 1.7 points with none (all on
 * csampler's CPU), 11-13 with about half, 14-15 with all; with the
 * holders, every phase within 2.4-3.9. Said when more than a quarter of
 * the stops kept came the other way. */
#define SWITCH_RISK_INEXACT 0.25
/* ...and only where the interrupt's delay often spans a thread's way into a
 * wait: a thread read running at the tick that slept and was woken before
 * the interrupt reached it stops at that wait's exit, and that stop is
 * dropped (backend_stats.stops_woken); its stops kept then came at the
 * exits of the calls it made on the way (the same delay, spanning a call).
 * Threads that wake on their own after long stretches of work are seldom
 * caught so and their split holds. Measured on pingpong without holders
 * (csampler confined to another CPU, or --realtime=0; at 199 and 999 Hz,
 * quiet and beside two busy loops; such stops against the stops kept, and
 * the worst phase against the fixture's own clock): the syncer (4 KiB and
 * fdatasync, then 500 us of work) none, within 1.9 points quiet (6.5-13.6
 * off beside the loops: the skid note's case); the napper confined away
 * 0.05-0.11, within 4.2; the socket pair 0.05-0.08, within 3.5, 0.096 5.1
 * points, 0.14-0.37 7.1-11.5; the napper sharing csampler's CPU 1.0-1.4,
 * 4.5-5.5; the epoll pair 0.6-2.1, 10-22. A fifth, as first set, left
 * socket runs 8.3, 9.6 and 11.5 points off (0.157, 0.199, 0.200) without a
 * note (bench/ab/issue44-notes.md). */
#define SWITCH_RISK_WOKEN 0.1

/* A stop reaches a thread on another CPU tens of microseconds after the
 * interrupt (26-42 us on a 2-CPU VM), at its next system call's exit if
 * it makes one first: time in user code between frequent calls is then
 * sampled in those calls (pingpong's compute loop, a clock read every
 * 0.3 us: none of 2,049 such stops in its arithmetic). The run's own
 * counters say so: the share of stops at a call's exit against the
 * kernel's share of the threads' time in the kernel (stat's stime, over
 * the same reads), said when over by more than SKID_NOTE_POINTS and three
 * standard errors (each share a proportion: of the stops, and of the
 * kernel's ticks that split the time). Measured at 999 Hz (pingpong,
 * 4 s): calls 99.8% for 73.5%, sync 95.8% for 44.0%, nap 99.9% for 45.1%,
 * socket 69.2% for 54.1%, epoll 80.2% for 76.3% (its error is between
 * calls: the switch note below), a busy loop 0 for 0. */
#define SKID_NOTE_POINTS 5.0
#define SKID_NOTE_MIN_STOPS 100u
#define SKID_NOTE_MIN_TICKS 20u    /* (0.2 s of CPU at USER_HZ 100: a thread
                                    * sharing its CPU for 2 s had 88 ticks) */

/* Whether stops at a call's exit outnumber the kernel's time there beyond
 * chance (see SKID_NOTE_POINTS): their two shares, in percent. */
static bool skid_into_calls(const struct backend_stats *st, double *calls, double *kernel)
{
	uint64_t n = st->stops_call + st->stops_user, k = st->user_ticks + st->kernel_ticks;
	if (n < SKID_NOTE_MIN_STOPS || k < SKID_NOTE_MIN_TICKS)
		return false;
	double pc = (double)st->stops_call / (double)n, pk = (double)st->kernel_ticks / (double)k;
	double se = sqrt(pc * (1 - pc) / (double)n + pk * (1 - pk) / (double)k);
	*calls = 100 * pc;
	*kernel = 100 * pk;
	return pc - pk > SKID_NOTE_POINTS / 100 && pc - pk > 3 * se;
}

/* The switch into a thread (backend_stats.switch_in_ns: measured per
 * thread, its task clock against its run time): the kernel charges it to
 * the thread and no sample lands in it. The default backend puts it where
 * each thread arrived (its stops of threads not running at the tick:
 * stackmap_add_span, switch_placed_ns); the rest (the perf backend's, a
 * thread with too few such stops) the scaler spreads over the thread's
 * stacks, so where it was woken or preempted is short by up to its share.
 * Said where that rest is over SWITCH_NOTE_POINTS, measured on
 * SWITCH_NOTE_MIN_RUN_NS of CPU at least.
 * Measured (999 Hz, 4 s, against the fixture's own two clocks: within 0.7
 * points): the epoll ping-pong 3.9-4.3% quiet, 3-35% beside two busy loops
 * (spread, at 35% the client's read was 10.5 points short, its write 9.4
 * over; put where the threads arrived, every phase within 3 points at
 * 17-35%); the napper 4.1% and 6.4%; a postgres backend by hand 3.7-3.9%
 * and 20.7-29.1%. */
#define SWITCH_NOTE_POINTS 5.0
#define SWITCH_NOTE_MIN_RUN_NS 100000000u

/* The skid and switch notes' remedy where csampler stopped threads without
 * real-time priority (at half its ticks or more): with it, the tick takes
 * its own CPU and holders the others, and each stop's place is judged by
 * what its thread did at the tick's instant. Without, a thread on another
 * CPU is judged by its counters at the stop, which do not tell one that
 * ran at the tick and then slept in a call from one only queued there
 * after a wake-up; its run-queue stamp would, but it is on that CPU's
 * clock, which leaves out the CPU's steal time (on this 2-CPU VM the two
 * CPUs' clocks were 2.0 s apart), so it says nothing without a thread of
 * csampler's on each CPU at the tick (bench/ab/issue44-notes.md).
 * Measured (pingpong sync: 4 KiB written and fdatasynced, then 500 us of
 * work; 999 Hz, beside two busy loops): 19.0 to 23.4 points off with
 * --realtime=0 (the skid note), 0.6 to 4.5 and no note at real-time
 * priority (those runs beside six busy loops). */
static const char *realtime_remedy(const struct backend_stats *st)
{
	uint64_t kept = st->stops_call + st->stops_user;
	return kept && 2 * st->ticks_realtime < st->ticks
		       ? "; or give csampler real-time priority (root, CAP_SYS_NICE, or an "
			 "RLIMIT_RTPRIO of 1): it then takes every CPU at each tick, and each stop "
			 "comes where its thread was"
		       : "";
}

/* The switch note's condition (SWITCH_RISK_PER_SEC) over SECONDS. */
static bool switches_move_samples(const struct backend_stats *st, double seconds)
{
	if (seconds <= 0 || (double)st->switches / seconds < SWITCH_RISK_PER_SEC)
		return false;
	uint64_t kept = st->stops_call + st->stops_user;
	uint64_t inexact = kept > st->stops_taken ? kept - st->stops_taken : 0;
	if (!kept)
		return true;
	return (double)inexact > SWITCH_RISK_INEXACT * (double)kept &&
	       (double)st->stops_woken >= SWITCH_RISK_WOKEN * (double)kept;
}

void report_summary(const struct report_config *o, pid_t pid, const struct backend_stats *st,
		    const struct recorder_stats *rs, uint64_t taken, double seconds, int exited)
{
	if (o->verbose)
		report_diagnostics(o, st, rs, taken);
	double asked = (double)o->rate * seconds;
	/* a backend whose kernel samples at the rate asked (perf events): its
	 * reads of the rings are no ticks */
	const struct backend_caps *caps = backend_caps(o->backend);
	bool ticks = caps && caps->own_ticks;
	double achieved = !ticks ? o->rate : seconds > 0 ? (double)st->ticks / seconds : 0;
	if (st->lost)
		warn("warning: %llu samples lost: the kernel's ring buffers filled before csampler "
		     "read them (it did not get a CPU in time): the profile lacks them, so what ran "
		     "while csampler waited is under-counted", (unsigned long long)st->lost);
	/* a run shorter than a few periods has too few ticks to judge */
	if (ticks && asked >= 10 && (double)st->ticks < RATE_WARN_FRACTION * asked)
		warn("warning: sampled at %.0f Hz of the %u Hz asked (the machine was busy, or "
		     "csampler was not allowed real-time priority): %s", achieved, o->rate,
		     o->idle ? "the periods without a tick are counted at the next tick's reads, so "
			       "each thread's wall-clock time is whole, its stacks read less often"
			     : "the profile has fewer samples; its shares are not biased by it");
	if (o->quiet)
		return;
	double period = (double)clock_period_ns(o->rate) / 1e9;
	uint64_t complete = rs->samples - (rs->truncated < rs->samples ? rs->truncated : rs->samples);
	char rate[64];
	/* the rate reached: the one asked, unless it fell short */
	if (asked < 10 || achieved >= 0.98 * o->rate)
		snprintf(rate, sizeof rate, "%u Hz", o->rate);
	else
		snprintf(rate, sizeof rate, "%.0f Hz of %u asked", achieved, o->rate);
	fprintf(stderr, "csampler: %llu %s (%.2f s of %s) from %llu %s in %.1f s at %s",
		(unsigned long long)rs->samples, plural(rs->samples, "sample", "samples"),
		(double)rs->samples * period, o->idle ? "wall-clock time" : "CPU",
		(unsigned long long)st->threads_seen, plural(st->threads_seen, "thread", "threads"),
		seconds, rate);
	if (rs->samples)
		fprintf(stderr, "; %.0f%% of stacks complete",
			100.0 * (double)complete / (double)rs->samples);
	fputc('\n', stderr);
	double calls, kernel;
	if (rs->samples && ticks && !o->idle && skid_into_calls(st, &calls, &kernel))
		fprintf(stderr, "csampler: note: %.0f%% of the stops came at a system call's exit, "
			"where the kernel counts %.0f%% of the threads' time in the kernel: a thread on "
			"another CPU stops at the exit of its next call when it makes one before the "
			"interrupt reaches it, so user code between frequent calls is counted in them "
			"(each thread's CPU is still the kernel's): --backend=perf samples where they "
			"run (root)%s\n", calls, kernel, realtime_remedy(st));
	uint64_t spread = st->switch_in_ns > st->switch_placed_ns
				  ? st->switch_in_ns - st->switch_placed_ns : 0;
	if (rs->samples && !o->idle && st->switch_run_ns >= SWITCH_NOTE_MIN_RUN_NS &&
	    100.0 * (double)spread / (double)st->switch_run_ns > SWITCH_NOTE_POINTS)
		fprintf(stderr, "csampler: note: %.1f%% of the threads' CPU was the switch onto a CPU "
			"(their task clocks against the kernel's account, csampler's own stops left "
			"out), %.1f%% of it not put where they arrived: the kernel counts a thread's CPU "
			"from when it is picked, no sample lands before the switch is done (perf's "
			"neither), and that part is spread over each thread's stacks, so where they "
			"are woken or preempted (a wait's return) is counted up to %.1f points short; "
			"busy CPUs make switches dearer\n",
			100.0 * (double)st->switch_in_ns / (double)st->switch_run_ns,
			100.0 * (double)spread / (double)st->switch_run_ns,
			100.0 * (double)spread / (double)st->switch_run_ns);
	if (!rs->samples)
		report_empty(o, pid, st, seconds, exited);
	else if (ticks && !o->idle && switches_move_samples(st, seconds))
		fprintf(stderr, "csampler: note: the target's threads got a CPU %.0f times a second "
			"(woken or preempted); stopping such threads moves where later samples find "
			"them, so their split between user code and system calls may be off by tens "
			"of points (each thread's CPU is still the kernel's): --backend=perf samples "
			"where they run without stopping them (root; its own limit is in the man page)%s\n",
			(double)st->switches / seconds, realtime_remedy(st));
}

/* ---- where truncated stacks stop -------------------------------------------------- */

#define STOP_PLACES 64

struct stop_place {
	uint32_t location;       /* the outermost frame's location */
	uint32_t function;       /* its outermost function, or PROFILE_NONE */
	uint32_t why;            /* PROFILE_SAMPLE_CUT_* / NO_INFO; 0: a bad frame */
	uint64_t count;
	bool jit;                /* unnamed generated code: one place for all of it
	                          * (why: the reasons of all its stops) */
};

struct stop_tally {
	const struct profile *p;
	struct stop_place places[STOP_PLACES];
	size_t n;
	uint64_t total, truncated;
};

/* Whether P maps a program or library whose base name starts with NAME. */
static bool maps_file(const struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->nmappings; i++)
		if (p->mappings[i].filename &&
		    strncmp(write_base_name(p->mappings[i].filename), name, strlen(name)) == 0)
			return true;
	return false;
}

/* Whether location L is code csampler knows of no file for: JIT code (a
 * perf map's, or anonymous memory). */
static bool generated_code(const struct profile *p, const struct profile_location *l)
{
	if (l->jit)
		return true;
	if (l->mapping == PROFILE_NONE || l->mapping >= p->nmappings)
		return true;
	const char *f = p->mappings[l->mapping].filename;
	return !f || !*f || strncmp(f, "[anon", 5) == 0;
}

static int tally_stop(void *ctx, const struct profile_sample *ps)
{
	struct stop_tally *t = ctx;
	t->total += ps->count;
	if (!(ps->flags & PROFILE_SAMPLE_TRUNCATED) || ps->nlocs == 0)
		return 0;
	t->truncated += ps->count;
	uint32_t loc = ps->locs[ps->nlocs - 1];
	uint32_t fn = PROFILE_NONE;
	if (loc < t->p->nlocations) {
		const struct profile_location *l = &t->p->locations[loc];
		if (l->nlines && l->first_line + l->nlines - 1 < t->p->nlines)
			fn = t->p->lines[l->first_line + l->nlines - 1].function;
	}
	uint32_t why = ps->flags & (PROFILE_SAMPLE_CUT_DEPTH | PROFILE_SAMPLE_CUT_WINDOW |
				    PROFILE_SAMPLE_CUT_COPY | PROFILE_SAMPLE_NO_INFO);
	/* unnamed generated code stops at one place, whatever its address */
	const char *fname = fn < t->p->nfunctions ? t->p->functions[fn].name : NULL;
	bool jit = loc < t->p->nlocations && generated_code(t->p, &t->p->locations[loc]) &&
		   (!fname || strncmp(fname, "[anon]", 6) == 0);
	for (size_t i = 0; i < t->n; i++) {
		struct stop_place *sp = &t->places[i];
		/* (JIT code is one place whatever stopped the walk there: its
		 * reasons joined, the advice for code without unwind
		 * information first) */
		if (jit ? sp->jit : sp->why == why && !sp->jit &&
				    (fn != PROFILE_NONE ? sp->function == fn : sp->location == loc)) {
			sp->count += ps->count;
			sp->why |= why;
			return 0;
		}
	}
	if (t->n < STOP_PLACES)  /* (beyond: too scattered to name) */
		t->places[t->n++] = (struct stop_place){ loc, fn, why, ps->count, jit };
	return 0;
}

static int by_count(const void *a, const void *b)
{
	const struct stop_place *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* Whether FNAME is one of the Go runtime's functions that run on the
 * system stack for a goroutine (unwind_go.c crosses them to it). */
static bool go_system_stack(const char *fname)
{
	static const char *const names[] = { "runtime.systemstack", "runtime.morestack",
					     "runtime.mcall" };
	for (size_t i = 0; fname && i < sizeof names / sizeof *names; i++) {
		size_t n = strlen(names[i]);
		if (strncmp(fname, names[i], n) == 0 && (!fname[n] || strcmp(fname + n, ".abi0") == 0))
			return true;
	}
	return false;
}

/* Why stacks stop at a place (FUNCTION's), and what to do about it (the
 * window grew to WIDEST where stacks were cut; 0: it did not). */
static void say_why(const struct report_config *o, const struct profile *p,
		    const struct profile_location *l, uint32_t function, uint32_t why,
		    size_t widest, char *buf, size_t size)
{
	const char *fname = function < p->nfunctions ? p->functions[function].name : NULL;
	if (!why && fname && strcmp(fname, "runtime.sigtramp") == 0)
		snprintf(buf, size, "Go's signal handler: the goroutine it interrupted is not followed "
			 "through the signal frame (Go's own traceback stops there too)");
	else if (go_system_stack(fname) &&
		 !(why & (PROFILE_SAMPLE_CUT_DEPTH | PROFILE_SAMPLE_CUT_COPY | PROFILE_SAMPLE_CUT_WINDOW)))
		snprintf(buf, size, "Go's system stack: the goroutine it works for was not followed "
			 "(a binary without DWARF of a release whose runtime layout csampler does not "
			 "know, as said above; with --backend=perf, a frame-pointer chain that did not "
			 "reach a root)");
	else if ((why & PROFILE_SAMPLE_NO_INFO) && generated_code(p, l) && maps_file(p, "libjvm.so"))
		snprintf(buf, size, "JIT-compiled Java without frame pointers: start the JVM with "
			 "-XX:+PreserveFramePointer (and name its code with a perf map: jcmd PID "
			 "Compiler.perfmap)");
	else if ((why & PROFILE_SAMPLE_NO_INFO) && generated_code(p, l) && maps_file(p, "node"))
		snprintf(buf, size, "JIT-compiled JavaScript without unwind information: run node "
			 "with --perf-basic-prof (and --interpreted-frames-native-stack)");
	else if ((why & PROFILE_SAMPLE_NO_INFO) && generated_code(p, l))
		snprintf(buf, size, "generated code (JIT) without unwind information or frame "
			 "pointers");
	else if (why & PROFILE_SAMPLE_CUT_DEPTH)
		snprintf(buf, size, "the stack is deeper than --max-depth %u: raise it", o->max_depth);
	else if (why & PROFILE_SAMPLE_CUT_COPY)
		snprintf(buf, size, "the kernel's copy of the stack ended at a page not in memory "
			 "(one the thread never touched, or an exec that replaced the program): "
			 "perf events read no further; --backend=ptrace reads the whole stack");
	else if ((why & PROFILE_SAMPLE_CUT_WINDOW) && widest)
		snprintf(buf, size, "the stack is larger than the window copied, which grew from "
			 "%zu KiB to %zu KiB once stacks were cut by it (those before were cut): "
			 "raise --stack-window", o->stack_window / 1024, widest / 1024);
	else if (why & PROFILE_SAMPLE_CUT_WINDOW)
		snprintf(buf, size, "the stack is larger than the %zu KiB copied (--stack-window): "
			 "raise it", o->stack_window / 1024);
	else if (why & PROFILE_SAMPLE_NO_INFO)
		snprintf(buf, size, "no unwind information there (assembly or generated code "
			 "without CFI), and no frame-pointer chain led on");
	else
		snprintf(buf, size, "the next frame could not be found (its return address or "
			 "stack pointer is not valid there)");
}

void report_stops(const struct report_config *o, const struct profile *p, size_t widest)
{
	if (o->quiet || !p)
		return;
	struct stop_tally *t = calloc(1, sizeof *t);
	if (!t)
		return;
	t->p = p;
	if (profile_foreach_sample(p, tally_stop, t) == 0 && t->total &&
	    t->truncated * 100 > t->total * STOPS_REPORT_PERCENT) {
		qsort(t->places, t->n, sizeof *t->places, by_count);
		for (size_t i = 0; i < t->n && i < 3; i++) {
			const struct stop_place *sp = &t->places[i];
			if (sp->count * 100 < t->total)  /* under 1%: not worth a line */
				break;
			char name[128], safe[512], where[300] = "", why[240];
			const struct profile_location *l = &p->locations[sp->location];
			escape_terminal(sp->jit ? "JIT code" :
					write_frame_name(p, l, sp->function, name, sizeof name), safe,
					sizeof safe);
			if (!sp->jit && l->mapping != PROFILE_NONE && l->mapping < p->nmappings &&
			    p->mappings[l->mapping].filename && *p->mappings[l->mapping].filename) {
				char base[256];
				escape_terminal(write_module_name(&p->mappings[l->mapping]), base,
						sizeof base);
				snprintf(where, sizeof where, " (%s)", base);
			}
			say_why(o, p, l, sp->function, sp->why, widest, why, sizeof why);
			fprintf(stderr, "csampler: %.0f%% of stacks stop in %s%s: %s\n",
				100.0 * (double)sp->count / (double)t->total, safe, where, why);
		}
	}
	free(t);
}

void report_written(const struct report_config *o, const char *path, enum output_format f,
		    const struct profile *p, bool hint)
{
	uint64_t samples = p->total_samples;
	const struct write_format_info *fi = write_format_info(f);
	if (o->quiet || !fi)
		return;
	/* -i's type of count comes from the file: escaped for the terminal */
	char word[80];
	if (p->value_type)
		escape_terminal(profile_count_word(p), word, sizeof word);
	fprintf(stderr, "csampler: wrote %s (%s, %llu %s)", path, fi->noun,
		(unsigned long long)samples,
		p->value_type ? word : plural(samples, "sample", "samples"));
	if (hint)
		fprintf(stderr, "; view it%s%s%s", fi->view, fi->view_after ? path : "",
			fi->view_after ? fi->view_after : "");
	fputc('\n', stderr);
}

void report_notice(const struct recorder_notice *n)
{
	errno = n->err;   /* (warn_errno says it) */
	switch (n->kind) {
	case RECORDER_NOTICE_RUNTIME:
		warn("process %d %s", (int)n->pid, n->text);
		break;
	case RECORDER_NOTICE_UNREADABLE:
		warn("cannot read the memory of process %d (%s): it is not dumpable (it called "
		     "prctl(PR_SET_DUMPABLE, 0), or runs a set-user-ID or file-capability program); "
		     "profile it as root or with CAP_SYS_PTRACE", (int)n->pid, n->comm);
		break;
	case RECORDER_NOTICE_MAPS:
		warn_errno("cannot read the mappings of pid %d", (int)n->pid);
		break;
	case RECORDER_NOTICE_SPILL:
		warn_errno("cannot write the spill file in %s (TMPDIR): samples that do not fit "
			   "in memory are lost from now on (the summary counts them)", tempfile_dir());
		break;
	case RECORDER_NOTICE_TIMELINE:
		warn_errno("cannot write the timeline file in %s (TMPDIR): the timeline lacks "
			   "samples from now on", tempfile_dir());
		break;
	}
}
