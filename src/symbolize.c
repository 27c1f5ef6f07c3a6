/* symbolize: addresses -> frames with libdwfl, once per unique address.
 *
 * Modules are reported to one Dwfl lazily, the first time an address falls in
 * a file mapping. The ELF is opened before reporting, in this order: the
 * descriptor procmaps opened while the target was alive (any mapping of the
 * same file), else PATH under the target's root, else PATH in our own mount
 * namespace when its device and inode match the mapping. The load bias comes
 * from the ELF's program headers and the mapping's offset, so the module's low
 * address is what libdwfl needs to derive the same bias; our find_elf
 * callback hands libdwfl that already opened ELF (or the vdso image, from
 * memory) and falls back to the standard build-id lookup. Separate debuginfo
 * is found by the standard callback (build-id, then debuglink with CRC or
 * build-id verification) under the target's root and /usr/lib/debug; libdwfl
 * asks debuginfod only when DEBUGINFOD_URLS is set.
 *
 * Results are cached per lookup pc; every string handed out is interned in an
 * arena owned by the symbolizer and capped at SYM_NAME_MAX bytes. Errors in
 * ELF or DWARF data only ever mean "no symbol". */
#include "config.h"

#include "array.h"
#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "address.h"
#include "intern.h"

#define SYM_NAME_MAX 4096          /* bytes kept of any name or path */
#define SYM_DEMANGLE_INPUT_MAX 16384 /* longer mangled names are not demangled */
#define SYM_MAX_CHAIN 64           /* frames kept per address (inline depth) */
#define SYM_PAGE 4096u

/* ---- string interning ------------------------------------------------------ */

/* Length of S capped at SYM_NAME_MAX - 1, cut on a UTF-8 character boundary. */
static size_t capped_length(const char *s, size_t n)
{
	if (n < SYM_NAME_MAX)
		return n;
	n = SYM_NAME_MAX - 1;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

/* The interned copy of the first N bytes of S (capped); NULL only when out of memory. */
static const char *intern_n(struct intern *t, const char *s, size_t n)
{
	return intern_string(t, s, capped_length(s, n));
}

static const char *intern(struct intern *t, const char *s)
{
	return intern_n(t, s, strnlen(s, SYM_NAME_MAX));
}

/* ---- modules --------------------------------------------------------------- */

/* A function symbol of a module (name owned by libelf's string table). */
struct sym_entry {
	uint64_t addr, size;
	const char *name;
	int rank;                      /* sized > global > weak > local */
};

/* The address ranges of the functions (DW_TAG_subprogram) of one CU. */
struct func_range {
	uint64_t lo, hi;               /* DWARF addresses, [lo, hi) */
	Dwarf_Die die;
};

/* A code range [lo, hi) of the CU whose DIE is at die_offset. */
struct cu_span {
	uint64_t lo, hi, die_offset;
};

struct cu_index {
	uint64_t cu_offset;
	struct func_range *funcs;      /* sorted by lo */
	size_t n, cap;
};

struct sym_module {
	const char *path;              /* interned, as the target sees it */
	uint64_t inode;
	unsigned dev_major, dev_minor;
	uint64_t bias, low, high;
	Dwfl_Module *dwfl_mod;         /* NULL when the file could not be opened */
	int pending_fd;                /* handed to libdwfl by find_elf */
	Elf *pending_elf;
	char *pending_name;
	const char *build_id;          /* interned lowercase hex, or NULL */
	bool is_vdso;
	void *image;                   /* the vdso image elf_memory reads */
	struct sym_entry *syms;        /* function symbols sorted by address */
	size_t nsyms;
	bool syms_built;
	struct cu_index *cus;          /* per-CU function ranges, sorted by CU offset */
	size_t ncus, cus_cap;
	struct cu_span *spans;         /* every CU's code ranges, sorted (cu_by_ranges) */
	size_t nspans;
	bool spans_built;
	struct qname_slot {            /* qualified_name's answers by DIE offset */
		uint64_t die_offset;   /* 0: empty */
		const char *name;
	} *qnames;
	size_t qnames_cap, qnames_used;
};

/* Which module a procmaps entry resolved to (by the entry's identity). */
struct entry_link {
	uint64_t start, end, offset, inode;
	size_t module;                 /* index into modules, or SIZE_MAX: none */
};

struct cache_slot {
	uint64_t pc;                   /* key; 0 = empty (pc 0 is never cached) */
	uint32_t first, count;         /* frames[first .. first+count) */
};

struct symbolizer {
	const struct procmaps *pm;
	struct symbolize_options opt;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	int root_fd;                   /* our dup of the target's root, or -1 */
	bool foreign_root;             /* root_fd is not our own / */

	struct sym_module **modules;
	size_t nmodules, modules_cap;
	struct entry_link *links;
	size_t nlinks, links_cap;

	struct cache_slot *cache;
	size_t cache_slots, cache_count;
	struct symbol_frame *frames;
	size_t nframes, frames_cap;

	struct intern strings;
};

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash != NULL && slash[1] != '\0' ? slash + 1 : path;
}

static bool entry_is_vdso(const struct procmaps_entry *e)
{
	return strcmp(e->path, "[vdso]") == 0;
}

/* A mapping of a regular file that symbolization can open. */
static bool entry_is_file(const struct procmaps_entry *e)
{
	return e->path[0] == '/' && strncmp(e->path, "/memfd:", 7) != 0 &&
	       strncmp(e->path, "/dev/", 5) != 0 && strncmp(e->path, "/SYSV", 5) != 0;
}

/* Load bias of ELF when the page at file OFFSET is mapped at START (with
 * execute permission EXEC); the low and high addresses of the whole image as
 * libdwfl computes them. The loader maps each PT_LOAD from its page-aligned
 * offset, so the segment starting at OFFSET is the one (several can share a
 * page: prefer matching PF_X); else the segment containing OFFSET. */
