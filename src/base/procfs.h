/* procfs: every read of a process's or thread's state in /proc (the
 * mappings are procmaps'): the small files csampler keeps open (a thread's
 * schedstat, stat, syscall) and those it reads once (status, comm, cmdline),
 * the task and process directories, and the parsers of what they hold.
 * Their text is the target's: every parser is bounded and fuzzed.
 *
 * procfs_pread_text reads at most SIZE-1 bytes of FD into BUF and ends it
 * with a NUL (SIZE > 0): one pread from offset 0, so a kept-open file is
 * read afresh each time without a seek and without an allocation. Returns
 * the byte count, or -1 with errno.
 *
 * procfs_parse_stat parses the text of /proc/PID[/task/TID]/stat, any bytes
 * up to a NUL: "pid (comm) S f4 f5 ...". The comm runs from the first '('
 * to the last ')' (it may hold anything, parentheses and spaces included)
 * and is cut to fit COMM_SIZE with a NUL. The state letter must follow the
 * ") ". ppid is field 4, flags field 9, utime and stime fields 14 and 15, cpu field 39 (the CPU the thread last ran on), -1 when the line
 * is shorter or that field is not a number. false on a line without comm
 * and state (OUT is then unspecified).
 *
 * procfs_parent and procfs_count_children read /proc/PID/stat files of
 * other processes (a scan of /proc bounded by PROCFS_SCAN_MAX entries). */
#ifndef CSAMPLER_PROCFS_H
#define CSAMPLER_PROCFS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCFS_COMM_SIZE 64

struct procfs_stat {
	char comm[PROCFS_COMM_SIZE];
	char state;
	pid_t ppid;           /* field 4, the parent's pid; 0 when absent */
	unsigned long flags;  /* field 9 (PF_*); 0 when absent */
	int cpu;              /* field 39, or -1 */
	uint64_t utime, stime; /* fields 14, 15: clock ticks in user code and in
	                        * the kernel; 0 when absent */
};

ssize_t procfs_pread_text(int fd, char *buf, size_t size);
bool procfs_parse_stat(const char *buf, struct procfs_stat *out);

/* A whole small file of /proc into BUF (at most SIZE-1 bytes, NUL ended);
 * its length, or -1 (errno) when it cannot be opened or is empty. */
ssize_t procfs_read(const char *path, char *buf, size_t size);
/* procfs_read of /proc/PID/NAME, or of /proc/PID/task/TID/NAME when TID > 0. */
ssize_t procfs_read_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t size);
/* Open /proc/PID/task/TID/NAME read-only, relative to TASK_DIR (an open
 * /proc/PID/task: a shorter path walk) when it is >= 0. */
int procfs_open_task_file(int task_dir, pid_t pid, pid_t tid, const char *name);
/* Open /proc/PID/task as a directory descriptor, or -1. */
int procfs_open_task_dir(pid_t pid);

/* The comm of PID as the kernel has it (raw bytes, the newline dropped), or
 * "" when it is gone. */
void procfs_read_comm(pid_t pid, char *out, size_t size);
/* /proc/PID/cmdline with its NULs as spaces (trailing ones dropped), cut to
 * SIZE-1 bytes and NUL ended; its length (0 when gone or empty). */
size_t procfs_read_cmdline(pid_t pid, char *buf, size_t size);

/* The value after "NAME:" at the start of a line of a status file's text,
 * or NULL; as a number, or DFLT where it is absent or not one. */
const char *procfs_status_field(const char *buf, const char *name);
long procfs_status_long(const char *buf, const char *name, long dflt);
/* Whether ID is one of the numbers of LIST, a children file's text (pids
 * separated by spaces). */
bool procfs_list_has(const char *list, pid_t id);
/* Whether thread TID of PID has child processes not reaped yet (its
 * /proc/PID/task/TID/children lists one); with CHILD > 0, whether CHILD is
 * one of them (a list of more than 4 KiB is read that far). */
bool procfs_thread_has_child(pid_t pid, pid_t tid, pid_t child);

