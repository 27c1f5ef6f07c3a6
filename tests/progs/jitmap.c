/* jitmap: "JIT" code. Copies a small x86_64 loop into anonymous memory,
 * makes it executable, describes it in /tmp/perf-PID.map as jit_hot_loop,
 * and spends its time there. Nothing but the perf map names that code.
 *
 * usage: jitmap [SECONDS]   (default: run until killed)
 * Prints "ready PID" on stdout once running; removes the map at exit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* mov $300000,%ecx; 1: imul %rdi,%rdi; add $7,%rdi; dec %ecx; jnz 1b;
 * mov %rdi,%rax; ret */
static const unsigned char jit_code[] = {
	0xb9, 0xe0, 0x93, 0x04, 0x00,       /* mov $0x493e0,%ecx */
	0x48, 0x0f, 0xaf, 0xff,             /* imul %rdi,%rdi */
	0x48, 0x83, 0xc7, 0x07,             /* add $7,%rdi */
	0xff, 0xc9,                         /* dec %ecx */
	0x75, 0xf4,                         /* jnz imul */
	0x48, 0x89, 0xf8,                   /* mov %rdi,%rax */
	0xc3,                               /* ret */
};

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *code = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 2;
	memset(code, 0xcc, (size_t)page);
	memcpy(code + 64, jit_code, sizeof jit_code);
	if (mprotect(code, (size_t)page, PROT_READ | PROT_EXEC) != 0)
		return 2;
	char mapname[64];
	snprintf(mapname, sizeof mapname, "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(mapname, "w");
	if (f == NULL)
		return 2;
	fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)(code + 64), sizeof jit_code);
	fclose(f);
	unsigned long long (*fn)(unsigned long long) =
		(unsigned long long (*)(unsigned long long))(void *)(code + 64);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned long long acc = 3;
	for (;;) {
		acc = fn(acc);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (seconds > 0 && (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
	}
	unlink(mapname);
	return (int)(acc & 1) * 0;
}
