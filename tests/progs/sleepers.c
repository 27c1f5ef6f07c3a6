/* sleepers: many threads that only sleep, and one that starts to compute
 * when told to.
 *
 * N threads ("sleeper") block in pause(); the thread "late-spin" waits in
 * sigwait for SIGUSR1 (blocked in every thread), then spins forever in
 * late_spin -> late_leaf. For sampler_many_threads: a thread that slept
 * long enough for csampler to read its run time seldom must still be
 * sampled as soon as it runs.
 *
 * BUSY threads ("busy") spin from the start in busy_spin -> busy_leaf (for
 * the many-threads benchmark: a few busy threads among thousands asleep).
 *
 * usage: sleepers [N [BUSY]]    (N 0..20000, default 500; BUSY 0..64, default 0)
 * Prints "ready PID" once every thread is started; runs until killed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define MAX_THREADS 20000
#define MAX_BUSY 64

static pthread_barrier_t started;

static void *thread_sleeper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	pthread_barrier_wait(&started);
	for (;;)
		pause();
	return NULL;
}

NOINLINE static void late_leaf(void)
{
	unsigned long long x = 1;
	for (;;) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
}

NOINLINE static void late_spin(void)
{
	late_leaf();
	__asm__ volatile("");
}

NOINLINE static void busy_leaf(void)
{
	unsigned long long x = 1;
	for (;;) {
		x = x * 2862933555777941757ull + 3037000493ull;
		__asm__ volatile("" : "+r"(x));
	}
}

NOINLINE static void busy_spin(void)
{
	busy_leaf();
	__asm__ volatile("");
}

static void *thread_busy(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "busy");
	pthread_barrier_wait(&started);
	busy_spin();
	return NULL;
}

static void *thread_late(void *arg)
{
	sigset_t *usr1 = arg;
	int sig;
	pthread_setname_np(pthread_self(), "late-spin");
	pthread_barrier_wait(&started);
	while (sigwait(usr1, &sig) != 0)
		;
	late_spin();
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 500;
	long busy = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	static sigset_t usr1;
	pthread_attr_t attr;
	pthread_t tid;

	if (n < 0 || n > MAX_THREADS || busy < 0 || busy > MAX_BUSY) {
		fprintf(stderr, "usage: sleepers [N [BUSY]]   (N 0..%d, BUSY 0..%d)\n", MAX_THREADS,
			MAX_BUSY);
		return 2;
	}
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);   /* inherited by every thread */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_barrier_init(&started, NULL, (unsigned)(n + busy) + 2);
	for (long i = 0; i < n; i++)
		if (pthread_create(&tid, &attr, thread_sleeper, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (long i = 0; i < busy; i++)
		if (pthread_create(&tid, &attr, thread_busy, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	if (pthread_create(&tid, &attr, thread_late, &usr1) != 0) {
		perror("pthread_create");
		return 1;
	}
	pthread_barrier_wait(&started);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
