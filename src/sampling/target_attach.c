/* target_attach: how tracing begins (see target.h): attach to a running
 * process (the checks that name the cause of a refusal and its fix, every
 * thread seized, --children's existing descendants) or launch a program
 * (found on PATH, held at a handshake until target_start). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "clock.h"
#include "error.h"
#include "procfs.h"
#include "target_internal.h"
#include "tracer.h"

/* ---- attach ----------------------------------------------------------------------- */

/* The process of tracer thread TRACER (TracerPid is a thread), its name
 * into COMM. */
static pid_t tracer_process(pid_t tracer, char *comm, size_t size)
{
	pid_t process = tg_read_tgid(tracer);
	if (process <= 0)
		process = tracer;
	tg_read_comm(process, comm, size);
	return process;
}

/* PID is traced by thread TRACER: say by which process, and how to go on. */
static int already_traced(pid_t pid, pid_t tracer)
{
	char comm[64];
	pid_t process = tracer_process(tracer, comm, sizeof comm);
	warn("cannot profile process %d: it is already traced by process %d (%s); detach that "
	     "tracer first", (int)pid, (int)process, comm);
	return TARGET_ERR_TRACED;
}

/* Is ANC csampler itself or one of its ancestors? */

static bool is_self_or_ancestor(pid_t anc)
{
	pid_t p = getpid();
	char buf[4096];
	for (int depth = 0; depth < ANCESTRY_MAX && p > 0; depth++) {
		if (p == anc)
			return true;
		if (procfs_read_file(p, 0, "status", buf, sizeof buf) <= 0)
			return false;
		p = (pid_t)procfs_status_long(buf, "PPid", 0);
	}
	return false;
}

static bool has_cap_sys_ptrace(void)
{
	char buf[4096];
	if (!(procfs_read_file(getpid(), 0, "status", buf, sizeof buf) > 0))
		return false;
	const char *v = procfs_status_field(buf, "CapEff");
	if (!v)
		return false;
	unsigned long long caps = strtoull(v, NULL, 16);
	return (caps >> CAP_SYS_PTRACE_BIT) & 1;
}

/* Do all of uid/euid/suid (or gid/...) of the status line NAME equal ID? */
static bool ids_all_equal(const char *status, const char *name, unsigned long id)
{
	const char *v = procfs_status_field(status, name);
	if (!v)
		return false;
	for (int k = 0; k < 3; k++) {
		char *end;
		unsigned long x = strtoul(v, &end, 10);
		if (end == v || x != id)
			return false;
		v = end;
	}
	return true;
}

/* Why did PTRACE_SEIZE of PID fail with EPERM? Print one line. */
static void explain_eperm(pid_t pid)
{
	char st[4096], path[64], link[PATH_MAX];
	bool cap = has_cap_sys_ptrace();
	bool have_status = procfs_read_file(pid, 0, "status", st, sizeof st) > 0;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	/* /proc/PID/exe needs the same owner/dumpable/capability check as
	 * ptrace itself, without the attach-only Yama rule. */
	bool basic_ok = readlink(path, link, sizeof link) >= 0 || errno == ENOENT;

	if (!basic_ok && have_status && !cap &&
	    (!ids_all_equal(st, "Uid", (unsigned long)getuid()) ||
	     !ids_all_equal(st, "Gid", (unsigned long)getgid()))) {
		long uid = procfs_status_long(st, "Uid", -1);
		warn("cannot trace process %d: it belongs to uid %ld and csampler runs as uid %ld "
		     "without CAP_SYS_PTRACE; run csampler as that user or as root",
		     (int)pid, uid, (long)getuid());
		return;
	}
	if (!basic_ok && !cap) {
		warn("cannot trace process %d: it is not dumpable (set-id program or "
		     "prctl(PR_SET_DUMPABLE, 0)) and csampler lacks CAP_SYS_PTRACE; run csampler "
		     "as root with CAP_SYS_PTRACE",
		     (int)pid);
		return;
	}
	char yama[32];
	if (procfs_read("/proc/sys/kernel/yama/ptrace_scope", yama, sizeof yama) > 0) {
		int scope = atoi(yama);
		if (scope >= 3 || (scope >= 1 && !cap)) {
			warn("cannot trace process %d: kernel.yama.ptrace_scope is %d (%s); %s", (int)pid,
			     scope,
			     scope == 1 ? "only descendants may be traced" :
			     scope == 2 ? "only CAP_SYS_PTRACE may trace" : "ptrace attach is disabled",
			     scope >= 3 ? "it cannot be lowered until reboot; launch the program "
					  "under csampler instead (csampler -- PROGRAM)" :
					  "run csampler as root, launch the program under it, or "
					  "set sysctl kernel.yama.ptrace_scope=0");
			return;
		}
	}
	if (procfs_read_file(getpid(), 0, "status", st, sizeof st) > 0 &&
	    procfs_status_long(st, "Seccomp", 0) != 0) {
		warn("cannot trace process %d: csampler runs under a seccomp filter (Seccomp: %ld in "
		     "/proc/self/status) that refuses ptrace; run csampler outside that sandbox or "
		     "allow ptrace in its filter",
		     (int)pid, procfs_status_long(st, "Seccomp", 0));
		return;
	}
	warn("cannot trace process %d: operation not permitted (refused by a security module "
	     "such as SELinux or AppArmor?)", (int)pid);
}