static bool elf_load_layout(Elf *elf, uint64_t start, uint64_t offset, bool exec,
			    uint64_t *bias, uint64_t *low, uint64_t *high)
{
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0 || phnum == 0 || phnum > 65535)
		return false;
	bool have_first = false;
	int best = 0; /* 3: starts at OFFSET with matching PF_X, 2: starts at OFFSET, 1: contains */
	uint64_t first_vaddr = 0, top = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) == NULL)
			return false;
		if (ph.p_type != PT_LOAD)
			continue;
		if (!have_first) {
			/* libdwfl: vaddr = p_vaddr & -p_align of the first PT_LOAD */
			first_vaddr = ph.p_vaddr & -ph.p_align;
			have_first = true;
		}
		if (ph.p_vaddr + ph.p_memsz > top)
			top = ph.p_vaddr + ph.p_memsz;
		uint64_t off_page = ph.p_offset & ~(uint64_t)(SYM_PAGE - 1);
		uint64_t vaddr_page = ph.p_vaddr & ~(uint64_t)(SYM_PAGE - 1);
		int score = 0;
		if (off_page == offset)
			score = ((ph.p_flags & PF_X) != 0) == exec ? 3 : 2;
		else if (offset > off_page && offset < ph.p_offset + ph.p_filesz)
			score = 1;
		if (score > best) {
			best = score;
			*bias = start - (vaddr_page + (offset - off_page));
		}
	}
	if (!have_first)
		return false;
	if (best == 0)
		*bias = start - offset;
	*low = *bias + first_vaddr;
	*high = *bias + top;
	if (*high <= *low)
		*high = *low + 1;
	return true;
}

/* Lowercase hex of ELF's GNU build-id, interned; NULL if none. */
static const char *elf_build_id_hex(struct symbolizer *s, Elf *elf)
{
	const void *bits;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
	if (n <= 0 || n > 64)
		return NULL;
	char hex[129];
	for (ssize_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)bits)[i]);
	return intern_n(&s->strings, hex, 2 * (size_t)n);
}

static bool same_file_identity(const struct procmaps_entry *a, const struct procmaps_entry *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && strcmp(a->path, b->path) == 0;
}

/* An open descriptor of E's file (see the file comment for the order), and
 * the name libdwfl should use for it (for debuglink lookups). -1 if none. */
static int open_entry_file(struct symbolizer *s, const struct procmaps_entry *e, char **name)
{
	int fd = -1;
	if (e->fd >= 0)
		fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 0);
	size_t n = procmaps_count(s->pm);
	for (size_t i = 0; fd < 0 && i < n; i++) {
		const struct procmaps_entry *o = procmaps_at(s->pm, i);
		if (o != NULL && o->fd >= 0 && same_file_identity(o, e))
			fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0);
	}
	if (fd < 0 && s->root_fd >= 0 && !e->deleted)
		fd = openat(s->root_fd, e->path + 1, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && (s->root_fd < 0 || !s->foreign_root || e->deleted)) {
		/* Our own namespace: only the very file the target mapped. */
		int own = open(e->path, O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (own >= 0 && fstat(own, &st) == 0 && (uint64_t)st.st_ino == e->inode &&
		    major(st.st_dev) == e->dev_major && minor(st.st_dev) == e->dev_minor)
			fd = own;
		else if (own >= 0)
			close(own);
	}
	if (fd < 0)
		return -1;
	char buf[PROCMAPS_PATH_MAX + 64];
	if (s->root_fd >= 0 && s->foreign_root)
		snprintf(buf, sizeof buf, "/proc/self/fd/%d%s", s->root_fd, e->path);
	else
		snprintf(buf, sizeof buf, "%s", e->path);
	*name = strdup(buf);
	return fd;
}

static int find_elf_callback(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct sym_module *m = *userdata;
	if (m != NULL && m->pending_elf != NULL) {
		int fd = m->pending_fd;
		*elfp = m->pending_elf;
		*file_name = m->pending_name;
		m->pending_elf = NULL;
		m->pending_name = NULL;
		m->pending_fd = -1;
		return fd;
	}
	return dwfl_build_id_find_elf(mod, userdata, modname, base, file_name, elfp);
}

static void module_release_pending(struct sym_module *m)
{
	if (m->pending_elf != NULL)
		elf_end(m->pending_elf);
	if (m->pending_fd >= 0)
		close(m->pending_fd);
	free(m->pending_name);
	m->pending_elf = NULL;
	m->pending_fd = -1;
	m->pending_name = NULL;
}

static size_t module_add(struct symbolizer *s, struct sym_module *m)
{
	if (array_grow(&s->modules, &s->modules_cap, s->nmodules + 1, sizeof *s->modules, 32) < 0)
		return SIZE_MAX;
	s->modules[s->nmodules] = m;
	return s->nmodules++;
}

/* Report M (with its opened ELF pending) to the Dwfl. */
static void module_report(struct symbolizer *s, struct sym_module *m)
{
	if (s->dwfl == NULL)
		return;
	dwfl_report_begin_add(s->dwfl);
	Dwfl_Module *mod = dwfl_report_module(s->dwfl, m->path, m->low, m->high);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (mod == NULL)
		return;
	void **userdata = NULL;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata == NULL)
		return;
	*userdata = m;
	m->dwfl_mod = mod;
}

/* The module for entry E, opened and reported on first use; NULL if its file
 * cannot be read as ELF. */
static struct sym_module *module_for_entry(struct symbolizer *s, const struct procmaps_entry *e)
{
	for (size_t i = 0; i < s->nlinks; i++) {
		const struct entry_link *l = &s->links[i];
		if (l->start == e->start && l->end == e->end && l->offset == e->offset &&
		    l->inode == e->inode)
			return l->module == SIZE_MAX ? NULL : s->modules[l->module];
	}
	if (array_grow(&s->links, &s->links_cap, s->nlinks + 1, sizeof *s->links, 64) < 0)
		return NULL;
	struct entry_link *link = &s->links[s->nlinks++];
	*link = (struct entry_link){ e->start, e->end, e->offset, e->inode, SIZE_MAX };

