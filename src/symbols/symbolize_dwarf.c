/* symbolize_dwarf: DWARF and ELF symbol lookups where libdw falls short
 * (see symbolize_internal.h): a C++ function's qualified name from its
 * declaration's scopes when it has no linkage name (qualified_name), a unit
 * without .debug_aranges found by every unit's ranges (cu_by_ranges, Go),
 * each unit's function ranges indexed once, the inline chain at an address,
 * an internal alias's public name (public_name), a PLT entry's name from its
 * jump and GOT relocation, and the ELF symbol table. Errors in the data only
 * ever mean "no name". */
#include "config.h"

#include "array.h"
#include "intern.h"
#include "symbolize_internal.h"

#include <dwarf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* In the N elements of SIZE bytes at BASE, sorted by the uint64_t at
 * KEY_OFF in each: the index of the first whose key is above KEY, or with
 * AT_OR_ABOVE at or above it (N when none is). */
static size_t sorted_search(const void *base, size_t n, size_t size, size_t key_off,
			    uint64_t key, bool at_or_above)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, (const char *)base + mid * size + key_off, sizeof k);
		if (at_or_above ? k < key : k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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
			size_t h = (size_t)hash_u64(m->qnames[i].die_offset) & (ncap - 1);
			while (nq[h].die_offset != 0)
				h = (h + 1) & (ncap - 1);
			nq[h] = m->qnames[i];
		}
		free(m->qnames);
		m->qnames = nq;
		m->qnames_cap = ncap;
	}
	size_t h = (size_t)hash_u64(off) & (m->qnames_cap - 1);
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
		q = sym_intern(&s->strings, buf);
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

/* The section of ELF with code at address A (its header in SH), or NULL. */
static Elf_Scn *code_section(Elf *elf, uint64_t a, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t nscn = 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL && nscn++ < SYM_MAX_SECTIONS)
		if (gelf_getshdr(scn, sh) != NULL && sh->sh_type == SHT_PROGBITS &&
		    (sh->sh_flags & SHF_EXECINSTR) && a >= sh->sh_addr && a - sh->sh_addr < sh->sh_size)
			return scn;
	return NULL;
}

/* Names PC as "symbol@plt" when it lies in a PLT section (.plt, .plt.sec,
 * .plt.got) of module M's file, from the entry's indirect jump (jmp
 * *disp(%rip), ff 25) to its GOT slot and the relocation of that slot, as
 * perf does ("[plt]": the lazy-binding stub); the symbol table only has the
 * sizeless _init before them. */
bool sym_frame_set_plt_name(struct symbolizer *s, struct sym_module *m, struct symbol_frame *f,
			       uint64_t pc)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->dwfl_mod, &bias);
	size_t shstrndx;
	if (elf == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	uint64_t a = pc - bias;
	GElf_Shdr sh;
	Elf_Scn *scn = code_section(elf, a, &sh);
	if (scn != NULL) {
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
			if (sym == NULL || !sym_frame_set_names(s, f, sym))
				break;  /* the lazy-binding stub (PLT0) */
			char buf[SYM_NAME_MAX + 8];
			snprintf(buf, sizeof buf, "%s@plt", f->function);
			const char *fn = sym_intern(&s->strings, buf);
			snprintf(buf, sizeof buf, "%s@plt", f->system_name);
			const char *sn = sym_intern(&s->strings, buf);
			if (fn == NULL || sn == NULL)
				return false;
			f->function = fn;
			f->system_name = sn;
			return true;
		}
		const char *plt = sym_intern(&s->strings, "[plt]");
		if (plt == NULL)
			return false;
		f->function = f->system_name = plt;
		f->resolved = true;
		return true;
	}
	return false;
}

/* How far from the entry point the start stubs below are looked at. */
#define ENTRY_STUB_MAX 128

/* The code bytes of ELF at address A, at most N (fewer at its section's
 * end); NULL if A is in no section with contents. */
static const uint8_t *code_at(Elf *elf, uint64_t a, size_t *n)
{
	GElf_Shdr sh;
	Elf_Scn *scn = code_section(elf, a, &sh);
	if (scn == NULL)
		return NULL;
	Elf_Data *d = elf_getdata(scn, NULL);
	uint64_t at = a - sh.sh_addr;
	if (d == NULL || d->d_buf == NULL || at >= d->d_size)
		return NULL;
	if (*n > d->d_size - at)
		*n = d->d_size - at;
	return (const uint8_t *)d->d_buf + at;
}

/* The first occurrence of the LEN bytes PAT in B[0, N), or N. */
static size_t find_bytes(const uint8_t *b, size_t n, const uint8_t *pat, size_t len)
{
	for (size_t i = 0; i + len <= n; i++)
		if (memcmp(b + i, pat, len) == 0)
			return i;
	return n;
}

