/* blockers: threads that block in system calls a ptrace interrupt would end
 * with EINTR (or that the kernel restarts), each counting every EINTR it sees.
 *
 * One thread per call, each named after it: epoll_wait on a pipe nobody
 * writes, sigtimedwait for a signal nobody sends, read and recv on a socket
 * with SO_RCVTIMEO, accept on a listening socket with SO_RCVTIMEO, poll,
 * select, nanosleep, a futex wait, semtimedop, io_uring_enter waiting for a
 * completion with a timeout ("iouring"), a TCP connect with SO_SNDTIMEO to
 * a listener whose backlog is full (its SYN unanswered), splice from a
 * socket with SO_RCVTIMEO, and sendfile to a socket with a full send buffer
 * and SO_SNDTIMEO; each loops: WORK_US of computing, then the call with a
 * timeout of WAIT_MS. Thread "spin" computes 1 ms in every 3. A call that ends
 * other than by its timeout (or EINTR) counts as odd; a connect's timeout
 * is EINPROGRESS, or EALREADY when it is the second connect of the socket
 * (the kernel's word for the same: not connected yet; a connect csampler
 * restarted is one). A call the kernel does not offer (io_uring disabled)
 * ends its thread, which says so on stderr. The main thread prints, every
 * 20 ms and at the end:
 *   eintr TOTAL odd ODD calls CALLS epoll N sigwait N read N recv N accept N poll N select N nanosleep N futex N semop N iouring N connect N splice N sendfile N
 * and exits with status 3 if it saw any EINTR or odd result, else 0, after
 * SECONDS or at SIGTERM (taken by the main thread with sigtimedwait: every
 * thread blocks it, so it interrupts no blocked call).
 *
 * usage: blockers SECONDS [WORK_US [WAIT_MS [FORK_US]]]   (defaults: 0 us,
 * 200 ms, no forking): with FORK_US, thread "forker" forks a child every
 * FORK_US microseconds (below; a negative one: waited for at once, with a
 * pause after every tenth).
 * Prints "ready PID" first. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/select.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum kind { K_EPOLL, K_SIGWAIT, K_READ, K_RECV, K_ACCEPT, K_POLL, K_SELECT, K_NANOSLEEP,
	    K_FUTEX, K_SEMOP, K_IOURING, K_CONNECT, K_SPLICE, K_SENDFILE, NKINDS };
static const char *const kind_names[NKINDS] = {
	"epoll", "sigwait", "read", "recv", "accept", "poll", "select", "nanosleep", "futex",
	"semop", "iouring", "connect", "splice", "sendfile",
};

static unsigned long eintr[NKINDS], odd, calls;
static long work_us, wait_ms = 200;
static int pipe_rd, sock_rd, listen_fd, sem_id;
static int full_listen_fd;              /* backlog full: a connect's SYN is dropped */
static struct sockaddr_in full_addr;
static int splice_sock, sendfile_sock, sendfile_file;
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

/* io_uring_enter waiting WAIT_MS for a completion that never comes: 0 when
 * it timed out (ETIME), -1 with errno; the ring made on first use (a
 * thread whose kernel offers none ends: errno ENOSYS). */
static int block_iouring(void)
{
	static __thread int ring = -1;
	if (ring < 0) {
		struct io_uring_params p;
		memset(&p, 0, sizeof p);
		ring = (int)syscall(SYS_io_uring_setup, 4, &p);
		if (ring < 0)
			return -1;
	}
	struct __kernel_timespec ts = { .tv_sec = wait_ms / 1000,
					.tv_nsec = (wait_ms % 1000) * 1000000L };
	struct io_uring_getevents_arg arg = { .sigmask = 0, .sigmask_sz = _NSIG / 8,
					      .ts = (uint64_t)(uintptr_t)&ts };
	long r = syscall(SYS_io_uring_enter, ring, 0, 1,
			 IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, sizeof arg);
	return r < 0 && errno == ETIME ? 0 : (r >= 0 ? (errno = 0, -1) : -1);
}

/* A blocking TCP connect, SO_SNDTIMEO WAIT_MS, to the full listener: 0 when
 * it timed out (EINPROGRESS, or EALREADY: see the top), -1 with errno. */
static int block_connect(void)
{
	struct timeval tv = { .tv_sec = wait_ms / 1000, .tv_usec = (wait_ms % 1000) * 1000 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
		abort();
	int r = connect(fd, (struct sockaddr *)&full_addr, sizeof full_addr);
	int err = errno;
	close(fd);
	errno = err;
	return r < 0 && (err == EINPROGRESS || err == EALREADY) ? 0 : (r == 0 ? (errno = 0, -1) : -1);
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
	case K_IOURING:
		return block_iouring();
	case K_CONNECT:
		return block_connect();
	case K_SPLICE: {
		static __thread int pp[2] = { -1, -1 };
		if (pp[0] < 0 && pipe(pp) < 0)
			abort();
		ssize_t n = splice(splice_sock, NULL, pp[1], NULL, sizeof buf, 0);
		return n < 0 && errno == EAGAIN ? 0 : (n >= 0 ? (errno = 0, -1) : -1);
	}
	case K_SENDFILE: {
		off_t off = 0;
		ssize_t n = sendfile(sendfile_sock, sendfile_file, &off, 4096);
		return n < 0 && errno == EAGAIN ? 0 : (n >= 0 ? (errno = 0, -1) : -1);
	}
	case NKINDS:
		break;
	}
	abort();
}

