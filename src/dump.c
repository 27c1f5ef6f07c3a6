/* dump: see dump.h.
 *
 * Order of work, so the target pauses only for the copy:
 *   1. attach, read the mappings, make the unwinder, allocate one snapshot per
 *      thread, read each thread's name, state and wchan from /proc;
 *   2. stop every thread together, copy registers and stack windows, resume
 *      them all, detach (this is the pause, measured and reported with -v);
 *   3. unwind the copies, symbolize, print.
 * The syscall a thread is blocked in comes from the copied registers: a
 * thread interrupted inside a blocking syscall shows the syscall number in
 * orig_rax and a kernel restart code in rax, exactly at the snapshot. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "address.h"
#include "clock.h"
#include "dump.h"
#include "error.h"
#include "procmaps.h"
#include "symbolize.h"
#include "target.h"
#include "unwind.h"

#define DUMP_MAX_FRAMES_PER_ADDRESS 64
/* Rounds of target_stop_threads for threads slow to stop, and the wait
 * between two rounds. */
#define DUMP_STOP_ROUNDS 20
#define DUMP_STOP_RETRY_NS 2000000L

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
	bool stopped;                /* captured in the snapshot */
	const char *capture_step;    /* what failed after the stop, or NULL */
	int capture_errno;
	long syscall;                /* from the registers; -1 if not in one */
	struct unwind_snapshot snap;
};

/* ---- escaping ----------------------------------------------------------------- */

size_t text_escape(const char *in, char *out, size_t outsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t need = 0, len = 0;
	bool full = false;

	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		char esc[4];
		size_t n;
		if (*p == '\\') {
			esc[0] = esc[1] = '\\';
			n = 2;
		} else if (*p >= 0x20 && *p < 0x7f) {
			esc[0] = (char)*p;
			n = 1;
		} else {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[*p >> 4];
			esc[3] = hex[*p & 0xf];
			n = 4;
		}
		need += n;
		if (!full && len + n < outsz) {
			memcpy(out + len, esc, n);
			len += n;
		} else {
			full = true;  /* never a partial escape */
		}
	}
	if (outsz > 0)
		out[len] = '\0';
	return need;
}

/* Print S escaped, growing *buf as needed (one buffer for the whole dump). */
static void put_escaped(FILE *out, const char *s, char **buf, size_t *bufsz)
{
	size_t need = text_escape(s, *buf, *bufsz);
	if (need >= *bufsz) {
		char *nb = realloc(*buf, need + 1);
		if (!nb) {
			fputs(*buf, out);  /* the truncated, still safe, text */
			return;
		}
		*buf = nb;
		*bufsz = need + 1;
		text_escape(s, *buf, *bufsz);
	}
	fputs(*buf, out);
}

/* ---- /proc ---------------------------------------------------------------------- */

