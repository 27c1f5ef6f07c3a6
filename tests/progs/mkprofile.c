/* mkprofile: build a known synthetic profile and write it with the real
 * writers, for the write_*.sh integration tests.
 *
 *   mkprofile [-t] [-a] [-T TITLE] [-f FORMAT] [-W N] FILE...
 *
 * -t thread root frames, -a _[i]/_[j] annotations, -T the SVG title, -f the
 * format of every FILE (else from its extension; "-" is stdout), -W N adds
 * N samples of one each to thread app, each its own stack of 64 frames
 * under main;wide (frame K of sample I: "ns::deep::level_K_a(...)" or
 * "..._b(...)" by bit K of a hash of I), the shape of a deep compiler's
 * profile. Exit 0, or 69 when some file could not be written (the writer
 * printed why).
 *
 * The profile (pid 4242, period 1e9/99 ns, 1.5 s, 125 samples):
 *
 *   thread            count  stack (root first)
 *   app-4242            50   main;run_workers;compute;square_i;add_one_i
 *   worker-1-4243       30   start_thread;worker_main;ns::Matrix<double>::multiply(ns::Matrix<double> const&)
 *                            (added as 20 + 10, cpu 300 ms measured)
 *   worker-2-4244       20   start_thread;worker_main;std::vector<int, std::allocator<int> >::push_back(int const&)
 *   "a;b\n999 77"-4245   7   start_thread;worker_main;[libc.so.6+0x1234]       (no symbol)
 *   "a;b\n999 77"-4245  13   start_thread;worker_main;interp_loop;LazyCompile:*fib app.js:3_j;"evil;frame\n7 8"_j
 *   pool (grouped)       5   [truncated];compute;square_i;add_one_i            (truncated)
 *
 * _i = inlined frame (compute's address holds add_one inlined into square
 * inlined into compute: lines app.c:12, app.c:22, app.c:41), _j = JIT. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "write.h"

#define CHECK(x) do { if ((x) == PROFILE_NONE) { perror(#x); exit(70); } } while (0)

static uint32_t line_function(struct profile *p, const char *name, const char *sys,
			      const char *file, int64_t start)
{
	uint32_t f = profile_add_function(p, name, sys, file, start);
	CHECK(f);
	return f;
}

static uint32_t one_line_location(struct profile *p, uint64_t addr, uint32_t mapping,
				  uint32_t function, int64_t line, bool jit)
{
	struct profile_line l = { function, line };
	uint32_t loc = profile_add_location(p, addr, mapping, &l, 1, jit);
	CHECK(loc);
	return loc;
}

static void add_sample(struct profile *p, uint32_t thread, const uint32_t *locs, size_t n,
		       uint32_t flags, uint64_t count)
{
	if (profile_add_sample(p, thread, locs, n, flags, count) < 0) {
		perror("profile_add_sample");
		exit(70);
	}
}

#define WIDE_DEPTH 64
static void add_wide(struct profile *p, uint32_t m_app, uint32_t thread, uint32_t l_main, long n)
{
	uint32_t locs[2][WIDE_DEPTH], l_wide;
	char name[128];
	for (int k = 0; k < WIDE_DEPTH; k++)
		for (int b = 0; b < 2; b++) {
			snprintf(name, sizeof name,
				 "ns::deep::level_%d_%c(std::vector<int, std::allocator<int> > const&)",
				 k, "ab"[b]);
			uint32_t f = line_function(p, name, name, "deep.cc", 100 + k);
			locs[b][k] = one_line_location(p, 0x410000 + (uint64_t)(2 * k + b) * 16,
						       m_app, f, 100 + k, false);
		}
	l_wide = one_line_location(p, 0x401700, m_app, line_function(p, "wide", "wide", "app.c", 90),
				   91, false);
	for (long i = 0; i < n; i++) {
		uint64_t h = (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		uint32_t st[WIDE_DEPTH + 2];
		for (int k = 0; k < WIDE_DEPTH; k++)   /* (leaf first) */
			st[WIDE_DEPTH - 1 - k] = locs[(h >> k) & 1][k];
		st[WIDE_DEPTH] = l_wide;
		st[WIDE_DEPTH + 1] = l_main;
		add_sample(p, thread, st, WIDE_DEPTH + 2, 0, 1);
	}
}

static struct profile *build_profile(long wide)
{
	struct profile *p = profile_new();
	struct profile_mapping app = { 0x400000, 0x402000, 0, "/usr/bin/app",
				       "abcdef0123456789abcdef0123456789abcdef01",
				       true, true, true, true };
	struct profile_mapping matrix = { 0x7f1000000000, 0x7f1000010000, 0x1000,
					  "/usr/lib/libmatrix.so", "", true, true, true, false };
	struct profile_mapping libc = { 0x7f0000000000, 0x7f0000200000, 0,
					"/usr/lib/x86_64-linux-gnu/libc.so.6", "0123abcd",
					true, false, false, false };
	uint32_t m_app, m_matrix, m_libc;
	uint32_t f_main, f_run, f_compute, f_square, f_add, f_worker, f_start, f_mul, f_push;
	uint32_t f_interp, f_fib, f_evil;
	uint32_t l_main, l_run, l_compute, l_worker, l_start, l_mul, l_push, l_libc, l_interp;
	uint32_t l_fib, l_evil;
	uint32_t t_app, t_w1, t_w2, t_evil, t_pool;

