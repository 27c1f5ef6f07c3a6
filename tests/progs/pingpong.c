/* pingpong: programs that sleep and wake thousands of times a second, each
 * keeping its own account of the CPU each of its phases used, for judging a
 * profiler's split where the context switches are.
 *
 * usage: pingpong MODE SECONDS [wait]   (sync: its file in $TMPDIR, else /tmp)
 *
 *   epoll   "server" waits in epoll_wait (server_wait), reads a 64-byte
 *           request (server_read), computes about 20 us (server_work) and
 *           writes a 64-byte answer (server_write); "client" writes the
 *           request (client_write), reads the answer (client_read) and
 *           checks it (client_check): each wakes the other per round.
 *   socket  over a socketpair, "writer" fills 16 KiB blocks (writer_fill)
 *           and writes them (writer_write); "reader" reads them
 *           (reader_read) and sums them (reader_sum).
 *   nap     one thread "napper" sleeps 100 us (napper_sleep) and computes
 *           100 us of its own CPU (napper_work), in turn.
 *   sync    one thread "syncer" writes 4 KiB at the start of a scratch
 *           file (syncer_write), fdatasyncs it (syncer_flush: the thread
 *           sleeps until the disk has it) and computes 500 us
 *           (syncer_work), in turn.
 *   calls   one thread "caller" that never sleeps: getrandom of 4 KiB
 *           (caller_random), getppid (caller_getppid) and 10 us of its own
 *           CPU (caller_work), in turn.
 *   clock   one thread "clocker" that never sleeps: about 100 us of
 *           arithmetic with no call in it (clocker_work), then a read of
 *           the process's CPU clock (clocker_read: CLOCK_PROCESS_CPUTIME_ID,
 *           a system call that brings the scheduler's account of the
 *           thread up to date, so that on a busy host its slice often ends
 *           there), in turn.
 *
 * Each phase is a function of its own (noinline), and the CPU it used is
 * read with CLOCK_THREAD_CPUTIME_ID around each call of it: the kernel's
 * own account (the reads themselves fall between the phases). The threads
 * are made first and print "ready PID"; with "wait" they then wait for
 * SIGUSR2 (so a profiler can attach to threads that already exist) before
 * they start. After SECONDS of wall time they stop, and it prints one line
 * a phase and one a thread, then exits:
 *   phase NAME NS
 *   thread NAME NS          (the thread's whole CPU over the run)
 * and "total NS", the sum of the threads'; nap adds "switches napper VOL
 * SLEEPS": the thread's voluntary context switches over the run and its
 * sleeps, each one switch (the rest are its stops by a tracer). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define MAX_PHASES 4
#define BLOCK_WORDS 2048        /* 16 KiB */

struct account {
	const char *thread;
	const char *phase[MAX_PHASES];
	uint64_t ns[MAX_PHASES];        /* CLOCK_THREAD_CPUTIME_ID */
	uint64_t run_ns[MAX_PHASES];    /* the thread's task-clock */
	uint64_t total_ns, run_total_ns;
	int run_fd;                     /* its task-clock counter (-1: none) */
	uint64_t sleeps, switches;      /* (nap) */
};

/* a thread's two clocks at one instant */
struct clocks {
	uint64_t cpu, run;
};

static atomic_int stop;
static volatile uint64_t sink;   /* (the sums, kept from the optimizer) */
static int fds[2];
static pthread_barrier_t started;

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* A counter of the calling thread's task-clock: the time it was on a CPU,
 * from the switch in to the switch out; -1 where perf events are refused. */
static int run_clock_open(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof a, .config = PERF_COUNT_SW_TASK_CLOCK,
	};
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static uint64_t run_clock(const struct account *acc)
{
	uint64_t v;
	if (acc->run_fd < 0 || read(acc->run_fd, &v, sizeof v) != (ssize_t)sizeof v)
		return 0;
	return v;
}

static struct clocks clocks_now(const struct account *acc)
{
	return (struct clocks){ thread_cpu(), run_clock(acc) };
}