/* A TCP listener with backlog 0 and its queue filled by connections never
 * accepted: the SYN of another connect to it is dropped, so the connect
 * waits (the kernel retransmits after a second). */
static int setup_full_listener(void)
{
	full_addr = (struct sockaddr_in){ .sin_family = AF_INET,
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof full_addr;
	full_listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (full_listen_fd < 0 || bind(full_listen_fd, (struct sockaddr *)&full_addr, len) < 0 ||
	    listen(full_listen_fd, 0) < 0 ||
	    getsockname(full_listen_fd, (struct sockaddr *)&full_addr, &len) < 0)
		return -1;
	/* fill the accept queue: non-blocking connects until one stays in
	 * progress (its SYN dropped) */
	for (int i = 0; i < 8; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&full_addr, sizeof full_addr) < 0 &&
		    errno != EINPROGRESS)
			return -1;
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		if (poll(&p, 1, 100) == 0)
			return 0;  /* this one waits: the queue is full (kept open) */
	}
	return -1;
}

/* splice's socket (SO_RCVTIMEO, nothing ever written to it) and
 * sendfile's (SO_SNDTIMEO, its send buffer filled, its peer never reading)
 * and the file it sends. */
static int setup_splice_sendfile(const struct timeval *tv)
{
	int a[2], b[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, a) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, b) < 0)
		return -1;
	splice_sock = a[0];
	sendfile_sock = b[0];
	if (setsockopt(splice_sock, SOL_SOCKET, SO_RCVTIMEO, tv, sizeof *tv) < 0 ||
	    setsockopt(sendfile_sock, SOL_SOCKET, SO_SNDTIMEO, tv, sizeof *tv) < 0)
		return -1;
	char chunk[4096] = { 0 };
	while (send(sendfile_sock, chunk, sizeof chunk, MSG_DONTWAIT) > 0)
		;
	sendfile_file = memfd_create("blockers-sendfile", MFD_CLOEXEC);
	return sendfile_file >= 0 && write(sendfile_file, chunk, sizeof chunk) == sizeof chunk ? 0 : -1;
}

static void *blocker(void *arg)
{
	enum kind k = (enum kind)(long)arg;
	pthread_setname_np(pthread_self(), kind_names[k]);
	for (;;) {
		compute(work_us);
		int r = block_once(k);
		if (r < 0 && (errno == ENOSYS || errno == EPERM) && k == K_IOURING) {
			fprintf(stderr, "blockers: no io_uring here: %s\n", strerror(errno));
			return NULL;
		}
		if (r == 0) {
			__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
		} else if (errno == EINTR) {
			__atomic_fetch_add(&eintr[k], 1, __ATOMIC_RELAXED);
		} else {
			__atomic_fetch_add(&odd, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

/* a third of a CPU: 1 ms of work, then 2 ms asleep (a thread that computed
 * all the time took a whole CPU for each test's length, most of the CPU
 * the five tests of this fixture used; csampler's on-CPU stops find it as
 * well at a third) */
__attribute__((noinline)) static void spin_forever(void)
{
	const struct timespec rest = { .tv_sec = 0, .tv_nsec = 2000000L };
	for (;;) {
		compute(1000);
		nanosleep(&rest, NULL);
	}
}

static void *spinner(void *arg)
{
	pthread_setname_np(pthread_self(), "spin");
	spin_forever();
	return arg;
}

/* Thread "forker": a child every FORK_US that exits at once, reaped with
 * WNOHANG (as a server's master, a shell): each child's exit raises a
 * SIGCHLD at SIG_DFL, which the kernel drops for a process nobody traces.
 * A negative FORK_US: the child is waited for at once (as system() does),
 * then the thread sleeps -FORK_US, so that it has no child nearly all the
 * time (an attach finds it without one); after every FORK_BURST children
 * it sleeps FORK_PAUSE_MS more, long enough for a profiler that let it go
 * while it forked to take it back (csampler: LOOSE_QUIET_NS, 100 ms). */
#define FORK_BURST 10
#define FORK_PAUSE_MS 250
static long fork_us;
static void *forker(void *arg)
{
	pthread_setname_np(pthread_self(), "forker");
	long us = fork_us < 0 ? -fork_us : fork_us;
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000L };
	const struct timespec pause = { .tv_nsec = FORK_PAUSE_MS * 1000000L };
	for (unsigned long n = 1;; n++) {
		pid_t child = fork();
		if (child == 0)
			_exit(0);
		if (child < 0)
			abort();
		if (fork_us < 0) {
			while (waitpid(child, NULL, 0) < 0)
				if (errno != EINTR)
					abort();
			nanosleep(&ts, NULL);
			if (n % FORK_BURST == 0)
				nanosleep(&pause, NULL);
			continue;
		}
		nanosleep(&ts, NULL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
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
	if (argc > 4)
		fork_us = atol(argv[4]);
	if (seconds <= 0 || work_us < 0 || wait_ms <= 0) {
		fprintf(stderr, "usage: blockers SECONDS [WORK_US [WAIT_MS [FORK_US]]]\n");
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
	if (setup_full_listener() < 0 || setup_splice_sendfile(&tv) < 0)
		return 2;

	pthread_t th;
	for (long k = 0; k < NKINDS; k++)
		if (pthread_create(&th, NULL, blocker, (void *)k) != 0)
			return 2;
	if (pthread_create(&th, NULL, spinner, NULL) != 0)
		return 2;
	if (fork_us != 0 && pthread_create(&th, NULL, forker, NULL) != 0)
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
