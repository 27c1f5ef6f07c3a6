/* procfs: see procfs.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "procfs.h"

ssize_t procfs_pread_text(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The unsigned decimal number at *P (which is left after it), or false when
 * there is none or it overflows. */
static bool decimal(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return true;
}

bool procfs_parse_stat(const char *buf, struct procfs_stat *out)
{
	const char *open_paren = strchr(buf, '(');
	const char *close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ' ||
	    close_paren[2] == '\0')
		return false;
	size_t len = (size_t)(close_paren - open_paren - 1);
	if (len >= sizeof out->comm)
		len = sizeof out->comm - 1;
	memcpy(out->comm, open_paren + 1, len);
	out->comm[len] = '\0';
	out->state = close_paren[2];
	out->flags = 0;
	out->cpu = -1;
	out->ppid = 0;
	out->utime = out->stime = 0;
	/* fields 4.. follow the state, one space before each */
	const char *p = close_paren + 3;
	for (int field = 4; field <= 39; field++) {
		if (*p != ' ')
			return true;
		p++;
		const char *start = p;
		uint64_t v;
		if (*p == '-')  /* a few fields are signed: their value is not used */
			p++;
		bool number = decimal(&p, &v);
		if (!number) {
			/* not a number: skip the field, keep counting; an
			 * empty one is not what Linux writes: stop there */
			while (*p && *p != ' ' && *p != '\n')
				p++;
			if (p == start)
				return true;
			continue;
		}
		if (field == 4 && *start != '-' && v <= INT_MAX)
			out->ppid = (pid_t)v;
		if (field == 9 && *start != '-')
			out->flags = v;
		if (field == 14 && *start != '-')
			out->utime = v;
		if (field == 15 && *start != '-')
			out->stime = v;
		if (field == 39 && *start != '-' && v <= INT_MAX && (*p == ' ' || *p == '\n' || !*p))
			out->cpu = (int)v;
	}
	return true;
}

pid_t procfs_parent(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = procfs_pread_text(fd, buf, sizeof buf);
	close(fd);
	struct procfs_stat st;
	return n > 0 && procfs_parse_stat(buf, &st) ? st.ppid : 0;
}

size_t procfs_count_children(pid_t pid)
{
	struct procfs_dir d;
	size_t n = 0;
	procfs_dir_open(&d, 0);
	for (pid_t p; (p = procfs_dir_next(&d)) > 0;)
		n += procfs_parent(p) == pid;
	procfs_dir_close(&d);
	return n;
}

size_t procfs_descendants(pid_t pid, pid_t *out, size_t max)
{
	struct pair { pid_t pid, parent; } *all = NULL;
	size_t n = 0, cap = 0, found = 0;
	struct procfs_dir d;
	procfs_dir_open(&d, 0);
	for (pid_t p; (p = procfs_dir_next(&d)) > 0;) {
		pid_t parent = procfs_parent(p);
		if (parent <= 0)
			continue;
		if (array_grow(&all, &cap, n + 1, sizeof *all, 256) < 0)
			break;   /* (out of memory: the processes listed so far) */
		all[n++] = (struct pair){ p, parent };
	}
	procfs_dir_close(&d);
	/* breadth first: the root's children, then those of each found in turn */
	for (size_t i = 0; i < n && found < max; i++)
		if (all[i].parent == pid)
			out[found++] = all[i].pid;
	for (size_t k = 0; k < found; k++)
		for (size_t i = 0; i < n && found < max; i++)
			if (all[i].parent == out[k])
				out[found++] = all[i].pid;
	free(all);
	return found;
}

/* Read FD from where it is into BUF, at most SIZE-1 bytes, NUL ended (the
 * bytes may hold NULs of their own); the count read. */
static size_t read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return len;
}

ssize_t procfs_read(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = read_all(fd, buf, size);
	int saved = errno;
	close(fd);
	errno = saved;
	return len > 0 ? (ssize_t)len : -1;
}

ssize_t procfs_read_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t size)
{
	char path[128];
	if (tid > 0)
		snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	else
		snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	return procfs_read(path, buf, size);
}

bool procfs_list_has(const char *list, pid_t id)
{
	for (const char *c = list; *c;) {
		while (*c == ' ' || *c == '\n')
			c++;
		if (*c < '0' || *c > '9')
			return false;
		long long v = 0;
		while (*c >= '0' && *c <= '9' && v <= INT_MAX)
			v = v * 10 + (*c++ - '0');
		if (v == id)
			return true;
		while (*c >= '0' && *c <= '9')   /* (an overlong number: no pid) */
			c++;
	}
	return false;
}

bool procfs_thread_has_child(pid_t pid, pid_t tid, pid_t child)
{
	char buf[4096];
	if (procfs_read_file(pid, tid, "children", buf, sizeof buf) <= 0)
		return false;   /* (none: the file is empty) */
	return child <= 0 ? buf[strspn(buf, " \n")] != '\0' : procfs_list_has(buf, child);
}

