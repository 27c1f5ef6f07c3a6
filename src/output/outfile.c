/* outfile: output files made safely (see outfile.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "outfile.h"

enum outfile_kind {
	OUTFILE_NEW,       /* no file yet */
	OUTFILE_REGULAR,   /* a regular file, replaced */
	OUTFILE_NODE,      /* a FIFO, terminal or null device: written in place */
	OUTFILE_FD,        /* an open descriptor of csampler's: "-", /dev/stdout... */
};

/* A FIFO's writes wait for its reader at most this long without progress
 * (a reader that holds it open and reads nothing), and its open as long
 * for a reader to come. */
#define FIFO_STALL_NS 10000000000ull
/* How often a wait on a FIFO looks for a stop signal held for csampler. */
#define FIFO_POLL_MS 100

struct outfile {
	enum outfile_kind kind;
	char *path;
	const char *what;
	struct stat old;       /* OUTFILE_REGULAR: the file replaced */
	FILE *out;
	int dir;               /* the directory it is made in (O_PATH), or -1 */
	int unnamed;           /* the O_TMPFILE to link, or -1 */
	char *temp;            /* the named temp in DIR (no O_TMPFILE there), or NULL */
	int fifo;              /* a FIFO written in place (non-blocking), or -1 */
};

/* Whether one of the stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT) waits,
 * held by csampler's mask (the modes hold them while they run). */
static bool stop_signal_waits(void)
{
	sigset_t pending;
	if (sigpending(&pending) < 0)
		return false;
	return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 ||
	       sigismember(&pending, SIGHUP) == 1 || sigismember(&pending, SIGQUIT) == 1;
}

/* Open the FIFO NODE (an O_PATH descriptor) for writing without blocking:
 * its reader is waited for FIFO_STALL_NS, or until a stop signal comes
 * (not looked for before sampling: opening it to see would end a reader
 * such as cat at once). The descriptor (O_NONBLOCK), or -1 said. */
static int fifo_open(int node, const char *path)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", node);
	uint64_t deadline = clock_monotonic_ns() + FIFO_STALL_NS;
	for (;;) {
		int fd = open(proc, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd >= 0 || errno != ENXIO)
			return fd >= 0 ? fd : (warn_errno("cannot open %s", path), -1);
		if (stop_signal_waits() || clock_monotonic_ns() >= deadline) {
			warn("cannot write %s: nobody read the FIFO in %llu s; start its reader first",
			     path, (unsigned long long)(FIFO_STALL_NS / 1000000000u));
			errno = ENXIO;
			return -1;
		}
		poll(NULL, 0, FIFO_POLL_MS);
	}
}

/* fopencookie's write of a FIFO: all of BUF, waiting for the reader with
 * poll, at most FIFO_STALL_NS without progress and never past a stop
 * signal (csampler holds them while it writes; a reader that never reads
 * would otherwise hold it for good). */
static ssize_t fifo_write(void *cookie, const char *buf, size_t size)
{
	struct outfile *of = cookie;
	size_t done = 0;
	uint64_t deadline = clock_monotonic_ns() + FIFO_STALL_NS;
	while (done < size) {
		ssize_t n = write(of->fifo, buf + done, size - done);
		if (n > 0) {
			done += (size_t)n;
			deadline = clock_monotonic_ns() + FIFO_STALL_NS;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return done ? (ssize_t)done : -1;
		if (stop_signal_waits() || clock_monotonic_ns() >= deadline) {
			errno = ETIMEDOUT;
			return done ? (ssize_t)done : -1;
		}
		struct pollfd pfd = { .fd = of->fifo, .events = POLLOUT };
		poll(&pfd, 1, FIFO_POLL_MS);
	}
	return (ssize_t)done;
}

static int fifo_close(void *cookie)
{
	struct outfile *of = cookie;
	int rc = close(of->fifo);
	of->fifo = -1;
	return rc;
}

/* The descriptor a name of one stands for: "-" and /dev/stdout 1,
 * /dev/stderr 2, /dev/fd/N and /proc/self/fd/N N; else -1. */
static int named_descriptor(const char *path)
{
	if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0)
		return STDOUT_FILENO;
	if (strcmp(path, "/dev/stderr") == 0)
		return STDERR_FILENO;
	const char *n = strncmp(path, "/dev/fd/", 8) == 0 ? path + 8 :
			strncmp(path, "/proc/self/fd/", 14) == 0 ? path + 14 : NULL;
	if (!n || *n < '0' || *n > '9')
		return -1;
	char *end;
	long fd = strtol(n, &end, 10);
	return *end || fd > INT_MAX ? -1 : (int)fd;
}

bool outfile_is_stdout(const char *path)
{
	return named_descriptor(path) == STDOUT_FILENO;
}

