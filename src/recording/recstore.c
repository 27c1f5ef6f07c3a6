/* recstore: append-only records in bounded memory (see recstore.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recstore.h"
#include "tempfile.h"

/* Each record: a uint64_t length, then the bytes, padded to 8. */
static size_t record_bytes(size_t len)
{
	return sizeof(uint64_t) + (len + 7) / 8 * 8;
}

void recstore_init(struct recstore *st, size_t limit, const char *name)
{
	memset(st, 0, sizeof *st);
	st->limit = limit ? limit : 1;
	st->fd = -1;
	st->name = name;
}

static int grow(struct recstore *st, size_t cap)
{
	unsigned char *b = realloc(st->buf, cap);
	if (!b) {
		errno = ENOMEM;
		return -1;
	}
	st->buf = b;
	st->cap = cap;
	return 0;
}

int recstore_reserve(struct recstore *st, size_t bytes)
{
	size_t cap = bytes > st->limit ? bytes : st->limit;
	return cap > st->cap ? grow(st, cap) : 0;
}

/* Append the buffer to the temp file and empty it. */
static int flush(struct recstore *st)
{
	if (st->fd < 0 && (st->fd = tempfile_open(NULL, st->name)) < 0)
		return -1;
	/* on failure the records stay in the buffer, whole */
	if (tempfile_write_at(st->fd, st->buf, st->used, st->file_bytes) < 0)
		return -1;
	st->file_bytes += st->used;
	st->used = 0;
	return 0;
}

int recstore_append(struct recstore *st, const void *head, size_t headlen,
		    const void *body, size_t bodylen)
{
	if (headlen > SIZE_MAX / 2 || bodylen > SIZE_MAX / 2 - headlen - 16) {
		errno = EINVAL;
		return -1;
	}
	uint64_t len = headlen + bodylen;
	size_t need = record_bytes((size_t)len);
	if (st->used && st->used + need > st->limit && flush(st) < 0)
		return -1;
	if (st->used + need > st->cap &&
	    grow(st, st->used + need > st->limit ? st->used + need : st->limit) < 0)
		return -1;
	unsigned char *at = st->buf + st->used;
	memcpy(at, &len, sizeof len);
	if (headlen)
		memcpy(at + sizeof len, head, headlen);
	if (bodylen)
		memcpy(at + sizeof len + headlen, body, bodylen);
	memset(at + sizeof len + len, 0, need - sizeof len - (size_t)len);
	st->used += need;
	if (need > st->max_record)
		st->max_record = need;
	return 0;
}

/* Call fn for each whole record in buf[0, len); the bytes consumed go to
 * *used; returns fn's first non-zero result. */
static int walk(const unsigned char *buf, size_t len, size_t *used,
		int (*fn)(void *ctx, const void *rec, size_t len), void *ctx)
{
	size_t off = 0;
	int ret = 0;

	while (ret == 0 && len - off >= sizeof(uint64_t)) {
		uint64_t n;
		memcpy(&n, buf + off, sizeof n);
		if (n > len - off || len - off - sizeof n < (n + 7) / 8 * 8)
			break;
		ret = fn(ctx, buf + off + sizeof n, (size_t)n);
		off += record_bytes((size_t)n);
	}
	*used = off;
	return ret;
}

static int foreach_in_file(const struct recstore *st,
			   int (*fn)(void *ctx, const void *rec, size_t len), void *ctx)
{
	size_t cap = st->limit > st->max_record ? st->limit : st->max_record;
	if (cap > 4 * 1024 * 1024 && cap > st->max_record)
		cap = st->max_record > 4 * 1024 * 1024 ? st->max_record : 4 * 1024 * 1024;
	unsigned char *rbuf = malloc(cap);
	if (!rbuf) {
		errno = ENOMEM;
		return -1;
	}
	uint64_t pos = 0;
	size_t have = 0, used;
	int ret = 0;
	while (ret == 0 && (pos < st->file_bytes || have)) {
		size_t want = cap - have;
		if (want > st->file_bytes - pos)
			want = (size_t)(st->file_bytes - pos);
		if (tempfile_read_at(st->fd, rbuf + have, want, pos) < 0) {
			ret = -1;
			break;
		}
		have += want;
		pos += want;
		ret = walk(rbuf, have, &used, fn, ctx);
		if (ret == 0 && used == 0) {
			/* a record larger than the buffer: our own file was damaged */
			errno = EIO;
			ret = -1;
			break;
		}
		memmove(rbuf, rbuf + used, have - used);
		have -= used;
	}
	int err = errno;
	free(rbuf);
	errno = err;
	return ret;
}

int recstore_foreach(const struct recstore *st,
		     int (*fn)(void *ctx, const void *rec, size_t len), void *ctx)
{
	size_t used;
	if (st->file_bytes) {
		int ret = foreach_in_file(st, fn, ctx);
		if (ret)
			return ret;
	}
	return st->buf ? walk(st->buf, st->used, &used, fn, ctx) : 0;
}

void recstore_free(struct recstore *st)
{
	if (st->fd >= 0)
		close(st->fd);
	free(st->buf);
	st->buf = NULL;
	st->fd = -1;
	st->used = st->cap = 0;
	st->file_bytes = 0;
}
