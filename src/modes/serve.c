/* serve: see serve.h.
 *
 * Three kinds of threads. The main thread waits for a stop signal, the
 * target's exit (a pidfd) and work the requests leave it (an eventfd): a
 * dump, or windows to sample, for which it runs a stream: a session in a
 * tracer thread (tracer_run) that lasts while any window is open. The
 * request threads (libmicrohttpd's, one per connection, serve_http.c) add a
 * window and wait until it is DONE. The stream opens the windows waiting
 * and closes the ones due when its timerfd fires (its extra descriptor in
 * session_run), between ticks; it builds a closed window's profile itself
 * while other windows go on, and leaves the last ones to the main thread,
 * which builds them after the tracer thread is gone (the target untraced).
 * The recorder and the symcache are used by one thread at a time: the
 * stream's while it runs, else the main thread's. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "builder.h"
#include "clock.h"
#include "error.h"
#include "serve.h"
#include "serve_internal.h"
#include "session.h"
#include "target.h"
#include "tracer.h"

/* ---- waking the main thread and the stream --------------------------------------- */

void srv_wake_main(struct server *srv)
{
	uint64_t one = 1;
	if (write(srv->wakefd, &one, sizeof one) < 0 && errno != EAGAIN)
		warn_errno("serve: cannot wake the main thread");
}

/* The stream's timerfd fires at WHEN_NS (CLOCK_MONOTONIC; 1: now). */
static void arm_stream(struct server *srv, uint64_t when_ns)
{
	struct itimerspec it = {
		.it_value = { .tv_sec = (time_t)(when_ns / 1000000000u),
			      .tv_nsec = (long)(when_ns % 1000000000u) },
	};
	timerfd_settime(srv->timerfd, TFD_TIMER_ABSTIME, &it, NULL);
}

/* ---- windows ------------------------------------------------------------------------ */

__attribute__((format(printf, 3, 4)))
static void window_fail(struct window *w, int http_status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->reason, sizeof w->reason, fmt, ap);
	va_end(ap);
	w->http_status = http_status;
	w->state = WINDOW_DONE;
}

static void window_release(struct window *w)
{
	stackmap_free(w->map);
	timeline_free(w->timeline);
	w->map = NULL;
	w->timeline = NULL;
}

/* Start counting the stream's samples in W from NOW. Lock held, in the
 * stream's thread. */
static void window_open(struct server *srv, struct window *w, uint64_t now)
{
	const struct options *o = srv->opt;
	w->map = stackmap_new(o->max_stacks, o->max_depth);
	bool timeline = write_format_is_timeline(w->q.format);
	w->timeline = timeline ? timeline_new(o->max_depth) : NULL;
	if (!w->map || (timeline && !w->timeline) ||
	    recorder_add_sink(srv->recorder, w->map, w->timeline) < 0) {
		window_release(w);
		window_fail(w, 500, "cannot start sampling: out of memory");
		return;
	}
	w->state = WINDOW_OPEN;
	w->start_ns = now;
	w->start_realtime_ns = clock_realtime_ns();
	w->end_ns = now + (uint64_t)w->q.seconds * 1000000000u;
}

static void window_close(struct server *srv, struct window *w, uint64_t now)
{
	recorder_remove_sink(srv->recorder, w->map);
	w->end_ns = now;
	w->state = WINDOW_CLOSED;
}

