/* floor: the ptrace floor of one sampling round, measured alone.
 *
 * usage: floor THREADS PER_ROUND RATE SECONDS [copy]
 *
 * Forks a child with THREADS threads spinning on the CPU, PTRACE_SEIZEs every
 * thread, then RATE times a second (absolute deadlines) stops PER_ROUND of
 * them together (PTRACE_INTERRUPT each, then wait for each stop), reads each
 * one's registers with one PTRACE_GETREGSET, optionally ("copy") copies 64 KiB
 * of its stack from sp with one process_vm_readv, and PTRACE_CONTs them; the
 * threads stopped rotate from round to round. The pause of a round is the
 * time from the first interrupt to the last continue. Prints
 * "rounds N pause_p50_us X pause_p99_us Y tracer_cpu_us_per_round Z". */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define COPY_BYTES (64 * 1024)

static void *spin(void *arg)
{
	unsigned long x = (unsigned long)arg;
	for (;;) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(x));
	}
	return NULL;
}

static void run_child(int nthreads)
{
	pthread_t t;
	for (int i = 1; i < nthreads; i++)
		pthread_create(&t, NULL, spin, (void *)(unsigned long)i);
	spin(NULL);
}

static long long ns_now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int list_threads(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max)
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	closedir(d);
	return n;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: floor THREADS PER_ROUND RATE SECONDS [copy]\n");
		return 2;
	}
	int nthreads = atoi(argv[1]), per_round = atoi(argv[2]), rate = atoi(argv[3]);
	double seconds = atof(argv[4]);
	int copy = argc > 5 && strcmp(argv[5], "copy") == 0;
	if (nthreads < 1 || nthreads > MAX_THREADS || per_round < 1 || per_round > nthreads ||
	    rate < 1 || rate > 100000 || seconds <= 0)
		return 2;
	pid_t child = fork();
	if (child == 0) {
		run_child(nthreads);
		_exit(0);
	}
	pid_t tids[MAX_THREADS];
	int n = 0;
	for (int tries = 0; tries < 1000 && n < nthreads; tries++) {
		usleep(2000);
		n = list_threads(child, tids, MAX_THREADS);
	}
	if (n != nthreads) {
		kill(child, SIGKILL);
		fprintf(stderr, "floor: child threads not found\n");
		return 1;
	}
	for (int i = 0; i < n; i++)
		if (ptrace(PTRACE_SEIZE, tids[i], 0, 0) != 0) {
			perror("floor: PTRACE_SEIZE");
			kill(child, SIGKILL);
			return 1;
		}
	long rounds = (long)(seconds * rate);
	long long *pause = calloc((size_t)rounds, sizeof *pause);
	char *buf = malloc(COPY_BYTES);
	if (!pause || !buf)
		return 1;
	long long period = 1000000000LL / rate, next = ns_now(CLOCK_MONOTONIC) + period;
	long long cpu0 = ns_now(CLOCK_PROCESS_CPUTIME_ID);
	int first = 0;
	for (long r = 0; r < rounds; r++) {
		struct timespec ts = { (time_t)(next / 1000000000LL), (long)(next % 1000000000LL) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		next += period;
		long long t0 = ns_now(CLOCK_MONOTONIC);
		for (int k = 0; k < per_round; k++)
			ptrace(PTRACE_INTERRUPT, tids[(first + k) % n], 0, 0);
		for (int k = 0; k < per_round; k++) {
			int st;
			waitpid(tids[(first + k) % n], &st, __WALL);
		}
		for (int k = 0; k < per_round; k++) {
			pid_t tid = tids[(first + k) % n];
			struct user_regs_struct regs;
			struct iovec io = { &regs, sizeof regs };
			ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &io);
			if (copy) {
				struct iovec local = { buf, COPY_BYTES };
				struct iovec remote = { (void *)regs.rsp, COPY_BYTES };
				process_vm_readv(tid, &local, 1, &remote, 1, 0);
			}
		}
		for (int k = 0; k < per_round; k++)
			ptrace(PTRACE_CONT, tids[(first + k) % n], 0, 0);
		pause[r] = ns_now(CLOCK_MONOTONIC) - t0;
		first = (first + per_round) % n;
	}
	long long cpu = ns_now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	kill(child, SIGKILL);
	/* Reap every traced thread, then the child itself. */
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
	qsort(pause, (size_t)rounds, sizeof *pause, cmp_ll);
	printf("rounds %ld pause_p50_us %.1f pause_p99_us %.1f tracer_cpu_us_per_round %.1f\n", rounds,
	       (double)pause[rounds / 2] / 1e3, (double)pause[(long)((double)rounds * 0.99)] / 1e3,
	       (double)cpu / 1e3 / (double)rounds);
	free(pause);
	free(buf);
	return 0;
}
