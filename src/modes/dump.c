/* dump: see dump.h.
 *
 * Order of work, so the target pauses only for the copy, and no blocked
 * thread is ever interrupted:
 *   1. in the tracer thread (tracer.h): attach, read the mappings, make the
 *      unwinder, allocate one snapshot per thread, read each thread's name,
 *      state and wchan from /proc;
 *   2. copy every thread that is blocked in the kernel where it waits, from
 *      /proc/TID/syscall's sp and pc and its stack (blocked.h): no stop;
 *   3. stop the others (running) together, copy registers and stack
 *      windows, resume them (this is the pause, reported with -v); the
 *      tracer thread returns, which lets the process go;
 *   4. in the caller: unwind the copies, symbolize, print.
 * A blocked thread's syscall is the one /proc names; a stopped thread's comes
 * from its registers (orig_rax, with a kernel restart code in rax). */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "address.h"
#include "blocked.h"
#include "clock.h"
#include "dump.h"
#include "escape.h"
#include "ksyms.h"
#include "procfs.h"
#include "error.h"
#include "procmaps.h"
#include "runtimes.h"
#include "session.h"
#include "symcache.h"
#include "syscalls.h"
#include "target.h"
#include "tracer.h"
#include "unwind.h"

/* Rounds of target_stop_threads for threads slow to stop, and the wait
 * between two rounds. */
#define DUMP_STOP_ROUNDS 20
#define DUMP_STOP_RETRY_NS 2000000L
/* the most of a blocked thread's /proc/TID/stack read (the kernel prints at
 * most 64 frames) */
#define DUMP_KERNEL_STACK_MAX 8192
/* how long a thread is waited for in all, as said when it did not stop */
#define DUMP_STOP_WAIT_S \
	((double)DUMP_STOP_ROUNDS * (TARGET_STOP_TIMEOUT_NS + DUMP_STOP_RETRY_NS) / 1e9)

/* The kernel's restart codes (include/linux/errno.h), seen in rax when a
 * blocking syscall was interrupted by our stop. */
#define ERESTARTSYS            512
#define ERESTART_RESTARTBLOCK  516

struct dump_thread {
	pid_t tid;
	char name[64];               /* raw comm; escaped when printed */
	char state;                  /* from stat before the stop, '?' if unknown */
	char wchan[64];              /* "" if none */
	long proc_syscall;           /* from /proc before the stop; -1 none */
	bool stopped;                /* stopped for the snapshot */
	bool unstoppable;            /* not to be stopped (target_thread_stoppable) */
	bool blocked;                /* read in place, blocked in the kernel */
	bool captured;               /* registers (or sp/pc) and stack copied */
	const char *capture_step;    /* what failed after the stop, or NULL */
	int capture_errno;
	long syscall;                /* from the registers; -1 if not in one */
	char *kernel_stack;          /* blocked: /proc/TID/stack's text, or NULL */
	struct unwind_snapshot snap;
};

/* How a runtime's frame (address.h) is shown where an address would be:
 * "(python)", into LABEL[LEN]. */
static const char *runtime_label(uint64_t addr, char *label, size_t len)
{
	const struct runtime_ops *ops = runtime_ops_of(addr_runtime_kind(addr));
	snprintf(label, len, "(%s)", ops ? ops->name : "runtime");
	return label;
}

/* Print S escaped, growing *buf as needed (one buffer for the whole dump). */
static void put_escaped(FILE *out, const char *s, char **buf, size_t *bufsz)
{
	size_t need = escape_terminal(s, *buf, *bufsz);
	if (need >= *bufsz) {
		char *nb = realloc(*buf, need + 1);
		if (!nb) {
			fputs(*buf, out);  /* the truncated, still safe, text */
			return;
		}
		*buf = nb;
		*bufsz = need + 1;
		escape_terminal(s, *buf, *bufsz);
	}
	fputs(*buf, out);
}

/* ---- /proc ---------------------------------------------------------------------- */

/* Name and state from "tid (comm) S ...": the comm runs from the first '('
 * to the last ')', it may hold anything. */
