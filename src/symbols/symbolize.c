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
#include "intern.h"
#include "symbolize_internal.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "address.h"
#include "runtimes.h"

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
const char *sym_intern_n(struct intern *t, const char *s, size_t n)
{
	return intern_string(t, s, capped_length(s, n));
}

const char *sym_intern(struct intern *t, const char *s)
{
	return sym_intern_n(t, s, strnlen(s, SYM_NAME_MAX));
}

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
	return sym_intern_n(&s->strings, hex, 2 * (size_t)n);
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

/* The vdso has no file: separate debug information for it is only where a
 * kernel debug package put it, under /usr/lib/debug by build-id. Without
 * DEBUGINFOD_URLS nothing else is asked (libdwfl would load libdebuginfod,
 * and with it libcurl and a TLS library, into csampler at the first sample
 * in the vdso, for a server that cannot be asked). Other modules: the
 * standard search. */
static int find_debuginfo_callback(Dwfl_Module *mod, void **userdata, const char *modname,
				   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!modname || strcmp(modname, "[vdso]") != 0 || (urls && *urls))
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	const unsigned char *id;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &id, &vaddr);
	if (n < 2 || n > 64)
		return -1;
	char path[64 + 2 * 64] = "/usr/lib/debug/.build-id/";
	size_t len = strlen(path);
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(path + len, sizeof path - len, i == 0 ? "%02x/" : "%02x", id[i]);
	snprintf(path + len, sizeof path - len, ".debug");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		*debuginfo_file_name = strdup(path);
	return fd;
}

/* An entry's ELF as opened for a module: its file (or the vdso image, from
 * memory), and where its page at OFFSET is mapped (START). */
struct opened_elf {
	int fd;
	char *name;
	void *image;
	Elf *elf;
	uint64_t start, offset;
	bool vdso;
};

static void opened_elf_close(struct opened_elf *o)
{
	if (o->elf != NULL)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	free(o->name);
	free(o->image);
}

/* Open E's ELF into O; false (O closed) when it cannot be read as one. */
static bool open_entry_elf(struct symbolizer *s, const struct procmaps_entry *e, struct opened_elf *o)
{
	*o = (struct opened_elf){ .fd = -1, .start = e->start, .offset = e->offset,
				  .vdso = entry_is_vdso(e) };
	if (o->vdso) {
		size_t len = 0;
		uint64_t vstart = 0;
		const void *src = procmaps_vdso_image(s->pm, &len, &vstart);
		if (src == NULL || len == 0 || len > (64u << 20) || (o->image = malloc(len)) == NULL)
			return false;
		memcpy(o->image, src, len);
		o->elf = elf_memory(o->image, len);
		o->start = vstart;
		o->offset = 0;
		o->name = strdup("[vdso]");
	} else {
		o->fd = open_entry_file(s, e, &o->name);
		if (o->fd < 0)
			return false;
		o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
	}
	if (o->elf == NULL || elf_kind(o->elf) != ELF_K_ELF) {
		opened_elf_close(o);
		return false;
	}
	return true;
}

