/* procmaps: every memory mapping a process has ever had (see procmaps.h).
 *
 * Storage: each mapping is one allocation (entry and path together) made the
 * first time it is seen, so entry pointers stay valid until procmaps_free.
 * ALL holds every mapping sorted by (start, age) with a prefix maximum of the
 * end addresses, so a lookup of a historical address walks back only over
 * mappings that can contain it; CUR holds the current mappings sorted by start
 * (they do not overlap) for the common lookup. A mapping is identified by its
 * range, offset, permissions, device, inode and path: a line of the maps file
 * equal to a known mapping only marks it seen in this refresh (no allocation);
 * a known mapping absent from the file is retired (current = false).
 *
 * refresh reads the whole maps file with pread from offset 0 of a descriptor
 * kept open (reopened after exec, whose new mm the old descriptor does not
 * see) into a buffer that grows only when the file does.
 *
 * Files: each file-backed executable mapping gets a descriptor, opened once
 * per file (device, inode) through /proc/PID/map_files/START-END, else through
 * the target's root (openat2 RESOLVE_IN_ROOT, inode checked). Mappings of the
 * same file share it; the file table owns the descriptors.
 *
 * Perf maps: symbols sorted by start; one symbol per start (a later line or a
 * later load replaces an earlier one). A file is read only if it is a regular
 * file owned by root, by us or by the target's user, up to PERF_MAP_MAX_BYTES.
 *
 * Bounds: maps file PROCMAPS_MAX_BYTES, mappings PROCMAPS_MAX_ENTRIES, open
 * files MAX_FILES, vdso VDSO_MAX_BYTES, JIT symbols MAX_JIT_SYMBOLS, symbol
 * names PROCMAPS_PATH_MAX - 1 bytes, perf map lines PERF_LINE_MAX bytes. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "array.h"
#include "procfs.h"
#include "procmaps_internal.h"
#include "runtimes.h"

/* ---- life ----------------------------------------------------------------- */

int pm_open_in_root(int root_fd, const char *path, int flags)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC), .resolve = RESOLVE_IN_ROOT };
	long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return (int)fd;
	/* Kernels before 5.6 (or a seccomp filter): plain openat under the root. */
	while (*path == '/')
		path++;
	return openat(root_fd, path, flags | O_CLOEXEC);
}

int procmaps_open_regular(const struct procmaps *pm, const char *path)
{
	int fd = pm->root_fd >= 0 ? pm_open_in_root(pm->root_fd, path, O_RDONLY | O_NONBLOCK) : -1;
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void read_status(struct procmaps *pm, const char *status)
{
	pm->nspid = pm->pid;
	const char *f = procfs_status_field(status, "NSpid");
	if (f) {
		/* The last number on the line is the pid in the innermost namespace. */
		const char *eol = strchr(f, '\n');
		if (!eol)
			eol = f + strlen(f);
		const char *q = eol;
		while (q > f && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		const char *digits = q;
		while (digits > f && digits[-1] >= '0' && digits[-1] <= '9')
			digits--;
		uint64_t v = 0;
		bool ok = q > digits && q - digits <= 10;  /* (no overflow) */
		for (const char *d = digits; ok && d < q; d++)
			v = v * 10 + (uint64_t)(*d - '0');
		if (ok && v > 0 && v <= INT_MAX)
			pm->nspid = (pid_t)v;
	}
	pm->ruid = pm->euid = (uid_t)-1;
	f = procfs_status_field(status, "Uid");
	unsigned long r, e;
	if (f && sscanf(f, "%lu %lu", &r, &e) == 2) {
		pm->ruid = (uid_t)r;
		pm->euid = (uid_t)e;
	}
}

/* Whether /proc/ID/maps (ID a process or any of its threads) has a line. */
static bool maps_nonempty(pid_t id)
{
	char path[64], c;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)id);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, &c, 1);
	close(fd);
	return n == 1;
}

