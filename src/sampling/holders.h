/* holders: at each tick, csampler takes every CPU, not only its own.
 *
 * The ptrace backend's stop is exact for the thread its tick takes a CPU
 * from: the tick thread runs SCHED_FIFO, so the switch to it preempts that
 * thread where it is, and the interrupt sent meanwhile stops it there when
 * it runs again. A thread on another CPU is reached by the interrupt's
 * inter-processor interrupt 26-42 us later (this 2-CPU VM), by when a thread
 * making system calls has reached the exit of its next one. A holder is a
 * SCHED_FIFO thread of csampler pinned to one other CPU and woken there by
 * its own timer at the tick's instant: it takes that CPU as the tick thread
 * takes its own, publishes the se.exec_start of that switch (the run-queue
 * clock the thread it preempted was stamped with too: /proc/TID/sched), and
 * spins until the tick thread has sent the round's interrupts (or its
 * bound), then sleeps until the next tick. While holders run, the tick
 * thread is pinned to its CPU (no holder spins where it must run).
 *
 * Only the tick thread calls these, once per tick, in this order:
 * holders_arm (the next tick), holders_wait, holders_taken_at (any number),
 * holders_release. Nothing here allocates after holders_start. */
#ifndef CSAMPLER_HOLDERS_H
#define CSAMPLER_HOLDERS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct holders;

/* A holder on every online CPU csampler may run on but the caller's, at
 * real-time PRIORITY, each holding its CPU at most HOLD_MAX_NS a tick; the
 * caller is pinned to its CPU until holders_stop. NULL, with errno, where
 * none can work: one CPU, the caller not SCHED_FIFO, no /proc/TID/sched
 * (kernels without CONFIG_SCHED_DEBUG), threads refused. */
struct holders *holders_start(int priority, uint64_t hold_max_ns);

/* The instant (CLOCK_MONOTONIC) of the next tick, at which the holders take
 * their CPUs. */
void holders_arm(struct holders *h, uint64_t tick_ns);

/* Spin until every holder has taken its CPU for the tick at TICK_NS, or
 * until DEADLINE_NS; remembers which did (holders_taken_at), and returns
 * how many did. */
size_t holders_wait(struct holders *h, uint64_t tick_ns, uint64_t deadline_ns);
/* How many holders run. */
size_t holders_count(const struct holders *h);

/* Of CPU: the se.exec_start of the switch by which its holder took it at
 * the tick holders_wait saw, if the holder took it in time and holds it
 * still; 0 otherwise (no holder there: the caller's own CPU, or one that
 * came late or gave up). *TICK_RQ: the tick's instant on that CPU's
 * run-queue clock (0: unknown, or not found yet: the holder finds it after
 * its arrival). The thread the switch took the CPU from, or one that left
 * it between the instant and the switch, has an exec_start in [*TICK_RQ,
 * stamp]. */
uint64_t holders_taken_at(const struct holders *h, int cpu, uint64_t *tick_rq);

/* The tick's interrupts are sent: let the CPUs go. */
void holders_release(struct holders *h, uint64_t tick_ns);

/* End the holders (within one tick's hold) and unpin the caller. */
void holders_stop(struct holders *h);

#endif
