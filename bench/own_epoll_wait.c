/* own_epoll_wait: an LD_PRELOAD shim that gives a server its own account of
 * the CPU its epoll_wait calls take, for bench/run's section 8b (a server
 * whose profile is mostly the time around its waits has no other truth for
 * that share than the kernel's clock read around each call).
 *
 * Each call of epoll_wait goes through own_epoll_wait (a frame of its own,
 * which the profilers' stacks hold while the call runs) and reads the
 * thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) before and after it. The
 * frame also holds the two reads: the half of each that falls outside the
 * span between them (about one read), measured once per process as the
 * mean of 256 reads in a row, is added to each call's span, so the account
 * is the frame's (nothing else in the frame makes a system call: the
 * account is found once a process, a fork's child told by pthread_atfork,
 * not by a getpid a call). The sums go to /dev/shm/csampler-bench-own.PID, shared:
 * calls, then nanoseconds, then the read's cost (ns), each a uint64_t. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct own_account {
	_Atomic uint64_t calls, ns, read_ns;
};

static struct own_account *own_account;
static _Atomic int own_tried;   /* (once a process: no call but the clock's in the span's frame) */
static int (*real_epoll_wait)(int, struct epoll_event *, int, int);

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A forked child (a postgres backend is its postmaster's) makes its own. */
static void own_forked(void)
{
	own_account = NULL;
	atomic_store(&own_tried, 0);
}

__attribute__((constructor)) static void own_start(void)
{
	pthread_atfork(NULL, NULL, own_forked);
}

/* The account of this process, made at its first call; NULL where the
 * file cannot be made. */
static struct own_account *account(void)
{
	if (atomic_load_explicit(&own_tried, memory_order_acquire))
		return own_account;
	atomic_store(&own_tried, 1);
	char path[64];
	snprintf(path, sizeof path, "/dev/shm/csampler-bench-own.%d", (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	void *m = ftruncate(fd, sizeof *own_account) == 0
			  ? mmap(NULL, sizeof *own_account, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
			  : MAP_FAILED;
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	own_account = m;
	uint64_t a = thread_cpu_ns(), b = a;
	for (int i = 0; i < 256; i++)
		b = thread_cpu_ns();
	atomic_store(&own_account->read_ns, (b - a) / 256);
	return own_account;
}

__attribute__((noinline)) static int own_epoll_wait(int ep, struct epoll_event *ev, int n, int ms)
{
	if (!real_epoll_wait)
		real_epoll_wait = (int (*)(int, struct epoll_event *, int, int))dlsym(RTLD_NEXT, "epoll_wait");
	struct own_account *acc = account();
	uint64_t a = thread_cpu_ns();
	int r = real_epoll_wait(ep, ev, n, ms);
	uint64_t b = thread_cpu_ns();
	if (acc) {
		atomic_fetch_add_explicit(&acc->calls, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&acc->ns, b - a + atomic_load_explicit(&acc->read_ns,
			memory_order_relaxed), memory_order_relaxed);
	}
	return r;
}

int epoll_wait(int ep, struct epoll_event *ev, int n, int ms)
{
	int r = own_epoll_wait(ep, ev, n, ms);
	__asm__ volatile("" ::: "memory");   /* (a call, not a jump: the frame stays) */
	return r;
}
