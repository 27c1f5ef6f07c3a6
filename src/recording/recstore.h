/* recstore: an append-only store of variable-length records in bounded
 * memory, read back in the order added (pure; its scratch is a tempfile).
 *
 * Records go to a buffer of LIMIT bytes; a record that does not fit sends
 * the buffer to a temp file first (opened at the first overflow, unlinked)
 * and the buffer is reused. recstore_foreach reads the file with pread, then
 * the buffer, so a const store can be read as often as needed. Each record
 * is kept as a length word and its bytes padded to 8, so the bytes a reader
 * gets are 8-aligned. recstore_reserve allocates the buffer up front: an
 * append that fits in it never allocates (the sampler's tick appends).
 * Functions return 0 or -1 with errno (ENOMEM, or the temp file's error; on
 * failure the store holds exactly the records appended before). */
#ifndef CSAMPLER_RECSTORE_H
#define CSAMPLER_RECSTORE_H
#include <stddef.h>
#include <stdint.h>

struct recstore {
	unsigned char *buf;
	size_t cap;              /* the buffer's size */
	size_t limit;            /* bytes to keep in memory */
	size_t used;
	size_t max_record;       /* the largest record stored, length word included */
	int fd;                  /* the temp file, -1 until needed */
	uint64_t file_bytes;
	const char *name;        /* in the fallback temp file's name */
};

void recstore_init(struct recstore *st, size_t limit, const char *name);
/* Allocate the buffer now: max(limit, bytes) bytes. */
int recstore_reserve(struct recstore *st, size_t bytes);
/* Append one record: HEAD then BODY (either may be empty). */
int recstore_append(struct recstore *st, const void *head, size_t headlen,
		    const void *body, size_t bodylen);
/* Call fn once per record, in the order added; the record is valid during
 * the call only. fn returning non-zero stops the walk and is returned. */
int recstore_foreach(const struct recstore *st,
		     int (*fn)(void *ctx, const void *rec, size_t len), void *ctx);
void recstore_free(struct recstore *st);

#endif
