/* ksyms: see ksyms.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "address.h"
#include "array.h"
#include "intern.h"
#include "ksyms.h"

/* kallsyms' names are at most KSYM_NAME_LEN (512) bytes; a longer line is
 * no line the kernel wrote */
#define NAME_MAX_LEN 512
/* the last symbol of a region ends this far past its start */
#define REGION_TAIL 4096u

struct ksym {
	uint64_t addr;
	uint32_t name;           /* index in names */
	uint16_t module;         /* 0: the kernel image; else modules' index + 1 */
	uint16_t rank;           /* of aliases at one address, the lowest is kept */
	uint32_t order;          /* as read: a stable sort */
};

struct region {
	uint64_t start, limit;
};

struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	struct intern names, modules;
	struct region *regions;  /* by module (0: the image) */
	uint32_t *by_name;       /* a name's first symbol (UINT32_MAX: none) */
};

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "ADDRESS TYPE NAME[\t[MODULE]]" in LINE[0, LEN): false if it is not a
 * code symbol with an address */
static bool parse_line(const char *line, size_t len, uint64_t *addr, char *type,
		       const char **name, size_t *name_len, const char **mod, size_t *mod_len)
{
	size_t i = 0;
	uint64_t a = 0;
	for (; i < len && i < 16 && hex_value(line[i]) >= 0; i++)
		a = a << 4 | (uint64_t)hex_value(line[i]);
	if (i == 0 || i + 3 > len || line[i] != ' ' || line[i + 2] != ' ')
		return false;
	*type = line[i + 1];
	if (!strchr("tTwW", *type) || a == 0)
		return false;
	i += 3;
	size_t start = i;
	while (i < len && line[i] != '\t' && line[i] != ' ')
		i++;
	if (i == start || i - start > NAME_MAX_LEN)
		return false;
	*addr = a;
	*name = line + start;
	*name_len = i - start;
	*mod = NULL;
	*mod_len = 0;
	while (i < len && (line[i] == '\t' || line[i] == ' '))
		i++;
	if (i < len && line[i] == '[') {
		size_t m = ++i;
		while (i < len && line[i] != ']')
			i++;
		if (i == len || i == m || i - m > NAME_MAX_LEN)
			return false;
		*mod = line + m;
		*mod_len = i - m;
	}
	return true;
}

static uint16_t type_rank(char type)
{
	switch (type) {
	case 'T': return 0;
	case 'W': return 1;
	case 't': return 2;
	default: return 3;
	}
}

static int add_line(struct ksyms *k, const char *line, size_t len)
{
	uint64_t addr;
	char type;
	const char *name, *mod;
	size_t name_len, mod_len;
	if (!parse_line(line, len, &addr, &type, &name, &name_len, &mod, &mod_len) ||
	    k->n >= KSYMS_MAX)
		return 0;
	int64_t ni = intern_index(&k->names, name, name_len);
	int64_t mi = mod ? intern_index(&k->modules, mod, mod_len) : -1;
	if (ni < 0 || (mod && mi < 0))
		return -1;
	if (mi >= UINT16_MAX - 1)
		return 0;   /* (no kernel has that many modules) */
	if (array_grow(&k->syms, &k->cap, k->n + 1, sizeof *k->syms, 4096) < 0)
		return -1;
	k->syms[k->n] = (struct ksym){ .addr = addr, .name = (uint32_t)ni,
				       .module = (uint16_t)(mi + 1), .rank = type_rank(type),
				       .order = (uint32_t)k->n };
	k->n++;
	return 0;
}

static int by_address(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* sorted, one symbol an address, each module's region, each name's first */
static int index_symbols(struct ksyms *k)
{
	if (k->n)
		qsort(k->syms, k->n, sizeof *k->syms, by_address);
	size_t w = 0;
	for (size_t i = 0; i < k->n; i++)
		if (w == 0 || k->syms[w - 1].addr != k->syms[i].addr)
			k->syms[w++] = k->syms[i];
	k->n = w;
	k->regions = calloc(k->modules.n + 1, sizeof *k->regions);
	k->by_name = malloc((k->names.n ? k->names.n : 1) * sizeof *k->by_name);
	if (!k->regions || !k->by_name)
		return -1;
	memset(k->by_name, 0xff, (k->names.n ? k->names.n : 1) * sizeof *k->by_name);
	for (size_t i = 0; i < k->n; i++) {
		const struct ksym *s = &k->syms[i];
		struct region *r = &k->regions[s->module];
		if (r->limit == 0 || s->addr < r->start)
			r->start = s->addr;
		if (s->addr + REGION_TAIL > r->limit)
			r->limit = s->addr + REGION_TAIL < s->addr ? UINT64_MAX : s->addr + REGION_TAIL;
		if (k->by_name[s->name] == UINT32_MAX)
			k->by_name[s->name] = (uint32_t)i;
	}
	return 0;
}

struct ksyms *ksyms_parse(const char *text, size_t len)
{
	struct ksyms *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	size_t at = 0;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;
		if (add_line(k, text + at, end - at) < 0)
			goto fail;
		at = end + 1;
	}
	if (index_symbols(k) < 0)
		goto fail;
	return k;
fail:
	ksyms_free(k);
	return NULL;
}

