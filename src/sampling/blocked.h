/* blocked: read a thread that is blocked in the kernel, without stopping it.
 *
 * /proc/PID/task/TID/syscall tells, for a thread that is not running, the
 * system call it is blocked in (or -1 when it is blocked outside one: a
 * group-stop, a page fault) with its arguments, and its user stack pointer
 * and program counter; for a running thread it says "running". While a
 * thread stays blocked its user stack cannot change, so a copy of the stack
 * from sp taken between two reads that agree (the same syscall line, and
 * schedstat unchanged: the thread did not run in between) is as good as a
 * ptrace stop, and nothing is sent to the thread: a blocked call is never
 * interrupted (no EINTR). The copy knows sp and pc only (unwind.h).
 *
 * blocked_parse is pure (fuzzed); blocked_capture reads /proc and the
 * thread's memory. blocked_call_waits tells the system calls a thread waits
 * in from those it computes in. */
#ifndef CSAMPLER_BLOCKED_H
#define CSAMPLER_BLOCKED_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/user.h>
#include <sys/types.h>

#include "unwind.h"

struct blocked_syscall {
	long nr;                 /* the system call (x86_64 number), -1 outside one */
	uint64_t args[6];        /* its arguments (0 outside one) */
	uint64_t sp, pc;         /* user stack pointer and program counter */
};

enum blocked_state {
	BLOCKED_MALFORMED = -1,  /* not a syscall line */
	BLOCKED_RUNNING = 0,     /* the thread runs (or is runnable) */
	BLOCKED_IN_KERNEL = 1,   /* blocked: OUT is filled */
};

/* Parse the text of /proc/TID/syscall (NUL-terminated, any content). */
enum blocked_state blocked_parse(const char *text, struct blocked_syscall *out);

/* Capture thread TID if it is blocked: SYSCALL_FD and SCHEDSTAT_FD are its
 * open /proc/.../syscall and schedstat (read with pread at 0). Returns
 * BLOCKED_IN_KERNEL with SNAP (unwind_capture_sp_pc) and OUT filled;
 * BLOCKED_RUNNING if it runs, or ran during each of a few tries; or
 * BLOCKED_MALFORMED if its files cannot be read (it is gone). */
enum blocked_state blocked_capture(struct unwinder *u, pid_t tid, int syscall_fd, int schedstat_fd,
				   struct unwind_snapshot *snap, struct blocked_syscall *out);

/* Whether system call NR (x86_64 numbers) with registers R, made by a
 * thread of process PID, waits for something or was held by ptrace: its
 * exit is where a thread wakes up or is let go, not where it computes.
 * *TIMEOUT_RET: the return value that says the wait ran out (INT64_MIN:
 * none tells). A wait with a zero timeout (a poll) never sleeps. read and
 * readv wait only on pipes, sockets and the like (PID's descriptor, in
 * /proc): on files they are work, and a thread in one was running. */
bool blocked_call_waits(pid_t pid, long nr, const struct user_regs_struct *r, int64_t *timeout_ret);

#endif