	if (!p) {
		perror("profile_new");
		exit(70);
	}
	if (profile_set_command(p, "./app --mode=\"fast\" <in>&out") < 0) {
		perror("profile_set_command");
		exit(70);
	}
	p->pid = 4242;
	p->time_nanos = 1700000000123456789ull;
	p->duration_nanos = 1500000000ull;
	p->period_nanos = 1000000000ull / 99;

	CHECK(m_app = profile_add_mapping(p, &app));
	CHECK(m_matrix = profile_add_mapping(p, &matrix));
	CHECK(m_libc = profile_add_mapping(p, &libc));

	f_main = line_function(p, "main", "main", "app.c", 5);
	f_run = line_function(p, "run_workers", "run_workers", "app.c", 28);
	f_compute = line_function(p, "compute", "compute", "app.c", 38);
	f_square = line_function(p, "square", "square", "app.c", 20);
	f_add = line_function(p, "add_one", "add_one", "app.c", 10);
	f_worker = line_function(p, "worker_main", "worker_main", "app.c", 60);
	f_start = line_function(p, "start_thread", "start_thread", "", 0);
	f_mul = line_function(p, "ns::Matrix<double>::multiply(ns::Matrix<double> const&)",
			      "_ZN2ns6MatrixIdE8multiplyERKS1_", "matrix.cc", 100);
	f_push = line_function(p, "std::vector<int, std::allocator<int> >::push_back(int const&)",
			       "_ZNSt6vectorIiSaIiEE9push_backERKi",
			       "/usr/include/c++/12/bits/stl_vector.h", 1276);
	f_interp = line_function(p, "interp_loop", "interp_loop", "app.c", 80);
	f_fib = line_function(p, "LazyCompile:*fib app.js:3", "LazyCompile:*fib app.js:3", "", 0);
	f_evil = line_function(p, "evil;frame\n7 8", "evil;frame\n7 8", "", 0);

	l_main = one_line_location(p, 0x401300, m_app, f_main, 7, false);
	l_run = one_line_location(p, 0x401200, m_app, f_run, 31, false);
	{
		struct profile_line lines[3] = { { f_add, 12 }, { f_square, 22 }, { f_compute, 41 } };
		CHECK(l_compute = profile_add_location(p, 0x401100, m_app, lines, 3, false));
	}
	l_worker = one_line_location(p, 0x401400, m_app, f_worker, 64, false);
	l_start = one_line_location(p, 0x7f0000094ac3, m_libc, f_start, 0, false);
	l_mul = one_line_location(p, 0x7f1000002345, m_matrix, f_mul, 104, false);
	l_push = one_line_location(p, 0x401500, m_app, f_push, 1280, false);
	CHECK(l_libc = profile_add_location(p, 0x7f0000001234, m_libc, NULL, 0, false));
	l_interp = one_line_location(p, 0x401600, m_app, f_interp, 85, false);
	l_fib = one_line_location(p, 0x3f0000001000, PROFILE_NONE, f_fib, 0, true);
	l_evil = one_line_location(p, 0x3f0000002000, PROFILE_NONE, f_evil, 0, true);

	CHECK(t_app = profile_add_thread(p, 4242, 4242, "app", "app"));
	CHECK(t_w1 = profile_add_thread(p, 4242, 4243, "worker-1", "app"));
	CHECK(t_w2 = profile_add_thread(p, 4242, 4244, "worker-2", "app"));
	CHECK(t_evil = profile_add_thread(p, 4242, 4245, "a;b\n999 77", "app"));
	CHECK(t_pool = profile_add_thread(p, 4242, 0, "pool", "app"));

	{
		uint32_t s1[] = { l_compute, l_run, l_main };
		uint32_t s2[] = { l_mul, l_worker, l_start };
		uint32_t s3[] = { l_push, l_worker, l_start };
		uint32_t s4[] = { l_libc, l_worker, l_start };
		uint32_t s5[] = { l_evil, l_fib, l_interp, l_worker, l_start };
		uint32_t s6[] = { l_compute };
		add_sample(p, t_app, s1, 3, 0, 50);
		add_sample(p, t_w1, s2, 3, 0, 20);
		add_sample(p, t_w1, s2, 3, 0, 10);
		add_sample(p, t_w2, s3, 3, 0, 20);
		add_sample(p, t_evil, s4, 3, 0, 7);
		add_sample(p, t_evil, s5, 5, 0, 13);
		add_sample(p, t_pool, s6, 1, PROFILE_SAMPLE_TRUNCATED, 5);
	}
	if (wide > 0)
		add_wide(p, m_app, t_app, l_main, wide);
	return p;
}

int main(int argc, char **argv)
{
	struct write_options opt = { 0 };
	enum output_format f = FORMAT_AUTO;
	struct profile *p;
	int c, status = 0;
	long wide = 0;

	while ((c = getopt(argc, argv, "taT:f:W:")) != -1) {
		switch (c) {
		case 't':
			opt.threads = true;
			break;
		case 'a':
			opt.annotate = true;
			break;
		case 'T':
			opt.title = optarg;
			break;
		case 'W':
			wide = atol(optarg);
			break;
		case 'f':
			f = write_format_from_name(optarg);
			if (f == FORMAT_AUTO) {
				fprintf(stderr, "mkprofile: unknown format %s\n", optarg);
				return 64;
			}
			break;
		default:
			fprintf(stderr, "usage: mkprofile [-t] [-a] [-T TITLE] [-f FORMAT] [-W N] FILE...\n");
			return 64;
		}
	}
	p = build_profile(wide);
	for (int i = optind; i < argc; i++)
		if (write_output(p, argv[i], -1, f, &opt) < 0)
			status = 69;
	profile_free(p);
	return status;
}
