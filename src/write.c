/* write: output formats by name and extension, and the atomic creation of
 * output files (see write.h).
 *
 * A file is written to an unnamed O_TMPFILE in PATH's directory, flushed and
 * fsynced with every error checked, and only then given a name: linked as
 * PATH if PATH does not exist, else linked as "PATH.XXXXXX" and renamed over
 * PATH. So no name ever shows an incomplete file, even if csampler is killed
 * while writing (the unnamed file goes with it). Where the filesystem has no
 * O_TMPFILE, the file is written to "PATH.XXXXXX" (mkstemp) and renamed; a
 * failure removes it. Either way PATH is the complete new output or
 * untouched. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "clock.h"
#include "error.h"
#include "write.h"

static const struct {
	const char *suffix;
	enum output_format format;
} format_suffixes[] = {
	{ ".pb.gz", FORMAT_PPROF },
	{ ".pb", FORMAT_PPROF },
	{ ".pprof", FORMAT_PPROF },
	{ ".folded", FORMAT_FOLDED },
	{ ".collapsed", FORMAT_FOLDED },
	{ ".svg", FORMAT_SVG },
	{ ".txt", FORMAT_TEXT },
	{ ".speedscope.json", FORMAT_SPEEDSCOPE },
};

static const char *const format_names[] = {
	[FORMAT_AUTO] = "auto",
	[FORMAT_PPROF] = "pprof",
	[FORMAT_FOLDED] = "folded",
	[FORMAT_SVG] = "svg",
	[FORMAT_TEXT] = "text",
	[FORMAT_SPEEDSCOPE] = "speedscope",
};

enum output_format write_format_from_path(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	for (size_t i = 0; i < sizeof format_suffixes / sizeof format_suffixes[0]; i++) {
		size_t m = strlen(format_suffixes[i].suffix);
		/* a bare ".svg" is a hidden file named svg, not a format */
		if (n > m && path[n - m - 1] != '/' &&
		    strcmp(path + n - m, format_suffixes[i].suffix) == 0)
			return format_suffixes[i].format;
	}
	return FORMAT_AUTO;
}

enum output_format write_format_from_name(const char *name)
{
	if (!name)
		return FORMAT_AUTO;
	for (size_t i = FORMAT_PPROF; i < sizeof format_names / sizeof format_names[0]; i++)
		if (strcmp(name, format_names[i]) == 0)
			return (enum output_format)i;
	return FORMAT_AUTO;
}

const char *write_format_name(enum output_format f)
{
	if ((size_t)f < sizeof format_names / sizeof format_names[0])
		return format_names[f];
	return "unknown";
}

bool write_format_is_timeline(enum output_format f)
{
	return f == FORMAT_SPEEDSCOPE;
}

const char *write_format_extensions(void)
{
	return ".pb.gz, .pb, .pprof, .folded, .collapsed, .svg, .txt, .speedscope.json";
}

int write_to_stream(const struct profile *p, FILE *out, enum output_format f,
		    const struct write_options *opt)
{
	static const struct write_options defaults = { 0 };

	if (!opt)
		opt = &defaults;
	switch (f) {
	case FORMAT_PPROF:
		return write_pprof(p, out, opt);
	case FORMAT_FOLDED:
		return write_folded(p, out, opt);
	case FORMAT_SVG:
		return write_svg(p, out, opt);
	case FORMAT_TEXT:
		return write_text(p, out, opt);
	case FORMAT_SPEEDSCOPE:
		return write_speedscope(p, out, opt);
	case FORMAT_AUTO:
		break;
	}
	errno = EINVAL;
	return -1;
}

/* The error a failed stream write left: errno, or EIO when none was set. */
static int stream_errno(int saved)
{
	return saved ? saved : EIO;
}

static int write_stdout(const struct profile *p, enum output_format f,
			const struct write_options *opt)
{
	errno = 0;
	if (write_to_stream(p, stdout, f, opt) < 0 || fflush(stdout) == EOF || ferror(stdout)) {
		errno = stream_errno(errno);
		warn_errno("cannot write the %s output to stdout", write_format_name(f));
		return -1;
	}
	return 0;
}

