/* symbolize_internal: what symbolize's two files share (not an interface:
 * symbolize.h is). symbolize.c reports modules to libdwfl, caches frames
 * per address and names what it cannot resolve; symbolize_dwarf.c reads
 * DWARF where libdw falls short (qualified names, per-CU function ranges,
 * units without .debug_aranges, inline chains, PLT entries, ELF symbol
 * tables). Each function is documented where it is defined. */
#ifndef CSAMPLER_SYMBOLIZE_INTERNAL_H
#define CSAMPLER_SYMBOLIZE_INTERNAL_H
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gopclntab.h"
#include "intern.h"
#include "symbolize.h"

#define SYM_NAME_MAX 4096          /* bytes kept of any name or path */
#define SYM_DEMANGLE_INPUT_MAX 16384 /* longer mangled names are not demangled */
#define SYM_MAX_CHAIN 64           /* frames kept per address (inline depth) */
#define SYM_PAGE 4096u

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
	struct gopclntab go;           /* Go's function table, when go_read */
	bool go_tried, go_read;
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

bool sym_frame_set_names(struct symbolizer *s, struct symbol_frame *f, const char *raw);
const char *sym_intern_n(struct intern *t, const char *s, size_t n);
const char *sym_intern(struct intern *t, const char *s);
size_t sym_dwarf_frames(struct symbolizer *s, struct sym_module *m, uint64_t pc,
			   struct symbol_frame *out, size_t max);
bool sym_frame_set_plt_name(struct symbolizer *s, struct sym_module *m, struct symbol_frame *f,
			       uint64_t pc);
const char *sym_module_line(struct sym_module *m, Dwarf_Die *cu, Dwarf_Addr bias, uint64_t pc,
			       int *line);
const char *sym_symtab_name(struct sym_module *m, uint64_t pc);
/* Names F "_start" (or ld.so's "_dl_start_user") where PC is in the code
 * at M's ELF entry point (a stripped program's or ld.so's start stub,
 * recognized by its instructions); false elsewhere. */
bool sym_frame_set_entry_name(struct symbolizer *s, struct sym_module *m, struct symbol_frame *f,
			      uint64_t pc);
/* Names F (function, file, line) from M's Go function table (.gopclntab),
 * which a Go binary keeps when stripped; false if PC is in none. */
bool sym_frame_set_go_name(struct symbolizer *s, struct sym_module *m, struct symbol_frame *f,
			   uint64_t pc);
/* Whether M's symbol tables (its own, or its debug file's) name no function. */
bool sym_module_unnamed(struct sym_module *m);

#endif