/* The module of the same file as E at BIAS, or SIZE_MAX. */
static size_t module_same_file(const struct symbolizer *s, const struct procmaps_entry *e,
			       uint64_t bias)
{
	for (size_t i = 0; i < s->nmodules; i++) {
		const struct sym_module *m = s->modules[i];
		if (m->bias == bias && m->inode == e->inode && m->dev_major == e->dev_major &&
		    m->dev_minor == e->dev_minor && strcmp(m->path, e->path) == 0)
			return i;
	}
	return SIZE_MAX;
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
	if (s->opt.on_open)
		s->opt.on_open(s->opt.open_ctx, e->path);

	struct opened_elf o;
	if (!open_entry_elf(s, e, &o))
		return NULL;
	uint64_t bias, low, high;
	if (!elf_load_layout(o.elf, o.start, o.offset, o.vdso || e->executable, &bias, &low, &high)) {
		opened_elf_close(&o);
		return NULL;
	}
	/* The same file at the same bias is the same module. */
	size_t same = module_same_file(s, e, bias);
	if (same != SIZE_MAX) {
		opened_elf_close(&o);
		link->module = same;
		return s->modules[same];
	}
	struct sym_module *m = calloc(1, sizeof *m);
	const char *path = sym_intern(&s->strings, e->path);
	if (m == NULL || path == NULL) {
		free(m);
		opened_elf_close(&o);
		return NULL;
	}
	*m = (struct sym_module){ .path = path, .inode = e->inode, .dev_major = e->dev_major,
				  .dev_minor = e->dev_minor, .bias = bias, .low = low, .high = high,
				  .is_vdso = o.vdso, .image = o.image,
				  .build_id = elf_build_id_hex(s, o.elf), .pending_fd = o.fd,
				  .pending_elf = o.elf, .pending_name = o.name };
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

/* F's names from MANGLED (interned): its system name, and its function's
 * name demangled (as it is when it is no mangled name). */
static void name_from_mangled(struct symbolizer *s, struct symbol_frame *f, const char *mangled)
{
	char *demangled = symbolize_demangle(mangled);
	f->system_name = mangled;
	f->function = mangled;
	if (demangled != NULL) {
		const char *d = sym_intern(&s->strings, demangled);
		free(demangled);
		if (d != NULL)
			f->function = d;
	}
}

/* Strip "@VERSION" / "@@VERSION" from an ELF symbol name, then set the
 * frame's names (demangled display name, mangled system name). */
bool sym_frame_set_names(struct symbolizer *s, struct symbol_frame *f, const char *raw)
{
	if (raw == NULL || raw[0] == '\0')
		return false;
	size_t n = strnlen(raw, SYM_DEMANGLE_INPUT_MAX + 1);
	const char *at = memchr(raw, '@', n);
	if (at != NULL && at != raw)
		n = (size_t)(at - raw);
	const char *mangled = sym_intern_n(&s->strings, raw, n);
	if (mangled == NULL)
		return false;
	name_from_mangled(s, f, mangled);
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
	const char *name = sym_intern(&s->strings, buf);
	f->function = f->system_name = name != NULL ? name : "[unknown]";
	f->resolved = false;
}

static size_t module_frames(struct symbolizer *s, struct sym_module *m,
			    const struct procmaps_entry *e, uint64_t pc,
			    struct symbol_frame *out, size_t max)
{
	size_t n = 0;
	if (m != NULL && m->dwfl_mod != NULL)
		n = sym_dwarf_frames(s, m, pc, out, max);
	if (n == 0) {
		memset(&out[0], 0, sizeof out[0]);
		n = 1;
		if (m != NULL && m->dwfl_mod != NULL) {
			int line;
			const char *file = sym_module_line(m, NULL, 0, pc, &line);
			if (file != NULL) {
				out[0].file = sym_intern(&s->strings, file);
				out[0].line = out[0].file != NULL ? line : 0;
			}
		}
	}
	/* The outermost frame without a DWARF name: the PLT, Go's function
	 * table, the symbol table, the start stub at the entry point, then the
	 * address. */
	struct symbol_frame *outer = &out[n - 1];
	if (outer->function == NULL &&
	    !(m != NULL && m->dwfl_mod != NULL &&
	      (sym_frame_set_plt_name(s, m, outer, pc) || sym_frame_set_go_name(s, m, outer, pc) ||
	       sym_frame_set_names(s, outer, sym_symtab_name(m, pc)) ||
	       sym_frame_set_entry_name(s, m, outer, pc))))
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
	const char *name = sym_intern(&s->strings, j->name);
	if (name == NULL)
		return 0;
	name_from_mangled(s, f, name);
	f->jit = true;
	f->resolved = true;
	return 1;
}

/* A runtime's frame (address.h's addr_runtime: a Python frame), named
 * when it was sampled (runtime.h's frame_name), its function as the runtime
 * names it (a Python code object's qualified name). */
static size_t runtime_frame(struct symbolizer *s, uint64_t pc, struct symbol_frame *f)
{
	unsigned kind = addr_runtime_kind(pc);
	const struct runtime_ops *ops = runtime_ops_of(kind);
	const void *names = procmaps_runtime(s->pm, kind);
	struct runtime_frame rf;
	bool named = ops && ops->frame_name && names && ops->frame_name(names, addr_runtime_id(pc), &rf);
	memset(f, 0, sizeof *f);
	char unknown[64];
	snprintf(unknown, sizeof unknown, "[%s: unknown frame]", ops ? ops->name : "runtime");
	const char *name = sym_intern(&s->strings, named ? rf.function : unknown);
	const char *file = named && rf.file ? sym_intern(&s->strings, rf.file) : NULL;
	f->function = name ? name : "[runtime]";
	/* no system name: a pprof reader that finds one equal to the name
	 * takes it for a C++ name to simplify, and makes <module>, <lambda>
	 * and <listcomp> empty (go tool pprof printed [[python]]) */
	f->system_name = "";
	f->file = file;
	f->line = named ? rf.line : 0;
	f->decl_line = named ? rf.first_line : 0;
	f->resolved = named;
	return 1;
}

/* All frames of PC (innermost first) into OUT[SYM_MAX_CHAIN]; *CACHEABLE is
 * false for answers that a later perf-map reload may change. */
static size_t compute_frames(struct symbolizer *s, uint64_t pc, unsigned tag,
			     struct symbol_frame *out, bool *cacheable)
{
	if (addr_is_runtime(pc)) {
		*cacheable = true;
		return runtime_frame(s, pc, out);
	}
	const struct procmaps_entry *e = procmaps_find_tagged(s->pm, pc, tag);
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
		size_t j = (size_t)hash_u64(s->cache[i].pc) & (n - 1);
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
	size_t j = (size_t)hash_u64(pc) & (s->cache_slots - 1);
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
	unsigned tag = addr_tag(addr);
	/* (the cache's key keeps the tag: two libraries at one address) */
	uint64_t key = addr_with_tag(pc, tag);
	bool found = false;
	struct cache_slot *slot = pc != 0 ? cache_find(s, key, &found) : NULL;
	if (found) {
		size_t n = slot->count < max ? slot->count : max;
		memcpy(out, &s->frames[slot->first], n * sizeof *out);
		return n;
	}
	struct symbol_frame chain[SYM_MAX_CHAIN];
	bool cacheable;
	size_t n = compute_frames(s, pc, tag, chain, &cacheable);
	if (s->opt.no_inline && n > 1) {
		/* The outermost function, at the line it executes in itself. */
		chain[0] = chain[n - 1];
		n = 1;
	}
	if (s->opt.no_inline)
		chain[0].inlined = false;
	uint32_t first;
	if (cacheable && slot != NULL && frames_append(s, chain, n, &first)) {
		slot->pc = key;
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
	if (addr_is_runtime(pc)) {
		/* a runtime's frames: a mapping of their own, "[NAME]", no file */
		const struct runtime_ops *ops = runtime_ops_of(addr_runtime_kind(pc));
		char path[64];
		snprintf(path, sizeof path, "[%s]", ops ? ops->name : "runtime");
		const char *interned = sym_intern(&s->strings, path);
		uint64_t start = addr_runtime(addr_runtime_kind(pc), 0);
		*out = (struct symbol_module){ .path = interned ? interned : "[runtime]",
					       .start = start, .limit = start + (UINT64_C(1) << 32) };
		return true;
	}
	const struct procmaps_entry *e = procmaps_find_tagged(s->pm, pc, addr_tag(addr));
	if (e == NULL)
		return false;
	memset(out, 0, sizeof *out);
	const char *path = sym_intern(&s->strings, e->path);
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

bool symbolizer_module_unnamed(struct symbolizer *s, uint64_t addr)
{
	uint64_t pc = addr_lookup_pc(addr);
	if (addr_is_runtime(pc) || s->opt.addresses_only)
		return false;
	const struct procmaps_entry *e = procmaps_find_tagged(s->pm, pc, addr_tag(addr));
	if (e == NULL || !entry_is_file(e))
		return false;
	struct sym_module *m = module_for_entry(s, e);
	return m != NULL && !m->is_vdso && sym_module_unnamed(m);
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
	s->callbacks.find_debuginfo = find_debuginfo_callback;
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
