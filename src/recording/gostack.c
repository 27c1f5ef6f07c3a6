/* gostack: see gostack.h. */
#include "config.h"

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ucontext.h>
#include <sys/uio.h>
#include <time.h>

#include "gopclntab.h"
#include "goruntime.h"
#include "gostack.h"
#include "procfs.h"
#include "tidmap.h"

/* The largest goroutine stack believed (Go's limit is 1 GB). */
#define GO_STACK_MAX (1ull << 30)
#define GO_THREADS 65536u          /* Go threads' system stacks remembered */
#define GO_FUNCS_MAX 1000000u      /* functions looked at for the two below */
#define GO_CODE_MAX 4096u          /* bytes of a function's code compared */
#define GO_BUILDINFO_MAX 65536u
#define GO_ALLM_MAX 16384u          /* ms followed in runtime.allm's list */
#define GO_ALLM_NEW_NS 10000000     /* the list walked at most this often for a
                                     * thread it has not been walked for */
#define GO_ALLM_EVERY_NS 250000000  /* and for one a walk did not find */
#define GO_ALLM_ABSENT 64u          /* threads a walk did not find, remembered */

/* A Go thread's system stack (its g0's, fixed for its m). */
struct go_thread {
	pid_t tid;               /* 0: not read yet */
	uint64_t g0_lo, g0_hi;
	uint64_t fs_base;        /* its TLS base at that stop (a thread's does
	                          * not move): for its copies where it sleeps */
	uint64_t m, g0;          /* its m and g0, where the row came from
	                          * runtime.allm's list, not a stop (no TLS
	                          * base: a thread asleep on its system stack
	                          * runs g0); 0 */
};

/* A Go runtime whose layout is known. */
struct gostack {
	struct goruntime_layout layout;
	/* each Go thread's system stack, by tid (struct go_thread rows, at
	 * most GO_THREADS): a stop elsewhere (and not in the vDSO) reads
	 * nothing of the runtime */
	struct tidrows threads;
	/* runtime.allm (0: not known): a thread copied where it sleeps that
	 * no stop has read finds its m and g0 there, in a walk of
	 * the list (walked_ns: the last), at most every GO_ALLM_NEW_NS for a
	 * thread not looked for yet (an M started since: its thread is
	 * there), every GO_ALLM_EVERY_NS for one the list did not hold (the
	 * last GO_ALLM_ABSENT of them: a thread not Go's, a cgo program's) */
	uint64_t allm;
	/* the entries of Go's signal handlers (runtime.sigtramp, and
	 * runtime.cgoSigtramp in a cgo program; 0: none), loaded addresses */
	uint64_t sigtramp[2];
	int64_t walked_ns;
	pid_t absent[GO_ALLM_ABSENT];
	unsigned absent_next;
};

bool gostack_name_is(const char *name, size_t len, const char *want)
{
	size_t n = strlen(want);
	return len >= n && memcmp(name, want, n) == 0 &&
	       (len == n || (len == n + 5 && memcmp(name + n, ".abi0", 5) == 0));
}

/* The bytes of ELF's file at [START, END) of its loaded addresses (within
 * SCN, a section), or NULL; at most GO_CODE_MAX of them. */
static const uint8_t *elf_bytes_at(Elf *elf, Elf_Scn *scn, uint64_t start, uint64_t end,
				   size_t *len)
{
	GElf_Shdr sh;
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || start < sh.sh_addr ||
	    end <= start || end - start > GO_CODE_MAX || end - sh.sh_addr > sh.sh_size)
		return NULL;
	Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)(sh.sh_offset + (start - sh.sh_addr)),
					   (size_t)(end - start), ELF_T_BYTE);
	*len = d && d->d_buf ? d->d_size : 0;
	return *len ? d->d_buf : NULL;
}

