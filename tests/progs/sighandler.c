/* sighandler: CPU time split between normal code and a signal handler.
 *
 * An interval timer sends SIGALRM every 10 ms; the handler (on_alarm ->
 * handler_spin) burns about 4 ms each time, interrupting main -> main_loop ->
 * main_spin. Samples taken in the handler must unwind through the signal
 * trampoline (__restore_rt) back into main_spin/main_loop and main.
 * -O2 -fomit-frame-pointer: only DWARF CFI unwinds it.
 *
 * usage: sighandler [SECONDS]   (default: run until killed)
 * Prints "ready PID" on stdout once running. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile sig_atomic_t alarms;
static volatile unsigned long long sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE unsigned long long handler_spin(unsigned long long x)
{
	/* about 4 ms: stop on the clock so a slow machine cannot stack up alarms */
	double end = now() + 0.004;
	do {
		for (unsigned i = 0; i < 20000u; i++) {
			x = x * 6364136223846793005ull + 41;
			__asm__ volatile("" : "+r"(x));
		}
	} while (now() < end);
	return x;
}

NOINLINE void on_alarm(int sig)
{
	unsigned long long r = handler_spin((unsigned long long)sig);
	__asm__ volatile("" : "+r"(r));
	sink = r;
	alarms = alarms + 1;
}

NOINLINE unsigned long long main_spin(unsigned long long x)
{
	for (unsigned i = 0; i < 200000u; i++) {
		x = x * 6364136223846793005ull + 43;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOINLINE unsigned long long main_loop(double end)
{
	unsigned long long x = 1;
	while (end == 0 || now() < end) {
		x = main_spin(x);
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0) {
		perror("sigaction");
		return 1;
	}
	struct itimerval it = { .it_interval = { 0, 10000 }, .it_value = { 0, 10000 } };
	if (setitimer(ITIMER_REAL, &it, NULL) < 0) {
		perror("setitimer");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sink = main_loop(seconds > 0 ? now() + seconds : 0);
	return 0;
}
