/* procfs: reading the small /proc files csampler keeps open (a thread's
 * schedstat, stat, syscall), and parsing a stat line.
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
 * ") ". ppid is field 4, flags field 9, cpu field 39 (the CPU the thread last ran on), -1 when the line
 * is shorter or that field is not a number. false on a line without comm
 * and state (OUT is then unspecified).
 *
 * procfs_parent and procfs_count_children read /proc/PID/stat files of
 * other processes (a scan of /proc bounded by PROCFS_SCAN_MAX entries). */
#ifndef CSAMPLER_PROCFS_H
#define CSAMPLER_PROCFS_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PROCFS_COMM_SIZE 64

struct procfs_stat {
	char comm[PROCFS_COMM_SIZE];
	char state;
	pid_t ppid;           /* field 4, the parent's pid; 0 when absent */
	unsigned long flags;  /* field 9 (PF_*); 0 when absent */
	int cpu;              /* field 39, or -1 */
};

ssize_t procfs_pread_text(int fd, char *buf, size_t size);
bool procfs_parse_stat(const char *buf, struct procfs_stat *out);

/* Entries of /proc a scan reads at most. */
#define PROCFS_SCAN_MAX 1000000
/* The parent of process PID (its stat's field 4), or 0 when it is gone. */
pid_t procfs_parent(pid_t pid);
/* How many processes have PID as their parent now. */
size_t procfs_count_children(pid_t pid);

#endif