/* In M's function table: the code of runtime.systemstack (CODE[0],
 * CODE[1]: its entry and end in the file) and of gosave_systemstack_switch
 * (CODE[2], CODE[3]), and the loaded entries (at M's bias) of Go's signal
 * handlers, runtime.sigtramp and runtime.cgoSigtramp (SIG[0], SIG[1]); 0
 * where not found. */
static void find_runtime_code(const struct runtime_module *m, uint64_t code[4], uint64_t sig[2])
{
	struct gopclntab go;
	Elf_Data *d = elf_getdata(m->go, NULL);
	if (!d || !d->d_buf || !gopclntab_parse(&go, d->d_buf, d->d_size, m->text_addr))
		return;
	for (uint64_t i = 0; i < go.nfunc && i < GO_FUNCS_MAX; i++) {
		struct gopclntab_entry e;
		if (!gopclntab_function(&go, i, &e))
			continue;
		/* (a file-local assembly function: no package in its name,
		 * as long as Go has had it; with one, should that change) */
		if (gostack_name_is(e.name, e.name_len, "gosave_systemstack_switch") ||
		    gostack_name_is(e.name, e.name_len, "runtime.gosave_systemstack_switch")) {
			code[2] = e.entry;
			code[3] = e.end;
		} else if (gostack_name_is(e.name, e.name_len, "runtime.systemstack")) {
			code[0] = e.entry;
			code[1] = e.end;
		} else if (gostack_name_is(e.name, e.name_len, "runtime.sigtramp")) {
			sig[0] = m->bias + e.entry;
		} else if (gostack_name_is(e.name, e.name_len, "runtime.cgoSigtramp")) {
			sig[1] = m->bias + e.entry;
		}
	}
}

/* The loaded address of the symbol NAME in ELF's symbol table SCN (at
 * BIAS), or 0. */
static uint64_t symbol_address(Elf *elf, Elf_Scn *scn, uint64_t bias, const char *name)
{
	GElf_Shdr sh;
	Elf_Data *data = scn && gelf_getshdr(scn, &sh) ? elf_getdata(scn, NULL) : NULL;
	if (!data || sh.sh_entsize == 0)
		return 0;
	size_t n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 0; i < n && i < (1u << 22); i++) {
		GElf_Sym sym;
		const char *s;
		if (gelf_getsym(data, (int)i, &sym) && sym.st_value != 0 && sym.st_shndx != SHN_UNDEF &&
		    (s = elf_strptr(elf, sh.sh_link, sym.st_name)) != NULL && strcmp(s, name) == 0)
			return bias + sym.st_value;
	}
	return 0;
}

/* Walk runtime.allm's list (read through TID, a thread of the process)
 * and give each m's thread that has no row one: its m, g0 and g0's stack
 * (go_capture checks g0's m). True if an m's thread has not written its
 * id yet (an M just made: newm links it before its thread starts). */
static bool walk_allm(struct gostack *gs, pid_t tid)
{
	const struct goruntime_layout *l = &gs->layout;
	uint64_t m = 0;
	bool starting = false;
	if (!procfs_read_memory_all(tid, gs->allm, &m, sizeof m))
		return false;
	for (unsigned i = 0; m != 0 && i < GO_ALLM_MAX; i++) {
		uint64_t procid = 0, next = 0, g0 = 0, st[2] = { 0, 0 };
		struct iovec local[3] = { { &procid, 8 }, { &next, 8 }, { &g0, 8 } };
		struct iovec remote[3] = { { (void *)(uintptr_t)(m + l->m_procid), 8 },
					   { (void *)(uintptr_t)(m + l->m_alllink), 8 },
					   { (void *)(uintptr_t)(m + l->m_g0), 8 } };
		if (m + l->m_alllink + 8 < m || m + l->m_procid + 8 < m ||
		    process_vm_readv(tid, local, 3, remote, 3, 0) != 24)
			return starting;
		starting = starting || procid == 0;
		struct iovec slocal[2] = { { &st[0], 8 }, { &st[1], 8 } };
		struct iovec sremote[2] = { { (void *)(uintptr_t)(g0 + l->g_stack_lo), 8 },
					    { (void *)(uintptr_t)(g0 + l->g_stack_hi), 8 } };
		bool made;
		struct go_thread *row;
		if (procid > 0 && procid <= 0x3fffffff && g0 != 0 && g0 + GORUNTIME_G_READ > g0 &&
		    process_vm_readv(tid, slocal, 2, sremote, 2, 0) == 16 && st[0] < st[1] &&
		    (row = tidrows_get(&gs->threads, (pid_t)procid, true, &made)) != NULL &&
		    row->tid != (pid_t)procid)
			*row = (struct go_thread){ .tid = (pid_t)procid, .g0_lo = st[0], .g0_hi = st[1],
						   .m = m, .g0 = g0 };
		if (next == m)
			break;      /* (GO_ALLM_MAX bounds a longer loop) */
		m = next;
	}
	return starting;
}

