/* nodump: a process that turns its dumpable flag off, then idles, so that
 * attaching to it needs CAP_SYS_PTRACE even for its own user.
 * Prints "ready PID"; runs until killed. */
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(void)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		perror("prctl");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
