/* spin32: a 32-bit (i386) program that computes until killed, built by
 * target_32bit.sh with cc -m32 where gcc-multilib is installed (csampler
 * refuses 32-bit targets: its unwinder is x86-64 only).
 * Prints "ready PID" first. */
#include <stdio.h>
#include <unistd.h>

static volatile unsigned long sink;

int main(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		sink = sink * 31 + 7;
}
