/* perf_sampler: see perf_sampler.h.
 *
 * One software cpu-clock event per CPU (pid -1), sampling every 1/rate s of
 * that CPU's time whatever runs there, each with its own ring. A BPF
 * program of the perf_event kind runs at each period and lets the sample be
 * written only when the task on the CPU belongs to a followed process (a
 * hash map of their ids, kept by the target events), so other processes
 * pay the timer tick but no copy.
 *
 * Why not one event per thread (perf record -p's way, which needs no
 * privilege at kernel.perf_event_paranoid <= 1): each thread's event counts
 * its own periods from its start, so a thread that runs less than one
 * period is never sampled and every thread loses the part of a period it
 * ends with; short-lived threads vanish from the profile. It also takes a
 * descriptor per thread and CPU. A CPU's clock has no such phase.
 *
 * The records are read by perf_record (pure, fuzzed). */
#include "config.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "perf_record.h"
#include "perf_sampler.h"
#include "procfs.h"
#include "tidmap.h"
#include "unwind.h"

#if !defined(__x86_64__)
#error "perf_sampler reads x86-64 user registers"
#endif

/* Data bytes of a CPU's ring: 4 MiB holds about 64 samples of a 64 KiB
 * window, 64 ms of one CPU at 999 Hz between two reads. */
#define RING_DATA_BYTES (4u << 20)
/* the largest stack copy a record can carry (its size field is 16 bits) */
#define MAX_STACK_USER 65528u
/* processes the filter can follow at once */
#define FILTER_MAX_PROCESSES 65536u

/* Names change (pthread_setname_np): a sampled thread's name is read again
 * after this long. */
#define RENAME_CHECK_NS 1000000000u

struct ring {
	int fd;                         /* the CPU's event, -1: CPU offline */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	size_t size;                    /* data bytes, a power of two */
	size_t map_len;
};

/* A thread sampled at least once: what perf keeps of it, by its slot in
 * the recorder's registry (which holds its pid, tid, process and key). */
struct thread_row {
	uint64_t named_ns;              /* when comm was read */
	uint64_t runtime_ns;            /* schedstat's run time at the last read */
	bool have_runtime;
};

struct perf_sampler {
	struct recorder *rec;
	struct perf_sampler_config cfg;
	struct perf_event_attr attr;
	unsigned ncpus;
	struct ring *rings;
	int filter_map;                 /* BPF hash: followed process id -> 1 */
	struct thread_row *rows;        /* by the recorder's slot */
	size_t rows_cap;                /* as many as the recorder has slots */
	bool warned_filter;
	uint8_t *scratch;               /* a record that wraps (PERF_RECORD_MAX) */
	struct unwind_snapshot snap;
	struct perf_sampler_stats stats;
};

static int perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

static int bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(SYS_bpf, cmd, a, sizeof *a);
}

/* ---- the filter ------------------------------------------------------------------------ */

static int filter_map_new(void)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = sizeof(uint32_t);
	a.value_size = sizeof(uint32_t);
	a.max_entries = FILTER_MAX_PROCESSES;
	a.map_flags = BPF_F_NO_PREALLOC;
	return bpf(BPF_MAP_CREATE, &a);
}

/* Follow process PID (or stop: FOLLOW false). */
static void filter_set(struct perf_sampler *ps, pid_t pid, bool follow)
{
	uint32_t key = (uint32_t)pid, one = 1;
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_fd = (uint32_t)ps->filter_map;
	a.key = (uint64_t)(uintptr_t)&key;
	if (!follow) {
		(void)bpf(BPF_MAP_DELETE_ELEM, &a);
		return;
	}
	a.value = (uint64_t)(uintptr_t)&one;
	a.flags = BPF_ANY;
	if (bpf(BPF_MAP_UPDATE_ELEM, &a) < 0 && !ps->warned_filter) {
		ps->warned_filter = true;
		warn_errno("cannot follow process %d with perf events: it is not sampled", (int)pid);
	}
}

/* r0 = the tgid of the task on the CPU; the sample is written (1) only if
 * it is in MAP. Ids are those of the initial pid namespace, where we run. */
static int filter_load(int map)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_pid_tgid },
		{ .code = BPF_ALU64 | BPF_RSH | BPF_K, .dst_reg = BPF_REG_0, .imm = 32 },
		{ .code = BPF_STX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_0,
		  .off = -4 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_0, .off = 2, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insn_cnt = sizeof insns / sizeof insns[0];
	a.insns = (uint64_t)(uintptr_t)insns;
	a.license = (uint64_t)(uintptr_t)"MIT";
	return bpf(BPF_PROG_LOAD, &a);
}

