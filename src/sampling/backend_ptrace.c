/* backend_ptrace: the ptrace kind's row of the backend table (sampler.h:
 * rounds that stop the running threads; needs no privilege). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "backend_internal.h"
#include "error.h"
#include "recorder.h"
#include "sampler.h"

_Static_assert(sizeof(struct sampler_stats) <= sizeof(((struct backend_stats *)0)->own),
	       "the sampler's counters fit in the stats' own words");
_Static_assert(sizeof(struct sampler_stats) % sizeof(uint64_t) == 0,
	       "the sampler's counters are uint64_t counts");

static void *ptrace_create(struct target *t, struct recorder *rec, const struct backend_config *c,
			   int *status)
{
	struct sampler_config sc = {
		.rate = c->rate, .idle = c->idle, .max_depth = c->max_depth,
		.stack_window = c->window_grows ? unwind_window_limit(c->stack_window)
						: c->stack_window,
		.verbose = c->verbose, .tids = c->tids, .ntids = c->ntids, .launched = c->launched,
		.kernel = c->kernel,
	};
	struct sampler *s = sampler_new(t, rec, &sc);
	if (!s) {
		warn_errno("cannot set up sampling");
		*status = CS_EXIT_SYSTEM;
	}
	return s;
}

static void ptrace_destroy(void *impl) { sampler_free(impl); }
static void ptrace_on_event(void *impl, const struct target_event *ev) { sampler_on_event(impl, ev); }
static int ptrace_tick(void *impl, uint64_t tick_ns, uint64_t next_tick_ns)
{
	return sampler_tick(impl, tick_ns, next_tick_ns);
}
static void ptrace_note_missed(void *impl, uint64_t missed) { sampler_note_missed(impl, missed); }
static void ptrace_end_ticks(void *impl) { sampler_end_ticks(impl); }
static void ptrace_close_threads(void *impl) { sampler_close_threads(impl); }

static void ptrace_get_stats(const void *impl, struct backend_stats *out)
{
	struct sampler_stats ss;
	sampler_get_stats(impl, &ss);
	*out = (struct backend_stats){
		.ticks = ss.ticks, .threads_seen = ss.threads_seen, .waited_ns = ss.waited_ns,
		.switches = ss.switches, .stops_call = ss.stops_call, .stops_user = ss.stops_user,
		.user_ticks = ss.user_ticks, .kernel_ticks = ss.kernel_ticks,
		.stops_taken = ss.local_call + ss.local_user, .stops_woken = ss.dropped_waking,
		.switch_in_ns = ss.switch_in_ns, .switch_run_ns = ss.switch_run_ns,
		.switch_placed_ns = ss.switch_placed_ns, .ticks_realtime = ss.ticks_realtime,
	};
	memcpy(out->own, &ss, sizeof ss);
}

static void ptrace_print_diagnostics(const struct backend_stats *st, const struct recorder_stats *rs,
				     const char *unwind_stops, uint64_t taken)
{
	struct sampler_stats ss;
	memcpy(&ss, st->own, sizeof ss);
	char grown[64] = "";
	if (rs->window_widest)
		snprintf(grown, sizeof grown, ", stack window grown to %zu KiB",
			 rs->window_widest / 1024);
	fprintf(stderr,
		"csampler: %llu samples, %llu threads seen, %llu ticks missed, "
		"unwind stops: %s, %llu truncated, %llu sampled late, %llu stops kept, %llu dropped at wake-ups, "
		"%llu dropped waiting for a CPU (%llu stopped only for where they arrived), %llu switches, %.2f s waited for a CPU, "
		"pause p50 %.1f us p99 %.1f us%s, %llu not stopped (threads with child processes), "
		"other CPUs held at the ticks: %llu of %llu, %llu copied where they slept, "
		"stops at a call's exit: %llu of %llu taken where csampler's tick took the CPU, "
		"%llu of %llu from another, switch-in span %.3f s of %.3f s run (%.3f s with "
		"csampler's stops, %.3f s put where they arrived) on %llu threads' task clocks, thread keys %llu held of %llu made, "
		"%llu periods taken\n",
		(unsigned long long)rs->samples, (unsigned long long)ss.threads_seen,
		(unsigned long long)ss.ticks_missed, unwind_stops,
		(unsigned long long)rs->truncated, (unsigned long long)ss.late,
		(unsigned long long)(ss.stops_call + ss.stops_user), (unsigned long long)ss.dropped_waking, (unsigned long long)ss.dropped_queued,
		(unsigned long long)ss.arrival_stops,
		(unsigned long long)ss.switches, (double)ss.waited_ns / 1e9,
		(double)rs->pause_p50_ns / 1e3,
		(double)rs->pause_p99_ns / 1e3, grown, (unsigned long long)ss.not_stopped,
		(unsigned long long)ss.cpus_held, (unsigned long long)(ss.cpus_held + ss.cpus_not_held),
		(unsigned long long)ss.in_place,
		(unsigned long long)ss.local_call, (unsigned long long)(ss.local_call + ss.local_user),
		(unsigned long long)ss.remote_call,
		(unsigned long long)(ss.remote_call + ss.remote_user),
		(double)ss.switch_in_ns / 1e9, (double)ss.switch_run_ns / 1e9,
		(double)ss.switch_all_ns / 1e9, (double)ss.switch_placed_ns / 1e9,
		(unsigned long long)ss.switch_threads,
		(unsigned long long)rs->keys_held,
		(unsigned long long)rs->keys_made, (unsigned long long)taken);
}

static const struct backend_ops ptrace_ops = {
	.caps = { .word = "ptrace", .name = "ptrace", .option = "--backend=ptrace", .idle = true,
		  .dump = true, .per_sample_attach = true, .own_ticks = true, .reads_exits = true },
	.create = ptrace_create, .destroy = ptrace_destroy, .on_event = ptrace_on_event,
	.tick = ptrace_tick, .note_missed = ptrace_note_missed, .end_ticks = ptrace_end_ticks,
	.close_threads = ptrace_close_threads,
	.get_stats = ptrace_get_stats, .print_diagnostics = ptrace_print_diagnostics,
};

const struct backend_ops *backend_ptrace_ops(void) { return &ptrace_ops; }
