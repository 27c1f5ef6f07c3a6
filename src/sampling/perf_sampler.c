/* perf_sampler: see perf_sampler.h.
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
 * So a thread starts on the CPUs' clocks, which are right for the short
 * ones; one that reached STACKMAP_SCALE_MIN samples is long-lived, and its
 * count is scaled to the kernel's account of its CPU anyway (schedstat,
 * stackmap_key_total), which absorbs what the hand-over and its clocks'
 * last periods leave out; its own clocks give it the split of a thread's
 * time. Opening a thread's events costs one system call per CPU, once per
 * thread that runs (a thread asleep costs nothing: 10,000 threads attach as
 * fast as 10), and a descriptor each: within the open-file limit, which
 * csampler raises to the hard one; beyond it a thread stays on the CPUs'
 * clocks, said once.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "perf_record.h"
#include "perf_sampler.h"
#include "procfs.h"
#include "stackmap.h"
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
/* threads that can have clocks of their own at once */
#define FILTER_MAX_OWN_THREADS 262144u
/* descriptors left for the rest of csampler (its /proc and mapped files)
 * when the budget of the threads' own events is drawn */
#define OWN_FD_RESERVE 256u

/* Names change (pthread_setname_np): a sampled thread's name is read again
 * after this long. */
#define RENAME_CHECK_NS 1000000000u
/* A sampled thread's run time is read again at a sample this long after the
 * last read: a thread that ends is accounted up to about its last sample
 * (its end is seen once its /proc entry is gone). */
#define ACCOUNT_EVERY_NS 2000000u

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
	uint64_t read_ns;               /* when schedstat was read */
	uint64_t runtime_ns;            /* schedstat's run time at the last read */
	uint64_t unaccounted_ns;        /* run time read before the thread had a key */
	int schedstat_fd;               /* kept open within the descriptor budget, or -1 */
	bool have_runtime;
	bool own;                       /* its own clocks are open (own_fds) */
	bool own_refused;               /* they could not be: the CPUs' clocks only */
	uint32_t samples;               /* samples before its own clocks (up to
	                                 * STACKMAP_SCALE_MIN) */
};

struct perf_sampler {
	struct recorder *rec;
	struct perf_sampler_config cfg;
	struct perf_event_attr attr;
	unsigned ncpus;
	struct ring *rings;
	int filter_map;                 /* BPF hash: followed process id -> 1 */
	int owned_map;                  /* BPF hash: tid with clocks of its own -> 1 */
	struct thread_row *rows;        /* by the recorder's slot */
	int *own_fds;                   /* ncpus a row, by slot: its own events (-1) */
	size_t rows_cap;                /* as many as the recorder has slots */
	size_t own_fd_budget;           /* descriptors the threads' events may still take */
	bool warned_own;
	bool closing;                   /* sampling is over: no thread gets clocks now */
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
static int filter_map_set(int map, uint32_t key, bool in)
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
	if (filter_map_set(ps->filter_map, (uint32_t)pid, follow) < 0 && follow &&
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
		memset(rows + ps->rows_cap, 0, (cap - ps->rows_cap) * sizeof *rows);
		ps->rows = rows;
		int *fds = realloc(ps->own_fds, cap * ps->ncpus * sizeof *fds);
		if (!fds)
			return NULL;
		for (size_t i = ps->rows_cap * ps->ncpus; i < cap * ps->ncpus; i++)
			fds[i] = -1;
		ps->own_fds = fds;
		ps->rows_cap = cap;
	}
	uint32_t slot = recorder_follow_thread(ps->rec, p, tid);
	if (slot == RECORDER_NO_SLOT)
		return NULL;
	ps->rows[slot] = (struct thread_row){ .schedstat_fd = -1 };
	return &ps->rows[slot];
}

/* Tell the recorder the CPU ROW's thread used since the last read (its
 * schedstat run time): each thread's total in the outputs is then the
 * kernel's account of it (stackmap_key_total), as with ptrace. Read at its
 * samples (at most every ACCOUNT_EVERY_NS), at its exit and at the end; a
 * thread gone before a read is accounted up to the last one. */
