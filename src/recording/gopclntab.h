/* gopclntab: function names, files and lines from a Go binary's own table
 * (.gopclntab), which Go keeps for its tracebacks even in a binary
 * stripped of its symbol table and DWARF (-ldflags=-s -w; the Go
 * toolchain's own binaries).
 *
 * The layouts of Go 1.18 and 1.19 (magic 0xfffffff0) and 1.20 on
 * (0xfffffff1), 64-bit: a header, the function table (entry offsets from
 * the start of the text, sorted), each function's record (name, line and
 * file tables), the name, file and compilation-unit tables, and the
 * varint-coded pc-value tables. Pure and bounded: every offset is checked
 * against the section, a name is at most GOPCLNTAB_NAME_MAX bytes, a
 * pc-value walk at most a function's length; any other bytes are refused
 * (gopclntab_parse false) or answer nothing. Fuzzed (fuzz_gopclntab). */
#ifndef CSAMPLER_GOPCLNTAB_H
#define CSAMPLER_GOPCLNTAB_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GOPCLNTAB_NAME_MAX 4096

struct gopclntab {
	const uint8_t *data;     /* the section's bytes, not copied */
	size_t len;
	bool go120;              /* Go 1.20's function record (a start line) */
	unsigned quantum;        /* instruction size unit of pc deltas */
	uint64_t nfunc, text_start;
	uint64_t funcnames, cutab, filetab, pctab, functab;  /* offsets in data */
};

/* Whether an ELF section named NAME holds Go's function table: .gopclntab,
 * or .data.rel.ro.gopclntab in a position-independent build
 * (-buildmode=pie, the default of some distributions' Go packages). */
static inline bool gopclntab_section(const char *name)
{
	return name && (strcmp(name, ".gopclntab") == 0 || strcmp(name, ".data.rel.ro.gopclntab") == 0);
}

/* Read the header of DATA[0, LEN), the .gopclntab section. TEXT_START is
 * the .text section's address, taken when the header's is 0 (a position-
 * independent binary's is relocated at run time). False if it is not a
 * table of a layout known here. */
bool gopclntab_parse(struct gopclntab *t, const uint8_t *data, size_t len, uint64_t text_start);

struct gopclntab_func {
	const char *name;        /* into the section, NAME_LEN bytes (not NUL-terminated */
	size_t name_len;         /*  when cut at GOPCLNTAB_NAME_MAX) */
	const char *file;        /* into the section, FILE_LEN bytes, or NULL */
	size_t file_len;
	int line;                /* 0 when unknown */
	int start_line;          /* the function's first line (its entry's), 0 when unknown */
	uint64_t entry;          /* the function's first address */
};

/* The function whose code holds ADDR (a link-time address, as the ELF file
 * has it), with ADDR's file and line; false if none does. */
bool gopclntab_find(const struct gopclntab *t, uint64_t addr, struct gopclntab_func *out);

/* What Go's traceback reads of a function besides its name: its flag
 * byte (abi.FuncFlag). TOPFRAME marks the outermost function of a stack
 * (goexit, mstart, sigtramp); SPWRITE one that writes SP. */
#define GOPCLNTAB_FLAG_TOPFRAME 0x01u
#define GOPCLNTAB_FLAG_SPWRITE 0x02u

struct gopclntab_entry {
	uint64_t entry, end;     /* the function's code, [entry, end), link-time */
	const char *name;        /* as in gopclntab_func */
	size_t name_len;
	uint8_t flag;
};

/* Function I of the table (0 <= I < t->nfunc, in address order); false if
 * its record is out of the section. */
bool gopclntab_function(const struct gopclntab *t, uint64_t i, struct gopclntab_entry *out);

/* The first addresses (link-time) of the first MAX functions, in order,
 * into OUT; returns how many. */
size_t gopclntab_entries(const struct gopclntab *t, uint64_t *out, size_t max);

#endif
