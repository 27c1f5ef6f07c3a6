/* recorder: what any sampling backend (backend.h) needs to turn a thread's
 * registers and stack into counted samples, whatever took them (ptrace
 * rounds in sampler.h, the kernel's perf events in perf_sampler.h).
 *
 * It keeps every process seen, each with its mappings (procmaps; a file many
 * processes map is opened once) and its unwinder; the one registry of the
 * threads followed (tid -> slot: process, key), beside which each backend
 * keeps only its own state per thread, by slot; gives each (pid, tid,
 * thread name, process name) a dense thread key, the stackmap's; copies a
 * stopped thread's registers and stack window (recorder_capture), unwinds a
 * copy and counts it in the stackmap, and in the timeline when one is set
 * (recorder_count_snapshot); and keeps the counters and pause times the
 * summary reports. It makes no ptrace call and reads no thread state: the
 * backend says which thread, when, and how many periods a sample stands for.
 * Nothing it does while counting allocates once keys are reserved
 * (recorder_reserve_keys). */
#ifndef CSAMPLER_RECORDER_H
#define CSAMPLER_RECORDER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "procmaps.h"
#include "stackmap.h"
#include "unwind.h"

struct ksyms;

/* What the recorder has to tell its user, as it happens (once a run each,
 * but a CPython interpreter's layout, once a process with -v); report.h
 * words it (report_notice). */
enum recorder_notice_kind {
	RECORDER_NOTICE_RUNTIME,        /* PID runs a runtime (runtime.h): TEXT says
	                                 * how its state is read (-v), or why not */
	RECORDER_NOTICE_UNREADABLE,     /* PID (COMM) refuses us its memory (EPERM) */
	RECORDER_NOTICE_MAPS,           /* PID's mappings cannot be read (ERR; -v) */
	RECORDER_NOTICE_SPILL,          /* the spill file cannot be written (ERR):
	                                 * samples beyond memory are lost from now on */
	RECORDER_NOTICE_TIMELINE,       /* the timeline file cannot be written (ERR) */
};
struct recorder_notice {
	enum recorder_notice_kind kind;
	pid_t pid;
	const char *comm;
	int err;                        /* an errno */
	const char *text;               /* (RUNTIME) what follows "process PID " */
};

struct recorder_config {
	unsigned max_depth;             /* frames unwound at most */
	size_t stack_window;            /* a process's stack copies start at this
	                                 * (unwind_set_window); 0: no window */
	bool python;                    /* read CPython frames (unwind_new) */
	bool kernel_in_place;           /* blocked threads' kernel frames may be
	                                 * placed (--idle, a server's idle=1): the
	                                 * kernel's symbols are read at recorder_new,
	                                 * where /proc/TID/stack is readable, not at
	                                 * a tick (0.1 s) */
	int verbose;
	void (*tell)(const struct recorder_notice *n); /* NULL: nothing said */
};

/* A process seen. Its index (0, 1, ... in the order seen) stays its own. */
struct recorder_process {
	pid_t pid;
	bool alive;
	size_t index;
	char comm[64];                  /* raw; writers escape */
	struct procmaps *maps;
	struct unwinder *unwinder;      /* NULL once gone and released */
	bool sampled;                   /* a stack of it was counted (its mappings are
	                                 * kept past its end for the symbols) */
	uint64_t maps_read_ns;          /* its mappings were last read then (a sample's) */
	uint64_t maps_read_cost_ns;     /* and that read took so long */
	uint64_t maps_read_least_ns;    /* the quickest read (a slow one was preempted) */
	unsigned maps_reads;            /* reads timed so far (the quickest is judged from
	                                 * MAPS_COST_READS of them: recorder.c) */
	uint64_t maps_generation;       /* procmaps_code_generation as last seen at a stop */
	uint64_t maps_watch_until_ns;   /* it loaded code lately: read at each
	                                 * stop until then (recorder.c) */
	bool runtime_told[RUNTIME_KINDS]; /* what each runtime found allows was said */
};

/* What a thread key in the stackmap stands for. */
struct recorder_thread {
	pid_t pid, tid;
	char name[64];                  /* thread comm as read (raw; writers escape) */
	char process[64];               /* comm of the process (thread group leader) */
};

struct recorder_stats {
	uint64_t samples;               /* periods counted (a sample of a thread read
	                                 * with probability 1/k counts k) */
	uint64_t unwind_results[UNWIND_NRESULTS];  /* periods, by how their unwind ended */
	uint64_t truncated;             /* periods of stacks the outputs mark [truncated] */
	uint64_t arrivals;              /* stops counted at arrivals (STACK_ARRIVAL) */
	uint64_t unreadable;            /* stack copies refused (EPERM: not dumpable) */
	uint64_t python;                /* periods of stacks with Python frames */
	uint64_t pause_p50_ns, pause_p99_ns; /* target pause per sample (recorder_record_pause) */
	uint64_t keys_held, keys_made;  /* thread keys held now, and made in all */
	uint64_t fp_continued;          /* periods of stacks made whole by the kernel's
	                                 * frame-pointer chain (unwind_fp_continue) */
	size_t window_widest;           /* the widest a process's stack window grew
	                                 * to (unwind_widen); 0: none grew */
};

