/* serve_dump: /debug/pprof/dump, a snapshot of every thread (dump.h) of
 * the process served: asked by a request thread (srv_dump), queued on the
 * server, run by the main thread between streams (srv_run_dumps), each
 * attaching on its own, as --dump does. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "dump.h"
#include "error.h"
#include "serve_internal.h"

char *srv_dump(struct server *srv, size_t *len, int *http_status, char *reason, size_t reasonsz)
{
	bool sampling = srv->stream != STREAM_IDLE;
	for (struct window *w = srv->windows; w && !sampling; w = w->next)
		sampling = w->state == WINDOW_PENDING || w->state == WINDOW_OPEN;
	if (srv->stopping || srv->target_gone) {
		*http_status = 503;
		snprintf(reason, reasonsz, "%s", srv->stopping ? "csampler is shutting down"
								: "the process exited");
		return NULL;
	}
	if (sampling) {
		*http_status = 409;
		snprintf(reason, reasonsz, "a CPU profile is being taken for about %u more seconds, "
			 "and a dump needs the process untraced: retry then", srv_busy_seconds(srv));
		return NULL;
	}
	struct dump_job job = { .next = srv->dumps };
	srv->dumps = &job;
	srv_wake_main(srv);
	while (!job.done)
		pthread_cond_wait(&srv->changed, &srv->lock);
	if (!job.text) {
		*http_status = srv->stopping ? 503 : 500;
		snprintf(reason, reasonsz, "%s", srv->stopping ? "csampler is shutting down"
								: "the dump failed (see csampler's log)");
	}
	*len = job.len;
	return job.text;
}

/* The dump of the process (dump.h), as the text --dump prints; NULL if it
 * failed (said by dump_run). */
static char *dump_text(const struct server *srv, size_t *len)
{
	struct dump_config dc;
	options_dump_config(srv->opt, &dc);
	dc.pid = srv->pid;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	int status = dump_run(&dc, f);
	if (fclose(f) != 0 || status != CS_EXIT_OK) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Answer the dumps not run (shutting down). */
void srv_fail_dumps(struct server *srv)
{
	pthread_mutex_lock(&srv->lock);
	for (struct dump_job *job = srv->dumps; job; job = job->next)
		job->done = true;
	srv->dumps = NULL;
	pthread_cond_broadcast(&srv->changed);
	pthread_mutex_unlock(&srv->lock);
}

/* Run the dumps asked for, one by one (each attaches on its own). */
void srv_run_dumps(struct server *srv)
{
	pthread_mutex_lock(&srv->lock);
	for (;;) {
		struct dump_job *job = NULL;
		for (struct dump_job **pp = &srv->dumps; *pp; pp = &(*pp)->next)
			if (!(*pp)->next) {
				job = *pp;
				*pp = NULL;
				break;
			}
		if (!job)
			break;
		pthread_mutex_unlock(&srv->lock);
		size_t len = 0;
		char *text = dump_text(srv, &len);
		pthread_mutex_lock(&srv->lock);
		job->text = text;
		job->len = len;
		job->done = true;
		pthread_cond_broadcast(&srv->changed);
	}
	pthread_mutex_unlock(&srv->lock);
}