/* The process (Tgid) thread TID belongs to, or 0 when there is no such thread. */
static pid_t thread_group_of(pid_t tid)
{
	char st[4096];
	if (tid <= 0 || procfs_read_file(tid, 0, "status", st, sizeof st) <= 0)
		return 0;
	return (pid_t)procfs_status_long(st, "Tgid", 0);
}

int target_resolve_threads(pid_t *pid, const pid_t *tids, size_t ntids, bool quiet)
{
	if (ntids == 0) {
		pid_t tgid = thread_group_of(*pid);
		if (tgid > 0 && tgid != *pid && !quiet)
			warn("%d is a thread of process %d: sampling every thread of the process "
			     "(-t %d samples that thread alone)", (int)*pid, (int)tgid, (int)*pid);
		return 0;
	}
	for (size_t i = 0; i < ntids; i++) {
		pid_t tgid = thread_group_of(tids[i]);
		if (tgid <= 0) {
			warn("no such thread: %d", (int)tids[i]);
			return TARGET_ERR_NO_PROCESS;
		}
		if (*pid == 0)
			*pid = tgid;
		if (tgid != *pid) {
			warn("thread %d is in process %d, not %d: -t takes threads of one process "
			     "(run one csampler per process)", (int)tids[i], (int)tgid, (int)*pid);
			return TARGET_ERR_BAD_TARGET;
		}
	}
	return 0;
}

/* Check PID before touching it. Prints and returns a target_error, or 0
 * and sets *TGID (PID may name a thread: we profile its process). */