static ssize_t read_task_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t bufsz)
{
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, bufsz - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* Name and state from "tid (comm) S ...": the comm runs from the first '('
 * to the last ')', it may hold anything. */
static void read_thread_facts(pid_t pid, struct dump_thread *th)
{
	char buf[1024];

	th->state = '?';
	snprintf(th->name, sizeof th->name, "?");
	if (read_task_file(pid, th->tid, "stat", buf, sizeof buf) > 0) {
		const char *open_paren = strchr(buf, '(');
		const char *close_paren = strrchr(buf, ')');
		if (open_paren && close_paren && close_paren > open_paren && close_paren[1] == ' ') {
			size_t len = (size_t)(close_paren - open_paren - 1);
			if (len >= sizeof th->name)
				len = sizeof th->name - 1;
			memcpy(th->name, open_paren + 1, len);
			th->name[len] = '\0';
			if (close_paren[2])
				th->state = close_paren[2];
		}
	}
	if (read_task_file(pid, th->tid, "wchan", th->wchan, sizeof th->wchan) <= 0 ||
	    strcmp(th->wchan, "0") == 0)
		th->wchan[0] = '\0';
	th->proc_syscall = -1;
	if (read_task_file(pid, th->tid, "syscall", buf, sizeof buf) > 0 && buf[0] >= '0' &&
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

/* x86_64 numbers of the syscalls a thread is commonly found blocked in. */
static const char *syscall_name(long nr)
{
	switch (nr) {
	case 0: return "read";
	case 1: return "write";
	case 7: return "poll";
	case 17: return "pread64";
	case 18: return "pwrite64";
	case 19: return "readv";
	case 20: return "writev";
	case 23: return "select";
	case 34: return "pause";
	case 35: return "nanosleep";
	case 40: return "sendfile";
	case 42: return "connect";
	case 43: return "accept";
	case 44: return "sendto";
	case 45: return "recvfrom";
	case 46: return "sendmsg";
	case 47: return "recvmsg";
	case 61: return "wait4";
	case 65: return "semop";
	case 68: return "msgsnd";
	case 69: return "msgrcv";
	case 72: return "fcntl";
	case 73: return "flock";
	case 74: return "fsync";
	case 75: return "fdatasync";
	case 128: return "rt_sigtimedwait";
	case 130: return "rt_sigsuspend";
	case 202: return "futex";
	case 208: return "io_getevents";
	case 219: return "restart_syscall";
	case 220: return "semtimedop";
	case 230: return "clock_nanosleep";
	case 232: return "epoll_wait";
	case 243: return "mq_timedreceive";
	case 247: return "waitid";
	case 270: return "pselect6";
	case 271: return "ppoll";
	case 275: return "splice";
	case 281: return "epoll_pwait";
	case 288: return "accept4";
	case 299: return "recvmmsg";
	case 307: return "sendmmsg";
	case 426: return "io_uring_enter";
	case 441: return "epoll_pwait2";
	default: return NULL;
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
	struct symbolizer *sym;
	char *buf;                   /* escape buffer */
	size_t bufsz;
	struct symbol_frame frames[DUMP_MAX_FRAMES_PER_ADDRESS];
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
	long nr = th->stopped ? th->syscall : (th->state != 'R' ? th->proc_syscall : -1);
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
	fputc('\n', out);
}

/* Print the frames of one stored address; returns the next frame number. */
static unsigned print_address(struct printer *pr, uint64_t addr, unsigned frame_no)
{
	FILE *out = pr->out;
	size_t n = pr->sym ? symbolizer_lookup(pr->sym, addr, pr->frames, DUMP_MAX_FRAMES_PER_ADDRESS) : 0;
	struct symbol_module mod;
	bool have_mod = pr->sym && symbolizer_module(pr->sym, addr, &mod) && mod.path && mod.path[0];

	if (n == 0) {
		fprintf(out, "#%-2u 0x%016llx in ??", frame_no++, (unsigned long long)addr_value(addr));
		if (have_mod) {
			fputs(" [", out);
			put_escaped(out, mod.path, &pr->buf, &pr->bufsz);
			fputc(']', out);
		}
		fputc('\n', out);
		return frame_no;
	}
	for (size_t i = 0; i < n; i++) {
		const struct symbol_frame *f = &pr->frames[i];
		fprintf(out, "#%-2u 0x%016llx in ", frame_no++, (unsigned long long)addr_value(addr));
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
		if (have_mod) {
			fputs(" [", out);
			put_escaped(out, mod.path, &pr->buf, &pr->bufsz);
			fputc(']', out);
		}
		fputc('\n', out);
	}
	return frame_no;
}

static void print_thread(struct printer *pr, struct unwinder *u, pid_t pid,
			 const struct dump_thread *th, uint64_t *addrs, unsigned max_depth)
{
	print_thread_header(pr, pid, th);
	if (!th->stopped) {
		if (th->capture_step)
			fprintf(pr->out, "    (no stack: cannot %s the thread: %s)\n", th->capture_step,
				strerror(th->capture_errno));
		else
			fputs("    (no stack: the thread did not stop; it may have exited)\n", pr->out);
		return;
	}
	unsigned depth = 0;
	enum unwind_result r = unwind_stack(u, &th->snap, addrs, max_depth, &depth);
	unsigned frame_no = 0;
	for (unsigned i = 0; i < depth; i++)
		frame_no = print_address(pr, addrs[i], frame_no);
	if (r != UNWIND_OK)
		fprintf(pr->out, "    (unwinding stopped: %s)\n", unwind_result_name(r));
}

static void print_process_line(FILE *out, pid_t pid, size_t nthreads, char **buf, size_t *bufsz)
{
	char cmd[4096];
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	size_t n = 0;
	FILE *f = fopen(path, "re");
	if (f) {
		n = fread(cmd, 1, sizeof cmd - 1, f);
		fclose(f);
	}
	while (n > 0 && cmd[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	cmd[n] = '\0';
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
			if (!stopped[i] && thread_alive(t, tids[i]))
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

int dump_run(const struct options *o, FILE *out)
{
	struct target *t = NULL;
	struct target_config cfg = { .mode = TARGET_SEIZE_PERSISTENT, .verbose = o->verbose };
	int status = target_attach(&t, o->pid, &cfg);
	if (status != 0)
		return status;
	error_set_cleanup(detach_on_die, t);

	struct procmaps *pm = NULL;
	struct unwinder *u = NULL;
	struct dump_thread *threads = NULL;
	pid_t *tids = NULL, *retry_tids = NULL;
	bool *stopped = NULL, *retry_stopped = NULL;
	uint64_t *addrs = NULL;
	size_t n = 0, ninit = 0;
	struct printer pr = { .out = out };

	/* 1. everything the snapshot needs, before the stop */
	pm = procmaps_new(o->pid);
	if (pm && procmaps_refresh(pm) < 0 && o->verbose)
		warn_errno("cannot read the mappings of pid %d", (int)o->pid);
	if (pm)
		procmaps_load_perf_map(pm);
	u = pm ? unwind_new(pm, o->max_depth) : NULL;
	const struct target_thread *tl;
	n = target_threads(t, &tl);
	threads = calloc(n ? n : 1, sizeof *threads);
	tids = calloc(n ? n : 1, sizeof *tids);
	stopped = calloc(n ? n : 1, sizeof *stopped);
	retry_tids = calloc(n ? n : 1, sizeof *retry_tids);
	retry_stopped = calloc(n ? n : 1, sizeof *retry_stopped);
	addrs = calloc(o->max_depth ? o->max_depth : 1, sizeof *addrs);
	if (!pm || !u || !threads || !tids || !stopped || !retry_tids || !retry_stopped || !addrs) {
		warn_errno("cannot set up the snapshot");
		status = CS_EXIT_SYSTEM;
		goto detach;
	}
	for (size_t i = 0; i < n; i++)
		threads[i].tid = tl[i].tid;
	qsort(threads, n, sizeof *threads, compare_threads);
	for (ninit = 0; ninit < n; ninit++) {
		if (unwind_snapshot_init(&threads[ninit].snap, o->stack_window) < 0) {
			warn_errno("cannot set up the snapshot");
			status = CS_EXIT_SYSTEM;
			goto detach;
		}
	}
	for (size_t i = 0; i < n; i++) {
		tids[i] = threads[i].tid;
		threads[i].syscall = -1;
		read_thread_facts(o->pid, &threads[i]);
	}

	/* 2. the pause: stop all, copy, resume all, detach */
	uint64_t t0 = clock_monotonic_ns();
	unsigned rounds = 0;
	size_t nstopped = stop_all_threads(t, tids, n, stopped, retry_tids, retry_stopped, &rounds);
	for (size_t i = 0; i < n; i++) {
		if (!stopped[i])
			continue;
		struct user_regs_struct regs;
		if (target_get_regs(t, tids[i], &regs) < 0) {
			threads[i].capture_errno = errno;
			threads[i].capture_step = "read the registers of";
		} else if (unwind_capture(u, tids[i], &regs, &threads[i].snap) < 0) {
			threads[i].capture_errno = errno;
			threads[i].capture_step = "copy the stack of";
		} else {
			threads[i].stopped = true;
			threads[i].syscall = syscall_from_regs(&regs);
		}
	}
	target_resume_threads(t, tids, n, stopped);
	uint64_t t1 = clock_monotonic_ns();
	target_detach(t);
	uint64_t t2 = clock_monotonic_ns();
	error_set_cleanup(NULL, NULL);
	for (size_t i = 0; i < n && o->verbose; i++) {
		if (threads[i].capture_step) {
			errno = threads[i].capture_errno;
			warn_errno("cannot %s thread %d", threads[i].capture_step, (int)tids[i]);
		} else if (!stopped[i]) {
			warn("thread %d did not stop (it may have exited)", (int)tids[i]);
		}
	}
	if (o->verbose)
		warn("paused %zu of %zu threads of pid %d together for %.3f ms (%u stop round%s, "
		     "detached after %.3f ms)", nstopped, n, (int)o->pid, (double)(t1 - t0) / 1e6,
		     rounds, rounds == 1 ? "" : "s", (double)(t2 - t0) / 1e6);

	/* 3. unwind the copies, symbolize, print (the target runs again) */
	if (procmaps_refresh(pm) < 0 && o->verbose)
		warn_errno("cannot reread the mappings of pid %d", (int)o->pid);
	struct symbolize_options so = { .no_inline = o->no_inline, .addresses_only = o->addresses };
	pr.sym = symbolizer_new(pm, &so);
	if (!pr.sym)
		warn_errno("cannot symbolize pid %d; printing addresses", (int)o->pid);
	pr.bufsz = 256;
	pr.buf = malloc(pr.bufsz);
	if (!pr.buf) {
		warn_errno("cannot print the snapshot");
		status = CS_EXIT_SYSTEM;
		goto out;
	}
	print_process_line(out, o->pid, n, &pr.buf, &pr.bufsz);
	for (size_t i = 0; i < n; i++) {
		print_thread(&pr, u, o->pid, &threads[i], addrs, o->max_depth);
		if (i + 1 < n)
			fputc('\n', out);
	}
	if (fflush(out) != 0 || ferror(out)) {
		warn_errno("cannot write the snapshot");
		status = CS_EXIT_OUTPUT;
	}
	goto out;

detach:
	target_detach(t);
	error_set_cleanup(NULL, NULL);
out:
	if (pr.sym)
		symbolizer_free(pr.sym);
	free(pr.buf);
	for (size_t i = 0; i < ninit; i++)
		unwind_snapshot_fini(&threads[i].snap);
	free(threads);
	free(tids);
	free(stopped);
	free(retry_tids);
	free(retry_stopped);
	free(addrs);
	if (u)
		unwind_free(u);
	if (pm)
		procmaps_free(pm);
	target_free(t);
	return status;
}