/* Arithmetic over WORDS words, ROUNDS rounds each: user code. */
NOINLINE static uint64_t mix(uint64_t *b, size_t words, unsigned rounds, uint64_t seed)
{
	uint64_t s = 0;
	for (size_t i = 0; i < words; i++) {
		uint64_t x = b[i] + seed + i;
		for (unsigned r = 0; r < rounds; r++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		b[i] = x;
		s ^= x;
	}
	return s;
}

/* Computes until US microseconds of this thread's CPU are used. */
static uint64_t compute_us(uint64_t us, uint64_t seed)
{
	static __thread uint64_t b[64];
	uint64_t end = thread_cpu() + us * 1000u;
	do
		seed ^= mix(b, 64, 8, seed);
	while (thread_cpu() < end);
	return seed;
}

static void full_write(int fd, const void *b, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, (const char *)b + done, len - done);
		if (n <= 0)
			exit(1);
		done += (size_t)n;
	}
}

static void full_read(int fd, void *b, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = read(fd, (char *)b + done, len - done);
		if (n <= 0)
			exit(1);
		done += (size_t)n;
	}
}

/* ACC's phase I took the CPU since *T: counted, *T moved on. Each phase
 * ends with it, inside the phase's function: each clock read is then in a
 * phase for the profiler as for the account (half of it before the read,
 * half after, on average) */
static void took(struct account *acc, int i, struct clocks *t)
{
	struct clocks now = clocks_now(acc);
	acc->ns[i] += now.cpu - t->cpu;
	acc->run_ns[i] += now.run - t->run;
	*t = now;
}

/* ---- the phases: each a function of its own, its CPU counted at its end ---- */

/* (the barrier keeps took a call of the phase, not a jump into it that
 * would leave the phase's frame) */
#define TOOK(acc, i, t) do { took(acc, i, t); __asm__ volatile("" ::: "memory"); } while (0)

#define PHASE NOINLINE static

PHASE void server_wait(struct account *acc, struct clocks *t, int ep)
{
	struct epoll_event got;
	while (epoll_wait(ep, &got, 1, -1) != 1)
		;
	TOOK(acc, 0, t);
}
/* false at the end (the client's shutdown) */
PHASE bool server_read(struct account *acc, struct clocks *t, char *req)
{
	for (size_t done = 0; done < 64;) {
		ssize_t n = read(fds[1], req + done, 64 - done);
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	TOOK(acc, 1, t);
	return true;
}
PHASE uint64_t server_work(struct account *acc, struct clocks *t, uint64_t seed)
{
	seed = compute_us(20, seed);
	TOOK(acc, 2, t);
	return seed;
}
PHASE void server_write(struct account *acc, struct clocks *t, const char *ans)
{
	full_write(fds[1], ans, 64);
	TOOK(acc, 3, t);
}
PHASE void client_write(struct account *acc, struct clocks *t, const char *req)
{
	full_write(fds[0], req, 64);
	TOOK(acc, 0, t);
}
PHASE void client_read(struct account *acc, struct clocks *t, char *ans)
{
	full_read(fds[0], ans, 64);
	TOOK(acc, 1, t);
}
PHASE uint64_t client_check(struct account *acc, struct clocks *t, char *ans)
{
	uint64_t s = mix((uint64_t *)(void *)ans, 8, 64, 1);
	TOOK(acc, 2, t);
	return s;
}
PHASE uint64_t writer_fill(struct account *acc, struct clocks *t, uint64_t *b, uint64_t seed)
{
	seed = mix(b, BLOCK_WORDS, 2, seed);
	TOOK(acc, 0, t);
	return seed;
}
PHASE void writer_write(struct account *acc, struct clocks *t, const uint64_t *b)
{
	full_write(fds[0], b, BLOCK_WORDS * 8);
	TOOK(acc, 1, t);
}
/* false at the end (the writer's shutdown: the last block may be cut) */
PHASE bool reader_read(struct account *acc, struct clocks *t, uint64_t *b)
{
	for (size_t done = 0; done < BLOCK_WORDS * 8;) {
		ssize_t n = read(fds[1], (char *)b + done, BLOCK_WORDS * 8 - done);
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	TOOK(acc, 0, t);
	return true;
}
PHASE uint64_t reader_sum(struct account *acc, struct clocks *t, uint64_t *b)
{
	uint64_t s = mix(b, BLOCK_WORDS, 2, 7);
	TOOK(acc, 1, t);
	return s;
}
PHASE void napper_sleep(struct account *acc, struct clocks *t)
{
	struct timespec ts = { 0, 100000 };
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	acc->sleeps++;
	TOOK(acc, 0, t);
}
PHASE uint64_t napper_work(struct account *acc, struct clocks *t, uint64_t seed)
{
	seed = compute_us(100, seed);
	TOOK(acc, 1, t);
	return seed;
}

static void *server(void *arg)
{
	struct account *acc = arg;
	char req[64], ans[64] = { 0 };
	uint64_t seed = 0;
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[1] };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[1], &ev) < 0)
		exit(1);
	pthread_setname_np(pthread_self(), "server");
	pthread_barrier_wait(&started);
	acc->run_fd = run_clock_open();
	struct clocks t = clocks_now(acc), t0 = t;
	/* (until the client stops asking) */
	for (;;) {
		server_wait(acc, &t, ep);
		if (!server_read(acc, &t, req))
			break;
		seed = server_work(acc, &t, seed + (uint8_t)req[0]);
		memcpy(ans, &seed, sizeof seed);
		server_write(acc, &t, ans);
	}
	acc->total_ns = thread_cpu() - t0.cpu;
	acc->run_total_ns = run_clock(acc) - t0.run;
	return NULL;
}

