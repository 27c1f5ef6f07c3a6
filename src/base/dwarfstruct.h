/* dwarfstruct: structure layouts read from DWARF, for the runtimes whose
 * memory a stop reads (goruntime: Go's g and m; pyframes' layouts from a
 * CPython interpreter's debug information).
 *
 * dwarfstruct_find looks among every unit's top-level entries for the
 * structures named (a structure type of that name, or a typedef of that
 * name naming one: CPython's objects are anonymous structures behind a
 * typedef), bounded in units and entries looked at. A member's offset is
 * a constant data member location within its structure's size; every
 * offset is checked, none trusted. Pure on libdw. */
#ifndef CSAMPLER_DWARFSTRUCT_H
#define CSAMPLER_DWARFSTRUCT_H
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The structures NAMES[N] among DW's top-level entries, each into FOUND[i]
 * (HAVE[i] says it was found; the first one found of a name wins): how
 * many were found. */
size_t dwarfstruct_find(Dwarf *dw, const char *const *names, size_t n, Dwarf_Die *found,
			bool *have);
/* The byte size of structure S. */
bool dwarfstruct_size(Dwarf_Die *s, uint64_t *size);
/* The offset of member NAME of structure S, of a field of SIZE bytes that
 * lies within S (SIZE 0: only the offset within S is checked). */
bool dwarfstruct_member(Dwarf_Die *s, const char *name, uint64_t size, uint32_t *off);
/* The offset of member NAME of S and its type, a structure (typedefs and
 * qualifiers gone through), into *TYPE: a nested structure. */
bool dwarfstruct_member_struct(Dwarf_Die *s, const char *name, uint32_t *off, Dwarf_Die *type);

#endif