static int check_attachable(pid_t pid, pid_t *tgid)
{
	char st[4096];
	if (pid <= 0 || procfs_read_file(pid, 0, "status", st, sizeof st) <= 0) {
		warn("no such process: %d", (int)pid);
		return TARGET_ERR_NO_PROCESS;
	}
	*tgid = (pid_t)procfs_status_long(st, "Tgid", pid);
	if (*tgid != pid && procfs_read_file(*tgid, 0, "status", st, sizeof st) <= 0) {
		warn("no such process: %d", (int)pid);
		return TARGET_ERR_NO_PROCESS;
	}
	pid = *tgid;
	if (pid == getpid()) {
		warn("cannot profile process %d: it is csampler itself", (int)pid);
		return TARGET_ERR_BAD_TARGET;
	}
	if (is_self_or_ancestor(pid)) {
		warn("cannot profile process %d: it is an ancestor of csampler (stopping it could "
		     "deadlock the session)", (int)pid);
		return TARGET_ERR_BAD_TARGET;
	}
	if (tg_process_is_32bit(pid)) {
		warn("cannot profile process %d: it runs a 32-bit program; csampler unwinds 64-bit "
		     "(x86-64) programs only", (int)pid);
		return TARGET_ERR_BAD_TARGET;
	}
	char stat[1024];
	struct procfs_stat ps;
	if (procfs_read_file(pid, 0, "stat", stat, sizeof stat) > 0 && procfs_parse_stat(stat, &ps) &&
	    (ps.flags & PF_KTHREAD_FLAG)) {
		warn("cannot profile process %d: it is a kernel thread", (int)pid);
		return TARGET_ERR_BAD_TARGET;
	}
	char s = tg_state_letter(st);
	if (s == 'Z' || s == 'X') {
		/* The leader may be a zombie while other threads run on. */
		bool live = false;
		struct procfs_dir d;
		char tst[4096];
		procfs_dir_open(&d, pid);
		for (pid_t tid; !live && (tid = procfs_dir_next(&d)) > 0;) {
			if (procfs_read_file(pid, tid, "status", tst, sizeof tst) > 0) {
				char ts = tg_state_letter(tst);
				live = ts != 'Z' && ts != 'X';
			}
		}
		procfs_dir_close(&d);
		if (!live) {
			warn("cannot profile process %d: it is a zombie (it has exited and waits for its "
			     "parent to reap it)", (int)pid);
			return TARGET_ERR_BAD_TARGET;
		}
	}
	long tracer = procfs_status_long(st, "TracerPid", 0);
	if (tracer > 0)
		return already_traced(pid, (pid_t)tracer);
	return 0;
}

static struct target *target_new(const struct target_config *cfg)
{
	struct target *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->cfg = *cfg;
	t->exit_status = -1;
	t->go_fd = t->err_fd = t->stat_fd = -1;
	t->options = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC;
	/* (persistent mode: a thread that forks stops at the fork, to be let
	 * go before its child can end: target_forks.c) */
	if (cfg->children || cfg->mode == TARGET_SEIZE_PERSISTENT)
		t->options |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	if (cfg->exit_events)
		t->options |= PTRACE_O_TRACEEXIT;
	sigemptyset(&t->sigchld);
	sigaddset(&t->sigchld, SIGCHLD);
	/* Reports are waited for with sigtimedwait(SIGCHLD); the profiler
	 * reads SIGCHLD from a signalfd, which needs it blocked anyway. */
	sigprocmask(SIG_BLOCK, &t->sigchld, NULL);
	return t;
}

/* Is TID of PID exiting or gone (so a failed seize of it is no error)? */
static bool thread_exiting(pid_t pid, pid_t tid)
{
	char st[4096];
	if (procfs_read_file(pid, tid, "status", st, sizeof st) <= 0)
		return true;
	char s = tg_state_letter(st);
	return s == 'Z' || s == 'X';
}

/* Is TID already traced by us (auto-attached through a clone event we have
 * not read yet)? */
static bool traced_by_us(pid_t pid, pid_t tid)
{
	char st[4096];
	return procfs_read_file(pid, tid, "status", st, sizeof st) > 0 &&
	       procfs_status_long(st, "TracerPid", 0) == (long)gettid(); /* the tracer thread */
}

/* Seize every thread of PID, passing over /proc/PID/task until a pass finds
 * nothing new. Returns 0, or a target_error (message printed). */
/* Seize every thread of PID. A CHILD (--children, found at attach) that is
 * gone is no error to report; one csampler may not trace is said in one
 * line by the caller. With DEFERRED (--children), a thread that has
 * children, in a process of several, is left (*DEFERRED set): seized after
 * its children (target_attach). */
