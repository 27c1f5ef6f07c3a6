/* symcache: see symcache.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address.h"
#include "array.h"
#include "error.h"
#include "intern.h"
#include "ksyms.h"
#include "symcache.h"

struct proc {
	const struct procmaps *pm;
	pid_t pid;
	struct symbolizer *sym;
	bool tried;                     /* its symbolizer was made (or failed) */
	uint64_t generation;            /* of its mappings when it was made */
	uint64_t used;                  /* when it was last used (symcache.clock) */
	bool donor;                     /* other processes' addresses are looked up
	                                 * in its symbolizer (struct donor) */
};

/* Symbolizers of processes gone kept at once: beyond, the least recently
 * used goes (made again if needed). A --children run over thousands of
 * short processes each with a sample or two kept one per process through
 * the build: 340 MB for 24,000 processes. */
#define SYMCACHE_GONE_KEPT 32

/* A mapping of a binary (build-id, file offset, size) whose process looked
 * an address up first: another process's address in the same mapping is
 * looked up there, translated. */
struct donor {
	const char *build_id;           /* interned */
	uint64_t offset, size, start;
	size_t proc;
};

/* (build-id, file offset with the activation bit) -> frames[first, first + n). */
struct known {
	const char *build_id;           /* interned; NULL: empty slot */
	uint64_t offset;
	uint32_t first, n;
	bool jit, resolved;
};

struct symcache {
	struct symbolize_options so;
	int verbose;
	struct proc *procs;
	size_t nprocs, procs_cap;
	struct donor *donors;
	size_t ndonors, donors_cap;
	struct known *known;
	size_t known_cap, known_used;
	struct symbol_frame *pool;      /* the known addresses' frames */
	size_t npool, pool_cap;
	struct intern strings;          /* the pool's strings */
	struct symbol_frame frames[SYMCACHE_MAX_FRAMES];  /* the last lookup's */
	char unknown[64];
	uint64_t clock;                 /* symbolizer uses, for proc.used */
	const char **unnamed;           /* modules said to have no symbols (interned path) */
	size_t nunnamed, unnamed_cap;
	uint64_t unnamed_more;          /* told of beyond SYMCACHE_UNNAMED_SAID */
	struct ksyms *kernel;           /* /proc/kallsyms, read at the first kernel
	                                 * frame (NULL: not readable) */
	const struct ksyms *kernel_shared;  /* a recorder's (symcache_share_kernel) */
	bool kernel_tried;
};

struct symcache *symcache_new(const struct symbolize_options *so, int verbose)
{
	struct symcache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->so = *so;
	c->verbose = verbose;
	return c;
}

void symcache_free(struct symcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nprocs; i++)
		symbolizer_free(c->procs[i].sym);
	free(c->procs);
	free(c->donors);
	free(c->known);
	free(c->pool);
	free(c->unnamed);
	intern_free(&c->strings);
	ksyms_free(c->kernel);
	free(c);
}

void symcache_share_kernel(struct symcache *c, const struct ksyms *k)
{
	if (k)
		c->kernel_shared = k;
}

int symcache_add_process(struct symcache *c, const struct procmaps *pm)
{
	if (array_grow(&c->procs, &c->procs_cap, c->nprocs + 1, sizeof *c->procs, 16) < 0)
		return -1;
	c->procs[c->nprocs++] = (struct proc){ .pm = pm, .pid = procmaps_pid(pm) };
	return 0;
}

size_t symcache_nprocesses(const struct symcache *c)
{
	return c->nprocs;
}

void symcache_release_gone(struct symcache *c)
{
	for (size_t i = 0; i < c->nprocs; i++) {
		struct proc *p = &c->procs[i];
		if (p->sym && procmaps_is_gone(p->pm)) {
			symbolizer_free(p->sym);
			p->sym = NULL;
			p->tried = true;  /* not made again */
			p->generation = procmaps_generation(p->pm);
		}
	}
}

/* Process I's symbolizer, made now if it was not, or again if its mappings
 * changed since (a library loaded: the addresses stored since must be
 * found; mappings are never forgotten, so nothing known is lost). */