static void *client(void *arg)
{
	struct account *acc = arg;
	char req[64] = "GET", ans[64];
	pthread_setname_np(pthread_self(), "client");
	pthread_barrier_wait(&started);
	acc->run_fd = run_clock_open();
	struct clocks t = clocks_now(acc), t0 = t;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		client_write(acc, &t, req);
		client_read(acc, &t, ans);
		sink += client_check(acc, &t, ans);
	}
	acc->total_ns = thread_cpu() - t0.cpu;
	acc->run_total_ns = run_clock(acc) - t0.run;
	/* the server's read ends */
	shutdown(fds[0], SHUT_WR);
	return NULL;
}

static void *writer(void *arg)
{
	struct account *acc = arg;
	static uint64_t b[BLOCK_WORDS];
	uint64_t seed = 0;
	pthread_setname_np(pthread_self(), "writer");
	pthread_barrier_wait(&started);
	acc->run_fd = run_clock_open();
	struct clocks t = clocks_now(acc), t0 = t;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		seed = writer_fill(acc, &t, b, seed);
		writer_write(acc, &t, b);
	}
	acc->total_ns = thread_cpu() - t0.cpu;
	acc->run_total_ns = run_clock(acc) - t0.run;
	/* the reader may wait for one more block: closing ends its read */
	shutdown(fds[0], SHUT_WR);
	return NULL;
}

static void *reader(void *arg)
{
	struct account *acc = arg;
	static uint64_t b[BLOCK_WORDS];
	pthread_setname_np(pthread_self(), "reader");
	pthread_barrier_wait(&started);
	acc->run_fd = run_clock_open();
	struct clocks t = clocks_now(acc), t0 = t;
	while (reader_read(acc, &t, b))
		sink += reader_sum(acc, &t, b);
	acc->total_ns = thread_cpu() - t0.cpu;
	acc->run_total_ns = run_clock(acc) - t0.run;
	return NULL;
}