	int fd = -1;
	char *name = NULL;
	void *image = NULL;
	Elf *elf = NULL;
	uint64_t start = e->start, offset = e->offset;
	bool vdso = entry_is_vdso(e);
	if (vdso) {
		size_t len = 0;
		uint64_t vstart = 0;
		const void *src = procmaps_vdso_image(s->pm, &len, &vstart);
		if (src == NULL || len == 0 || len > (64u << 20) || (image = malloc(len)) == NULL)
			return NULL;
		memcpy(image, src, len);
		elf = elf_memory(image, len);
		start = vstart;
		offset = 0;
		name = strdup("[vdso]");
	} else {
		fd = open_entry_file(s, e, &name);
		if (fd < 0)
			return NULL;
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	}
	uint64_t bias, low, high;
	if (elf == NULL || elf_kind(elf) != ELF_K_ELF ||
	    !elf_load_layout(elf, start, offset, vdso || e->executable, &bias, &low, &high))
		goto fail;

	/* The same file at the same bias is the same module. */
	for (size_t i = 0; i < s->nmodules; i++) {
		struct sym_module *m = s->modules[i];
		if (m->bias == bias && m->inode == e->inode && m->dev_major == e->dev_major &&
		    m->dev_minor == e->dev_minor && strcmp(m->path, e->path) == 0) {
			elf_end(elf);
			if (fd >= 0)
				close(fd);
			free(name);
			free(image);
			link->module = i;
			return m;
		}
	}

	struct sym_module *m = calloc(1, sizeof *m);
	const char *path = intern(&s->strings, e->path);
	if (m == NULL || path == NULL) {
		free(m);
		goto fail;
	}
	m->path = path;
	m->inode = e->inode;
	m->dev_major = e->dev_major;
	m->dev_minor = e->dev_minor;
	m->bias = bias;
	m->low = low;
	m->high = high;
	m->is_vdso = vdso;
	m->image = image;
	m->build_id = elf_build_id_hex(s, elf);
	m->pending_fd = fd;
	m->pending_elf = elf;
	m->pending_name = name;
	size_t idx = module_add(s, m);
	if (idx == SIZE_MAX) {
		module_release_pending(m);
		free(m->image);
		free(m);
		return NULL;
	}
	link->module = idx;
	if (!s->opt.addresses_only)
		module_report(s, m);
	return m;

fail:
	if (elf != NULL)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(name);
	free(image);
	return NULL;
}

/* ---- frames ------------------------------------------------------------------ */