bool sym_frame_set_entry_name(struct symbolizer *s, struct sym_module *m, struct symbol_frame *f,
			      uint64_t pc)
{
	GElf_Addr bias;
	GElf_Ehdr eh;
	Elf *elf = dwfl_module_getelf(m->dwfl_mod, &bias);
	if (elf == NULL || gelf_getehdr(elf, &eh) == NULL || eh.e_entry == 0)
		return false;
	uint64_t a = pc - bias;
	if (a < eh.e_entry || a - eh.e_entry >= ENTRY_STUB_MAX)
		return false;
	size_t n = ENTRY_STUB_MAX;
	const uint8_t *b = code_at(elf, eh.e_entry, &n);
	if (b == NULL)
		return false;
	size_t off = (size_t)(a - eh.e_entry), at = 0;
	if (n >= 4 && memcmp(b, "\xf3\x0f\x1e\xfa", 4) == 0)
		at = 4;  /* endbr64 */
	const char *name = NULL;
	static const uint8_t rtld_start[] = { 0x48, 0x89, 0xe7, 0xe8 };  /* mov %rsp,%rdi; call */
	static const uint8_t jmp_r12[] = { 0x41, 0xff, 0xe4 };
	if (n >= at + 8 && memcmp(b + at, rtld_start, 4) == 0) {
		/* ld.so: _start calls _dl_start, then _dl_start_user runs up to
		 * its jump to the program's entry */
		size_t end = at + 8 + find_bytes(b + at + 8, n - at - 8, jmp_r12, 3) + 3;
		name = off < at + 8 ? "_start" : off < end && end <= n ? "_dl_start_user" : NULL;
	} else if (n >= at + 2 && b[at] == 0x31 && b[at + 1] == 0xed) {
		/* a program's _start (the ABI's: xor %ebp,%ebp first), up to its hlt */
		size_t end = at + find_bytes(b + at, n - at, (const uint8_t *)"\xf4", 1) + 1;
		name = off < end && end <= n ? "_start" : NULL;
	}
	if (name == NULL || !sym_frame_set_names(s, f, name))
		return false;
	f->resolved = true;
	return true;
}

/* Module M's Go function table, read at its first use; NULL if none. */
static const struct gopclntab *module_gopclntab(struct sym_module *m)
{
	if (m->go_tried)
		return m->go_read ? &m->go : NULL;
	m->go_tried = true;
	GElf_Addr bias;
	Elf *elf = m->dwfl_mod ? dwfl_module_getelf(m->dwfl_mod, &bias) : NULL;
	size_t shstrndx;
	if (elf == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL, *table = NULL;
	uint64_t text = 0;
	size_t nscn = 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL && nscn++ < SYM_MAX_SECTIONS) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_PROGBITS ||
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) == NULL)
			continue;
		if (gopclntab_section(name))
			table = scn;
		else if (strcmp(name, ".text") == 0)
			text = sh.sh_addr;
	}
	Elf_Data *d = table ? elf_getdata(table, NULL) : NULL;
	if (d && d->d_buf && gopclntab_parse(&m->go, d->d_buf, d->d_size, text))
		m->go_read = true;
	return m->go_read ? &m->go : NULL;
}

bool sym_frame_set_go_name(struct symbolizer *s, struct sym_module *m, struct symbol_frame *f,
			   uint64_t pc)
{
	const struct gopclntab *go = module_gopclntab(m);
	struct gopclntab_func fn;
	GElf_Addr bias;
	if (go == NULL || dwfl_module_getelf(m->dwfl_mod, &bias) == NULL ||
	    !gopclntab_find(go, pc - bias, &fn))
		return false;
	const char *name = sym_intern_n(&s->strings, fn.name, fn.name_len);
	if (name == NULL || !sym_frame_set_names(s, f, name))
		return false;
	f->resolved = true;
	if (f->file == NULL && fn.file != NULL) {
		f->file = sym_intern_n(&s->strings, fn.file, fn.file_len);
		f->line = f->file != NULL ? fn.line : 0;
		f->decl_line = f->file != NULL ? fn.start_line : 0;
	}
	return true;
}

/* The best-ranked function symbol at exactly ADDR, or NULL. */
static const struct sym_entry *symtab_at(struct sym_module *m, uint64_t addr)
{
	if (!m->syms_built)
		module_index_symbols(m);
	size_t lo = sorted_search(m->syms, m->nsyms, sizeof *m->syms,
				  offsetof(struct sym_entry, addr), addr, true);
	return lo < m->nsyms && m->syms[lo].addr == addr ? &m->syms[lo] : NULL;
}

bool sym_module_unnamed(struct sym_module *m)
{
	if (!m->dwfl_mod)
		return false;  /* (not read at all: said otherwise) */
	if (!m->syms_built)
		module_index_symbols(m);
	return m->nsyms == 0 && module_gopclntab(m) == NULL;
}

/* The function symbol containing PC (a sized one, else the nearest sizeless
 * one before it); NULL if none. */