/* W's profile, from its closed window, by the thread that owns the recorder. */
static void window_build(struct server *srv, struct window *w)
{
	struct build_config bc;
	options_build_config(srv->opt, srv->command_line, &bc);
	bc.rate = w->q.rate;
	bc.idle = w->q.idle;
	pid_t tids[OPTIONS_MAX_TIDS];
	if (w->q.ntids) {   /* tid=: those threads (of the ones -t followed, if given) */
		for (size_t i = 0; i < w->q.ntids && i < OPTIONS_MAX_TIDS; i++)
			tids[i] = (pid_t)w->q.tids[i];
		bc.tids = tids;
		bc.ntids = w->q.ntids < OPTIONS_MAX_TIDS ? w->q.ntids : OPTIONS_MAX_TIDS;
	}
	struct build_input in = {
		.cfg = &bc, .recorder = srv->recorder, .map = w->map, .timeline = w->timeline,
		.main_pid = srv->pid, .start_ns = w->start_ns,
		.start_realtime_ns = w->start_realtime_ns, .duration_ns = w->end_ns - w->start_ns,
		.symbols = srv->symbols,
	};
	struct profile *p = builder_build(&in);
	window_release(w);
	pthread_mutex_lock(&srv->lock);
	if (p) {
		w->profile = p;
		w->state = WINDOW_DONE;
	} else {
		window_fail(w, 500, "cannot build the profile (see csampler's log)");
	}
	pthread_cond_broadcast(&srv->changed);
	pthread_mutex_unlock(&srv->lock);
}

/* The windows that are sampled and wait for their profile. Lock held. */
static size_t closed_windows(struct server *srv, struct window **out)
{
	size_t n = 0;
	for (struct window *w = srv->windows; w && n < SERVE_MAX_WINDOWS; w = w->next)
		if (w->state == WINDOW_CLOSED)
			out[n++] = w;
	return n;
}

/* ---- the stream ---------------------------------------------------------------------- */

struct stream {
	struct server *srv;
	struct session_config cfg;      /* the server's, with the windows' rate and idle */
	struct session s;
	int exit_status;                /* the main process's, if it died while traced */
};

/* Open the windows waiting, close the ones due and build them. Returns
 * true when no window is open: the stream ends (the windows it closed last
 * are built by the main thread, after the target is let go). */
static bool stream_service(struct stream *st)
{
	struct server *srv = st->srv;
	struct window *closed[SERVE_MAX_WINDOWS];
	uint64_t next = 0;
	bool open = false;

	pthread_mutex_lock(&srv->lock);
	uint64_t now = clock_monotonic_ns();
	for (struct window *w = srv->windows; w; w = w->next) {
		if (w->state == WINDOW_PENDING && !srv->stopping && w->q.rate == st->cfg.rate &&
		    w->q.idle == st->cfg.idle)
			window_open(srv, w, now);
		if (w->state != WINDOW_OPEN)
			continue;
		if (w->cancelled) {
			/* nobody to answer: nothing to build */
			window_close(srv, w, now);
			window_release(w);
			window_fail(w, 0, "the client went away");
			pthread_cond_broadcast(&srv->changed);
			continue;
		}
		if (srv->stopping || now >= w->end_ns) {
			window_close(srv, w, now);
			continue;
		}
		open = true;
		if (!next || w->end_ns < next)
			next = w->end_ns;
	}
	size_t nclosed = 0;
	if (open) {
		arm_stream(srv, next);
		nclosed = closed_windows(srv, closed);
	} else {
		srv->stream = STREAM_ENDING;
	}
	pthread_mutex_unlock(&srv->lock);
	for (size_t i = 0; i < nclosed; i++)
		window_build(srv, closed[i]);
	/* windows that always overlap keep the stream running: the keys of
	 * threads gone go with the windows that held them */
	if (nclosed > 0)
		recorder_collect_threads(st->s.recorder);
	return !open;
}