char *symbolize_demangle(const char *name)
{
	if (name == NULL || name[0] != '_' || strnlen(name, SYM_DEMANGLE_INPUT_MAX + 1) > SYM_DEMANGLE_INPUT_MAX)
		return NULL;
	/* _Z: C++ Itanium and Rust legacy (_ZN...17h<hash>E); _R: Rust v0.
	 * DMGL_AUTO tries the Rust demangler first (it drops the legacy hash
	 * unless DMGL_VERBOSE), then the Itanium one. */
	if (name[1] != 'Z' && name[1] != 'R' && !(name[1] == '_' && name[2] == 'Z'))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

/* Strip "@VERSION" / "@@VERSION" from an ELF symbol name, then set the
 * frame's names (demangled display name, mangled system name). */
static bool frame_set_names(struct symbolizer *s, struct symbol_frame *f, const char *raw)
{
	if (raw == NULL || raw[0] == '\0')
		return false;
	size_t n = strnlen(raw, SYM_DEMANGLE_INPUT_MAX + 1);
	const char *at = memchr(raw, '@', n);
	if (at != NULL && at != raw)
		n = (size_t)(at - raw);
	const char *mangled = intern_n(&s->strings, raw, n);
	if (mangled == NULL)
		return false;
	char *demangled = symbolize_demangle(mangled);
	f->system_name = mangled;
	f->function = mangled;
	if (demangled != NULL) {
		const char *d = intern(&s->strings, demangled);
		free(demangled);
		if (d != NULL)
			f->function = d;
	}
	f->resolved = true;
	return true;
}

/* "module+0xOFF" for an address nothing names (OFF is the file offset);
 * "[anon]@0xADDR" in anonymous memory (JIT code without a perf map: an
 * offset there would merge code of different regions), "0xADDR" outside
 * every mapping. */
static void frame_set_unresolved(struct symbolizer *s, struct symbol_frame *f,
				 const struct procmaps_entry *e, uint64_t pc)
{
	char buf[SYM_NAME_MAX + 32];
	if (e == NULL)
		snprintf(buf, sizeof buf, "0x%" PRIx64, pc);
	else if (e->path[0] == '\0')
		snprintf(buf, sizeof buf, "[anon]@0x%" PRIx64, pc);
	else
		snprintf(buf, sizeof buf, "%s+0x%" PRIx64, basename_of(e->path),
			 pc - e->start + e->offset);
	const char *name = intern(&s->strings, buf);
	f->function = f->system_name = name != NULL ? name : "[unknown]";
	f->resolved = false;
}

static const char *die_string_attr(Dwarf_Die *die, unsigned attr)
{
	Dwarf_Attribute a;
	if (dwarf_attr_integrate(die, attr, &a) == NULL)
		return NULL;
	return dwarf_formstring(&a);
}

/* The declaration DIE behind DIE: through DW_AT_abstract_origin (an inline
 * instance) and DW_AT_specification (a definition out of its class). */
static Dwarf_Die declaration_of(Dwarf_Die *die)
{
	Dwarf_Die d = *die, next;
	for (int k = 0; k < 8; k++) {
		Dwarf_Attribute a;
		if ((dwarf_attr(&d, DW_AT_abstract_origin, &a) == NULL &&
		     dwarf_attr(&d, DW_AT_specification, &a) == NULL) ||
		    dwarf_formref_die(&a, &next) == NULL)
			break;
		d = next;
	}
	return d;
}

/* Append "name::" for SCOPE to BUF (of SIZE, at *LEN) if it names a scope. */
static void append_scope(char *buf, size_t size, size_t *len, Dwarf_Die *scope)
{
	const char *name;
	switch (dwarf_tag(scope)) {
	case DW_TAG_namespace:
		name = dwarf_diename(scope) ? dwarf_diename(scope) : "(anonymous namespace)";
		break;
	case DW_TAG_class_type: case DW_TAG_structure_type: case DW_TAG_union_type:
		/* GCC names no lambda's closure type */
		name = dwarf_diename(scope) ? dwarf_diename(scope) : "{lambda}";
		break;
	case DW_TAG_subprogram:   /* a local class's, a lambda's function */
		name = dwarf_diename(scope);
		break;
	default:
		return;
	}
	if (name != NULL && *len < size) {
		int w = snprintf(buf + *len, size - *len, "%s::", name);
		*len += w > 0 ? (size_t)w : 0;
	}
}

/* NAME qualified by the namespaces, classes and functions around the
 * declaration of DIE ("std::_Function_handler<...>::_M_invoke"), for a C++
 * function DWARF gives no linkage name (GCC leaves it off the abstract
 * instances of inlined templates and lambdas). Cached per declaration:
 * finding a DIE's scopes walks its unit. */
static const char *qualified_name(struct symbolizer *s, struct sym_module *m, Dwarf_Die *die,
				  const char *name)
{
	Dwarf_Die cu;
	int lang = dwarf_diecu(die, &cu, NULL, NULL) != NULL ? dwarf_srclang(&cu) : -1;
	if (lang != DW_LANG_C_plus_plus && lang != DW_LANG_C_plus_plus_03 &&
	    lang != DW_LANG_C_plus_plus_11 && lang != DW_LANG_C_plus_plus_14)
		return name;
	Dwarf_Die decl = declaration_of(die);
	uint64_t off = dwarf_dieoffset(&decl);
	if (off == 0 || off == (uint64_t)-1)
		return name;
	if (m->qnames_used * 2 >= m->qnames_cap) {
		size_t ncap = m->qnames_cap ? m->qnames_cap * 2 : 64;
		struct qname_slot *nq = calloc(ncap, sizeof *nq);
		if (nq == NULL)
			return name;
		for (size_t i = 0; i < m->qnames_cap; i++) {
			if (m->qnames[i].die_offset == 0)
				continue;
			size_t h = (m->qnames[i].die_offset * 0x9E3779B97F4A7C15ull) & (ncap - 1);
			while (nq[h].die_offset != 0)
				h = (h + 1) & (ncap - 1);
			nq[h] = m->qnames[i];
		}
		free(m->qnames);
		m->qnames = nq;
		m->qnames_cap = ncap;
	}
	size_t h = (off * 0x9E3779B97F4A7C15ull) & (m->qnames_cap - 1);
	while (m->qnames[h].die_offset != 0) {
		if (m->qnames[h].die_offset == off)
			return m->qnames[h].name;
		h = (h + 1) & (m->qnames_cap - 1);
	}
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes_die(&decl, &scopes);
	char buf[SYM_NAME_MAX];
	size_t len = 0;
	for (int i = n - 2; i >= 1; i--)  /* [0] is the DIE, [n - 1] its unit */
		append_scope(buf, sizeof buf, &len, &scopes[i]);
	free(scopes);
	const char *q = name;
	if (len > 0 && len < sizeof buf) {
		snprintf(buf + len, sizeof buf - len, "%s", name);
		q = intern(&s->strings, buf);
		if (q == NULL)
			q = name;
	}
	m->qnames[h] = (struct qname_slot){ off, q };
	m->qnames_used++;
	return q;
}

static const char *cu_file_name(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

#define SYM_MAX_SYMBOLS (1u << 22)   /* symbols indexed per module */
#define SYM_MAX_CU_FUNCS (1u << 20)  /* function ranges indexed per CU */
#define SYM_MAX_DIE_DEPTH 64
#define SYM_MAX_CHILDREN (1u << 20)  /* children examined per DIE */
#define SYM_MAX_UNITS (1u << 20)     /* units read per module by cu_by_ranges */
#define SYM_MAX_SPANS (1u << 22)     /* CU ranges kept per module */
#define SYM_MAX_SECTIONS (1u << 16)  /* section headers read per file */

static int compare_syms(const void *pa, const void *pb)
{
	const struct sym_entry *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return b->rank - a->rank;
	/* aliases of one function: the public name (malloc, not __libc_malloc),
	 * as perf chooses: fewer leading underscores, then the shorter */
	size_t ua = strspn(a->name, "_"), ub = strspn(b->name, "_");
	if (ua != ub)
		return ua < ub ? -1 : 1;
	size_t la = strlen(a->name), lb = strlen(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Index M's function symbols once: libdwfl's own lookup scans the whole table
 * for every address, which costs milliseconds in a large library. */
static void module_index_symbols(struct sym_module *m)
{
	m->syms_built = true;
	int n = dwfl_module_getsymtab(m->dwfl_mod);
	if (n <= 1)
		return;
	if ((unsigned)n > SYM_MAX_SYMBOLS)
		n = SYM_MAX_SYMBOLS;
	m->syms = malloc((size_t)n * sizeof *m->syms);
	if (m->syms == NULL)
		return;
	size_t k = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(m->dwfl_mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (name == NULL || name[0] == '\0' || sym.st_shndx == SHN_UNDEF || addr == 0)
			continue;
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		int rank = (sym.st_size > 0 ? 4 : 0) +
			   (bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1);
		m->syms[k++] = (struct sym_entry){ addr, sym.st_size, name, rank };
	}
	qsort(m->syms, k, sizeof *m->syms, compare_syms);
	/* one name per address: the best ranked sorts first */
	size_t w = 0;
	for (size_t i = 0; i < k; i++)
		if (w == 0 || m->syms[w - 1].addr != m->syms[i].addr)
			m->syms[w++] = m->syms[i];
	m->nsyms = w;
}

/* The dynamic symbol that relocation sections of ELF bind to the GOT slot
 * at SLOT (a file address), or NULL. The file is the target's: counts and
 * indexes are bounded by the sections' own sizes. */
static const char *got_slot_symbol(Elf *elf, uint64_t slot)
{
	Elf_Scn *scn = NULL;
	size_t nscn = 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL && nscn++ < SYM_MAX_SECTIONS) {
		GElf_Shdr sh, symsh;
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
			continue;
		Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
		Elf_Data *rd = elf_getdata(scn, NULL);
		Elf_Data *sd = symscn != NULL ? elf_getdata(symscn, NULL) : NULL;
		if (rd == NULL || sd == NULL || gelf_getshdr(symscn, &symsh) == NULL ||
		    symsh.sh_entsize == 0)
			continue;
		size_t nrel = rd->d_size / sh.sh_entsize, nsym = sd->d_size / symsh.sh_entsize;
		for (size_t i = 0; i < nrel && i < SYM_MAX_SYMBOLS; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			if (gelf_getrela(rd, (int)i, &r) == NULL || r.r_offset != slot)
				continue;
			size_t k = GELF_R_SYM(r.r_info);
			if (k == 0 || k >= nsym || gelf_getsym(sd, (int)k, &sym) == NULL)
				return NULL;
			return elf_strptr(elf, symsh.sh_link, sym.st_name);
		}
	}
	return NULL;
}

/* Names PC as "symbol@plt" when it lies in a PLT section (.plt, .plt.sec,
 * .plt.got) of module M's file, from the entry's indirect jump (jmp
 * *disp(%rip), ff 25) to its GOT slot and the relocation of that slot, as
 * perf does ("[plt]": the lazy-binding stub); the symbol table only has the
 * sizeless _init before them. */
static bool frame_set_plt_name(struct symbolizer *s, struct sym_module *m, struct symbol_frame *f,
			       uint64_t pc)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->dwfl_mod, &bias);
	size_t shstrndx;
	if (elf == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	uint64_t a = pc - bias;
	Elf_Scn *scn = NULL;
	size_t nscn = 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL && nscn++ < SYM_MAX_SECTIONS) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || a < sh.sh_addr || a - sh.sh_addr >= sh.sh_size)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name == NULL || strncmp(name, ".plt", 4) != 0)
			return false;
		uint64_t ent = sh.sh_entsize >= 8 && sh.sh_entsize <= 64 ? sh.sh_entsize : 16;
		uint64_t at = (a - sh.sh_addr) / ent * ent;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (d == NULL || d->d_buf == NULL || at + ent > d->d_size)
			return false;
		const unsigned char *b = (const unsigned char *)d->d_buf + at;
		for (uint64_t i = 0; i + 6 <= ent; i++) {
			if (b[i] != 0xff || b[i + 1] != 0x25)
				continue;
			int32_t disp;
			memcpy(&disp, b + i + 2, sizeof disp);
			const char *sym = got_slot_symbol(elf, sh.sh_addr + at + i + 6 + (uint64_t)(int64_t)disp);
			if (sym == NULL || !frame_set_names(s, f, sym))
				break;  /* the lazy-binding stub (PLT0) */
			char buf[SYM_NAME_MAX + 8];
			snprintf(buf, sizeof buf, "%s@plt", f->function);
			const char *fn = intern(&s->strings, buf);
			snprintf(buf, sizeof buf, "%s@plt", f->system_name);
			const char *sn = intern(&s->strings, buf);
			if (fn == NULL || sn == NULL)
				return false;
			f->function = fn;
			f->system_name = sn;
			return true;
		}
		const char *plt = intern(&s->strings, "[plt]");
		if (plt == NULL)
			return false;
		f->function = f->system_name = plt;
		f->resolved = true;
		return true;
	}
	return false;
}