static int seize_all_threads(struct target *t, pid_t pid, bool child, bool *deferred)
{
	struct tg_forkers forkers;
	tg_forkers_init(t, &forkers, pid, deferred != NULL);
	for (int pass = 0; pass < ATTACH_MAX_PASSES; pass++) {
		struct procfs_dir d;
		if (!procfs_dir_open(&d, pid)) {
			if (!child)
				warn("no such process: %d (it exited while csampler attached)", (int)pid);
			return TARGET_ERR_NO_PROCESS;
		}
		bool found_new = false;
		for (pid_t tid; (tid = procfs_dir_next(&d)) > 0;) {
			if (tg_row_find(t, tid) >= 0 || tg_forkers_defer(t, &forkers, tid))
				continue;
			bool mine = tg_ptrace(PTRACE_SEIZE, tid, 0, t->options) == 0;
			int err = errno;
			if (!mine && err == EPERM && traced_by_us(pid, tid))
				mine = true;
			if (!mine) {
				/* gone, or a zombie that stays listed (a main thread
				 * that called pthread_exit): nothing new to attach */
				if (err == ESRCH || thread_exiting(pid, tid))
					continue;
				procfs_dir_close(&d);
				if (child) {
					errno = err;
					return TARGET_ERR_PERMISSION;
				}
				if (err == EPERM) {
					char st[4096];
					long tracer = procfs_read_file(pid, tid, "status", st, sizeof st) > 0 ?
						      procfs_status_long(st, "TracerPid", 0) : 0;
					if (tracer > 0)
						return already_traced(pid, (pid_t)tracer);
					explain_eperm(pid);
					return TARGET_ERR_PERMISSION;
				}
				errno = err;
				warn_errno("cannot trace thread %d of process %d", (int)tid, (int)pid);
				return TARGET_ERR_FAILED;
			}
			ssize_t i = tg_row_add(t, pid, tid, true);
			if (i < 0) {
				procfs_dir_close(&d);
				warn("out of memory while attaching");
				return TARGET_ERR_RESOURCE;
			}
			t->rows[i].clone_seen = true;
			found_new = true;
			forkers.traced_one = true;
		}
		procfs_dir_close(&d);
		if (deferred)
			*deferred |= forkers.deferred;
		found_new |= tg_forkers_end_pass(&forkers);
		if (!found_new && child)
			return 0;
		if (!found_new)
			return t->nrows ? 0 : (warn("no such process: %d", (int)pid), TARGET_ERR_NO_PROCESS);
	}
	warn("process %d creates threads faster than csampler can attach to them", (int)pid);
	return TARGET_ERR_FAILED;
}

/* Per-sample mode: whether the main thread can be seized, asked of a thread
 * that seizes it and exits (tracer.h): the kernel lets it go again without
 * stopping it, so a thread blocked in a system call is not disturbed. */
struct seize_probe {
	pid_t tid;
	int err;
};

static int seize_and_exit(void *arg)
{
	struct seize_probe *p = arg;
	p->err = tg_ptrace(PTRACE_SEIZE, p->tid, 0, PTRACE_O_TRACEEXEC) < 0 ? errno : 0;
	return 0;
}

/* Per-sample mode: check once that process (row I) can be traced, so
 * permission errors show at attach. 0 or a target_error. */
static int probe_per_sample(struct target *t, size_t i, pid_t asked)
{
	struct seize_probe probe = { .tid = t->pub[i].tid };
	if (tracer_run(seize_and_exit, &probe) < 0) {
		warn_errno("cannot start a thread to trace process %d", (int)probe.tid);
		return TARGET_ERR_RESOURCE;
	}
	errno = probe.err;
	switch (probe.err) {
	case 0:
		return 0;
	case ESRCH:
		warn("no such process: %d", (int)asked);
		return TARGET_ERR_NO_PROCESS;
	case EPERM:
		if (thread_exiting(probe.tid, probe.tid))
			return 0; /* an exited leader: its threads are probed per sample */
		explain_eperm(probe.tid);
		return TARGET_ERR_PERMISSION;
	default:
		warn_errno("cannot trace process %d", (int)probe.tid);
		return TARGET_ERR_FAILED;
	}
}

/* --children with -p: the descendants the process has already, found by
 * their parent in /proc, pass after pass until a pass finds none (new ones
 * come as fork events from the processes seized). A child that exits
 * meanwhile is skipped; one csampler may not trace is said and skipped.
 * Returns the number of child processes attached. */