/* /proc/.../schedstat: "run_time run_delay arrivals" (ns, ns, count). */
struct procfs_schedstat {
	uint64_t runtime_ns, run_delay_ns, arrivals;
};
bool procfs_parse_schedstat(const char *buf, struct procfs_schedstat *out);
/* Read kept-open schedstat FD afresh and parse it. */
bool procfs_read_schedstat(int fd, struct procfs_schedstat *out);

/* /proc/.../sched (CONFIG_SCHED_DEBUG): "se.exec_start : MS.NNNNNN", the
 * run-queue clock (ns) at which the task last began running or was last
 * brought up to date on its CPU; false where the line is absent or not a
 * number. Read from FD's first bytes (the line is the third). */
bool procfs_parse_exec_start(const char *buf, uint64_t *ns);
bool procfs_read_exec_start(int fd, uint64_t *ns);
/* The calling thread's run-queue clock less CLOCK_MONOTONIC (ns), by its
 * own sched file FD: clock_gettime(CLOCK_THREAD_CPUTIME_ID) brings its
 * se.exec_start up to the present, between two monotonic reads (so it is
 * known to about a microsecond). It drifts with steal time: read it where
 * it is used. Clobbers exec_start: read the stamp wanted first. */
bool procfs_exec_clock_offset(int fd, int64_t *rq_minus_mono);

/* Of the signals in MASK (bit n-1: signal n), those that would reach the
 * thread whose status file's text is STATUS if it were not traced: caught
 * (SigCgt), or at a default action other than nothing (not SIGCHLD,
 * SIGURG, SIGWINCH or SIGCONT), and not ignored (SigIgn). The kernel drops
 * the others as they come for a process that is not traced, and queues
 * them only for its tracer. MASK itself when STATUS lacks those lines. */
uint64_t procfs_signals_that_reach(const char *status, uint64_t mask);

/* LEN bytes of the memory of process (or thread) PID at ADDR into BUF,
 * with one process_vm_readv: the count read (fewer where the mapping
 * ends), or -1 with errno (EFAULT: nothing mapped there; ESRCH; EPERM).
 * The one reader of a target's memory but for those that read several
 * ranges at once. */
ssize_t procfs_read_memory(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Whether all LEN (not 0) bytes were read. */
bool procfs_read_memory_all(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Whether fd FD of process PID is a pipe, a socket or an anonymous inode
 * a read waits on (eventfd, timerfd, signalfd, inotify, fanotify,
 * userfaultfd; not a perf event's): a read of it waits for a writer. */
bool procfs_fd_waits(pid_t pid, long fd);


/* Entries of /proc a scan reads at most. */
#define PROCFS_SCAN_MAX 1000000

/* The numeric entries of a /proc directory, at most PROCFS_SCAN_MAX read:
 * for (procfs_dir_open(&d, pid); (id = procfs_dir_next(&d)) > 0;) ...;
 * procfs_dir_close(&d). PID 0 lists /proc (processes), else
 * /proc/PID/task (threads). procfs_dir_open returns false when the
 * directory cannot be opened (the process is gone); next then ends at once. */
struct procfs_dir {
	void *dir;
	size_t seen;
};
bool procfs_dir_open(struct procfs_dir *d, pid_t pid);
pid_t procfs_dir_next(struct procfs_dir *d);
void procfs_dir_close(struct procfs_dir *d);

/* How many descriptors csampler has open (/proc/self/fd, at most
 * PROCFS_SCAN_MAX counted). */
size_t procfs_open_fds(void);

/* The parent of process PID (its stat's field 4), or 0 when it is gone. */
pid_t procfs_parent(pid_t pid);
/* How many processes have PID as their parent now. */
size_t procfs_count_children(pid_t pid);
/* The descendants of PID (children, their children...), parents before
 * their children, at most MAX into OUT (one scan of /proc, bounded by
 * PROCFS_SCAN_MAX entries); how many. */
size_t procfs_descendants(pid_t pid, pid_t *out, size_t max);

#endif
