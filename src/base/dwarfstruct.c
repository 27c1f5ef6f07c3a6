/* dwarfstruct: see dwarfstruct.h. */
#include "config.h"

#include <dwarf.h>
#include <string.h>

#include "dwarfstruct.h"

/* Units and top-level entries looked at, at most. */
#define UNITS_MAX 20000u
#define ENTRIES_MAX 4000000u
#define MEMBERS_MAX 4096u
#define TYPE_HOPS 8u

bool dwarfstruct_size(Dwarf_Die *s, uint64_t *size)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	if (!dwarf_attr(s, DW_AT_byte_size, &a) || dwarf_formudata(&a, &w) != 0)
		return false;
	*size = w;
	return true;
}

/* D with its typedefs and qualifiers gone through, into *OUT: a structure
 * type (with its members: not a declaration). */
static bool resolve_struct(Dwarf_Die *d, Dwarf_Die *out)
{
	Dwarf_Die cur = *d;
	for (unsigned hops = 0; hops < TYPE_HOPS; hops++) {
		int tag = dwarf_tag(&cur);
		if (tag == DW_TAG_structure_type) {
			if (dwarf_hasattr(&cur, DW_AT_declaration))
				return false;
			*out = cur;
			return true;
		}
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
			return false;
		Dwarf_Attribute a;
		if (!dwarf_attr(&cur, DW_AT_type, &a) || !dwarf_formref_die(&a, &cur))
			return false;
	}
	return false;
}

size_t dwarfstruct_find(Dwarf *dw, const char *const *names, size_t n, Dwarf_Die *found, bool *have)
{
	size_t nhave = 0;
	unsigned entries = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	memset(have, 0, n * sizeof *have);
	if (!dw)
		return 0;
	for (unsigned units = 0; nhave < n && units < UNITS_MAX &&
	     dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0; units++, off = next) {
		Dwarf_Die cu, die;
		if (!dwarf_offdie(dw, off + hsize, &cu) || dwarf_child(&cu, &die) != 0)
			continue;
		do {
			int tag = dwarf_tag(&die);
			if (tag != DW_TAG_structure_type && tag != DW_TAG_typedef)
				continue;
			const char *name = dwarf_diename(&die);
			for (size_t t = 0; name && t < n; t++)
				if (!have[t] && strcmp(name, names[t]) == 0 && resolve_struct(&die, &found[t])) {
					have[t] = true;
					nhave++;
				}
		} while (nhave < n && ++entries < ENTRIES_MAX && dwarf_siblingof(&die, &die) == 0);
	}
	return nhave;
}

/* Member NAME of S: its entry into *M and offset into *OFF, within S. */
static bool find_member(Dwarf_Die *s, const char *name, uint64_t size, uint32_t *off, Dwarf_Die *m)
{
	uint64_t struct_size;
	Dwarf_Die child;
	if (!dwarfstruct_size(s, &struct_size) || dwarf_child(s, &child) != 0)
		return false;
	unsigned steps = 0;
	do {
		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		const char *n = dwarf_diename(&child);
		Dwarf_Attribute a;
		Dwarf_Word w;
		if (!n || strcmp(n, name) != 0 || !dwarf_attr(&child, DW_AT_data_member_location, &a) ||
		    dwarf_formudata(&a, &w) != 0)
			continue;
		if (w > struct_size || size > struct_size - w || w > UINT32_MAX)
			return false;
		*off = (uint32_t)w;
		*m = child;
		return true;
	} while (++steps < MEMBERS_MAX && dwarf_siblingof(&child, &child) == 0);
	return false;
}

bool dwarfstruct_member(Dwarf_Die *s, const char *name, uint64_t size, uint32_t *off)
{
	Dwarf_Die m;
	return find_member(s, name, size, off, &m);
}

bool dwarfstruct_member_struct(Dwarf_Die *s, const char *name, uint32_t *off, Dwarf_Die *type)
{
	Dwarf_Die m, t;
	Dwarf_Attribute a;
	uint64_t size;
	return find_member(s, name, 0, off, &m) && dwarf_attr(&m, DW_AT_type, &a) &&
	       dwarf_formref_die(&a, &t) && resolve_struct(&t, type) &&
	       dwarfstruct_size(type, &size) && find_member(s, name, size, off, &m);
}