static size_t attach_existing_children(struct target *t)
{
	size_t attached = 0;
	for (int pass = 0; pass < ATTACH_MAX_PASSES; pass++) {
		struct procfs_dir d;
		if (!procfs_dir_open(&d, 0))
			return attached;
		bool found = false;
		for (pid_t cpid; (cpid = procfs_dir_next(&d)) > 0;) {
			if (cpid == getpid() || tg_row_find(t, cpid) >= 0)
				continue;
			pid_t ppid = procfs_parent(cpid);
			if (ppid <= 0 || tg_row_find(t, ppid) < 0)
				continue;
			int st = seize_all_threads(t, cpid, true, NULL);
			if (st == TARGET_ERR_PERMISSION)
				warn_errno("cannot follow child process %d, which existed before "
					   "csampler attached", (int)cpid);
			if (st == 0) {
				attached++;
				found = true;
			}
		}
		procfs_dir_close(&d);
		if (!found)
			break;
	}
	return attached;
}

int target_attach(struct target **out, pid_t pid, const struct target_config *cfg)
{
	*out = NULL;
	long long start = (long long)clock_monotonic_ns();
	pid_t tgid = pid;
	int status = check_attachable(pid, &tgid);
	if (status)
		return status;
	struct target *t = target_new(cfg);
	if (!t) {
		warn("out of memory");
		return TARGET_ERR_RESOURCE;
	}
	t->main_pid = tgid;
	t->started = true;
	if (cfg->mode == TARGET_SEIZE_PER_SAMPLE) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/stat", (int)tgid);
		t->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t i = tg_row_add(t, tgid, tgid, false);
		if (i < 0 || t->stat_fd < 0) {
			target_free(t);
			warn("no such process: %d", (int)pid);
			return TARGET_ERR_NO_PROCESS;
		}
		t->rows[i].clone_seen = true;
		status = probe_per_sample(t, (size_t)i, pid);
		if (status) {
			target_free(t);
			return status;
		}
		tg_emit(t, TARGET_EV_PROCESS_NEW, tgid, tgid);
		tg_emit(t, TARGET_EV_THREAD_NEW, tgid, tgid);
		tg_rescan_tasks(t);
		*out = t;
		return 0;
	}
	/* --children: a thread that has children, in a process of several, is
	 * seized after them. Traced, it is sent the SIGCHLD of an untraced
	 * child's end at that end (the kernel drops it for an untraced one),
	 * which could wake another thread into EINTR; its children seized
	 * first, their ends come for us, to be reaped when it wakes nobody
	 * (target_reap.c). What is left: a child made between the last look
	 * for children and the seizing of its parent, that ends before the
	 * look after it. */
	bool deferred = false;
	status = seize_all_threads(t, tgid, false, cfg->children ? &deferred : NULL);
	size_t nchildren = !status && cfg->children ? attach_existing_children(t) : 0;
	if (!status && deferred) {
		status = seize_all_threads(t, tgid, false, NULL);
		nchildren += status ? 0 : attach_existing_children(t);
	}
	if (status) {
		target_free(t);
		return status;
	}
	if (cfg->verbose) {
		char kids[64] = "";
		if (cfg->children)
			snprintf(kids, sizeof kids, ", %zu child process%s", nchildren,
				 nchildren == 1 ? "" : "es");
		warn("attached to process %d (%zu thread%s%s) in %.1f ms", (int)tgid, t->nrows,
		     t->nrows == 1 ? "" : "s", kids, (double)((long long)clock_monotonic_ns() - start) / 1e6);
	}
	/* each child process's threads were added together, its first thread
	 * first (the process's own: some perhaps after its children) */
	tg_emit(t, TARGET_EV_PROCESS_NEW, tgid, tgid);
	for (size_t i = 0; i < t->nrows; i++)
		if (t->pub[i].pid != tgid && (i == 0 || t->pub[i].pid != t->pub[i - 1].pid))
			tg_emit(t, TARGET_EV_PROCESS_NEW, t->pub[i].pid, t->pub[i].pid);
	for (size_t i = 0; i < t->nrows; i++)
		tg_emit(t, TARGET_EV_THREAD_NEW, t->pub[i].pid, t->pub[i].tid);
	*out = t;
	return 0;
}

/* ---- launch ------------------------------------------------------------------------ */

/* Find NAME the way a shell does. 0 and the path in OUT, or ENOENT (not
 * found), EACCES (found, not executable), EISDIR. */
