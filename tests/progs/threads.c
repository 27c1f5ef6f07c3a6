/* threads: a multi-threaded fixture with one known call chain per thread.
 *
 * Besides the main thread (blocked joining), four named threads each run in
 * their own chain of noinline functions:
 *   th-spin-a   thread_spin_a -> spin_a_middle -> spin_a_leaf   (busy)
 *   th-spin-b   thread_spin_b -> spin_b_middle -> spin_b_leaf   (busy)
 *   th-sleeper  thread_sleeper -> sleeper_middle -> sleeper_leaf -> nanosleep
 *   th-reader   thread_reader -> reader_middle -> reader_leaf -> read (a pipe
 *               nobody writes to)
 * With the argument "evil", a fifth thread sleeps under a name holding an
 * escape sequence and a newline ("ev\033[7mil\nname"), to check escaping.
 * Built -O2 -fomit-frame-pointer: only DWARF CFI unwinds it.
 *
 * usage: threads [evil]
 * Prints "ready PID" on stdout once every thread is named and in its chain;
 * runs until killed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long long sink;
static int pipe_fds[2];
static pthread_barrier_t started;

/* Spin forever; the asm keeps the loop and the frame. */
NOINLINE static unsigned long long spin_a_leaf(unsigned long long x)
{
	for (;;) {
		x = x * 6364136223846793005ull + 11;
		__asm__ volatile("" : "+r"(x));
		sink = x;
	}
	return x;
}

NOINLINE static unsigned long long spin_b_leaf(unsigned long long x)
{
	for (;;) {
		x = x * 2862933555777941757ull + 13;
		__asm__ volatile("" : "+r"(x));
		sink = x;
	}
	return x;
}

NOINLINE static void sleeper_leaf(void)
{
	for (;;) {
		struct timespec ts = { .tv_sec = 3600, .tv_nsec = 0 };
		nanosleep(&ts, NULL);
		__asm__ volatile("");
	}
}

NOINLINE static void reader_leaf(void)
{
	char c;
	while (read(pipe_fds[0], &c, 1) != 0)
		__asm__ volatile("");
}

/* A middle link: calls NEXT and works on the result, so it is not a tail call. */
NOINLINE static unsigned long long spin_a_middle(unsigned long long x)
{
	unsigned long long r = spin_a_leaf(x + 1);
	__asm__ volatile("" : "+r"(r));
	return r ^ 1;
}

NOINLINE static unsigned long long spin_b_middle(unsigned long long x)
{
	unsigned long long r = spin_b_leaf(x + 2);
	__asm__ volatile("" : "+r"(r));
	return r ^ 2;
}

NOINLINE static int sleeper_middle(int x)
{
	sleeper_leaf();
	__asm__ volatile("" : "+r"(x));
	return x + 3;
}

NOINLINE static int reader_middle(int x)
{
	reader_leaf();
	__asm__ volatile("" : "+r"(x));
	return x + 4;
}

static void name_self(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&started);
}

NOINLINE static void *thread_spin_a(void *arg)
{
	name_self("th-spin-a");
	sink = spin_a_middle((unsigned long long)(size_t)arg);
	return NULL;
}

NOINLINE static void *thread_spin_b(void *arg)
{
	name_self("th-spin-b");
	sink = spin_b_middle((unsigned long long)(size_t)arg);
	return NULL;
}

NOINLINE static void *thread_sleeper(void *arg)
{
	name_self("th-sleeper");
	sink = (unsigned long long)sleeper_middle((int)(size_t)arg);
	return NULL;
}

NOINLINE static void *thread_reader(void *arg)
{
	name_self("th-reader");
	sink = (unsigned long long)reader_middle((int)(size_t)arg);
	return NULL;
}

NOINLINE static void *thread_evil(void *arg)
{
	/* The kernel keeps 15 bytes of a thread name, control bytes included. */
	name_self("ev\033[7mil\nname");
	sink = (unsigned long long)sleeper_middle((int)(size_t)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fns[5])(void *) = { thread_spin_a, thread_spin_b, thread_sleeper, thread_reader,
				    thread_evil };
	int n = (argc > 1 && strcmp(argv[1], "evil") == 0) ? 5 : 4;
	pthread_t t[5];

	if (pipe(pipe_fds) < 0) {
		perror("pipe");
		return 1;
	}
	pthread_barrier_init(&started, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fns[i], (void *)(size_t)(i + 1)) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	pthread_barrier_wait(&started);
	/* Give the blocked threads time to reach their syscalls. */
	usleep(100000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
