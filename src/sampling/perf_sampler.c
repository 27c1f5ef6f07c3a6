/* perf_sampler: see perf_sampler.h. The rows of the threads it follows
 * (names, run time, clocks of their own) are perf_sampler_threads.c's,
 * where they arrive perf_sampler_arrivals.c's.
 *
 * Two clocks, one period. A software cpu-clock event per CPU (pid -1)
 * samples every 1/rate s of that CPU's time whatever runs there, each with
 * its own ring. A BPF program of the perf_event kind runs at each of its
 * periods and lets the sample be written only when the task on the CPU is
 * a thread of a followed process (a hash map of their ids, kept by the
 * target events) that has no clock of its own (a second map, of tids), so
 * other processes pay the timer tick but no copy.
 *
 * A thread sampled STACKMAP_SCALE_MIN times gets its own clocks: a
 * cpu-clock event per CPU bound to the thread (perf record -p's way), whose
 * time runs only while the thread runs there, written into that CPU's ring
 * (PERF_EVENT_IOC_SET_OUTPUT); its tid then goes into the second map and
 * the CPU's clock leaves it to them. Why both:
 *  - a CPU's clock loses the periods that end while a thread switches out
 *    to sleep (interrupts off: the tick fires once they are back on, on the
 *    task that runs next): a thread that sleeps and wakes thousands of
 *    times a second loses the CPU of its switches and wake-ups (an epoll
 *    ping-pong server: epoll_wait sampled at 6% where its own account says
 *    12% and a thread's clock 13%). A thread's clock is stopped with the
 *    thread and restarted where it left off.
 *  - a thread's clock starts a whole period at the thread's start (the
 *    kernel gives it no phase of its own), so a thread that runs less than
 *    one period is never sampled, and every one loses the part of a period
 *    it ends with: short-lived threads would vanish. A CPU's clock has a
 *    random phase for each thread, so a thread of a tenth of a period is
 *    sampled once in ten, unbiased.
 * So a thread starts on the CPUs' clocks, which place the short ones (whose
 * samples are pooled per process and scaled to the pool's CPU in schedstat:
 * stackmap_scaler_init); one that reached STACKMAP_SCALE_MIN samples is
 * long-lived, and its count is scaled to the kernel's account of its own
 * CPU, which absorbs what the hand-over and its clocks'
 * last periods leave out; its own clocks give it the split of a thread's
 * time. Opening a thread's events costs one system call per CPU, once per
 * thread that runs (a thread asleep costs nothing: 10,000 threads attach as
 * fast as 10), and a descriptor each: within the open-file limit, which
 * csampler raises to the hard one; beyond it a thread stays on the CPUs'
 * clocks, said once.
 *
 * Where a thread arrives (the switch into it, placed at the stack of its
 * switch out): perf_sampler_arrivals.c.
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
#include "perf_sampler_internal.h"
#include "procfs.h"
#include "stackmap.h"
#include "tidmap.h"
#include "unwind.h"

#if !defined(__x86_64__)
#error "perf_sampler reads x86-64 user registers"
#endif

/* the largest stack copy a record can carry (its size field is 16 bits) */
#define MAX_STACK_USER 65528u
/* processes the filter can follow at once */
#define FILTER_MAX_PROCESSES 65536u
/* threads that can have clocks of their own at once */
#define FILTER_MAX_OWN_THREADS 262144u


int ps_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

static int bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(SYS_bpf, cmd, a, sizeof *a);
}

/* ---- the filter ------------------------------------------------------------------------ */

/* A BPF hash of u32 -> u32 with room for MAX keys. */
static int filter_map_new(uint32_t max)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = sizeof(uint32_t);
	a.value_size = sizeof(uint32_t);
	a.max_entries = max;
	a.map_flags = BPF_F_NO_PREALLOC;
	return bpf(BPF_MAP_CREATE, &a);
}

/* KEY in MAP (or out of it: IN false). 0, or -1 with errno. */
int ps_filter_map_set(int map, uint32_t key, bool in)
{
	uint32_t one = 1;
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	if (!in)
		return bpf(BPF_MAP_DELETE_ELEM, &a);
	a.value = (uint64_t)(uintptr_t)&one;
	a.flags = BPF_ANY;
	return bpf(BPF_MAP_UPDATE_ELEM, &a);
}

