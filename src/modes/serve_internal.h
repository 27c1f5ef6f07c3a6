/* serve_internal: what serve's files share (not an interface: serve.h is).
 * serve.c runs the server's main thread, the sampling streams and the
 * windows; serve_dump.c the dumps; serve_http.c is the HTTP side (libmicrohttpd: the listening
 * socket, the routes, the request log). Shared functions carry the prefix
 * srv_. */
#ifndef CSAMPLER_SERVE_INTERNAL_H
#define CSAMPLER_SERVE_INTERNAL_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"
#include "profile.h"
#include "recorder.h"
#include "serve_params.h"
#include "stackmap.h"
#include "symcache.h"
#include "timeline.h"

/* The most profile requests sampled at once (one recorder sink each). */
#define SERVE_MAX_WINDOWS RECORDER_MAX_SINKS

enum window_state {
	WINDOW_PENDING,                 /* asked; waits for the stream to open it */
	WINDOW_OPEN,                    /* counting the stream's samples */
	WINDOW_CLOSED,                  /* sampled; its profile is being built */
	WINDOW_DONE,                    /* profile, or http_status and reason */
};

/* A profile request. The request thread owns it: it adds it to the
 * server's list, waits until DONE, then takes it out and frees it. */
struct window {
	struct serve_query q;
	enum window_state state;
	bool cancelled;                 /* the client went away: close it now */
	uint64_t start_ns, end_ns, start_realtime_ns;
	struct stackmap *map;           /* while OPEN and CLOSED */
	struct timeline *timeline;      /* a speedscope request's */
	struct profile *profile;        /* DONE: the result, or NULL */
	int http_status;                /* DONE without a profile: 500, 503... */
	unsigned retry_after;           /* with it: seconds until a retry can work, 0: none */
	char reason[256];
	struct window *next;
};

/* A /debug/pprof/dump request, run by the main thread between streams. */
struct dump_job {
	bool done;
	char *text;                     /* the dump, malloc'd; NULL if it failed */
	size_t len;
	struct dump_job *next;
};

enum stream_state {
	STREAM_IDLE,                    /* the target is untraced */
	STREAM_RUNNING,                 /* a tracer thread samples; wake it with timerfd */
	STREAM_ENDING,                  /* it will not open windows any more */
};

struct server {
	const struct options *opt;
	pid_t pid;                      /* the process served */
	char *command_line;             /* its command line (builder_command_line) */
	char *token;                    /* --serve-token-file's, or NULL */
	size_t token_len;
	int wakefd;                     /* eventfd: the main thread has work */
	int timerfd;                    /* the running stream's: a window is due */
	void *http;                     /* serve_http.c's */

	pthread_mutex_t lock;           /* guards what follows */
	pthread_cond_t changed;         /* a window or job is done */
	struct window *windows;
	struct dump_job *dumps;
	enum stream_state stream;
	unsigned stream_rate;           /* the running stream's sampling */
	bool stream_idle;
	bool stopping;                  /* a stop signal: 503 from now on */
	bool target_gone;
	unsigned requests;              /* in progress, for a clean shutdown */

	/* used by one thread at a time: the stream's while it runs, else the main one */
	struct recorder *recorder;
	struct symcache *symbols;
};

/* serve.c, for the HTTP side (request threads). */
/* Sample W (its query set) for its seconds; returns with W DONE. Called
 * with srv->lock held; may wait on srv->changed. */
void srv_window_run(struct server *srv, struct window *w, int client_fd);
/* Seconds until the sampling now running ends (at least 1). srv->lock held. */
unsigned srv_busy_seconds(const struct server *srv);
/* The seconds (at least 1) until the first window open or waiting ends
 * (a place among SERVE_MAX_WINDOWS frees). Lock held. */
unsigned srv_first_free_seconds(const struct server *srv);

/* Wake the main thread: work waits for it. Any thread. */
void srv_wake_main(struct server *srv);

/* serve_dump.c. */
/* The dump of the target, or NULL with a reason (and HTTP status) given.
 * A request thread, srv->lock held; waits for the main thread to run it. */
char *srv_dump(struct server *srv, size_t *len, int *http_status, char *reason, size_t reasonsz);
/* The main thread, between streams: run the dumps asked for, one by one;
 * or, shutting down, answer them unrun. */
void srv_run_dumps(struct server *srv);
void srv_fail_dumps(struct server *srv);

/* serve_http.c, for the main thread. */
/* Make the listening socket (before the target is touched: an address in
 * use costs no launch). 0, or CS_EXIT_SERVE (said). */
int srv_http_listen(struct server *srv);
/* Serve on it, saying where. 0, or a CS_EXIT_* status (said). */
int srv_http_start(struct server *srv);
/* Take no new connection (from the stop signal on: a request after it is
 * refused, not answered); the ones open go on. Any thread, once or more. */
void srv_http_quiesce(struct server *srv);
/* Stop taking connections, let the requests in progress finish (bounded),
 * and stop. */
void srv_http_stop(struct server *srv);
/* Release what srv_http_listen and srv_http_start made (the Unix socket's
 * name too); safe after a failure of either. */
void srv_http_close(struct server *srv);
#endif