static void row_account(struct perf_sampler *ps, struct thread_row *row, uint64_t now)
{
	char buf[128];
	struct procfs_schedstat ss;
	const struct recorder_followed *id = row_id(ps, row);
	row->read_ns = now;
	if (row->schedstat_fd < 0 && ps->own_fd_budget > 0) {
		row->schedstat_fd = procfs_open_task_file(-1, id->pid, id->tid, "schedstat");
		ps->own_fd_budget -= row->schedstat_fd >= 0;
	}
	if (row->schedstat_fd >= 0 ? !procfs_read_schedstat(row->schedstat_fd, &ss)
				   : procfs_read_file(id->pid, id->tid, "schedstat", buf, sizeof buf) <= 0 ||
				     !procfs_parse_schedstat(buf, &ss))
		return;
	if (row->have_runtime && ss.runtime_ns > row->runtime_ns)
		row->unaccounted_ns += ss.runtime_ns - row->runtime_ns;
	row->runtime_ns = ss.runtime_ns;
	row->have_runtime = true;
	if (row->unaccounted_ns && id->key != UINT32_MAX) {
		recorder_account_cpu(ps->rec, id->key, row->unaccounted_ns);
		row->unaccounted_ns = 0;
	}
}

/* ---- a thread's own clocks -------------------------------------------------- */

static int *row_own_fds(struct perf_sampler *ps, const struct thread_row *row)
{
	return &ps->own_fds[(size_t)(row - ps->rows) * ps->ncpus];
}

/* ROW's own clocks closed (what they wrote stays in the rings), the CPUs'
 * clocks given it back. */
static void own_close(struct perf_sampler *ps, struct thread_row *row)
{
	if (!row->own)
		return;
	int *fds = row_own_fds(ps, row);
	for (unsigned c = 0; c < ps->ncpus; c++)
		if (fds[c] >= 0) {
			close(fds[c]);
			fds[c] = -1;
			ps->own_fd_budget++;
		}
	(void)filter_map_set(ps->owned_map, (uint32_t)row_id(ps, row)->tid, false);
	row->own = false;
	ps->stats.own_threads_now--;
}

/* Say once that thread TID and others stay on the CPUs' clocks. */
static void own_refused(struct perf_sampler *ps, pid_t tid, int err)
{
	ps->stats.own_refused++;
	if (ps->warned_own)
		return;
	ps->warned_own = true;
	struct rlimit rl;
	if ((err == EMFILE || err == 0) && getrlimit(RLIMIT_NOFILE, &rl) == 0)
		warn("the open-file limit (%llu) holds no more perf events for threads (one a CPU): "
		     "thread %d and later ones are sampled by the CPUs' clocks, which miss part of "
		     "the CPU of threads that sleep and wake thousands of times a second; raise "
		     "'ulimit -n' (the hard limit too) for a truer profile",
		     (unsigned long long)rl.rlim_cur, (int)tid);
	else
		warn("cannot give thread %d a perf event of its own (%s): it and any other refused "
		     "are sampled by the CPUs' clocks, which miss part of the CPU of threads that "
		     "sleep and wake thousands of times a second", (int)tid, strerror(err));
}

/* Give ROW's thread its own clocks: an event per CPU bound to it, written
 * into that CPU's ring; then the CPUs' clocks leave it (the owned map).
 * A thread gone meanwhile is left as it is. */
static void own_open(struct perf_sampler *ps, struct thread_row *row)
{
	pid_t tid = row_id(ps, row)->tid;
	int *fds = row_own_fds(ps, row);
	unsigned rings = 0;
	for (unsigned c = 0; c < ps->ncpus; c++)
		rings += ps->rings[c].fd >= 0;
	if (ps->own_fd_budget < rings) {
		row->own_refused = true;
		own_refused(ps, tid, 0);
		return;
	}
	int err = 0;
	for (unsigned c = 0; c < ps->ncpus && !err; c++) {
		if (ps->rings[c].fd < 0)
			continue;
		fds[c] = perf_event_open(&ps->attr, tid, (int)c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[c] < 0 || ioctl(fds[c], PERF_EVENT_IOC_SET_OUTPUT, ps->rings[c].fd) < 0)
			err = errno;
	}
	if (!err && filter_map_set(ps->owned_map, (uint32_t)tid, true) < 0)
		err = errno;
	if (err) {
		for (unsigned c = 0; c < ps->ncpus; c++)
			if (fds[c] >= 0) {
				close(fds[c]);
				fds[c] = -1;
			}
		if (err == ESRCH)
			return;   /* the thread ended: its exit event releases the row */
		row->own_refused = true;
		own_refused(ps, tid, err);
		return;
	}
	ps->own_fd_budget -= rings;
	row->own = true;
	ps->stats.own_threads++;
	ps->stats.own_threads_now++;
}

/* The open-file limit less what is open and a reserve: the descriptors the
 * threads' own events may take. */