static void read_thread_facts(pid_t pid, struct dump_thread *th)
{
	char buf[1024];

	th->state = '?';
	snprintf(th->name, sizeof th->name, "?");
	struct procfs_stat st;
	if (procfs_read_file(pid, th->tid, "stat", buf, sizeof buf) > 0 && procfs_parse_stat(buf, &st)) {
		snprintf(th->name, sizeof th->name, "%s", st.comm);
		th->state = st.state;
	}
	if (procfs_read_file(pid, th->tid, "wchan", th->wchan, sizeof th->wchan) <= 0 ||
	    strcmp(th->wchan, "0") == 0)
		th->wchan[0] = '\0';
	th->proc_syscall = -1;
	if (procfs_read_file(pid, th->tid, "syscall", buf, sizeof buf) > 0 && buf[0] >= '0' &&
	    buf[0] <= '9')
		th->proc_syscall = strtol(buf, NULL, 10);
}

static const char *state_name(char state)
{
	switch (state) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk sleep";
	case 'T': return "stopped";
	case 't': return "tracing stop";
	case 'Z': return "zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	case 'P': return "parked";
	case 'W': return "waking";
	default:  return "unknown";
	}
}


/* The syscall the registers show the thread blocked in, or -1. */
static long syscall_from_regs(const struct user_regs_struct *regs)
{
	long nr = (long)regs->orig_rax;
	long ret = (long)regs->rax;
	if (nr < 0 || ret < -ERESTART_RESTARTBLOCK || ret > -ERESTARTSYS)
		return -1;
	return nr;
}

static int compare_threads(const void *a, const void *b)
{
	const struct dump_thread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* ---- printing ------------------------------------------------------------------- */

struct printer {
	FILE *out;
	struct symcache *symbols;
	pid_t pid;
	char *buf;                   /* escape buffer */
	size_t bufsz;
};

static void print_thread_header(struct printer *pr, pid_t pid, const struct dump_thread *th)
{
	FILE *out = pr->out;
	fputs("Thread ", out);
	put_escaped(out, th->name, &pr->buf, &pr->bufsz);
	fprintf(out, " (tid %d%s) state %c (%s)", (int)th->tid, th->tid == pid ? ", main" : "",
		th->state, state_name(th->state));
	/* In the snapshot the registers tell; for a thread we could not stop,
	 * /proc read just before is the best there is. */
	long nr = th->captured ? th->syscall : (th->state != 'R' ? th->proc_syscall : -1);
	if (nr >= 0) {
		const char *name = syscall_name(nr);
		if (name)
			fprintf(out, ", in syscall %s", name);
		else
			fprintf(out, ", in syscall %ld", nr);
	}
	if (th->wchan[0] && th->state != 'R') {
		fputs(", wchan ", out);
		put_escaped(out, th->wchan, &pr->buf, &pr->bufsz);
	}
	if (th->blocked)
		fputs(", read in place", out);
	fputc('\n', out);
}

/* Print the frames of one stored address; returns the next frame number. */
static unsigned print_address(struct printer *pr, uint64_t addr, unsigned frame_no)
{
	FILE *out = pr->out;
	struct symcache_result r;
	bool found = symcache_lookup(pr->symbols, pr->pid, addr, &r) == 0 && r.found;
	const struct symbol_module *mod = &r.module;
	bool have_mod = found && r.has_module && mod->path && mod->path[0];
	char label[40];

	if (!found) {   /* (and so no module known either) */
		fprintf(out, "#%-2u 0x%016llx in ??\n", frame_no++,
			(unsigned long long)addr_value(addr));
		return frame_no;
	}
	for (size_t i = 0; i < r.n; i++) {
		const struct symbol_frame *f = &r.frames[i];
		if (addr_is_runtime(addr))   /* (no address: a runtime's frame) */
			fprintf(out, "#%-2u %18s in ", frame_no++,
				runtime_label(addr, label, sizeof label));
		else
			fprintf(out, "#%-2u 0x%016llx in ", frame_no++,
				(unsigned long long)addr_value(addr));
		put_escaped(out, f->function ? f->function : "??", &pr->buf, &pr->bufsz);
		if (f->file) {
			fputs(" (", out);
			put_escaped(out, f->file, &pr->buf, &pr->bufsz);
			if (f->line > 0)
				fprintf(out, ":%d", f->line);
			fputc(')', out);
		}
		if (f->inlined)
			fputs(" [inlined]", out);
		if (f->jit)
			fputs(" [jit]", out);
		if (have_mod && addr_is_kernel(addr)) {   /* ([kernel], [ext4]) */
			fputc(' ', out);
			put_escaped(out, strcmp(mod->path, KSYMS_KERNEL_MAPPING) ? mod->path : "[kernel]",
				    &pr->buf, &pr->bufsz);
		} else if (have_mod && !addr_is_runtime(addr)) {
			fputs(" [", out);
			put_escaped(out, mod->path, &pr->buf, &pr->bufsz);
			fputc(']', out);
		}
		fputc('\n', out);
	}
	return frame_no;
}

/* runtime_put_fn: S escaped for the terminal (CTX the printer). */
static void put_runtime_text(void *ctx, FILE *out, const char *s)
{
	struct printer *pr = ctx;
	put_escaped(out, s, &pr->buf, &pr->bufsz);
}

/* The frames of each runtime among ADDRS[DEPTH] as the runtime prints a
 * traceback (runtime.h: a Python stack, the most recent call last). */
static void print_runtimes(struct printer *pr, const uint64_t *addrs, unsigned depth)
{
	struct runtime_frame *f = depth ? malloc(depth * sizeof *f) : NULL;
	if (!f)
		return;
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		const struct runtime_ops *ops = runtime_ops_of(k);
		if (!ops || !ops->traceback)
			continue;
		size_t n = 0;
		for (unsigned i = depth; i-- > 0;) {   /* (outermost first) */
			struct symcache_result r;
			if (!addr_is_runtime(addrs[i]) || addr_runtime_kind(addrs[i]) != k ||
			    symcache_lookup(pr->symbols, pr->pid, addrs[i], &r) < 0 || r.n == 0)
				continue;
			f[n++] = (struct runtime_frame){ .function = r.frames[0].function,
							 .file = r.frames[0].file,
							 .line = r.frames[0].line };
		}
		ops->traceback(pr->out, f, n, put_runtime_text, pr);
	}
	free(f);
}

