/* procfs: reading the small /proc files csampler keeps open (a thread's
 * schedstat, stat, syscall). One pread from offset 0, so a kept-open file
 * is read afresh each time without a seek and without an allocation.
 *
 * procfs_pread_text reads at most SIZE-1 bytes of FD into BUF and ends it
 * with a NUL (SIZE > 0). Returns the byte count, or -1 with errno. */
#ifndef CSAMPLER_PROCFS_H
#define CSAMPLER_PROCFS_H
#include <stddef.h>
#include <sys/types.h>

ssize_t procfs_pread_text(int fd, char *buf, size_t size);

#endif
