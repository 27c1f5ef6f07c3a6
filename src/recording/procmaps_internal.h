/* procmaps_internal: what procmaps' files share (not an interface:
 * procmaps.h is). procmaps.c keeps the mappings and their files,
 * procmaps_files.c the files many processes share (pm_shared_*),
 * procmaps_parse.c parses a maps line and a perf-map line (pure, fuzzed),
 * procmaps_jit.c reads a process's perf map of JIT symbols. */
#ifndef CSAMPLER_PROCMAPS_INTERNAL_H
#define CSAMPLER_PROCMAPS_INTERNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procmaps.h"
#include "runtime.h"

#define PROCMAPS_MAX_ENTRIES (1u << 20)
#define PROCMAPS_MAX_BYTES ((size_t)256 << 20)
#define MAPS_BUF_INITIAL (64 * 1024)
#define MAX_FILES 4096
#define VDSO_MAX_BYTES ((size_t)1 << 20)
#define MAX_JIT_SYMBOLS (1u << 20)
#define PERF_MAP_MAX_BYTES ((off_t)256 << 20)
#define PERF_LINE_MAX (PROCMAPS_PATH_MAX + 64)
#define CUR_WALK_BACK 8
#define JIT_WALK_BACK 16
#define DELETED_SUFFIX " (deleted)"

struct node {
	struct procmaps_entry e;  /* first: entry pointers are node pointers */
	uint64_t seq;             /* order of discovery */
	uint64_t seen;            /* refresh epoch that last saw it */
	char path[];
};

struct open_file {
	uint64_t inode;
	unsigned dev_major, dev_minor;
	int fd;
	bool shared;      /* a reference into pm->shared (procmaps_files) */
};

/* Files open for many processes at once (procmaps_files): a mapped file by
 * device and inode, a root directory by device, inode and mount namespace. */
struct shared_file {
	uint64_t inode, mntns;   /* mntns: roots only (0 for files) */
	unsigned dev_major, dev_minor;
	bool root;
	int fd;
	size_t refs;
};

/* A vDSO image, the same bytes in every process of a kind (one per
 * kernel and ABI): held once, by reference. */
struct shared_vdso {
	void *img;
	size_t len;
	unsigned refs;
};
#define SHARED_VDSOS 4

struct procmaps_files {
	struct shared_file *v;
	size_t n, cap;
	struct shared_vdso vdso[SHARED_VDSOS];
};

struct jit_entry {
	struct procmaps_jit_symbol sym;  /* first: returned by procmaps_find_jit */
	uint64_t seq;
};

/* Threads looked at to find a live one once the main thread has exited. */
#define LIVE_TASK_SCAN 4096

struct procmaps {
	struct procmaps_files *shared;  /* or NULL */
	bool gone;                      /* procmaps_gone was called */
	bool root_shared;               /* root_fd is a reference into shared */
	pid_t pid;
	pid_t proc_pid;   /* the /proc entry read: pid, or a live thread once the main one exited */
	pid_t nspid;
	uid_t ruid, euid;
	int root_fd;
	int maps_fd;
	struct node **all;
	uint64_t *maxend;
	size_t n, cap;
	struct node **cur;
	size_t ncur, curcap;
	struct open_file *files;
	size_t nfiles, filescap;
	uint64_t generation;
	uint64_t code_generation;     /* refreshes that added a code mapping of a file */
	unsigned image;                 /* execs seen */
	bool reuse;                     /* procmaps_has_reuse */
	bool code_unloaded;             /* procmaps_code_unloaded */
	uint64_t epoch;
	uint64_t seq;
	struct node *spare[PROCMAPS_SPARE]; /* nodes with PROCMAPS_SPARE_PATH bytes of path */
	size_t nspare;
	char *buf;
	size_t bufcap;
	size_t buflen;                  /* the last read's length */
	char *scratch;                  /* PROCMAPS_PATH_MAX bytes: a path being parsed */
	void *vdso;
	size_t vdso_len;
	uint64_t vdso_start;
	struct jit_entry *jit;
	size_t njit, jitcap;
	uint64_t jit_seq;
	void *runtime_names[RUNTIME_KINDS]; /* its runtimes' frames' names, or NULL */
};

/* PATH opened under ROOT_FD (resolved as if ROOT_FD were /), read-only
 * with FLAGS; a descriptor or -1. */
int pm_open_in_root(int root_fd, const char *path, int flags);

/* The file of PM's mapping E (PATH its name in the listing), read-only:
 * through /proc/PID/map_files, else by PATH in the process's root; kept
 * only if its inode is E's. A descriptor or -1. */
int pm_open_mapped_file(const struct procmaps *pm, const struct procmaps_entry *e,
			const char *path);

/* F's file (ROOT: a root directory, of mount namespace MNTNS) by device and
 * inode, or NULL. */
struct shared_file *pm_shared_find(struct procmaps_files *f, bool root, unsigned dev_major,
				   unsigned dev_minor, uint64_t inode, uint64_t mntns);
bool pm_shared_add(struct procmaps_files *f, bool root, unsigned dev_major, unsigned dev_minor,
		   uint64_t inode, uint64_t mntns, int fd);
void pm_shared_unref(struct procmaps_files *f, int fd);
void *pm_shared_vdso_take(struct procmaps_files *f, void *img, size_t len);
bool pm_shared_vdso_drop(struct procmaps_files *f, const void *img);
/* PM's root directory, just opened, shared with the processes that have
 * the same one (same directory, same mount namespace). */
void pm_share_root(struct procmaps *pm);

/* What procmaps.c lends procmaps_files.c's map of files: an empty map
 * (NULL when out of memory); the descriptor PM holds for E's file, or -1;
 * E (with PATH) added to every mapping PM knows, the first NSORTED of which
 * are indexed (NULL when out of memory); the lookup indexes rebuilt over the
 * mappings from NSORTED on (0, or -1). */
struct procmaps *pm_alloc(void);
int pm_held_fd(const struct procmaps *pm, const struct procmaps_entry *e);
struct node *pm_add_mapping(struct procmaps *pm, size_t nsorted, const struct procmaps_entry *e,
			    const char *path);
int pm_rebuild_indexes(struct procmaps *pm, size_t nsorted);

#endif