int procfs_open_task_file(int task_dir, pid_t pid, pid_t tid, const char *name)
{
	char path[128];
	if (task_dir >= 0) {
		snprintf(path, sizeof path, "%d/%s", (int)tid, name);
		return openat(task_dir, path, O_RDONLY | O_CLOEXEC);
	}
	snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int procfs_open_task_dir(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

void procfs_read_comm(pid_t pid, char *out, size_t size)
{
	ssize_t n = procfs_read_file(pid, 0, "comm", out, size);
	if (n <= 0)
		out[0] = '\0';
	else if (out[n - 1] == '\n')
		out[n - 1] = '\0';  /* (a comm may hold newlines of its own) */
}

size_t procfs_read_cmdline(pid_t pid, char *buf, size_t size)
{
	if (size == 0)
		return 0;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	if (fd >= 0) {
		n = read_all(fd, buf, size);
		close(fd);
	}
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return n;
}

const char *procfs_status_field(const char *buf, const char *name)
{
	size_t nl = strlen(name);
	const char *p = buf;
	while (p && *p) {
		if (strncmp(p, name, nl) == 0 && p[nl] == ':') {
			p += nl + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

long procfs_status_long(const char *buf, const char *name, long dflt)
{
	const char *v = procfs_status_field(buf, name);
	if (!v)
		return dflt;
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	return (end == v || errno) ? dflt : x;
}

bool procfs_parse_schedstat(const char *buf, struct procfs_schedstat *out)
{
	const char *p = buf;
	return decimal(&p, &out->runtime_ns) && *p++ == ' ' && decimal(&p, &out->run_delay_ns) &&
	       *p++ == ' ' && decimal(&p, &out->arrivals);
}

bool procfs_read_schedstat(int fd, struct procfs_schedstat *out)
{
	char buf[128];
	return procfs_pread_text(fd, buf, sizeof buf) > 0 && procfs_parse_schedstat(buf, out);
}

bool procfs_parse_exec_start(const char *buf, uint64_t *ns)
{
	const char *p = strstr(buf, "\nse.exec_start ");
	if (!p)
		return false;
	p += strlen("\nse.exec_start ");
	p += strspn(p, " ");
	if (*p++ != ':')
		return false;
	p += strspn(p, " ");
	uint64_t ms, frac;
	const char *f = NULL;
	if (!decimal(&p, &ms) || *p != '.' || (f = ++p, !decimal(&p, &frac)) || p - f != 6 ||
	    ms > UINT64_MAX / 1000000u - 1)
		return false;
	*ns = ms * 1000000u + frac;
	return true;
}

bool procfs_read_exec_start(int fd, uint64_t *ns)
{
	char buf[320];
	return procfs_pread_text(fd, buf, sizeof buf) > 0 && procfs_parse_exec_start(buf, ns);
}

bool procfs_exec_clock_offset(int fd, int64_t *rq_minus_mono)
{
	struct timespec a, cpu, b;
	uint64_t ns;
	if (clock_gettime(CLOCK_MONOTONIC, &a) < 0 || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) < 0 ||
	    clock_gettime(CLOCK_MONOTONIC, &b) < 0 || !procfs_read_exec_start(fd, &ns))
		return false;
	uint64_t ma = (uint64_t)a.tv_sec * 1000000000u + (uint64_t)a.tv_nsec;
	uint64_t mb = (uint64_t)b.tv_sec * 1000000000u + (uint64_t)b.tv_nsec;
	*rq_minus_mono = (int64_t)(ns - (ma + (mb - ma) / 2));
	return true;
}

bool procfs_fd_waits(pid_t pid, long fd)
{
	char path[64], link[32];
	if (fd < 0 || fd > INT32_MAX)
		return false;
	snprintf(path, sizeof path, "/proc/%d/fd/%ld", (int)pid, fd);
	ssize_t n = readlink(path, link, sizeof link - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	if (strncmp(link, "pipe:", 5) == 0 || strncmp(link, "socket:", 7) == 0)
		return true;
	/* (of the anonymous inodes, those a read waits on: a perf event's
	 * counter, read by a program timing itself, never does, and taken
	 * for a wait its exit was a wake-up's place) */
	static const char *const waiting[] = { "[eventfd]", "[timerfd]", "[signalfd]", "inotify",
					       "[fanotify]", "[userfaultfd]" };
	if (strncmp(link, "anon_inode:", 11) != 0)
		return false;
	for (size_t i = 0; i < sizeof waiting / sizeof waiting[0]; i++)
		if (strcmp(link + 11, waiting[i]) == 0)
			return true;
	return false;
}

bool procfs_dir_open(struct procfs_dir *d, pid_t pid)
{
	char path[64];
	if (pid > 0)
		snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	else
		snprintf(path, sizeof path, "/proc");
	d->seen = 0;
	d->dir = opendir(path);
	return d->dir != NULL;
}

pid_t procfs_dir_next(struct procfs_dir *d)
{
	struct dirent *de;
	while (d->dir && d->seen < PROCFS_SCAN_MAX && (de = readdir(d->dir))) {
		d->seen++;
		char *end;
		long id = strtol(de->d_name, &end, 10);
		if (!*end && id > 0 && id <= INT_MAX)
			return (pid_t)id;
	}
	return 0;
}

/* the signals whose default action is to do nothing */
#define SIGNALS_DEFAULT_IGNORED ((1ull << (17 - 1)) | (1ull << (18 - 1)) | (1ull << (23 - 1)) | \
				 (1ull << (28 - 1)))

uint64_t procfs_signals_that_reach(const char *status, uint64_t mask)
{
	const char *cgt = procfs_status_field(status, "SigCgt");
	const char *ign = procfs_status_field(status, "SigIgn");
	if (!cgt || !ign)
		return mask;
	uint64_t caught = strtoull(cgt, NULL, 16), ignored = strtoull(ign, NULL, 16);
	return mask & (caught | ~(ignored | SIGNALS_DEFAULT_IGNORED));
}

size_t procfs_open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	size_t n = 0;
	if (!dir)
		return 0;
	for (struct dirent *de; n < PROCFS_SCAN_MAX && (de = readdir(dir));)
		n += de->d_name[0] != '.';
	closedir(dir);
	return n;
}

void procfs_dir_close(struct procfs_dir *d)
{
	if (d->dir)
		closedir(d->dir);
	d->dir = NULL;
}

ssize_t procfs_read_memory(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

bool procfs_read_memory_all(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return len && procfs_read_memory(pid, addr, buf, len) == (ssize_t)len;
}