/* Follow process PID (or stop: FOLLOW false). */
static void filter_set(struct perf_sampler *ps, pid_t pid, bool follow)
{
	if (ps_filter_map_set(ps->filter_map, (uint32_t)pid, follow) < 0 && follow &&
	    !ps->warned_filter) {
		ps->warned_filter = true;
		warn_errno("cannot follow process %d with perf events: it is not sampled", (int)pid);
	}
}

/* The CPUs' clocks' filter: the sample is written (r0 = 1) only if the
 * task on the CPU is a thread of a process in PROCS (its tgid) and not in
 * OWNED (its tid: it has clocks of its own). Ids are those of the initial
 * pid namespace, where we run. */
static int filter_load(int procs, int owned)
{
	struct bpf_insn insns[] = {
		/* r7 = tgid << 32 | tid */
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_pid_tgid },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_7, .src_reg = BPF_REG_0 },
		/* procs[tgid]? */
		{ .code = BPF_ALU64 | BPF_RSH | BPF_K, .dst_reg = BPF_REG_0, .imm = 32 },
		{ .code = BPF_STX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_0,
		  .off = -4 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = procs },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_0, .off = 9, .imm = 0 },
		/* owned[tid]? (the low half of r7) */
		{ .code = BPF_STX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_7,
		  .off = -8 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = owned },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_0, .off = 2, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
		/* not the target's, or on its own clocks */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
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
	int procs = filter_map_new(1), owned = filter_map_new(1);
	int prog = procs >= 0 && owned >= 0 ? filter_load(procs, owned) : -1;
	if (procs >= 0)
		close(procs);
	if (owned >= 0)
		close(owned);
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
	r->fd = ps_perf_event_open(&ps->attr, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
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

void ps_ring_close(struct ring *r)
{
	if (r->meta)
		munmap(r->meta, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	r->meta = NULL;
	r->fd = -1;
}

static void rings_close(struct perf_sampler *ps)
{
	for (unsigned c = 0; c < ps->ncpus; c++) {
		ps_ring_close(&ps->rings[c]);
		if (ps->arrival_rings)
			ps_ring_close(&ps->arrival_rings[c]);
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


/* The kernel's chain of V: its kernel part (after PERF_CONTEXT_KERNEL) for
 * the recorder, its user part (from PERF_CONTEXT_USER) for
 * unwind_fp_continue. */
static void split_chain(const struct perf_sample_view *v, struct unwind_snapshot *s)
{
	s->kernel_chain = s->fp_chain = NULL;
	s->kernel_n = s->fp_chain_n = 0;
	bool in_kernel = false;
	for (size_t i = 0; i < v->nchain; i++) {
		uint64_t mark;
		memcpy(&mark, v->chain + 8 * i, sizeof mark);
		if (mark == (uint64_t)PERF_CONTEXT_USER) {
			s->fp_chain = v->chain + 8 * i;
			s->fp_chain_n = v->nchain - i;
			break;
		}
		if (mark >= (uint64_t)PERF_CONTEXT_MAX) {
			/* (one kernel part: not a guest's or a hypervisor's) */
			in_kernel = mark == (uint64_t)PERF_CONTEXT_KERNEL && !s->kernel_chain;
			if (in_kernel)
				s->kernel_chain = v->chain + 8 * (i + 1);
		} else if (in_kernel) {
			s->kernel_n++;
		}
	}
}

void ps_sample_snapshot(struct unwind_snapshot *s, const struct perf_sample_view *v)
{
	split_chain(v, s);
	s->tid = v->tid;
	regs_from_perf(v->regs, &s->regs);
	s->stack_start = s->regs.rsp;
	s->stack = (uint8_t *)(uintptr_t)v->stack;
	s->stack_below = 0;
	s->stack_cap = v->stack_size;
	s->stack_len = v->stack_valid;
	/* the kernel's copy stops short at the end of the stack mapping, or at
	 * the first page it cannot read without a fault (the unwinder tells
	 * which: kernel_copy) */
	s->window_cut = v->stack_valid == v->stack_size;
	s->kernel_copy = true;
	s->sp_pc_only = false;
	unwind_snapshot_clear_runtimes(s);   /* (the kernel's copy: the stack in
	                                      * use only, no runtime read) */
}

static void take_sample(struct perf_sampler *ps, const struct perf_sample_view *v)
{
	if (!tids_allow(ps->cfg.tids, ps->cfg.ntids, v->tid))
		return;   /* -t: another thread of the process */
	ps->stats.samples++;
	struct thread_row *row = ps_row_find(ps, v->tid);
	if (!row) {
		/* the filter let its process through; we follow it while target does */
		struct recorder_process *proc = recorder_find_process(ps->rec, v->pid);
		row = proc && proc->alive && proc->unwinder ? ps_row_make(ps, proc, v->tid) : NULL;
		if (!row)
			return;
	}
	uint32_t key = ps_row_key(ps, row);
	if (key == UINT32_MAX)
		return;
	/* a thread sampled STACKMAP_SCALE_MIN times is long-lived: its own
	 * clocks from now on (after this sample) */
	if (!row->own && !row->own_refused && !ps->closing && ++row->samples >= STACKMAP_SCALE_MIN)
		ps_own_open(ps, row);
	struct unwind_snapshot *s = &ps->snap;
	if (!v->user) {
		split_chain(v, s);
		/* on a CPU without a user context (an exec between the old
		 * program and the new, an exit once its memory is gone, a thread
		 * between its birth and its first instruction): its CPU, its
		 * kernel frames under a frame that says so */
		ps->stats.no_user_regs++;
		recorder_count_kernel(ps->rec, key, STACK_NO_USER_CONTEXT, s, 1);
		return;
	}
	ps_sample_snapshot(s, v);
	const uint64_t *addrs;
	unsigned depth;
	uint32_t flags = 0;
	recorder_count_snapshot(ps->rec, ps_row_id(ps, row)->proc, key, s, 1, &addrs, &depth, &flags);
}

/* Hand ring R's records over: its samples to TAKE. */
static void ring_drain(struct perf_sampler *ps, struct ring *r,
		       void (*take)(struct perf_sampler *, const struct perf_sample_view *),
		       uint64_t *lost_count)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail, lost;
	const uint8_t *rec;
	size_t len;
	struct perf_sample_view v;
	while (perf_ring_next(r->data, r->size, &tail, head, ps->scratch, &rec, &len)) {
		switch (perf_record_parse(rec, len, &v, &lost)) {
		case PERF_REC_SAMPLE:
			take(ps, &v);
			break;
		case PERF_REC_LOST:
			*lost_count += lost;
			break;
		default:
			break;
		}
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

unsigned perf_sampler_read_rate(const struct perf_sampler *ps)
{
	unsigned rate = ps->cfg.rate ? ps->cfg.rate : CLOCK_DEFAULT_RATE;
	/* (a record: the stack copy, the registers, a kernel chain, headers) */
	uint64_t record = (uint64_t)ps->attr.sample_stack_user + 4096;
	uint64_t holds = RING_DATA_BYTES / record, need = ((uint64_t)rate * 4 + holds - 1) / holds;
	if (need < PERF_SAMPLER_READ_RATE_MIN)
		need = PERF_SAMPLER_READ_RATE_MIN;
	return need < rate ? (unsigned)need : rate;
}

int perf_sampler_drain(struct perf_sampler *ps)
{
	ps->stats.drains++;
	for (unsigned c = 0; c < ps->ncpus; c++) {
		if (ps->rings[c].meta)
			ring_drain(ps, &ps->rings[c], take_sample, &ps->stats.lost);
		if (ps->arrival_rings && ps->arrival_rings[c].meta)
			ring_drain(ps, &ps->arrival_rings[c], ps_take_arrival, &ps->stats.arrival_lost);
	}
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

/* Whether the kernel shows csampler its symbols' addresses
 * (kernel.kptr_restrict): else a chain's kernel frames could not be named. */
static bool kernel_addresses_shown(void)
{
	char line[64];
	return procfs_read("/proc/kallsyms", line, sizeof line) > 16 && strspn(line, "0") < 16;
}

/* The cpu-clock event every CPU samples with. */
static struct perf_event_attr event_attr(const struct perf_sampler_config *cfg)
{
	unsigned rate = cfg->rate ? cfg->rate : CLOCK_DEFAULT_RATE;
	size_t window = cfg->stack_window < MAX_STACK_USER ? cfg->stack_window : MAX_STACK_USER;
	bool kernel = cfg->kernel && kernel_addresses_shown();
	if (cfg->kernel && !kernel)
		warn("the kernel hides its symbols' addresses (kernel.kptr_restrict): samples show no "
		     "kernel frames; 'sysctl kernel.kptr_restrict=0' shows them (--no-kernel: no "
		     "kernel frames, and no such line)");
	return (struct perf_event_attr){
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(struct perf_event_attr),
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = clock_period_ns(rate),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER,
		.exclude_callchain_kernel = !kernel,
		.sample_regs_user = PERF_RECORD_REGS_MASK, .sample_stack_user = (uint32_t)(window & ~(size_t)7),
		.exclude_hv = 1, .exclude_guest = 1, .exclude_idle = 1,
	};
}

/* A row for each of the N threads TL found at the attach, its run time read
 * now: its CPU counts from the attach, not from its first sample read (a
 * csampler that got no CPU for a while read those late, and the CPU before
 * them was in no thread's total: memcached's 1.1 cores read 0.24-0.54).
 * Not a launched program's: its CPU counts from its exec. */
static void rows_of_attach(struct perf_sampler *ps, const struct target_thread *tl, size_t n)
{
	uint64_t now = clock_monotonic_ns();
	for (size_t i = 0; i < n; i++) {
		if (!tids_allow(ps->cfg.tids, ps->cfg.ntids, tl[i].tid))
			continue;
		ps->stats.threads_seen++;
		struct recorder_process *p = recorder_find_process(ps->rec, tl[i].pid);
		if (tl[i].pid == ps->launch_pid || !p || !p->alive || !p->unwinder ||
		    ps_row_find(ps, tl[i].tid))
			continue;
		struct thread_row *row = ps_row_make(ps, p, tl[i].tid);
		char buf[128];
		struct procfs_schedstat ss;
		/* (read by its path: a thread asleep all along keeps no
		 * descriptor from the budget of the threads' own clocks) */
		if (row && procfs_read_file(tl[i].pid, tl[i].tid, "schedstat", buf, sizeof buf) > 0 &&
		    procfs_parse_schedstat(buf, &ss)) {
			row->runtime_ns = ss.runtime_ns;
			row->have_runtime = true;
			row->read_ns = now;
		}
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
	ps->filter_map = ps->owned_map = -1;
	ps->attr = event_attr(cfg);
	/* a thread's switches out, its user stack only (the kernel's frames
	 * there are the switch's) */
	ps->arrival_attr = ps->attr;
	ps->arrival_attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	ps->arrival_attr.exclude_callchain_kernel = 1;
	ps->arrival_attr.exclude_idle = 0;
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
	ps->filter_map = filter_map_new(FILTER_MAX_PROCESSES);
	ps->owned_map = ps->filter_map >= 0 ? filter_map_new(FILTER_MAX_OWN_THREADS) : -1;
	if (ps->owned_map < 0) {
		say_refused("a BPF map", errno, status);
		goto fail;
	}
	int prog = filter_load(ps->filter_map, ps->owned_map);
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
	ps_arrival_rings_open(ps, (size_t)sysconf(_SC_PAGESIZE));
	/* the processes target holds; later ones come as events */
	const struct target_thread *tl;
	size_t n = target_threads(t, &tl);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || tl[i].pid != tl[i - 1].pid)
			perf_sampler_on_event(ps, &(struct target_event){ TARGET_EV_PROCESS_NEW,
									  tl[i].pid, tl[i].pid });
	ps->own_fd_budget = ps_own_fd_budget();
	ps->arrival_fd_floor = ps->own_fd_budget / 2;
	rows_of_attach(ps, tl, n);
	if (cfg->verbose)
		warn("perf events: a clock per CPU (%u), filtered to the target, and a thread's own "
		     "once it ran (descriptors for %zu), in %.1f ms", ps->ncpus,
		     ps->own_fd_budget / ps->ncpus, (double)(clock_monotonic_ns() - t0) / 1e6);
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
	for (size_t i = 0; i < ps->rows_cap; i++)
		if (recorder_followed(ps->rec, (uint32_t)i)->tid) {
			ps_own_close(ps, &ps->rows[i]);
			if (ps->rows[i].schedstat_fd >= 0)
				close(ps->rows[i].schedstat_fd);
		}
	if (ps->rings)
		rings_close(ps);
	if (ps->filter_map >= 0)
		close(ps->filter_map);
	if (ps->owned_map >= 0)
		close(ps->owned_map);
	free(ps->rings);
	free(ps->arrival_rings);
	for (size_t i = 0; i < ps->rows_cap; i++)
		recorder_unfollow_thread(ps->rec, (uint32_t)i);
	free(ps->rows);
	free(ps->own_fds);
	free(ps->arrival_fds);
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
		/* (the first process of a launch is csampler's own child until
		 * its exec: none of its samples is the program's) */
		if (ps->cfg.launched) {
			ps->cfg.launched = false;
			ps->launch_pid = ev->pid;
		}
		if (ev->pid == ps->launch_pid)
			break;
		filter_set(ps, ev->pid, true);
		break;
	case TARGET_EV_EXEC:
		if (ev->pid == ps->launch_pid) {
			ps->launch_pid = 0;
			filter_set(ps, ev->pid, true);
		}
		/* the samples written before are of the old image, and its
		 * threads are gone */
		perf_sampler_drain(ps);
		ps_rows_of_process_release(ps, ev->pid);
		p = recorder_find_process(ps->rec, ev->pid);
		if (p)
			recorder_process_exec(ps->rec, p);
		else
			p = recorder_add_process(ps->rec, ev->pid);
		/* the new image's CPU counts from here */
		row = p && tids_allow(ps->cfg.tids, ps->cfg.ntids, ev->pid) ? ps_row_make(ps, p, ev->pid)
									      : NULL;
		if (row)
			ps_row_account(ps, row, clock_monotonic_ns());
		break;
	case TARGET_EV_PROCESS_EXIT:
		perf_sampler_drain(ps);
		filter_set(ps, ev->pid, false);
		ps_rows_of_process_release(ps, ev->pid);
		p = recorder_find_process(ps->rec, ev->pid);
		if (p)
			recorder_process_exit(ps->rec, p);
		recorder_release_gone(ps->rec);
		break;
	case TARGET_EV_THREAD_NEW:
		if (!tids_allow(ps->cfg.tids, ps->cfg.ntids, ev->tid))
			break;
		ps->stats.threads_seen++;
		/* born while sampled: all its CPU counts, not only from its
		 * first sample on */
		p = recorder_find_process(ps->rec, ev->pid);
		row = p && p->alive && !ps_row_find(ps, ev->tid) ? ps_row_make(ps, p, ev->tid) : NULL;
		if (row)
			row->have_runtime = true;
		break;
	case TARGET_EV_THREAD_EXITING:
		/* its last CPU time, while its /proc files are there (a thread
		 * never sampled gets a key: its CPU goes to its process's pool) */
		row = ps_row_find(ps, ev->tid);
		if (row)
			ps_row_account(ps, row, clock_monotonic_ns());
		break;
	case TARGET_EV_THREAD_EXIT:
		/* its last samples, maybe its first ones too, are in a ring: a row
		 * made for them after this would never be released */
		perf_sampler_drain(ps);
		row = ps_row_find(ps, ev->tid);
		if (row)
			ps_row_release(ps, row);
		break;
	}
}

/* The run's last read of each thread's run time (session_detach calls this
 * once, before the target is let go). The threads sampled are read first,
 * while the kernel still samples: what the rings still hold is then
 * drained, and the rest (never sampled, next to no CPU) read last, so each
 * thread's account ends with the run, not when csampler came to it (the
 * reads of 10,000 sleepers took 226 ms). */
void perf_sampler_close_threads(struct perf_sampler *ps)
{
	ps->closing = true;
	uint64_t first = clock_monotonic_ns();
	for (size_t i = 0; i < ps->rows_cap; i++) {
		const struct recorder_followed *id = recorder_followed(ps->rec, (uint32_t)i);
		if (id->tid && id->key != UINT32_MAX)
			ps_row_account(ps, &ps->rows[i], first);
	}
	for (size_t i = 0; i < ps->rows_cap; i++)
		ps_own_close(ps, &ps->rows[i]);
	perf_sampler_drain(ps);
	rings_close(ps);
	uint64_t now = clock_monotonic_ns();
	for (size_t i = 0; i < ps->rows_cap; i++)
		if (recorder_followed(ps->rec, (uint32_t)i)->tid && ps->rows[i].read_ns != first)
			ps_row_account(ps, &ps->rows[i], now);
}

void perf_sampler_get_stats(const struct perf_sampler *ps, struct perf_sampler_stats *out)
{
	*out = ps->stats;
}
