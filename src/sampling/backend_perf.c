/* backend_perf: the perf events kind's row of the backend table
 * (perf_sampler.h: the kernel samples the threads where they run; root). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "backend_internal.h"
#include "perf_sampler.h"
#include "recorder.h"

_Static_assert(sizeof(struct perf_sampler_stats) <= sizeof(((struct backend_stats *)0)->own),
	       "perf_sampler's counters fit in the stats' own words");
_Static_assert(sizeof(struct perf_sampler_stats) % sizeof(uint64_t) == 0,
	       "perf_sampler's counters are uint64_t counts");

static void *perf_create(struct target *t, struct recorder *rec, const struct backend_config *c,
			 int *status)
{
	struct perf_sampler_config pc = {
		.rate = c->rate, .stack_window = c->stack_window, .verbose = c->verbose,
		.tids = c->tids, .ntids = c->ntids, .launched = c->launched, .kernel = c->kernel,
	};
	return perf_sampler_new(t, rec, &pc, status);   /* (a failure is said) */
}

static void perf_destroy(void *impl) { perf_sampler_free(impl); }
static void perf_on_event(void *impl, const struct target_event *ev)
{
	perf_sampler_on_event(impl, ev);
}
/* A tick reads what the kernel sampled. */
static int perf_tick(void *impl, uint64_t tick_ns, uint64_t next_tick_ns)
{
	(void)tick_ns, (void)next_tick_ns;
	return perf_sampler_drain(impl);
}
static unsigned perf_read_rate(const void *impl) { return perf_sampler_read_rate(impl); }
/* The kernel samples whether csampler ticks or not. */
static void perf_note_missed(void *impl, uint64_t missed) { (void)impl, (void)missed; }
static void perf_close_threads(void *impl) { perf_sampler_close_threads(impl); }

static void perf_get_stats(const void *impl, struct backend_stats *out)
{
	struct perf_sampler_stats ps;
	perf_sampler_get_stats(impl, &ps);
	*out = (struct backend_stats){
		.ticks = ps.drains, .threads_seen = ps.threads_seen, .lost = ps.lost,
		.switch_in_ns = ps.switch_in_ns, .switch_run_ns = ps.switch_run_ns,
		.switch_placed_ns = ps.switch_placed_ns,
	};
	memcpy(out->own, &ps, sizeof ps);
}

static void perf_print_diagnostics(const struct backend_stats *st, const struct recorder_stats *rs,
				   const char *unwind_stops, uint64_t taken)
{
	struct perf_sampler_stats ps;
	memcpy(&ps, st->own, sizeof ps);
	fprintf(stderr,
		"csampler: %llu samples, %llu threads seen, %llu on clocks of their own "
		"(%llu refused), %llu lost (rings full), %llu "
		"without user registers, unwind stops: %s, %llu truncated, %llu whole by the "
		"kernel's frame pointers, switch-in span %.3f s of %.3f s run on the threads' own "
		"clocks (%.3f s put where they arrived: %llu stacks at a switch out of %llu threads, "
		"%llu lost), thread keys %llu held of %llu made, %llu periods taken\n",
		(unsigned long long)rs->samples, (unsigned long long)ps.threads_seen,
		(unsigned long long)ps.own_threads, (unsigned long long)ps.own_refused,
		(unsigned long long)ps.lost, (unsigned long long)ps.no_user_regs,
		unwind_stops, (unsigned long long)rs->truncated,
		(unsigned long long)rs->fp_continued,
		(double)ps.switch_in_ns / 1e9, (double)ps.switch_run_ns / 1e9,
		(double)ps.switch_placed_ns / 1e9, (unsigned long long)ps.arrival_samples,
		(unsigned long long)ps.arrival_threads, (unsigned long long)ps.arrival_lost,
		(unsigned long long)rs->keys_held, (unsigned long long)rs->keys_made,
		(unsigned long long)taken);
}

static const struct backend_ops perf_ops = {
	.caps = { .word = "perf", .name = "perf events", .option = "--backend=perf",
		  .ends_with_sampling = true,
		  .idle_refusal = "the kernel samples threads while they run on a CPU only" },
	.permitted = perf_sampler_permitted,
	.create = perf_create, .destroy = perf_destroy, .on_event = perf_on_event,
	.tick = perf_tick, .read_rate = perf_read_rate, .note_missed = perf_note_missed,
	.close_threads = perf_close_threads,
	.get_stats = perf_get_stats, .print_diagnostics = perf_print_diagnostics,
};

const struct backend_ops *backend_perf_ops(void) { return &perf_ops; }
