/* tempfile: the unlinked scratch files of the bounded-memory rooms (the
 * stackmap's spill, the profile's samples, the writers' sorted runs).
 *
 * tempfile_open creates a file that has no name from the start (O_TMPFILE),
 * or loses it at once (mkostemp + unlink) where the filesystem cannot, so
 * nothing is left behind whatever happens to the process; it lives in DIR,
 * or $TMPDIR, or /tmp. tempfile_write_at writes all of BUF at OFFSET, and
 * tempfile_read_at reads all of LEN bytes from OFFSET into BUF, retrying
 * short transfers and EINTR (a file that ends first is EIO: our own file was
 * cut). Each returns -1 with errno on failure. */
#ifndef CSAMPLER_TEMPFILE_H
#define CSAMPLER_TEMPFILE_H
#include <stddef.h>
#include <stdint.h>

/* NAME appears in the temporary name of the fallback ("csampler-NAME-XXXXXX"). */
int tempfile_open(const char *dir, const char *name);
/* The directory tempfile_open(NULL, ...) uses: $TMPDIR, else /tmp. */
const char *tempfile_dir(void);
int tempfile_write_at(int fd, const void *buf, size_t len, uint64_t offset);
int tempfile_read_at(int fd, void *buf, size_t len, uint64_t offset);

#endif
