/* stopme: a multi-threaded target that checks its own arithmetic.
 *
 * usage: stopme [THREADS] [busy|sleep]   (default 4 busy)
 * busy:  every thread repeats a fixed computation in check_round and compares
 *        it with the answer computed before any tracer could attach; any
 *        difference (a clobbered register, a lost restart) is counted.
 * sleep: every thread sleeps in nanosleep (a sleeping target).
 * Prints "ready PID" once running; on SIGTERM prints
 * "rounds N bad B" and exits 0 if B is 0, 1 otherwise. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;
static unsigned long expected;
static int sleeping;
static unsigned long rounds[64], bad[64];

static void on_term(int sig) { (void)sig; stop_flag = 1; }

__attribute__((noinline)) static unsigned long check_round(unsigned long seed)
{
	unsigned long x = seed;
	for (unsigned i = 0; i < 50000u; i++) {
		x = x * 2862933555777941757ul + 3037000493ul;
		x ^= x >> 29;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	while (!stop_flag) {
		if (sleeping) {
			struct timespec ts = { 0, 50 * 1000000 };
			nanosleep(&ts, NULL);
			rounds[id]++;
			continue;
		}
		if (check_round(12345) != expected)
			bad[id]++;
		rounds[id]++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	if (n < 1)
		n = 1;
	if (n > 64)
		n = 64;
	sleeping = argc > 2 && strcmp(argv[2], "sleep") == 0;
	expected = check_round(12345);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	pthread_t tid[64];
	for (long i = 1; i < n; i++)
		pthread_create(&tid[i], NULL, worker, (void *)i);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	worker((void *)0);
	unsigned long r = 0, b = 0;
	for (long i = 1; i < n; i++)
		pthread_join(tid[i], NULL);
	for (int i = 0; i < n; i++) {
		r += rounds[i];
		b += bad[i];
	}
	printf("rounds %lu bad %lu\n", r, b);
	return b ? 1 : 0;
}