/* Whether we run in the initial pid namespace, whose ids the filter sees. */
static bool in_initial_pid_ns(void)
{
	struct stat st;
	return stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == 0xEFFFFFFCu;
}

bool perf_sampler_permitted(void)
{
	if (!in_initial_pid_ns())
		return false;
	int map = filter_map_new();
	if (map < 0)
		return false;
	int prog = filter_load(map);
	close(map);
	if (prog < 0)
		return false;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof attr, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 10000000, .disabled = 1,
	};
	int cpu = sched_getcpu();
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu < 0 ? 0 : cpu, -1, PERF_FLAG_FD_CLOEXEC);
	bool ok = fd >= 0 && ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) == 0;
	if (fd >= 0)
		close(fd);
	close(prog);
	return ok;
}

/* ---- rings -------------------------------------------------------------------------- */

/* CPU's event, filtered by PROG, and its ring. 0, -1 (the event or the
 * filter refused, errno) or -2 (mmap, errno). */
static int ring_open(struct perf_sampler *ps, struct ring *r, unsigned cpu, size_t page, int prog)
{
	r->fd = perf_event_open(&ps->attr, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -1;
	int ret = -1;
	if (ioctl(r->fd, PERF_EVENT_IOC_SET_BPF, prog) < 0)
		goto fail;
	r->size = RING_DATA_BYTES;
	r->map_len = page + r->size;
	void *m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED) {
		ret = -2;
		goto fail;
	}
	r->meta = m;
	r->data = (uint8_t *)m + page;
	return 0;
fail:;
	int err = errno;
	close(r->fd);
	r->fd = -1;
	errno = err;
	return ret;
}

static void rings_close(struct perf_sampler *ps)
{
	for (unsigned c = 0; c < ps->ncpus; c++) {
		struct ring *r = &ps->rings[c];
		if (r->meta)
			munmap(r->meta, r->map_len);
		if (r->fd >= 0)
			close(r->fd);
		r->meta = NULL;
		r->fd = -1;
	}
}

/* An event and ring per online CPU. 0, or ring_open's -1 or -2 with errno.
 * A CPU without a ring would be a CPU whose samples are missing: no
 * profile rather than that one (ENODEV: an offline CPU, where nothing
 * runs). */
static int rings_open(struct perf_sampler *ps, size_t page, int prog)
{
	unsigned opened = 0;
	for (unsigned c = 0; c < ps->ncpus; c++) {
		int r = ring_open(ps, &ps->rings[c], c, page, prog);
		if (r == 0)
			opened++;
		else if (r == -2 || errno != ENODEV)
			return r;
	}
	if (opened)
		return 0;
	errno = ENODEV;
	return -1;
}

/* ---- threads ------------------------------------------------------------------------- */

/* The thread in ROW (pid, tid, process, key). */
static const struct recorder_followed *row_id(const struct perf_sampler *ps,
					      const struct thread_row *row)
{
	return recorder_followed(ps->rec, (uint32_t)(row - ps->rows));
}

static struct thread_row *row_find(struct perf_sampler *ps, pid_t tid)
{
	uint32_t slot = recorder_followed_slot(ps->rec, tid);
	return slot < ps->rows_cap ? &ps->rows[slot] : NULL;
}

/* A row for thread TID of P (followed in the recorder). NULL out of memory. */
static struct thread_row *row_make(struct perf_sampler *ps, struct recorder_process *p, pid_t tid)
{
	if (recorder_reserve_threads(ps->rec, 1) < 0)
		return NULL;
	size_t cap = recorder_thread_slots(ps->rec);
	if (cap > ps->rows_cap) {
		struct thread_row *rows = realloc(ps->rows, cap * sizeof *rows);
		if (!rows)
			return NULL;
		ps->rows = rows;
		ps->rows_cap = cap;
	}
	uint32_t slot = recorder_follow_thread(ps->rec, p, tid);
	if (slot == RECORDER_NO_SLOT)
		return NULL;
	ps->rows[slot] = (struct thread_row){ 0 };
	return &ps->rows[slot];
}

