/* pydebug: see pydebug.h. */
#include "config.h"

#include <string.h>

#include "pydebug.h"

/* Where, in bytes from the start of _Py_DebugOffsets, each offset used is
 * (ptype /o struct _Py_DebugOffsets on pyenv's 3.13.0 and Debian sid's
 * python3.14 3.14.10 and python3.15 3.15.2 debug information). */
struct positions {
	unsigned minor;
	uint16_t runtime_interpreters_head;
	uint16_t interp_size, interp_next, interp_threads_head;
	uint16_t tstate_size, tstate_next, tstate_current_frame, tstate_native_thread_id,
		tstate_datastack_chunk;
	uint16_t frame_size, frame_previous, frame_executable, frame_instr_ptr, frame_owner;
	uint16_t code_size, code_filename, code_qualname, code_linetable, code_firstlineno,
		code_adaptive;
	uint16_t object_size, object_type;
	uint16_t type_size, type_name;
	uint16_t bytes_object_size, bytes_size, bytes_data;
	uint16_t unicode_size, unicode_state, unicode_length, unicode_ascii_size,
		unicode_compact_size;   /* 0: not published (the ASCII header's + 16) */
};

static const struct positions known[] = {
	{ .minor = 13, .runtime_interpreters_head = 40,
	  .interp_size = 48, .interp_next = 64, .interp_threads_head = 72,
	  .tstate_size = 152, .tstate_next = 168, .tstate_current_frame = 184,
	  .tstate_native_thread_id = 200, .tstate_datastack_chunk = 208,
	  .frame_size = 224, .frame_previous = 232, .frame_executable = 240,
	  .frame_instr_ptr = 248, .frame_owner = 264,
	  .code_size = 272, .code_filename = 280, .code_qualname = 296, .code_linetable = 304,
	  .code_firstlineno = 312, .code_adaptive = 344,
	  .object_size = 352, .object_type = 360, .type_size = 368, .type_name = 376,
	  .bytes_object_size = 512, .bytes_size = 520, .bytes_data = 528,
	  .unicode_size = 536, .unicode_state = 544, .unicode_length = 552,
	  .unicode_ascii_size = 560 },
	{ .minor = 14, .runtime_interpreters_head = 40,
	  .interp_size = 48, .interp_next = 64, .interp_threads_head = 72,
	  .tstate_size = 176, .tstate_next = 192, .tstate_current_frame = 208,
	  .tstate_native_thread_id = 224, .tstate_datastack_chunk = 232,
	  .frame_size = 248, .frame_previous = 256, .frame_executable = 264,
	  .frame_instr_ptr = 272, .frame_owner = 288,
	  .code_size = 312, .code_filename = 320, .code_qualname = 336, .code_linetable = 344,
	  .code_firstlineno = 352, .code_adaptive = 384,
	  .object_size = 400, .object_type = 408, .type_size = 416, .type_name = 424,
	  .bytes_object_size = 592, .bytes_size = 600, .bytes_data = 608,
	  .unicode_size = 616, .unicode_state = 624, .unicode_length = 632,
	  .unicode_ascii_size = 640 },
	{ .minor = 15, .runtime_interpreters_head = 40,
	  .interp_size = 48, .interp_next = 64, .interp_threads_head = 72,
	  .tstate_size = 176, .tstate_next = 192, .tstate_current_frame = 208,
	  .tstate_native_thread_id = 248, .tstate_datastack_chunk = 256,
	  .frame_size = 312, .frame_previous = 320, .frame_executable = 328,
	  .frame_instr_ptr = 336, .frame_owner = 352,
	  .code_size = 376, .code_filename = 384, .code_qualname = 400, .code_linetable = 408,
	  .code_firstlineno = 416, .code_adaptive = 448,
	  .object_size = 464, .object_type = 472, .type_size = 480, .type_name = 488,
	  .bytes_object_size = 688, .bytes_size = 696, .bytes_data = 704,
	  .unicode_size = 712, .unicode_state = 720, .unicode_length = 728,
	  .unicode_ascii_size = 736, .unicode_compact_size = 744 },
};
#define NKNOWN (sizeof known / sizeof *known)

#define COOKIE "xdebugpy"
#define AT_VERSION 8
#define AT_FREE_THREADED 16

static uint64_t u64_at(const uint8_t *bytes, uint16_t at)
{
	uint64_t v;
	memcpy(&v, bytes + at, sizeof v);
	return v;
}

/* The field at AT, an offset in a structure of SIZE bytes: *OUT, false
 * when it lies beyond it (WIDTH bytes from it). */
static bool offset_in(const uint8_t *bytes, uint16_t at, uint64_t size, unsigned width,
		      size_t *out)
{
	uint64_t v = u64_at(bytes, at);
	*out = (size_t)v;
	return v < size && size - v >= width;
}

/* The size at AT, within [LOW, HIGH]: *OUT. */
static bool size_in(const uint8_t *bytes, uint16_t at, uint64_t low, uint64_t high, uint64_t *out)
{
	*out = u64_at(bytes, at);
	return *out >= low && *out <= high;
}

