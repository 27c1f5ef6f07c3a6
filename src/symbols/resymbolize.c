/* resymbolize: a read profile's bare addresses named from its mappings'
 * files (see resymbolize.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address.h"
#include "array.h"
#include "error.h"
#include "procmaps.h"
#include "resymbolize.h"

/* What became of a profile mapping's file. */
enum file_state {
	FILE_UNTRIED = 0,
	FILE_USED,       /* opened, its build-id the mapping's (or unknown) */
	FILE_MISSING,    /* no such regular file, or not readable */
	FILE_OTHER,      /* another build (build-ids differ) */
	FILE_NONE,       /* the mapping names no file ("", [vdso], ...) */
};

struct mapping_state {
	unsigned char state;     /* enum file_state */
	unsigned char tag;       /* the procmaps entry's tag (FILE_USED) */
	const char *found_id;    /* FILE_OTHER: the file's build-id */
	uint64_t bare;           /* addresses left bare */
};

struct resymbolize {
	struct procmaps *pm;
	struct symbolizer *sym;
	struct mapping_state *maps;
	size_t nmaps, maps_cap;
	struct symbol_frame frames[64];
};

/* Reports of mappings left bare: at most this many lines, then a count. */
#define REPORT_LINES 5

struct resymbolize *resymbolize_new(const struct symbolize_options *opt)
{
	struct resymbolize *rs = calloc(1, sizeof *rs);
	if (!rs)
		return NULL;
	rs->pm = procmaps_new_files();
	rs->sym = rs->pm ? symbolizer_new(rs->pm, opt) : NULL;
	if (!rs->sym) {
		resymbolize_free(rs);
		errno = ENOMEM;
		return NULL;
	}
	return rs;
}

void resymbolize_free(struct resymbolize *rs)
{
	if (!rs)
		return;
	symbolizer_free(rs->sym);
	procmaps_free(rs->pm);
	free(rs->maps);
	free(rs);
}

/* PATH as mapping M's file: true, MS used, if it is the build the profile
 * names (or either build-id is unknown); a file of another build is
 * remembered for the report. */
static bool try_file(struct resymbolize *rs, const struct profile_mapping *m,
		     struct mapping_state *ms, const char *path)
{
	int tag = procmaps_add_file(rs->pm, m->start, m->limit, m->offset, path);
	if (tag < 0)
		return false;
	struct symbol_module mod;
	uint64_t at = addr_with_tag(m->start | ADDR_ACTIVATION, (unsigned)tag);
	if (!symbolizer_module(rs->sym, at, &mod))
		return false;
	if (m->build_id[0] && mod.build_id && strcmp(mod.build_id, m->build_id) != 0) {
		if (!ms->found_id)
			ms->found_id = mod.build_id;
		return false;
	}
	ms->tag = (unsigned char)tag;
	ms->state = FILE_USED;
	return true;
}

/* Try the path made of the parts (joined as given) unless it is too long. */
static bool try_joined(struct resymbolize *rs, const struct profile_mapping *m,
		       struct mapping_state *ms, const char *a, size_t alen, const char *b,
		       const char *c)
{
	char path[PROCMAPS_PATH_MAX];
	int n = snprintf(path, sizeof path, "%.*s%s%s", (int)alen, a, b, c);
	return n > 0 && (size_t)n < sizeof path && try_file(rs, m, ms, path);
}

/* Where mapping M's file may be, as pprof looks (and perf's debug
 * directory): each directory D of PPROF_BINARY_PATH (default
 * $HOME/pprof/binaries) as D/BUILD-ID/NAME, D/NAME and D/PATH; then PATH
 * itself; then /usr/lib/debug/.build-id/XX/REST.debug. The first of the
 * profile's build (or of an unknown one) is used. */
