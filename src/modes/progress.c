/* progress: see progress.h. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "escape.h"
#include "progress.h"

#define PROGRESS_AFTER_NS 1000000000ull   /* nothing for a phase within this */
#define PROGRESS_EVERY_NS 250000000ull
#define WHAT_MAX 160                       /* bytes of the path kept */
#define WHAT_SHOWN 60                      /* characters of it drawn (its end) */

struct progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	const char *phase;
	uint64_t start_ns, done, total;
	char what[WHAT_MAX];
	const char *verb;                  /* what it does with WHAT */
	bool over, drawn;
};

static void draw(struct progress *p, uint64_t now)
{
	char counts[96] = "";
	if (p->total)
		snprintf(counts, sizeof counts, " %llu of %llu samples,",
			 (unsigned long long)p->done, (unsigned long long)p->total);
	else if (p->done)
		snprintf(counts, sizeof counts, " %llu samples,", (unsigned long long)p->done);
	fprintf(stderr, "\r\033[K[%.1fs] %s%s", (double)(now - p->start_ns) / 1e9, p->phase, counts);
	if (p->what[0]) {
		size_t len = strlen(p->what);
		const char *w = len > WHAT_SHOWN ? p->what + len - WHAT_SHOWN : p->what;
		char shown[4 * WHAT_SHOWN + 1];
		escape_terminal(w, shown, sizeof shown);
		fprintf(stderr, " %s %s%s", p->verb ? p->verb : "reading", len > WHAT_SHOWN ? "..." : "",
			shown);
	}
	fflush(stderr);
	p->drawn = true;
}

static void *run(void *arg)
{
	struct progress *p = arg;
	pthread_mutex_lock(&p->lock);
	while (!p->over) {
		uint64_t now = clock_monotonic_ns();
		uint64_t next = now - p->start_ns < PROGRESS_AFTER_NS ? p->start_ns + PROGRESS_AFTER_NS
									 : now + PROGRESS_EVERY_NS;
		if (now - p->start_ns >= PROGRESS_AFTER_NS)
			draw(p, now);
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t at = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + (next - now);
		ts.tv_sec = (time_t)(at / 1000000000ull);
		ts.tv_nsec = (long)(at % 1000000000ull);
		while (!p->over && pthread_cond_timedwait(&p->wake, &p->lock, &ts) == 0)
			;
	}
	if (p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct progress *progress_start(bool enabled, const char *phase)
{
	if (!enabled)
		return NULL;
	struct progress *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->phase = phase;
	p->start_ns = clock_monotonic_ns();
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&p->thread, NULL, run, p) != 0) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	return p;
}

void progress_count(struct progress *p, uint64_t done, uint64_t total)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->done = done;
	p->total = total;
	pthread_mutex_unlock(&p->lock);
}

void progress_doing(struct progress *p, const char *verb, const char *what)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->verb = verb;
	snprintf(p->what, sizeof p->what, "%s", what ? what : "");
	pthread_mutex_unlock(&p->lock);
}

void progress_reading(struct progress *p, const char *what)
{
	progress_doing(p, "reading", what);
}

void progress_end(struct progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->over = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