struct ksyms *ksyms_load(void)
{
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, len = 0;
	for (;;) {
		if (array_grow(&buf, &cap, len + 65536, 1, 1u << 20) < 0) {
			len = SIZE_MAX;
			break;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			len = SIZE_MAX;
			break;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len >= KSYMS_READ_MAX)
			break;   /* (what was read is kept) */
	}
	int err = errno;
	close(fd);
	struct ksyms *k = len == SIZE_MAX ? NULL : ksyms_parse(buf, len);
	if (len == SIZE_MAX)
		errno = err;
	free(buf);
	return k;
}

void ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->regions);
	free(k->by_name);
	intern_free(&k->names);
	intern_free(&k->modules);
	free(k);
}

bool ksyms_hidden(const struct ksyms *k)
{
	return !k || k->n == 0;
}

bool ksyms_lookup(const struct ksyms *k, uint64_t addr, struct ksyms_symbol *out)
{
	if (!k || k->n == 0 || addr < k->syms[0].addr)
		return false;
	size_t lo = 0, hi = k->n;   /* the last symbol at or below addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	const struct ksym *s = &k->syms[lo];
	const struct region *r = &k->regions[s->module];
	if (addr >= r->limit)
		return false;
	*out = (struct ksyms_symbol){
		.name = k->names.strs[s->name],
		.module = s->module ? k->modules.strs[s->module - 1] : NULL,
		.start = s->addr, .region_start = r->start, .region_limit = r->limit,
	};
	return true;
}

uint64_t ksyms_address(const struct ksyms *k, const char *name, const char *module)
{
	if (!k || k->n == 0)
		return 0;
	int64_t ni = intern_find(&k->names, name, strlen(name));
	int64_t mi = module ? intern_find(&k->modules, module, strlen(module)) : -1;
	if (ni < 0 || (module && mi < 0))
		return 0;
	uint32_t first = k->by_name[ni];
	if (first == UINT32_MAX)
		return 0;   /* (an alias whose address another name kept) */
	if (k->syms[first].module == (uint16_t)(mi + 1))
		return k->syms[first].addr;
	/* a static function of the same name elsewhere first */
	for (size_t i = first + 1; i < k->n; i++)
		if (k->syms[i].name == (uint32_t)ni && k->syms[i].module == (uint16_t)(mi + 1))
			return k->syms[i].addr;
	return 0;
}

/* "[<...>] NAME+0xOFF/0xSIZE[ [MODULE]]" in LINE[0, LEN): the address, or 0 */
static uint64_t stack_line(const struct ksyms *k, const char *line, size_t len)
{
	const char *end = line + len, *p = memchr(line, ']', len);
	if (!p || end - p < 2 || p[1] != ' ')
		return 0;
	const char *name = p + 2, *plus = memchr(name, '+', (size_t)(end - name));
	if (!plus || plus == name || plus - name > NAME_MAX_LEN || end - plus < 3 ||
	    plus[1] != '0' || plus[2] != 'x')
		return 0;
	uint64_t off = 0;
	const char *q = plus + 3;
	for (int d = 0; q < end && hex_value(*q) >= 0 && d < 16; q++, d++)
		off = off << 4 | (uint64_t)hex_value(*q);
	char fn[NAME_MAX_LEN + 1], mod[NAME_MAX_LEN + 1];
	memcpy(fn, name, (size_t)(plus - name));
	fn[plus - name] = '\0';
	const char *open = memchr(q, '[', (size_t)(end - q));
	const char *close = open ? memchr(open, ']', (size_t)(end - open)) : NULL;
	bool in_module = close && close - open > 1 && close - open - 1 <= NAME_MAX_LEN;
	if (in_module) {
		memcpy(mod, open + 1, (size_t)(close - open - 1));
		mod[close - open - 1] = '\0';
	}
	uint64_t at = ksyms_address(k, fn, in_module ? mod : NULL), ip;
	return at && off < (1u << 24) && addr_kernel(at + off, false, &ip) ? ip : 0;
}

size_t ksyms_stack(const struct ksyms *k, const char *text, size_t len, uint64_t *out, size_t max)
{
	size_t n = 0, at = 0;
	while (at < len && n < max) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;
		uint64_t ip = stack_line(k, text + at, end - at);
		if (ip)
			out[n++] = ip;
		at = end + 1;
	}
	return n;
}
