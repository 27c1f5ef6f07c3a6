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
 * A file is made in its directory as opened once (O_PATH), by outfile_check
 * before sampling where the caller keeps that descriptor, and every step is
 * taken relative to it (openat, linkat, renameat): a directory of the path
 * swapped for a link during the run (another user's, in /tmp) changes
 * nothing; the file lands where the name pointed when it was checked.
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
 * checked before sampling, so a mistake costs no run. 0, or -1 said. *DIR:
 * the directory's descriptor (O_PATH), the caller's to pass to
 * outfile_open and close; -1 for an output written in place. */
int outfile_check(const char *path, int *dir);

/* Open PATH for writing (WHAT names the contents in messages, e.g. "the
 * folded output"), in the directory DIR (outfile_check's; -1: PATH's, as
 * it resolves now). NULL with the cause said. */
struct outfile *outfile_open(const char *path, int dir, const char *what);
FILE *outfile_stream(struct outfile *of);
/* Flush, make durable and name the file; frees OF. 0, or -1 said (nothing
 * left under any name). */
int outfile_commit(struct outfile *of);
/* Drop what was written (the writer failed, errno says why: said here). */
void outfile_abort(struct outfile *of);

#endif
