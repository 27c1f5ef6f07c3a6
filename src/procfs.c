/* procfs: see procfs.h. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

ssize_t procfs_pread_text(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The unsigned decimal field at *P (which is left after it), or false. */
static bool stat_number(const char **p, unsigned long *out)
{
	const char *s = *p;
	unsigned long v = 0;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (ULONG_MAX - d) / 10)
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
	/* fields 4.. follow the state, one space before each */
	const char *p = close_paren + 3;
	for (int field = 4; field <= 39; field++) {
		if (*p != ' ')
			return true;
		p++;
		const char *start = p;
		unsigned long v;
		if (*p == '-')  /* a few fields are signed: their value is not used */
			p++;
		bool number = stat_number(&p, &v);
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
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	size_t n = 0, seen = 0;
	struct dirent *de;
	while (seen++ < PROCFS_SCAN_MAX && (de = readdir(d))) {
		char *end;
		long p = strtol(de->d_name, &end, 10);
		if (!*end && p > 0 && p <= INT_MAX && procfs_parent((pid_t)p) == pid)
			n++;
	}
	closedir(d);
	return n;
}