/* Whether FD is open for writing (a closed standard descriptor is held
 * by /dev/null read-only: csampler.c). errno EBADF when not. */
static bool descriptor_writable(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && (fl & O_ACCMODE) == O_RDONLY)
		errno = EBADF;
	return fl >= 0 && (fl & O_ACCMODE) != O_RDONLY;
}

/* Character devices written in place: terminals and the null device. */
static bool writable_chardev(dev_t rdev)
{
	unsigned maj = major(rdev), min = minor(rdev);
	return (maj == 1 && min == 3) ||   /* null */
	       maj == 4 ||                  /* tty* */
	       (maj == 5 && min != 2) ||    /* /dev/tty, console (not ptmx: each open
	                                     * makes a new pseudo-terminal nobody reads) */
	       (maj >= 136 && maj <= 143);  /* pts */
}

static const char *node_kind(mode_t mode)
{
	return S_ISBLK(mode) ? "a block device" : S_ISCHR(mode) ? "a device" :
	       S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

/* The last component of PATH (a directory's: "."). */
static const char *leaf(const char *path)
{
	const char *s = strrchr(path, '/');
	s = s ? s + 1 : path;
	return *s ? s : ".";
}

/* The directory holding PATH, opened once (O_PATH): every later step is
 * made in it (openat, linkat, renameat), so a directory of the path
 * swapped meanwhile, for a link to elsewhere, changes nothing. -1 said. */
static int open_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
	if (n >= sizeof dir) {
		errno = ENAMETOOLONG;
		warn_errno("cannot create %s", path);
		return -1;
	}
	if (!slash)
		memcpy(dir, ".", 2);
	else if (slash == path)
		memcpy(dir, "/", 2);
	else {
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	int err = errno;
	struct stat st;
	if (err == ENOENT && stat(dir, &st) < 0)
		warn("cannot create %s: the directory %s does not exist", path, dir);
	else if (err == ENOTDIR)
		warn("cannot create %s: %s is not a directory", path, dir);
	else
		warn_errno("cannot create %s", path);
	errno = err;
	return -1;
}

/* Judge PATH (in the directory DIR) without following a link at its end:
 * its kind, and for a node written in place an O_PATH descriptor of it
 * (*NODE). 0, or -1 said. */
static int judge(int dir, const char *path, enum outfile_kind *kind, struct stat *st, int *node)
{
	*node = -1;
	int fd = openat(dir, leaf(path), O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) {
			*kind = OUTFILE_NEW;
			return 0;
		}
		warn_errno("cannot create %s", path);
		return -1;
	}
	if (fstat(fd, st) < 0) {
		warn_errno("cannot create %s", path);
		close(fd);
		return -1;
	}
	if (S_ISREG(st->st_mode)) {
		close(fd);
		*kind = OUTFILE_REGULAR;
		return 0;
	}
	if (S_ISFIFO(st->st_mode) || (S_ISCHR(st->st_mode) && writable_chardev(st->st_rdev))) {
		*kind = OUTFILE_NODE;
		*node = fd;
		return 0;
	}
	close(fd);
	if (S_ISDIR(st->st_mode)) {
		warn("cannot write %s: it is a directory; name a file in it", path);
		errno = EISDIR;
		return -1;
	}
	if (S_ISLNK(st->st_mode))
		warn("refusing to write %s: it is a symbolic link, and csampler does not follow one "
		     "at the end of an output's name; name the file itself, or remove the link", path);
	else
		warn("refusing to write %s: it is %s; csampler writes regular files, FIFOs, terminals "
		     "and /dev/null", path, node_kind(st->st_mode));
	errno = EINVAL;
	return -1;
}

/* The permissions a new file gets from open(0666) under the current umask. */
static mode_t creation_mode(void)
{
	mode_t mask = umask(022);
	umask(mask);
	return 0666 & ~mask;
}

/* The temp-name prefix of PATH's outputs: ".NAME.csampler." */
static int temp_prefix(const char *path, char *buf, size_t size)
{
	return snprintf(buf, size, ".%s.csampler.", leaf(path));
}

/* Remove, in DIR, the named temps of PATH left by a csampler that is gone
 * (killed while writing): ".NAME.csampler.PID.XXXXXX", a regular file of
 * ours whose PID no longer runs. */
static void sweep_stale_temps(int dir, const char *path)
{
	char prefix[NAME_MAX + 32];
	int plen = temp_prefix(path, prefix, sizeof prefix);
	if (plen <= 0 || (size_t)plen >= sizeof prefix)
		return;
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, (size_t)plen) != 0)
			continue;
		char *end;
		long pid = strtol(e->d_name + plen, &end, 10);
		struct stat st;
		if (pid <= 0 || *end != '.' || strlen(end) != 7 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && st.st_uid == geteuid())
			(void)unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* A fresh temp name for PATH's output, in its directory:
 * ".NAME.csampler.PID.XXXXXX" with the X's drawn, in a new string. */
