/* sampler_internal: what the sampler's three files share (not an
 * interface: sampler.h is). sampler_judge.c tells which threads ran at the
 * tick and which stops count. sampler_threads.c keeps the threads seen (followed in the
 * recorder's registry, their state here by its slot), their /proc files within the descriptor budget, the processes'
 * task directories, the timing wheel that says when each is read next, and
 * the target events that add and retire them. sampler.c takes the ticks:
 * it reads the threads due, chooses, stops them in rounds through target,
 * and records through the recorder. */
#ifndef CSAMPLER_SAMPLER_INTERNAL_H
#define CSAMPLER_SAMPLER_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "holders.h"
#include "recorder.h"
#include "sampler.h"
#include "target.h"
#include "unwind.h"

/* Idle threads are all read every tick while their reads stay within
 * IDLE_READS_PER_SEC (a read costs about 3 us: 4000 a second are 1.2% of a
 * core); with more, an idle one is read with probability 2^-k (see
 * threads_schedule_read), k at most the level that keeps the expected idle reads
 * within that, and so that 2^k <= IDLE_MAX_SKIP and 2^k periods <=
 * IDLE_MAX_SKIP_NS (the most one sample may stand for: it bounds the
 * variance). 10,000 sleeping threads at 999 Hz: k = 10, ~10 reads a tick. */
#define IDLE_READS_PER_SEC 4000u
#define IDLE_MAX_LEVEL 10
#define IDLE_MAX_SKIP (1u << IDLE_MAX_LEVEL)
#define IDLE_MAX_SKIP_NS 2000000000u

/* The timing wheel of reads: a thread due at tick k is in bucket k mod
 * WHEEL (one due later stays there for another turn). */
#define WHEEL 4096u
#define NO_SLOT UINT32_MAX

/* A thread 'R' on the CPU a round runs on, at that tick (threads_took_cpu) */
enum tick_cpu {
	TICK_CPU_UNKNOWN,   /* not on it, no /proc/TID/sched, or csampler not real-time */
	TICK_CPU_TAKEN,     /* the tick's switch to csampler took it off: running */
	TICK_CPU_WAITING,   /* waiting there for it (queued or being woken) */
};

/* A followed thread's state, by its slot in the recorder's registry (which
 * holds its pid, tid, process and key: thread_id). */
