/* procmaps: every memory mapping a process has ever had.
 *
 * procmaps_refresh rereads /proc/PID/maps and adds the mappings not seen
 * before; nothing is ever forgotten (an unloaded library still symbolizes).
 * For each new file-backed executable mapping it opens the file through
 * /proc/PID/map_files/START-END (falling back to /proc/PID/root/PATH) and keeps
 * the descriptor, so a deleted binary or one in another mount namespace can be
 * read after the target exits. The generation number changes whenever a
 * refresh adds or retires a mapping (the unwinder flushes caches on change).
 * It also keeps what only a live process gives and symbolization needs later:
 * an O_PATH descriptor of /proc/PID/root, a copy of the vdso image, the pid
 * as the target's own namespace sees it, and the JIT symbols of
 * /tmp/perf-PID.map (reloaded by procmaps_load_perf_map, on exec and exit).
 * procmaps_parse_line and procmaps_parse_perf_map_line are pure and safe on
 * any input (fuzzed). */
#ifndef CSAMPLER_PROCMAPS_H
#define CSAMPLER_PROCMAPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCMAPS_PATH_MAX 4096

struct procmaps_entry {
	uint64_t start, end;     /* [start, end) */
	uint64_t offset;         /* file offset of start */
	uint64_t inode;
	unsigned dev_major, dev_minor;
	bool readable, writable, executable, shared;
	bool current;            /* present in the latest /proc/PID/maps */
	bool deleted;            /* path ended in " (deleted)" (suffix removed) */
	unsigned image;          /* the program image it belongs to: the execs seen
	                          * before it was found (procmaps_image) */
	unsigned tag;            /* 1-63 (address.h), none another code mapping over its addresses holds */
	int fd;                  /* open file (O_RDONLY|O_CLOEXEC) or -1 */
	char *path;              /* as the target sees it; "" if anonymous;
	                          * "[stack]", "[vdso]", "[heap]" ... kept as is */
};

struct procmaps;

/* Parse one line of /proc/PID/maps (without or with its newline). PATH gets
 * the path field (NUL-terminated, at most pathsz-1 bytes; "" when absent);
 * out->path is left NULL. Returns 0, or -1 if the line is malformed. */
int procmaps_parse_line(const char *line, size_t len, struct procmaps_entry *out,
			char *path, size_t pathsz);

/* A map for PID, empty until the first refresh. NULL with errno on failure. */
struct procmaps *procmaps_new(pid_t pid);
void procmaps_free(struct procmaps *pm);

/* Files open for the processes of one run: a file mapped by many processes
 * (the same libc) is opened once, by device and inode, and so is a root
 * directory they share (same directory and mount namespace); each is
 * closed with the last procmaps that uses it. Free it after them. */
struct procmaps_files;
struct procmaps_files *procmaps_files_new(void);
void procmaps_files_free(struct procmaps_files *f);
size_t procmaps_files_count(const struct procmaps_files *f);
/* As procmaps_new, its files shared through FILES (NULL: its own). */
struct procmaps *procmaps_new_shared(pid_t pid, struct procmaps_files *files);

/* A map of no live process (pid 0): the mappings a profile names, each
 * added with procmaps_add_file; symbolizes as a gone process's does. NULL
 * with errno on failure. */
struct procmaps *procmaps_new_files(void);
/* Add [START, END) at file OFFSET of PATH, an executable mapping, its file
 * opened now: only a regular file (never a device, FIFO or directory,
 * whatever link the path passes), at most MAX_FILES of them. Returns its
 * tag (address.h: mappings that overlap are told apart by it), or -1 with
 * errno (the mapping is then not added: its addresses find none). */
int procmaps_add_file(struct procmaps *pm, uint64_t start, uint64_t end, uint64_t offset,
		      const char *path);

/* Reread /proc/PID/maps. Returns the number of mappings added (>= 0) or -1
 * with errno (ESRCH when the process is gone). */
int procmaps_refresh(struct procmaps *pm);
/* Room made now for a few more mappings (a new thread's stack, a buffer
 * mapped since), so a refresh that finds no more than that, of paths up to
 * PROCMAPS_SPARE_PATH bytes, allocates nothing (a refresh inside a tick:
 * unwind.c). Between ticks; cheap when the room is there. */
#define PROCMAPS_SPARE 16
#define PROCMAPS_SPARE_PATH 128
void procmaps_reserve(struct procmaps *pm);
/* The descriptor open on the file E maps (its own, or that of another
 * mapping of the same file: a library's read-only segments share its code's),
 * or -1; no file is opened. */
