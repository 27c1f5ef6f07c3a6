/* sigloop: a signal-heavy target; counts the signals it receives per second.
 *
 * usage: sigloop SECONDS [raise|kill]
 *
 * Sends itself SIGUSR1 in a tight loop with raise() (default) or
 * kill(getpid()) for SECONDS and counts the deliveries in the handler.
 * Prints "ready PID" at the start and "signals N sent M seconds S rate R"
 * at the end (R = deliveries per second). Exit 1 if a signal was lost. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t received;

static void on_usr1(int sig)
{
	(void)sig;
	__atomic_fetch_add(&received, 1, __ATOMIC_RELAXED);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: sigloop SECONDS [raise|kill]\n");
		return 2;
	}
	double seconds = atof(argv[1]);
	int use_kill = argc > 2 && strcmp(argv[2], "kill") == 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pid_t self = getpid();
	printf("ready %d\n", (int)self);
	fflush(stdout);
	double t0 = now(), t1 = t0;
	long sent = 0;
	for (;;) {
		for (int i = 0; i < 256; i++) {
			if (use_kill)
				kill(self, SIGUSR1);
			else
				raise(SIGUSR1);
		}
		sent += 256;
		t1 = now();
		if (t1 - t0 >= seconds)
			break;
	}
	long got = received;
	printf("signals %ld sent %ld seconds %.6f rate %.0f\n", got, sent, t1 - t0, (double)got / (t1 - t0));
	return got == sent ? 0 : 1;
}
