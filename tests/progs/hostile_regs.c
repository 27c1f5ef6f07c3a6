/* hostile_regs: threads that spin in assembly with registers no unwinder can
 * trust. Each thread is named for its mode and spins in its own function
 * (hostile_spin_MODE, written in assembly without CFI, so only the frame
 * pointer or the stack pointer can lead further, and both lie):
 *
 *   garbage   rsp holds garbage (canonical: some machines, such as a
 *             firecracker guest on kernel 6.18, kill a thread whose rsp is
 *             not, with a general protection fault at the return from an
 *             interrupt), rbp non-canonical garbage
 *   nullsp    rsp = 0x10, rbp = 0: below any mapping
 *   protnone  rsp and rbp inside a PROT_NONE mapping
 *   edge      rsp 8 bytes below the end of a mapping followed by a hole
 *   cycle     valid rsp; rbp starts a frame chain of two frames that point
 *             at each other, with return addresses in text
 *   selfloop  valid rsp; rbp points at a frame whose saved rbp is itself
 *
 * A signal handler cannot run on such a stack, so the spinning threads block
 * every signal (SIGKILL and SIGSTOP need no user stack). Between spins (about
 * 0.5 ms: 42-80 of each thread's 998 --idle samples were in it) the
 * registers are sane and the thread sleeps 9 ms, so the six threads take
 * about a third of a CPU, not every CPU the machine gives them. Runs until
 * killed; prints "ready PID".
 * usage: hostile_regs */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SPIN_ITERS 2000000ul

/* hostile_spin_NAME(iters, sp, bp): spin ITERS times with rsp = SP and
 * rbp = BP (rsp untouched when SP is 0), then restore both and return. */
#define HOSTILE_SPIN(name)                                                    \
	__asm__(".text\n"                                                     \
		".globl hostile_spin_" #name "\n"                             \
		".type hostile_spin_" #name ", @function\n"                   \
		"hostile_spin_" #name ":\n"                                   \
		"	mov %rsp, %rax\n"                                     \
		"	mov %rbp, %r8\n"                                      \
		"	test %rsi, %rsi\n"                                    \
		"	jz 1f\n"                                              \
		"	mov %rsi, %rsp\n"                                     \
		"1:	mov %rdx, %rbp\n"                                     \
		"2:	dec %rdi\n"                                           \
		"	jnz 2b\n"                                             \
		"	mov %rax, %rsp\n"                                     \
		"	mov %r8, %rbp\n"                                      \
		"	ret\n"                                                \
		".size hostile_spin_" #name ", . - hostile_spin_" #name "\n"); \
	void hostile_spin_##name(uint64_t iters, uint64_t sp, uint64_t bp)

HOSTILE_SPIN(garbage);
HOSTILE_SPIN(nullsp);
HOSTILE_SPIN(protnone);
HOSTILE_SPIN(edge);
HOSTILE_SPIN(cycle);
HOSTILE_SPIN(selfloop);

struct mode {
	const char *name;
	void (*spin)(uint64_t, uint64_t, uint64_t);
	uint64_t sp, bp;
};

/* A frame as a frame-pointer unwinder reads it: saved rbp, return address. */
struct fp_frame {
	uint64_t next;
	uint64_t ret;
};

static void *spinner_main(void *arg)
{
	struct mode *m = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		m->spin(SPIN_ITERS, m->sp, m->bp);
		nanosleep(&(struct timespec){ .tv_nsec = 9000000 }, NULL);
	}
	return NULL;
}

int main(void)
{
	static struct fp_frame cycle[2], self;
	long page = sysconf(_SC_PAGESIZE);
	char *none = mmap(NULL, 16 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *edge = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none == MAP_FAILED || edge == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	munmap(edge + page, page);      /* a hole right above the "stack" */
	memset(edge, 0x41, page);

	cycle[0].next = (uint64_t)&cycle[1];
	cycle[0].ret = (uint64_t)hostile_spin_cycle + 4;
	cycle[1].next = (uint64_t)&cycle[0];
	cycle[1].ret = (uint64_t)hostile_spin_selfloop + 4;
	self.next = (uint64_t)&self;
	self.ret = (uint64_t)hostile_spin_selfloop + 4;

	static struct mode modes[] = {
		{ "garbage", hostile_spin_garbage, 0x00001deadbeef00dul, 0x4141414141414141ul },
		{ "nullsp", hostile_spin_nullsp, 0x10, 0 },
		{ "protnone", hostile_spin_protnone, 0, 0 },
		{ "edge", hostile_spin_edge, 0, 0 },
		{ "cycle", hostile_spin_cycle, 0, 0 },
		{ "selfloop", hostile_spin_selfloop, 0, 0 },
	};
	modes[2].sp = (uint64_t)(none + 8 * page);
	modes[2].bp = (uint64_t)(none + 8 * page + 64);
	modes[3].sp = (uint64_t)(edge + page - 8);
	modes[3].bp = (uint64_t)(edge + page - 16);
	modes[4].bp = (uint64_t)&cycle[0];
	modes[5].bp = (uint64_t)&self;

	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, spinner_main, &modes[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
		pthread_setname_np(t, modes[i].name);
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
