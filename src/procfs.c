/* procfs: see procfs.h. */
#include "config.h"

#include <limits.h>
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
		if (field == 9 && *start != '-')
			out->flags = v;
		if (field == 39 && *start != '-' && v <= INT_MAX && (*p == ' ' || *p == '\n' || !*p))
			out->cpu = (int)v;
	}
	return true;
}
