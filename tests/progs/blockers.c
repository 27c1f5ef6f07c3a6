/* blockers: threads that block in system calls a ptrace interrupt would end
 * with EINTR (or that the kernel restarts), each counting every EINTR it sees.
 *
 * One thread per call, each named after it: epoll_wait on a pipe nobody
 * writes, sigtimedwait for a signal nobody sends, read and recv on a socket
 * with SO_RCVTIMEO, accept on a listening socket with SO_RCVTIMEO, poll,
 * select, nanosleep, a futex wait and semtimedop; each loops: WORK_US of
 * computing, then the call with a timeout of WAIT_MS. Thread "spin" computes
 * all the time. A call that ends other than by its timeout (or EINTR) counts
 * as odd. The main thread prints, every 20 ms and at the end:
 *   eintr TOTAL odd ODD calls CALLS epoll N sigwait N read N recv N accept N poll N select N nanosleep N futex N semop N
 * and exits with status 3 if it saw any EINTR or odd result, else 0, after
 * SECONDS or at SIGTERM (taken by the main thread with sigtimedwait: every
 * thread blocks it, so it interrupts no blocked call).
 *
 * usage: blockers SECONDS [WORK_US [WAIT_MS]]   (defaults: 0 us, 200 ms)
 * Prints "ready PID" first. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum kind { K_EPOLL, K_SIGWAIT, K_READ, K_RECV, K_ACCEPT, K_POLL, K_SELECT, K_NANOSLEEP,
	    K_FUTEX, K_SEMOP, NKINDS };
static const char *const kind_names[NKINDS] = {
	"epoll", "sigwait", "read", "recv", "accept", "poll", "select", "nanosleep", "futex",
	"semop",
};

static unsigned long eintr[NKINDS], odd, calls;
static long work_us, wait_ms = 200;
static int pipe_rd, sock_rd, listen_fd, sem_id;
static volatile unsigned long sink;

__attribute__((noinline)) static void compute(long us)
{
	struct timespec a, b;
	if (us <= 0)
		return;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 200; i++)
			sink = sink * 31 + (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static struct timespec wait_ts(void)
{
	return (struct timespec){ .tv_sec = wait_ms / 1000, .tv_nsec = (wait_ms % 1000) * 1000000L };
}

/* One blocking call of KIND; returns 0 when it timed out, -1 with errno. */
static int block_once(enum kind k)
{
	struct timespec ts = wait_ts();
	struct timeval tv = { .tv_sec = wait_ms / 1000, .tv_usec = (wait_ms % 1000) * 1000 };
	char buf[16];
	int r;

	switch (k) {
	case K_EPOLL: {
		static __thread int ep = -1;
		struct epoll_event ev = { .events = EPOLLIN }, out;
		if (ep < 0 && ((ep = epoll_create1(0)) < 0 ||
			       epoll_ctl(ep, EPOLL_CTL_ADD, pipe_rd, &ev) < 0))
			abort();
		r = epoll_wait(ep, &out, 1, (int)wait_ms);
		return r == 0 ? 0 : (r > 0 ? (errno = 0, -1) : -1);
	}
	case K_SIGWAIT: {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGRTMIN + 3);
		r = sigtimedwait(&set, NULL, &ts);
		return r < 0 && errno == EAGAIN ? 0 : (r >= 0 ? (errno = 0, -1) : -1);
	}
	case K_READ:
	case K_RECV: {
		ssize_t n = k == K_READ ? read(sock_rd, buf, sizeof buf) : recv(sock_rd, buf, sizeof buf, 0);
		return n < 0 && errno == EAGAIN ? 0 : (n >= 0 ? (errno = 0, -1) : -1);
	}
	case K_ACCEPT:
		r = accept(listen_fd, NULL, NULL);
		return r < 0 && errno == EAGAIN ? 0 : (r >= 0 ? (close(r), errno = 0, -1) : -1);
	case K_POLL: {
		struct pollfd p = { .fd = pipe_rd, .events = POLLIN };
		r = poll(&p, 1, (int)wait_ms);
		return r == 0 ? 0 : (r > 0 ? (errno = 0, -1) : -1);
	}
	case K_SELECT: {
		fd_set rd;
		FD_ZERO(&rd);
		FD_SET(pipe_rd, &rd);
		r = select(pipe_rd + 1, &rd, NULL, NULL, &tv);
		return r == 0 ? 0 : (r > 0 ? (errno = 0, -1) : -1);
	}
	case K_NANOSLEEP:
		return nanosleep(&ts, NULL);
	case K_FUTEX: {
		static int word;
		r = (int)syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
		return r < 0 && errno == ETIMEDOUT ? 0 : (r == 0 ? (errno = 0, -1) : -1);
	}
	case K_SEMOP: {
		struct sembuf op = { .sem_num = 0, .sem_op = -1, .sem_flg = 0 };
		r = semtimedop(sem_id, &op, 1, &ts);
		return r < 0 && errno == EAGAIN ? 0 : (r == 0 ? (errno = 0, -1) : -1);
	}
	case NKINDS:
		break;
	}
	abort();
}

