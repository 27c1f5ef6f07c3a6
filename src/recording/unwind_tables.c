/* unwind_tables: the module (executable mapping) of an address and what
 * libunwind's find_proc_info needs of it: the executable segment and the
 * binary-search table of its .eh_frame_hdr, read from the ELF file procmaps
 * opened (or the vdso image), bounded (EH_FRAME_HDR_MAX, MODULES_MAX) and
 * checked against the file, never trusted. */
#include "config.h"

#include <dwarf.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "gopclntab.h"
#include "gostack.h"
#include "unwind_internal.h"

/* ---- modules: .eh_frame_hdr tables -------------------------------------- */

void uw_module_free(struct module *m)
{
	free(m->table);
	m->table = NULL;
	free(m->funcs);
	m->funcs = NULL;
	free(m->go_marks);
	m->go_marks = NULL;
	m->ngo_marks = 0;
}

/* Function symbols read from a module without CFI at most. */
#define FUNCS_MAX 1000000

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A stripped Go binary's function starts, from its own function table
 * (.gopclntab), BIAS added, into M; false if it has none. */
static bool module_load_go_funcs(struct module *m, Elf_Scn *table, uint64_t text,
				 uint64_t bias)
{
	struct gopclntab go;
	Elf_Data *d = table ? elf_getdata(table, NULL) : NULL;
	if (!d || !d->d_buf || !gopclntab_parse(&go, d->d_buf, d->d_size, text))
		return false;
	size_t n = go.nfunc < FUNCS_MAX ? (size_t)go.nfunc : FUNCS_MAX, kept = 0;
	uint64_t *f = malloc(n * sizeof *f);
	if (!f)
		return false;
	n = gopclntab_entries(&go, f, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t a = bias + f[i];
		if (a >= m->text_start && a < m->text_end && (kept == 0 || a > f[kept - 1]))
			f[kept++] = a;   /* (in order: a table out of order is cut) */
	}
	if (kept == 0) {
		free(f);
		return false;
	}
	m->funcs = f;
	m->nfuncs = kept;
	return true;
}

/* The sections of a module's file that unwinding reads besides its
 * segments. */
struct module_sections {
	Elf_Scn *sym, *dyn, *go;  /* symbol tables, Go's function table */
	Elf_Scn *go_info;         /* Go's build information (.go.buildinfo) */
	Elf_Scn *text_scn;        /* .text */
	uint64_t text;            /* .text's address */
};

static bool module_find_sections(Elf *elf, struct module_sections *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx = 0;
	bool names = elf_getshdrstrndx(elf, &shstrndx) == 0;
	*out = (struct module_sections){ 0 };
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_type == SHT_SYMTAB)
			out->sym = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			out->dyn = scn;
		const char *name = names && sh.sh_type == SHT_PROGBITS
				   ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (gopclntab_section(name))
			out->go = scn;
		else if (name && strcmp(name, ".go.buildinfo") == 0)
			out->go_info = scn;
		else if (name && strcmp(name, ".text") == 0) {
			out->text = sh.sh_addr;
			out->text_scn = scn;
		}
	}
	return true;
}

/* Go's marked functions (struct go_mark) in the function table of M (in
 * SECS), BIAS added. */
#define GO_MARKS_MAX 32u
static void module_load_go_marks(struct unwinder *u, struct module *m,
				 const struct module_sections *secs, uint64_t bias)
{
	struct gopclntab go;
	Elf_Data *d = elf_getdata(secs->go, NULL);
	if (!d || !d->d_buf || !gopclntab_parse(&go, d->d_buf, d->d_size, secs->text))
		return;
	struct go_mark marks[GO_MARKS_MAX];
	size_t n = 0;
	for (uint64_t i = 0; i < go.nfunc && i < FUNCS_MAX && n < GO_MARKS_MAX; i++) {
		struct gopclntab_entry e;
		if (!gopclntab_function(&go, i, &e))
			continue;
		enum go_mark_kind kind;
		if (gostack_name_is(e.name, e.name_len, "runtime.sigtramp") ||
		    gostack_name_is(e.name, e.name_len, "runtime.cgoSigtramp"))
			kind = GO_SIGNAL;
		else if (e.flag & GOPCLNTAB_FLAG_TOPFRAME)
			kind = GO_ROOT;
		else if (gostack_name_is(e.name, e.name_len, "runtime.mcall"))
			kind = GO_MCALL;
		else if (gostack_name_is(e.name, e.name_len, "runtime.systemstack"))
			kind = GO_SYSTEMSTACK;
		else if (gostack_name_is(e.name, e.name_len, "runtime.morestack"))
			kind = GO_MORESTACK;
		else
			continue;
		uint64_t start = bias + e.entry, end = bias + e.end;
		if (start < m->text_start || end > m->text_end || (n && start < marks[n - 1].end))
			continue;   /* (in order: a table out of order is cut) */
		marks[n++] = (struct go_mark){ .start = start, .end = end, .kind = kind };
	}
	if (n && (m->go_marks = malloc(n * sizeof *marks)) != NULL) {
		memcpy(m->go_marks, marks, n * sizeof *marks);
		m->ngo_marks = n;
		u->go_marked = true;
	}
}

