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