static int find_command(const char *name, char *out, size_t size)
{
	struct stat sb;
	if (!*name)
		return ENOENT;
	if (strchr(name, '/')) {
		if (strlen(name) >= size)
			return ENAMETOOLONG;
		strcpy(out, name);
		if (stat(name, &sb) < 0)
			return errno;
		if (S_ISDIR(sb.st_mode))
			return EISDIR;
		return access(name, X_OK) == 0 ? 0 : EACCES;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int result = ENOENT;
	char cand[PATH_MAX];
	for (const char *p = path;; p++) {
		const char *colon = strchr(p, ':');
		size_t dl = colon ? (size_t)(colon - p) : strlen(p);
		int n = dl ? snprintf(cand, sizeof cand, "%.*s/%s", (int)dl, p, name) :
			     snprintf(cand, sizeof cand, "%s", name);
		if (n > 0 && (size_t)n < sizeof cand && stat(cand, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
			if (access(cand, X_OK) == 0 && (size_t)n < size) {
				strcpy(out, cand);
				return 0;
			}
			if (result == ENOENT && (size_t)n < size) {
				strcpy(out, cand);
				result = EACCES;
			}
		}
		if (!colon)
			break;
		p = colon;
	}
	return result;
}

/* The launched child, between fork and exec. Only async-signal-safe calls. */
static _Noreturn void run_child(int go_fd, int err_fd, int stdout_fd, const char *path,
				char *const argv[], char **sh_argv)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	char go;
	ssize_t n;
	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(CS_EXIT_NOT_FOUND); /* csampler went away before target_start */
	close(go_fd);
	if (stdout_fd >= 0 && stdout_fd != STDOUT_FILENO && dup2(stdout_fd, STDOUT_FILENO) < 0)
		_exit(CS_EXIT_NOT_EXEC);
	execv(path, argv);
	if (errno == ENOEXEC) /* a script without #!: run it with sh, as shells do */
		execv("/bin/sh", sh_argv);
	int err = errno;
	ssize_t w = write(err_fd, &err, sizeof err);
	(void)w;
	_exit(err == ENOENT ? CS_EXIT_NOT_FOUND : CS_EXIT_NOT_EXEC);
}

/* Find the command NAME on PATH into PATH_OUT: 0, or the target_error
 * (said). */
static int launch_resolve(const char *name, char *path_out, size_t size)
{
	int err = find_command(name, path_out, size);
	if (err == ENOENT && !strchr(name, '/')) {
		warn("%s: command not found", name);
		return TARGET_ERR_NOT_FOUND;
	}
	if (err) {
		warn("%s: %s", name, strerror(err));
		return err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG ? TARGET_ERR_NOT_FOUND :
										  TARGET_ERR_NOT_EXEC;
	}
	if (tg_elf_is_32bit(path_out)) {
		warn("%s: a 32-bit program; csampler unwinds 64-bit (x86-64) programs only", name);
		return TARGET_ERR_BAD_TARGET;
	}
	return 0;
}

/* Fork the child that waits on the go pipe, then execs PATH (ARGV; SH_ARGV
 * for a script without #!) in run_child; T gets its pid and the pipes. 0,
 * or the target_error (said). */
static int launch_fork(struct target *t, const char *path, char *const argv[], char **sh_argv)
{
	int go[2], ep[2];
	if (pipe2(go, O_CLOEXEC) < 0) {
		warn_errno("pipe");
		return TARGET_ERR_RESOURCE;
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		warn_errno("pipe");
		close(go[0]);
		close(go[1]);
		return TARGET_ERR_RESOURCE;
	}
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		close(go[1]);
		close(ep[0]);
		run_child(go[0], ep[1], t->cfg.stdout_fd, path, argv, sh_argv);
	}
	close(go[0]);
	close(ep[1]);
	if (child < 0) {
		warn_errno("fork");
		close(go[1]);
		close(ep[0]);
		return TARGET_ERR_RESOURCE;
	}
	t->launched = true;
	t->main_pid = child;
	t->go_fd = go[1];
	t->err_fd = ep[0];
	return 0;
}

