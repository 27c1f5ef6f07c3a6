/* evilnames: threads and functions whose names try to forge profile output.
 *
 * Thread names (set with pthread_setname_np, at most 15 bytes kept by the
 * kernel): "a;b\n999 77", an ANSI escape sequence, "<svg>&\"'", a name ending
 * in " 123", a printf format, bytes that are not UTF-8, and a name longer
 * than 15 bytes. Each computes briefly and sleeps 20 ms in turn in its own
 * function (so the threads cost the machine next to nothing: the test reads
 * them with --idle), and those functions carry symbol names no C identifier
 * can have (asm labels: the assembler takes any byte but a newline in a
 * quoted name): "evil;frame 999", a tab, markup, an ANSI escape, a printf
 * format, a name ending in a space and digits, and one 10010-byte name. Runs
 * until killed; prints "ready PID".
 * usage: evilnames */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define S10 "LLLLLLLLLL"
#define S100 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10
#define S1000 S100 S100 S100 S100 S100 S100 S100 S100 S100 S100
#define S10000 S1000 S1000 S1000 S1000 S1000 S1000 S1000 S1000 S1000 S1000

#define SPIN_BODY(x, salt)                                                     \
	for (unsigned i_ = 0; i_ < 10000u; i_++) {                             \
		x = x * 6364136223846793005ul + (salt);                        \
		__asm__ volatile("" : "+r"(x));                                \
	}                                                                      \
	nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);            \
	return x

#define EVIL_FN(cname, symbol, salt)                                           \
	__attribute__((noinline)) unsigned long cname(unsigned long x) __asm__(symbol); \
	__attribute__((noinline)) unsigned long cname(unsigned long x) { SPIN_BODY(x, salt); }

/* The assembler takes any bytes in a quoted symbol name. */
EVIL_FN(evil_semicolon, "\"evil;frame 999\"", 3)
EVIL_FN(evil_tab, "\"evil\ttab 7 7\"", 5)
EVIL_FN(evil_markup, "\"</text><script>&amp;\"", 7)
EVIL_FN(evil_digits, "\"evil_digits 4242\"", 9)
EVIL_FN(evil_escape, "\"evil\033[2J\033[31m\"", 11)
EVIL_FN(evil_long, "evil_long_" S10000, 13)
EVIL_FN(evil_format, "\"evil%s%n%x\"", 15)

struct evil_thread {
	const char *name;
	unsigned long (*spin)(unsigned long);
};

static void *spinner_main(void *arg)
{
	const struct evil_thread *t = arg;
	unsigned long x = 1;
	for (;;) {
		x = t->spin(x);
		__asm__ volatile("" : "+r"(x));
	}
	return NULL;
}

int main(void)
{
	static const struct evil_thread threads[] = {
		{ "a;b\n999 77", evil_semicolon },
		{ "\033[2J\033[H\a", evil_escape },
		{ "<svg>&\"'", evil_markup },
		{ "trailing 123", evil_digits },
		{ "%s%n%x%p", evil_format },
		{ "\xff\xfe\xc3(", evil_tab },
		{ "longer_than_15_bytes_name", evil_long },
	};
	for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, spinner_main, (void *)&threads[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
		/* the long name is refused (ERANGE): set its first 15 bytes */
		if (pthread_setname_np(t, threads[i].name) != 0) {
			char cut[16];
			snprintf(cut, sizeof cut, "%s", threads[i].name);
			pthread_setname_np(t, cut);
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
