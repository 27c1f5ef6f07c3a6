/* stackmap_scale: the walk that gives each of a map's stacks its share of
 * the kernel's account of its thread's CPU (stackmap.h: the scaler). Pure:
 * it reads a map's per-key account through stackmap_key_account. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "stackmap.h"

static uint64_t in_periods(uint64_t ns, uint64_t period_ns)
{
	return ns / period_ns + (ns % period_ns >= period_ns - period_ns / 2);
}

uint64_t stackmap_scale_share(uint64_t seen_before, uint64_t count, uint64_t total,
			      uint64_t counted)
{
	if (total == counted || counted == 0)
		return count;
	unsigned __int128 half = counted / 2;
	uint64_t upto = (uint64_t)(((unsigned __int128)(seen_before + count) * total + half) / counted);
	uint64_t before = (uint64_t)(((unsigned __int128)seen_before * total + half) / counted);
	return upto - before;
}

/* Whether key K is scaled with the pool: few samples and little CPU (a
 * thread short-lived, or never sampled); one with a few samples of much
 * CPU (its stops found it waiting for a CPU) is scaled to its own. */
static bool pooled(const struct stackmap_account *a, uint64_t period_ns)
{
	return a->counted < STACKMAP_SCALE_MIN &&
	       (!a->counted || a->cpu_ns / STACKMAP_SCALE_MIN < period_ns);
}

int stackmap_scaler_init(struct stackmap_scaler *sc, const struct stackmap *m, uint64_t period_ns)
{
	struct stackmap_account a = { 0 };
	*sc = (struct stackmap_scaler){ .map = m, .period_ns = period_ns };
	if (m)
		stackmap_key_account(m, 0, &a);
	sc->nkeys = period_ns && a.accounted ? a.nkeys : 0;
	sc->seen = calloc(sc->nkeys ? sc->nkeys : 1, sizeof *sc->seen);
	sc->seen_woken = calloc(sc->nkeys ? sc->nkeys : 1, sizeof *sc->seen_woken);
	sc->seen_preempted = calloc(sc->nkeys ? sc->nkeys : 1, sizeof *sc->seen_preempted);
	if (!sc->seen || !sc->seen_woken || !sc->seen_preempted) {
		stackmap_scaler_fini(sc);
		return -1;
	}
	uint64_t pool_ns = a.pool_cpu_ns;
	bool whole = a.whole;
	for (size_t k = 0; k < sc->nkeys; k++) {
		stackmap_key_account(m, (uint32_t)k, &a);
		if (pooled(&a, period_ns)) {
			sc->pool_counted += a.counted;
			pool_ns += a.cpu_ns < UINT64_MAX - pool_ns ? a.cpu_ns : 0;
		}
	}
	/* (never below the count sampled unless the account is whole: a
	 * pool whose account came out short, threads that ended unread
	 * while csampler had no CPU, would scale their samples away) */
	sc->pool_total = sc->nkeys ? in_periods(pool_ns, period_ns) : 0;
	if (sc->pool_total < sc->pool_counted && !whole)
		sc->pool_total = sc->pool_counted;
	return 0;
}

/* The total of key KEY (below nkeys), whose account is A: its own CPU in
 * periods, or its share of the pool's. */
static uint64_t key_total(const struct stackmap_scaler *sc, const struct stackmap_account *a)
{
	return !pooled(a, sc->period_ns)
		       ? in_periods(a->cpu_ns, sc->period_ns)
		       : stackmap_scale_share(0, a->counted, sc->pool_total, sc->pool_counted);
}

uint64_t stackmap_scaler_key_total(const struct stackmap_scaler *sc, uint32_t key,
				   uint64_t *counted)
{
	struct stackmap_account a = { 0 };
	if (sc->map)
		stackmap_key_account(sc->map, key, &a);
	*counted = a.counted;
	return key < sc->nkeys ? key_total(sc, &a) : *counted;
}

/* Of an unpooled key's total TOTAL, the periods its stacks of COUNTED
 * periods of one arrival class get: SPAN_NS, where they are enough to
 * place it, within LEFT. */
static uint64_t arrival_total(uint64_t counted, uint64_t span_ns, uint64_t left,
			      uint64_t period_ns)
{
	if (counted < STACKMAP_WAKE_MIN || !span_ns)
		return 0;
	uint64_t span = in_periods(span_ns, period_ns);
	return span < left ? span : left;
}

uint64_t stackmap_scaler_count(struct stackmap_scaler *sc, uint32_t key, uint32_t flags,
			       uint64_t count)
{
	bool arrival = (flags & STACK_ARRIVAL) != 0;
	if (key >= sc->nkeys)
		return arrival ? 0 : count;
	struct stackmap_account a;
	stackmap_key_account(sc->map, key, &a);
	if (pooled(&a, sc->period_ns)) {
		if (arrival)
			return 0;
		uint64_t share = stackmap_scale_share(sc->pool_seen, count, sc->pool_total,
						      sc->pool_counted);
		sc->pool_seen += count;
		return share;
	}
	uint64_t total = key_total(sc, &a);
	uint64_t woken = arrival_total(a.woken, a.span_ns, total, sc->period_ns);
	uint64_t preempted = arrival_total(a.preempted, a.preempt_span_ns, total - woken,
					   sc->period_ns);
	uint64_t *seen, share;
	if (flags & STACK_WAKE) {
		seen = &sc->seen_woken[key];
		share = woken ? stackmap_scale_share(*seen, count, woken, a.woken) : 0;
	} else if (flags & STACK_PREEMPT) {
		seen = &sc->seen_preempted[key];
		share = preempted ? stackmap_scale_share(*seen, count, preempted, a.preempted) : 0;
	} else {
		seen = &sc->seen[key];
		share = stackmap_scale_share(*seen, count, total - woken - preempted, a.counted);
	}
	*seen += count;
	return share;
}

void stackmap_scaler_fini(struct stackmap_scaler *sc)
{
	free(sc->seen);
	free(sc->seen_woken);
	free(sc->seen_preempted);
	sc->seen = sc->seen_woken = sc->seen_preempted = NULL;
	sc->nkeys = 0;
}