PHASE void syncer_write(struct account *acc, struct clocks *t, int fd, const char *block)
{
	if (pwrite(fd, block, 4096, 0) != 4096)
		exit(1);
	TOOK(acc, 0, t);
}
PHASE void syncer_flush(struct account *acc, struct clocks *t, int fd)
{
	if (fdatasync(fd) < 0)
		exit(1);
	TOOK(acc, 1, t);
}
PHASE uint64_t syncer_work(struct account *acc, struct clocks *t, uint64_t seed)
{
	seed = compute_us(500, seed);
	TOOK(acc, 2, t);
	return seed;
}
PHASE void caller_random(struct account *acc, struct clocks *t, char *buf)
{
	if (getrandom(buf, 4096, 0) != 4096)
		exit(1);
	TOOK(acc, 0, t);
}
PHASE void caller_getppid(struct account *acc, struct clocks *t)
{
	if (syscall(SYS_getppid) <= 0)
		exit(1);
	TOOK(acc, 1, t);
}
PHASE uint64_t caller_work(struct account *acc, struct clocks *t, uint64_t seed)
{
	seed = compute_us(10, seed);
	TOOK(acc, 2, t);
	return seed;
}

/* About 100 us of arithmetic: LOOPS steps, with no call and no clock read
 * in it (calibrated by the clocker before it starts). */
static uint64_t arith(uint64_t loops, uint64_t seed)
{
	for (uint64_t i = 0; i < loops; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(seed));
	}
	return seed;
}
PHASE uint64_t clocker_work(struct account *acc, struct clocks *t, uint64_t loops, uint64_t seed)
{
	seed = arith(loops, seed);
	TOOK(acc, 0, t);
	return seed;
}
PHASE void clocker_read(struct account *acc, struct clocks *t)
{
	sink ^= clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	TOOK(acc, 1, t);
}

static void *clocker(void *arg)
{
	struct account *acc = arg;
	uint64_t seed = 1, loops = 1u << 20;
	pthread_setname_np(pthread_self(), "clocker");
	/* steps per 100 us of this thread's CPU */
	uint64_t c0 = thread_cpu();
	seed = arith(loops, seed);
	uint64_t took = thread_cpu() - c0;
	loops = took ? loops * 100000u / took : 100000u;
	pthread_barrier_wait(&started);
	acc->run_fd = run_clock_open();
	struct clocks t = clocks_now(acc), t0 = t;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		seed = clocker_work(acc, &t, loops, seed);
		clocker_read(acc, &t);
	}
	sink ^= seed;
	acc->total_ns = thread_cpu() - t0.cpu;
	acc->run_total_ns = run_clock(acc) - t0.run;
	return NULL;
}

static void *syncer(void *arg)
{
	struct account *acc = arg;
	static char block[4096];
	uint64_t seed = 0;
	const char *dir = getenv("TMPDIR");
	char buf[4096];
	snprintf(buf, sizeof buf, "%s/pingpong-sync.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(buf);
	if (fd < 0)
		exit(1);
	unlink(buf);
	pthread_setname_np(pthread_self(), "syncer");
	pthread_barrier_wait(&started);
	acc->run_fd = run_clock_open();
	struct clocks t = clocks_now(acc), t0 = t;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		memcpy(block, &seed, sizeof seed);
		syncer_write(acc, &t, fd, block);
		syncer_flush(acc, &t, fd);
		seed = syncer_work(acc, &t, seed);
	}
	acc->total_ns = thread_cpu() - t0.cpu;
	acc->run_total_ns = run_clock(acc) - t0.run;
	close(fd);
	return NULL;
}

static void *caller(void *arg)
{
	struct account *acc = arg;
	static char buf[4096];
	uint64_t seed = 0;
	pthread_setname_np(pthread_self(), "caller");
	pthread_barrier_wait(&started);
	acc->run_fd = run_clock_open();
	struct clocks t = clocks_now(acc), t0 = t;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		caller_random(acc, &t, buf);
		caller_getppid(acc, &t);
		seed = caller_work(acc, &t, seed);
	}
	acc->total_ns = thread_cpu() - t0.cpu;
	acc->run_total_ns = run_clock(acc) - t0.run;
	return NULL;
}

