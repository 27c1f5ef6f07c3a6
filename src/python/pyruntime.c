/* pyruntime: see pyruntime.h. */
#include "config.h"

#include <stdlib.h>
#include <stdio.h>

#include "pyruntime.h"
#include "pystack.h"

/* An interpreter whose frames are read. */
struct pyruntime {
	struct pystack *ps;
	uint64_t eval_start, eval_end;  /* its evaluation loop (the splice) */
};

/* The interpreter in M: in a file named for Python, or the program itself,
 * which may embed it (its dynamic symbols then name it: extension modules
 * need them). */
static void *py_open(const struct runtime_module *m, struct runtime_found *f)
{
	struct pystack_symbols syms;
	if ((!m->program && !pystack_may_be_python(m->path)) ||
	    !pystack_find(m->elf, m->sym, m->dyn, m->bias, m->path, &syms))
		return NULL;
	f->found = true;
	enum pystack_status status = PYSTACK_ON;
	struct pynames *names = m->names(m->ctx, RUNTIME_PYTHON);
	struct pyruntime *rt = names ? calloc(1, sizeof *rt) : NULL;
	if (rt)
		rt->ps = pystack_open(m->pid, &syms, m->elf, m->open_file, m->ctx, names, &status,
				      &f->major, &f->minor);
	f->status = status;
	if (!rt || !rt->ps) {
		free(rt);
		return NULL;
	}
	f->source = pystack_layout_source(rt->ps);
	pystack_eval_range(rt->ps, &rt->eval_start, &rt->eval_end);
	return rt;
}

static void py_close(void *p)
{
	struct pyruntime *rt = p;
	if (rt)
		pystack_free(rt->ps);
	free(rt);
}

static void py_forget_thread(void *p, pid_t tid)
{
	struct pyruntime *rt = p;
	pystack_forget_thread(rt->ps, tid);
}

static void *py_frames_new(size_t window)
{
	(void)window;
	return pystack_frames_new();
}

static void py_frames_free(void *f) { pystack_frames_free(f); }
static void py_frames_clear(void *f) { pystack_frames_clear(f); }
static unsigned py_frames_count(const void *f) { return pystack_frames_count(f); }

static unsigned py_capture(void *p, const struct runtime_stop *t, void *frames)
{
	struct pyruntime *rt = p;
	return pystack_capture(rt->ps, t->tid, t->stack, t->stack_start, t->stack_len, frames);
}

static unsigned py_splice(void *p, const void *frames, const struct runtime_walk *w, uint64_t *out,
			  unsigned max, bool *full)
{
	struct pyruntime *rt = p;
	struct pystack_run run = pystack_frames_run(frames);
	return pystack_splice(w->addrs, w->sp, w->n, &run, rt->eval_start, rt->eval_end, w->cut,
			      out, max, full);
}

static void *py_names_new(void) { return pynames_new(); }
static void py_names_free(void *names) { pynames_free(names); }

static bool py_name(const void *names, uint32_t id, struct runtime_frame *out)
{
	const struct pyname *p = pynames_get(names, id);
	if (!p)
		return false;
	*out = (struct runtime_frame){ .function = p->qualname,
				       .file = p->filename[0] ? p->filename : NULL,
				       .first_line = p->first_line, .line = p->line };
	return true;
}

/* As traceback.format_stack prints it; a cut chain's mark alone. */
static void py_traceback(FILE *out, const struct runtime_frame *f, size_t n, runtime_put_fn *put,
			 void *ctx)
{
	if (n)
		fputs("Python stack (most recent call last):\n", out);
	for (size_t i = 0; i < n; i++) {
		fputs("  ", out);
		if (f[i].file) {
			fputs("File \"", out);
			put(ctx, out, f[i].file);
			fprintf(out, "\", line %d, in ", f[i].line);
		}
		put(ctx, out, f[i].function);
		fputc('\n', out);
	}
}

static enum runtime_say py_describe(const struct runtime_found *f, bool kernel_copy,
				    unsigned *reason, char *text, size_t len)
{
	unsigned major = f->major, minor = f->minor;
	*reason = f->status;
	if (kernel_copy) {
		*reason = 8;
		snprintf(text, len, "runs CPython: --backend=perf cannot read its Python frames (the "
			 "kernel's sample does not stop the thread), so its stacks show the "
			 "interpreter's C functions; use --backend=ptrace to see Python functions");
		return RUNTIME_SAY_ONCE;
	}
	switch ((enum pystack_status)f->status) {
	case PYSTACK_ON:
		snprintf(text, len, "runs CPython %u.%u: its Python frames are read, laid out as %s",
			 major, minor,
			 f->source == PYSTACK_LAYOUT_DWARF ? "its debug information says"
			 : f->source == PYSTACK_LAYOUT_INTERPRETER
			 ? "the interpreter publishes (_Py_DebugOffsets)"
			 : "csampler's table of that version says");
		return RUNTIME_SAY_VERBOSE;
	case PYSTACK_OLD:
		snprintf(text, len, "runs a CPython older than 3.11 whose version neither its file's "
			 "name (python2.7, libpython3.8.so...) nor its memory says (a program that "
			 "embeds it says it once the interpreter started: attach then): its Python "
			 "frames are not read, its stacks show the interpreter's C functions");
		break;
	case PYSTACK_FREE_THREADED:
		snprintf(text, len, "runs a free-threaded CPython %u.%u (built without the GIL), whose "
			 "frames csampler does not read: its stacks show the interpreter's C "
			 "functions", major, minor);
		break;
	case PYSTACK_UNKNOWN_VERSION:
		snprintf(text, len, "runs CPython %u.%u, whose frame layout csampler does not know: "
			 "its stacks show the interpreter's C functions", major, minor);
		break;
	case PYSTACK_MISMATCH:
	default:
		snprintf(text, len, "runs CPython %u.%u, but its memory does not match the layout "
			 "csampler knows (another build?): its Python frames are not read", major,
			 minor);
		break;
	}
	return RUNTIME_SAY_ONCE;
}

const struct runtime_ops pyruntime_ops = {
	.name = "python",
	.may_hold = pystack_may_be_python,
	.open = py_open,
	.close = py_close,
	.forget_thread = py_forget_thread,
	.frames_new = py_frames_new,
	.frames_free = py_frames_free,
	.frames_clear = py_frames_clear,
	.frames_count = py_frames_count,
	.capture = py_capture,
	.splice = py_splice,
	.names_new = py_names_new,
	.names_free = py_names_free,
	.frame_name = py_name,
	.traceback = py_traceback,
	.describe = py_describe,
};