/* Before a symbolizer is made for gone process KEEP: if SYMCACHE_GONE_KEPT
 * are held for gone processes, free the least recently used (it is made
 * again if one of its addresses comes), a donor only where all held are:
 * a donor holds the debug information it has loaded for others (libc's is
 * decompressed again, 50 ms, each time it is made again), the others only
 * their mappings' identities. */
static void bound_gone(struct symcache *c, size_t keep)
{
	size_t held = 0, lru = SIZE_MAX;
	for (size_t i = 0; i < c->nprocs; i++) {
		struct proc *p = &c->procs[i];
		if (i == keep || !p->sym || !procmaps_is_gone(p->pm))
			continue;
		held++;
		if (lru == SIZE_MAX || (!p->donor && c->procs[lru].donor) ||
		    (p->donor == c->procs[lru].donor && p->used < c->procs[lru].used))
			lru = i;
	}
	if (held < SYMCACHE_GONE_KEPT || lru == SIZE_MAX)
		return;
	symbolizer_free(c->procs[lru].sym);
	c->procs[lru].sym = NULL;
	c->procs[lru].tried = false;
}

static struct symbolizer *symbolizer_of(struct symcache *c, size_t i)
{
	struct proc *p = &c->procs[i];
	uint64_t gen = procmaps_generation(p->pm);
	p->used = ++c->clock;
	if (p->tried && (gen == p->generation || !p->sym))
		return p->sym;
	if (procmaps_is_gone(p->pm))
		bound_gone(c, i);
	symbolizer_free(p->sym);
	p->tried = true;
	p->generation = gen;
	p->sym = symbolizer_new(p->pm, &c->so);
	if (!p->sym && c->verbose)
		warn_errno("cannot symbolize pid %d", (int)p->pid);
	return p->sym;
}

/* The newest process of PID, or SIZE_MAX (a pid can be reused). */
static size_t proc_of(const struct symcache *c, pid_t pid)
{
	for (size_t i = c->nprocs; i-- > 0;)
		if (c->procs[i].pid == pid)
			return i;
	return SIZE_MAX;
}

/* ---- the kernel's frames ------------------------------------------------------------ */

static const char *keep(struct symcache *c, const char *str, bool *ok);

/* The kernel's symbols, read once (every process shares them). */
static const struct ksyms *kernel_symbols(struct symcache *c)
{
	if (c->kernel_shared)
		return c->kernel_shared;
	if (!c->kernel_tried) {
		c->kernel_tried = true;
		c->kernel = ksyms_load();
		if (!c->kernel && c->verbose)
			warn_errno("cannot read /proc/kallsyms: kernel frames are named by address");
	}
	return c->kernel;
}

/* The kernel mapping ADDR is in: the image's or a module's ("[name]"), or
 * (no symbol there) the top 2 GiB the kernel's code is in. */
static bool kernel_module(struct symcache *c, uint64_t addr, struct symbol_module *out,
			  struct ksyms_symbol *sym)
{
	bool ok = true, found = ksyms_lookup(kernel_symbols(c), addr_lookup_pc(addr), sym);
	char name[600];
	if (found && sym->module)
		snprintf(name, sizeof name, "[%s]", sym->module);
	*out = (struct symbol_module){
		.path = keep(c, found && sym->module ? name : KSYMS_KERNEL_MAPPING, &ok),
		.start = found ? sym->region_start : UINT64_C(0xffffffff80000000),
		.limit = found ? sym->region_limit : UINT64_MAX,
	};
	return ok && found;
}

static void kernel_lookup(struct symcache *c, uint64_t addr, struct symcache_result *out)
{
	struct ksyms_symbol sym;
	bool ok = true;
	out->found = kernel_module(c, addr, &out->module, &sym) && !c->so.addresses_only;
	out->has_module = out->module.path != NULL;
	const char *name = out->found ? keep(c, sym.name, &ok) : NULL;
	if (!name) {
		out->found = false;
		if (out->has_module && c->so.addresses_only)
			snprintf(c->unknown, sizeof c->unknown, "%.20s+0x%llx", out->module.path,
				 (unsigned long long)(addr_value(addr) - out->module.start));
		else
			snprintf(c->unknown, sizeof c->unknown, "0x%llx",
				 (unsigned long long)addr_value(addr));
		name = c->unknown;
	}
	c->frames[0] = (struct symbol_frame){ .function = name, .system_name = name,
					      .resolved = out->found };
	out->frames = c->frames;
	out->n = 1;
	out->resolved = out->found;
}