/* Tell the recorder the CPU ROW's thread used since the last read (its
 * schedstat run time): each thread's total in the outputs is then the
 * kernel's account of it (stackmap_key_total), as with ptrace. Read with its
 * name (once a second while it is sampled), at its exit and at the end. */
static void row_account(struct perf_sampler *ps, struct thread_row *row)
{
	char buf[128];
	struct procfs_schedstat ss;
	const struct recorder_followed *id = row_id(ps, row);
	if (procfs_read_file(id->pid, id->tid, "schedstat", buf, sizeof buf) <= 0 ||
	    !procfs_parse_schedstat(buf, &ss)) {
		/* gone: what it ran since the last read is unknown */
		if (row->have_runtime && id->key != UINT32_MAX)
			recorder_account_cpu(ps->rec, id->key, STACKMAP_CPU_UNKNOWN);
		return;
	}
	if (row->have_runtime && id->key != UINT32_MAX && ss.runtime_ns > row->runtime_ns)
		recorder_account_cpu(ps->rec, id->key, ss.runtime_ns - row->runtime_ns);
	row->runtime_ns = ss.runtime_ns;
	row->have_runtime = true;
}

static void row_release(struct perf_sampler *ps, struct thread_row *row)
{
	row_account(ps, row);
	recorder_unfollow_thread(ps->rec, (uint32_t)(row - ps->rows));
}

static void rows_of_process_release(struct perf_sampler *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->rows_cap; i++) {
		const struct recorder_followed *id = recorder_followed(ps->rec, (uint32_t)i);
		if (id->tid && id->pid == pid)
			row_release(ps, &ps->rows[i]);
	}
}

/* ROW's key, made at its first sample and again when its name changed
 * (read from /proc at most once a second). UINT32_MAX out of memory. */
static uint32_t row_key(struct perf_sampler *ps, struct thread_row *row)
{
	const struct recorder_followed *id = row_id(ps, row);
	uint64_t now = clock_monotonic_ns();
	if (id->key != UINT32_MAX && now - row->named_ns < RENAME_CHECK_NS)
		return id->key;
	row->named_ns = now;
	char comm[16];
	if (procfs_read_file(id->pid, id->tid, "comm", comm, sizeof comm) > 0)
		comm[strcspn(comm, "\n")] = '\0';
	else if (id->key == UINT32_MAX)  /* gone before its first sample was read */
		memcpy(comm, id->proc->comm, sizeof comm - 1);
	else
		return id->key;
	comm[sizeof comm - 1] = '\0';
	return recorder_name_thread(ps->rec, (uint32_t)(row - ps->rows), comm);
}

/* ROW's key as row_key, its CPU told at the same reads. */
static uint32_t row_key_accounted(struct perf_sampler *ps, struct thread_row *row)
{
	uint64_t named = row->named_ns;
	uint32_t key = row_key(ps, row);
	if (row->named_ns != named)
		row_account(ps, row);
	return key;
}

/* ---- records ----------------------------------------------------------------------------- */

/* perf's x86 register order into ptrace's layout */
static void regs_from_perf(const uint64_t *v, struct user_regs_struct *r)
{
	*r = (struct user_regs_struct){
		.rax = v[0], .rbx = v[1], .rcx = v[2], .rdx = v[3], .rsi = v[4], .rdi = v[5],
		.rbp = v[6], .rsp = v[7], .rip = v[8], .eflags = v[9], .cs = v[10], .ss = v[11],
		.r8 = v[12], .r9 = v[13], .r10 = v[14], .r11 = v[15],
		.r12 = v[16], .r13 = v[17], .r14 = v[18], .r15 = v[19],
	};
}