static void *napper(void *arg)
{
	struct account *acc = arg;
	uint64_t seed = 0;
	pthread_setname_np(pthread_self(), "napper");
	pthread_barrier_wait(&started);
	acc->run_fd = run_clock_open();
	struct rusage ru0, ru1;
	getrusage(RUSAGE_THREAD, &ru0);
	struct clocks t = clocks_now(acc), t0 = t;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		napper_sleep(acc, &t);
		seed = napper_work(acc, &t, seed);
	}
	acc->total_ns = thread_cpu() - t0.cpu;
	acc->run_total_ns = run_clock(acc) - t0.run;
	getrusage(RUSAGE_THREAD, &ru1);
	acc->switches = (uint64_t)(ru1.ru_nvcsw - ru0.ru_nvcsw);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: pingpong epoll|socket|nap|sync|calls|clock SECONDS [wait]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "wait") != 0))
		usage();
	double seconds = strtod(argv[2], NULL);
	if (!(seconds > 0 && seconds < 3600))
		usage();
	static struct account acc[2] = {
		{ .thread = "server", .phase = { "server_wait", "server_read", "server_work", "server_write" } },
		{ .thread = "client", .phase = { "client_write", "client_read", "client_check" } },
	};
	void *(*fn[2])(void *) = { server, client };
	int nthreads = 2;
	if (strcmp(argv[1], "socket") == 0) {
		acc[0] = (struct account){ .thread = "writer", .phase = { "writer_fill", "writer_write" } };
		acc[1] = (struct account){ .thread = "reader", .phase = { "reader_read", "reader_sum" } };
		fn[0] = writer;
		fn[1] = reader;
	} else if (strcmp(argv[1], "nap") == 0) {
		acc[0] = (struct account){ .thread = "napper", .phase = { "napper_sleep", "napper_work" } };
		fn[0] = napper;
		nthreads = 1;
	} else if (strcmp(argv[1], "sync") == 0) {
		acc[0] = (struct account){ .thread = "syncer",
					   .phase = { "syncer_write", "syncer_flush", "syncer_work" } };
		fn[0] = syncer;
		nthreads = 1;
	} else if (strcmp(argv[1], "calls") == 0) {
		acc[0] = (struct account){ .thread = "caller",
					   .phase = { "caller_random", "caller_getppid", "caller_work" } };
		fn[0] = caller;
		nthreads = 1;
	} else if (strcmp(argv[1], "clock") == 0) {
		acc[0] = (struct account){ .thread = "clocker", .phase = { "clocker_work", "clocker_read" } };
		fn[0] = clocker;
		nthreads = 1;
	} else if (strcmp(argv[1], "epoll") != 0) {
		usage();
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0) {
		perror("socketpair");
		return 1;
	}
	sigset_t go;
	sigemptyset(&go);
	sigaddset(&go, SIGUSR2);
	sigprocmask(SIG_BLOCK, &go, NULL);   /* the threads inherit it */
	pthread_barrier_init(&started, NULL, (unsigned)nthreads + 1);
	pthread_t th[2];
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, fn[i], &acc[i]))
			return 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (argc == 4) {
		int sig;
		sigwait(&go, &sig);
	}
	pthread_barrier_wait(&started);
	struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0)
		;
	atomic_store(&stop, 1);
	uint64_t total = 0, run_total = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		for (int p = 0; p < MAX_PHASES && acc[i].phase[p]; p++)
			printf("phase %s %llu %llu\n", acc[i].phase[p], (unsigned long long)acc[i].ns[p],
			       (unsigned long long)acc[i].run_ns[p]);
		printf("thread %s %llu %llu\n", acc[i].thread, (unsigned long long)acc[i].total_ns,
		       (unsigned long long)acc[i].run_total_ns);
		if (acc[i].sleeps)
			printf("switches %s %llu %llu\n", acc[i].thread, (unsigned long long)acc[i].switches,
			       (unsigned long long)acc[i].sleeps);
		total += acc[i].total_ns;
		run_total += acc[i].run_total_ns;
	}
	printf("total %llu %llu\n", (unsigned long long)total, (unsigned long long)run_total);
	return 0;
}