/* The best-ranked function symbol at exactly ADDR, or NULL. */
static const struct sym_entry *symtab_at(struct sym_module *m, uint64_t addr)
{
	if (!m->syms_built)
		module_index_symbols(m);
	size_t lo = 0, hi = m->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nsyms && m->syms[lo].addr == addr ? &m->syms[lo] : NULL;
}

/* The function symbol containing PC (a sized one, else the nearest sizeless
 * one before it); NULL if none. */
static const char *symtab_name(struct sym_module *m, uint64_t pc)
{
	if (!m->syms_built)
		module_index_symbols(m);
	size_t lo = 0, hi = m->nsyms;
	while (lo < hi) { /* first symbol above pc */
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	for (size_t k = lo, steps = 0; k > 0 && steps < 32; k--, steps++) {
		const struct sym_entry *e = &m->syms[k - 1];
		if (e->size > 0 && pc - e->addr < e->size)
			return e->name;
	}
	const struct sym_entry *prev = &m->syms[lo - 1];
	return prev->size == 0 ? prev->name : NULL;
}

static bool cu_index_push(struct cu_index *ci, uint64_t lo, uint64_t hi, const Dwarf_Die *die)
{
	if (ci->n == ci->cap) {
		if (ci->cap >= SYM_MAX_CU_FUNCS)
			return false;
		if (array_grow(&ci->funcs, &ci->cap, ci->n + 1, sizeof *ci->funcs, 64) < 0)
			return false;
	}
	ci->funcs[ci->n++] = (struct func_range){ lo, hi, *die };
	return true;
}

/* Collect the code ranges of the subprograms under DIE: at CU level, in
 * namespaces, classes and modules, and nested in other functions. */
static void cu_index_collect(struct cu_index *ci, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;
	if (depth > SYM_MAX_DIE_DEPTH || dwarf_child(die, &child) != 0)
		return;
	size_t visited = 0;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			for (int r = 0; r < 4096 && (off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0; r++)
				if (hi > lo && !cu_index_push(ci, lo, hi, &child))
					return;
			cu_index_collect(ci, &child, depth + 1);
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			   tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
			   tag == DW_TAG_module || tag == DW_TAG_interface_type) {
			cu_index_collect(ci, &child, depth + 1);
		}
	} while (++visited < SYM_MAX_CHILDREN && dwarf_siblingof(&child, &child) == 0);
}

static int compare_ranges(const void *pa, const void *pb)
{
	const struct func_range *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	/* the wider (outer) function first, so a nested one wins the search */
	return a->hi > b->hi ? -1 : a->hi < b->hi ? 1 : 0;
}