static void take_sample(struct perf_sampler *ps, const struct perf_sample_view *v)
{
	if (!tids_allow(ps->cfg.tids, ps->cfg.ntids, v->tid))
		return;   /* -t: another thread of the process */
	ps->stats.samples++;
	struct thread_row *row = row_find(ps, v->tid);
	if (!row) {
		/* the filter let its process through; we follow it while target does */
		struct recorder_process *proc = recorder_find_process(ps->rec, v->pid);
		row = proc && proc->alive && proc->unwinder ? row_make(ps, proc, v->tid) : NULL;
		if (!row)
			return;
	}
	uint32_t key = row_key_accounted(ps, row);
	if (key == UINT32_MAX)
		return;
	if (!v->user) {
		/* on a CPU without a user context (an exec between the old
		 * program and the new, a thread between its birth and its first
		 * instruction): its CPU, under a frame that says so */
		uint64_t none = 0;
		ps->stats.no_user_regs++;
		recorder_count(ps->rec, key, STACK_NO_USER_CONTEXT, &none, 0, 1);
		return;
	}
	struct unwind_snapshot *s = &ps->snap;
	s->tid = v->tid;
	regs_from_perf(v->regs, &s->regs);
	s->stack_start = s->regs.rsp;
	s->stack = (uint8_t *)(uintptr_t)v->stack;
	s->stack_cap = v->stack_size;
	s->stack_len = v->stack_valid;
	/* the kernel's copy stops short at the end of the stack mapping, or at
	 * the first page it cannot read without a fault (the unwinder tells
	 * which: kernel_copy) */
	s->window_cut = v->stack_valid == v->stack_size;
	s->kernel_copy = true;
	s->sp_pc_only = false;
	s->go_switch = s->go_fp = s->go_g0_alone = false;   /* (the kernel's copy: the
	                                                     * stack in use only) */
	const uint64_t *addrs;
	unsigned depth;
	uint32_t flags;
	recorder_count_snapshot(ps->rec, row_id(ps, row)->proc, key, s, 1, &addrs, &depth, &flags);
}

