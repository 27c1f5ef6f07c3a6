/* taskclock: a thread's task clock, the kernel's count of its time on a
 * CPU as perf keeps it (a counting PERF_COUNT_SW_TASK_CLOCK event on that
 * thread alone), against its schedstat run time: the span between the two
 * is the switch into the thread (issue 44).
 *
 * The scheduler charges a thread from the moment it is picked
 * (set_next_entity), perf's clock from the moment the switch into it is
 * done (finish_task_switch): what lies between (the previous task's state
 * saved, another address space loaded) is the thread's CPU, and no
 * sampler's timer lands in it. Measured on a postgres backend (its run
 * time against perf stat -e task-clock -t): 3.7-3.9% of its CPU quiet,
 * 20.7-29.1% beside two busy loops (a PVM guest of 2 CPUs).
 *
 * taskclock_open counts TID's clock from now: a descriptor (close-on-exec)
 * or -1 with errno (EACCES/EPERM: perf_event_paranoid above 2, or a
 * container's seccomp; ENOENT/ENOSYS: no perf events; ESRCH: gone). It
 * excludes the kernel, which a task clock ignores (it counts the thread's
 * whole time on a CPU either way) and which lets it open without
 * privilege at perf_event_paranoid 2 on a thread the caller may trace.
 * taskclock_read reads it (ns); false on an error.
 *
 * taskclock_span: of a thread's run time RUN_NS (schedstat, over the
 * counter's life) and its task clock CLOCK_NS, with ARRIVALS times it got a
 * CPU, OWN of them made by the sampler's own stops, the span the thread's
 * own arrivals cost (each arrival taken to cost the same: a stop's own
 * switch-in falls where it was sampled, so it needs no moving). 0 when the
 * clock is not behind. Pure. */
#ifndef CSAMPLER_TASKCLOCK_H
#define CSAMPLER_TASKCLOCK_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

int taskclock_open(pid_t tid);   /* (TID 0: the calling thread) */
bool taskclock_read(int fd, uint64_t *ns);
uint64_t taskclock_span(uint64_t run_ns, uint64_t clock_ns, uint64_t arrivals, uint64_t own);

#endif
