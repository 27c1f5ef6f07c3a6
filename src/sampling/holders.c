/* holders: see holders.h. Each holder waits on a futex word with the next
 * tick's instant as its absolute timeout (an hrtimer on its own CPU, where
 * it runs pinned: the wake-up is local, with no inter-processor interrupt),
 * and is woken early only to end or, after a tick the tick thread skipped,
 * for the next instant. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "holders.h"
#include "procfs.h"

/* A holder's stack: it calls pread and the futex, nothing deep */
#define HOLDER_STACK (64u * 1024u)

struct holder {
	/* written by the holder */
	_Alignas(64) _Atomic uint64_t arrived;   /* the tick it took its CPU for */
	_Atomic uint64_t exec_start;             /* that switch's stamp (0: unread) */
	_Atomic uint64_t tick_rq;                /* the instant on its run-queue clock */
	_Atomic uint64_t gave_up;                /* a tick it let go of unreleased */
	/* the holder's own, set before it starts */
	struct holders *h;
	int cpu;
	int sched_fd;
	pthread_t thread;
	bool started;
	/* the tick thread's copy of what it saw at holders_wait */
	uint64_t seen_tick, seen_exec_start;
};

struct holders {
	_Alignas(64) _Atomic uint64_t next_ns;   /* the tick to take the CPUs at */
	_Atomic uint32_t seq;                    /* futex word: bumped at each arm */
	_Atomic unsigned sleepers;               /* holders waiting for an arm */
	_Atomic bool stop;
	_Alignas(64) _Atomic uint64_t released;  /* the last tick let go */
	uint64_t hold_max_ns;
	cpu_set_t saved_mask;                    /* the caller's, before pinning */
	size_t n;
	struct holder *slots;
	int cpu_slot[CPU_SETSIZE];               /* by CPU: its slot, -1 none */
};

static long futex_wait(_Atomic uint32_t *word, uint32_t val, const struct timespec *abs)
{
	/* (an _Atomic uint32_t has the size and alignment the futex needs) */
	return syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, val,
		       abs, NULL, FUTEX_BITSET_MATCH_ANY);
}

static void futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, INT_MAX, NULL, NULL, 0);
}

/* Take the CPU for tick AT: stamp, publish, spin until released or the
 * bound (then say so: the tick thread must not count it as held). */
static void hold(struct holder *me, uint64_t at)
{
	struct holders *h = me->h;
	uint64_t exec = 0;
	int64_t off;
	if (me->sched_fd < 0 || !procfs_read_exec_start(me->sched_fd, &exec))
		exec = 0;
	atomic_store(&me->tick_rq, 0);
	atomic_store(&me->exec_start, exec);
	atomic_store(&me->arrived, at);
	/* (after the arrival: the tick thread needs it only for a thread
	 * that left this CPU between the instant and the switch) */
	if (exec && procfs_exec_clock_offset(me->sched_fd, &off))
		atomic_store(&me->tick_rq, at + (uint64_t)off);
	uint64_t until = clock_monotonic_ns() + h->hold_max_ns;
	while (atomic_load_explicit(&h->released, memory_order_acquire) < at) {
		if (atomic_load_explicit(&h->stop, memory_order_relaxed))
			break;
		if (clock_monotonic_ns() >= until) {
			atomic_store(&me->gave_up, at);
			break;
		}
		__builtin_ia32_pause();
	}
}

static void *holder_main(void *arg)
{
	struct holder *me = arg;
	struct holders *h = me->h;
	uint64_t last = 0;

	/* (unreadable: it never publishes a stamp, and its CPU counts as not
	 * held) */
	me->sched_fd = procfs_open_task_file(-1, getpid(), gettid(), "sched");
	while (!atomic_load(&h->stop)) {
		uint32_t seq = atomic_load(&h->seq);
		uint64_t at = atomic_load(&h->next_ns);
		if (atomic_load(&h->stop))
			break;
		if (at <= last) {
			/* nothing armed past the last tick held: wait for it */
			atomic_fetch_add(&h->sleepers, 1);
			if (atomic_load(&h->seq) == seq && !atomic_load(&h->stop))
				futex_wait(&h->seq, seq, NULL);
			atomic_fetch_sub(&h->sleepers, 1);
			continue;
		}
		if (clock_monotonic_ns() < at) {
			struct timespec ts = { (time_t)(at / 1000000000u), (long)(at % 1000000000u) };
			long r = futex_wait(&h->seq, seq, &ts);
			if ((r == 0 || (r < 0 && errno != ETIMEDOUT)) && clock_monotonic_ns() < at)
				continue;  /* woken (an end, a new instant) or interrupted */
		}
		if (atomic_load(&h->stop))
			break;
		last = at;
		/* woken too late to be of use, or the tick is over */
		if (clock_monotonic_ns() > at + h->hold_max_ns || atomic_load(&h->released) >= at)
			continue;
		hold(me, at);
	}
	return NULL;
}

static int start_holder(struct holder *me, int priority)
{
	pthread_attr_t attr;
	cpu_set_t one;
	struct sched_param sp = { .sched_priority = priority };
	int err = pthread_attr_init(&attr);
	if (err)
		return err;
	CPU_ZERO(&one);
	CPU_SET(me->cpu, &one);
	if (!(err = pthread_attr_setstacksize(&attr, HOLDER_STACK)) &&
	    !(err = pthread_attr_setaffinity_np(&attr, sizeof one, &one)) &&
	    !(err = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED)) &&
	    !(err = pthread_attr_setschedpolicy(&attr, SCHED_FIFO)) &&
	    !(err = pthread_attr_setschedparam(&attr, &sp)))
		err = pthread_create(&me->thread, &attr, holder_main, me);
	pthread_attr_destroy(&attr);
	me->started = err == 0;
	return err;
}

