/* sigcount: a signal-counting fixture, its sender, and a signal storm.
 *
 * sigcount recv [THREADS]   count SIGRTMIN and SIGUSR1 deliveries while
 *                           THREADS (default 2) threads spin in spin_work;
 *                           on SIGTERM print "received RT USR1" and exit 0.
 *                           Each SIGUSR1 is acknowledged with a SIGUSR2 to its sender.
 * sigcount send PID N       queue N SIGRTMIN signals to PID (sigqueue,
 *                           retrying while the queue is full); prints "sent N".
 * sigcount sendusr1 PID N   send N SIGUSR1 to PID, each after the previous one
 *                           was acknowledged; prints "sent N".
 * sigcount storm SECONDS [raise|kill] [RATE]
 *                           raise() (or kill(getpid())) SIGUSR1 in a loop for
 *                           SECONDS, at most RATE per second if given; prints
 *                           "signals N handled H rate R/s".
 * Prints "ready PID" once running (recv and storm). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t rt_count, usr1_count, stop_flag;

/* Process-directed signals run their handlers on any thread, concurrently on
 * several CPUs: count atomically (lock-free atomics are async-signal-safe). */
static void on_rt(int sig) { (void)sig; __atomic_fetch_add(&rt_count, 1, __ATOMIC_RELAXED); }
static void on_usr1(int sig) { (void)sig; __atomic_fetch_add(&usr1_count, 1, __ATOMIC_RELAXED); }
/* recv: count SIGUSR1 and acknowledge it to its sender with SIGUSR2. */
static void on_usr1_ack(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	__atomic_fetch_add(&usr1_count, 1, __ATOMIC_RELAXED);
	if (si->si_code == SI_USER && si->si_pid > 0)
		kill(si->si_pid, SIGUSR2);
}
static void on_term(int sig) { (void)sig; stop_flag = 1; }

__attribute__((noinline)) static unsigned long spin_work(unsigned long x)
{
	for (unsigned i = 0; i < 100000u; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static void *spinner(void *arg)
{
	unsigned long x = (unsigned long)arg;
	while (!stop_flag)
		x = spin_work(x);
	return (void *)x;
}

static void install(int sig, void (*fn)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int recv_main(int threads)
{
	install(SIGRTMIN, on_rt);
	install(SIGTERM, on_term);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1_ack;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t tid[64];
	if (threads > 64)
		threads = 64;
	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, spinner, (void *)(unsigned long)i);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!stop_flag) { /* SIGTERM may land on any thread: poll the flag */
		struct timespec ts = { 0, 10 * 1000000 };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("received %d %d\n", (int)rt_count, (int)usr1_count);
	return 0;
}

static int send_main(pid_t pid, long n)
{
	union sigval v = { .sival_int = 0 };
	long sent = 0;
	while (sent < n) {
		if (sigqueue(pid, SIGRTMIN, v) == 0) {
			sent++;
		} else if (errno == EAGAIN) {
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		} else {
			perror("sigqueue");
			return 1;
		}
	}
	printf("sent %ld\n", sent);
	return 0;
}

/* Send N SIGUSR1 one at a time, each after the previous one's SIGUSR2
 * acknowledgement, so none can merge with another while pending. */
static int send_usr1_main(pid_t pid, long n)
{
	sigset_t ack;
	sigemptyset(&ack);
	sigaddset(&ack, SIGUSR2);
	sigprocmask(SIG_BLOCK, &ack, NULL);
	for (long i = 0; i < n; i++) {
		if (kill(pid, SIGUSR1) != 0) {
			perror("kill");
			return 1;
		}
		struct timespec ts = { 10, 0 };
		if (sigtimedwait(&ack, NULL, &ts) < 0) {
			fprintf(stderr, "no acknowledgement for signal %ld\n", i + 1);
			return 1;
		}
	}
	printf("sent %ld\n", n);
	return 0;
}

static int storm_main(double seconds, int use_kill, double target_rate)
{
	install(SIGUSR1, on_usr1);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	double start = now(), end = start + seconds;
	long n = 0;
	pid_t self = getpid();
	while (now() < end) {
		if (target_rate > 0) { /* paced: keep to TARGET_RATE signals/s */
			double due = start + n / target_rate;
			double t = now();
			if (due > t) {
				struct timespec ts = { 0, (long)((due - t) * 1e9) };
				nanosleep(&ts, NULL);
			}
		}
		for (int i = 0; i < 256; i++) {
			if (use_kill)
				kill(self, SIGUSR1);
			else
				raise(SIGUSR1);
		}
		n += 256;
	}
	double el = now() - start;
	printf("signals %ld handled %d rate %.0f/s\n", n, (int)usr1_count, n / el);
	return (long)usr1_count == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "recv") == 0)
		return recv_main(argc > 2 ? atoi(argv[2]) : 2);
	if (argc >= 4 && strcmp(argv[1], "send") == 0)
		return send_main((pid_t)atoi(argv[2]), atol(argv[3]));
	if (argc >= 4 && strcmp(argv[1], "sendusr1") == 0)
		return send_usr1_main((pid_t)atoi(argv[2]), atol(argv[3]));
	if (argc >= 3 && strcmp(argv[1], "storm") == 0)
		return storm_main(atof(argv[2]), argc > 3 && strcmp(argv[3], "kill") == 0,
				  argc > 4 ? atof(argv[4]) : 0);
	fprintf(stderr, "usage: sigcount recv [THREADS] | send PID N | sendusr1 PID N | "
			"storm SECONDS [raise|kill] [RATE]\n");
	return 2;
}