size_t symcache_kernel_stack(struct symcache *c, const char *text, size_t len, uint64_t *out,
			     size_t max)
{
	return ksyms_stack(kernel_symbols(c), text, len, out, max);
}

bool symcache_module(struct symcache *c, pid_t pid, uint64_t addr, struct symbol_module *out)
{
	struct ksyms_symbol ks;
	if (addr_is_kernel(addr))
		return kernel_module(c, addr, out, &ks) || out->path;
	size_t i = proc_of(c, pid);
	struct symbolizer *sym = i == SIZE_MAX ? NULL : symbolizer_of(c, i);
	return sym && symbolizer_module(sym, addr, out);
}

/* ---- binaries seen in any process ------------------------------------------------- */

static uint64_t known_hash(const char *build_id, uint64_t offset)
{
	return hash_u64(hash_bytes(build_id, strlen(build_id)) ^ offset);
}

/* The slot of (BUILD_ID, OFFSET): found (build_id set) or empty; NULL out
 * of memory. */
static struct known *known_slot(struct symcache *c, const char *build_id, uint64_t offset)
{
	if (c->known_used * 2 >= c->known_cap) {
		size_t ncap = c->known_cap ? c->known_cap * 2 : 1024;
		struct known *nk = calloc(ncap, sizeof *nk);
		if (!nk)
			return NULL;
		for (size_t i = 0; i < c->known_cap; i++) {
			if (!c->known[i].build_id)
				continue;
			size_t h = known_hash(c->known[i].build_id, c->known[i].offset) & (ncap - 1);
			while (nk[h].build_id)
				h = (h + 1) & (ncap - 1);
			nk[h] = c->known[i];
		}
		free(c->known);
		c->known = nk;
		c->known_cap = ncap;
	}
	size_t h = known_hash(build_id, offset) & (c->known_cap - 1);
	while (c->known[h].build_id) {
		if (c->known[h].offset == offset && strcmp(c->known[h].build_id, build_id) == 0)
			break;
		h = (h + 1) & (c->known_cap - 1);
	}
	return &c->known[h];
}

/* STR interned, NULL kept; *OK false out of memory. */
static const char *keep(struct symcache *c, const char *str, bool *ok)
{
	if (!str)
		return NULL;
	const char *k = intern_string(&c->strings, str, strlen(str));
	*ok &= k != NULL;
	return k;
}

/* Remember R's frames for the empty SLOT of (MOD's build-id, OFFSET). */
static void known_put(struct symcache *c, struct known *slot, const struct symbol_module *mod,
		      uint64_t offset, const struct symcache_result *r)
{
	if (c->npool + r->n > UINT32_MAX ||
	    array_grow(&c->pool, &c->pool_cap, c->npool + r->n, sizeof *c->pool, 4096) < 0)
		return;
	bool ok = true;
	const char *build_id = keep(c, mod->build_id, &ok);
	for (size_t i = 0; i < r->n; i++) {
		struct symbol_frame f = r->frames[i];
		f.function = keep(c, f.function, &ok);
		f.system_name = keep(c, f.system_name, &ok);
		f.file = keep(c, f.file, &ok);
		c->pool[c->npool + i] = f;
	}
	if (!ok)
		return;
	*slot = (struct known){ .build_id = build_id, .offset = offset, .first = (uint32_t)c->npool,
				.n = (uint32_t)r->n, .jit = r->jit, .resolved = r->resolved };
	c->npool += r->n;
	c->known_used++;
}

/* The symbolizer to look ADDR (in MOD, of process I) up in, and the address
 * there: a donor that mapped the same part of the same binary, or process
 * I's own (which becomes the donor). */
