/* Unit tests for the recorder's thread keys: a key is reused for the same
 * thread, kept while a sink still counting may hold it or the backend keeps
 * it, freed otherwise (recorder_collect_threads), and a freed key is made
 * again for another thread. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "recorder.h"
#include "stackmap.h"

struct fixture {
	struct stackmap *maps[3];
	struct recorder *rec;
	struct recorder_process *proc;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	struct recorder_config rc = { .max_depth = 8 };
	for (int i = 0; i < 3; i++)
		f->maps[i] = stackmap_new(64, 8);
	f->rec = recorder_new(f->maps[0], &rc);
	f->proc = f->rec ? recorder_add_process(f->rec, getpid()) : NULL;
	*state = f;
	return f->maps[2] && f->proc ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	recorder_free(f->rec);
	for (int i = 0; i < 3; i++)
		stackmap_free(f->maps[i]);
	free(f);
	return 0;
}

static uint32_t key_of(struct fixture *f, pid_t tid, const char *name, uint32_t current)
{
	return recorder_thread_key(f->rec, f->proc, tid, name, current);
}

static void count(struct fixture *f, uint32_t key)
{
	uint64_t pc = 0x1000;
	recorder_count(f->rec, key, 0, &pc, 1, 1);
}

static void test_same_thread_same_key(void **state)
{
	struct fixture *f = *state;
	uint32_t a = key_of(f, 101, "worker", UINT32_MAX);
	assert_int_equal(key_of(f, 101, "worker", a), a);
	uint32_t renamed = key_of(f, 101, "renamed", a);
	assert_int_not_equal(renamed, a);
	assert_string_equal(recorder_thread(f->rec, renamed)->name, "renamed");
	assert_int_equal(recorder_nthreads(f->rec), 2);
}

/* --interval: a new stackmap, the old one written; keys of threads gone go */
static void test_collect_after_window(void **state)
{
	struct fixture *f = *state;
	uint32_t live = key_of(f, 201, "live", UINT32_MAX);
	uint32_t gone = key_of(f, 202, "gone", UINT32_MAX);
	count(f, live);
	count(f, gone);
	recorder_set_stackmap(f->rec, f->maps[1]);
	/* nothing counted in the new window yet: without a keep, both go */
	recorder_keep_thread(f->rec, live);
	recorder_collect_threads(f->rec);
	assert_int_equal(recorder_nthreads(f->rec), 1);
	assert_non_null(recorder_thread(f->rec, live));
	assert_int_equal(recorder_thread(f->rec, live)->tid, 201);
	assert_null(recorder_thread(f->rec, gone));
	/* the freed key is made again, for another thread */
	uint32_t next = key_of(f, 203, "next", UINT32_MAX);
	assert_int_equal(next, gone);
	assert_int_equal(recorder_thread(f->rec, next)->tid, 203);
	/* a backend's stale key of the gone thread no longer matches it */
	assert_int_not_equal(key_of(f, 202, "gone", gone), gone);
	struct recorder_stats st;
	recorder_get_stats(f->rec, &st);
	assert_int_equal(st.keys_made, 4);
	assert_int_equal(st.keys_held, 3);
}

/* a key counted in the current window stays, kept or not */
static void test_counted_now_stays(void **state)
{
	struct fixture *f = *state;
	recorder_set_stackmap(f->rec, f->maps[1]);
	uint32_t k = key_of(f, 301, "t", UINT32_MAX);
	count(f, k);
	recorder_collect_threads(f->rec);
	assert_non_null(recorder_thread(f->rec, k));
	/* made in this window and not counted yet: stays too */
	uint32_t fresh = key_of(f, 302, "u", UINT32_MAX);
	recorder_collect_threads(f->rec);
	assert_non_null(recorder_thread(f->rec, fresh));
}

/* --serve: windows that overlap; a key is freed only once no open window
 * began before its last count */
static void test_overlapping_sinks(void **state)
{
	struct fixture *f = *state;
	struct recorder_config rc = { .max_depth = 8 };
	struct recorder *r = recorder_new(NULL, &rc);
	assert_non_null(r);
	struct recorder_process *p = recorder_add_process(r, getpid());
	assert_non_null(p);
	uint64_t pc = 0x2000;
	assert_int_equal(recorder_add_sink(r, f->maps[0], NULL), 0);     /* window A */
	uint32_t early = recorder_thread_key(r, p, 401, "early", UINT32_MAX);
	recorder_count(r, early, 0, &pc, 1, 1);
	assert_int_equal(recorder_add_sink(r, f->maps[1], NULL), 0);     /* window B */
	uint32_t later = recorder_thread_key(r, p, 402, "later", UINT32_MAX);
	recorder_count(r, later, 0, &pc, 1, 1);
	/* A is still open: it holds both */
	recorder_collect_threads(r);
	assert_int_equal(recorder_nthreads(r), 2);
	/* A closes (and is built): only B's keys are held */
	recorder_remove_sink(r, f->maps[0]);
	recorder_collect_threads(r);
	assert_null(recorder_thread(r, early));
	assert_non_null(recorder_thread(r, later));
	/* B closes too, no window open: nothing is held but what is kept */
	uint32_t kept = recorder_thread_key(r, p, 403, "kept", UINT32_MAX);
	recorder_remove_sink(r, f->maps[1]);
	recorder_keep_thread(r, kept);
	recorder_collect_threads(r);
	assert_null(recorder_thread(r, later));
	assert_non_null(recorder_thread(r, kept));
	assert_int_equal(recorder_nthreads(r), 1);
	recorder_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_thread_same_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collect_after_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counted_now_stays, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlapping_sinks, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
