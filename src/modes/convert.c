/* convert: a pprof profile to any format (see convert.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert.h"
#include "error.h"
#include "escape.h"
#include "pprof_read.h"
#include "report.h"
#include "resymbolize.h"
#include "write.h"

/* The whole of PATH ("-": standard input), at most PPROF_READ_MAX_BYTES,
 * in *DATA and *LEN; -1 with the cause said. */
static int read_input(const char *path, uint8_t **data, size_t *len)
{
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		warn_errno("cannot read the input '%s'", path);
		return -1;
	}
	struct stat st;
	bool have = fstat(fd, &st) == 0;
	if (have && S_ISDIR(st.st_mode)) {
		warn("the input '%s' is a directory: name a profile file (e.g. profile.pb.gz)", path);
		if (fd != STDIN_FILENO)
			close(fd);
		return -1;
	}
	/* (a file that says its size is refused before it is read) */
	if (have && S_ISREG(st.st_mode) && (uint64_t)st.st_size > PPROF_READ_MAX_BYTES) {
		warn("the input '%s' is larger than %zu MB", path, PPROF_READ_MAX_BYTES >> 20);
		if (fd != STDIN_FILENO)
			close(fd);
		return -1;
	}
	size_t cap = 1u << 20, n = 0;
	uint8_t *buf = malloc(cap);
	int ret = -1;
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
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
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
	if (fd != STDIN_FILENO)
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