static bool stream_on_timer(void *ctx, short revents)
{
	struct stream *st = ctx;
	uint64_t expirations;
	(void)revents;
	if (read(st->srv->timerfd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
		return true;
	return stream_service(st);
}

static bool stream_on_stop_signal(void *ctx, int signo)
{
	struct stream *st = ctx;
	(void)signo;
	pthread_mutex_lock(&st->srv->lock);
	st->srv->stopping = true;
	pthread_mutex_unlock(&st->srv->lock);
	srv_http_quiesce(st->srv);
	return true;
}

/* The stream ended: close what is open. After a stop signal the windows
 * are answered 503 (a shorter profile than asked is not what they asked);
 * after the target's exit they hold what it ran until then. */
static void stream_end_windows(struct stream *st, enum session_end end)
{
	struct server *srv = st->srv;
	pthread_mutex_lock(&srv->lock);
	uint64_t now = clock_monotonic_ns();
	if (end == SESSION_END_GONE)
		srv->target_gone = true;
	for (struct window *w = srv->windows; w; w = w->next) {
		if (w->state == WINDOW_OPEN)
			window_close(srv, w, now);
		if (w->state == WINDOW_CLOSED && srv->stopping) {
			window_release(w);
			window_fail(w, 503, "csampler is shutting down");
		} else if (w->state == WINDOW_CLOSED && end == SESSION_END_ERROR) {
			window_release(w);
			window_fail(w, 500, "sampling failed (see csampler's log)");
		}
	}
	srv->stream = STREAM_ENDING;
	pthread_cond_broadcast(&srv->changed);
	pthread_mutex_unlock(&srv->lock);
}

/* The tracer thread: attach, sample while windows are open, let go. */
static int stream_run(void *arg)
{
	struct stream *st = arg;
	struct server *srv = st->srv;
	int status = session_attach(&st->s, 0, NULL, NULL, NULL);
	if (status != 0)
		return status;
	/* libraries loaded since the last stream */
	struct recorder_process *p = recorder_find_process(srv->recorder, srv->pid);
	if (p)
		procmaps_refresh(p->maps);
	target_start(st->s.target);
	uint64_t start = clock_monotonic_ns();
	enum session_end end = SESSION_END_STOPPED;
	if (!stream_service(st)) {
		struct session_hooks h = {
			.ctx = st, .on_stop_signal = stream_on_stop_signal,
			.extra_fd = srv->timerfd, .on_extra_fd = stream_on_timer, .quiet_clock = true,
		};
		end = session_run(&st->s, start, &h);
	}
	stream_end_windows(st, end);
	st->exit_status = target_exit_status(st->s.target);
	session_detach(&st->s);
	return 0;
}

/* Answer the windows waiting with the reason the stream could not start. */
static void fail_pending(struct server *srv, unsigned rate, bool idle, int http_status,
			 const char *reason)
{
	pthread_mutex_lock(&srv->lock);
	for (struct window *w = srv->windows; w; w = w->next)
		if (w->state == WINDOW_PENDING && (rate == 0 || (w->q.rate == rate && w->q.idle == idle)))
			window_fail(w, http_status, "%s", reason);
	pthread_cond_broadcast(&srv->changed);
	pthread_mutex_unlock(&srv->lock);
}

static const char *attach_failure(int status)
{
	switch (status) {
	case CS_EXIT_NO_PROCESS: return "the process exited";
	case CS_EXIT_TRACED: return "the process is traced by another program (a debugger, strace "
				    "or another profiler): retry when it lets go";
	case CS_EXIT_PERMISSION: return "the kernel refused to let csampler trace the process "
					"(see csampler's log)";
	default: return "cannot attach to the process (see csampler's log)";
	}
}

/* The session of a stream on the process served, at RATE Hz (IDLE: --idle),
 * until its windows are closed: it is attached to, never launched again; a
 * launched program was started once, by first_contact (a stream that
 * launched it again ran a second copy, sampled that one and left it
 * running). */
static struct session_config stream_session_config(const struct server *srv, unsigned rate,
						    bool idle)
{
	struct session_config c;
	options_session_config(srv->opt, &c);
	c.pid = srv->pid;
	c.command = NULL;
	c.rate = rate;
	c.idle = idle;
	c.duration = 0;
	return c;
}

/* Sample the windows waiting (those with the first one's rate and idle),
 * then build what the stream left. */
static void run_stream(struct server *srv, unsigned rate, bool idle, int *exit_status)
{
	struct stream st = { .srv = srv, .cfg = stream_session_config(srv, rate, idle),
			     .exit_status = -1 };
	if (session_open(&st.s, &st.cfg, 0) != 0) {
		fail_pending(srv, rate, idle, 500, "cannot start sampling (see csampler's log)");
		return;
	}
	st.s.recorder = srv->recorder;
	pthread_mutex_lock(&srv->lock);
	srv->stream = STREAM_RUNNING;
	srv->stream_rate = rate;
	srv->stream_idle = idle;
	pthread_mutex_unlock(&srv->lock);

	int status = tracer_run(stream_run, &st);
	if (status < 0) {
		warn_errno("serve: cannot start the tracer thread");
		status = CS_EXIT_SYSTEM;
	}
	if (srv->opt->verbose) {
		struct recorder_stats rs;
		recorder_get_stats(srv->recorder, &rs);
		warn("serve: the stream at %u Hz ended: thread keys %llu held of %llu made", rate,
		     (unsigned long long)rs.keys_held, (unsigned long long)rs.keys_made);
	}
	if (st.exit_status >= 0)
		*exit_status = st.exit_status;
	session_end(&st.s);
	if (status != 0) {
		pthread_mutex_lock(&srv->lock);
		srv->target_gone |= status == CS_EXIT_NO_PROCESS;
		pthread_mutex_unlock(&srv->lock);
		fail_pending(srv, rate, idle, 503, attach_failure(status));
	}
	struct window *closed[SERVE_MAX_WINDOWS];
	pthread_mutex_lock(&srv->lock);
	srv->stream = STREAM_IDLE;
	size_t n = closed_windows(srv, closed);
	pthread_mutex_unlock(&srv->lock);
	for (size_t i = 0; i < n; i++)
		window_build(srv, closed[i]);
	/* Every window of the stream is built and its sampler gone: no thread
	 * key is held, and the next stream makes those of the threads it
	 * samples (a service's thread churn does not grow the server). */
	recorder_forget_threads(srv->recorder);
}

/* ---- requests' side (serve_internal.h) ---------------------------------------------- */

/* When window W ends (0: it is not open or waiting). */
static uint64_t window_end(const struct window *w, uint64_t now)
{
	return w->state == WINDOW_OPEN ? w->end_ns :
	       w->state == WINDOW_PENDING ? now + (uint64_t)w->q.seconds * 1000000000u : 0;
}

/* END as whole seconds from NOW, rounded up, at least 1. */
static unsigned seconds_until(uint64_t end, uint64_t now)
{
	unsigned s = end > now ? (unsigned)((end - now + 999999999u) / 1000000000u) : 0;
	return s ? s : 1;
}

unsigned srv_busy_seconds(const struct server *srv)
{
	uint64_t now = clock_monotonic_ns(), end = now;
	for (const struct window *w = srv->windows; w; w = w->next)
		if (window_end(w, now) > end)
			end = window_end(w, now);
	return seconds_until(end, now);
}

unsigned srv_first_free_seconds(const struct server *srv)
{
	uint64_t now = clock_monotonic_ns(), first = 0;
	for (const struct window *w = srv->windows; w; w = w->next) {
		uint64_t e = window_end(w, now);
		if (e && (!first || e < first))
			first = e;
	}
	return seconds_until(first, now);
}

/* Whether the client of FD closed its side. */
static bool client_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };
	return fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Whether W can join the sampling now (its rate and idle those of the
 * stream and of every window waiting); else the reason. Lock held. */
static bool window_fits(const struct server *srv, const struct window *w, char *why, size_t size)
{
	unsigned rate = 0;
	bool idle = false;
	if (srv->stream == STREAM_RUNNING) {
		rate = srv->stream_rate;
		idle = srv->stream_idle;
	}
	for (const struct window *o = srv->windows; o && !rate; o = o->next)
		if (o->state == WINDOW_PENDING || o->state == WINDOW_OPEN) {
			rate = o->q.rate;
			idle = o->q.idle;
		}
	if (!rate || (rate == w->q.rate && idle == w->q.idle))
		return true;
	snprintf(why, size, "a profile at %u Hz%s is being taken for about %u more seconds; one "
		 "stream of samples feeds every request: ask for hz=%u%s, or retry then", rate,
		 idle ? " with idle=1" : "", srv_busy_seconds(srv), rate, idle ? "&idle=1" : "");
	return false;
}

void srv_window_run(struct server *srv, struct window *w, int client_fd)
{
	size_t active = 0;
	for (struct window *o = srv->windows; o; o = o->next)
		active += o->state != WINDOW_DONE;
	if (srv->stopping || srv->target_gone) {
		window_fail(w, 503, srv->stopping ? "csampler is shutting down" : "the process exited");
		return;
	}
	if (active >= SERVE_MAX_WINDOWS) {
		/* (a place frees when the first of them ends) */
		w->retry_after = srv_first_free_seconds(srv);
		window_fail(w, 503, "%d profiles are being taken already, the most at once: retry in "
			    "%u seconds", SERVE_MAX_WINDOWS, w->retry_after);
		return;
	}
	char why[sizeof w->reason];
	if (!window_fits(srv, w, why, sizeof why)) {
		/* (the stream at another rate ends with the last of its windows) */
		w->retry_after = srv_busy_seconds(srv);
		window_fail(w, 409, "%s", why);
		return;
	}
	w->state = WINDOW_PENDING;
	w->next = srv->windows;
	srv->windows = w;
	if (srv->stream == STREAM_RUNNING)
		arm_stream(srv, 1);
	else
		srv_wake_main(srv);
	while (w->state != WINDOW_DONE) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&srv->changed, &srv->lock, &until);
		if (w->state == WINDOW_DONE || w->cancelled || !client_gone(client_fd))
			continue;
		if (w->state == WINDOW_PENDING) {
			window_fail(w, 0, "the client went away");
		} else {
			w->cancelled = true;
			if (srv->stream == STREAM_RUNNING)
				arm_stream(srv, 1);
		}
	}
	for (struct window **pp = &srv->windows; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
}

