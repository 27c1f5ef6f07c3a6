/* tempfile: unlinked scratch files (see tempfile.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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

int tempfile_write_at(int fd, const void *buf, size_t len, uint64_t offset)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)offset);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return -1;
		}
		p += w;
		len -= (size_t)w;
		offset += (uint64_t)w;
	}
	return 0;
}

int tempfile_read_at(int fd, void *buf, size_t len, uint64_t offset)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, (off_t)offset);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return -1;
		}
		p += r;
		len -= (size_t)r;
		offset += (uint64_t)r;
	}
	return 0;
}