/* The row of TID, copied where it sleeps and not read at a stop yet, from
 * a walk of runtime.allm (as often as struct gostack says), or NULL. */
static struct go_thread *row_from_allm(struct gostack *gs, pid_t tid)
{
	struct timespec now;
	if (!gs->allm || clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return NULL;
	int64_t ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	bool absent = false;
	for (unsigned i = 0; i < GO_ALLM_ABSENT && !absent; i++)
		absent = gs->absent[i] == tid;
	if (gs->walked_ns && ns - gs->walked_ns < (absent ? GO_ALLM_EVERY_NS : GO_ALLM_NEW_NS))
		return NULL;
	gs->walked_ns = ns;
	/* (a thread not found while an M starts may be that M's: not absent;
	 * at a launched Go program's start, one was, and waited 250 ms: 22
	 * --idle samples of an idle M ended at mcall in a CI run) */
	bool starting = walk_allm(gs, tid);
	bool made;
	struct go_thread *row = tidrows_get(&gs->threads, tid, false, &made);
	if (row && row->tid == tid)
		return row;
	if (!absent && !starting) {
		gs->absent[gs->absent_next] = tid;
		gs->absent_next = (gs->absent_next + 1) % GO_ALLM_ABSENT;
	}
	return NULL;
}

/* The Go runtime's layout, from the module's DWARF, else from csampler's
 * table of its release (its .go.buildinfo) where the code of
 * runtime.systemstack and gosave_systemstack_switch agrees; where it came
 * from, or why it is not known, into F. */
static void *go_open(const struct runtime_module *m, struct runtime_found *f)
{
	struct gopclntab go;
	Elf_Data *d = m->go ? elf_getdata(m->go, NULL) : NULL;
	if (!d || !d->d_buf || !gopclntab_parse(&go, d->d_buf, d->d_size, m->text_addr))
		return NULL;
	f->found = true;
	struct goruntime_layout dwarf, table;
	Dwarf *dw = dwarf_begin_elf(m->elf, DWARF_C_READ, NULL);
	bool known = goruntime_layout_read(dw, &dwarf);
	if (dw)
		dwarf_end(dw);
	GElf_Shdr sh;
	Elf_Data *info = m->go_info && gelf_getshdr(m->go_info, &sh) && sh.sh_type == SHT_PROGBITS
			 ? elf_getdata_rawchunk(m->elf, (int64_t)sh.sh_offset,
						sh.sh_size < GO_BUILDINFO_MAX ? (size_t)sh.sh_size
									      : GO_BUILDINFO_MAX, ELF_T_BYTE)
			 : NULL;
	bool version = info && info->d_buf &&
		       goruntime_version(info->d_buf, info->d_size, &f->major, &f->minor);
	bool in_table = version && goruntime_layout_of_version(f->major, f->minor, &table);
	if (known && in_table)
		f->source = goruntime_layout_same(&dwarf, &table) ? GORUNTIME_DWARF_AS_TABLE
								  : GORUNTIME_DWARF_NOT_TABLE;
	else if (known)
		f->source = GORUNTIME_DWARF;
	else if (!version)
		f->source = GORUNTIME_NO_VERSION;
	else if (!in_table)
		f->source = GORUNTIME_UNKNOWN_VERSION;
	uint64_t code[4] = { 0 }, sig[2] = { 0 };
	find_runtime_code(m, code, sig);
	if (!known && version && in_table) {
		size_t ss_len = 0, save_len = 0;
		const uint8_t *ss = elf_bytes_at(m->elf, m->text, code[0], code[1], &ss_len);
		const uint8_t *save = elf_bytes_at(m->elf, m->text, code[2], code[3], &save_len);
		if (!ss || !save || !goruntime_code_agrees(&table, ss, ss_len, save, save_len))
			f->source = GORUNTIME_CODE_DIFFERS;
		else {
			f->source = GORUNTIME_TABLE;
			dwarf = table;
			known = true;
		}
	}
	struct gostack *g = known ? calloc(1, sizeof *g) : NULL;
	if (g) {
		g->layout = dwarf;
		g->threads = (struct tidrows)TIDROWS_INIT(sizeof(struct go_thread), GO_THREADS);
		if (dwarf.m_procid)
			g->allm = symbol_address(m->elf, m->sym, m->bias, "runtime.allm");
		memcpy(g->sigtramp, sig, sizeof sig);
	}
	return g;
}

static void go_close(void *p)
{
	struct gostack *g = p;
	if (g)
		tidrows_free(&g->threads);
	free(g);
}

static void go_forget_thread(void *p, pid_t tid)
{
	struct gostack *g = p;
	tidrows_forget(&g->threads, tid);
}

static void *go_frames_new(size_t window)
{
	struct go_capture *c = calloc(1, sizeof *c);
	if (c && (c->stack = malloc(window ? window : 1)) == NULL) {
		free(c);
		return NULL;
	}
	if (c)
		c->window = window;
	return c;
}

static void go_frames_free(void *p)
{
	struct go_capture *c = p;
	if (c)
		free(c->stack);
	free(c);
}

static void go_frames_clear(void *p)
{
	struct go_capture *c = p;
	if (!c)
		return;
	c->switched = c->fp = c->g0_alone = c->signal = false;
	c->stack_len = 0;
	c->base_pc = c->base_sp = 0;
}

static unsigned go_frames_count(const void *p)
{
	const struct go_capture *c = p;
	return c && (c->switched || c->fp || c->signal || c->g0_alone || c->base_pc);
}

/* Copy the goroutine stack [SP, min(HI, SP + the window)) of TID into C. */
static bool copy_go_stack(pid_t tid, uint64_t sp, uint64_t hi, struct go_capture *c)
{
	if (sp == 0 || (sp & 7) != 0 || sp >= hi || hi - sp > GO_STACK_MAX)
		return false;
	size_t len = hi - sp < c->window ? (size_t)(hi - sp) : c->window;
	ssize_t n = procfs_read_memory(tid, sp, c->stack, len);
	if (n < 16)
		return false;
	c->stack_len = (size_t)n;
	c->stack_end = hi;
	return true;
}

/* Off the system stack, goroutine G (its stack [LO, HI)) of a thread
 * stopped at SP is in a vDSO call when SP is off its stack (VDSO_SP: its
 * sp at the call; the caller's frame record lies just under it): its
 * stack is copied. */
static void capture_vdso_call(pid_t tid, uint64_t sp, uint64_t lo, uint64_t hi, uint64_t vdso_sp,
			      struct go_capture *c)
{
	uint64_t from = vdso_sp >= lo && vdso_sp < hi
			? vdso_sp - (vdso_sp - lo < 256 ? vdso_sp - lo : 256) : lo;
	if (lo < hi && (sp < lo || sp >= hi) && copy_go_stack(tid, from, hi, c)) {
		c->sp = c->bp = from;
		c->pc = 0;
		c->fp = true;
	}
}

/* On the system stack (GB: its g0's first bytes, stack end HI, at SP):
 * g0's saved base, where mcall starts it afresh. */
static void system_base(const struct goruntime_layout *l, const uint8_t *gb, uint64_t sp,
			uint64_t hi, struct go_capture *c)
{
	uint64_t base_pc, base_sp;
	memcpy(&base_pc, gb + l->g_sched_pc, 8);
	memcpy(&base_sp, gb + l->g_sched_sp, 8);
	if (base_pc != 0 && base_sp > sp && base_sp < hi && (base_sp & 7) == 0) {
		c->base_pc = base_pc;
		c->base_sp = base_sp;
	}
}

/* On the system stack (GB: its g0's first bytes, stack end HI, stopped at
 * SP): g0's saved base, and the goroutine CURG of the same m M that waits
 * there, its saved registers and stack. */
static void capture_system_stack(const struct goruntime_layout *l, pid_t tid, const uint8_t *gb,
				 uint64_t sp, uint64_t hi, uint64_t m, uint64_t g0, uint64_t curg,
				 struct go_capture *c)
{
	c->g0_alone = curg == 0;
	system_base(l, gb, sp, hi, c);
	uint8_t cg[GORUNTIME_G_READ];
	if (curg == 0 || curg == g0 || curg + GORUNTIME_G_READ < curg ||
	    !procfs_read_memory_all(tid, curg, cg, sizeof cg))
		return;
	uint64_t cm, gsp, gpc, gbp, ghi;
	memcpy(&cm, cg + l->g_m, 8);
	memcpy(&gsp, cg + l->g_sched_sp, 8);
	memcpy(&gpc, cg + l->g_sched_pc, 8);
	memcpy(&gbp, cg + l->g_sched_bp, 8);
	memcpy(&ghi, cg + l->g_stack_hi, 8);
	if (cm != m || gpc == 0 || !copy_go_stack(tid, gsp, ghi, c))
		return;
	c->sp = gsp;
	c->pc = gpc;
	c->bp = gbp;
	c->switched = true;
}

/* T stopped at the first instruction of a Go signal handler (GS's
 * sigtramp), its g G (the thread's, as the handler has not changed it yet)
 * with stack [LO, HI): the kernel's signal frame is at its sp (its return
 * address, then the ucontext), in T's copied stack; where the saved sp is
 * on G's stack, that stack is copied from it into C with the saved pc and
 * bp (a thread interrupted on a goroutine, or on g0). */
static void capture_signal_entry(const struct runtime_stop *t, uint64_t lo, uint64_t hi,
				 struct go_capture *c)
{
	enum { MC = 8 + offsetof(ucontext_t, uc_mcontext.gregs) };
	uint64_t off = t->regs->rsp - t->stack_start;
	greg_t gregs[NGREG];
	if (t->regs->rsp < t->stack_start || off > t->stack_len ||
	    t->stack_len - off < MC + sizeof gregs)
		return;
	memcpy(gregs, t->stack + off + MC, sizeof gregs);
	uint64_t sp = (uint64_t)gregs[REG_RSP], pc = (uint64_t)gregs[REG_RIP];
	if (pc == 0 || sp < lo || sp >= hi || !copy_go_stack(t->tid, sp, hi, c))
		return;
	c->sp = sp;
	c->pc = pc;
	c->bp = (uint64_t)gregs[REG_RBP];
	c->signal = true;
}

/* T is a stopped thread, or one copied where it sleeps (its sp and pc
 * only: its TLS base is the one its row kept from an earlier stop, and
 * without one nothing is read): if it runs Go (its g is at fs_base - 8,
 * its g's m has that thread's g0) and its walk will need a goroutine's
 * stack besides the one in use, copy it into C:
 *   - on the system stack (g is g0) while a goroutine of its m waits
 *     there (m.curg, whose m is this one, with a saved sp below its
 *     stack's end): that goroutine's saved registers and stack;
 *   - on a goroutine whose sp is off its stack while rbp is on it (a vDSO
 *     call runs on the system stack): that stack from rbp.
 * Nothing read is trusted: any value out of line leaves C without. */
static unsigned go_capture(void *p, const struct runtime_stop *t, void *frames)
{
	struct gostack *gs = p;
	struct go_capture *c = frames;
	go_frames_clear(c);
	pid_t tid = t->tid;
	/* a thread seen before, stopped off its system stack and not in the
	 * vDSO, runs a goroutine on that goroutine's stack: nothing to read */
	bool made;
	struct go_thread none = { 0 }, *gt = tidrows_get(&gs->threads, tid, !t->sp_pc_only, &made);
	if (!gt)
		gt = &none;     /* (no room: read at each stop) */
	if (t->sp_pc_only && gt->tid != tid) {
		/* (rows move as the table grows: gt is got again) */
		struct go_thread *walked = row_from_allm(gs, tid);
		gt = walked ? walked : &none;
	}
	/* (a row from allm's list has no TLS base: such a thread, asleep on
	 * its system stack, runs g0; a cgo program's g is not at fs_base - 8
	 * of m.tls, and it needs none) */
	bool walked = t->sp_pc_only && gt->tid == tid && gt->m;
	uint64_t fs_base = t->sp_pc_only ? (gt->tid == tid ? gt->fs_base : 0) : t->regs->fs_base;
	if (!walked && fs_base < 64)
		return 0;
	uint64_t sp = t->regs->rsp, rip = t->regs->rip;
	bool in_vdso = t->vdso_len && rip >= t->vdso_start && rip - t->vdso_start < t->vdso_len;
	bool at_signal = !t->sp_pc_only && rip != 0 &&
			 (rip == gs->sigtramp[0] || rip == gs->sigtramp[1]);
	if (gt->tid == tid && (!in_vdso || walked) && !at_signal &&
	    (sp < gt->g0_lo || sp >= gt->g0_hi))
		return 0;
	const struct goruntime_layout *l = &gs->layout;
	uint64_t g = walked ? gt->g0 : 0, m, g0 = 0, curg = 0, lo, hi;
	uint8_t gb[GORUNTIME_G_READ];
	if ((!walked && !procfs_read_memory_all(tid, fs_base + (uint64_t)(int64_t)GORUNTIME_TLS_G,
						&g, sizeof g)) ||
	    g == 0 || g + GORUNTIME_G_READ < g || !procfs_read_memory_all(tid, g, gb, sizeof gb))
		return 0;
	memcpy(&m, gb + l->g_m, 8);
	memcpy(&lo, gb + l->g_stack_lo, 8);
	memcpy(&hi, gb + l->g_stack_hi, 8);
	if (m == 0 || m + l->m_curg + 8 < m || (walked && gt->m != m))
		return 0;   /* (the g0 from allm's list is of that m) */
	uint64_t vdso_sp = 0;
	struct iovec local[3] = { { &g0, sizeof g0 }, { &curg, sizeof curg },
				  { &vdso_sp, sizeof vdso_sp } };
	struct iovec remote[3] = { { (void *)(uintptr_t)(m + l->m_g0), 8 },
				   { (void *)(uintptr_t)(m + l->m_curg), 8 },
				   { (void *)(uintptr_t)(m + l->m_vdso_sp), 8 } };
	int nv = l->m_vdso_sp && m + l->m_vdso_sp + 8 > m ? 3 : 2;
	if (process_vm_readv(tid, local, (unsigned long)nv, remote, (unsigned long)nv, 0) != 8 * nv)
		return 0;
	/* remember its system stack: g's if it is g0, else g0's (read once) */
	uint64_t g0_stack[2] = { lo, hi };
	if (g0 != 0 && (g == g0 || (gt->tid != tid && g0 + l->g_stack_hi + 8 > g0 &&
				    procfs_read_memory_all(tid, g0 + l->g_stack_lo, &g0_stack[0], 8) &&
				    procfs_read_memory_all(tid, g0 + l->g_stack_hi, &g0_stack[1], 8))))
		*gt = (struct go_thread){ .tid = tid, .g0_lo = g0_stack[0], .g0_hi = g0_stack[1],
					  .fs_base = fs_base, .m = walked ? m : 0, .g0 = walked ? g0 : 0 };
	if (at_signal) {
		/* (interrupted on the system stack: under mcall its base is read
		 * too; under systemstack, for a goroutine that waits there, the
		 * walk would need that goroutine's stack as well, which the one
		 * copy cannot hold: cut at the handler, as before, where it was
		 * cut at systemstack: unwind_go_stripped, 2 stacks of 17) */
		if (g != g0 || curg == 0 || curg == g0)
			capture_signal_entry(t, lo, hi, c);
		if (c->signal && g == g0)
			system_base(l, gb, c->sp, hi, c);
	} else if (g != g0) {
		if (g0 != 0)
			capture_vdso_call(tid, sp, lo, hi, vdso_sp, c);
	} else {
		capture_system_stack(l, tid, gb, sp, hi, m, g0, curg, c);
	}
	return go_frames_count(c);
}

/* Where the layout came from (with -v), or why it is not known and what
 * that costs (once a run for each reason); nothing of the kernel's
 * samples, which cross no stack with it. */
static enum runtime_say go_describe(const struct runtime_found *f, bool kernel_copy,
				    unsigned *reason, char *text, size_t len)
{
	char release[32] = "";
	*reason = f->source;
	if (kernel_copy)
		return RUNTIME_SAY_NOTHING;
	if (f->major)
		snprintf(release, sizeof release, " %u.%u", f->major, f->minor);
	const char *cost = "stacks that pass through its system stack (runtime.systemstack, "
			   "runtime.morestack, runtime.mcall) end there, marked [truncated]; a build "
			   "with DWARF (without -ldflags=-w) is followed whole";
	switch ((enum goruntime_source)f->source) {
	case GORUNTIME_DWARF:
	case GORUNTIME_DWARF_AS_TABLE:
	case GORUNTIME_DWARF_NOT_TABLE:
		snprintf(text, len, "runs Go%s: its goroutines are followed from the system stack, "
			 "laid out as its debug information says%s", release,
			 f->source == GORUNTIME_DWARF_AS_TABLE
			 ? ", as csampler's table of that release does"
			 : f->source == GORUNTIME_DWARF_NOT_TABLE
			 ? " (csampler's table of that release differs)" : "");
		return RUNTIME_SAY_VERBOSE;
	case GORUNTIME_TABLE:
		snprintf(text, len, "runs Go%s without debug information: its goroutines are "
			 "followed from the system stack, laid out as csampler's table of that "
			 "release says (its code agrees)", release);
		return RUNTIME_SAY_VERBOSE;
	case GORUNTIME_NO_VERSION:
		snprintf(text, len, "runs Go without debug information and names no release "
			 "(.go.buildinfo): %s", cost);
		break;
	case GORUNTIME_UNKNOWN_VERSION:
		snprintf(text, len, "runs Go%s without debug information, a release whose runtime "
			 "layout csampler does not know (1.18 to 1.26): %s", release, cost);
		break;
	case GORUNTIME_CODE_DIFFERS:
	default:
		snprintf(text, len, "runs Go%s without debug information, and its runtime's code "
			 "does not match csampler's layout of that release: %s", release, cost);
		break;
	}
	return RUNTIME_SAY_ONCE;
}

const struct runtime_ops gostack_ops = {
	.name = "go",
	.open = go_open,
	.close = go_close,
	.forget_thread = go_forget_thread,
	.frames_new = go_frames_new,
	.frames_free = go_frames_free,
	.frames_clear = go_frames_clear,
	.frames_count = go_frames_count,
	.capture = go_capture,
	.describe = go_describe,
};