static void print_thread(struct printer *pr, struct unwinder *u, pid_t pid,
			 const struct dump_thread *th, uint64_t *addrs, unsigned max_depth)
{
	print_thread_header(pr, pid, th);
	if (!th->captured) {
		if (th->capture_step)
			fprintf(pr->out, "    (no stack: cannot %s the thread: %s)\n", th->capture_step,
				strerror(th->capture_errno));
		else if (th->unstoppable)
			fputs("    (no stack: not stopped, it has child processes: a child's SIGCHLD "
			      "that came while it was stopped would wake another thread, which could "
			      "then see EINTR)\n", pr->out);
		else if (th->state == 'R')
			fprintf(pr->out, "    (no stack: the thread did not stop within %.2f s: runnable, "
				"it got no CPU in that time (a busy machine, or a low priority); ask "
				"again)\n", DUMP_STOP_WAIT_S);
		else
			fputs("    (no stack: the thread did not stop; it may have exited)\n", pr->out);
		return;
	}
	unsigned frame_no = 0;
	/* a blocked thread's kernel frames above its user ones */
	size_t nk = th->kernel_stack ? symcache_kernel_stack(pr->symbols, th->kernel_stack,
							     strlen(th->kernel_stack), addrs,
							     max_depth / 2) : 0;
	for (size_t i = 0; i < nk; i++)
		frame_no = print_address(pr, addrs[i], frame_no);
	unsigned depth = 0;
	enum unwind_result r = unwind_stack(u, &th->snap, addrs, max_depth, &depth);
	for (unsigned i = 0; i < depth; i++)
		frame_no = print_address(pr, addrs[i], frame_no);
	if (r != UNWIND_OK)
		fprintf(pr->out, "    (unwinding stopped: %s)\n", unwind_result_name(r));
	print_runtimes(pr, addrs, depth);
}

