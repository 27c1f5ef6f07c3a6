/* blocked: see blocked.h. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocked.h"
#include "procfs.h"

/* Tries of blocked_capture when the thread ran between its two reads. */
#define CAPTURE_TRIES 3

/* One number of the line: decimal or 0x-hex, as the kernel prints them.
 * Advances *P past it; false if there is none. */
static bool parse_number(const char **p, uint64_t *out, bool allow_minus)
{
	const char *s = *p;
	while (*s == ' ')
		s++;
	bool minus = allow_minus && *s == '-';
	if (minus)
		s++;
	if (*s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || (*end != ' ' && *end != '\n' && *end != '\0'))
		return false;
	if (minus && v > (unsigned long long)INT64_MAX)
		return false;
	*out = minus ? (uint64_t)-(int64_t)v : v;
	*p = end;
	return true;
}

enum blocked_state blocked_parse(const char *text, struct blocked_syscall *out)
{
	uint64_t v[9];
	size_t n = 0;
	const char *p = text;

	memset(out, 0, sizeof *out);
	if (strncmp(text, "running", 7) == 0)
		return BLOCKED_RUNNING;
	if (!parse_number(&p, &v[n], true))
		return BLOCKED_MALFORMED;
	n++;
	while (n < 9 && parse_number(&p, &v[n], false))
		n++;
	while (*p == ' ')
		p++;
	if (*p != '\n' && *p != '\0')
		return BLOCKED_MALFORMED;
	int64_t nr = (int64_t)v[0];
	if (nr == -1 && n == 3) {
		out->nr = -1;
		out->sp = v[1];
		out->pc = v[2];
		return BLOCKED_IN_KERNEL;
	}
	if (nr < 0 || nr > 4095 || n != 9)
		return BLOCKED_MALFORMED;
	out->nr = (long)nr;
	memcpy(out->args, &v[1], sizeof out->args);
	out->sp = v[7];
	out->pc = v[8];
	return BLOCKED_IN_KERNEL;
}

enum blocked_state blocked_capture(struct unwinder *u, pid_t tid, int syscall_fd, int schedstat_fd,
				   struct unwind_snapshot *snap, struct blocked_syscall *out)
{
	char line[2][256], sched[2][128];

	for (int try = 0; try < CAPTURE_TRIES; try++) {
		if (procfs_pread_text(schedstat_fd, sched[0], sizeof sched[0]) <= 0 ||
		    procfs_pread_text(syscall_fd, line[0], sizeof line[0]) <= 0)
			return BLOCKED_MALFORMED;
		enum blocked_state st = blocked_parse(line[0], out);
		if (st != BLOCKED_IN_KERNEL)
			return st;
		if (unwind_capture_sp_pc(u, tid, out->sp, out->pc, snap) < 0)
			return BLOCKED_MALFORMED;
		/* The copy holds if the thread stayed where it was: the same line
		 * and no run time, arrival or wait for a CPU since. */
		if (procfs_pread_text(syscall_fd, line[1], sizeof line[1]) <= 0 ||
		    procfs_pread_text(schedstat_fd, sched[1], sizeof sched[1]) <= 0)
			return BLOCKED_MALFORMED;
		if (strcmp(line[0], line[1]) == 0 && strcmp(sched[0], sched[1]) == 0)
			return BLOCKED_IN_KERNEL;
	}
	return BLOCKED_RUNNING;
}

bool blocked_call_waits(pid_t pid, long nr, const struct user_regs_struct *r, int64_t *timeout_ret)
{
	*timeout_ret = INT64_MIN;
	switch (nr) {
	case 0:   /* read */
	case 19:  /* readv */
		return procfs_fd_waits(pid, (long)r->rdi);
	case 35:  /* nanosleep */
	case 230: /* clock_nanosleep */
		*timeout_ret = 0;
		return true;
	case 202: /* futex: the wait operations */
		switch (r->rsi & 127) {
		case 0: case 6: case 9: case 11: case 13:
			*timeout_ret = -110; /* ETIMEDOUT */
			return true;
		}
		return false;
	case 232: /* epoll_wait */
	case 281: /* epoll_pwait */
		*timeout_ret = 0;
		return (long)r->r10 != 0;
	case 441: /* epoll_pwait2 */
		*timeout_ret = 0;
		return true;
	case 7:   /* poll */
		*timeout_ret = 0;
		return (long)r->rdx != 0;
	case 23:  /* select */
	case 270: /* pselect6 */
	case 271: /* ppoll */
	case 208: /* io_getevents */
	case 333: /* io_pgetevents */
		*timeout_ret = 0;
		return true;
	case 128: /* rt_sigtimedwait */
	case 220: /* semtimedop */
		*timeout_ret = -11; /* EAGAIN */
		return true;
	case 243: /* mq_timedreceive */
		*timeout_ret = -110;
		return true;
	case 24:  /* sched_yield: gave its CPU away */
	case 34:  /* pause */
	case 130: /* rt_sigsuspend */
	case 61:  /* wait4 */
	case 247: /* waitid */
	case 65:  /* semop */
	case 69:  /* msgsnd */
	case 70:  /* msgrcv */
	case 43:  /* accept */
	case 288: /* accept4 */
	case 45:  /* recvfrom */
	case 47:  /* recvmsg */
	case 299: /* recvmmsg */
	case 42:  /* connect */
	case 56:  /* clone: ptrace holds the parent at its clone event, and */
	case 57:  /* fork    the new thread or process at its first stop, */
	case 58:  /* vfork   until csampler lets them go */
	case 435: /* clone3 */
		return true;
	default:
		return false;
	}
}