const struct go_mark *uw_go_mark(struct unwind_ctx *c, uint64_t ip)
{
	struct module *m = uw_module_for_ip(c, ip);
	for (size_t i = 0; m && i < m->ngo_marks; i++)
		if (ip >= m->go_marks[i].start && ip < m->go_marks[i].end)
			return &m->go_marks[i];
	return NULL;
}

/* M has no CFI table, or has Go code (a cgo program's table covers its C
 * code only): keep its function starts (symbol table, else the dynamic
 * one, else a Go binary's function table), BIAS added, within its text,
 * for the frame-record scan of code with frame pointers
 * (uw_function_start). */
static void module_load_funcs(struct module *m, const struct module_sections *secs, uint64_t bias)
{
	GElf_Shdr sh;
	if (!secs->sym && secs->go && module_load_go_funcs(m, secs->go, secs->text, bias))
		return;
	Elf_Scn *scn = secs->sym ? secs->sym : secs->dyn;
	Elf_Data *data = scn && gelf_getshdr(scn, &sh) ? elf_getdata(scn, NULL) : NULL;
	if (!data || sh.sh_entsize == 0)
		return;
	size_t n = sh.sh_size / sh.sh_entsize, kept = 0;
	if (n > FUNCS_MAX)
		n = FUNCS_MAX;
	uint64_t *f = malloc((n ? n : 1) * sizeof *f);
	if (!f)
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_value == 0)
			continue;
		uint64_t a = bias + s.st_value;
		if (a >= m->text_start && a < m->text_end)
			f[kept++] = a;
	}
	if (kept == 0) {
		free(f);
		return;
	}
	qsort(f, kept, sizeof *f, cmp_u64);
	m->funcs = f;
	m->nfuncs = kept;
}

bool uw_reread_maps(struct unwinder *u)
{
	uint64_t now = uw_monotonic_ns();
	if (now - u->last_refresh_ns < REFRESH_INTERVAL_NS)
		return false;
	u->last_refresh_ns = now;
	return procmaps_refresh(u->pm) > 0;
}

uint64_t uw_function_start(struct unwind_ctx *c, uint64_t ip)
{
	struct module *m = uw_module_for_ip(c, ip);
	if (!m || !m->nfuncs || ip < m->funcs[0])
		return 0;
	size_t lo = 0, hi = m->nfuncs;  /* the last start <= ip */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->funcs[mid] <= ip)
			lo = mid;
		else
			hi = mid;
	}
	return m->funcs[lo];
}

/* Size of a value encoded with ENC in .eh_frame_hdr, or 0 if unsupported. */
static size_t eh_encoded_size(uint8_t enc)
{
	if (enc & 0x80)              /* DW_EH_PE_indirect */
		return 0;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: return 8;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: return 2;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: return 4;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: return 8;
	default: return 0;           /* uleb128/sleb128 and unknown */
	}
}

static uint64_t read_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = n; i > 0; i--)
		v = v << 8 | p[i - 1];
	return v;
}

/* Parse the .eh_frame_hdr copy HDR (LEN bytes) into M. Only the layout
 * libunwind's remote-table search accepts is taken: version 1, a table
 * encoded datarel|sdata4, an fde_count of fixed size and absolute value. */
