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
	int unnamed;           /* the O_TMPFILE to link, or -1 */
	char *temp;            /* the named temp (no O_TMPFILE here), or NULL */
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

/* Judge PATH without following a link at its end: its kind, and for a
 * node written in place an O_PATH descriptor of it (*NODE). 0, or -1 said. */
static int judge(const char *path, enum outfile_kind *kind, struct stat *st, int *node)
{
	*node = -1;
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
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

/* The directory holding PATH into DIR (SIZE bytes); false if too long. */
static bool parent_dir(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
	if (n >= size)
		return false;
	if (!slash)
		memcpy(dir, ".", 2);
	else if (slash == path)
		memcpy(dir, "/", 2);
	else {
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	return true;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
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
	return snprintf(buf, size, ".%s.csampler.", base_name(path));
}

/* Remove, in DIR, the named temps of PATH left by a csampler that is gone
 * (killed while writing): ".NAME.csampler.PID.XXXXXX", a regular file of
 * ours whose PID no longer runs. */
static void sweep_stale_temps(const char *dir, const char *path)
{
	char prefix[NAME_MAX + 32];
	int plen = temp_prefix(path, prefix, sizeof prefix);
	if (plen <= 0 || (size_t)plen >= sizeof prefix)
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
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

/* DIR/.NAME.csampler.PID.XXXXXX into a new string (a mkstemp template, or
 * with the X's filled in when FILL). */
static char *temp_name(const char *dir, const char *path, bool fill)
{
	char prefix[NAME_MAX + 32];
	temp_prefix(path, prefix, sizeof prefix);
	size_t n = strlen(dir) + strlen(prefix) + 40;
	char *t = malloc(n);
	if (!t)
		return NULL;
	int len = snprintf(t, n, "%s/%s%ld.XXXXXX", dir, prefix, (long)getpid());
	if (fill) {
		static const char chars[] =
			"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
		uint64_t r = clock_random_seed();
		for (int i = len - 6; i < len; i++, r /= 62)
			t[i] = chars[r % 62];
	}
	return t;
}

int outfile_check(const char *path)
{
	char dir[PATH_MAX];
	enum outfile_kind kind;
	struct stat st;
	int node, fd = named_descriptor(path);

	if (fd >= 0) {
		if (!descriptor_writable(fd)) {
			warn_errno("cannot write %s", fd == STDOUT_FILENO ? "to stdout" : path);
			return -1;
		}
		return 0;
	}
	if (judge(path, &kind, &st, &node) < 0)
		return -1;
	if (kind == OUTFILE_NODE) {
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
	if (!parent_dir(path, dir, sizeof dir)) {
		errno = ENAMETOOLONG;
		warn_errno("cannot create %s", path);
		return -1;
	}
	/* create, unnamed, what outfile_open will create, and drop it */
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		char *tmp = temp_name(dir, path, false);
		if (tmp) {
			fd = mkstemp(tmp);
			if (fd >= 0)
				unlink(tmp);
			free(tmp);
		}
	}
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	int err = errno;
	if (err == ENOENT && stat(dir, &st) < 0)
		warn("cannot create %s: the directory %s does not exist", path, dir);
	else if (err == ENOTDIR)
		warn("cannot create %s: %s is not a directory", path, dir);
	else {
		errno = err;
		warn_errno("cannot create %s", path);
	}
	errno = err;
	return -1;
}

static void outfile_free(struct outfile *of)
{
	if (of->unnamed >= 0)
		close(of->unnamed);
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
	char dir[PATH_MAX];
	if (!parent_dir(of->path, dir, sizeof dir)) {
		errno = ENAMETOOLONG;
		warn_errno("cannot create %s", of->path);
		return -1;
	}
	sweep_stale_temps(dir, of->path);
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, creation_mode());
	if (fd >= 0) {
		of->unnamed = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (of->unnamed < 0) {
			warn_errno("cannot create %s", of->path);
			close(fd);
			return -1;
		}
	} else if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
		of->temp = temp_name(dir, of->path, false);
		fd = of->temp ? mkstemp(of->temp) : -1;
		if (fd < 0) {
			warn_errno("cannot create %s", of->path);
			free(of->temp);
			of->temp = NULL;
			return -1;
		}
	} else {
		warn_errno("cannot create %s", of->path);
		return -1;
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

struct outfile *outfile_open(const char *path, const char *what)
{
	struct outfile *of = calloc(1, sizeof *of);
	if (!of || !(of->path = strdup(path))) {
		warn_errno("cannot write %s", path);
		free(of);
		return NULL;
	}
	of->what = what;
	of->unnamed = of->fifo = -1;
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
	if (judge(path, &of->kind, &of->old, &node) < 0) {
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

/* Give the complete unnamed file the name PATH: a link when PATH does not
 * exist, else a link under a temp name renamed over PATH (a rename never
 * follows a link put there meanwhile: it replaces it). 0 or -1/errno. */
static int name_unnamed(struct outfile *of)
{
	char proc[64], dir[PATH_MAX];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", of->unnamed);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, of->path, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	if (!parent_dir(of->path, dir, sizeof dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		char *tmp = temp_name(dir, of->path, true);
		if (!tmp)
			return -1;
		if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) {
			int rc = rename(tmp, of->path), err = errno;
			if (rc < 0)
				unlink(tmp);
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

/* fsync the directory holding PATH so the new name is durable; a
 * filesystem that cannot do it is not an error. */
static void sync_parent_dir(const char *path)
{
	char dir[PATH_MAX];
	if (!parent_dir(path, dir, sizeof dir))
		return;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
		failed = of->temp ? rename(of->temp, of->path) < 0 : name_unnamed(of) < 0;
		err = errno;
	}
	if (failed) {
		if (of->temp)
			unlink(of->temp);
		errno = err;
		say_write_error(of, step);
		outfile_free(of);
		errno = err;
		return -1;
	}
	if (file)
		sync_parent_dir(of->path);
	outfile_free(of);
	return 0;
}

void outfile_abort(struct outfile *of)
{
	int err = stream_errno(errno);
	if (of->out)
		fclose(of->out);
	if (of->temp)
		unlink(of->temp);
	errno = err;
	say_write_error(of, "cannot write");
	outfile_free(of);
	errno = err;
}