struct thread_state {
	int schedstat_fd, stat_fd, syscall_fd;
	unsigned transient;           /* which of them were opened for one read only
	                               * (over the descriptor budget): THREAD_FILE_* */
	uint64_t runtime_ns;          /* last read */
	uint64_t cpu_unaccounted_ns;  /* run time read, not yet told to the recorder (no key yet) */
	uint64_t arrivals;            /* times it got a CPU, as of the last read */
	uint64_t own_stops;           /* our stops of it since (each one is a switch
	                               * out and an arrival: not the target's own) */
	uint64_t late_until_ns;       /* a late stop is expected until then */
	uint64_t utime, stime;        /* clock ticks in user code and in the kernel,
	                               * as of its last stat read (times_read) */
	bool times_read;
	bool idle;                    /* did not run at its last read, nor was running */
	unsigned level;               /* its next read was drawn with p = 2^-level */
	bool woke;                    /* it ran while we sampled (level grows by one) */
	unsigned weight;              /* periods this tick's sample counts */
	uint64_t due;                 /* the tick of its next read */
	uint32_t wnext, wprev;        /* its wheel bucket's list (slots), or NO_SLOT */
	bool queued;                  /* in the wheel */
	bool running;                 /* its stat said 'R' at the last read */
	int cpu;                      /* the CPU its stat named at that read, -1: unknown */
	bool ran;                     /* its run time or arrivals moved at the last read */
	bool fresh;                   /* not read yet */
	uint64_t run_delay_ns;        /* time it waited for a CPU, as of the tick's read */
	uint64_t read_ns;             /* that read's tick (CLOCK_MONOTONIC) */
	uint64_t wait_counted_ns;     /* of a wait not ended yet, the part counted
	                               * in stats.waited_ns (count_wait) */
	/* as of the read before our last interrupt of it, and that tick's
	 * instant: was it waiting for a CPU then? (stop_was_queued) */
	uint64_t intr_tick_ns, intr_run_delay_ns, intr_arrivals;
	enum tick_cpu intr_our_cpu;   /* on csampler's CPU at that tick: taken off
	                               * it (running) or waiting there (judge_stop) */
	bool intr_remote;             /* on another CPU than csampler's at its read */
	unsigned intr_weight;         /* the periods its stop counts, if kept */
	uint64_t seen_ns, done_ns;    /* the round saw it stopped, then was done copying */
	/* its run delay read at the stop (judge_stop), for the round's pause */
	uint64_t stop_run_delay_ns;
	bool stop_run_delay_read;
	/* --idle: the last captured stack, reused while the thread sleeps; its
	 * buffer grows to the deepest stack its slot has held and is kept for
	 * the slot's next thread (thread_clear), so churn allocates nothing
	 * once warm, and a thread of short stacks holds little at any depth */
	uint64_t *last_stack;
	size_t last_cap;
	unsigned last_depth;
	uint32_t last_flags;
	bool has_last;
	/* --idle: the times a cut last stack was due again since the thread
	 * last ran (it is read again at the 1st, 2nd, 4th ... 64th:
	 * reread_cut in sampler.c) */
	unsigned cut_reuses;
	bool retired;                 /* gone during a tick; released after it */
	/* its task clock (sampler_switch.c; -1: none), and the pairs read:
	 * the first and the last, its run time and arrivals with them, our
	 * stops counted at each (clock_stops: all so far) */
	int clock_fd;
	uint64_t clock_ns, clock_read_ns;
	uint64_t clock_base_run_ns, clock_run_ns, clock_base_arrivals, clock_arrivals;
	uint64_t clock_stops, clock_base_stops, clock_pair_stops;
	/* its switches out (/proc status: voluntary, involuntary) at the first
	 * pair, and the parts of its span told as its wake-ups' and its
	 * preemptions' so far, the parts not yet told (it has no key yet) */
	uint64_t clock_base_nvcsw, clock_base_nivcsw;
	/* its stops where csampler's tick took its CPU from it (a preemption
	 * of ours: an involuntary switch), all so far and at the first pair */
	uint64_t taken_stops, clock_base_taken;
	uint64_t span_told_ns[2], span_unaccounted_ns[2];
	uint64_t arrival_counted[2];  /* periods counted at its stops there */
	bool clock_switches;          /* its switches out read at the first pair */
	bool arrival_only;            /* interrupted only for where it arrives
	                               * (threads_judge_running) */
	uint32_t stop_arrival;        /* its stop, not at a tick's run, is counted
	                               * where it arrives: STACK_WAKE, STACK_PREEMPT */
};

/* On-CPU mode: every candidate's state is read while there are at most
 * MAX_EXAMINED of them, and every one found running is interrupted while
 * there are at most max_per_tick (one per CPU: no more can run at once);
 * beyond either, each is taken with probability 1/w, w the smallest
 * integer that keeps the expected number within the bound, and its sample
 * counts w times (an inclusion probability known before the thread is
 * looked at). Measured against interrupting up to 8 on 2 CPUs: 16 busy
 * threads at 999 Hz slowed by 18% instead of 7%. */
#define MAX_EXAMINED 64u
#define SUBSET_HARD_MAX 4u
/* A random subset of chosen[0, n), moved to the front, each thread kept
 * with probability 1 / *W (the smallest w that keeps the expected number
 * within MAX): how many. */
size_t threads_take_subset(struct sampler *s, size_t n, size_t max, unsigned *w);

/* Descriptors left to everything but the threads' /proc files (mappings,
 * the spill file, symbolizing and writing start after those are closed). */
#define FD_RESERVE 96

/* Threads whose /proc entry was found gone in one tick, told to target
 * after it (more wait for the next tick). */
#define GONE_PER_TICK 16

/* --idle: the most kernel frames read of a blocked thread (the kernel
 * prints at most 64) */
#define SAMPLER_KERNEL_MAX 64

