/* sockloop: two threads pass 16 KiB blocks over a socketpair as fast as
 * they can: "writer" fills each block (fill_block, user code) and writes it;
 * "reader" reads each block and sums it (sum_block, user code). Both spend
 * a good part of their CPU in the kernel (write, read, the wake-ups between
 * them) and the rest in short stretches of user code between the calls: the
 * split a sampler must not skew. The kernel's own account of each thread's
 * user and system time (/proc/PID/task/TID/stat) is the truth a test reads.
 * With "epoll", a request/response server instead: "server" waits in
 * epoll_wait, reads a 64-byte request, computes its answer (fill_block on a
 * small block) and writes it; "client" writes a request, reads the answer
 * and sums it (sum_block): each wakes the other thousands of times a second.
 *
 * usage: sockloop [WORK [epoll]]   (WORK: rounds of user work per 64-bit
 *                                   word, 1..64, default 4)
 * Prints "ready PID" once both threads run; runs until killed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define BLOCK (16 * 1024)
#define WORDS (BLOCK / 8)

static int fds[2];
static volatile uint64_t sink;   /* (the sums, kept from the optimizer) */
static unsigned work = 4;
static pthread_barrier_t started;

/* WORDS words of B, ROUNDS rounds of arithmetic each: the user code */
NOINLINE static void fill_block(uint64_t *b, size_t words, unsigned rounds, uint64_t seed)
{
	for (size_t i = 0; i < words; i++) {
		uint64_t x = seed + i;
		for (unsigned r = 0; r < rounds; r++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		b[i] = x;
	}
}

NOINLINE static uint64_t sum_block(const uint64_t *b, size_t words, unsigned rounds)
{
	uint64_t s = 0;
	for (size_t i = 0; i < words; i++) {
		uint64_t x = b[i];
		for (unsigned r = 0; r < rounds; r++)
			x ^= x >> 13, x *= 0x9E3779B97F4A7C15ull;
		s += x;
	}
	return s;
}

/* a whole block, however the kernel splits it */
NOINLINE static void write_block(int fd, const void *b)
{
	for (size_t done = 0; done < BLOCK;) {
		ssize_t n = write(fd, (const char *)b + done, BLOCK - done);
		if (n <= 0)
			exit(1);
		done += (size_t)n;
	}
}

NOINLINE static void read_block(int fd, void *b)
{
	for (size_t done = 0; done < BLOCK;) {
		ssize_t n = read(fd, (char *)b + done, BLOCK - done);
		if (n <= 0)
			exit(1);
		done += (size_t)n;
	}
}

#define SMALL_WORDS 256          /* an answer: 2 KiB */

static void *server(void *arg)
{
	(void)arg;
	static uint64_t answer[SMALL_WORDS];
	char request[64];
	pthread_setname_np(pthread_self(), "server");
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[1] };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[1], &ev) < 0)
		exit(1);
	pthread_barrier_wait(&started);
	for (uint64_t seed = 0;; seed++) {
		struct epoll_event got;
		if (epoll_wait(ep, &got, 1, -1) != 1)
			continue;
		if (read(fds[1], request, sizeof request) != (ssize_t)sizeof request)
			exit(1);
		fill_block(answer, SMALL_WORDS, work * 4, seed);
		if (write(fds[1], answer, sizeof answer) != (ssize_t)sizeof answer)
			exit(1);
	}
	return NULL;
}

static void *client(void *arg)
{
	(void)arg;
	static uint64_t answer[SMALL_WORDS];
	char request[64] = "GET";
	pthread_setname_np(pthread_self(), "client");
	pthread_barrier_wait(&started);
	for (;;) {
		if (write(fds[0], request, sizeof request) != (ssize_t)sizeof request)
			exit(1);
		for (size_t done = 0; done < sizeof answer;) {
			ssize_t n = read(fds[0], (char *)answer + done, sizeof answer - done);
			if (n <= 0)
				exit(1);
			done += (size_t)n;
		}
		sink += sum_block(answer, SMALL_WORDS, work * 4);
	}
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	static uint64_t b[WORDS];
	pthread_setname_np(pthread_self(), "writer");
	pthread_barrier_wait(&started);
	for (uint64_t seed = 0;; seed++) {
		fill_block(b, WORDS, work, seed);
		write_block(fds[0], b);
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	static uint64_t b[WORDS];
	pthread_setname_np(pthread_self(), "reader");
	pthread_barrier_wait(&started);
	for (;;) {
		read_block(fds[1], b);
		sink += sum_block(b, WORDS, work);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	bool epoll = argc > 2 && strcmp(argv[2], "epoll") == 0;
	if (argc > 1) {
		long w = strtol(argv[1], NULL, 10);
		if (w < 1 || w > 64 || (argc > 2 && !epoll)) {
			fprintf(stderr, "usage: sockloop [WORK 1..64 [epoll]]\n");
			return 2;
		}
		work = (unsigned)w;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0) {
		perror("socketpair");
		return 1;
	}
	pthread_t w, r;
	pthread_barrier_init(&started, NULL, 3);
	if (pthread_create(&w, NULL, epoll ? server : writer, NULL) ||
	    pthread_create(&r, NULL, epoll ? client : reader, NULL))
		return 1;
	pthread_barrier_wait(&started);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	pthread_join(w, NULL);
	return 0;
}
