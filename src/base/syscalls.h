/* syscalls: the x86-64 system calls csampler knows by number, one row each
 * (strace's syscallent.h is the model): its name; whether a thread in it
 * waits, and on what (always, its descriptor, a timeout argument that is
 * not zero, futex's wait operations); what it returns when its timeout
 * runs out; and whether running it again after a bare EINTR is what the
 * kernel's own restart would do. blocked (the waits), target_restart (the
 * restarts) and dump (the names) read it; a new call is one row here.
 * Pure, unit-tested. */
#ifndef CSAMPLER_SYSCALLS_H
#define CSAMPLER_SYSCALLS_H
#include <stdbool.h>
#include <stdint.h>

enum syscall_wait {
	SYSCALL_RUNS = 0,        /* does not wait (or csampler does not say) */
	SYSCALL_WAITS,           /* waits, or gave its CPU away, or ptrace holds
	                          * the caller until csampler lets it go */
	SYSCALL_WAITS_ON_FD,     /* waits where its descriptor (rdi) does: a pipe
	                          * or socket, not a file (read, readv) */
	SYSCALL_WAITS_IF_R10,    /* waits unless its timeout (r10) is 0 */
	SYSCALL_WAITS_IF_RDX,    /* waits unless its timeout (rdx) is 0 */
	SYSCALL_WAITS_FUTEX,     /* futex: its wait operations (rsi & 127) */
};

enum syscall_timeout {
	SYSCALL_TIMEOUT_NONE = 0,  /* no return value says a timeout ran out */
	SYSCALL_TIMEOUT_ZERO,      /* returns 0 */
	SYSCALL_TIMEOUT_ETIMEDOUT, /* returns -ETIMEDOUT */
	SYSCALL_TIMEOUT_EAGAIN,    /* returns -EAGAIN */
};

struct syscall_info {
	const char *name;
	enum syscall_wait wait;
	enum syscall_timeout timeout;
	bool restartable;        /* a bare EINTR means it did nothing: run again */
};

/* The row of system call NR, or NULL for a number csampler knows nothing
 * of (any long: negative and huge ones too). */
const struct syscall_info *syscall_info(long nr);
/* Its name, or NULL. */
const char *syscall_name(long nr);
/* What the call returns when its timeout ran out (INT64_MIN: nothing
 * tells). */
int64_t syscall_timeout_ret(enum syscall_timeout t);
/* Whether futex operation OP (rsi) waits. */
bool syscall_futex_op_waits(unsigned long long op);

#endif