static char *temp_name(const char *path)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char prefix[NAME_MAX + 32];
	temp_prefix(path, prefix, sizeof prefix);
	size_t n = strlen(prefix) + 40;
	char *t = malloc(n);
	if (!t)
		return NULL;
	int len = snprintf(t, n, "%s%ld.XXXXXX", prefix, (long)getpid());
	uint64_t r = clock_random_seed();
	for (int i = len - 6; i < len; i++, r /= 62)
		t[i] = chars[r % 62];
	return t;
}

/* A named temp for PATH's output made in DIR (a filesystem without
 * O_TMPFILE): its descriptor, *NAME its name there. -1 with errno. */
static int make_named_temp(int dir, const char *path, mode_t mode, char **name)
{
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		char *t = temp_name(path);
		if (!t)
			return -1;
		int fd = openat(dir, t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0) {
			*name = t;
			return fd;
		}
		int err = errno;
		free(t);
		if (err != EEXIST) {
			errno = err;
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

/* A file made in DIR, unnamed (O_TMPFILE), or named where the filesystem
 * has none (*NAME then set). -1 with errno. */
static int make_temp(int dir, const char *path, mode_t mode, char **name)
{
	*name = NULL;
	int fd = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
		fd = make_named_temp(dir, path, mode, name);
	return fd;
}

int outfile_check(const char *path, int *dir)
{
	enum outfile_kind kind;
	struct stat st;
	int node, fd = named_descriptor(path);

	*dir = -1;
	if (fd >= 0) {
		if (!descriptor_writable(fd)) {
			warn_errno("cannot write %s", fd == STDOUT_FILENO ? "to stdout" : path);
			return -1;
		}
		return 0;
	}
	int parent = open_parent(path);
	if (parent < 0)
		return -1;
	if (judge(parent, path, &kind, &st, &node) < 0) {
		close(parent);
		return -1;
	}
	if (kind == OUTFILE_NODE) {
		close(parent);
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", node);
		int ok = access(proc, W_OK);
		int err = errno;
		close(node);
		if (ok == 0)
			return 0;
		errno = err;
		warn_errno("cannot write %s", path);
		return -1;
	}
	/* create, unnamed, what outfile_open will create, and drop it */
	char *name;
	fd = make_temp(parent, path, 0600, &name);
	if (fd >= 0) {
		if (name)
			(void)unlinkat(parent, name, 0);
		free(name);
		close(fd);
		*dir = parent;
		return 0;
	}
	warn_errno("cannot create %s", path);
	close(parent);
	return -1;
}

static void outfile_free(struct outfile *of)
{
	if (of->unnamed >= 0)
		close(of->unnamed);
	if (of->dir >= 0)
		close(of->dir);
	free(of->temp);
	free(of->path);
	free(of);
}

/* A file replaced keeps its owner and permission bits (root writing over a
 * user's 0600 file must not leave a root-owned 0644 one); a new one gets
 * what open(0666) would under the umask. */
static void set_owner_mode(int fd, const struct outfile *of)
{
	if (of->kind != OUTFILE_REGULAR) {
		(void)fchmod(fd, creation_mode());
		return;
	}
	if (of->old.st_uid != geteuid() || of->old.st_gid != getegid())
		(void)fchown(fd, of->old.st_uid, of->old.st_gid);
	(void)fchmod(fd, of->old.st_mode & 0777);
}

/* Open the temp OF's contents go to: unnamed, or named where the
 * filesystem has no O_TMPFILE. 0, or -1 said. */
static int open_temp(struct outfile *of)
{
	sweep_stale_temps(of->dir, of->path);
	int fd = make_temp(of->dir, of->path, creation_mode(), &of->temp);
	if (fd < 0) {
		warn_errno("cannot create %s", of->path);
		return -1;
	}
	if (!of->temp) {
		of->unnamed = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (of->unnamed < 0) {
			warn_errno("cannot create %s", of->path);
			close(fd);
			return -1;
		}
	}
	set_owner_mode(fd, of);
	of->out = fdopen(fd, "w");
	if (!of->out) {
		warn_errno("cannot write %s", of->path);
		close(fd);
		return -1;
	}
	return 0;
}

struct outfile *outfile_open(const char *path, int dir, const char *what)
{
	struct outfile *of = calloc(1, sizeof *of);
	if (!of || !(of->path = strdup(path))) {
		warn_errno("cannot write %s", path);
		free(of);
		return NULL;
	}
	of->what = what;
	of->unnamed = of->fifo = of->dir = -1;
	int fd = named_descriptor(path), node = -1;
	if (fd >= 0) {
		of->kind = OUTFILE_FD;
		int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		of->out = dup >= 0 ? fdopen(dup, "w") : NULL;
		if (!of->out) {
			if (dup >= 0)
				close(dup);
			warn_errno("cannot write %s to %s", what,
				   fd == STDOUT_FILENO ? "stdout" : path);
			outfile_free(of);
			return NULL;
		}
		return of;
	}
	of->dir = dir >= 0 ? fcntl(dir, F_DUPFD_CLOEXEC, 0) : open_parent(path);
	if (of->dir < 0) {
		if (dir >= 0)
			warn_errno("cannot create %s", path);
		outfile_free(of);
		return NULL;
	}
	if (judge(of->dir, path, &of->kind, &of->old, &node) < 0) {
		outfile_free(of);
		return NULL;
	}
	if (of->kind == OUTFILE_NODE && S_ISFIFO(of->old.st_mode)) {
		/* written without blocking: see fifo_write */
		of->fifo = fifo_open(node, path);
		close(node);
		cookie_io_functions_t io = { .write = fifo_write, .close = fifo_close };
		of->out = of->fifo >= 0 ? fopencookie(of, "w", io) : NULL;
		if (!of->out) {
			if (of->fifo >= 0) {
				warn_errno("cannot write %s", path);
				close(of->fifo);
			}
			outfile_free(of);
			return NULL;
		}
		return of;
	}
	if (of->kind == OUTFILE_NODE) {
		/* reopen the very node judged, for writing (no race with a
		 * link put there since) */
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", node);
		fd = open(proc, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		close(node);
		of->out = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!of->out) {
			warn_errno("cannot open %s", path);
			if (fd >= 0)
				close(fd);
			outfile_free(of);
			return NULL;
		}
		return of;
	}
	if (open_temp(of) < 0) {
		outfile_free(of);
		return NULL;
	}
	return of;
}

FILE *outfile_stream(struct outfile *of)
{
	return of->out;
}

/* The error a failed stream write left: errno, or EIO when none was set. */
static int stream_errno(int saved)
{
	return saved ? saved : EIO;
}

/* Give the complete unnamed file its name in its directory: a link when
 * the name is free, else a link under a temp name renamed over it (a
 * rename never follows a link put there meanwhile: it replaces it). 0 or
 * -1/errno. */
static int name_unnamed(struct outfile *of)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", of->unnamed);
	if (linkat(AT_FDCWD, proc, of->dir, leaf(of->path), AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		char *tmp = temp_name(of->path);
		if (!tmp)
			return -1;
		if (linkat(AT_FDCWD, proc, of->dir, tmp, AT_SYMLINK_FOLLOW) == 0) {
			int rc = renameat(of->dir, tmp, of->dir, leaf(of->path)), err = errno;
			if (rc < 0)
				unlinkat(of->dir, tmp, 0);
			free(tmp);
			errno = err;
			return rc;
		}
		int err = errno;
		free(tmp);
		if (err != EEXIST) {
			errno = err;
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

/* fsync OF's directory so the new name is durable; a filesystem that
 * cannot do it is not an error. */
static void sync_dir(const struct outfile *of)
{
	int fd = openat(of->dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

static void say_write_error(const struct outfile *of, const char *step)
{
	if (of->kind == OUTFILE_FD && strcmp(step, "cannot write") == 0)
		warn_errno("cannot write %s to %s", of->what,
			   outfile_is_stdout(of->path) ? "stdout" : of->path);
	else
		warn_errno("%s %s", step, of->path);
}

int outfile_commit(struct outfile *of)
{
	const char *step = "cannot write";
	bool file = of->kind == OUTFILE_NEW || of->kind == OUTFILE_REGULAR;
	errno = 0;
	int failed = fflush(of->out) == EOF || ferror(of->out) ||
		     (file && fsync(fileno(of->out)) < 0 && errno != EINVAL && errno != EROFS);
	int err = stream_errno(errno);
	errno = 0;
	if (fclose(of->out) == EOF && !failed) {
		failed = 1;
		err = stream_errno(errno);
	}
	of->out = NULL;
	if (!failed && file) {
		step = "cannot name the output";
		failed = of->temp ? renameat(of->dir, of->temp, of->dir, leaf(of->path)) < 0
				  : name_unnamed(of) < 0;
		err = errno;
	}
	if (failed) {
		if (of->temp)
			unlinkat(of->dir, of->temp, 0);
		errno = err;
		say_write_error(of, step);
		outfile_free(of);
		errno = err;
		return -1;
	}
	if (file)
		sync_dir(of);
	outfile_free(of);
	return 0;
}

void outfile_abort(struct outfile *of)
{
	int err = stream_errno(errno);
	if (of->out)
		fclose(of->out);
	if (of->temp)
		unlinkat(of->dir, of->temp, 0);
	errno = err;
	say_write_error(of, "cannot write");
	outfile_free(of);
	errno = err;
}