/* The function index of CU, built on first use. */
static struct cu_index *cu_index_get(struct sym_module *m, Dwarf_Die *cu)
{
	uint64_t off = dwarf_dieoffset(cu);
	size_t lo = 0, hi = m->ncus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->cus[mid].cu_offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->ncus && m->cus[lo].cu_offset == off)
		return &m->cus[lo];
	if (array_grow(&m->cus, &m->cus_cap, m->ncus + 1, sizeof *m->cus, 16) < 0)
		return NULL;
	memmove(&m->cus[lo + 1], &m->cus[lo], (m->ncus - lo) * sizeof *m->cus);
	m->ncus++;
	struct cu_index *ci = &m->cus[lo];
	*ci = (struct cu_index){ .cu_offset = off };
	cu_index_collect(ci, cu, 0);
	qsort(ci->funcs, ci->n, sizeof *ci->funcs, compare_ranges);
	return ci;
}

/* The innermost function DIE of CI whose code contains PC (DWARF address). */
static bool cu_index_find(const struct cu_index *ci, uint64_t pc, Dwarf_Die *out)
{
	size_t lo = 0, hi = ci->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ci->funcs[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo, steps = 0; k > 0 && steps < 64; k--, steps++) {
		const struct func_range *f = &ci->funcs[k - 1];
		if (pc < f->hi) {
			*out = f->die;
			return true;
		}
	}
	return false;
}

/* Scopes from FUNC down to the innermost block containing PC; the inlined
 * instances among them into CHAIN, outermost first (CHAIN[0] = FUNC). */
static size_t inline_chain(Dwarf_Die *func, uint64_t pc, Dwarf_Die *chain, size_t max)
{
	size_t n = 0;
	chain[n++] = *func;
	Dwarf_Die cur = *func;
	for (int depth = 0; depth < 4 * SYM_MAX_DIE_DEPTH; depth++) {
		Dwarf_Die child;
		bool descended = false;
		if (dwarf_child(&cur, &child) != 0)
			break;
		size_t visited = 0;
		do {
			int tag = dwarf_tag(&child);
			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
			     tag == DW_TAG_try_block || tag == DW_TAG_catch_block) &&
			    dwarf_haspc(&child, pc) == 1) {
				if (tag == DW_TAG_inlined_subroutine && n < max)
					chain[n++] = child;
				cur = child;
				descended = true;
				break;
			}
		} while (++visited < SYM_MAX_CHILDREN && dwarf_siblingof(&child, &child) == 0);
		if (!descended)
			break;
	}
	return n;
}