/* PATH names a device, FIFO or socket (/dev/null, a named pipe): write into
 * it directly; a temp file renamed over it would replace the node itself. */
static int write_special(const struct profile *p, const char *path, enum output_format f,
			 const struct write_options *opt)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		errno = err;
		warn_errno("cannot open %s", path);
		return -1;
	}
	errno = 0;
	int failed = write_to_stream(p, out, f, opt) < 0 || fflush(out) == EOF || ferror(out);
	int err = stream_errno(errno);
	errno = 0;
	if (fclose(out) == EOF && !failed) {
		failed = 1;
		err = stream_errno(errno);
	}
	if (failed) {
		errno = err;
		warn_errno("cannot write %s", path);
		return -1;
	}
	return 0;
}

/* The permissions a new file gets from open(0666) under the current umask. */
static mode_t creation_mode(void)
{
	mode_t mask = umask(022);
	umask(mask);
	return 0666 & ~mask;
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

/* fsync the directory holding PATH so the rename itself is durable; a
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

/* Write the whole output to FD (consumed) and make it durable. 0, or -1 with
 * errno. */
static int write_whole(int fd, const struct profile *p, enum output_format f,
		       const struct write_options *opt)
{
	FILE *out = fdopen(fd, "w");
	if (!out) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	errno = 0;
	if (write_to_stream(p, out, f, opt) < 0 || fflush(out) == EOF || ferror(out) ||
	    (fsync(fileno(out)) < 0 && errno != EINVAL && errno != EROFS)) {
		int err = stream_errno(errno);
		fclose(out);
		errno = err;
		return -1;
	}
	errno = 0;
	if (fclose(out) == EOF) {
		errno = stream_errno(errno);
		return -1;
	}
	return 0;
}

/* A name "PATH.XXXXXX" not taken yet, into TMP (PATH's length + 8). */
static void temp_name(const char *path, char *tmp, size_t size, unsigned attempt)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint64_t r = clock_random_seed() + attempt;
	char suffix[7];
	for (int i = 0; i < 6; i++, r /= 62)
		suffix[i] = chars[r % 62];
	suffix[6] = '\0';
	snprintf(tmp, size, "%s.%s", path, suffix);
}

/* Give the complete unnamed file FD the name PATH: a link when PATH does not
 * exist, else a link under a temp name renamed over PATH. 0 or -1/errno. */
static int publish_tmpfile(int fd, const char *path, char *tmp, size_t tmpsz)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		temp_name(path, tmp, tmpsz, attempt);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) {
			if (rename(tmp, path) == 0)
				return 0;
			int err = errno;
			unlink(tmp);
			errno = err;
			return -1;
		}
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/* Fall back where O_TMPFILE is not supported: write "PATH.XXXXXX", rename. */
static int write_via_named_temp(const struct profile *p, const char *path, enum output_format f,
				const struct write_options *opt, char *tmp, size_t tmpsz,
				const char **step)
{
	snprintf(tmp, tmpsz, "%s.XXXXXX", path);
	*step = "cannot create";
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	*step = "cannot write";
	if (fchmod(fd, creation_mode()) < 0) {
		int err = errno;
		close(fd);
		unlink(tmp);
		errno = err;
		return -1;
	}
	if (write_whole(fd, p, f, opt) < 0) {
		int err = errno;
		unlink(tmp);
		errno = err;
		return -1;
	}
	*step = "cannot rename the output to";
	if (rename(tmp, path) < 0) {
		int err = errno;
		unlink(tmp);
		errno = err;
		return -1;
	}
	return 0;
}