/* ---- the main thread ------------------------------------------------------------------ */

/* The first windows waiting: the rate and idle of the next stream. */
static bool next_stream(struct server *srv, unsigned *rate, bool *idle)
{
	bool found = false;
	pthread_mutex_lock(&srv->lock);
	for (struct window *w = srv->windows; w; w = w->next)
		if (w->state == WINDOW_PENDING) {
			*rate = w->q.rate;
			*idle = w->q.idle;
			found = true;  /* (the last in the list was asked first) */
		}
	found &= !srv->stopping && !srv->target_gone;
	pthread_mutex_unlock(&srv->lock);
	return found;
}

/* Wait for a stop signal, the target's exit, or work. */
static void serve_loop(struct server *srv, int sigfd, int pidfd, int *exit_status)
{
	for (;;) {
		struct pollfd fds[3] = {
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = pidfd, .events = POLLIN },
			{ .fd = srv->wakefd, .events = POLLIN },
		};
		if (poll(fds, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			warn_errno("serve: poll");
			return;
		}
		struct signalfd_siginfo si;
		if ((fds[0].revents & POLLIN) && read(sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
			pthread_mutex_lock(&srv->lock);
			srv->stopping = true;
			pthread_mutex_unlock(&srv->lock);
			srv_http_quiesce(srv);
		}
		if (fds[1].revents & POLLIN) {
			pthread_mutex_lock(&srv->lock);
			srv->target_gone = true;
			pthread_mutex_unlock(&srv->lock);
		}
		uint64_t n;
		if ((fds[2].revents & POLLIN) && read(srv->wakefd, &n, sizeof n) < 0)
			continue;
		srv_run_dumps(srv);
		unsigned rate;
		bool idle;
		while (next_stream(srv, &rate, &idle))
			run_stream(srv, rate, idle, exit_status);
		pthread_mutex_lock(&srv->lock);
		bool end = srv->stopping || srv->target_gone;
		pthread_mutex_unlock(&srv->lock);
		if (end)
			return;
	}
}

/* What the main thread learns of the target before serving: attach mode
 * checks it can be traced (an attach and detach: a bad PID or a refusal is
 * said now, with its exit status); launch mode starts the program, untraced
 * from then on. */
struct first_contact {
	const struct options *opt;
	struct target *launched;
	pid_t pid;
};

static int first_contact(void *arg)
{
	struct first_contact *fc = arg;
	const struct options *o = fc->opt;
	struct target_config cfg = { .mode = o->seize_mode, .verbose = o->verbose, .stdout_fd = -1 };
	struct target *t = NULL;
	int status = session_exit_status(o->command ? target_launch(&t, o->command, &cfg)
						    : target_attach(&t, o->pid, &cfg));
	if (status != 0)
		return status;
	fc->pid = target_main_pid(t);
	if (target_start(t) < 0)
		status = CS_EXIT_FAILURE;
	target_detach(t);
	if (o->command)
		fc->launched = t;
	else
		target_free(t);
	return status;
}

/* The most a token file is read of: a token of 4096 characters, its line's
 * end and a little more (a longer first line is refused). */
#define TOKEN_FILE_READ 4100

/* The token of --serve-token-file: its first line. The file must be a
 * regular file (a FIFO would block the open or the read, a device such as
 * /dev/zero never end), read at most TOKEN_FILE_READ bytes. 0, or
 * CS_EXIT_SERVE. */
static int read_token(struct server *srv, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		warn_errno("cannot read the token file '%s'", path);
		if (fd >= 0)
			close(fd);
		return CS_EXIT_SERVE;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		warn("the token file '%s' is not a regular file (a FIFO, a device or a directory): "
		     "give a file that holds the token", path);
		return CS_EXIT_SERVE;
	}
	if (st.st_mode & 0077)
		warn("the token file '%s' can be read by others (mode %03o): chmod 600 it",
		     path, (unsigned)(st.st_mode & 0777));
	char buf[TOKEN_FILE_READ + 1];
	size_t n = 0;
	for (ssize_t r; n < TOKEN_FILE_READ; n += (size_t)r)
		if ((r = read(fd, buf + n, TOKEN_FILE_READ - n)) <= 0) {
			if (r < 0 && errno == EINTR) {
				r = 0;
				continue;
			}
			break;
		}
	close(fd);
	buf[n] = '\0';
	const char *nl = memchr(buf, '\n', n);
	size_t len = nl ? (size_t)(nl - buf) : n;
	bool whole = nl || n < TOKEN_FILE_READ;   /* its first line's end was read */
	while (len > 0 && (buf[len - 1] == '\r' || buf[len - 1] == ' '))
		len--;
	const char *blank = strpbrk(buf, " \t");
	if (!whole || len == 0 || len > 4096 || memchr(buf, '\0', len) || (blank && blank < buf + len)) {
		warn("the token file '%s' must hold one token (1 to 4096 characters, no blanks) on "
		     "its first line", path);
		return CS_EXIT_SERVE;
	}
	srv->token = strndup(buf, len);
	if (!srv->token) {
		warn_errno("cannot read the token file '%s'", path);
		return CS_EXIT_SERVE;
	}
	srv->token_len = len;
	return 0;
}

