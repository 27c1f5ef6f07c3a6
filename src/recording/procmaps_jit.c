/* procmaps_jit: the JIT symbols of a process's perf map (/tmp/perf-PID.map,
 * written by node --perf-basic-prof, the JVM's perf-map-agent...), read only
 * when the file is the process's own (see procmaps.h), kept sorted for
 * procmaps_find_jit. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "procmaps_internal.h"

/* ---- perf maps ------------------------------------------------------------ */

static size_t jit_lower_bound(const struct jit_entry *j, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (j[mid].sym.start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_jit(const void *a, const void *b)
{
	const struct jit_entry *x = a, *y = b;
	if (x->sym.start != y->sym.start)
		return x->sym.start < y->sym.start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Add one symbol unless the sorted part already has it exactly. */
static void jit_add(struct procmaps *pm, size_t nsorted, uint64_t start, uint64_t size, const char *name)
{
	for (size_t i = jit_lower_bound(pm->jit, nsorted, start);
	     i < nsorted && pm->jit[i].sym.start == start; i++)
		if (pm->jit[i].sym.size == size && strcmp(pm->jit[i].sym.name, name) == 0) {
			pm->jit[i].seq = pm->jit_seq++;
			return;
		}
	if (pm->njit >= MAX_JIT_SYMBOLS)
		return;
	if (array_grow(&pm->jit, &pm->jitcap, pm->njit + 1, sizeof *pm->jit, 256) < 0)
		return;
	char *copy = strdup(name);
	if (!copy)
		return;
	pm->jit[pm->njit++] = (struct jit_entry){
		.sym = { .start = start, .size = size, .name = copy }, .seq = pm->jit_seq++,
	};
}

/* Sort and keep the newest symbol of each start. */
static void jit_settle(struct procmaps *pm)
{
	qsort(pm->jit, pm->njit, sizeof(*pm->jit), cmp_jit);
	size_t out = 0;
	for (size_t i = 0; i < pm->njit; i++) {
		if (out > 0 && pm->jit[out - 1].sym.start == pm->jit[i].sym.start) {
			free(pm->jit[out - 1].sym.name);   /* older (sorted by seq) */
			pm->jit[out - 1] = pm->jit[i];
			continue;
		}
		pm->jit[out++] = pm->jit[i];
	}
	pm->njit = out;
}

static bool perf_map_trusted(const struct procmaps *pm, const struct stat *st)
{
	return S_ISREG(st->st_mode) &&
	       (st->st_uid == 0 || st->st_uid == geteuid() || st->st_uid == pm->euid ||
		st->st_uid == pm->ruid);
}

static void read_perf_map(struct procmaps *pm, int fd, size_t nsorted)
{
	char *chunk = malloc(PERF_LINE_MAX * 2);
	if (!chunk)
		return;
	off_t total = 0;
	size_t have = 0;
	bool skipping = false;   /* inside a line longer than PERF_LINE_MAX */
	for (;;) {
		ssize_t r = read(fd, chunk + have, PERF_LINE_MAX * 2 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		total += r;
		have += (size_t)r;
		size_t pos = 0;
		for (;;) {
			char *nl = memchr(chunk + pos, '\n', have - pos);
			if (!nl)
				break;
			size_t llen = (size_t)(nl - (chunk + pos));
			uint64_t start, size;
			if (!skipping && procmaps_parse_perf_map_line(chunk + pos, llen, &start, &size,
								      pm->scratch, PROCMAPS_PATH_MAX) == 0)
				jit_add(pm, nsorted, start, size, pm->scratch);
			skipping = false;
			pos += llen + 1;
		}
		memmove(chunk, chunk + pos, have - pos);
		have -= pos;
		if (have >= PERF_LINE_MAX) {
			skipping = true;
			have = 0;
		}
		if (total >= PERF_MAP_MAX_BYTES)
			break;
	}
	free(chunk);
}

size_t procmaps_load_perf_map(struct procmaps *pm)
{
	char path[64];
	int fds[2] = { -1, -1 };
	struct stat st[2];
	if (pm->pid <= 0)
		return 0;  /* no process (procmaps_new_files) */
	if (pm->root_fd >= 0) {
		snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)pm->nspid);
		fds[0] = pm_open_in_root(pm->root_fd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
	}
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)pm->pid);
	fds[1] = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0 && (fstat(fds[i], &st[i]) < 0 || !perf_map_trusted(pm, &st[i]))) {
			close(fds[i]);
			fds[i] = -1;
		}
	if (fds[0] >= 0 && fds[1] >= 0 && st[0].st_dev == st[1].st_dev && st[0].st_ino == st[1].st_ino) {
		close(fds[1]);
		fds[1] = -1;
	}
	size_t nsorted = pm->njit;
	for (int i = 0; i < 2; i++) {
		if (fds[i] < 0)
			continue;
		read_perf_map(pm, fds[i], nsorted);
		close(fds[i]);
	}
	if (pm->njit != nsorted)
		jit_settle(pm);
	return pm->njit;
}

const struct procmaps_jit_symbol *procmaps_find_jit(const struct procmaps *pm, uint64_t addr)
{
	size_t i = addr == UINT64_MAX ? pm->njit : jit_lower_bound(pm->jit, pm->njit, addr + 1);
	for (size_t k = 0; k < JIT_WALK_BACK && i > 0; k++, i--) {
		const struct procmaps_jit_symbol *s = &pm->jit[i - 1].sym;
		if (addr - s->start < s->size)
			return s;
	}
	return NULL;
}