static void print_process_line(FILE *out, pid_t pid, size_t nthreads, char **buf, size_t *bufsz)
{
	char cmd[4096];
	size_t n = procfs_read_cmdline(pid, cmd, sizeof cmd);
	fprintf(out, "Process %d: %zu thread%s", (int)pid, nthreads, nthreads == 1 ? "" : "s");
	if (n) {
		fputs(": ", out);
		put_escaped(out, cmd, buf, bufsz);
	}
	fputs("\n\n", out);
}

/* ---- the dump ------------------------------------------------------------------- */

/* Whether TID is still a live thread of the target. */
static bool thread_alive(struct target *t, pid_t tid)
{
	const struct target_thread *tl;
	size_t n = target_threads(t, &tl);
	for (size_t i = 0; i < n; i++)
		if (tl[i].tid == tid)
			return true;
	return false;
}

/* Stop every thread of TIDS together. target_stop_threads waits a sampling
 * tick's worth for each thread; on a loaded machine a runnable thread may not
 * get a CPU that fast, so the missing ones are asked again while the others
 * stay held, up to DUMP_STOP_ROUNDS rounds. Returns the number stopped. */
static size_t stop_all_threads(struct target *t, const pid_t *tids, size_t n, bool *stopped,
			       pid_t *retry_tids, bool *retry_stopped, unsigned *rounds)
{
	size_t count = target_stop_threads(t, tids, n, stopped);
	*rounds = 1;
	while (count < n && *rounds < DUMP_STOP_ROUNDS) {
		size_t m = 0;
		for (size_t i = 0; i < n; i++)
			if (!stopped[i] && thread_alive(t, tids[i]) &&
			    target_thread_stoppable(t, tids[i]))
				retry_tids[m++] = tids[i];
		if (m == 0)
			break;
		/* Let a late stop from the previous round arrive, to be handled. */
		nanosleep(&(struct timespec){ .tv_nsec = DUMP_STOP_RETRY_NS }, NULL);
		(*rounds)++;
		target_stop_threads(t, retry_tids, m, retry_stopped);
		for (size_t k = 0, i = 0; k < m; k++) {
			if (!retry_stopped[k])
				continue;
			while (i < n && tids[i] != retry_tids[k])
				i++;
			if (i == n)
				break;
			stopped[i] = true;
			count++;
		}
	}
	return count;
}

static void detach_on_die(void *arg)
{
	target_detach(arg);
}

/* Everything the snapshot (tracer thread) hands to the printing (caller). */
struct dump {
	const struct dump_config *cfg;
	struct procmaps *pm;
	struct unwinder *u;
	struct dump_thread *threads;
	size_t n, ninit;
	int status;                  /* CS_EXIT_* of the snapshot */
	bool attached;
};

/* Capture thread TH without stopping it if it is blocked. True if done. */
static bool capture_blocked(struct dump *d, struct dump_thread *th)
{
	pid_t pid = d->cfg->pid;
	int sfd = procfs_open_task_file(-1, pid, th->tid, "syscall");
	int cfd = procfs_open_task_file(-1, pid, th->tid, "schedstat");
	struct blocked_syscall bs;
	enum blocked_state st = BLOCKED_MALFORMED;
	if (sfd >= 0 && cfd >= 0)
		st = blocked_capture(d->u, th->tid, sfd, cfd, &th->snap, &bs);
	if (sfd >= 0)
		close(sfd);
	if (cfd >= 0)
		close(cfd);
	if (st != BLOCKED_IN_KERNEL)
		return false;
	th->captured = true;
	th->blocked = true;
	th->syscall = bs.nr;
	/* where it waits in the kernel (root only: CAP_SYS_ADMIN) */
	char text[DUMP_KERNEL_STACK_MAX];
	if (d->cfg->kernel && procfs_read_file(pid, th->tid, "stack", text, sizeof text) > 0)
		th->kernel_stack = strdup(text);
	return true;
}

/* The tracer thread's part: attach; copy every thread, the blocked ones
 * from /proc without a stop, the others stopped together; let go. */
/* Step 1: everything the snapshot needs before the stop (mappings,
 * unwinder, a slot and a stack window per thread of T, sorted by tid, with
 * what /proc says of each). 0, or -1 (said). */
