/* tempfile: unlinked scratch files (see tempfile.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tempfile.h"

const char *tempfile_dir(void)
{
	const char *dir = getenv("TMPDIR");
	return dir && *dir ? dir : "/tmp";
}

int tempfile_open(const char *dir, const char *name)
{
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = tempfile_dir();
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC | O_EXCL, 0600);
	if (fd >= 0)
		return fd;
	if (snprintf(path, sizeof path, "%s/csampler-%s-XXXXXX", dir, name) >= (int)sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* LEN bytes at OFFSET of FD, written from BUF (WRITE) or read into it,
 * whole: EINTR retried, a short transfer continued; a transfer of nothing
 * is ENOSPC for a write, EIO for a read. 0, or -1 with errno. */
static int transfer_at(int fd, unsigned char *p, size_t len, uint64_t offset, bool write)
{
	while (len) {
		ssize_t n = write ? pwrite(fd, p, len, (off_t)offset) : pread(fd, p, len, (off_t)offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = write ? ENOSPC : EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

int tempfile_write_at(int fd, const void *buf, size_t len, uint64_t offset)
{
	return transfer_at(fd, (unsigned char *)(uintptr_t)buf, len, offset, true);
}

int tempfile_read_at(int fd, void *buf, size_t len, uint64_t offset)
{
	return transfer_at(fd, buf, len, offset, false);
}
