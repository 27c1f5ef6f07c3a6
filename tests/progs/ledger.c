/* ledger: a multi-threaded fixture whose work checks itself.
 *
 * usage: ledger [THREADS [CHURN [ACTION MS]]]
 *        ledger send PID N
 *
 * THREADS workers (default 2) each repeat one round of work: a checksum of a
 * fixed sequence mixing integer, SSE and x87-free double arithmetic and
 * callee-saved registers, compared with the value main computed before any
 * thread started. A mismatch (a register or memory word changed under the
 * worker, e.g. by a tracer) counts as an error. With CHURN 1 a further thread
 * creates and joins short threads that each do one checked round.
 *
 * Every SIGRTMIN delivered is counted (realtime signals queue, so the count is
 * exact). On SIGUSR2 main prints one line:
 *   report SEQ rounds R errors E rt S churned C
 * ACTION after MS milliseconds: "exit" prints the report and exits 0, "exec"
 * re-executes ledger (same THREADS and CHURN, no action) and prints
 * "ready PID" again, "fork" forks; the child starts its own workers, prints
 * "child PID" and both go on (the child reports on SIGUSR2 too).
 * "ledger send PID N" queues N SIGRTMIN to PID (retrying while the queue is
 * full) and prints "sent N".
 * Prints "ready PID" once every worker has finished its first round. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROUND_STEPS 20000u
#define MAX_WORKERS 64

static atomic_ulong rounds, errors, churned, rt_signals;
static volatile sig_atomic_t report_wanted;
static unsigned long expected;

/* One round: a checksum of a known sequence. Integer and floating-point state
 * both feed it, so a clobbered general or SSE register shows. */
__attribute__((noinline)) static unsigned long checksum_round(void)
{
	unsigned long h = 1469598103934665603ul;
	double d = 1.0;
	for (unsigned i = 0; i < ROUND_STEPS; i++) {
		h ^= i;
		h *= 1099511628211ul;
		d = d * 1.000001 + (double)(i & 255) * 0.5;
		__asm__ volatile("" : "+r"(h), "+x"(d));
	}
	unsigned long bits;
	memcpy(&bits, &d, sizeof bits);
	return h ^ bits;
}

__attribute__((noinline)) static void checked_round(void)
{
	if (checksum_round() != expected)
		atomic_fetch_add(&errors, 1);
	atomic_fetch_add(&rounds, 1);
}

static void block_report_signal(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

static atomic_uint started;

static void *worker_main(void *arg)
{
	(void)arg;
	checked_round();
	atomic_fetch_add(&started, 1);
	for (;;)
		checked_round();
	return NULL;
}

static void *short_thread_main(void *arg)
{
	checked_round();
	return arg;
}

static void *churner_main(void *arg)
{
	(void)arg;
	for (unsigned long n = 1;; n++) {
		pthread_t t;
		void *back = NULL;
		if (pthread_create(&t, NULL, short_thread_main, (void *)n) != 0) {
			usleep(1000);
			continue;
		}
		pthread_join(t, &back);
		if (back != (void *)n)
			atomic_fetch_add(&errors, 1);
		atomic_fetch_add(&churned, 1);
	}
	return NULL;
}

static void on_rt(int sig)
{
	(void)sig;
	atomic_fetch_add(&rt_signals, 1);
}

static void on_usr2(int sig)
{
	(void)sig;
	report_wanted = 1;
}

static unsigned report_seq;

static void print_report(void)
{
	printf("report %u rounds %lu errors %lu rt %lu churned %lu\n", ++report_seq,
	       atomic_load(&rounds), atomic_load(&errors), atomic_load(&rt_signals),
	       atomic_load(&churned));
	fflush(stdout);
}

static int send_signals(pid_t pid, unsigned long n)
{
	union sigval v = { .sival_int = 0 };
	for (unsigned long i = 0; i < n; i++) {
		while (sigqueue(pid, SIGRTMIN, v) != 0) {
			if (errno != EAGAIN) {
				perror("sigqueue");
				return 1;
			}
			usleep(100);
		}
	}
	printf("sent %lu\n", n);
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "send") == 0)
		return send_signals((pid_t)atol(argv[2]), strtoul(argv[3], NULL, 10));

	unsigned nworkers = argc > 1 ? (unsigned)atoi(argv[1]) : 2;
	int churn = argc > 2 ? atoi(argv[2]) : 0;
	const char *action = argc > 4 ? argv[3] : NULL;
	double action_at = argc > 4 ? now() + atof(argv[4]) / 1000 : 0;
	if (nworkers < 1 || nworkers > MAX_WORKERS) {
		fprintf(stderr, "ledger: 1 to %d threads\n", MAX_WORKERS);
		return 2;
	}
	expected = checksum_round();

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_rt;
	sigaction(SIGRTMIN, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);

	/* Workers never take SIGUSR2: main is the one that reports. */
	sigset_t old;
	sigset_t usr2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr2, &old);
	for (unsigned i = 0; i < nworkers; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, worker_main, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	if (churn) {
		pthread_t t;
		if (pthread_create(&t, NULL, churner_main, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	while (atomic_load(&started) < nworkers)
		usleep(1000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);

	block_report_signal();
	for (;;) {
		if (action) {
			double left = action_at - now();
			if (left <= 0) {
				if (strcmp(action, "exit") == 0) {
					print_report();
					return 0;
				}
				if (strcmp(action, "exec") == 0) {
					char threads[16], ch[16];
					snprintf(threads, sizeof threads, "%u", nworkers);
					snprintf(ch, sizeof ch, "%d", churn);
					pthread_sigmask(SIG_SETMASK, &old, NULL);
					execl("/proc/self/exe", argv[0], threads, ch, (char *)NULL);
					perror("exec");
					return 1;
				}
				if (strcmp(action, "fork") == 0) {
					fflush(stdout);
					pid_t c = fork();
					if (c == 0) {
						/* Only this thread lives on in the child:
						 * it starts its own workers and reports. */
						for (unsigned i = 0; i < nworkers; i++) {
							pthread_t t;
							if (pthread_create(&t, NULL, worker_main, NULL) != 0)
								return 1;
						}
						printf("child %d\n", (int)getpid());
						fflush(stdout);
					}
				}
				action = NULL;
				continue;
			}
			struct timespec ts = { 0, 1000000 };
			sigset_t open_mask = old;
			sigdelset(&open_mask, SIGUSR2);
			pthread_sigmask(SIG_SETMASK, &open_mask, NULL);
			nanosleep(&ts, NULL);
			block_report_signal();
		} else {
			sigset_t wait_mask = old;
			sigdelset(&wait_mask, SIGUSR2);
			sigsuspend(&wait_mask);
		}
		if (report_wanted) {
			report_wanted = 0;
			print_report();
		}
	}
}