/* Block the stop signals and SIGCHLD in every thread (libmicrohttpd's and
 * the tracer threads inherit the mask); a signalfd takes the stop signals. */
static int take_stop_signals(sigset_t *old)
{
	sigset_t mask;
	session_stop_signals(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, old);
	sigdelset(&mask, SIGCHLD);  /* the tracer's, while a stream runs */
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int server_setup(struct server *srv)
{
	struct session_config sc;
	struct recorder_config rc;
	options_session_config(srv->opt, &sc);
	session_recorder_config(&sc, &rc);
	rc.kernel_in_place = sc.kernel;   /* (any request may ask idle=1) */
	struct symbolize_options so = { .no_inline = srv->opt->no_inline,
					.addresses_only = srv->opt->addresses };
	srv->recorder = recorder_new(NULL, &rc);
	srv->symbols = symcache_new(&so, srv->opt->verbose);
	srv->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	srv->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->changed, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&srv->lock, NULL);
	if (!srv->recorder || !srv->symbols || srv->wakefd < 0 || srv->timerfd < 0) {
		warn_errno("cannot set up the server");
		return CS_EXIT_SYSTEM;
	}
	return 0;
}

static void server_free(struct server *srv)
{
	symcache_free(srv->symbols);  /* (before the recorder's mappings go) */
	recorder_free(srv->recorder);
	if (srv->wakefd >= 0)
		close(srv->wakefd);
	if (srv->timerfd >= 0)
		close(srv->timerfd);
	pthread_cond_destroy(&srv->changed);
	pthread_mutex_destroy(&srv->lock);
	free(srv->token);
	free(srv->command_line);
}

