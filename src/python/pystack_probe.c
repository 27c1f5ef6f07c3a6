/* pystack: finding the interpreter in a module and checking it at attach
 * (pystack_find, pystack_open; see pystack.h). */
#include "config.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "pydwarf.h"
#include "pystack.h"

/* The most of a .bss read for Py_GetVersion's text, and per read. */
#define BSS_SCAN_MAX (16u << 20)
#define BSS_CHUNK 65536u
#define VERSION_TEXT_MAX 32u       /* "3.10.13+ (" and more: the window kept
                                    * across chunks */

bool pystack_may_be_python(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	if (base && strncmp(base, "lib", 3) == 0)
		base += 3;
	return base && (strncmp(base, "python3", 7) == 0 || strncmp(base, "python2", 7) == 0);
}

/* ELF's .bss, BIAS added, into OUT (bounded by BSS_SCAN_MAX). */
static void find_bss(Elf *elf, uint64_t bias, struct pystack_symbols *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name = gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOBITS
				   ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && strcmp(name, ".bss") == 0 && sh.sh_size) {
			out->bss_start = bias + sh.sh_addr;
			out->bss_len = sh.sh_size < BSS_SCAN_MAX ? (size_t)sh.sh_size : BSS_SCAN_MAX;
			return;
		}
	}
}

bool pystack_find(Elf *elf, Elf_Scn *sym, Elf_Scn *dyn, uint64_t bias, const char *path,
		  struct pystack_symbols *out)
{
	bool named = pystack_may_be_python(path);
	/* (the whole symbol table only of a file named for Python, or of one
	 * whose dynamic symbols show the interpreter but not its list of
	 * interpreters: 2.7 and 3.6 keep it in a local symbol, interp_head) */
	if (!pystack_symbols(elf, named ? sym : NULL, dyn, bias, out) &&
	    (named || !sym || !out->code_type || !out->eval_start ||
	     !pystack_symbols(elf, sym, dyn, bias, out)))
		return false;
	if (named)
		pystack_name_version(path, &out->name_major, &out->name_minor);
	else if (!out->version)
		find_bss(elf, bias, out);
	return true;
}

/* Digits at *P (at most 2), their value into *V; false if none. */
static bool two_digits(const uint8_t *buf, size_t len, size_t *p, unsigned *v)
{
	size_t start = *p;
	*v = 0;
	while (*p < len && *p - start < 2 && buf[*p] >= '0' && buf[*p] <= '9')
		*v = *v * 10 + (unsigned)(buf[(*p)++] - '0');
	return *p > start && (*p == len || buf[*p] < '0' || buf[*p] > '9');
}

bool pystack_version_text(const uint8_t *buf, size_t len, unsigned *major, unsigned *minor)
{
	bool found = false;
	for (size_t i = 0; i + 6 < len; i++) {
		if ((i && buf[i - 1] != '\0') || (buf[i] != '2' && buf[i] != '3') || buf[i + 1] != '.')
			continue;
		size_t p = i + 2;
		unsigned mi, micro;
		if (!two_digits(buf, len, &p, &mi) || p >= len || buf[p++] != '.' ||
		    !two_digits(buf, len, &p, &micro))
			continue;
		/* a release's letters (a1, b2, rc1, "+"), then " (" */
		size_t q = p;
		while (q < len && q - p < 8 && ((buf[q] >= 'a' && buf[q] <= 'z') ||
						(buf[q] >= '0' && buf[q] <= '9') || buf[q] == '+'))
			q++;
		if (q + 1 >= len || buf[q] != ' ' || buf[q + 1] != '(')
			continue;
		unsigned ma = (unsigned)(buf[i] - '0');
		if ((ma == 2 && mi != 7) || (found && (ma != *major || mi != *minor)))
			return false;
		*major = ma;
		*minor = mi;
		found = true;
	}
	return found;
}

/* The version Py_GetVersion's text in process PID's .bss (SYMS) says:
 * read in chunks, each with the end of the last before it. */