static void find_file(struct resymbolize *rs, const struct profile_mapping *m,
		      struct mapping_state *ms)
{
	const char *file = m->filename, *id = m->build_id;
	const char *slash = strrchr(file, '/'), *name = slash ? slash + 1 : file;
	const char *search = getenv("PPROF_BINARY_PATH"), *home = getenv("HOME");
	char dflt[PROCMAPS_PATH_MAX];
	if (!search && home && (size_t)snprintf(dflt, sizeof dflt, "%s/pprof/binaries", home) <
				       sizeof dflt)
		search = dflt;
	for (const char *d = search; d && *d && ms->state != FILE_USED;) {
		size_t len = strcspn(d, ":");
		if (len && *id && *name) {
			char sub[PROCMAPS_PATH_MAX];
			if ((size_t)snprintf(sub, sizeof sub, "/%s/%s", id, name) < sizeof sub &&
			    try_joined(rs, m, ms, d, len, sub, ""))
				break;
		}
		if (len && *name && try_joined(rs, m, ms, d, len, "/", name))
			break;
		if (len && file[0] == '/' && try_joined(rs, m, ms, d, len, file, ""))
			break;
		d += len + (d[len] == ':');
	}
	if (ms->state != FILE_USED && file[0] == '/')
		try_file(rs, m, ms, file);
	size_t idlen = strlen(id);
	if (ms->state != FILE_USED && idlen > 2 && idlen < 256 &&
	    strspn(id, "0123456789abcdef") == idlen) {
		char debug[320];
		snprintf(debug, sizeof debug, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
		try_file(rs, m, ms, debug);
	}
	if (ms->state != FILE_USED)
		ms->state = ms->found_id ? FILE_OTHER : file[0] == '/' ? FILE_MISSING : FILE_NONE;
}

/* The state of mapping I of P, its file tried at the first call. */
static struct mapping_state *mapping_state(struct resymbolize *rs, const struct profile *p,
					   uint32_t i)
{
	if (i >= p->nmappings)
		return NULL;
	if (i >= rs->nmaps) {
		if (array_grow(&rs->maps, &rs->maps_cap, (size_t)i + 1, sizeof *rs->maps, 16) < 0)
			return NULL;
		memset(rs->maps + rs->nmaps, 0, ((size_t)i + 1 - rs->nmaps) * sizeof *rs->maps);
		rs->nmaps = (size_t)i + 1;
	}
	struct mapping_state *ms = &rs->maps[i];
	if (ms->state != FILE_UNTRIED)
		return ms;
	find_file(rs, &p->mappings[i], ms);
	return ms;
}

size_t resymbolize_lines(void *ctx, struct profile *p, uint32_t mapping, uint64_t address,
			 struct profile_line *lines, size_t max)
{
	struct resymbolize *rs = ctx;
	struct mapping_state *ms = mapping_state(rs, p, mapping);
	if (!ms)
		return 0;
	if (ms->state != FILE_USED) {
		ms->bare++;
		return 0;
	}
	if (max > sizeof rs->frames / sizeof rs->frames[0])
		max = sizeof rs->frames / sizeof rs->frames[0];
	/* a pprof location's address is the one to look up (a caller's is
	 * inside its call instruction already) */
	size_t n = symbolizer_lookup(rs->sym, addr_with_tag(address | ADDR_ACTIVATION, ms->tag),
				     rs->frames, max);
	if (n == 0 || !rs->frames[0].resolved) {
		ms->bare++;
		return 0;
	}
	struct profile_mapping *m = &p->mappings[mapping];
	for (size_t k = 0; k < n; k++) {
		const struct symbol_frame *f = &rs->frames[k];
		lines[k].function = profile_add_function(p, f->function, f->system_name,
							 f->file ? f->file : "", f->decl_line);
		if (lines[k].function == PROFILE_NONE)
			return 0;
		lines[k].line = f->line;
		m->has_filenames |= f->file != NULL;
		m->has_line_numbers |= f->line > 0;
	}
	m->has_functions = true;
	m->has_inline_frames |= n > 1;
	return n;
}

void resymbolize_report(const struct resymbolize *rs, const struct profile *p, const char *input)
{
	size_t said = 0, more = 0;
	for (size_t i = 0; i < rs->nmaps && i < p->nmappings; i++) {
		const struct mapping_state *ms = &rs->maps[i];
		if (!ms->bare || (ms->state != FILE_MISSING && ms->state != FILE_OTHER))
			continue;
		if (said == REPORT_LINES) {
			more++;
			continue;
		}
		said++;
		const struct profile_mapping *m = &p->mappings[i];
		if (ms->state == FILE_OTHER)
			warn("note: %s: %llu addresses in %s left unnamed: the file here is another "
			     "build (build-id %s, the profile's %s); put the profiled one there",
			     input, (unsigned long long)ms->bare, m->filename, ms->found_id,
			     m->build_id);
		else
			warn("note: %s: %llu addresses in %s left unnamed: no such readable file on "
			     "this machine; run -i where the profiled binaries are",
			     input, (unsigned long long)ms->bare, m->filename);
	}
	if (more)
		warn("note: %s: addresses in %zu more files left unnamed", input, more);
}
