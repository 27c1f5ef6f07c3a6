/* unwind_runtimes: the unwinder's side of runtime.h's table: each
 * runtime's state in a process (opened by unwind_tables.c's module load,
 * forgotten at an exec), what it reads at a stop into the snapshot's
 * object of its kind, and its splice into the walk (see
 * unwind_internal.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "unwind_internal.h"

bool uw_snapshot_runtimes_new(struct unwind_snapshot *s, size_t window)
{
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		const struct runtime_ops *ops = runtime_ops_of(k);
		if (ops && ops->frames_new && (s->runtime[k] = ops->frames_new(window)) == NULL)
			return false;
	}
	return true;
}

void uw_snapshot_runtimes_free(struct unwind_snapshot *s)
{
	for (unsigned k = 0; k < RUNTIME_KINDS; k++)
		if (s->runtime[k])
			runtime_ops_of(k)->frames_free(s->runtime[k]);
}

/* Forget the runtimes found (an exec: another program). */
void uw_forget_runtimes(struct unwinder *u)
{
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		if (u->runtimes[k].state)
			u->runtimes[k].ops->close(u->runtimes[k].state);
		u->runtimes[k].state = NULL;
		u->runtimes[k].found = (struct runtime_found){ 0 };
	}
}

/* Whether PATH may hold a runtime U reads and has not found yet. */
bool uw_runtime_library(const struct unwinder *u, const char *path)
{
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		const struct runtime_ops *ops = u->runtimes[k].ops;
		if (ops && !u->runtimes[k].found.found && ops->may_hold && ops->may_hold(path))
			return true;
	}
	return false;
}

void unwind_forget_thread(struct unwinder *u, pid_t tid)
{
	for (unsigned k = 0; k < RUNTIME_KINDS; k++)
		if (u->runtimes[k].state)
			u->runtimes[k].ops->forget_thread(u->runtimes[k].state, tid);
}

bool unwind_runtime(const struct unwinder *u, unsigned kind, struct runtime_found *out)
{
	if (kind >= RUNTIME_KINDS || !u->runtimes[kind].found.found)
		return false;
	*out = u->runtimes[kind].found;
	return true;
}

unsigned unwind_snapshot_runtime_frames(const struct unwind_snapshot *s, unsigned kind)
{
	const struct runtime_ops *ops = runtime_ops_of(kind);
	return ops && s->runtime[kind] ? ops->frames_count(s->runtime[kind]) : 0;
}

void unwind_snapshot_clear_runtimes(struct unwind_snapshot *s)
{
	for (unsigned k = 0; k < RUNTIME_KINDS; k++)
		if (s->runtime[k])
			runtime_ops_of(k)->frames_clear(s->runtime[k]);
}

/* What each runtime found reads of thread TID (S copied), while it
 * cannot run. */
void uw_capture_runtimes(struct unwinder *u, pid_t tid, struct unwind_snapshot *s)
{
	struct runtime_stop stop = { .tid = tid, .regs = &s->regs, .sp_pc_only = s->sp_pc_only,
				     .stack = s->stack, .stack_start = s->stack_start,
				     .stack_len = s->stack_len };
	(void)procmaps_vdso_image(u->pm, &stop.vdso_len, &stop.vdso_start);
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		if (!s->runtime[k])
			continue;
		if (u->runtimes[k].state)
			(void)u->runtimes[k].ops->capture(u->runtimes[k].state, &stop, s->runtime[k]);
		else
			runtime_ops_of(k)->frames_clear(s->runtime[k]);
	}
}

/* The walk in ADDRS[*DEPTH] (ended with RESULT) with what each runtime
 * read into S put in place (CPython: its frames for the evaluation
 * loop's; at most MAX in all). */
enum unwind_result uw_splice_runtimes(struct unwinder *u, const struct unwind_snapshot *s,
				      uint64_t *addrs, unsigned max, unsigned *depth,
				      enum unwind_result result)
{
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		const struct runtime_ops *ops = u->runtimes[k].ops;
		if (!ops || !ops->splice || !u->runtimes[k].state ||
		    !unwind_snapshot_runtime_frames(s, k))
			continue;
		unsigned n = *depth < u->max_depth ? *depth : u->max_depth;
		bool full;
		memcpy(u->walk_native, addrs, n * sizeof *addrs);
		struct runtime_walk w = { .addrs = u->walk_native, .sp = u->walk_sp, .n = n,
					  .cut = result != UNWIND_OK };
		*depth = ops->splice(u->runtimes[k].state, s->runtime[k], &w, addrs, max, &full);
		if (full)
			result = UNWIND_DEPTH;
	}
	return result;
}