const char *sym_symtab_name(struct sym_module *m, uint64_t pc)
{
	if (!m->syms_built)
		module_index_symbols(m);
	size_t lo = sorted_search(m->syms, m->nsyms, sizeof *m->syms,  /* first above pc */
				  offsetof(struct sym_entry, addr), pc, false);
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
	size_t lo = sorted_search(m->cus, m->ncus, sizeof *m->cus,
				  offsetof(struct cu_index, cu_offset), off, true);
	if (lo < m->ncus && m->cus[lo].cu_offset == off)
		return &m->cus[lo];
	if (array_grow(&m->cus, &m->cus_cap, m->ncus + 1, sizeof *m->cus, 16) < 0)
		return NULL;
	memmove(&m->cus[lo + 1], &m->cus[lo], (m->ncus - lo) * sizeof *m->cus);
	m->ncus++;
	struct cu_index *ci = &m->cus[lo];
	*ci = (struct cu_index){ .cu_offset = off };
	cu_index_collect(ci, cu, 0);
	if (ci->n > 1)  /* (a unit without functions has no array: qsort's NULL is UB) */
		qsort(ci->funcs, ci->n, sizeof *ci->funcs, compare_ranges);
	return ci;
}

/* The innermost function DIE of CI whose code contains PC (DWARF address). */
static bool cu_index_find(const struct cu_index *ci, uint64_t pc, Dwarf_Die *out)
{
	size_t lo = sorted_search(ci->funcs, ci->n, sizeof *ci->funcs,
				  offsetof(struct func_range, lo), pc, false);
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
	size_t lo = sorted_search(m->spans, m->nspans, sizeof *m->spans,  /* first after pc */
				  offsetof(struct cu_span, lo), pc, false);
	if (lo == 0 || pc >= m->spans[lo - 1].hi)
		return NULL;
	return dwarf_offdie(dw, m->spans[lo - 1].die_offset, out);
}

/* The compile unit of PC in module M (*BIAS: DWARF address = pc - bias).
 * A unit libdwfl gives that does not hold PC is not taken: a cgo program's
 * .debug_aranges covers its C units only, and libdwfl answered a Go
 * function's address with one of them (runtime/cgo/gcc_mmap.c's). */
static Dwarf_Die *module_cu(struct sym_module *m, uint64_t pc, Dwarf_Addr *bias, Dwarf_Die *mem)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->dwfl_mod, pc, bias);
	if (cu != NULL && dwarf_haspc(cu, pc - *bias) > 0)
		return cu;
	Dwarf *dw = dwfl_module_getdwarf(m->dwfl_mod, bias);
	return dw != NULL ? cu_by_ranges(m, dw, pc - *bias, mem) : NULL;
}

/* The source file and line of PC in module M (CU: its unit, or NULL). A
 * line libdwfl finds in a unit that does not hold PC is not taken (as
 * module_cu: runtime.park_m was at runtime/cgo/gcc_mmap.c:37, as
 * eu-addr2line says). */
const char *sym_module_line(struct sym_module *m, Dwarf_Die *cu, Dwarf_Addr bias, uint64_t pc,
			       int *line)
{
	*line = 0;
	Dwarf_Addr dl_bias = 0;
	Dwfl_Line *dl = dwfl_module_getsrc(m->dwfl_mod, pc);
	Dwarf_Die *dl_cu = dl != NULL ? dwfl_linecu(dl) : NULL;
	if (dl_cu != NULL && dwfl_module_getdwarf(m->dwfl_mod, &dl_bias) != NULL &&
	    dwarf_haspc(dl_cu, pc - dl_bias) > 0)
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

/* The first line of FUNC, which has no DW_AT_decl_line (Go's functions, up
 * to Go 1.20 at least): the line its entry's code is on (Go's is the func
 * line), where that is in FILE; else 0. */
static int entry_line(struct sym_module *m, Dwarf_Die *cu, Dwarf_Addr bias, Dwarf_Die *func,
		      const char *file)
{
	Dwarf_Addr entry;
	int line;
	if (file == NULL || dwarf_entrypc(func, &entry) != 0)
		return 0;
	const char *at = sym_module_line(m, cu, bias, entry + bias, &line);
	return at != NULL && strcmp(at, file) == 0 ? line : 0;
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
size_t sym_dwarf_frames(struct symbolizer *s, struct sym_module *m, uint64_t pc,
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
	const char *file = sym_module_line(m, cu, bias, pc, &line);
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
		if (!sym_frame_set_names(s, f, linkage) && !sym_frame_set_names(s, f, plain))
			f->function = f->system_name = NULL; /* filled by the caller */
		f->file = file != NULL ? sym_intern(&s->strings, file) : NULL;
		f->line = f->file != NULL ? line : 0;
		int decl = 0;
		if (dwarf_decl_line(scope, &decl) == 0)
			f->decl_line = decl;
		else if (i == 0)
			f->decl_line = entry_line(m, cu, bias, scope, f->file);
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