/* The launched program's status, or 0 in attach mode. */
static int served_status(const struct options *o, struct target *launched, int seen)
{
	if (!o->command || !launched)
		return CS_EXIT_OK;
	return seen >= 0 ? seen : target_wait_exit(launched);
}

int serve_run(const struct options *o)
{
	/* Each window's stackmap is one large allocation, made and freed per
	 * request. Past its first free, glibc's moving mmap threshold would put
	 * the next ones in the heap, which keeps freed memory (and calloc then
	 * touches every page): a fixed threshold keeps them mapped on demand
	 * and given back at the window's end, so memory is flat across
	 * requests. And a thread per connection, each new one could make a
	 * malloc arena of its own that keeps what it freed: two arenas serve
	 * them all. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	mallopt(M_ARENA_MAX, 2);
	struct server srv = { .opt = o, .wakefd = -1, .timerfd = -1 };
	struct first_contact fc = { .opt = o };
	sigset_t oldmask;
	int pidfd = -1, exit_status = -1;
	int sigfd = take_stop_signals(&oldmask);
	int status = sigfd < 0 ? CS_EXIT_SYSTEM : server_setup(&srv);
	if (status == 0 && o->serve_token_file)
		status = read_token(&srv, o->serve_token_file);
	if (status == 0)
		status = srv_http_listen(&srv);
	if (status == 0) {
		status = tracer_run(first_contact, &fc);
		if (status < 0) {
			warn_errno("cannot start the tracer thread");
			status = CS_EXIT_SYSTEM;
		}
	}
	if (status == 0) {
		srv.pid = fc.pid;
		srv.command_line = builder_command_line(o->command, fc.pid);
		pidfd = (int)syscall(SYS_pidfd_open, fc.pid, 0);
		if (pidfd < 0) {
			warn_errno("cannot watch process %d (pidfd_open needs Linux 5.3)", (int)fc.pid);
			status = CS_EXIT_SYSTEM;
		}
	}
	if (status == 0)
		status = srv_http_start(&srv);
	if (status == 0) {
		serve_loop(&srv, sigfd, pidfd, &exit_status);
		pthread_mutex_lock(&srv.lock);
		bool gone = srv.target_gone && !srv.stopping;
		srv.stopping = true;
		pthread_mutex_unlock(&srv.lock);
		fail_pending(&srv, 0, false, 503, gone ? "the process exited"
						       : "csampler is shutting down");
		srv_fail_dumps(&srv);
		srv_http_stop(&srv);
		if (gone && !o->quiet)
			warn("process %d exited: the server stops", (int)srv.pid);
		status = gone ? served_status(o, fc.launched, exit_status) : CS_EXIT_OK;
	}
	srv_http_close(&srv);
	if (pidfd >= 0)
		close(pidfd);
	if (sigfd >= 0)
		close(sigfd);
	target_free(fc.launched);
	server_free(&srv);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	return status;
}
