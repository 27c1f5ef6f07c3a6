/* Unit tests for the recorder's thread keys and its registry of the threads
 * followed: a key is reused for the same thread, kept while a sink still
 * counting may hold it or its thread is followed, freed otherwise
 * (recorder_collect_threads), and a freed key is made again for another
 * thread; a followed thread has a slot found by its tid, taken lowest
 * first, none without room reserved. */
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
	assert_int_equal(recorder_reserve_threads(f->rec, 1), 0);
	uint32_t slot = recorder_follow_thread(f->rec, f->proc, 201);
	uint32_t live = recorder_name_thread(f->rec, slot, "live");
	uint32_t gone = key_of(f, 202, "gone", UINT32_MAX);
	count(f, live);
	count(f, gone);
	recorder_set_stackmap(f->rec, f->maps[1]);
	/* nothing counted in the new window yet: but for the thread followed,
	 * both would go */
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
	/* B closes too, no window open: nothing is held but a followed thread's */
	assert_int_equal(recorder_reserve_threads(r, 1), 0);
	uint32_t kept = recorder_name_thread(r, recorder_follow_thread(r, p, 403), "kept");
	recorder_remove_sink(r, f->maps[1]);
	recorder_collect_threads(r);
	assert_null(recorder_thread(r, later));
	assert_non_null(recorder_thread(r, kept));
	assert_int_equal(recorder_nthreads(r), 1);
	recorder_free(r);
}

/* the registry: slots by tid, lowest first, none without room; an
 * unfollowed thread's key goes at the next collect */
static void test_registry(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(recorder_follow_thread(f->rec, f->proc, 501), RECORDER_NO_SLOT);
	assert_int_equal(recorder_reserve_threads(f->rec, 3), 0);
	size_t slots = recorder_thread_slots(f->rec);
	assert_true(slots >= 3);
	uint32_t a = recorder_follow_thread(f->rec, f->proc, 501);
	uint32_t b = recorder_follow_thread(f->rec, f->proc, 502);
	uint32_t c = recorder_follow_thread(f->rec, f->proc, 503);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(c, 2);
	assert_int_equal(recorder_nfollowed(f->rec), 3);
	assert_int_equal(recorder_followed_slot(f->rec, 502), b);
	assert_int_equal(recorder_followed_slot(f->rec, 504), RECORDER_NO_SLOT);
	const struct recorder_followed *id = recorder_followed(f->rec, b);
	assert_int_equal(id->tid, 502);
	assert_int_equal(id->pid, getpid());
	assert_ptr_equal(id->proc, f->proc);
	assert_int_equal(id->key, UINT32_MAX);
	uint32_t kb = recorder_name_thread(f->rec, b, "b");
	assert_int_equal(recorder_name_thread(f->rec, b, "b"), kb);     /* same name: same key */
	assert_int_not_equal(recorder_name_thread(f->rec, b, "b2"), kb); /* renamed: another */
	kb = recorder_followed(f->rec, b)->key;
	assert_string_equal(recorder_thread(f->rec, kb)->name, "b2");
	/* unfollowed: its slot is free and found by no tid, its key collected */
	recorder_unfollow_thread(f->rec, b);
	assert_int_equal(recorder_followed_slot(f->rec, 502), RECORDER_NO_SLOT);
	assert_int_equal(recorder_followed(f->rec, b)->tid, 0);
	assert_int_equal(recorder_nfollowed(f->rec), 2);
	recorder_set_stackmap(f->rec, f->maps[1]);
	recorder_collect_threads(f->rec);
	assert_null(recorder_thread(f->rec, kb));
	/* its slot is taken again, and no slot ever moves when room grows */
	assert_int_equal(recorder_follow_thread(f->rec, f->proc, 505), b);
	assert_int_equal(recorder_reserve_threads(f->rec, slots * 4), 0);
	assert_int_equal(recorder_followed_slot(f->rec, 501), a);
	assert_int_equal(recorder_followed_slot(f->rec, 505), b);
	assert_int_equal(recorder_followed_slot(f->rec, 503), c);
	/* between streams (--serve): keys forgotten, the followed ones' too */
	assert_int_not_equal(recorder_name_thread(f->rec, a, "a"), UINT32_MAX);
	recorder_forget_threads(f->rec);
	assert_int_equal(recorder_followed(f->rec, a)->key, UINT32_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_thread_same_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collect_after_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counted_now_stays, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlapping_sinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_registry, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
