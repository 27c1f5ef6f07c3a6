/* convert: a pprof profile to any format (see convert.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "convert.h"
#include "error.h"
#include "escape.h"
#include "pprof_read.h"
#include "report.h"
#include "resymbolize.h"
#include "write.h"

/* A pipe's or FIFO's input waits for its writer at most this long
 * without a byte (as an output FIFO waits for its reader). */
#define INPUT_STALL_NS 10000000000ull
#define INPUT_POLL_MS 100

/* Wait until FD (a pipe or FIFO) has bytes or its end: 0, or -1 said
 * after INPUT_STALL_NS since the last byte (*SINCE) with nothing. */
static int wait_input(int fd, const char *path, uint64_t since)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = poll(&pfd, 1, INPUT_POLL_MS);
		if (r > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			return 0;
		if (r < 0 && errno != EINTR) {
			warn_errno("cannot read the input '%s'", path);
			return -1;
		}
		if (clock_monotonic_ns() - since >= INPUT_STALL_NS) {
			warn("nothing came from the input '%s' in %llu s: start what writes it first",
			     path, (unsigned long long)(INPUT_STALL_NS / 1000000000u));
			return -1;
		}
	}
}

/* The whole of PATH ("-": standard input), at most PPROF_READ_MAX_BYTES,
 * in *DATA and *LEN; -1 with the cause said. A regular file, a pipe or a
 * FIFO (opened without waiting for its writer, then waited for at most
 * INPUT_STALL_NS without a byte); a directory, terminal or other device
 * is refused before a byte is read. */
static int read_input(const char *path, uint8_t **data, size_t *len)
{
	bool is_stdin = strcmp(path, "-") == 0;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		warn_errno("cannot read the input '%s'", path);
		return -1;
	}
	struct stat st;
	bool have = fstat(fd, &st) == 0;
	const char *refused = !have ? NULL : S_ISDIR(st.st_mode) ? "a directory"
			      : S_ISCHR(st.st_mode) ? "a terminal or character device"
			      : S_ISBLK(st.st_mode) ? "a block device"
			      : S_ISSOCK(st.st_mode) ? "a socket" : NULL;
	if (refused) {
		warn("the input '%s' is %s: name a profile file (e.g. profile.pb.gz), or pipe one "
		     "into -i -", path, refused);
		if (!is_stdin)
			close(fd);
		return -1;
	}
	bool pipe_like = have && S_ISFIFO(st.st_mode);
	/* (the descriptor blocks again: a read follows a wait that saw bytes) */
	if (!is_stdin)
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	/* (a file that says its size is refused before it is read) */
	if (have && S_ISREG(st.st_mode) && (uint64_t)st.st_size > PPROF_READ_MAX_BYTES) {
		warn("the input '%s' is larger than %zu MB", path, PPROF_READ_MAX_BYTES >> 20);
		if (!is_stdin)
			close(fd);
		return -1;
	}
	size_t cap = 1u << 20, n = 0;
	uint8_t *buf = malloc(cap);
	int ret = -1;
	uint64_t since = clock_monotonic_ns();
	while (buf) {
		if (n == cap) {
			if (cap > PPROF_READ_MAX_BYTES) {
				warn("the input '%s' is larger than %zu MB", path, PPROF_READ_MAX_BYTES >> 20);
				break;
			}
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb) {
				warn("cannot read the input '%s': out of memory", path);
				break;
			}
			buf = nb;
			cap *= 2;
		}
		if (pipe_like && wait_input(fd, path, since) < 0)
			break;
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		since = clock_monotonic_ns();
		if (r < 0) {
			warn_errno("cannot read the input '%s'", path);
			break;
		}
		if (r == 0) {
			ret = 0;
			break;
		}
		n += (size_t)r;
	}
	if (!is_stdin)
		close(fd);
	if (ret < 0) {
		free(buf);
		return -1;
	}
	*data = buf;
	*len = n;
	return 0;
}

/* --thread-group: a matching thread takes the group's name, its tid 0 (the
 * writers merge threads of one name and no tid, as a recording's). */