static bool parse_eh_frame_hdr(struct module *m, const uint8_t *hdr, size_t len)
{
	if (len < 4 || hdr[0] != 1)
		return false;
	uint8_t ptr_enc = hdr[1], count_enc = hdr[2], table_enc = hdr[3];
	if (table_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return false;
	size_t ptr_size = eh_encoded_size(ptr_enc);
	size_t count_size = eh_encoded_size(count_enc);
	if (ptr_enc == DW_EH_PE_omit || count_enc == DW_EH_PE_omit || ptr_size == 0 ||
	    count_size == 0 || (count_enc & 0x70) != DW_EH_PE_absptr)
		return false;
	size_t off = 4 + ptr_size;
	if (off + count_size > len)
		return false;
	uint64_t nfde = read_le(hdr + off, count_size);
	off += count_size;
	if (nfde == 0 || nfde > (len - off) / 8)
		return false;
	m->table = malloc((size_t)nfde * 8);
	if (!m->table)
		return false;
	for (size_t i = 0; i < 2 * nfde; i++)
		m->table[i] = (int32_t)(uint32_t)read_le(hdr + off + 4 * i, 4);
	m->nfde = (size_t)nfde;
	m->table_addr = m->hdr_addr + off;
	return true;
}

/* A file as the target sees it (runtime_module's open_file; CTX the
 * unwinder). */
static int open_in_target(void *ctx, const char *path)
{
	struct unwinder *u = ctx;
	return procmaps_open_regular(u->pm, path);
}

/* The process's names table of runtime KIND (runtime_module's names). */
static void *names_in_target(void *ctx, unsigned kind)
{
	struct unwinder *u = ctx;
	return procmaps_runtime_names(u->pm, kind);
}

/* M's file (ELF, SECS, at BIAS, from PATH) may hold a runtime U reads and
 * has not found yet: each such runtime's open looks (runtime.h), once a
 * process, and its state is read from then on where it can be. */
static void module_open_runtimes(struct unwinder *u, Elf *elf, const struct module_sections *secs,
				 uint64_t bias, const char *path)
{
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		const struct runtime_ops *ops = u->runtimes[k].ops;
		if (!ops || u->runtimes[k].found.found)
			continue;
		struct runtime_module m = {
			.pid = procmaps_pid(u->pm), .elf = elf, .sym = secs->sym, .dyn = secs->dyn,
			.text = secs->text_scn, .text_addr = secs->text, .go = secs->go,
			.go_info = secs->go_info, .bias = bias, .path = path, .program = u->nmodules == 0,
			.open_file = open_in_target, .names = names_in_target, .ctx = u,
		};
		u->runtimes[k].state = ops->open(&m, &u->runtimes[k].found);
	}
}

/* Fill M (key set) from the ELF headers: ELF is the file or the vdso image
 * mapped at M's mapping; IMAGE/IMAGE_LEN the vdso image (NULL for a file,
 * read through FD). */
static void module_load_elf(struct unwinder *u, struct module *m, Elf *elf, int fd,
			    const uint8_t *image, size_t image_len, const char *path)
{
	size_t phnum;
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    elf_getphdrnum(elf, &phnum) != 0 || phnum > 4096)
		return;
	GElf_Phdr text = { 0 }, eh = { 0 };
	bool have_text = false, have_eh = false;
	uint64_t map_len = m->map_end - m->map_start;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && !have_text &&
		    ph.p_offset < m->map_offset + map_len && m->map_offset < ph.p_offset + ph.p_filesz) {
			text = ph;
			have_text = true;
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			eh = ph;
			have_eh = true;
		}
	}
	if (!have_text)
		return;
	/* file offset X is at vaddr p_vaddr + (X - p_offset) and at address
	 * map_start + (X - map_offset): true whatever p_offset's alignment */
	uint64_t bias = m->map_start - m->map_offset - (text.p_vaddr - text.p_offset);
	m->text_start = bias + text.p_vaddr;
	m->text_end = m->text_start + text.p_memsz;
	if (m->text_start > m->map_start || m->text_end < m->map_end) {
		/* the segment must cover the mapping; else trust the mapping */
		m->text_start = m->map_start;
		m->text_end = m->map_end;
	}
	struct module_sections secs;
	bool file = !image && module_find_sections(elf, &secs);
	if (file && secs.go)
		module_load_go_marks(u, m, &secs, bias);
	/* (the program itself is the first module built: load_program_module) */
	if (file)
		module_open_runtimes(u, elf, &secs, bias, path);
	/* (a Go program linked with the C toolchain, cgo's, has a CFI table
	 * for its C code only: its Go functions need their starts too) */
	bool no_table = !have_eh || eh.p_filesz < 4 || eh.p_filesz > EH_FRAME_HDR_MAX;
	if (file && (no_table || secs.go))
		module_load_funcs(m, &secs, bias);
	if (no_table)
		return;
	m->hdr_addr = bias + eh.p_vaddr;

	size_t len = (size_t)eh.p_filesz;
	uint8_t *hdr = malloc(len);
	if (!hdr)
		return;
	bool ok = false;
	if (image) {
		if (eh.p_offset <= image_len && len <= image_len - eh.p_offset) {
			memcpy(hdr, image + eh.p_offset, len);
			ok = true;
		}
	} else {
		ok = pread(fd, hdr, len, (off_t)eh.p_offset) == (ssize_t)len;
	}
	if (ok)
		m->has_table = parse_eh_frame_hdr(m, hdr, len);
	free(hdr);
}

