/* gopclntab: Go's function table read (see gopclntab.h). */
#include "config.h"

#include <string.h>

#include "gopclntab.h"

#define MAGIC_GO118 0xfffffff0u
#define MAGIC_GO120 0xfffffff1u
#define HEADER_LEN 72              /* 8 bytes, then 8 words of 8 bytes */
#define FUNC_LEN 40                /* the fields read of a function record */
#define FUNC_LEN_GO120 44          /* Go 1.20's, which has a start line */
#define FLAG_AT 37                 /* the flag byte, Go 1.18 and 1.19 */
#define FLAG_AT_GO120 41
/* The most steps a pc-value walk takes (one per line change at least). */
#define PCVALUE_STEPS_MAX (1u << 20)

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* Whether [OFF, OFF + N) lies in the section. */
static bool within(const struct gopclntab *t, uint64_t off, uint64_t n)
{
	return off <= t->len && n <= t->len - off;
}

bool gopclntab_parse(struct gopclntab *t, const uint8_t *data, size_t len, uint64_t text_start)
{
	memset(t, 0, sizeof *t);
	if (!data || len < HEADER_LEN)
		return false;
	uint32_t magic = get32(data);
	if ((magic != MAGIC_GO118 && magic != MAGIC_GO120) || data[4] || data[5] || data[7] != 8)
		return false;
	t->data = data;
	t->len = len;
	t->go120 = magic == MAGIC_GO120;
	t->quantum = data[6];
	t->nfunc = get64(data + 8);
	t->text_start = get64(data + 24);
	t->funcnames = get64(data + 32);
	t->cutab = get64(data + 40);
	t->filetab = get64(data + 48);
	t->pctab = get64(data + 56);
	t->functab = get64(data + 64);
	if (!t->text_start)
		t->text_start = text_start;
	/* the function table: nfunc + 1 pairs of 32-bit offsets */
	if (t->quantum == 0 || t->nfunc == 0 || t->nfunc > len / 8 ||
	    !within(t, t->functab, (t->nfunc + 1) * 8) || t->funcnames >= len || t->cutab >= len ||
	    t->filetab >= len || t->pctab >= len)
		return false;
	return true;
}

/* A NUL-terminated string at OFF, at most GOPCLNTAB_NAME_MAX bytes shown. */
static const char *string_at(const struct gopclntab *t, uint64_t off, size_t *len)
{
	if (off >= t->len)
		return NULL;
	size_t room = t->len - off;
	const char *s = (const char *)t->data + off;
	size_t n = strnlen(s, room < GOPCLNTAB_NAME_MAX ? room : GOPCLNTAB_NAME_MAX);
	if (n == 0)
		return NULL;
	*len = n;
	return s;
}

/* An unsigned varint at *OFF (advanced), or false. */
static bool varint(const struct gopclntab *t, uint64_t *off, uint32_t *out)
{
	uint32_t v = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*off >= t->len)
			return false;
		uint8_t b = t->data[(*off)++];
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* The value of the pc-value table at TABLE (from pctab) for ADDR_OFF, in
 * the function whose code is [ENTRY_OFF, END_OFF) (offsets from the text);
 * false when the table does not say. */
static bool pcvalue(const struct gopclntab *t, uint32_t table, uint64_t entry_off,
		    uint64_t end_off, uint64_t addr_off, int32_t *out)
{
	if (table == 0)
		return false;
	uint64_t off = t->pctab + table, pc = entry_off;
	int32_t value = -1;
	for (unsigned step = 0; step < PCVALUE_STEPS_MAX && pc < end_off; step++) {
		uint32_t uv, pcdelta;
		if (off >= t->len || (t->data[off] == 0 && step > 0))
			return false;
		if (!varint(t, &off, &uv) || !varint(t, &off, &pcdelta))
			return false;
		/* zigzag: in unsigned arithmetic, which wraps as Go's int32 does */
		value = (int32_t)((uint32_t)value + (-(uv & 1) ^ (uv >> 1)));
		pc += (uint64_t)pcdelta * t->quantum;
		if (addr_off < pc) {
			*out = value;
			return true;
		}
	}
	return false;
}

