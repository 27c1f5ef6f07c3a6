/* blocked: see blocked.h. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocked.h"
#include "procfs.h"
#include "syscalls.h"

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
	const struct syscall_info *c = syscall_info(nr);
	if (!c)
		return false;
	switch (c->wait) {
	case SYSCALL_RUNS:
		return false;
	case SYSCALL_WAITS_ON_FD:
		return procfs_fd_waits(pid, (long)r->rdi);
	case SYSCALL_WAITS_FUTEX:
		if (!syscall_futex_op_waits(r->rsi))
			return false;
		break;
	case SYSCALL_WAITS_IF_R10:
	case SYSCALL_WAITS_IF_RDX:
	case SYSCALL_WAITS:
		break;
	}
	*timeout_ret = syscall_timeout_ret(c->timeout);
	if (c->wait == SYSCALL_WAITS_IF_R10)
		return (long)r->r10 != 0;
	if (c->wait == SYSCALL_WAITS_IF_RDX)
		return (long)r->rdx != 0;
	return true;
}