static bool bss_version(pid_t pid, const struct pystack_symbols *syms, unsigned *major,
			unsigned *minor)
{
	static const size_t keep = VERSION_TEXT_MAX;
	uint8_t buf[VERSION_TEXT_MAX + BSS_CHUNK];
	bool found = false;
	unsigned ma = 0, mi = 0;
	size_t have = 0;
	for (size_t off = 0; off < syms->bss_len; off += BSS_CHUNK) {
		size_t n = syms->bss_len - off < BSS_CHUNK ? syms->bss_len - off : BSS_CHUNK;
		ssize_t got = procfs_read_memory(pid, syms->bss_start + off, buf + have, n);
		if (got <= 0)
			break;
		unsigned a, b;
		/* (a text cut by the chunk's end is whole in the next window) */
		if (pystack_version_text(buf, have + (size_t)got, &a, &b)) {
			if (found && (a != ma || b != mi))
				return false;
			ma = a;
			mi = b;
			found = true;
		}
		size_t total = have + (size_t)got;
		have = total < keep ? total : keep;
		memmove(buf, buf + total - have, have);
	}
	*major = ma;
	*minor = mi;
	return found;
}

/* DW's layout of MAJOR.MINOR into OUT (DW ended). */
static bool layout_of(Dwarf *dw, unsigned major, unsigned minor, struct py_layout *out)
{
	bool ok = dw && pydwarf_layout(dw, major, minor, out);
	if (dw)
		dwarf_end(dw);
	return ok;
}

/* The layout of interpreter version MAJOR.MINOR from the debug
 * information of ELF: its own, else its debug file by build-id as the
 * target sees it (/usr/lib/debug/.build-id/XX/REST.debug, OPEN_FILE's:
 * Debian's pythonX.Y-dbg installs it). */
static bool dwarf_layout(Elf *elf, int (*open_file)(void *ctx, const char *path), void *ctx,
			 unsigned major, unsigned minor, struct py_layout *out)
{
	if (layout_of(dwarf_begin_elf(elf, DWARF_C_READ, NULL), major, minor, out))
		return true;
	const unsigned char *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	if (n < 2 || n > 64 || !open_file)
		return false;
	char path[64 + 2 * 64] = "/usr/lib/debug/.build-id/";
	size_t k = strlen(path);
	for (ssize_t i = 0; i < n; i++) {
		k += (size_t)snprintf(path + k, sizeof path - k, "%02x", id[i]);
		if (i == 0)
			path[k++] = '/';
	}
	snprintf(path + k, sizeof path - k, ".debug");
	int fd = open_file(ctx, path);
	bool ok = fd >= 0 && layout_of(dwarf_begin(fd, DWARF_C_READ), major, minor, out);
	if (fd >= 0)
		close(fd);
	return ok;
}

struct pystack *pystack_open(pid_t pid, const struct pystack_symbols *syms, Elf *elf,
			     int (*open_file)(void *ctx, const char *path), void *ctx,
			     struct pynames *names, enum pystack_status *status, unsigned *major,
			     unsigned *minor)
{
	/* from 3.13 the layout the interpreter publishes; before, csampler's
	 * table of the version first, checked against the interpreter; its
	 * debug information where the table does not fit (another build of
	 * 3.11 or 3.12): reading it costs 0.1 s of CPU (Debian's python3.11:
	 * its debug file's sections decompressed), for a layout the table
	 * has given on every build tried (unwind_python_frames compares them) */
	struct py_layout layout;
	struct pystack_symbols found = *syms;
	if (!found.version && !found.name_major && found.bss_len && pid > 0)
		(void)bss_version(pid, syms, &found.name_major, &found.name_minor);
	syms = &found;
	struct pystack *ps = pystack_new(pid, syms, NULL, names, status, major, minor);
	if (!ps && *status == PYSTACK_MISMATCH && *major == 3 && *minor >= 11 && *minor < 13 &&
	    dwarf_layout(elf, open_file, ctx, *major, *minor, &layout))
		ps = pystack_new(pid, syms, &layout, names, status, major, minor);
	return ps;
}
