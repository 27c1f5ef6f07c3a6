/* outfile: output files made safely, for any writer.
 *
 * outfile_open judges the name before anything is written:
 *   - "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: that open
 *     descriptor (a closed one is an error now, not after sampling);
 *   - a regular file, or no file yet: written to an unnamed O_TMPFILE in
 *     the same directory (or, where the filesystem has none, a named temp
 *     ".NAME.csampler.PID.XXXXXX"), flushed, fsynced, and only then given
 *     the name; a file replaced keeps its owner and permission bits;
 *   - a FIFO, a terminal or the null device named directly: written in
 *     place (a temp file renamed over it would replace the node); a FIFO
 *     without blocking: its reader is waited for, and a write that makes
 *     no progress, 10 s at most, and never past a stop signal held for
 *     csampler (a FIFO nobody reads would hold it for good);
 *   - anything else is refused: a symbolic link as the last component (it
 *     is never followed: csampler runs as root in shared directories), a
 *     block or other character device, a socket, a directory.
 * On every error a line naming the cause is printed and nothing is left
 * under any name; a named temp left by a csampler killed while writing is
 * removed by the next run that writes the same name. */
#ifndef CSAMPLER_OUTFILE_H
#define CSAMPLER_OUTFILE_H
#include <stdio.h>

#include <stdbool.h>

struct outfile;

/* Whether PATH names csampler's standard output: "-", /dev/stdout,
 * /dev/fd/1, /proc/self/fd/1. */
bool outfile_is_stdout(const char *path);

/* Whether PATH would be accepted and its directory lets a file be made:
 * checked before sampling, so a mistake costs no run. 0, or -1 said. */
int outfile_check(const char *path);

/* Open PATH for writing (WHAT names the contents in messages, e.g. "the
 * folded output"). NULL with the cause said. */
struct outfile *outfile_open(const char *path, const char *what);
FILE *outfile_stream(struct outfile *of);
/* Flush, make durable and name the file; frees OF. 0, or -1 said (nothing
 * left under any name). */
int outfile_commit(struct outfile *of);
/* Drop what was written (the writer failed, errno says why: said here). */
void outfile_abort(struct outfile *of);

#endif