struct recorder;

struct recorder *recorder_new(struct stackmap *m, const struct recorder_config *cfg);
void recorder_free(struct recorder *r);

/* Count the following samples in M (--top: one map per refresh window); the
 * caller keeps owning the previous map. */
void recorder_set_stackmap(struct recorder *r, struct stackmap *m);
/* Also record every sample with its time in TL, or stop (NULL). The caller
 * owns TL. */
struct timeline;
void recorder_set_timeline(struct recorder *r, struct timeline *tl);
/* Several windows fed by one stream (--serve): count every following sample
 * in M (and TL, if not NULL) too, besides the other sinks, until
 * recorder_remove_sink(M). At most RECORDER_MAX_SINKS at once (-1 when
 * full). A recorder made with a NULL map has no sink until one is added. */
#define RECORDER_MAX_SINKS 8
int recorder_add_sink(struct recorder *r, struct stackmap *m, struct timeline *tl);
void recorder_remove_sink(struct recorder *r, const struct stackmap *m);

/* The live process PID, added (its mappings read) if not seen yet; NULL
 * out of memory. */
struct recorder_process *recorder_add_process(struct recorder *r, pid_t pid);
/* The live process PID, or NULL. */
struct recorder_process *recorder_find_process(struct recorder *r, pid_t pid);
/* P replaced its program (exec): its mappings, unwinder caches and name. */
void recorder_process_exec(struct recorder *r, struct recorder_process *p);
/* P exited: its mappings are kept for symbolizing. */
void recorder_process_exit(struct recorder *r, struct recorder_process *p);
/* Free the unwinders of the processes gone (once no copy of theirs waits
 * to be unwound). */
void recorder_release_gone(struct recorder *r);

/* The key of thread TID of P named COMM; CURRENT (the thread's last key, or
 * UINT32_MAX) when it still matches. UINT32_MAX out of memory. */
uint32_t recorder_thread_key(struct recorder *r, const struct recorder_process *p, pid_t tid,
			     const char *comm, uint32_t current);
/* Forget every thread key (their room is kept): only when no stackmap or
 * timeline holds a key any more and no backend keeps one (--serve, between
 * streams). */
void recorder_forget_threads(struct recorder *r);
/* Free the keys no sink can hold: those not counted since the oldest sink
 * now counting began (a recorder_add_sink or recorder_set_stackmap), and
 * not the key of a thread followed (which counts with it again). A freed
 * key is made again for another thread. Only once every stackmap and
 * timeline no longer counting has been read (built, written), between
 * ticks: an --interval run, or a --serve stream kept running by windows
 * that always overlap, then holds the keys of live threads and open
 * windows, not one per thread a long-lived service ever made. */
void recorder_collect_threads(struct recorder *r);
/* The threads followed: one registry for every backend. A backend follows
 * each thread it samples: its tid gets a slot, the thread's until it is
 * unfollowed, holding what the thread is (process, key); the backend keeps
 * its own state per thread in an array by slot, as long as
 * recorder_thread_slots. Room is made between ticks
 * (recorder_reserve_threads: the registry may move, a slot never changes),
 * so following allocates nothing. A backend unfollows its threads when it
 * ends: the next session's backend (a --serve stream, a recording resumed
 * after Ctrl-Z) starts from none. */
#define RECORDER_NO_SLOT UINT32_MAX
struct recorder_followed {
	pid_t pid, tid;                 /* tid 0: a free slot */
	struct recorder_process *proc;
	uint32_t key;                   /* UINT32_MAX until named */
};
/* Room for MORE threads followed beyond those now: 0, or -1 out of memory. */
int recorder_reserve_threads(struct recorder *r, size_t more);
/* The slots there are, used or free. */
size_t recorder_thread_slots(const struct recorder *r);
/* Follow thread TID (not followed yet) of P: its slot, the lowest free
 * one after a growth; RECORDER_NO_SLOT when no room was reserved. */
uint32_t recorder_follow_thread(struct recorder *r, struct recorder_process *p, pid_t tid);
/* TID's slot, or RECORDER_NO_SLOT. */
uint32_t recorder_followed_slot(const struct recorder *r, pid_t tid);
/* The thread in SLOT (< recorder_thread_slots; tid 0: free). */
const struct recorder_followed *recorder_followed(const struct recorder *r, uint32_t slot);
/* SLOT's thread is no longer followed (its key lives until collected). */
void recorder_unfollow_thread(struct recorder *r, uint32_t slot);
/* SLOT's thread is named COMM (as the backend read it): its key, made
 * again if its name changed; UINT32_MAX out of memory. */
