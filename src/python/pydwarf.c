/* pydwarf: see pydwarf.h. */
#include "config.h"

#include <string.h>

#include "dwarfstruct.h"
#include "pydwarf.h"

enum { T_RUNTIME, T_INTERP, T_TSTATE, T_CFRAME, T_FRAME, T_CODE, T_OBJECT, T_TYPE, T_BYTES,
       T_ASCII, T_COMPACT, T_CHUNK, T_COUNT };
static const char *const type_names[T_COUNT] = {
	"_PyRuntimeState", "PyInterpreterState", "PyThreadState", "_PyCFrame",
	"_PyInterpreterFrame", "PyCodeObject", "PyObject", "PyTypeObject", "PyBytesObject",
	"PyASCIIObject", "PyCompactUnicodeObject", "_PyStackChunk",
};

/* *OUT = the offset of OUTER's member OUTER_NAME plus that of its member
 * INNER. */
static bool nested(Dwarf_Die *outer, const char *outer_name, const char *inner, size_t *out)
{
	Dwarf_Die type;
	uint32_t a, b;
	if (!dwarfstruct_member_struct(outer, outer_name, &a, &type) ||
	    !dwarfstruct_member(&type, inner, 0, &b))
		return false;
	*out = (size_t)a + b;
	return true;
}

/* Member NAME of S into *OUT. */
static bool field(Dwarf_Die *s, const char *name, size_t *out)
{
	uint32_t off;
	if (!dwarfstruct_member(s, name, 0, &off))
		return false;
	*out = off;
	return true;
}

bool pydwarf_layout(Dwarf *dw, unsigned major, unsigned minor, struct py_layout *out)
{
	Dwarf_Die t[T_COUNT];
	bool have[T_COUNT];
	uint64_t ascii_size, compact_size;
	memset(out, 0, sizeof *out);
	if (major != 3 || (minor != 11 && minor != 12) ||
	    dwarfstruct_find(dw, type_names, T_COUNT, t, have) < T_COUNT)
		return false;
	out->major = major;
	out->minor = minor;
	/* 3.12 marks the loop's entries by frames of its own (their owner) */
	out->frames = minor == 11 ? PY_FRAMES_IS_ENTRY : PY_FRAMES_OWNER;
	size_t *flag = minor == 11 ? &out->frame_is_entry : &out->frame_owner;
	if (!nested(&t[T_RUNTIME], "interpreters", "head", &out->runtime_interpreters_head) ||
	    !field(&t[T_INTERP], "next", &out->interp_next) ||
	    !nested(&t[T_INTERP], "threads", "head", &out->interp_threads_head) ||
	    !nested(&t[T_INTERP], "threads", "next_unique_id", &out->interp_threads_next_id) ||
	    !field(&t[T_TSTATE], "next", &out->tstate_next) ||
	    !field(&t[T_TSTATE], "native_thread_id", &out->tstate_native_thread_id) ||
	    !field(&t[T_TSTATE], "cframe", &out->tstate_cframe) ||
	    !field(&t[T_TSTATE], "datastack_chunk", &out->tstate_datastack_chunk) ||
	    !field(&t[T_TSTATE], "datastack_top", &out->tstate_datastack_top) ||
	    !field(&t[T_CHUNK], "data", &out->chunk_data) ||
	    !field(&t[T_CFRAME], "current_frame", &out->cframe_current_frame) ||
	    !field(&t[T_FRAME], "f_code", &out->frame_code) ||
	    !field(&t[T_FRAME], "previous", &out->frame_previous) ||
	    !field(&t[T_FRAME], "prev_instr", &out->frame_prev_instr) ||
	    !field(&t[T_FRAME], minor == 11 ? "is_entry" : "owner", flag) ||
	    !field(&t[T_CODE], "co_qualname", &out->code_qualname) ||
	    !field(&t[T_CODE], "co_filename", &out->code_filename) ||
	    !field(&t[T_CODE], "co_firstlineno", &out->code_firstlineno) ||
	    !field(&t[T_CODE], "co_linetable", &out->code_linetable) ||
	    !field(&t[T_CODE], "co_code_adaptive", &out->code_code_adaptive) ||
	    !field(&t[T_OBJECT], "ob_type", &out->object_type) ||
	    !field(&t[T_TYPE], "tp_name", &out->type_name) ||
	    !nested(&t[T_BYTES], "ob_base", "ob_size", &out->bytes_size) ||
	    !field(&t[T_BYTES], "ob_sval", &out->bytes_data) ||
	    !field(&t[T_ASCII], "length", &out->ascii_length) ||
	    !field(&t[T_ASCII], "state", &out->ascii_state) ||
	    !dwarfstruct_size(&t[T_ASCII], &ascii_size) ||
	    !dwarfstruct_size(&t[T_COMPACT], &compact_size) || ascii_size > 4096 ||
	    compact_size > 4096)
		return false;
	/* a string's characters follow its header, compact or not */
	out->ascii_data = (size_t)ascii_size;
	out->compact_data = (size_t)compact_size;
	return true;
}