/* Each holder opens its own /proc/self/task/TID/sched; it must exist on
 * this kernel (the caller's is the test). */
static bool sched_file_readable(void)
{
	int fd = procfs_open_task_file(-1, getpid(), gettid(), "sched");
	uint64_t ns = 0;
	bool ok = fd >= 0 && procfs_read_exec_start(fd, &ns) && ns;
	if (fd >= 0)
		close(fd);
	return ok;
}

struct holders *holders_start(int priority, uint64_t hold_max_ns)
{
	int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	int own = sched_getcpu();
	if (policy != SCHED_FIFO || own < 0 || own >= CPU_SETSIZE || !sched_file_readable()) {
		errno = ENOTSUP;
		return NULL;
	}
	struct holders *h = aligned_alloc(64, sizeof *h);
	if (!h)
		return NULL;
	memset(h, 0, sizeof *h);
	h->hold_max_ns = hold_max_ns;
	if (sched_getaffinity(0, sizeof h->saved_mask, &h->saved_mask) < 0) {
		free(h);
		return NULL;
	}
	for (int c = 0; c < CPU_SETSIZE; c++)
		h->cpu_slot[c] = -1;
	size_t want = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		want += c != own && CPU_ISSET(c, &h->saved_mask);
	if (want == 0) {
		free(h);
		errno = ENOTSUP;
		return NULL;
	}
	h->slots = aligned_alloc(64, want * sizeof *h->slots);
	if (!h->slots) {
		free(h);
		return NULL;
	}
	memset(h->slots, 0, want * sizeof *h->slots);
	cpu_set_t mine;
	CPU_ZERO(&mine);
	CPU_SET(own, &mine);
	if (sched_setaffinity(0, sizeof mine, &mine) < 0) {
		int e = errno;
		free(h->slots);
		free(h);
		errno = e;
		return NULL;
	}
	for (int c = 0; c < CPU_SETSIZE && h->n < want; c++) {
		if (c == own || !CPU_ISSET(c, &h->saved_mask))
			continue;
		struct holder *me = &h->slots[h->n];
		me->h = h;
		me->cpu = c;
		me->sched_fd = -1;
		if (start_holder(me, priority) != 0)
			continue;  /* (an offline CPU, or refused: that CPU is not held) */
		h->cpu_slot[c] = (int)h->n++;
	}
	if (h->n == 0) {
		holders_stop(h);
		errno = ENOTSUP;
		return NULL;
	}
	return h;
}

void holders_arm(struct holders *h, uint64_t tick_ns)
{
	if (!h || !tick_ns)
		return;
	atomic_store(&h->next_ns, tick_ns);
	atomic_fetch_add(&h->seq, 1);
	if (atomic_load(&h->sleepers))
		futex_wake_all(&h->seq);
}

size_t holders_count(const struct holders *h)
{
	return h ? h->n : 0;
}

size_t holders_wait(struct holders *h, uint64_t tick_ns, uint64_t deadline_ns)
{
	if (!h)
		return 0;
	size_t left = h->n;
	for (size_t i = 0; i < h->n; i++)
		h->slots[i].seen_tick = 0;
	for (;;) {
		for (size_t i = 0; i < h->n; i++) {
			struct holder *me = &h->slots[i];
			if (me->seen_tick != tick_ns && atomic_load(&me->arrived) == tick_ns) {
				me->seen_tick = tick_ns;
				me->seen_exec_start = atomic_load(&me->exec_start);
				left--;
			}
		}
		if (!left || clock_monotonic_ns() >= deadline_ns)
			return h->n - left;
		__builtin_ia32_pause();
	}
}

uint64_t holders_taken_at(const struct holders *h, int cpu, uint64_t *tick_rq)
{
	*tick_rq = 0;
	if (!h || cpu < 0 || cpu >= CPU_SETSIZE || h->cpu_slot[cpu] < 0)
		return 0;
	struct holder *me = &h->slots[h->cpu_slot[cpu]];
	if (!me->seen_tick || atomic_load(&me->gave_up) == me->seen_tick)
		return 0;
	*tick_rq = atomic_load(&me->tick_rq);
	return me->seen_exec_start;
}

void holders_release(struct holders *h, uint64_t tick_ns)
{
	if (h && atomic_load_explicit(&h->released, memory_order_relaxed) < tick_ns)
		atomic_store_explicit(&h->released, tick_ns, memory_order_release);
}

void holders_stop(struct holders *h)
{
	if (!h)
		return;
	atomic_store(&h->stop, true);
	atomic_fetch_add(&h->seq, 1);
	futex_wake_all(&h->seq);
	for (size_t i = 0; i < h->n; i++) {
		struct holder *me = &h->slots[i];
		if (me->started)
			pthread_join(me->thread, NULL);
		if (me->sched_fd >= 0)
			close(me->sched_fd);
	}
	sched_setaffinity(0, sizeof h->saved_mask, &h->saved_mask);
	free(h->slots);
	free(h);
}