struct sampler {
	struct target *target;
	struct recorder *rec;           /* processes, thread keys, unwinding and counting */
	struct sampler_config cfg;
	uint64_t period_ns;
	unsigned max_per_tick;
	unsigned max_skip_level;       /* an idle thread is read with p >= 2^-level */
	unsigned idle_level;           /* this tick: idle threads go up to this level */
	size_t nidle;                  /* threads idle as of their last read */
	double log_miss[IDLE_MAX_LEVEL + 1]; /* log(1 - 2^-level): geometric gaps */
	uint32_t wheel[WHEEL];         /* bucket heads (slots), NO_SLOT if empty */
	uint32_t *due;                 /* scratch: the slots due this tick */
	unsigned ncpus;                /* online CPUs */
	uint64_t rng;                  /* xorshift64: which idle threads are read */

	int *task_dirs;                /* by process index: /proc/PID/task while it is
	                                * alive (-1: none) */
	size_t task_dirs_cap;
	int no_task_dir;               /* task_dir_of a process without room */

	struct thread_state *threads;  /* by the recorder's slot (recorder_followed) */
	size_t nthreads_cap;           /* as many as the recorder has slots */
	struct target_thread *pending; /* threads seen by target, added at the next tick */
	size_t npending, pending_cap;
	bool pending_lost;             /* out of memory for pending: take target's list */

	/* per tick scratch, grown at warm-up */
	size_t scratch_cap;
	pid_t *chosen_tids;
	struct thread_state **chosen;
	bool *captured;                /* the round stopped and copied it */
	size_t round_base;             /* chosen[] index of the round's first thread */
	size_t round_dropped;          /* stops of the round found waiting */
	struct unwind_snapshot *snaps;  /* one per thread of a round (chosen index) */
	size_t nsnaps;
	struct unwind_snapshot late_snap;  /* the late stop being sampled */
	struct unwind_snapshot blocked_snap; /* --idle: a blocked thread read in place */
	uint64_t blocked_kernel[SAMPLER_KERNEL_MAX]; /* its kernel frames (cfg.kernel) */
	bool kernel_refused;           /* /proc/TID/stack refused (not root): not read again */
	struct thread_state *late_thread;  /* its thread, between capture and done */
	uint64_t late_seen_ns;

	bool in_tick;                  /* target events now are deferred */
	pid_t gone[GONE_PER_TICK];     /* listed by target, /proc entry gone: told after the tick */
	size_t evict_cursor;           /* the slot last looked at for files to give up */
	size_t nfds, max_fds;          /* threads' /proc files open, and the most the fd
	                                * limit allows (leaving FD_RESERVE) */
	size_t ngone;
	size_t nretired;               /* threads marked retired in this tick */
	uint64_t tick_start_ns;
	uint64_t tick_ns;              /* this tick's instant (the clock's), <= tick_start_ns */
	uint64_t round_start_ns;
	uint64_t next_tick_ns;         /* the next tick's instant, 0: none */
	int round_cpu;                 /* the CPU csampler ran the round on (-1: unknown) */
	size_t round_n, round_nspin;   /* the round's threads, those on other CPUs first */
	/* the ticking thread's /proc/TID/sched (-1: not open, or none: no
	 * CONFIG_SCHED_DEBUG), whose thread, and its se.exec_start as read at
	 * tick self_exec_tick (0: unknown): threads_took_cpu */
	int self_sched_fd;
	pid_t self_sched_tid;
	uint64_t self_exec_start_ns, self_exec_tick;
	uint64_t self_tick_rq;         /* the tick's instant on its run-queue clock (0: unknown) */
	/* on-CPU mode, csampler real-time: every other CPU taken at each tick
	 * (holders.h), started at the first tick; the tick they were armed for */
	struct holders *holders;
	bool holders_tried;
	bool realtime;                 /* the ticking thread is SCHED_FIFO or SCHED_RR */
	bool prejudged;                /* this tick's running threads were judged before
	                                * its interrupts (threads_judge_running) */
	uint64_t holders_armed_ns;
	/* --idle: periods that passed without a tick since the last one
	 * (csampler given no CPU in time), put on the next tick's reads */
	uint64_t idle_missed;
	size_t nclocks;                /* threads' task clocks open (sampler_switch.c) */
	bool clocks_refused;           /* perf events refused: none is opened */
	struct sampler_stats stats;
};

/* ---- sampler_threads.c -------------------------------------------------------- */