static bool fill(const uint8_t *b, const struct positions *p, struct py_layout *l)
{
	uint64_t interp, tstate, frame, code, object, type, bytes_object, unicode, ascii;
	/* every structure's size within what any version has had, times 4 */
	if (!size_in(b, p->interp_size, 64, 1u << 20, &interp) ||
	    !size_in(b, p->tstate_size, 64, 1u << 14, &tstate) ||
	    !size_in(b, p->frame_size, 32, 1024, &frame) ||
	    !size_in(b, p->code_size, 64, 4096, &code) ||
	    !size_in(b, p->object_size, 16, 16, &object) ||
	    !size_in(b, p->type_size, 128, 4096, &type) ||
	    !size_in(b, p->bytes_object_size, 24, 64, &bytes_object) ||
	    !size_in(b, p->unicode_size, 32, 256, &unicode) ||
	    !size_in(b, p->unicode_ascii_size, 32, 128, &ascii))
		return false;
	uint64_t runtime_head = u64_at(b, p->runtime_interpreters_head);
	if (runtime_head == 0 || runtime_head > (1u << 20) || runtime_head % 8)
		return false;
	l->runtime_interpreters_head = (size_t)runtime_head;
	size_t compact = (size_t)ascii + 16;    /* utf8_length, utf8 */
	if (p->unicode_compact_size && !size_in(b, p->unicode_compact_size, ascii, 256,
						 &(uint64_t){ 0 }))
		return false;
	if (p->unicode_compact_size)
		compact = (size_t)u64_at(b, p->unicode_compact_size);
	if (!offset_in(b, p->interp_next, interp, 8, &l->interp_next) ||
	    !offset_in(b, p->interp_threads_head, interp, 8, &l->interp_threads_head) ||
	    l->interp_threads_head < 8 ||
	    !offset_in(b, p->tstate_next, tstate, 8, &l->tstate_next) ||
	    !offset_in(b, p->tstate_current_frame, tstate, 8, &l->tstate_cframe) ||
	    !offset_in(b, p->tstate_native_thread_id, tstate, 8, &l->tstate_native_thread_id) ||
	    !offset_in(b, p->tstate_datastack_chunk, tstate, 16, &l->tstate_datastack_chunk) ||
	    !offset_in(b, p->frame_previous, frame, 8, &l->frame_previous) ||
	    !offset_in(b, p->frame_executable, frame, 8, &l->frame_code) ||
	    !offset_in(b, p->frame_instr_ptr, frame, 8, &l->frame_prev_instr) ||
	    !offset_in(b, p->frame_owner, frame, 1, &l->frame_owner) ||
	    !offset_in(b, p->code_filename, code, 8, &l->code_filename) ||
	    !offset_in(b, p->code_qualname, code, 8, &l->code_qualname) ||
	    !offset_in(b, p->code_linetable, code, 8, &l->code_linetable) ||
	    !offset_in(b, p->code_firstlineno, code, 4, &l->code_firstlineno) ||
	    !offset_in(b, p->code_adaptive, code + 1, 1, &l->code_code_adaptive) ||
	    !offset_in(b, p->object_type, object, 8, &l->object_type) ||
	    !offset_in(b, p->type_name, type, 8, &l->type_name) ||
	    !offset_in(b, p->bytes_size, bytes_object, 8, &l->bytes_size) ||
	    !offset_in(b, p->bytes_data, bytes_object + 1, 1, &l->bytes_data) ||
	    !offset_in(b, p->unicode_state, ascii, 4, &l->ascii_state) ||
	    !offset_in(b, p->unicode_length, ascii, 8, &l->ascii_length))
		return false;
	/* (the object header every object starts with: its type after its
	 * reference count) */
	if (l->object_type != 8)
		return false;
	l->frames = PY_FRAMES_OWNER;
	l->frame_in_tstate = true;
	l->interp_threads_next_id = l->interp_threads_head - 8;
	l->tstate_datastack_top = l->tstate_datastack_chunk + 8;
	l->chunk_data = 24;
	l->ascii_data = (size_t)ascii;
	l->compact_data = compact;
	return true;
}

enum pydebug_result pydebug_layout(const uint8_t *bytes, size_t len, unsigned major,
				   unsigned minor, struct py_layout *out)
{
	memset(out, 0, sizeof *out);
	if (len < PYDEBUG_READ || memcmp(bytes, COOKIE, 8) != 0)
		return PYDEBUG_NONE;
	uint64_t version = u64_at(bytes, AT_VERSION);
	if (major != 3 || minor < 13 || ((version >> 24) & 0xff) != major ||
	    ((version >> 16) & 0xff) != minor)
		return PYDEBUG_NONE;
	if (u64_at(bytes, AT_FREE_THREADED) != 0)
		return PYDEBUG_FREE_THREADED;
	/* its own version's positions, else the newest known's */
	const struct positions *p = &known[NKNOWN - 1];
	for (size_t i = 0; i < NKNOWN; i++)
		if (known[i].minor == minor)
			p = &known[i];
	if (p->minor > minor || !fill(bytes, p, out)) {
		memset(out, 0, sizeof *out);
		return PYDEBUG_UNFIT;
	}
	out->major = major;
	out->minor = minor;
	return PYDEBUG_OK;
}