int write_output_check(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;

	if (strcmp(path, "-") == 0)
		return 0;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		/* a device or FIFO is written in place: it must let us */
		if (access(path, W_OK) == 0)
			return 0;
		warn_errno("cannot write %s", path);
		return -1;
	}
	if (!parent_dir(path, dir, sizeof dir)) {
		errno = ENAMETOOLONG;
		warn_errno("cannot create %s", path);
		return -1;
	}
	/* create, unnamed, what write_output will create, and drop it */
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		size_t n = strlen(path) + sizeof ".XXXXXX";
		char *tmp = malloc(n);
		if (tmp) {
			snprintf(tmp, n, "%s.XXXXXX", path);
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

int write_output(const struct profile *p, const char *path, enum output_format f,
		 const struct write_options *opt)
{
	const char *step = "cannot write";
	char dir[PATH_MAX];
	char *tmp = NULL;
	int fd = -1, err;

	if (!path || !*path) {
		warn("empty output file name");
		errno = EINVAL;
		return -1;
	}
	if (f == FORMAT_AUTO)
		f = strcmp(path, "-") == 0 ? FORMAT_FOLDED : write_format_from_path(path);
	if (f == FORMAT_AUTO) {
		warn("cannot tell the output format of %s: use %s, or --format", path,
		     write_format_extensions());
		errno = EINVAL;
		return -1;
	}
	if (strcmp(path, "-") == 0)
		return write_stdout(p, f, opt);
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return write_special(p, path, f, opt);

	size_t tmpsz = strlen(path) + sizeof ".XXXXXX";
	tmp = malloc(tmpsz);
	if (!tmp || !parent_dir(path, dir, sizeof dir)) {
		err = tmp ? ENAMETOOLONG : ENOMEM;
		goto fail;
	}
	step = "cannot create";
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, creation_mode());
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* no O_TMPFILE on this filesystem (or kernel) */
		if (write_via_named_temp(p, path, f, opt, tmp, tmpsz, &step) < 0) {
			err = errno;
			goto fail;
		}
		free(tmp);
		sync_parent_dir(path);
		return 0;
	}
	if (fd < 0) {
		err = errno;
		goto fail;
	}
	/* write_whole closes the stream; keep a descriptor to link it by */
	int keep = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	step = "cannot write";
	if (keep < 0) {
		err = errno;
		goto fail;
	}
	if (write_whole(fd, p, f, opt) < 0) {
		err = errno;
		fd = keep;
		goto fail;
	}
	fd = keep;
	step = "cannot name the output";
	if (publish_tmpfile(fd, path, tmp, tmpsz) < 0) {
		err = errno;
		goto fail;
	}
	close(fd);
	free(tmp);
	sync_parent_dir(path);
	return 0;

fail:
	if (fd >= 0)
		close(fd);
	free(tmp);
	errno = err;
	warn_errno("%s %s", step, path);
	errno = err;
	return -1;
}

/* ---- frame names ---------------------------------------------------------- */

const char *write_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The name of an address without a symbol: "[module+0xOFFSET]" or "[0xADDR]". */
static const char *unknown_name(const struct profile *p, const struct profile_location *l,
				char *buf, size_t bufsz)
{
	if (l->mapping != PROFILE_NONE && l->mapping < p->nmappings) {
		const struct profile_mapping *m = &p->mappings[l->mapping];
		const char *base = write_base_name(m->filename ? m->filename : "");
		if (*base) {
			snprintf(buf, bufsz, "[%s+0x%" PRIx64 "]", base,
				 l->address - m->start + m->offset);
			return buf;
		}
	}
	snprintf(buf, bufsz, "[0x%" PRIx64 "]", l->address);
	return buf;
}

const char *write_frame_name(const struct profile *p, const struct profile_location *l,
			     uint32_t function, char *buf, size_t bufsz)
{
	if (function != PROFILE_NONE && function < p->nfunctions) {
		const struct profile_function *fn = &p->functions[function];
		if (fn->name && *fn->name)
			return fn->name;
		if (fn->system_name && *fn->system_name)
			return fn->system_name;
	}
	return unknown_name(p, l, buf, bufsz);
}