static int snapshot_prepare(struct dump *d, struct target *t)
{
	const struct dump_config *o = d->cfg;
	d->pm = procmaps_new(o->pid);
	if (d->pm && procmaps_refresh(d->pm) < 0 && o->verbose)
		warn_errno("cannot read the mappings of pid %d", (int)o->pid);
	if (d->pm)
		procmaps_load_perf_map(d->pm);
	d->u = d->pm ? unwind_new(d->pm, o->max_depth, o->python) : NULL;
	const struct target_thread *tl;
	size_t n = target_threads(t, &tl);
	d->threads = calloc(n ? n : 1, sizeof *d->threads);
	if (!d->pm || !d->u || !d->threads) {
		warn_errno("cannot set up the snapshot");
		return -1;
	}
	d->n = n;
	for (size_t i = 0; i < n; i++)
		d->threads[i].tid = tl[i].tid;
	qsort(d->threads, n, sizeof *d->threads, compare_threads);
	for (d->ninit = 0; d->ninit < n; d->ninit++) {
		if (unwind_snapshot_init(&d->threads[d->ninit].snap, o->stack_window) < 0) {
			warn_errno("cannot set up the snapshot");
			return -1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		d->threads[i].syscall = -1;
		read_thread_facts(o->pid, &d->threads[i]);
	}
	return 0;
}

/* Copy the stopped thread TID (registers and stack) into TH. */
static void capture_stopped(struct dump *d, struct target *t, pid_t tid, struct dump_thread *th)
{
	struct user_regs_struct regs;
	if (target_get_regs(t, tid, &regs) < 0) {
		th->capture_errno = errno;
		th->capture_step = "read the registers of";
	} else if (unwind_capture(d->u, tid, &regs, &th->snap) < 0) {
		th->capture_errno = errno;
		th->capture_step = "copy the stack of";
	} else {
		th->captured = true;
		th->syscall = syscall_from_regs(&regs);
	}
}

/* Steps 2 and 3: blocked threads read where they wait, never interrupted;
 * the running ones stopped together, copied and resumed. 0, or -1 (said). */
static int snapshot_take(struct dump *d, struct target *t)
{
	size_t n = d->n, nstop = 0, nblocked = 0;
	pid_t *tids = calloc(n ? n : 1, sizeof *tids), *retry_tids = calloc(n ? n : 1, sizeof *retry_tids);
	bool *stopped = calloc(n ? n : 1, sizeof *stopped);
	bool *retry_stopped = calloc(n ? n : 1, sizeof *retry_stopped);
	int ret = -1;
	if (!tids || !stopped || !retry_tids || !retry_stopped) {
		warn_errno("cannot set up the snapshot");
		goto out;
	}
	uint64_t t0 = clock_monotonic_ns();
	for (size_t i = 0; i < n; i++) {
		if (capture_blocked(d, &d->threads[i]))
			nblocked++;
		else
			tids[nstop++] = d->threads[i].tid;
	}
	uint64_t t1 = clock_monotonic_ns();
	unsigned rounds = 0;
	size_t nstopped = nstop ? stop_all_threads(t, tids, nstop, stopped, retry_tids,
						   retry_stopped, &rounds) : 0;
	for (size_t k = 0, i = 0; k < nstop; k++) {
		while (d->threads[i].tid != tids[k])
			i++;
		d->threads[i].stopped = stopped[k];
		d->threads[i].unstoppable = !stopped[k] && !target_thread_stoppable(t, tids[k]);
		if (stopped[k])
			capture_stopped(d, t, tids[k], &d->threads[i]);
	}
	target_resume_threads(t, tids, nstop, stopped);
	uint64_t t2 = clock_monotonic_ns();
	if (d->cfg->verbose)
		warn("read %zu blocked threads of pid %d in place (%.3f ms); paused %zu of %zu others "
		     "together for %.3f ms (%u stop round%s)", nblocked, (int)d->cfg->pid,
		     (double)(t1 - t0) / 1e6, nstopped, nstop, (double)(t2 - t1) / 1e6, rounds,
		     rounds == 1 ? "" : "s");
	ret = 0;
out:
	free(tids);
	free(stopped);
	free(retry_tids);
	free(retry_stopped);
	return ret;
}

static int dump_snapshot(void *arg)
{
	struct dump *d = arg;
	const struct dump_config *o = d->cfg;
	struct target *t = NULL;
	struct target_config cfg = { .mode = TARGET_SEIZE_PERSISTENT, .verbose = o->verbose };

	d->status = session_exit_status(target_attach(&t, o->pid, &cfg));
	if (d->status != 0)
		return d->status;
	d->attached = true;
	error_set_cleanup(detach_on_die, t);
	if (snapshot_prepare(d, t) < 0 || snapshot_take(d, t) < 0)
		d->status = CS_EXIT_SYSTEM;
	target_detach(t);
	error_set_cleanup(NULL, NULL);
	target_free(t);
	return d->status;
}

int dump_run(const struct dump_config *o, FILE *out)
{
	struct dump d = { .cfg = o };
	uint64_t *addrs = NULL;
	struct printer pr = { .out = out, .pid = o->pid };

	int status = tracer_run(dump_snapshot, &d);
	if (status < 0) {
		warn_errno("cannot start the tracer thread");
		status = CS_EXIT_SYSTEM;
	}
	if (status != 0)
		goto out;
	for (size_t i = 0; i < d.n && o->verbose; i++) {
		const struct dump_thread *th = &d.threads[i];
		if (th->capture_step) {
			errno = th->capture_errno;
			warn_errno("cannot %s thread %d", th->capture_step, (int)th->tid);
		} else if (!th->captured) {
			warn("thread %d did not stop (it may have exited)", (int)th->tid);
		}
	}

	/* 4. unwind the copies, symbolize, print (the target runs again) */
	if (procmaps_refresh(d.pm) < 0 && o->verbose)
		warn_errno("cannot reread the mappings of pid %d", (int)o->pid);
	struct symbolize_options so = { .no_inline = o->no_inline, .addresses_only = o->addresses };
	pr.symbols = symcache_new(&so, 1);
	pr.bufsz = 256;
	pr.buf = malloc(pr.bufsz);
	addrs = calloc(o->max_depth ? o->max_depth : 1, sizeof *addrs);
	if (!pr.symbols || symcache_add_process(pr.symbols, d.pm) < 0 || !pr.buf || !addrs) {
		warn_errno("cannot print the snapshot");
		status = CS_EXIT_SYSTEM;
		goto out;
	}
	print_process_line(out, o->pid, d.n, &pr.buf, &pr.bufsz);
	for (size_t i = 0; i < d.n; i++) {
		print_thread(&pr, d.u, o->pid, &d.threads[i], addrs, o->max_depth);
		if (i + 1 < d.n)
			fputc('\n', out);
	}
	if (fflush(out) != 0 || ferror(out)) {
		warn_errno("cannot write the snapshot");
		status = CS_EXIT_OUTPUT;
	}
out:
	symcache_free(pr.symbols);
	free(pr.buf);
	for (size_t i = 0; i < d.ninit; i++) {
		unwind_snapshot_fini(&d.threads[i].snap);
		free(d.threads[i].kernel_stack);
	}
	free(d.threads);
	free(addrs);
	if (d.u)
		unwind_free(d.u);
	if (d.pm)
		procmaps_free(d.pm);
	return status;
}

int dump_tree(const struct dump_config *o, FILE *out)
{
	int status = dump_run(o, out);
	if (status != 0 || !o->children)
		return status;
	pid_t kids[DUMP_TREE_MAX];
	size_t n = procfs_descendants(o->pid, kids, DUMP_TREE_MAX);
	if (n == DUMP_TREE_MAX)
		warn("process %d has more descendants than the %d dumped", (int)o->pid, DUMP_TREE_MAX);
	for (size_t i = 0; i < n; i++) {
		if (kids[i] == getpid() || kill(kids[i], 0) < 0)
			continue;   /* (csampler itself, or gone since the scan) */
		struct dump_config child = *o;
		child.pid = kids[i];
		fputc('\n', out);
		int st = dump_run(&child, out);
		if (st != 0 && st != CS_EXIT_NO_PROCESS && status == 0)
			status = st;
	}
	return status;
}