/* Function I's record (at least NEED bytes in the section) and its code
 * [*ENTRY, *END) as offsets from the text, its name; NULL if any is out of
 * line. */
static const uint8_t *func_record(const struct gopclntab *t, uint64_t i, uint64_t need,
				  uint64_t *entry, uint64_t *end, const char **name,
				  size_t *name_len)
{
	const uint8_t *ft = t->data + t->functab;
	*entry = get32(ft + i * 8);
	*end = get32(ft + (i + 1) * 8);
	uint64_t rec = t->functab + (uint64_t)get32(ft + i * 8 + 4);
	if (*end <= *entry || !within(t, rec, need) || get32(t->data + rec) != *entry)
		return NULL;
	const uint8_t *f = t->data + rec;
	*name = string_at(t, t->funcnames + get32(f + 4), name_len);
	return *name ? f : NULL;
}

bool gopclntab_find(const struct gopclntab *t, uint64_t addr, struct gopclntab_func *out)
{
	memset(out, 0, sizeof *out);
	if (!t->data || addr < t->text_start)
		return false;
	uint64_t a = addr - t->text_start;
	const uint8_t *ft = t->data + t->functab;
	if (a >= get32(ft + t->nfunc * 8))
		return false;  /* past the last function's end */
	/* the last entry at or before A */
	uint64_t lo = 0, hi = t->nfunc;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (get32(ft + mid * 8) <= a)
			lo = mid;
		else
			hi = mid;
	}
	uint64_t entry, end;
	const uint8_t *f = func_record(t, lo, FUNC_LEN, &entry, &end, &out->name, &out->name_len);
	if (!f || a < entry)
		return false;
	out->entry = t->text_start + entry;
	int32_t line, file;
	if (pcvalue(t, get32(f + 24), entry, end, a, &line) && line > 0)
		out->line = line;
	/* Go 1.20 records it; before, the line of the entry is the closest */
	if (t->go120 && (int32_t)get32(f + 36) > 0)
		out->start_line = (int32_t)get32(f + 36);
	else if (pcvalue(t, get32(f + 24), entry, end, entry, &line) && line > 0)
		out->start_line = line;
	uint64_t cu = get32(f + 32);
	if (pcvalue(t, get32(f + 20), entry, end, a, &file) && file >= 0 &&
	    within(t, t->cutab + (cu + (uint64_t)file) * 4, 4)) {
		uint32_t name = get32(t->data + t->cutab + (cu + (uint64_t)file) * 4);
		if (name != UINT32_MAX)
			out->file = string_at(t, t->filetab + name, &out->file_len);
	}
	if (!out->file)
		out->line = out->start_line = 0;
	return true;
}

size_t gopclntab_entries(const struct gopclntab *t, uint64_t *out, size_t max)
{
	size_t n = 0;
	for (uint64_t i = 0; t->data && i < t->nfunc && n < max; i++)
		out[n++] = t->text_start + get32(t->data + t->functab + i * 8);
	return n;
}

bool gopclntab_function(const struct gopclntab *t, uint64_t i, struct gopclntab_entry *out)
{
	memset(out, 0, sizeof *out);
	if (!t->data || i >= t->nfunc)
		return false;
	uint64_t entry, end;
	const uint8_t *f = func_record(t, i, t->go120 ? FUNC_LEN_GO120 : FUNC_LEN, &entry, &end,
				       &out->name, &out->name_len);
	if (!f || end > UINT64_MAX - t->text_start)
		return false;   /* (a text start that wraps the code's end) */
	out->entry = t->text_start + entry;
	out->end = t->text_start + end;
	out->flag = f[t->go120 ? FLAG_AT_GO120 : FLAG_AT];
	return true;
}
