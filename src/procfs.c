/* procfs: see procfs.h. */
#include "config.h"

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
