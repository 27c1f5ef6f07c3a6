/* taskclock: a thread's task clock (see taskclock.h). */
#include "config.h"

#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "taskclock.h"

int taskclock_open(pid_t tid)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

bool taskclock_read(int fd, uint64_t *ns)
{
	return read(fd, ns, sizeof *ns) == (ssize_t)sizeof *ns;
}

uint64_t taskclock_span(uint64_t run_ns, uint64_t clock_ns, uint64_t arrivals, uint64_t own)
{
	if (run_ns <= clock_ns || arrivals == 0 || own >= arrivals)
		return 0;
	double span = (double)(run_ns - clock_ns);
	return (uint64_t)(span * (double)(arrivals - own) / (double)arrivals);
}