static void group_threads(struct profile *p, const struct options *o)
{
	for (size_t t = 0; t < p->nthreads; t++)
		for (size_t g = 0; g < o->ngroups; g++)
			if (regexec(&o->groups[g].re, p->threads[t].name, 0, NULL, 0) == 0) {
				p->threads[t].name = o->groups[g].name;
				p->threads[t].tid = 0;
				break;
			}
}

/* PATH read as a profile, its threads grouped; NULL (said). */
static struct profile *read_profile(const struct options *o, const char *path)
{
	uint8_t *data;
	size_t len;
	if (read_input(path, &data, &len) < 0)
		return NULL;
	char err[256];
	/* bare addresses named from the mappings' files, unless --addresses */
	struct symbolize_options so = { .no_inline = o->no_inline };
	struct resymbolize *rs = o->addresses ? NULL : resymbolize_new(&so);
	struct pprof_read_resolve resolve = { .fn = resymbolize_lines, .ctx = rs };
	struct pprof_read_info info;
	struct profile *p = pprof_read(data, len, o->max_depth, rs ? &resolve : NULL, &info, err,
				       sizeof err);
	free(data);
	if (p && info.nvarying) {
		char keys[sizeof info.varying * 4];
		escape_terminal(info.varying, keys, sizeof keys);
		warn("note: %s: sample labels that differ from sample to sample are not kept (%s%s); "
		     "go tool pprof -tags shows them", path, keys, info.nvarying > PPROF_READ_VARYING_MAX ?
		     ", ..." : "");
	}
	if (p && rs)
		resymbolize_report(rs, p, path);
	resymbolize_free(rs);
	if (!p) {
		warn("cannot read the input '%s': %s", path, err);
		return NULL;
	}
	group_threads(p, o);
	return p;
}

int convert_run(const struct options *o)
{
	if (o->input2 && strcmp(o->input, "-") == 0 && strcmp(o->input2, "-") == 0) {
		warn("--diff: standard input can be one of the two inputs, not both");
		return CS_EXIT_INPUT;
	}
	struct profile *p = read_profile(o, o->input2 ? o->input2 : o->input);
	if (!p)
		return CS_EXIT_INPUT;
	if (o->input2) {
		/* the new one's samples, and the base's scaled to the same total */
		struct profile *base = read_profile(o, o->input);
		if (!base) {
			profile_free(p);
			return CS_EXIT_INPUT;
		}
		const char *tn = p->value_type ? p->value_type : "time",
			   *tb = base->value_type ? base->value_type : "time";
		if (strcmp(tn, tb) != 0) {
			warn("--diff: '%s' is a profile of %s and '%s' of %s: compare two of one kind",
			     o->input, tb, o->input2, tn);
			profile_free(base);
			profile_free(p);
			return CS_EXIT_INPUT;
		}
		int rc = profile_add_base(p, base);
		profile_free(base);
		if (rc < 0) {
			warn_errno("--diff: cannot compare '%s' and '%s'", o->input, o->input2);
			profile_free(p);
			return CS_EXIT_SYSTEM;
		}
		p->base_name = o->input;
		p->new_name = o->input2;
	}
	for (size_t i = 0; i < o->nlabels; i++)
		if (profile_add_label(p, o->labels[i].key, o->labels[i].value) < 0) {
			warn("cannot read the input '%s': out of memory", o->input);
			profile_free(p);
			return CS_EXIT_SYSTEM;
		}
	struct write_options wo = { .threads = o->threads || o->ngroups, .annotate = o->annotate };
	struct report_config rc;
	options_report_config(o, &rc);
	int status = CS_EXIT_OK;
	for (size_t i = 0; i < o->noutputs; i++) {
		if (write_output(p, o->outputs[i].path, -1, o->outputs[i].format, &wo) < 0) {
			status = CS_EXIT_OUTPUT;
			continue;
		}
		report_written(&rc, o->outputs[i].path, o->outputs[i].format, p, true);
	}
	profile_free(p);
	return status;
}
