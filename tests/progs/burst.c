/* burst: threads that work in bursts and block between them, with the CPU
 * split measured by the kernel itself, for checking a profiler's shares.
 *
 * usage: burst MODE ON_US OFF_US THREADS SECONDS
 *
 * THREADS workers each repeat: burst_work() for ON_US microseconds of wall
 * time, then block for about OFF_US in the MODE's call:
 *   sleep  clock_nanosleep          futex  futex wait that times out
 *   epoll  epoll_wait that times out read   read() of a socket with SO_RCVTIMEO
 *   pipe   read() of a pipe that a driver thread writes to every OFF_US
 *   churn  no wait: each burst runs in a new thread (created, then joined)
 *          that lives ON_US; OFF_US is slept between two threads; one more
 *          thread runs steady_work() 1 ms on, 1 ms off for comparison
 * Each phase is timed with CLOCK_THREAD_CPUTIME_ID, so the split is what the
 * kernel accounted. After SECONDS it prints
 *   truth work_ns W wait_ns B steady_ns S process_ns P
 * (W: CPU in burst_work, B: CPU inside the blocking calls, S: CPU in
 * steady_work, P: the whole process) and exits. Prints "ready PID" first. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

enum mode { M_SLEEP, M_FUTEX, M_EPOLL, M_READ, M_PIPE, M_CHURN };

static enum mode mode;
static long on_us, off_us;
static atomic_int stop;
static atomic_ullong work_ns, wait_ns, steady_ns;
static int pipes[MAX_THREADS][2];

static uint64_t clock_of(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu(void)
{
	return clock_of(CLOCK_THREAD_CPUTIME_ID);
}

/* Spin for US microseconds of wall time in plain arithmetic. */
static __attribute__((noinline)) unsigned long spin_us(long us, unsigned long h)
{
	uint64_t end = clock_of(CLOCK_MONOTONIC) + (uint64_t)us * 1000u;
	do {
		for (int i = 0; i < 2000; i++) {
			h = h * 6364136223846793005ul + 1442695040888963407ul;
			__asm__ volatile("" : "+r"(h));
		}
	} while (clock_of(CLOCK_MONOTONIC) < end);
	return h;
}

static __attribute__((noinline)) unsigned long burst_work(long us, unsigned long h)
{
	return spin_us(us, h) ^ 1;
}

static __attribute__((noinline)) unsigned long steady_work(long us, unsigned long h)
{
	return spin_us(us, h) ^ 2;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static void block_once(int idx, int ep, int sock)
{
	struct timespec ts = { off_us / 1000000, (off_us % 1000000) * 1000 };
	char c;
	static int never;

	switch (mode) {
	case M_SLEEP:
		sleep_us(off_us);
		break;
	case M_FUTEX:
		syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
		break;
	case M_EPOLL: {
		struct epoll_event ev;
		epoll_wait(ep, &ev, 1, (int)(off_us / 1000 > 0 ? off_us / 1000 : 1));
		break;
	}
	case M_READ:
		if (read(sock, &c, 1) < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			perror("read");
		break;
	case M_PIPE:
		if (read(pipes[idx][0], &c, 1) < 0)
			perror("read");
		break;
	case M_CHURN:
		break;
	}
}

static void *worker(void *arg)
{
	int idx = (int)(intptr_t)arg;
	int ep = epoll_create1(0);
	int sv[2];
	unsigned long h = (unsigned long)idx;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		perror("socketpair");
		exit(1);
	}
	struct timeval tv = { off_us / 1000000, off_us % 1000000 };
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	while (!atomic_load(&stop)) {
		uint64_t a = thread_cpu();
		h = burst_work(on_us, h);
		uint64_t b = thread_cpu();
		block_once(idx, ep, sv[0]);
		uint64_t c = thread_cpu();
		atomic_fetch_add(&work_ns, b - a);
		atomic_fetch_add(&wait_ns, c - b);
	}
	close(ep);
	close(sv[0]);
	close(sv[1]);
	return (void *)h;
}

/* pipe mode: wake every worker every OFF_US */
static void *driver(void *arg)
{
	long n = (long)(intptr_t)arg;
	while (!atomic_load(&stop)) {
		sleep_us(off_us);
		for (long i = 0; i < n; i++)
			if (write(pipes[i][1], "x", 1) < 0)
				perror("write");
	}
	for (long i = 0; i < n; i++)
		if (write(pipes[i][1], "x", 1) < 0)
			perror("write");
	return NULL;
}

static void *short_lived(void *arg)
{
	unsigned long h = (unsigned long)(uintptr_t)arg;
	uint64_t a = thread_cpu();
	h = burst_work(on_us, h);
	atomic_fetch_add(&work_ns, thread_cpu() - a);
	return (void *)h;
}

static void *creator(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_lived, NULL) != 0) {
			perror("pthread_create");
			exit(1);
		}
		pthread_join(t, NULL);
		if (off_us > 0)
			sleep_us(off_us);
	}
	return NULL;
}

static void *steady(void *arg)
{
	unsigned long h = 7;
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t a = thread_cpu();
		h = steady_work(1000, h);
		atomic_fetch_add(&steady_ns, thread_cpu() - a);
		sleep_us(1000);
	}
	return (void *)h;
}

int main(int argc, char **argv)
{
	static const char *names[] = { "sleep", "futex", "epoll", "read", "pipe", "churn" };
	if (argc != 6) {
		fprintf(stderr, "usage: burst sleep|futex|epoll|read|pipe|churn ON_US OFF_US THREADS SECONDS\n");
		return 2;
	}
	int m = -1;
	for (int i = 0; i < 6; i++)
		if (strcmp(argv[1], names[i]) == 0)
			m = i;
	on_us = atol(argv[2]);
	off_us = atol(argv[3]);
	long nthreads = atol(argv[4]);
	double seconds = atof(argv[5]);
	if (m < 0 || on_us <= 0 || off_us < 0 || nthreads < 1 || nthreads > MAX_THREADS || seconds <= 0) {
		fprintf(stderr, "burst: bad arguments\n");
		return 2;
	}
	mode = (enum mode)m;
	if (mode != M_CHURN && off_us == 0) {
		fprintf(stderr, "burst: OFF_US must be > 0\n");
		return 2;
	}

	pthread_t th[MAX_THREADS + 1];
	int n = 0;
	if (mode == M_CHURN) {
		pthread_create(&th[n++], NULL, creator, NULL);
		pthread_create(&th[n++], NULL, steady, NULL);
	} else {
		for (long i = 0; i < nthreads; i++) {
			if (mode == M_PIPE && pipe(pipes[i]) < 0) {
				perror("pipe");
				return 1;
			}
			pthread_create(&th[n++], NULL, worker, (void *)(intptr_t)i);
		}
		if (mode == M_PIPE)
			pthread_create(&th[n++], NULL, driver, (void *)(intptr_t)nthreads);
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sleep_us((long)(seconds * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("truth work_ns %llu wait_ns %llu steady_ns %llu process_ns %llu\n",
	       (unsigned long long)atomic_load(&work_ns), (unsigned long long)atomic_load(&wait_ns),
	       (unsigned long long)atomic_load(&steady_ns),
	       (unsigned long long)clock_of(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
