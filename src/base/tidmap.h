/* tidmap: thread id -> 32-bit value, for the rooms that find a thread's
 * row by its tid on every report or tick (target, sampler).
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones, so a table under churn never degrades). Kept at most half
 * full: tidmap_reserve makes room up front, after which tidmap_put and
 * tidmap_remove never allocate. tid 0 is not a valid key. Pure; no
 * globals. */
#ifndef CSAMPLER_TIDMAP_H
#define CSAMPLER_TIDMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tidmap_slot {
	pid_t tid;               /* 0: empty */
	uint32_t value;
};

struct tidmap {
	struct tidmap_slot *slots;
	size_t cap;              /* a power of two (0 before the first reserve) */
	size_t count;
};

#define TIDMAP_INIT { NULL, 0, 0 }

/* Room for N entries in all (allocates only when the table must grow).
 * 0, or -1 with errno ENOMEM (the map is unchanged). */
int tidmap_reserve(struct tidmap *m, size_t n);
/* Map TID to VALUE (replacing a value it had). Grows when needed: 0, or -1
 * with errno (ENOMEM; EINVAL for tid 0). */
int tidmap_put(struct tidmap *m, pid_t tid, uint32_t value);
/* TID's value into *VALUE: true if present. */
bool tidmap_get(const struct tidmap *m, pid_t tid, uint32_t *value);
/* Forget TID (no-op if absent). */
void tidmap_remove(struct tidmap *m, pid_t tid);
/* Forget every entry (keeps the room). */
void tidmap_clear(struct tidmap *m);
void tidmap_free(struct tidmap *m);

/* tidrows: a row of ROW_SIZE bytes per thread, found by its tid exactly
 * (a tidmap to the row's index; no thread takes another's row), for the
 * rooms that keep something of each thread they read (the unwinder's
 * runtimes). A row is zeroed when made and kept until its thread is
 * forgotten (its index then made again for the next); at most MAX rows
 * (beyond them, or out of memory, tidrows_get gives NULL: the caller
 * keeps nothing of that thread). Rows move as the table grows: a pointer
 * to one holds until the next tidrows_get. */
struct tidrows {
	struct tidmap map;
	uint8_t *rows;
	size_t row_size, nrows, cap, max;
	uint32_t *free;          /* indexes forgotten, nfree of them */
	size_t nfree;
};

#define TIDROWS_INIT(row_size, max) { TIDMAP_INIT, NULL, (row_size), 0, 0, (max), NULL, 0 }

/* TID's row: the one it has, else (MAKE) a new one, zeroed (*MADE true).
 * NULL: none (and not made, or no room). */
void *tidrows_get(struct tidrows *t, pid_t tid, bool make, bool *made);
/* TID's row is no longer its (no-op if it has none). */
void tidrows_forget(struct tidrows *t, pid_t tid);
/* Rows held now. */
size_t tidrows_count(const struct tidrows *t);
void tidrows_free(struct tidrows *t);

/* -t (and --serve's tid=): whether TID is among TIDS[0, N), the threads
 * chosen; every thread is when none is (N 0). */
static inline bool tids_allow(const pid_t *tids, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return n == 0;
}

#endif