static struct module *module_build(struct unwind_ctx *c, const struct procmaps_entry *e)
{
	struct unwinder *u = c->u;
	if (u->nmodules == u->modules_cap) {
		if (u->nmodules >= MODULES_MAX)
			return NULL;
		if (array_grow(&u->modules, &u->modules_cap, u->nmodules + 1, sizeof *u->modules, 64) < 0)
			return NULL;
	}
	struct module *m = &u->modules[u->nmodules];
	*m = (struct module){
		.map_start = e->start, .map_end = e->end, .map_offset = e->offset,
		.inode = e->inode, .dev_major = e->dev_major, .dev_minor = e->dev_minor,
	};
	bool is_vdso = e->path && strcmp(e->path, "[vdso]") == 0;
	if (is_vdso && c->vdso && c->vdso_start == e->start) {
		m->map_offset = 0;
		Elf *elf = elf_memory((char *)(uintptr_t)c->vdso, c->vdso_len);
		if (elf) {
			module_load_elf(u, m, elf, -1, c->vdso, c->vdso_len, NULL);
			elf_end(elf);
		}
	} else if (e->fd >= 0) {
		/* read, not mapped: each unmap interrupts csampler's other
		 * threads on their CPUs, once a module of each new process
		 * (--children: 940 unmaps over 242 short processes) */
		Elf *elf = elf_begin(e->fd, ELF_C_READ, NULL);
		if (elf) {
			module_load_elf(u, m, elf, e->fd, NULL, 0, e->path);
			elf_end(elf);
		}
	}
	u->nmodules++;
	return m;
}

bool uw_module_matches(const struct module *m, const struct procmaps_entry *e)
{
	return m->map_start == e->start && m->map_end == e->end && m->inode == e->inode &&
	       m->dev_major == e->dev_major && m->dev_minor == e->dev_minor &&
	       (m->map_offset == e->offset || m->inode == 0);
}

/* The module whose mapping holds IP, building it on first use; NULL if IP is
 * in no current executable mapping (after one refresh per sample). */
struct module *uw_module_for_ip(struct unwind_ctx *c, uint64_t ip)
{
	struct unwinder *u = c->u;
	if (u->last_module < u->nmodules) {
		struct module *m = &u->modules[u->last_module];
		if (ip >= m->map_start && ip < m->map_end)
			return m;
	}
	for (size_t i = 0; i < u->nmodules; i++) {
		if (ip >= u->modules[i].map_start && ip < u->modules[i].map_end) {
			u->last_module = i;
			return &u->modules[i];
		}
	}
	const struct procmaps_entry *e = procmaps_find(u->pm, ip);
	if ((!e || !e->current || ip < e->start || ip >= e->end) && !c->refreshed) {
		c->refreshed = true;
		if (uw_reread_maps(u))
			e = procmaps_find(u->pm, ip);
	}
	if (!e || !e->current || ip < e->start || ip >= e->end || !e->executable)
		return NULL;
	return uw_module_for_entry(c, e);
}

struct module *uw_module_for_entry(struct unwind_ctx *c, const struct procmaps_entry *e)
{
	struct unwinder *u = c->u;
	for (size_t i = 0; i < u->nmodules; i++) {
		if (uw_module_matches(&u->modules[i], e)) {
			u->last_module = i;
			return &u->modules[i];
		}
	}
	struct module *m = module_build(c, e);
	if (m)
		u->last_module = (size_t)(m - u->modules);
	return m;
}
