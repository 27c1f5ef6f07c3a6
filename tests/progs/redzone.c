/* redzone: a leaf that keeps its caller's rbp in the red zone under sp.
 *
 * main -> rz_loop, which keeps rbp as its frame pointer (its CFI: CFA =
 * rbp + 16), calls rz_leaf and rz_scribble in turn, forever. rz_leaf
 * saves rbp at sp - 8, in the x86-64 ABI's red zone (its CFI says so:
 * rbp at CFA - 16), and counts down in rbp; rz_scribble, called from the
 * same sp next, writes its own counter over that slot. So a walk from a
 * stop in rz_leaf finds rz_loop's frame only through the red zone as it
 * was at the stop: read from the live thread after it ran on, it holds
 * rz_scribble's counter, and the walk goes astray.
 *
 * usage: redzone [SPIN]   (SPIN: iterations of each leaf, default 2000)
 * Prints "ready PID" on stdout, then runs until killed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void rz_loop(long spin) __attribute__((noreturn));

__asm__(
	".text\n"
	".globl rz_leaf\n"
	".type rz_leaf, @function\n"
	"rz_leaf:\n"
	".cfi_startproc\n"
	"	movq %rbp, -8(%rsp)\n"
	".cfi_offset rbp, -16\n"
	"	movq %rdi, %rbp\n"
	"1:	decq %rbp\n"
	"	jnz 1b\n"
	"	movq -8(%rsp), %rbp\n"
	".cfi_restore rbp\n"
	"	ret\n"
	".cfi_endproc\n"
	".size rz_leaf, .-rz_leaf\n"

	".globl rz_scribble\n"
	".type rz_scribble, @function\n"
	"rz_scribble:\n"
	".cfi_startproc\n"
	"	movq %rdi, %rcx\n"
	"2:	movq %rcx, -8(%rsp)\n"
	"	decq %rcx\n"
	"	jnz 2b\n"
	"	ret\n"
	".cfi_endproc\n"
	".size rz_scribble, .-rz_scribble\n"

	".globl rz_loop\n"
	".type rz_loop, @function\n"
	"rz_loop:\n"
	".cfi_startproc\n"
	"	pushq %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset rbp, -16\n"
	"	movq %rsp, %rbp\n"
	".cfi_def_cfa_register rbp\n"
	"	pushq %rbx\n"
	".cfi_offset rbx, -24\n"
	"	subq $8, %rsp\n"
	"	movq %rdi, %rbx\n"
	"3:	movq %rbx, %rdi\n"
	"	call rz_leaf\n"
	"	movq %rbx, %rdi\n"
	"	call rz_scribble\n"
	"	jmp 3b\n"
	".cfi_endproc\n"
	".size rz_loop, .-rz_loop\n");

int main(int argc, char **argv)
{
	long spin = argc > 1 ? atol(argv[1]) : 2000;
	if (spin < 1)
		spin = 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	rz_loop(spin);
}
