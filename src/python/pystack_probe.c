/* pystack: finding the interpreter in a module and checking it at attach
 * (pystack_find, pystack_open; see pystack.h). */
#include "config.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pydwarf.h"
#include "pystack.h"

bool pystack_may_be_python(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	if (base && strncmp(base, "lib", 3) == 0)
		base += 3;
	return base && (strncmp(base, "python3", 7) == 0 || strncmp(base, "python2", 7) == 0);
}

bool pystack_find(Elf *elf, Elf_Scn *sym, Elf_Scn *dyn, uint64_t bias, const char *path,
		  struct pystack_symbols *out)
{
	bool named = pystack_may_be_python(path);
	/* (the whole symbol table only of a file named for Python) */
	if (!pystack_symbols(elf, named ? sym : NULL, dyn, bias, out))
		return false;
	if (named)
		pystack_name_version(path, &out->name_major, &out->name_minor);
	return true;
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
	struct pystack *ps = pystack_new(pid, syms, NULL, names, status, major, minor);
	if (!ps && *status == PYSTACK_MISMATCH && *major == 3 && *minor >= 11 && *minor < 13 &&
	    dwarf_layout(elf, open_file, ctx, *major, *minor, &layout))
		ps = pystack_new(pid, syms, &layout, names, status, major, minor);
	return ps;
}