static void ring_drain(struct perf_sampler *ps, struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail, lost;
	const uint8_t *rec;
	size_t len;
	struct perf_sample_view v;
	while (perf_ring_next(r->data, r->size, &tail, head, ps->scratch, &rec, &len)) {
		switch (perf_record_parse(rec, len, &v, &lost)) {
		case PERF_REC_SAMPLE:
			take_sample(ps, &v);
			break;
		case PERF_REC_LOST:
			ps->stats.lost += lost;
			break;
		default:
			break;
		}
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

int perf_sampler_drain(struct perf_sampler *ps)
{
	ps->stats.drains++;
	for (unsigned c = 0; c < ps->ncpus; c++)
		if (ps->rings[c].meta)
			ring_drain(ps, &ps->rings[c]);
	return 0;
}

/* ---- public -------------------------------------------------------------------------------- */

static void say_refused(const char *what, int err, int *status)
{
	*status = CS_EXIT_SYSTEM;
	switch (err) {
	case EACCES:
	case EPERM:
		*status = CS_EXIT_PERMISSION;
		warn("--backend=perf needs root (CAP_PERFMON and CAP_BPF): the kernel refused %s; "
		     "use --backend=ptrace", what);
		break;
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
	case ENOSYS:
	case EINVAL:
		warn("this kernel cannot filter perf events with BPF (%s: %s): use --backend=ptrace",
		     what, strerror(err));
		break;
	default:
		warn("cannot make %s: %s; use --backend=ptrace", what, strerror(err));
		break;
	}
}

struct perf_sampler *perf_sampler_new(struct target *t, struct recorder *rec,
				      const struct perf_sampler_config *cfg, int *status)
{
	*status = CS_EXIT_SYSTEM;
	if (!in_initial_pid_ns()) {
		warn("--backend=perf needs csampler in the initial pid namespace (its filter sees "
		     "the kernel's process ids): run it on the host, or use --backend=ptrace");
		return NULL;
	}
	struct perf_sampler *ps = calloc(1, sizeof *ps);
	if (!ps) {
		warn_errno("cannot set up sampling");
		return NULL;
	}
	ps->rec = rec;
	ps->cfg = *cfg;
	ps->filter_map = -1;
	unsigned rate = cfg->rate ? cfg->rate : CLOCK_DEFAULT_RATE;
	size_t window = cfg->stack_window < MAX_STACK_USER ? cfg->stack_window : MAX_STACK_USER;
	ps->attr = (struct perf_event_attr){
		.type = PERF_TYPE_SOFTWARE, .size = sizeof ps->attr, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = clock_period_ns(rate),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = PERF_RECORD_REGS_MASK, .sample_stack_user = (uint32_t)(window & ~(size_t)7),
		.exclude_hv = 1, .exclude_guest = 1, .exclude_idle = 1,
	};
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	ps->ncpus = conf > 0 ? (unsigned)conf : 1;
	ps->rings = calloc(ps->ncpus, sizeof *ps->rings);
	ps->scratch = malloc(PERF_RECORD_MAX);
	if (!ps->rings || !ps->scratch) {
		warn_errno("cannot set up sampling");
		goto fail;
	}
	for (unsigned c = 0; c < ps->ncpus; c++)
		ps->rings[c].fd = -1;
	uint64_t t0 = clock_monotonic_ns();
	ps->filter_map = filter_map_new();
	if (ps->filter_map < 0) {
		say_refused("a BPF map", errno, status);
		goto fail;
	}
	int prog = filter_load(ps->filter_map);
	if (prog < 0) {
		say_refused("the BPF filter", errno, status);
		goto fail;
	}
	int r = rings_open(ps, (size_t)sysconf(_SC_PAGESIZE), prog);
	int err = errno;
	close(prog);  /* the events hold it */
	if (r == -2) {
		warn("cannot map a %u KiB perf ring buffer (%s): the locked-memory limit "
		     "(ulimit -l, kernel.perf_event_mlock_kb) is too low; run as root or use "
		     "--backend=ptrace", RING_DATA_BYTES >> 10, strerror(err));
		*status = CS_EXIT_SYSTEM;
		goto fail;
	}
	if (r < 0) {
		say_refused("a cpu-clock event on every CPU", err, status);
		goto fail;
	}
	/* the processes target holds; later ones come as events */
	const struct target_thread *tl;
	size_t n = target_threads(t, &tl);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || tl[i].pid != tl[i - 1].pid)
			perf_sampler_on_event(ps, &(struct target_event){ TARGET_EV_PROCESS_NEW,
									  tl[i].pid, tl[i].pid });
	for (size_t i = 0; i < n; i++)
		ps->stats.threads_seen += tids_allow(ps->cfg.tids, ps->cfg.ntids, tl[i].tid);
	if (cfg->verbose)
		warn("perf events: one per CPU (%u), filtered to the target, in %.1f ms", ps->ncpus,
		     (double)(clock_monotonic_ns() - t0) / 1e6);
	*status = 0;
	return ps;
fail:
	perf_sampler_free(ps);
	return NULL;
}

void perf_sampler_free(struct perf_sampler *ps)
{
	if (!ps)
		return;
	if (ps->rings)
		rings_close(ps);
	if (ps->filter_map >= 0)
		close(ps->filter_map);
	free(ps->rings);
	for (size_t i = 0; i < ps->rows_cap; i++)
		recorder_unfollow_thread(ps->rec, (uint32_t)i);
	free(ps->rows);
	free(ps->scratch);
	free(ps);
}

void perf_sampler_on_event(struct perf_sampler *ps, const struct target_event *ev)
{
	struct recorder_process *p;
	struct thread_row *row;
	switch (ev->kind) {
	case TARGET_EV_PROCESS_NEW:
		if (!recorder_find_process(ps->rec, ev->pid))
			recorder_add_process(ps->rec, ev->pid);
		filter_set(ps, ev->pid, true);
		break;
	case TARGET_EV_EXEC:
		/* the samples written before are of the old image, and its
		 * threads are gone */
		perf_sampler_drain(ps);
		rows_of_process_release(ps, ev->pid);
		p = recorder_find_process(ps->rec, ev->pid);
		if (p)
			recorder_process_exec(ps->rec, p);
		else
			recorder_add_process(ps->rec, ev->pid);
		break;
	case TARGET_EV_PROCESS_EXIT:
		perf_sampler_drain(ps);
		filter_set(ps, ev->pid, false);
		rows_of_process_release(ps, ev->pid);
		p = recorder_find_process(ps->rec, ev->pid);
		if (p)
			recorder_process_exit(ps->rec, p);
		recorder_release_gone(ps->rec);
		break;
	case TARGET_EV_THREAD_NEW:
		ps->stats.threads_seen += tids_allow(ps->cfg.tids, ps->cfg.ntids, ev->tid);
		break;
	case TARGET_EV_THREAD_EXIT:
		/* its last samples, maybe its first ones too, are in a ring: a row
		 * made for them after this would never be released */
		perf_sampler_drain(ps);
		row = row_find(ps, ev->tid);
		if (row)
			row_release(ps, row);
		break;
	}
}

void perf_sampler_close_threads(struct perf_sampler *ps)
{
	perf_sampler_drain(ps);
	rings_close(ps);
	for (size_t i = 0; i < ps->rows_cap; i++)
		if (recorder_followed(ps->rec, (uint32_t)i)->tid)
			row_account(ps, &ps->rows[i]);
}

void perf_sampler_get_stats(const struct perf_sampler *ps, struct perf_sampler_stats *out)
{
	*out = ps->stats;
}
