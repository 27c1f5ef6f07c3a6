/* symbolize: addresses -> frames, once per unique address, after sampling.
 *
 * One Dwfl per process, modules reported from the procmaps of that process
 * (every mapping ever seen, using the file descriptors procmaps opened while
 * the target was alive), so unloaded libraries and exited targets symbolize.
 * Files: the procmaps fd, else /proc/PID/root/PATH, else the path; build-ids
 * verified where both sides have one; separate debuginfo by build-id and
 * debuglink under the target's root and /usr/lib/debug (debuginfod only when
 * DEBUGINFOD_URLS is set); vdso read from memory; JIT names from
 * /tmp/perf-PID.map. Frames come innermost first, with the inline chain from
 * DWARF; names demangled with libiberty (C++, Rust legacy and v0). All strings
 * are owned by the symbolizer and live until symbolizer_free. */
#ifndef CSAMPLER_SYMBOLIZE_H
#define CSAMPLER_SYMBOLIZE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "procmaps.h"

struct symbolize_options {
	bool no_inline;          /* report only the outermost function per address */
	bool addresses_only;     /* no symbol lookup at all: module+0xOFF names */
	/* Told the path of each file a symbolizer opens for its symbols (a
	 * slow read: progress.h), or NULL. */
	void (*on_open)(void *ctx, const char *path);
	void *open_ctx;
};

struct symbol_frame {
	const char *function;    /* demangled name, or "module+0xOFF" */
	const char *system_name; /* mangled (linkage) name, or == function */
	const char *file;        /* source file or NULL */
	int line;                /* 0 if unknown */
	int decl_line;           /* the function's declaration line, 0 if unknown */
	bool inlined;            /* this frame was inlined into the next one */
	bool jit;                /* from a perf map */
	bool resolved;           /* a real symbol name (not module+0xOFF) */
};

/* The mapping of Python frames (address.h's addr_runtime of
 * RUNTIME_PYTHON, whose table's name is "python"), which no file holds:
 * each runtime's frames are in "[NAME]", 2^32 addresses from
 * addr_runtime(kind, 0). */
#define SYMBOLIZE_PYTHON_MAPPING "[python]"

/* Where an address lives, for pprof's Mapping. */
struct symbol_module {
	const char *path;        /* as the target sees it ("[vdso]", ...) */
	const char *build_id;    /* lowercase hex, or NULL */
	uint64_t start, limit, offset;
	bool unnamed;            /* a file whose ELF and debug files found name no
	                          * function (stripped, no debug information); set
	                          * by symcache_lookup only for an unresolved address */
};

struct symbolizer;

/* Create a symbolizer for PM's process; opens what only a live process gives
 * (/proc/PID/root, the vdso image, perf map). NULL with errno on failure. */
struct symbolizer *symbolizer_new(const struct procmaps *pm, const struct symbolize_options *opt);
void symbolizer_free(struct symbolizer *s);

/* Reread /tmp/perf-PID.map (call on exec and exit while it still exists). */
void symbolizer_reload_perf_map(struct symbolizer *s);

/* Frames for ADDR (stored form, see address.h), innermost first; at most max.
 * Returns the number written (>= 1: an unknown address still yields one frame). */
size_t symbolizer_lookup(struct symbolizer *s, uint64_t addr, struct symbol_frame *out, size_t max);

/* The mapping ADDR falls in and its file's build-id; false if none. Never
 * loads the module's debug information. (What a mapping's symbols gave is
 * known from its looked-up addresses: the profile builder sets pprof's
 * has_* flags from them.) */
bool symbolizer_module(struct symbolizer *s, uint64_t addr, struct symbol_module *out);
/* Whether ADDR's file names no function (symbol_module.unnamed): indexes the
 * file's symbol table, so it is asked only of an address left unnamed (each
 * process of a --children run would index its libc again). */
bool symbolizer_module_unnamed(struct symbolizer *s, uint64_t addr);

/* Demangle NAME (C++ Itanium, Rust legacy without the ::h hash, Rust v0).
 * Returns a malloc'd string, or NULL if NAME is not mangled. */
char *symbolize_demangle(const char *name);

#endif
