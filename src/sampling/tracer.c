/* tracer: see tracer.h. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "tracer.h"

/* How long tracer_run waits for the kernel to finish the thread's exit after
 * pthread_join, in steps of TRACER_GONE_STEP_NS. */
#define TRACER_GONE_STEPS 20000
#define TRACER_GONE_STEP_NS 50000L

struct tracer_call {
	int (*fn)(void *arg);
	void *arg;
	int result;
	pid_t tid;
};

static void *tracer_main(void *p)
{
	struct tracer_call *c = p;
	c->tid = gettid();
	c->result = c->fn(c->arg);
	return NULL;
}

/* pthread_join returns when the kernel clears the thread's tid, in exit_mm,
 * which comes before exit_notify detaches the tracees: wait until the task
 * is released (its /proc entry goes), so the tracees are untraced on return. */
static void wait_task_gone(pid_t tid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
	for (int i = 0; i < TRACER_GONE_STEPS && access(path, F_OK) == 0; i++)
		nanosleep(&(struct timespec){ .tv_nsec = TRACER_GONE_STEP_NS }, NULL);
}

int tracer_run(int (*fn)(void *arg), void *arg)
{
	struct tracer_call c = { .fn = fn, .arg = arg, .result = -1 };
	sigset_t chld, old;
	pthread_t th;

	/* The tracees' SIGCHLD is sent to the process: a thread that does not
	 * block it may take it (and discard it), and the tracer would miss it. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	int err = pthread_create(&th, NULL, tracer_main, &c);
	if (!err)
		err = pthread_join(th, NULL);
	if (!err && c.tid > 0)
		wait_task_gone(c.tid);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		errno = err;
		return -1;
	}
	return c.result;
}