struct thread_state *threads_find(struct sampler *s, pid_t tid);
/* What the recorder's registry holds of T (pid, tid, process, key). */
static inline const struct recorder_followed *thread_id(const struct sampler *s,
							const struct thread_state *t)
{
	return recorder_followed(s->rec, (uint32_t)(t - s->threads));
}
/* Slot I's thread, or NULL if the slot is free. */
static inline struct thread_state *thread_at(struct sampler *s, size_t i)
{
	return recorder_followed(s->rec, (uint32_t)i)->tid ? &s->threads[i] : NULL;
}
size_t threads_take_due(struct sampler *s, uint64_t now);
void threads_schedule_read(struct sampler *s, struct thread_state *t, uint64_t now);
/* Open NAME ("schedstat", "stat", "syscall") of T into *FD unless open.
 * Within the descriptor budget it stays open; over it, a thread that ran
 * takes the descriptors of one long idle (descriptors go where the CPU
 * is), and any other gets a descriptor for this read only, closed by
 * threads_drop_transient. false if it cannot be opened (errno). */
bool threads_open_file(struct sampler *s, struct thread_state *t, const char *name, int *fd);
/* --idle, root: where ID waits in the kernel (/proc/TID/stack), the kernel
 * frames of SNAP (none if the kernel refuses, or they cannot be placed). */
void threads_read_kernel_stack(struct sampler *s, const struct recorder_followed *id,
			       struct unwind_snapshot *snap);
/* Open NAME of T for one read (the caller closes it): -1 if it cannot. */
int threads_open_once(struct sampler *s, struct thread_state *t, const char *name);
/* The holders of the tick (holders.h): started, waited for, armed for the
 * next one (on-CPU mode, csampler real-time). */
void threads_hold_cpus(struct sampler *s);
/* Of chosen[BASE, BASE + N), those 'R' on a CPU a holder took at the tick:
 * taken off it there, or waiting for it (intr_our_cpu), asked before the
 * holders let go. */
void threads_judge_held(struct sampler *s, size_t base, size_t n);
/* On-CPU mode, the running threads chosen[0, N) read at the tick, before
 * any interrupt: where each is alone on a CPU the tick took (the tick
 * thread's or a held one), none can run until the holders let go, so each is judged
 * now (intr_our_cpu; s->prejudged), and one that waited for its CPU at the
 * tick is left out, unstopped (stats.dropped_queued), but for a few of
 * those whose switch in is measured, stopped where they arrive (their stop
 * then only places it: threads_keep_stop); where any is not,
 * none is (the reads would delay the interrupts of those that may move:
 * they are judged after the interrupts are sent). Returns how many are
 * left, first in chosen[]. */
size_t threads_judge_running(struct sampler *s, size_t n);
/* On-CPU mode: whether the stop of T (registers R, seen stopped at SEEN_NS)
 * shows where it ran at the tick, so is counted; a dropped one is counted
 * in stats (dropped_waking, dropped_queued); of a thread whose switch in
 * is measured, it is marked t->stop_arrival: copied and counted where the
 * thread arrives next (STACK_WAKE at the exit of a call that waits, else
 * STACK_PREEMPT). */
struct user_regs_struct;
bool threads_keep_stop(struct sampler *s, struct thread_state *t, const struct user_regs_struct *r,
		       uint64_t seen_ns);
/* A stop of T kept, with registers R, in the round or late: counted by
 * where it was and where it came (stats.local_*, remote_*: report.h's
 * note compares them). */
void threads_count_kept_place(struct sampler *s, const struct thread_state *t,
			      const struct user_regs_struct *r);
/* On-CPU mode: the run time read for T goes to the recorder once T has a
 * key (the outputs give each thread the CPU the kernel says it used). */
void threads_account_cpu(struct sampler *s, struct thread_state *t);
/* Whether a thread first seen now was born while sampled (after the first
 * tick, or in a program started for us): what it used before is ours to
 * count then. */
bool threads_born_while_sampled(const struct sampler *s);
/* RUNTIME_NS read for T: the CPU it used since its last read waits in
 * cpu_unaccounted_ns (on-CPU mode). */
void threads_take_runtime(struct sampler *s, struct thread_state *t, uint64_t runtime_ns);
/* The time T waited for a CPU since its last read (SS, read at NOW), into
 * stats.waited_ns (see sampler_threads.c). */
struct procfs_schedstat;
void threads_count_wait(struct sampler *s, struct thread_state *t, const struct procfs_schedstat *ss,
			bool fresh, bool ran, uint64_t now);
