/* syscalls: see syscalls.h. */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include "syscalls.h"

/* Restartable: the call returns a bare EINTR (not a restart code the kernel
 * acts on) when a ptrace interrupt wakes it, and has done nothing when it
 * does, so running it again is what the kernel's own restart would do:
 *   - the transfers (read, write, their vector and positioned forms,
 *     splice, tee, vmsplice, sendfile) end with EINTR only when nothing
 *     was moved (else they return the count);
 *   - io_uring_enter returns the number it submitted when it submitted
 *     any, so its EINTR means none was: the call again waits as before;
 *   - connect: a blocking connect interrupted goes on in the background,
 *     and the same connect again waits for it (the kernel's
 *     inet_stream_connect): 0 once it completes (also when it completed
 *     meanwhile), the socket's error when it failed; only when the
 *     socket's send timeout (SO_SNDTIMEO) runs out again does it end with
 *     EALREADY where the first call would have said EINPROGRESS (both:
 *     not connected yet).
 * Left out: close (the descriptor is gone anyway).
 * Waits: sched_yield gave its CPU away; clone, fork, vfork and clone3 are
 * held by ptrace at their event, the new thread or process at its first
 * stop, until csampler lets them go. */
#define W SYSCALL_WAITS
#define T0 SYSCALL_TIMEOUT_ZERO
#define TT SYSCALL_TIMEOUT_ETIMEDOUT
#define TA SYSCALL_TIMEOUT_EAGAIN
static const struct syscall_info table[] = {
	[0] = { "read", SYSCALL_WAITS_ON_FD, 0, true },
	[1] = { "write", 0, 0, true },
	[7] = { "poll", SYSCALL_WAITS_IF_RDX, T0, false },
	[17] = { "pread64", 0, 0, true },
	[18] = { "pwrite64", 0, 0, true },
	[19] = { "readv", SYSCALL_WAITS_ON_FD, 0, true },
	[20] = { "writev", 0, 0, true },
	[23] = { "select", W, T0, false },
	[24] = { "sched_yield", W, 0, false },
	[34] = { "pause", W, 0, false },
	[35] = { "nanosleep", W, T0, false },
	[40] = { "sendfile", 0, 0, true },
	[42] = { "connect", W, 0, true },
	[43] = { "accept", W, 0, true },
	[44] = { "sendto", 0, 0, true },
	[45] = { "recvfrom", W, 0, true },
	[46] = { "sendmsg", 0, 0, true },
	[47] = { "recvmsg", W, 0, true },
	[56] = { "clone", W, 0, false },
	[57] = { "fork", W, 0, false },
	[58] = { "vfork", W, 0, false },
	[61] = { "wait4", W, 0, false },
	[65] = { "semop", W, 0, true },
	[69] = { "msgsnd", W, 0, true },
	[70] = { "msgrcv", W, 0, true },
	[72] = { "fcntl", 0, 0, false },
	[73] = { "flock", 0, 0, false },
	[74] = { "fsync", 0, 0, false },
	[75] = { "fdatasync", 0, 0, false },
	[128] = { "rt_sigtimedwait", W, TA, true },
	[130] = { "rt_sigsuspend", W, 0, false },
	[202] = { "futex", SYSCALL_WAITS_FUTEX, TT, false },
	[208] = { "io_getevents", W, T0, true },
	[219] = { "restart_syscall", 0, 0, false },
	[220] = { "semtimedop", W, TA, true },
	[230] = { "clock_nanosleep", W, T0, false },
	[232] = { "epoll_wait", SYSCALL_WAITS_IF_R10, T0, true },
	[242] = { "mq_timedsend", 0, 0, true },
	[243] = { "mq_timedreceive", W, TT, true },
	[247] = { "waitid", W, 0, false },
	[270] = { "pselect6", W, T0, false },
	[271] = { "ppoll", W, T0, false },
	[275] = { "splice", 0, 0, true },
	[276] = { "tee", 0, 0, true },
	[278] = { "vmsplice", 0, 0, true },
	[281] = { "epoll_pwait", SYSCALL_WAITS_IF_R10, T0, true },
	[288] = { "accept4", W, 0, true },
	[295] = { "preadv", 0, 0, true },
	[296] = { "pwritev", 0, 0, true },
	[299] = { "recvmmsg", W, 0, true },
	[307] = { "sendmmsg", 0, 0, true },
	[327] = { "preadv2", 0, 0, true },
	[328] = { "pwritev2", 0, 0, true },
	[333] = { "io_pgetevents", W, T0, true },
	[426] = { "io_uring_enter", 0, 0, true },
	[435] = { "clone3", W, 0, false },
	[441] = { "epoll_pwait2", W, T0, true },
};
#undef W
#undef T0
#undef TT
#undef TA

const struct syscall_info *syscall_info(long nr)
{
	if (nr < 0 || (unsigned long)nr >= sizeof table / sizeof table[0] || !table[nr].name)
		return NULL;
	return &table[nr];
}

const char *syscall_name(long nr)
{
	const struct syscall_info *i = syscall_info(nr);
	return i ? i->name : NULL;
}

int64_t syscall_timeout_ret(enum syscall_timeout t)
{
	switch (t) {
	case SYSCALL_TIMEOUT_ZERO: return 0;
	case SYSCALL_TIMEOUT_ETIMEDOUT: return -ETIMEDOUT;
	case SYSCALL_TIMEOUT_EAGAIN: return -EAGAIN;
	case SYSCALL_TIMEOUT_NONE: break;
	}
	return INT64_MIN;
}

bool syscall_futex_op_waits(unsigned long long op)
{
	/* FUTEX_WAIT, FUTEX_LOCK_PI, FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI,
	 * FUTEX_LOCK_PI2 (the private flag and the clock flag masked off) */
	switch (op & 127) {
	case 0: case 6: case 9: case 11: case 13:
		return true;
	default:
		return false;
	}
}
