/* epollwait: threads blocked in system calls that a ptrace interrupt would
 * break with EINTR, counting every EINTR they see.
 *
 * Thread "epoll" waits forever in epoll_wait on a pipe nobody writes; thread
 * "sigwait" waits in sigtimedwait (1 s timeout) for a signal nobody sends;
 * thread "spin" burns CPU so there is something to sample. The main thread
 * prints "eintr EPOLL SIGWAIT" every 20 ms.
 *
 * usage: epollwait SECONDS   Prints "ready PID" first. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static unsigned long epoll_eintr, sigwait_eintr;
static volatile unsigned long sink;

static void *epoll_thread(void *arg)
{
	int fds[2];
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int ep = epoll_create1(0);
	if (pipe(fds) < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev) < 0)
		abort();
	for (;;)
		if (epoll_wait(ep, &out, 1, -1) < 0 && errno == EINTR)
			__atomic_fetch_add(&epoll_eintr, 1, __ATOMIC_RELAXED);
	return arg;
}

static void *sigwait_thread(void *arg)
{
	sigset_t set;
	struct timespec ts = { 1, 0 };
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (;;)
		if (sigtimedwait(&set, NULL, &ts) < 0 && errno == EINTR)
			__atomic_fetch_add(&sigwait_eintr, 1, __ATOMIC_RELAXED);
	return arg;
}

__attribute__((noinline)) static unsigned long spin_step(unsigned long x)
{
	for (int i = 0; i < 100000; i++) {
		x = x * 6364136223846793005ul + 1;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static void *spin_thread(void *arg)
{
	unsigned long x = 1;
	for (;;)
		sink = x = spin_step(x);
	return arg;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	pthread_t t[3];
	pthread_create(&t[0], NULL, epoll_thread, NULL);
	pthread_create(&t[1], NULL, sigwait_thread, NULL);
	pthread_create(&t[2], NULL, spin_thread, NULL);
	pthread_setname_np(t[0], "epoll");
	pthread_setname_np(t[1], "sigwait");
	pthread_setname_np(t[2], "spin");
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long i = 0; i < (long)(seconds * 50); i++) {
		struct timespec ts = { 0, 20 * 1000000 };
		nanosleep(&ts, NULL);
		printf("eintr %lu %lu\n", __atomic_load_n(&epoll_eintr, __ATOMIC_RELAXED),
		       __atomic_load_n(&sigwait_eintr, __ATOMIC_RELAXED));
		fflush(stdout);
	}
	return 0;
}