/* The /proc entry to read PID's memory map through: PID itself, or, once
 * its main thread has exited (pthread_exit: its maps read empty, its
 * map_files and memory cannot be read), the first live thread. */
static pid_t live_task(pid_t pid)
{
	if (maps_nonempty(pid))
		return pid;
	struct procfs_dir d;
	pid_t found = pid, tid;
	procfs_dir_open(&d, pid);
	for (unsigned seen = 0; seen < LIVE_TASK_SCAN && (tid = procfs_dir_next(&d)) > 0; seen++)
		if (tid != pid && maps_nonempty(tid)) {
			found = tid;
			break;
		}
	procfs_dir_close(&d);
	return found;
}

static void release_vdso(struct procmaps *pm)
{
	if (pm->vdso && !pm_shared_vdso_drop(pm->shared, pm->vdso))
		free(pm->vdso);
	pm->vdso = NULL;
}

struct procmaps *procmaps_new_shared(pid_t pid, struct procmaps_files *files)
{
	struct procmaps *pm = procmaps_new(pid);
	if (pm && files) {
		pm->shared = files;
		pm_share_root(pm);
	}
	return pm;
}

/* An empty map, its descriptors none yet; NULL when out of memory. */
struct procmaps *pm_alloc(void)
{
	struct procmaps *pm = calloc(1, sizeof(*pm));
	if (pm && !(pm->scratch = malloc(PROCMAPS_PATH_MAX))) {
		free(pm);
		pm = NULL;
	}
	if (pm) {
		pm->root_fd = -1;
		pm->maps_fd = -1;
	}
	return pm;
}

