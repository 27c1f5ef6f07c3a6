/* write: output formats by name and extension, and the atomic creation of
 * output files (see write.h).
 *
 * A file is written to "PATH.XXXXXX" (mkstemp, same directory, so the rename
 * cannot cross filesystems), flushed, fsynced and closed with every error
 * checked, then renamed over PATH. Any failure removes the temp file: PATH
 * is either the complete new output or untouched. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
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
};

static const char *const format_names[] = {
	[FORMAT_AUTO] = "auto",
	[FORMAT_PPROF] = "pprof",
	[FORMAT_FOLDED] = "folded",
	[FORMAT_SVG] = "svg",
	[FORMAT_TEXT] = "text",
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

static int write_format(const struct profile *p, FILE *out, enum output_format f,
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
	if (write_format(p, stdout, f, opt) < 0 || fflush(stdout) == EOF || ferror(stdout)) {
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
	int failed = write_format(p, out, f, opt) < 0 || fflush(out) == EOF || ferror(out);
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

/* fsync the directory holding PATH so the rename itself is durable; a
 * filesystem that cannot do it is not an error. */
static void sync_parent_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash) {
		strcpy(dir, ".");
	} else if (slash == path) {
		strcpy(dir, "/");
	} else {
		size_t n = (size_t)(slash - path);
		if (n >= sizeof dir)
			return;
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

int write_output(const struct profile *p, const char *path, enum output_format f,
		 const struct write_options *opt)
{
	char *tmp = NULL;
	const char *step;
	FILE *out = NULL;
	size_t n;
	int fd = -1, err;

	if (!path || !*path) {
		warn("empty output file name");
		errno = EINVAL;
		return -1;
	}
	if (f == FORMAT_AUTO)
		f = strcmp(path, "-") == 0 ? FORMAT_FOLDED : write_format_from_path(path);
	if (f == FORMAT_AUTO) {
		warn("cannot tell the output format of %s: use .pb.gz, .folded, .svg or .txt, "
		     "or --format", path);
		errno = EINVAL;
		return -1;
	}
	if (strcmp(path, "-") == 0)
		return write_stdout(p, f, opt);
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return write_special(p, path, f, opt);

	n = strlen(path) + sizeof ".XXXXXX";
	tmp = malloc(n);
	if (!tmp) {
		err = ENOMEM;
		step = "cannot write";
		goto fail;
	}
	snprintf(tmp, n, "%s.XXXXXX", path);
	step = "cannot create";
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = errno;
		free(tmp);
		tmp = NULL;
		goto fail;
	}
	step = "cannot write";
	if (fchmod(fd, creation_mode()) < 0) {
		err = errno;
		goto fail;
	}
	out = fdopen(fd, "w");
	if (!out) {
		err = errno;
		goto fail;
	}
	fd = -1;
	errno = 0;
	if (write_format(p, out, f, opt) < 0 || fflush(out) == EOF || ferror(out)) {
		err = stream_errno(errno);
		goto fail;
	}
	if (fsync(fileno(out)) < 0 && errno != EINVAL && errno != EROFS) {
		err = errno;
		goto fail;
	}
	errno = 0;
	if (fclose(out) == EOF) {
		out = NULL;
		err = stream_errno(errno);
		goto fail;
	}
	out = NULL;
	step = "cannot rename the output to";
	if (rename(tmp, path) < 0) {
		err = errno;
		goto fail;
	}
	free(tmp);
	sync_parent_dir(path);
	return 0;

fail:
	if (out)
		fclose(out);
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	errno = err;
	warn_errno("%s %s", step, path);
	errno = err;
	return -1;
}

/* ---- interned names --------------------------------------------------------- */

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;   /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static int name_table_grow_slots(struct name_table *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 256;
	uint32_t *slot = calloc(nslots, sizeof *slot);

	if (!slot)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = name_hash(t->names[i], strlen(t->names[i])) & (nslots - 1);
		while (slot[j])
			j = (j + 1) & (nslots - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslots = nslots;
	return 0;
}

int64_t name_table_intern(struct name_table *t, const char *name, size_t len)
{
	size_t j;
	char *copy;

	if (t->n >= UINT32_MAX - 1 ||
	    ((t->n + 1) * 2 > t->nslots && name_table_grow_slots(t) < 0))
		return -1;
	for (j = name_hash(name, len) & (t->nslots - 1); t->slot[j]; j = (j + 1) & (t->nslots - 1)) {
		const char *s = t->names[t->slot[j] - 1];
		if (strncmp(s, name, len) == 0 && s[len] == '\0')
			return t->slot[j] - 1;
	}
	if (array_grow(&t->names, &t->cap, t->n + 1, sizeof *t->names, 256) < 0)
		return -1;
	copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, name, len);
	copy[len] = '\0';
	t->names[t->n] = copy;
	t->slot[j] = (uint32_t)t->n + 1;
	return (int64_t)t->n++;
}

void name_table_free(struct name_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t->names);
	free(t->slot);
	memset(t, 0, sizeof *t);
}