static void *blocker(void *arg)
{
	enum kind k = (enum kind)(long)arg;
	pthread_setname_np(pthread_self(), kind_names[k]);
	for (;;) {
		compute(work_us);
		if (block_once(k) == 0) {
			__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
		} else if (errno == EINTR) {
			__atomic_fetch_add(&eintr[k], 1, __ATOMIC_RELAXED);
		} else {
			__atomic_fetch_add(&odd, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

__attribute__((noinline)) static void spin_forever(void)
{
	for (;;)
		compute(1000);
}

static void *spinner(void *arg)
{
	pthread_setname_np(pthread_self(), "spin");
	spin_forever();
	return arg;
}

static unsigned long report(void)
{
	unsigned long total = 0;
	char line[512];
	int off = 0;
	for (int k = 0; k < NKINDS; k++)
		total += __atomic_load_n(&eintr[k], __ATOMIC_RELAXED);
	off += snprintf(line + off, sizeof line - (size_t)off, "eintr %lu odd %lu calls %lu", total,
			__atomic_load_n(&odd, __ATOMIC_RELAXED),
			__atomic_load_n(&calls, __ATOMIC_RELAXED));
	for (int k = 0; k < NKINDS; k++)
		off += snprintf(line + off, sizeof line - (size_t)off, " %s %lu", kind_names[k],
				__atomic_load_n(&eintr[k], __ATOMIC_RELAXED));
	printf("%s\n", line);
	fflush(stdout);
	return total + __atomic_load_n(&odd, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30;
	if (argc > 2)
		work_us = atol(argv[2]);
	if (argc > 3)
		wait_ms = atol(argv[3]);
	if (seconds <= 0 || work_us < 0 || wait_ms <= 0) {
		fprintf(stderr, "usage: blockers SECONDS [WORK_US [WAIT_MS]]\n");
		return 2;
	}

	/* the signal sigtimedwait waits for is blocked in every thread */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 3);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	int fds[2], sv[2];
	struct timeval tv = { .tv_sec = wait_ms / 1000, .tv_usec = (wait_ms % 1000) * 1000 };
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (pipe(fds) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 2;
	pipe_rd = fds[0];
	sock_rd = sv[0];
	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&addr, sizeof addr) < 0 ||
	    listen(listen_fd, 1) < 0 ||
	    setsockopt(listen_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
	    setsockopt(sock_rd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
		return 2;
	sem_id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	if (sem_id < 0)
		return 2;

	pthread_t th;
	for (long k = 0; k < NKINDS; k++)
		if (pthread_create(&th, NULL, blocker, (void *)k) != 0)
			return 2;
	if (pthread_create(&th, NULL, spinner, NULL) != 0)
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);

	struct timespec start, now, tick = { 0, 20 * 1000000L };
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	clock_gettime(CLOCK_MONOTONIC, &start);
	unsigned long bad = 0;
	int sig;
	do {
		sig = sigtimedwait(&term, NULL, &tick);
		bad = report();
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (sig != SIGTERM && (double)(now.tv_sec - start.tv_sec) +
		 (double)(now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	semctl(sem_id, 0, IPC_RMID);
	return bad ? 3 : 0;
}
