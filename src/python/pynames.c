/* pynames: see pynames.h. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "intern.h"
#include "pynames.h"

struct pynames {
	struct intern strings;
	struct pyname *frames;
	size_t n, cap;
	uint32_t *slot;                 /* id + 1, 0 = empty; nslots a power of two */
	size_t nslots;
	size_t string_bytes;            /* of the distinct strings interned */
};

struct pynames *pynames_new(void)
{
	return calloc(1, sizeof(struct pynames));
}

void pynames_free(struct pynames *t)
{
	if (!t)
		return;
	intern_free(&t->strings);
	free(t->frames);
	free(t->slot);
	free(t);
}

const char *pynames_string(struct pynames *t, const char *s)
{
	size_t len = strlen(s), before = t->strings.n;
	if (t->string_bytes + len + 1 > PYNAMES_MAX_BYTES) {
		/* (only a string already there, then) */
		int64_t i = intern_find(&t->strings, s, len);
		return i < 0 ? NULL : t->strings.strs[i];
	}
	const char *copy = intern_string(&t->strings, s, len);
	if (copy && t->strings.n != before)
		t->string_bytes += len + 1;
	return copy;
}

static uint64_t frame_hash(const char *qualname, const char *filename, int first_line, int line)
{
	uint64_t h = hash_u64((uint64_t)(uintptr_t)qualname);
	h = hash_u64(h ^ (uint64_t)(uintptr_t)filename);
	return hash_u64(h ^ ((uint64_t)(uint32_t)first_line << 32 | (uint32_t)line));
}

static bool grow_slots(struct pynames *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slot = calloc(n, sizeof *slot);
	if (!slot)
		return false;
	for (size_t i = 0; i < t->n; i++) {
		const struct pyname *f = &t->frames[i];
		size_t j = frame_hash(f->qualname, f->filename, f->first_line, f->line) & (n - 1);
		while (slot[j])
			j = (j + 1) & (n - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslots = n;
	return true;
}

uint32_t pynames_frame(struct pynames *t, const char *qualname, const char *filename,
		       int first_line, int line)
{
	if (!qualname || !filename)
		return PYNAMES_FULL;
	uint64_t h = frame_hash(qualname, filename, first_line, line);
	/* a frame already named keeps its id, full or not */
	for (size_t j = h & (t->nslots - 1); t->nslots && t->slot[j]; j = (j + 1) & (t->nslots - 1)) {
		const struct pyname *f = &t->frames[t->slot[j] - 1];
		if (f->qualname == qualname && f->filename == filename &&
		    f->first_line == first_line && f->line == line)
			return t->slot[j] - 1;
	}
	/* a new one, where there is room (the slots at most half used) */
	if (t->n >= PYNAMES_MAX || ((t->n + 1) * 2 > t->nslots && !grow_slots(t)) ||
	    array_grow(&t->frames, &t->cap, t->n + 1, sizeof *t->frames, 256) < 0)
		return PYNAMES_FULL;
	size_t j = h & (t->nslots - 1);
	while (t->slot[j])
		j = (j + 1) & (t->nslots - 1);
	t->frames[t->n] = (struct pyname){ .qualname = qualname, .filename = filename,
					   .first_line = first_line, .line = line };
	t->slot[j] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

const struct pyname *pynames_get(const struct pynames *t, uint32_t id)
{
	return t && id < t->n ? &t->frames[id] : NULL;
}

size_t pynames_count(const struct pynames *t)
{
	return t ? t->n : 0;
}
