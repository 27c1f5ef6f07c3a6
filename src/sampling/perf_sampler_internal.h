/* perf_sampler_internal.h: what perf_sampler.c (events, filter, rings,
 * records), perf_sampler_threads.c (the rows of the threads followed:
 * their names, run time and clocks of their own) and
 * perf_sampler_arrivals.c (where they arrive) share. Not an interface. */
#ifndef CSAMPLER_PERF_SAMPLER_INTERNAL_H
#define CSAMPLER_PERF_SAMPLER_INTERNAL_H
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf_record.h"
#include "perf_sampler.h"
#include "procfs.h"
#include "recorder.h"
#include "unwind.h"

/* threads that can have clocks of their own at once */
#define FILTER_MAX_OWN_THREADS 262144u

/* Data bytes of a CPU's ring: 4 MiB holds about 64 samples of a 64 KiB
 * window, 64 ms of one CPU at 999 Hz between two reads. */
#define RING_DATA_BYTES (4u << 20)

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
	int clock_fd;                   /* its task clock, opened with its own clocks
	                                 * (-1: none), and its run time then */
	uint64_t clock_run0_ns;
	uint32_t samples;               /* samples before its own clocks (up to
	                                 * STACKMAP_SCALE_MIN) */
	uint64_t clock_arrivals0;       /* its schedstat arrivals then */
	/* its arrivals (perf_sampler_arrivals.c): their events are open
	 * (arrival_fds), or will not be; when its span was last looked at
	 * before they were; their period, the switch-in span told the recorder
	 * so far; when the period was last chosen, its schedstat then */
	bool arrivals, arrivals_refused;
	uint64_t span_checked_ns;
	uint64_t arrival_period;
	uint64_t span_told_ns;
	uint64_t period_read_ns, period_arrivals, period_runtime_ns;
};

struct perf_sampler {
	struct recorder *rec;
	struct perf_sampler_config cfg;
	struct perf_event_attr attr;
	unsigned ncpus;
	struct ring *rings;
	struct ring *arrival_rings;     /* a ring per CPU for the threads' arrivals
	                                 * (NULL: none), held by a dummy event */
	struct perf_event_attr arrival_attr;
	int filter_map;                 /* BPF hash: followed process id -> 1 */
	int owned_map;                  /* BPF hash: tid with clocks of its own -> 1 */
	struct thread_row *rows;        /* by the recorder's slot */
	int *own_fds;                   /* ncpus a row, by slot: its own events (-1) */
	int *arrival_fds;               /* the same of its arrival events */
	size_t rows_cap;                /* as many as the recorder has slots */
	size_t own_fd_budget;           /* descriptors the threads' events may still take */
	size_t arrival_fd_floor;        /* arrival events only above this (half the
	                                 * budget: the threads' own clocks first) */
	bool warned_own;
	bool closing;                   /* sampling is over: no thread gets clocks now */
	bool warned_filter;
	pid_t launch_pid;               /* the launched child (cfg.launched's process,
	                                 * which clears it), not exec'd yet; else 0 */
	uint8_t *scratch;               /* a record that wraps (PERF_RECORD_MAX) */
	struct unwind_snapshot snap;
	struct perf_sampler_stats stats;
};

int ps_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags);
/* KEY in the BPF hash MAP (or out of it: IN false). 0, or -1 with errno. */
int ps_filter_map_set(int map, uint32_t key, bool in);

/* ---- perf_sampler_threads.c ---- */
/* The thread in ROW (pid, tid, process, key). */
const struct recorder_followed *ps_row_id(const struct perf_sampler *ps, const struct thread_row *row);
struct thread_row *ps_row_find(struct perf_sampler *ps, pid_t tid);
/* A row for thread TID of P (followed in the recorder). NULL out of memory. */
struct thread_row *ps_row_make(struct perf_sampler *ps, struct recorder_process *p, pid_t tid);
/* Tell the recorder the CPU ROW's thread used since its last read. */
void ps_row_account(struct perf_sampler *ps, struct thread_row *row, uint64_t now);
/* ROW's key, named and accounted as due; UINT32_MAX out of memory. */
uint32_t ps_row_key(struct perf_sampler *ps, struct thread_row *row);
/* Its own clocks opened (within the budget), or closed. */
void ps_own_open(struct perf_sampler *ps, struct thread_row *row);
void ps_own_close(struct perf_sampler *ps, struct thread_row *row);

/* The descriptors the threads' own events may take. */
size_t ps_own_fd_budget(void);
/* The thread ended (or sampling did): accounted, its files closed, unfollowed. */
void ps_row_release(struct perf_sampler *ps, struct thread_row *row);
void ps_rows_of_process_release(struct perf_sampler *ps, pid_t pid);

/* Unmap and close ring R (-1: none). */
void ps_ring_close(struct ring *r);
/* S from sample V: its user registers and stack copy, its kernel chain's
 * parts (perf_sampler.c). */
void ps_sample_snapshot(struct unwind_snapshot *s, const struct perf_sample_view *v);
/* ROW's schedstat now (by its kept descriptor, or its path): false, gone
 * (perf_sampler_threads.c). */
bool ps_row_schedstat(const struct perf_sampler *ps, const struct thread_row *row,
		      struct procfs_schedstat *ss);

/* perf_sampler_arrivals.c: where a thread arrives. The rings (arrival_rings
 * NULL where the kernel refuses one, said with -v); a sample of a switch
 * out counted as an arrival; ROW's context-switch events closed; its span
 * told as far as RUN_NS and its task clock CLOCK say; at a read of its
 * schedstat SS (a thread with a task clock), its events opened once its
 * span is worth placing, else its span told and its period chosen again
 * when due. */
void ps_arrival_rings_open(struct perf_sampler *ps, size_t page);
void ps_take_arrival(struct perf_sampler *ps, const struct perf_sample_view *v);
void ps_arrivals_close(struct perf_sampler *ps, struct thread_row *row);
void ps_arrivals_tell(struct perf_sampler *ps, struct thread_row *row, uint64_t run_ns,
		      uint64_t clock);
void ps_arrivals_account(struct perf_sampler *ps, struct thread_row *row,
			 const struct procfs_schedstat *ss, uint64_t now);
/* The arrival period: about one sample a period of the CPU (ARRIVALS
 * switches into the thread over RUN_NS of its run time). Pure. */
uint64_t ps_arrival_period(const struct perf_sampler *ps, uint64_t arrivals, uint64_t run_ns);

#endif