static int compare_spans(const void *a, const void *b)
{
	const struct cu_span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Read every compile unit's code ranges of DW once (bounded: the file is
 * the target's). */
static void build_spans(struct sym_module *m, Dwarf *dw)
{
	size_t cap = 0, units = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	m->spans_built = true;
	while (units++ < SYM_MAX_UNITS &&
	       dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;
		while (m->nspans < SYM_MAX_SPANS &&
		       (off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
			if (end <= start)
				continue;
			if (array_grow(&m->spans, &cap, m->nspans + 1, sizeof *m->spans, 64) < 0)
				return;
			m->spans[m->nspans++] = (struct cu_span){ start, end, dwarf_dieoffset(&cudie) };
		}
	}
	qsort(m->spans, m->nspans, sizeof *m->spans, compare_spans);
}

/* The compile unit of PC (a DWARF address) from the units' own ranges, for
 * files without .debug_aranges, where libdw (0.188) finds no unit: Go
 * programs. */
static Dwarf_Die *cu_by_ranges(struct sym_module *m, Dwarf *dw, uint64_t pc, Dwarf_Die *out)
{
	if (!m->spans_built)
		build_spans(m, dw);
	size_t lo = 0, hi = m->nspans;
	while (lo < hi) {   /* the first span starting after pc */
		size_t mid = lo + (hi - lo) / 2;
		if (m->spans[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= m->spans[lo - 1].hi)
		return NULL;
	return dwarf_offdie(dw, m->spans[lo - 1].die_offset, out);
}

/* The compile unit of PC in module M (*BIAS: DWARF address = pc - bias). */
static Dwarf_Die *module_cu(struct sym_module *m, uint64_t pc, Dwarf_Addr *bias, Dwarf_Die *mem)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->dwfl_mod, pc, bias);
	if (cu != NULL)
		return cu;
	Dwarf *dw = dwfl_module_getdwarf(m->dwfl_mod, bias);
	return dw != NULL ? cu_by_ranges(m, dw, pc - *bias, mem) : NULL;
}

/* The source file and line of PC in module M (CU: its unit, or NULL). */
static const char *module_line(struct sym_module *m, Dwarf_Die *cu, Dwarf_Addr bias, uint64_t pc,
			       int *line)
{
	*line = 0;
	Dwfl_Line *dl = dwfl_module_getsrc(m->dwfl_mod, pc);
	if (dl != NULL)
		return dwfl_lineinfo(dl, NULL, line, NULL, NULL, NULL);
	/* libdwfl looks the unit up through .debug_aranges only */
	Dwarf_Die mem;
	if (cu == NULL)
		cu = module_cu(m, pc, &bias, &mem);
	Dwarf_Line *l = cu != NULL ? dwarf_getsrc_die(cu, pc - bias) : NULL;
	if (l == NULL || dwarf_lineno(l, line) != 0)
		return NULL;
	return dwarf_linesrc(l, NULL, NULL);
}

/* A function whose DWARF name looks internal (glibc's __GI___libc_malloc,
 * the asm label of a hidden alias) is named by the best symbol at its
 * entry when that one has fewer leading underscores (malloc). */
static void public_name(struct sym_module *m, Dwarf_Die *func, Dwarf_Addr bias,
			const char **linkage, const char **plain)
{
	const char *name = *linkage != NULL ? *linkage : *plain;
	Dwarf_Addr entry;
	if (name == NULL || strncmp(name, "__", 2) != 0 || dwarf_entrypc(func, &entry) != 0)
		return;
	const struct sym_entry *e = symtab_at(m, entry + bias);
	if (e != NULL && strspn(e->name, "_") < strspn(name, "_")) {
		*linkage = e->name;
		*plain = NULL;
	}
}

/* Frames of PC in module M from DWARF, innermost first. Returns how many
 * were written (0 when DWARF knows no function at PC). */
static size_t dwarf_frames(struct symbolizer *s, struct sym_module *m, uint64_t pc,
			   struct symbol_frame *out, size_t max)
{
	Dwarf_Addr bias;
	Dwarf_Die cu_mem;
	Dwarf_Die *cu = module_cu(m, pc, &bias, &cu_mem);
	if (cu == NULL)
		return 0;
	struct cu_index *ci = cu_index_get(m, cu);
	Dwarf_Die func;
	if (ci == NULL || !cu_index_find(ci, pc - bias, &func))
		return 0;
	Dwarf_Die chain[SYM_MAX_CHAIN];
	size_t depth = inline_chain(&func, pc - bias, chain, max < SYM_MAX_CHAIN ? max : SYM_MAX_CHAIN);

	int line;
	const char *file = module_line(m, cu, bias, pc, &line);
	size_t n = 0;
	for (size_t i = depth; i-- > 0;) { /* innermost first */
		Dwarf_Die *scope = &chain[i];
		struct symbol_frame *f = &out[n++];
		memset(f, 0, sizeof *f);
		const char *linkage = die_string_attr(scope, DW_AT_linkage_name);
		if (linkage == NULL)
			linkage = die_string_attr(scope, DW_AT_MIPS_linkage_name);
		const char *plain = linkage == NULL ? die_string_attr(scope, DW_AT_name) : NULL;
		if (plain != NULL)
			plain = qualified_name(s, m, scope, plain);
		if (i == 0)
			public_name(m, scope, bias, &linkage, &plain);
		if (!frame_set_names(s, f, linkage) && !frame_set_names(s, f, plain))
			f->function = f->system_name = NULL; /* filled by the caller */
		f->file = file != NULL ? intern(&s->strings, file) : NULL;
		f->line = f->file != NULL ? line : 0;
		int decl = 0;
		if (dwarf_decl_line(scope, &decl) == 0)
			f->decl_line = decl;
		f->inlined = i > 0;
		if (!f->inlined)
			break;
		/* The next (outer) frame is at this inline instance's call site. */
		Dwarf_Attribute a;
		Dwarf_Word v;
		file = NULL;
		line = 0;
		if (dwarf_attr(scope, DW_AT_call_file, &a) != NULL && dwarf_formudata(&a, &v) == 0)
			file = cu_file_name(cu, v);
		if (dwarf_attr(scope, DW_AT_call_line, &a) != NULL && dwarf_formudata(&a, &v) == 0 &&
		    v <= INT32_MAX)
			line = (int)v;
	}
	return n;
}

static size_t module_frames(struct symbolizer *s, struct sym_module *m,
			    const struct procmaps_entry *e, uint64_t pc,
			    struct symbol_frame *out, size_t max)
{
	size_t n = 0;
	if (m != NULL && m->dwfl_mod != NULL)
		n = dwarf_frames(s, m, pc, out, max);
	if (n == 0) {
		memset(&out[0], 0, sizeof out[0]);
		n = 1;
		if (m != NULL && m->dwfl_mod != NULL) {
			int line;
			const char *file = module_line(m, NULL, 0, pc, &line);
			if (file != NULL) {
				out[0].file = intern(&s->strings, file);
				out[0].line = out[0].file != NULL ? line : 0;
			}
		}
	}
	/* The outermost frame without a DWARF name: the symbol table, then the address. */
	struct symbol_frame *outer = &out[n - 1];
	if (outer->function == NULL &&
	    !(m != NULL && m->dwfl_mod != NULL &&
	      (frame_set_plt_name(s, m, outer, pc) || frame_set_names(s, outer, symtab_name(m, pc)))))
		frame_set_unresolved(s, outer, e, pc);
	for (size_t i = 0; i < n; i++)
		if (out[i].function == NULL)
			frame_set_unresolved(s, &out[i], e, pc);
	return n;
}

static size_t jit_frame(struct symbolizer *s, uint64_t pc, struct symbol_frame *f)
{
	const struct procmaps_jit_symbol *j = procmaps_find_jit(s->pm, pc);
	if (j == NULL || j->name == NULL)
		return 0;
	memset(f, 0, sizeof *f);
	const char *name = intern(&s->strings, j->name);
	if (name == NULL)
		return 0;
	char *demangled = symbolize_demangle(name);
	f->system_name = name;
	f->function = name;
	if (demangled != NULL) {
		const char *d = intern(&s->strings, demangled);
		free(demangled);
		if (d != NULL)
			f->function = d;
	}
	f->jit = true;
	f->resolved = true;
	return 1;
}

/* All frames of PC (innermost first) into OUT[SYM_MAX_CHAIN]; *CACHEABLE is
 * false for answers that a later perf-map reload may change. */
static size_t compute_frames(struct symbolizer *s, uint64_t pc, struct symbol_frame *out,
			     bool *cacheable)
{
	const struct procmaps_entry *e = procmaps_find(s->pm, pc);
	*cacheable = true;
	if (s->opt.addresses_only) {
		memset(out, 0, sizeof *out);
		frame_set_unresolved(s, out, e, pc);
		return 1;
	}
	if (e == NULL || (!entry_is_file(e) && !entry_is_vdso(e))) {
		*cacheable = false;
		if (jit_frame(s, pc, out) == 1)
			return 1;
		memset(out, 0, sizeof *out);
		frame_set_unresolved(s, out, e, pc);
		return 1;
	}
	struct sym_module *m = module_for_entry(s, e);
	return module_frames(s, m, e, pc, out, SYM_MAX_CHAIN);
}

static bool cache_grow(struct symbolizer *s)
{
	size_t n = s->cache_slots ? s->cache_slots * 2 : 4096;
	struct cache_slot *slots = calloc(n, sizeof *slots);
	if (slots == NULL)
		return false;
	for (size_t i = 0; i < s->cache_slots; i++) {
		if (s->cache[i].pc == 0)
			continue;
		size_t j = (size_t)(s->cache[i].pc * UINT64_C(0x9E3779B97F4A7C15) >> 20) & (n - 1);
		while (slots[j].pc != 0)
			j = (j + 1) & (n - 1);
		slots[j] = s->cache[i];
	}
	free(s->cache);
	s->cache = slots;
	s->cache_slots = n;
	return true;
}

static struct cache_slot *cache_find(struct symbolizer *s, uint64_t pc, bool *found)
{
	*found = false;
	if ((s->cache_count + 1) * 2 > s->cache_slots && !cache_grow(s))
		return NULL;
	size_t j = (size_t)(pc * UINT64_C(0x9E3779B97F4A7C15) >> 20) & (s->cache_slots - 1);
	while (s->cache[j].pc != 0) {
		if (s->cache[j].pc == pc) {
			*found = true;
			return &s->cache[j];
		}
		j = (j + 1) & (s->cache_slots - 1);
	}
	return &s->cache[j];
}

static bool frames_append(struct symbolizer *s, const struct symbol_frame *f, size_t n, uint32_t *first)
{
	if (s->nframes + n > UINT32_MAX)
		return false;
	if (array_grow(&s->frames, &s->frames_cap, s->nframes + n, sizeof *s->frames, 4096) < 0)
		return false;
	memcpy(&s->frames[s->nframes], f, n * sizeof *f);
	*first = (uint32_t)s->nframes;
	s->nframes += n;
	return true;
}

size_t symbolizer_lookup(struct symbolizer *s, uint64_t addr, struct symbol_frame *out, size_t max)
{
	if (max == 0)
		return 0;
	uint64_t pc = addr_lookup_pc(addr);
	bool found = false;
	struct cache_slot *slot = pc != 0 ? cache_find(s, pc, &found) : NULL;
	if (found) {
		size_t n = slot->count < max ? slot->count : max;
		memcpy(out, &s->frames[slot->first], n * sizeof *out);
		return n;
	}
	struct symbol_frame chain[SYM_MAX_CHAIN];
	bool cacheable;
	size_t n = compute_frames(s, pc, chain, &cacheable);
	if (s->opt.no_inline && n > 1) {
		/* The outermost function, at the line it executes in itself. */
		chain[0] = chain[n - 1];
		n = 1;
	}
	if (s->opt.no_inline)
		chain[0].inlined = false;
	uint32_t first;
	if (cacheable && slot != NULL && frames_append(s, chain, n, &first)) {
		slot->pc = pc;
		slot->first = first;
		slot->count = (uint32_t)n;
		s->cache_count++;
	}
	if (n > max)
		n = max;
	memcpy(out, chain, n * sizeof *out);
	return n;
}

bool symbolizer_module(struct symbolizer *s, uint64_t addr, struct symbol_module *out)
{
	uint64_t pc = addr_lookup_pc(addr);
	const struct procmaps_entry *e = procmaps_find(s->pm, pc);
	if (e == NULL)
		return false;
	memset(out, 0, sizeof *out);
	const char *path = intern(&s->strings, e->path);
	out->path = path != NULL ? path : "";
	out->start = e->start;
	out->limit = e->end;
	out->offset = e->offset;
	if (entry_is_file(e) || entry_is_vdso(e)) {
		struct sym_module *m = module_for_entry(s, e);
		if (m != NULL)
			out->build_id = m->build_id;
	}
	return true;
}

/* ---- life -------------------------------------------------------------------- */

/* procmaps keeps the perf-map symbols; reading them is its job, on the map the
 * profiler handed us as const (it owns it and is not reading it meanwhile). */
static void reload_perf_map(const struct procmaps *pm)
{
	procmaps_load_perf_map((struct procmaps *)(uintptr_t)pm);
}

void symbolizer_reload_perf_map(struct symbolizer *s)
{
	if (!s->opt.addresses_only)
		reload_perf_map(s->pm);
}

static bool root_is_ours(int fd)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

struct symbolizer *symbolizer_new(const struct procmaps *pm, const struct symbolize_options *opt)
{
	struct symbolizer *s = calloc(1, sizeof *s);
	if (s == NULL)
		return NULL;
	s->pm = pm;
	if (opt != NULL)
		s->opt = *opt;
	s->root_fd = -1;
	int root = procmaps_root_fd(pm);
	if (root >= 0) {
		s->root_fd = fcntl(root, F_DUPFD_CLOEXEC, 0);
		s->foreign_root = s->root_fd >= 0 && !root_is_ours(s->root_fd);
	}
	char path[128];
	if (s->foreign_root)
		snprintf(path, sizeof path, ":.debug:/proc/self/fd/%d/usr/lib/debug:/usr/lib/debug",
			 s->root_fd);
	else
		snprintf(path, sizeof path, ":.debug:/usr/lib/debug");
	s->debuginfo_path = strdup(path);
	if (s->debuginfo_path == NULL)
		goto fail;
	s->callbacks.find_elf = find_elf_callback;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	if (!s->opt.addresses_only) {
		elf_version(EV_CURRENT);
		s->dwfl = dwfl_begin(&s->callbacks);
		if (s->dwfl == NULL) {
			errno = ENOMEM;
			goto fail;
		}
		reload_perf_map(pm);
	}
	return s;
fail:
	symbolizer_free(s);
	return NULL;
}

void symbolizer_free(struct symbolizer *s)
{
	if (s == NULL)
		return;
	if (s->dwfl != NULL)
		dwfl_end(s->dwfl);
	for (size_t i = 0; i < s->nmodules; i++) {
		struct sym_module *m = s->modules[i];
		module_release_pending(m); /* what libdwfl never asked for */
		free(m->image);
		free(m->syms);
		for (size_t j = 0; j < m->ncus; j++)
			free(m->cus[j].funcs);
		free(m->cus);
		free(m->spans);
		free(m->qnames);
		free(m);
	}
	free(s->modules);
	free(s->links);
	free(s->cache);
	free(s->frames);
	intern_free(&s->strings);
	free(s->debuginfo_path);
	if (s->root_fd >= 0)
		close(s->root_fd);
	free(s);
}