static size_t own_fd_budget(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	size_t limit = rl.rlim_cur == RLIM_INFINITY ? SIZE_MAX / 2 : (size_t)rl.rlim_cur;
	size_t open = procfs_open_fds();
	size_t used = open + OWN_FD_RESERVE;
	return limit > used ? limit - used : 0;
}

static void row_release(struct perf_sampler *ps, struct thread_row *row)
{
	own_close(ps, row);
	row_account(ps, row, clock_monotonic_ns());
	if (row->schedstat_fd >= 0) {
		close(row->schedstat_fd);
		row->schedstat_fd = -1;
		ps->own_fd_budget++;
	}
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
 * (read from /proc at most once a second); its CPU told at most every
 * ACCOUNT_EVERY_NS. UINT32_MAX out of memory. */
static uint32_t row_key(struct perf_sampler *ps, struct thread_row *row)
{
	const struct recorder_followed *id = row_id(ps, row);
	uint32_t key = id->key;
	uint64_t now = clock_monotonic_ns();
	if (key == UINT32_MAX || now - row->named_ns >= RENAME_CHECK_NS) {
		row->named_ns = now;
		char comm[16];
		bool named = true;
		if (procfs_read_file(id->pid, id->tid, "comm", comm, sizeof comm) > 0)
			comm[strcspn(comm, "\n")] = '\0';
		else if (key == UINT32_MAX)  /* gone before its first sample was read */
			memcpy(comm, id->proc->comm, sizeof comm - 1);
		else
			named = false;   /* gone: keeps its name */
		comm[sizeof comm - 1] = '\0';
		if (named)
			key = recorder_name_thread(ps->rec, (uint32_t)(row - ps->rows), comm);
	}
	if (key != UINT32_MAX && (!row->have_runtime || now - row->read_ns >= ACCOUNT_EVERY_NS))
		row_account(ps, row, now);
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
	uint32_t key = row_key(ps, row);
	if (key == UINT32_MAX)
		return;
	/* a thread sampled STACKMAP_SCALE_MIN times is long-lived: its own
	 * clocks from now on (after this sample) */
	if (!row->own && !row->own_refused && !ps->closing && ++row->samples >= STACKMAP_SCALE_MIN)
		own_open(ps, row);
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
	ps->filter_map = ps->owned_map = -1;
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
	/* the processes target holds; later ones come as events */
	const struct target_thread *tl;
	size_t n = target_threads(t, &tl);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || tl[i].pid != tl[i - 1].pid)
			perf_sampler_on_event(ps, &(struct target_event){ TARGET_EV_PROCESS_NEW,
									  tl[i].pid, tl[i].pid });
	for (size_t i = 0; i < n; i++)
		ps->stats.threads_seen += tids_allow(ps->cfg.tids, ps->cfg.ntids, tl[i].tid);
	ps->own_fd_budget = own_fd_budget();
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
			own_close(ps, &ps->rows[i]);
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
	for (size_t i = 0; i < ps->rows_cap; i++)
		recorder_unfollow_thread(ps->rec, (uint32_t)i);
	free(ps->rows);
	free(ps->own_fds);
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
			p = recorder_add_process(ps->rec, ev->pid);
		/* the new image's CPU counts from here */
		row = p && tids_allow(ps->cfg.tids, ps->cfg.ntids, ev->pid) ? row_make(ps, p, ev->pid)
									      : NULL;
		if (row)
			row_account(ps, row, clock_monotonic_ns());
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
		if (!tids_allow(ps->cfg.tids, ps->cfg.ntids, ev->tid))
			break;
		ps->stats.threads_seen++;
		/* born while sampled: all its CPU counts, not only from its
		 * first sample on */
		p = recorder_find_process(ps->rec, ev->pid);
		row = p && p->alive && !row_find(ps, ev->tid) ? row_make(ps, p, ev->tid) : NULL;
		if (row)
			row->have_runtime = true;
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
	ps->closing = true;
	for (size_t i = 0; i < ps->rows_cap; i++)
		own_close(ps, &ps->rows[i]);
	perf_sampler_drain(ps);
	rings_close(ps);
	uint64_t now = clock_monotonic_ns();
	for (size_t i = 0; i < ps->rows_cap; i++)
		if (recorder_followed(ps->rec, (uint32_t)i)->tid)
			row_account(ps, &ps->rows[i], now);
}

void perf_sampler_get_stats(const struct perf_sampler *ps, struct perf_sampler_stats *out)
{
	*out = ps->stats;
}