/* T, on the CPU the tick thread runs on or one a holder took (its stat's
 * last CPU): TICK_CPU_TAKEN if T was on that CPU at the tick's instant
 * (its se.exec_start, set when it last got or left the CPU, is the stamp
 * of the switch that took the CPU, csampler's own or the holder's, or
 * between the instant and that stamp: it left the CPU after the instant,
 * going to sleep), TICK_CPU_WAITING if not (it waited there for the CPU,
 * or slept already), TICK_CPU_UNKNOWN where no stamp or clock is known.
 * For a thread found asleep ('S', 'D') in on-CPU mode, TAKEN means it ran
 * at the tick and slept before the CPU was taken. */
enum tick_cpu threads_took_cpu(struct sampler *s, struct thread_state *t);
/* T ran: keep the files opened for one read, making room by closing
 * those of threads long idle. */
void threads_keep_files(struct sampler *s, struct thread_state *t);
/* --idle: ADDRS (DEPTH, FLAGS) becomes T's last stack; without the memory
 * to hold it, T has none (its next sleeping tick reads it in place). */
void threads_keep_last(struct thread_state *t, const uint64_t *addrs, unsigned depth,
		       uint32_t flags);
/* Close the files of T opened for one read (threads_open_file). */
void threads_drop_transient(struct thread_state *t);
void threads_close_file(struct sampler *s, int *fd);
void threads_close_files(struct sampler *s, struct thread_state *t);
int threads_grow_scratch(struct sampler *s, size_t want);
void threads_reserve_next_tick(struct sampler *s);
void threads_queue(struct sampler *s, pid_t pid, pid_t tid);
/* Add the threads target found at the attach, their run times read now. */
void threads_take_attached(struct sampler *s);
/* Add the threads queued, each first read at tick NOW (the tick that adds
 * them, or the next one when added between ticks: a tick already past
 * would leave them in the wheel for a whole turn). */
int threads_add_pending(struct sampler *s, uint64_t now);
/* TID of PID stops on its way out (TARGET_EV_THREAD_EXITING): account the
 * CPU it used since its last read (sampler.c), so that the CPU of a thread
 * that lived a few ticks, or less than one, is not lost (the scaler pools
 * it with the other short-lived threads'). */
void threads_account_exit(struct sampler *s, pid_t pid, pid_t tid);
/* Whether TID waited to be added (threads_queue); it waits no more. */
bool threads_unqueue(struct sampler *s, pid_t tid);
void threads_retire(struct sampler *s, struct thread_state *t);
void threads_release_retired(struct sampler *s);
bool threads_read_stat(struct sampler *s, struct thread_state *t, char *state);
/* Of chosen[base, base + n), the threads target may not stop (a thread
 * with child processes whose child's SIGCHLD came for us) are counted
 * without a stack, each for its weight, and moved past the others: how
 * many are left to stop. */
size_t threads_count_unstoppable(struct sampler *s, size_t base, size_t n);
void threads_set_idle_level(struct sampler *s);

/* ---- sampler_switch.c ---------------------------------------------------------- */

/* On-CPU mode, T off its CPU (stopped) with schedstat SS read at NOW: at a
 * stop of ours (OWN_STOP), its task clock is opened if it has none (within
 * SWITCH_MAX_CLOCKS and half the descriptor budget), else read with SS as
 * its last pair (at most every SWITCH_PAIR_EVERY_NS); at its exit's stop,
 * read. The span of its own arrivals since the first pair goes to the
 * recorder (recorder_account_span) in the shares of its switches out:
 * voluntary (it came back where it waited) as its wake-ups', involuntary
 * as its preemptions'. */
void switch_clock_pair(struct sampler *s, struct thread_state *t, const struct procfs_schedstat *ss,
		       bool own_stop, uint64_t now);
/* T's span told as its wake-ups' and preemptions' (switch_clock_pair) to
 * the recorder once it has a key. */
void switch_span_account(struct sampler *s, struct thread_state *t);
/* T let go (gone, or sampling over): the span between its first and last
 * pairs into stats.switch_in_ns and switch_run_ns, its clock closed. */
void switch_clock_close(struct sampler *s, struct thread_state *t);

#endif