uint32_t recorder_name_thread(struct recorder *r, uint32_t slot, const char *comm);
/* Threads followed now. */
size_t recorder_nfollowed(const struct recorder *r);

/* The kernel says thread KEY used NS more of CPU (a backend that stops
 * threads reads it): every sink counting now keeps it beside its counts,
 * and the outputs give each thread that total (stackmap_scaler_init). */
void recorder_account_cpu(struct recorder *r, uint32_t key, uint64_t ns);
/* Of KEY's CPU told so far, NS was the switch into it where it came back
 * from its waits (CLASS STACK_WAKE) or where it was preempted
 * (STACK_PREEMPT): given to its stacks of that flag (stackmap_add_span). */
void recorder_account_span(struct recorder *r, uint32_t key, uint32_t class, uint64_t ns);
/* The CPU of a thread that ends with no key (never sampled): counted with
 * the short-lived threads' (STACKMAP_POOL_KEY), with no key made. */
void recorder_account_unnamed_cpu(struct recorder *r, uint64_t ns);
/* Every thread's CPU reaches the accounts to its end: each map counted
 * into, now and later, is told so (stackmap_set_account_whole). */
void recorder_set_account_whole(struct recorder *r);
/* Room for MORE keys, made between ticks. */
void recorder_reserve_keys(struct recorder *r, size_t more);

/* Copy the registers REGS and stack window of stopped thread TID of P into
 * SNAP. 0, or -1 (the process refuses its memory: said once). */
int recorder_capture(struct recorder *r, struct recorder_process *p, pid_t tid,
		     const struct user_regs_struct *regs, struct unwind_snapshot *snap);
/* Count SNAP's kernel frames alone (no user context: a sample the kernel
 * took in an exec between two programs, an exit, a thread's start) for
 * KEY, with FLAGS. */
void recorder_count_kernel(struct recorder *r, uint32_t key, uint32_t flags,
			   const struct unwind_snapshot *snap, unsigned count);
/* Whether recorder_kernel_stack can place frames: kernel_in_place, root
 * (/proc/TID/stack readable) and the kernel's addresses shown. */
bool recorder_places_kernel(const struct recorder *r);
/* The kernel frames of TEXT (LEN bytes of /proc/TID/stack), placed with
 * /proc/kallsyms (read at recorder_new, never at a tick): at most MAX into
 * OUT (address.h's
 * kernel return addresses), their count; 0 where they cannot be placed. */
size_t recorder_kernel_stack(struct recorder *r, const char *text, size_t len, uint64_t *out,
			     size_t max);
/* Unwind SNAP of P and count it for KEY, standing for COUNT periods. The
 * addresses, their depth and the stack's flags are left in *ADDRS, *DEPTH
 * and *FLAGS (valid until the next call) for a backend that reuses them;
 * *FLAGS holds on entry the flags to add (STACK_ARRIVAL: a stop at an
 * arrival, counted in stats.arrivals, not as periods). */
void recorder_count_snapshot(struct recorder *r, struct recorder_process *p, uint32_t key,
			     const struct unwind_snapshot *snap, unsigned count,
			     const uint64_t **addrs, unsigned *depth, uint32_t *flags);
/* Count a stack already unwound (or none: DEPTH 0 with STACK_NOT_CAPTURED). */
void recorder_count(struct recorder *r, uint32_t key, uint32_t flags, const uint64_t *addrs,
		    unsigned depth, unsigned count);
/* Between ticks: read the mappings of the processes sampled again when due
 * (every 100 reads' time, 10 ms to 1 s), to see a library unloaded and
 * another loaded at its address (no address falls outside the mappings
 * known then); a process seen to unload code is read before each of its
 * samples from then on (recorder_count_snapshot). Every live process gets
 * room for a few new mappings (procmaps_reserve), so the next tick reads
 * a new thread's stack mapping without allocating. */
void recorder_read_maps(struct recorder *r);
/* A target thread was paused from FROM_NS to DONE_NS (CLOCK_MONOTONIC). */
void recorder_record_pause(struct recorder *r, uint64_t from_ns, uint64_t done_ns);

/* Thread keys held (made, not freed). */
size_t recorder_nthreads(const struct recorder *r);
const struct recorder_thread *recorder_thread(const struct recorder *r, uint32_t key);
/* Every process seen, with its mappings (for symbolization). */
size_t recorder_nprocesses(const struct recorder *r);
struct procmaps *recorder_process_maps(const struct recorder *r, size_t i);
/* The kernel's symbols read at recorder_new (cfg.kernel_in_place, where
 * /proc/TID/stack is readable), or NULL; they live until recorder_free. */
const struct ksyms *recorder_kernel_symbols(const struct recorder *r);
void recorder_get_stats(const struct recorder *r, struct recorder_stats *out);

#endif