int procmaps_open_file(const struct procmaps *pm, const struct procmaps_entry *e);
/* After exec: mark every mapping not current (history is kept). */
void procmaps_exec(struct procmaps *pm);
/* The process is gone: close what only a live process needed (its maps
 * file); what symbolizing needs stays. */
void procmaps_gone(struct procmaps *pm);
/* A gone process none of whose addresses will be looked up (no sample
 * holds one): drop its mappings, files and buffers, keeping what it was
 * (pid, gone); lookups find nothing. --children over thousands of short
 * processes keeps memory bounded by the live ones and the sampled. */
void procmaps_trim(struct procmaps *pm);
/* The program image now: how many execs procmaps_exec has seen. */
unsigned procmaps_image(const struct procmaps *pm);
/* Whether procmaps_gone was called. */
bool procmaps_is_gone(const struct procmaps *pm);

/* The current mapping containing ADDR, else the newest historical one, else NULL. */
const struct procmaps_entry *procmaps_find(const struct procmaps *pm, uint64_t addr);
/* The start of the first current mapping above ADDR, or UINT64_MAX: where a
 * mapping holding ADDR that is not known yet (a thread's stack made since
 * the maps were read) ends at the latest. */
uint64_t procmaps_next_start(const struct procmaps *pm, uint64_t addr);
/* As procmaps_find, but the code mapping with TAG among those that held
 * ADDR (the newest of them), when TAG is not 0 and one has it (tags tell
 * code mappings apart: a data mapping may share one). An untagged
 * address of a process with reuse was sampled before the reuse was seen:
 * the first mapping of the running program that held ADDR. */
const struct procmaps_entry *procmaps_find_tagged(const struct procmaps *pm, uint64_t addr,
						  unsigned tag);
/* Whether a code mapping was ever found where another, now gone, had been
 * (a library loaded at the address of one unloaded): its samples' addresses
 * must then carry the mapping's tag. */
bool procmaps_has_reuse(const struct procmaps *pm);
/* Whether a code mapping of the program now running went away (dlclose). */
bool procmaps_code_unloaded(const struct procmaps *pm);
size_t procmaps_count(const struct procmaps *pm);
const struct procmaps_entry *procmaps_at(const struct procmaps *pm, size_t i);
uint64_t procmaps_generation(const struct procmaps *pm);
/* Changes when a refresh added a code mapping of a file (a library loaded;
 * the first read; an exec's): not for anonymous or data mappings. */
uint64_t procmaps_code_generation(const struct procmaps *pm);
pid_t procmaps_pid(const struct procmaps *pm);

/* Descriptor of the target's root directory (O_PATH), or -1. */
int procmaps_root_fd(const struct procmaps *pm);
/* The regular file PATH as the target sees it (resolved inside its root),
 * opened read-only; -1 if it is not one (a FIFO or device is never
 * opened to wait on). */
int procmaps_open_regular(const struct procmaps *pm, const char *path);
/* The vdso image copied at the first refresh that saw it, or NULL. */
const void *procmaps_vdso_image(const struct procmaps *pm, size_t *len, uint64_t *start);

/* JIT symbols from perf maps: "START SIZE NAME" (hex START and SIZE). */
struct procmaps_jit_symbol {
	uint64_t start, size;
	char *name;
};
/* Parse one perf-map line. NAME gets the symbol (NUL-terminated, truncated to
 * namesz-1). Returns 0, or -1 if malformed. */
int procmaps_parse_perf_map_line(const char *line, size_t len, uint64_t *start,
				 uint64_t *size, char *name, size_t namesz);
/* (Re)read /tmp/perf-NSPID.map through the target's root (and /tmp/perf-PID.map);
 * symbols read before are kept unless replaced. Returns the count now known. */
size_t procmaps_load_perf_map(struct procmaps *pm);
/* The JIT symbol covering ADDR, or NULL. */
const struct procmaps_jit_symbol *procmaps_find_jit(const struct procmaps *pm, uint64_t addr);

/* The names table of the process's frames of runtime KIND (runtime.h:
 * what an addr_runtime address of it means), made at the first call by
 * the runtime's names_new, kept past its end for the symbols; NULL out of
 * memory or for a runtime with none. procmaps_runtime: NULL while none
 * was made. */
void *procmaps_runtime_names(struct procmaps *pm, unsigned kind);
const void *procmaps_runtime(const struct procmaps *pm, unsigned kind);

#endif