/* Seizing the launched CHILD failed with ERR: let it exit (it waits on the
 * pipe) and say why. The target_error. */
static int launch_refused(struct target *t, pid_t child, int err, const char *name)
{
	char status[4096];
	pid_t tracer = err == EPERM && procfs_read_file(child, 0, "status", status, sizeof status) > 0 ?
		       (pid_t)procfs_status_long(status, "TracerPid", 0) : 0;
	close(t->go_fd);
	t->go_fd = -1;
	int st;
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	errno = err;
	if (err == EPERM && tracer > 0) {
		/* csampler runs under a tracer that follows forks (strace -f, gdb
		 * with follow-fork): it has the child already */
		char comm[64];
		pid_t process = tracer_process(tracer, comm, sizeof comm);
		warn("cannot trace %s: csampler itself runs under a tracer, process %d (%s), that "
		     "follows its children; run csampler outside it (or without -f)", name,
		     (int)process, comm);
		return TARGET_ERR_TRACED;
	}
	if (err == EPERM)
		explain_eperm(child);
	else
		warn_errno("cannot trace %s", name);
	return err == EPERM ? TARGET_ERR_PERMISSION : TARGET_ERR_FAILED;
}

int target_launch(struct target **out, char *const argv[], const struct target_config *cfg)
{
	*out = NULL;
	char path[PATH_MAX];
	const char *name = argv[0] ? argv[0] : "";
	int status = launch_resolve(name, path, sizeof path);
	if (status)
		return status;
	size_t argc = 0;
	while (argv[argc])
		argc++;
	char **sh_argv = calloc(argc + 3, sizeof *sh_argv);
	struct target *t = sh_argv ? target_new(cfg) : NULL;
	if (!t || !(t->cmd_name = strdup(name))) {
		free(sh_argv);
		target_free(t);
		warn("out of memory");
		return TARGET_ERR_RESOURCE;
	}
	sh_argv[0] = (char *)"sh";
	sh_argv[1] = path;
	for (size_t k = 1; k < argc; k++)
		sh_argv[k + 1] = argv[k];
	status = launch_fork(t, path, argv, sh_argv);
	free(sh_argv);
	pid_t child = t->main_pid;
	bool persistent = cfg->mode == TARGET_SEIZE_PERSISTENT;
	if (!status && persistent && tg_ptrace(PTRACE_SEIZE, child, 0, t->options) < 0)
		status = launch_refused(t, child, errno, name);
	ssize_t i = status ? -1 : tg_row_add(t, child, child, persistent);
	if (!status && i < 0) {
		warn("out of memory");
		status = TARGET_ERR_RESOURCE;
	}
	if (status) {
		target_free(t);
		return status;
	}
	t->rows[i].clone_seen = true;
	tg_emit(t, TARGET_EV_PROCESS_NEW, child, child);
	tg_emit(t, TARGET_EV_THREAD_NEW, child, child);
	*out = t;
	return 0;
}

int target_start(struct target *t)
{
	if (!t->launched || t->started)
		return 0;
	t->started = true;
	char go = 'g';
	ssize_t w;
	do
		w = write(t->go_fd, &go, 1);
	while (w < 0 && errno == EINTR);
	close(t->go_fd);
	t->go_fd = -1;
	if (w != 1) {
		warn_errno("cannot start %s", t->cmd_name);
		return -1;
	}
	/* Wait for execve (the error pipe closes on success), servicing the
	 * child's ptrace stops meanwhile so it never waits for us. */
	long long deadline = (long long)clock_monotonic_ns() + START_TIMEOUT_NS;
	int err = 0;
	while ((long long)clock_monotonic_ns() < deadline) {
		struct pollfd pfd = { .fd = t->err_fd, .events = POLLIN };
		int r = poll(&pfd, 1, 10);
		target_poll(t);
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		ssize_t n = read(t->err_fd, &err, sizeof err);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof err)
			err = 0;
		break;
	}
	close(t->err_fd);
	t->err_fd = -1;
	if (err) {
		warn("%s: %s", t->cmd_name, strerror(err));
		return 0; /* the child exits 126/127; target_exit_status tells */
	}
	return 0;
}