static struct symbolizer *lookup_in(struct symcache *c, size_t i, const struct symbol_module *mod,
				    uint64_t *addr)
{
	/* (an address tagged with its mapping, in a process that loaded a
	 * library where another had been, is looked up there only: another
	 * process's address at that place may be the other library's) */
	if (!mod->build_id || !*mod->build_id || addr_tag(*addr))
		return symbolizer_of(c, i);
	uint64_t size = mod->limit - mod->start;
	for (size_t k = 0; k < c->ndonors; k++) {
		struct donor *d = &c->donors[k];
		if (d->offset == mod->offset && d->size == size && strcmp(d->build_id, mod->build_id) == 0) {
			struct symbolizer *sym = symbolizer_of(c, d->proc);
			if (!sym)
				break;
			*addr = (addr_value(*addr) - mod->start + d->start) | (*addr & ADDR_ACTIVATION);
			return sym;
		}
	}
	bool ok = true;
	const char *build_id = keep(c, mod->build_id, &ok);
	if (ok && array_grow(&c->donors, &c->donors_cap, c->ndonors + 1, sizeof *c->donors, 64) == 0) {
		c->donors[c->ndonors++] = (struct donor){ .build_id = build_id, .offset = mod->offset,
			.size = size, .start = mod->start, .proc = i };
		c->procs[i].donor = true;
	}
	return symbolizer_of(c, i);
}

bool symcache_first_unnamed(struct symcache *c, const struct symbol_module *mod)
{
	bool ok = true;
	const char *path = keep(c, mod->path, &ok);
	if (!ok || !path)
		return false;
	for (size_t i = 0; i < c->nunnamed; i++)
		if (c->unnamed[i] == path)
			return false;
	if (c->nunnamed >= SYMCACHE_UNNAMED_SAID ||
	    array_grow(&c->unnamed, &c->unnamed_cap, c->nunnamed + 1, sizeof *c->unnamed, 8) < 0) {
		c->unnamed_more++;
		return false;
	}
	c->unnamed[c->nunnamed++] = path;
	return true;
}

bool symcache_more_unnamed(const struct symcache *c)
{
	return c->unnamed_more > 0;
}

/* ---- lookup ---------------------------------------------------------------------- */

int symcache_lookup(struct symcache *c, pid_t pid, uint64_t addr, struct symcache_result *out)
{
	size_t i = proc_of(c, pid);
	struct symbolizer *sym = i == SIZE_MAX ? NULL : symbolizer_of(c, i);
	struct known *slot = NULL;
	uint64_t offset = 0;
	size_t n = 0;

	memset(out, 0, sizeof *out);
	if (addr_is_kernel(addr)) {
		kernel_lookup(c, addr, out);
		return 0;
	}
	/* the mapping's identity first (cheap): an address of a binary seen in
	 * another process takes its frames from what is known */
	if (sym && symbolizer_module(sym, addr, &out->module)) {
		const struct symbol_module *mod = &out->module;
		out->has_module = true;
		if (mod->build_id && *mod->build_id && addr_value(addr) >= mod->start) {
			offset = (addr_value(addr) - mod->start + mod->offset) | (addr & ADDR_ACTIVATION);
			slot = known_slot(c, mod->build_id, offset);
			if (!slot)
				return -1;
		}
		if (slot && slot->build_id) {
			out->found = true;
			out->frames = &c->pool[slot->first];
			out->n = slot->n;
			out->jit = slot->jit;
			out->resolved = slot->resolved;
			out->module.unnamed = !out->resolved && symbolizer_module_unnamed(sym, addr);
			return 0;
		}
		uint64_t there = addr;
		struct symbolizer *where = lookup_in(c, i, mod, &there);
		if (where)
			n = symbolizer_lookup(where, there, c->frames, SYMCACHE_MAX_FRAMES);
	} else if (sym) {
		n = symbolizer_lookup(sym, addr, c->frames, SYMCACHE_MAX_FRAMES);
	}
	out->found = n > 0;
	if (n == 0) {
		slot = NULL;  /* its name is the process's address: not shared */
		snprintf(c->unknown, sizeof c->unknown, "0x%llx", (unsigned long long)addr_value(addr));
		c->frames[0] = (struct symbol_frame){ .function = c->unknown, .system_name = c->unknown };
		n = 1;
	}
	out->frames = c->frames;
	out->n = n;
	out->resolved = true;
	for (size_t k = 0; k < n; k++) {
		out->resolved &= c->frames[k].resolved;
		out->jit |= c->frames[k].jit;
	}
	/* (asked only of an unresolved address, here and above: it indexes the
	 * file's symbols, once per process) */
	if (out->has_module && !out->resolved)
		out->module.unnamed = symbolizer_module_unnamed(sym, addr);
	if (slot)
		known_put(c, slot, &out->module, offset, out);
	return 0;
}