struct procmaps *procmaps_new(pid_t pid)
{
	if (pid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	struct procmaps *pm = pm_alloc();
	if (!pm)
		return NULL;
	pm->pid = pid;
	pm->proc_pid = live_task(pid);
	char path[64];
	char status[4096];
	if (procfs_read_file(pid, 0, "status", status, sizeof status) < 0) {
		int err = errno == ENOENT ? ESRCH : errno;
		free(pm->scratch);
		free(pm);
		errno = err;
		return NULL;
	}
	read_status(pm, status);
	snprintf(path, sizeof path, "/proc/%d/root", (int)pm->proc_pid);
	pm->root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return pm;
}

void procmaps_trim(struct procmaps *pm)
{
	if (pm->maps_fd >= 0)
		close(pm->maps_fd);
	pm->maps_fd = -1;
	if (pm->root_fd >= 0 && pm->root_shared)
		pm_shared_unref(pm->shared, pm->root_fd);
	else if (pm->root_fd >= 0)
		close(pm->root_fd);
	pm->root_fd = -1;
	for (size_t i = 0; i < pm->nfiles; i++) {
		if (pm->files[i].shared)
			pm_shared_unref(pm->shared, pm->files[i].fd);
		else
			close(pm->files[i].fd);
	}
	for (size_t i = 0; i < pm->n; i++)
		free(pm->all[i]);
	while (pm->nspare > 0)
		free(pm->spare[--pm->nspare]);
	for (size_t i = 0; i < pm->njit; i++)
		free(pm->jit[i].sym.name);
	free(pm->files);
	free(pm->all);
	free(pm->maxend);
	free(pm->cur);
	free(pm->buf);
	free(pm->scratch);
	release_vdso(pm);
	free(pm->jit);
	for (unsigned k = 0; k < RUNTIME_KINDS; pm->runtime_names[k++] = NULL)
		if (pm->runtime_names[k])   /* (made by that kind's names_new) */
			runtime_ops_of(k)->names_free(pm->runtime_names[k]);
	pm->files = NULL;
	pm->all = pm->cur = NULL;
	pm->maxend = NULL;
	pm->buf = pm->scratch = NULL;
	pm->jit = NULL;
	pm->nfiles = pm->filescap = pm->n = pm->cap = pm->ncur = pm->curcap = 0;
	pm->njit = pm->jitcap = pm->bufcap = pm->buflen = 0;
	pm->generation++;
}

void *procmaps_runtime_names(struct procmaps *pm, unsigned kind)
{
	const struct runtime_ops *ops = runtime_ops_of(kind);
	if (ops && ops->names_new && !pm->runtime_names[kind])
		pm->runtime_names[kind] = ops->names_new();
	return ops ? pm->runtime_names[kind] : NULL;
}

const void *procmaps_runtime(const struct procmaps *pm, unsigned kind)
{
	return kind < RUNTIME_KINDS ? pm->runtime_names[kind] : NULL;
}

void procmaps_free(struct procmaps *pm)
{
	if (!pm)
		return;
	procmaps_trim(pm);
	free(pm);
}

/* ---- refresh -------------------------------------------------------------- */

/* Read the maps file whole into pm->buf; returns its length or -1. */
static ssize_t read_maps_once(struct procmaps *pm)
{
	if (pm->maps_fd < 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/maps", (int)pm->proc_pid);
		pm->maps_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (pm->maps_fd < 0) {
			if (errno == ENOENT)
				errno = ESRCH;
			return -1;
		}
	}
	if (!pm->buf) {
		pm->buf = malloc(MAPS_BUF_INITIAL);
		if (!pm->buf)
			return -1;
		pm->bufcap = MAPS_BUF_INITIAL;
	}
	size_t got = 0;
	for (;;) {
		if (got == pm->bufcap) {
			if (pm->bufcap >= PROCMAPS_MAX_BYTES)
				break;
			char *nb = realloc(pm->buf, pm->bufcap * 2);
			if (!nb)
				return -1;
			pm->buf = nb;
			pm->bufcap *= 2;
		}
		ssize_t r = pread(pm->maps_fd, pm->buf + got, pm->bufcap - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			if (errno == ENOENT)
				errno = ESRCH;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	pm->buflen = got;
	return (ssize_t)got;
}

/* As read_maps_once; an empty file means the thread we read through has
 * exited (a process's maps are empty once its main thread has): read
 * through a live thread instead. */
static ssize_t read_maps(struct procmaps *pm)
{
	ssize_t got = read_maps_once(pm);
	if (got != 0)
		return got;
	pid_t live = live_task(pm->pid);
	if (live == pm->proc_pid)
		return got;
	close(pm->maps_fd);
	pm->maps_fd = -1;
	pm->proc_pid = live;
	return read_maps_once(pm);
}

static bool same_mapping(const struct procmaps_entry *a, const struct procmaps_entry *b,
			 const char *bpath)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && a->readable == b->readable &&
	       a->writable == b->writable && a->executable == b->executable &&
	       a->shared == b->shared && a->deleted == b->deleted && strcmp(a->path, bpath) == 0;
}

/* First index in ALL[0, n) whose start is >= ADDR. */
static size_t lower_bound_all(struct node *const *all, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (all[mid]->e.start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct node *find_known(const struct procmaps *pm, size_t nsorted,
			       const struct procmaps_entry *e, const char *path)
{
	for (size_t i = lower_bound_all(pm->all, nsorted, e->start);
	     i < nsorted && pm->all[i]->e.start == e->start; i++)
		if (same_mapping(&pm->all[i]->e, e, path))
			return pm->all[i];
	return NULL;
}

/* The descriptor PM holds open on the file E maps, or -1. */
int pm_held_fd(const struct procmaps *pm, const struct procmaps_entry *e)
{
	for (size_t i = 0; i < pm->nfiles; i++) {
		const struct open_file *f = &pm->files[i];
		if (f->inode == e->inode && f->dev_major == e->dev_major && f->dev_minor == e->dev_minor)
			return f->fd;
	}
	return -1;
}

int procmaps_open_file(const struct procmaps *pm, const struct procmaps_entry *e)
{
	return e->fd >= 0 ? e->fd : e->inode ? pm_held_fd(pm, e) : -1;
}

static int file_fd(struct procmaps *pm, const struct procmaps_entry *e, const char *path)
{
	int held = pm_held_fd(pm, e);
	if (held >= 0)
		return held;
	if (pm->nfiles >= MAX_FILES)
		return -1;
	struct shared_file *sf = pm->shared ? pm_shared_find(pm->shared, false, e->dev_major, e->dev_minor,
							   e->inode, 0) : NULL;
	if (sf) {
		if (array_grow(&pm->files, &pm->filescap, pm->nfiles + 1, sizeof *pm->files, 16) < 0)
			return -1;
		sf->refs++;
		pm->files[pm->nfiles++] = (struct open_file){
			.inode = e->inode, .dev_major = e->dev_major, .dev_minor = e->dev_minor,
			.fd = sf->fd, .shared = true,
		};
		return sf->fd;
	}
	int fd = pm_open_mapped_file(pm, e, path);
	if (fd < 0)
		return -1;
	if (array_grow(&pm->files, &pm->filescap, pm->nfiles + 1, sizeof *pm->files, 16) < 0) {
		close(fd);
		return -1;
	}
	bool shared = pm->shared && pm_shared_add(pm->shared, false, e->dev_major, e->dev_minor,
					       e->inode, 0, fd);
	pm->files[pm->nfiles++] = (struct open_file){
		.inode = e->inode, .dev_major = e->dev_major, .dev_minor = e->dev_minor, .fd = fd,
		.shared = shared,
	};
	return fd;
}

static void copy_vdso(struct procmaps *pm, const struct procmaps_entry *e)
{
	size_t len = (size_t)(e->end - e->start);
	if (len == 0 || len > VDSO_MAX_BYTES)
		return;
	void *img = malloc(len);
	if (!img)
		return;
	if (!procfs_read_memory_all(pm->proc_pid, e->start, img, len)) {
		free(img);
		return;
	}
	release_vdso(pm);
	if (pm->shared) {
		void *held = pm_shared_vdso_take(pm->shared, img, len);
		if (held)
			img = held;
	}
	pm->vdso = img;
	pm->vdso_len = len;
	pm->vdso_start = e->start;
}

/* The tag of a new code mapping E (the SEQ-th): one no mapping known over
 * its addresses holds, so each library loaded where another was keeps its
 * name (with 1 + SEQ % 63, two libraries 63 mappings apart shared one:
 * sym_dlopen_reuse, 0 of 392 samples alpha's in CI); shared only when 63
 * over its range hold every tag. The sorted part is searched as
 * procmaps_find_tagged does, the mappings added since linearly. */
static unsigned free_code_tag(const struct procmaps *pm, size_t nsorted,
			      const struct procmaps_entry *e, uint64_t seq)
{
	uint64_t used = 0;
	for (size_t i = lower_bound_all(pm->all, nsorted, e->end);
	     i > 0 && pm->maxend[i - 1] > e->start; i--)
		if (pm->all[i - 1]->e.end > e->start)
			used |= UINT64_C(1) << pm->all[i - 1]->e.tag;
	for (size_t i = nsorted; i < pm->n; i++)
		if (pm->all[i]->e.start < e->end && e->start < pm->all[i]->e.end)
			used |= UINT64_C(1) << pm->all[i]->e.tag;
	for (unsigned k = 0; k < 63; k++) {
		unsigned tag = 1 + (unsigned)((seq + k) % 63);
		if (!(used & (UINT64_C(1) << tag)))
			return tag;
	}
	return 1 + (unsigned)(seq % 63);
}

struct node *pm_add_mapping(struct procmaps *pm, size_t nsorted, const struct procmaps_entry *e,
			    const char *path)
{
	if (pm->n == pm->cap) {
		size_t nc = pm->cap ? pm->cap * 2 : 32;
		struct node **na = realloc(pm->all, nc * sizeof(*na));
		if (!na)
			return NULL;
		pm->all = na;
		uint64_t *nm = realloc(pm->maxend, nc * sizeof(*nm));
		if (!nm)
			return NULL;
		pm->maxend = nm;
		pm->cap = nc;
	}
	size_t plen = strlen(path);
	struct node *nd;
	if (plen < PROCMAPS_SPARE_PATH && pm->nspare > 0)
		nd = pm->spare[--pm->nspare];
	else if (!(nd = malloc(sizeof(*nd) + plen + 1)))
		return NULL;
	nd->e = *e;
	memcpy(nd->path, path, plen + 1);
	nd->e.path = nd->path;
	nd->e.current = true;
	nd->e.image = pm->image;
	nd->e.fd = -1;
	nd->seq = pm->seq++;
	nd->e.tag = e->executable ? free_code_tag(pm, nsorted, e, nd->seq)
				  : 1 + (unsigned)(nd->seq % 63);
	if (e->executable && !pm->reuse) {
		/* a code mapping where another one was, of the same image */
		/* (current mappings never overlap: one that does and is not in
		 * this listing, seen before this refresh, is gone) */
		for (size_t i = 0; i < pm->n && !pm->reuse; i++) {
			const struct procmaps_entry *o = &pm->all[i]->e;
			pm->reuse = o->executable && pm->all[i]->seen != pm->epoch &&
				    o->image == pm->image && o->start < e->end && e->start < o->end &&
				    (o->inode != e->inode || o->offset != e->offset);
		}
	}
	nd->seen = pm->epoch;
	if (e->executable && path[0] == '/' && e->inode != 0)
		nd->e.fd = file_fd(pm, e, path);
	if (strcmp(path, "[vdso]") == 0)
		copy_vdso(pm, &nd->e);
	pm->all[pm->n++] = nd;
	return nd;
}

static int cmp_node(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a, *y = *(struct node *const *)b;
	if (x->e.start != y->e.start)
		return x->e.start < y->e.start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int pm_rebuild_indexes(struct procmaps *pm, size_t nsorted)
{
	if (pm->n - nsorted > PROCMAPS_SPARE) {
		qsort(pm->all, pm->n, sizeof(*pm->all), cmp_node);
	} else {
		/* a few added to a sorted list: inserted in place (glibc's
		 * qsort allocates a buffer for more than 128 pointers) */
		for (size_t i = nsorted; i < pm->n; i++) {
			struct node *nd = pm->all[i];
			size_t j = i;
			for (; j > 0 && cmp_node(&pm->all[j - 1], &nd) > 0; j--)
				pm->all[j] = pm->all[j - 1];
			pm->all[j] = nd;
		}
	}
	uint64_t m = 0;
	size_t ncur = 0;
	for (size_t i = 0; i < pm->n; i++) {
		if (pm->all[i]->e.end > m)
			m = pm->all[i]->e.end;
		pm->maxend[i] = m;
		ncur += pm->all[i]->e.current;
	}
	if (ncur > pm->curcap) {
		struct node **nc = realloc(pm->cur, ncur * sizeof(*nc));
		if (!nc)
			return -1;
		pm->cur = nc;
		pm->curcap = ncur;
	}
	pm->ncur = 0;
	for (size_t i = 0; i < pm->n; i++)
		if (pm->all[i]->e.current)
			pm->cur[pm->ncur++] = pm->all[i];
	return 0;
}

int procmaps_refresh(struct procmaps *pm)
{
	ssize_t len = read_maps(pm);
	if (len < 0)
		return -1;
	if (len == 0) {
		/* A live process always has mappings: its mm is gone. */
		errno = ESRCH;
		return -1;
	}
	pm->epoch++;
	size_t nsorted = pm->n;
	int added = 0;
	bool changed = false, failed = false, code_added = false;
	const char *p = pm->buf, *end = pm->buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;   /* a partial last line (buffer bound): ignore */
		struct procmaps_entry e;
		if (procmaps_parse_line(p, (size_t)(nl - p), &e, pm->scratch, PROCMAPS_PATH_MAX) == 0) {
			struct node *nd = find_known(pm, nsorted, &e, pm->scratch);
			if (nd) {
				if (!nd->e.current)
					changed = true;
				nd->e.current = true;
				nd->seen = pm->epoch;
			} else if (pm->n >= PROCMAPS_MAX_ENTRIES) {
				/* Bounded: mappings beyond the limit are not recorded. */
			} else if (pm_add_mapping(pm, nsorted, &e, pm->scratch)) {
				added++;
				code_added |= e.executable && e.inode != 0;
			} else {
				failed = true;
			}
		}
		p = nl + 1;
	}
	for (size_t i = 0; i < pm->ncur; i++) {
		struct node *nd = pm->cur[i];
		if (nd->seen != pm->epoch && nd->e.current) {
			nd->e.current = false;
			changed = true;
			pm->code_unloaded |= nd->e.executable && nd->e.inode != 0;
		}
	}
	if (added || changed) {
		if (pm_rebuild_indexes(pm, nsorted) < 0)
			return -1;
		pm->generation++;
	}
	pm->code_generation += code_added;
	if (failed) {
		errno = ENOMEM;
		return -1;
	}
	return added;
}

void procmaps_reserve(struct procmaps *pm)
{
	if (pm->gone || !pm->all)
		return;
	while (pm->nspare < PROCMAPS_SPARE) {
		struct node *nd = malloc(sizeof(*nd) + PROCMAPS_SPARE_PATH);
		if (!nd)
			return;
		pm->spare[pm->nspare++] = nd;
	}
	if (pm->cap - pm->n < PROCMAPS_SPARE) {
		size_t nc = pm->cap * 2 > pm->n + PROCMAPS_SPARE ? pm->cap * 2 : pm->n + PROCMAPS_SPARE;
		struct node **na = realloc(pm->all, nc * sizeof(*na));
		if (!na)
			return;
		pm->all = na;
		uint64_t *nm = realloc(pm->maxend, nc * sizeof(*nm));
		if (!nm)
			return;
		pm->maxend = nm;
		pm->cap = nc;
	}
	if (pm->curcap - pm->ncur < PROCMAPS_SPARE) {
		size_t nc = pm->ncur + 2 * PROCMAPS_SPARE;
		struct node **na = realloc(pm->cur, nc * sizeof(*na));
		if (!na)
			return;
		pm->cur = na;
		pm->curcap = nc;
	}
	/* a few more lines read without growing the buffer */
	if (pm->buf && pm->bufcap - pm->buflen < 4096 && pm->bufcap < PROCMAPS_MAX_BYTES) {
		char *nb = realloc(pm->buf, pm->bufcap * 2);
		if (!nb)
			return;
		pm->buf = nb;
		pm->bufcap *= 2;
	}
}

unsigned procmaps_image(const struct procmaps *pm)
{
	return pm->image;
}

bool procmaps_is_gone(const struct procmaps *pm)
{
	return pm->gone;
}

void procmaps_gone(struct procmaps *pm)
{
	pm->gone = true;
	if (pm->maps_fd >= 0) {
		close(pm->maps_fd);
		pm->maps_fd = -1;
	}
	/* never read again: its buffer goes (a --children run of thousands
	 * of short processes kept 64 KB each) */
	free(pm->buf);
	pm->buf = NULL;
	pm->bufcap = pm->buflen = 0;
	while (pm->nspare > 0)
		free(pm->spare[--pm->nspare]);
}

void procmaps_exec(struct procmaps *pm)
{
	for (size_t i = 0; i < pm->ncur; i++)
		pm->cur[i]->e.current = false;
	pm->ncur = 0;
	pm->generation++;
	pm->image++;
	/* The descriptor shows the mm it was opened on: reopen for the new one. */
	if (pm->maps_fd >= 0) {
		close(pm->maps_fd);
		pm->maps_fd = -1;
	}
}

/* ---- lookups -------------------------------------------------------------- */

static bool contains(const struct procmaps_entry *e, uint64_t addr)
{
	return addr >= e->start && addr < e->end;
}

const struct procmaps_entry *procmaps_find(const struct procmaps *pm, uint64_t addr)
{
	/* Current mappings do not overlap: the last one starting at or below. */
	size_t i = addr == UINT64_MAX ? pm->ncur : lower_bound_all(pm->cur, pm->ncur, addr + 1);
	for (size_t k = 0; k < CUR_WALK_BACK && i > 0; k++, i--)
		if (contains(&pm->cur[i - 1]->e, addr))
			return &pm->cur[i - 1]->e;
	/* History: walk back while some earlier mapping still reaches ADDR. */
	const struct node *best = NULL;
	i = addr == UINT64_MAX ? pm->n : lower_bound_all(pm->all, pm->n, addr + 1);
	for (; i > 0 && pm->maxend[i - 1] > addr; i--) {
		const struct node *nd = pm->all[i - 1];
		if (!contains(&nd->e, addr))
			continue;
		if (!best || (nd->e.current && !best->e.current) ||
		    (nd->e.current == best->e.current && nd->seq > best->seq))
			best = nd;
	}
	return best ? &best->e : NULL;
}

uint64_t procmaps_next_start(const struct procmaps *pm, uint64_t addr)
{
	if (addr == UINT64_MAX)
		return UINT64_MAX;
	size_t i = lower_bound_all(pm->cur, pm->ncur, addr + 1);
	return i < pm->ncur ? pm->cur[i]->e.start : UINT64_MAX;
}

const struct procmaps_entry *procmaps_find_tagged(const struct procmaps *pm, uint64_t addr,
						  unsigned tag)
{
	if ((tag == 0 && !pm->reuse) || addr == UINT64_MAX)
		return procmaps_find(pm, addr);
	const struct node *best = NULL;
	size_t i = lower_bound_all(pm->all, pm->n, addr + 1);
	for (; i > 0 && pm->maxend[i - 1] > addr; i--) {
		const struct node *nd = pm->all[i - 1];
		if (!contains(&nd->e, addr))
			continue;
		if (tag ? nd->e.tag == tag && nd->e.executable && (!best || nd->seq > best->seq)
			: nd->e.image == pm->image && nd->e.executable && (!best || nd->seq < best->seq))
			best = nd;
	}
	return best ? &best->e : procmaps_find(pm, addr);
}

bool procmaps_has_reuse(const struct procmaps *pm)
{
	return pm->reuse;
}

bool procmaps_code_unloaded(const struct procmaps *pm)
{
	return pm->code_unloaded;
}

size_t procmaps_count(const struct procmaps *pm)
{
	return pm->n;
}

const struct procmaps_entry *procmaps_at(const struct procmaps *pm, size_t i)
{
	return i < pm->n ? &pm->all[i]->e : NULL;
}

uint64_t procmaps_generation(const struct procmaps *pm)
{
	return pm->generation;
}

uint64_t procmaps_code_generation(const struct procmaps *pm)
{
	return pm->code_generation;
}

pid_t procmaps_pid(const struct procmaps *pm)
{
	return pm->pid;
}

int procmaps_root_fd(const struct procmaps *pm)
{
	return pm->root_fd;
}

const void *procmaps_vdso_image(const struct procmaps *pm, size_t *len, uint64_t *start)
{
	if (len)
		*len = pm->vdso ? pm->vdso_len : 0;
	if (start)
		*start = pm->vdso ? pm->vdso_start : 0;
	return pm->vdso;
}
