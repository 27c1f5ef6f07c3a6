/* serve_http: the HTTP side of --serve (serve_internal.h), on
 * libmicrohttpd: one thread per connection (a profile request waits for
 * its window there), at most SERVE_MAX_CONNECTIONS connections and
 * SERVE_MAX_PER_CLIENT from one address, headers within
 * SERVE_CONNECTION_MEMORY bytes and SERVE_HEADER_DEADLINE seconds
 * (serve_guard.h), idle connections closed after SERVE_IDLE_TIMEOUT
 * seconds; one log line per request on stderr, and one per connection
 * refused or closed for its deadline. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "clock.h"
#include "error.h"
#include "escape.h"
#include "procfs.h"
#include "serve_guard.h"
#include "tempfile.h"
#include "serve_internal.h"

#define SERVE_MAX_CONNECTIONS 32
#define SERVE_CONNECTION_MEMORY (32 * 1024)
#define SERVE_MAX_PER_CLIENT 8
#define SERVE_HEADER_DEADLINE 10
#define SERVE_IDLE_TIMEOUT 60
#define SERVE_STOP_WAIT_NS (10 * 1000000000ull)  /* for requests in progress at exit */

struct http {
	int listen_fd;
	struct serve_address addr;
	bool unlink_socket;             /* we made addr.path */
	struct MHD_Daemon *daemon;
	bool quiesced;                  /* takes no new connection (under srv->lock) */
	struct serve_guard *guard;      /* connections bounded in number and time */
	char where[320];                /* what the log says we serve on */
};

/* One request, from its first line to its end (the log line). */
struct request {
	struct server *srv;
	uint64_t start_ns;
	char method[16];
	char uri[512];                  /* as sent (escaped when logged) */
	unsigned status;
	size_t bytes;
	bool abandoned;                 /* the client went away while it waited */
};

/* ---- listening --------------------------------------------------------------------- */

static int listen_unix(struct http *h)
{
	const char *path = h->addr.path;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	strcpy(sa.sun_path, path);
	struct stat st;
	/* a socket left by a csampler that was killed: nobody listens on it */
	if (lstat(path, &st) == 0) {
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		bool alive = probe >= 0 && S_ISSOCK(st.st_mode) &&
			     connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0;
		if (probe >= 0)
			close(probe);
		if (!S_ISSOCK(st.st_mode) || alive) {
			warn("cannot serve on unix:%s: %s", path, alive ? "another server listens on it"
				: "the file exists and is not a socket");
			return -1;
		}
		unlink(path);
	}
	h->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	mode_t old = umask(0177);  /* created 0600: only its owner may connect */
	int ok = h->listen_fd >= 0 && bind(h->listen_fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	umask(old);
	if (!ok) {
		warn_errno("cannot serve on unix:%s", path);
		return -1;
	}
	h->unlink_socket = true;
	snprintf(h->where, sizeof h->where, "unix:%s", path);
	return 0;
}

static int listen_tcp(struct http *h, const struct server *srv)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	}, *res = NULL;
	int err = getaddrinfo(h->addr.host, h->addr.port, &hints, &res);
	if (err != 0) {
		warn("cannot serve on %s: %s", srv->opt->serve_address, gai_strerror(err));
		return -1;
	}
	int saved = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		int one = 1;
		if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
		    bind(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			h->listen_fd = fd;
			break;
		}
		saved = errno;
		if (fd >= 0)
			close(fd);
	}
	freeaddrinfo(res);
	if (h->listen_fd < 0) {
		errno = saved;
		const char *hint = saved == EADDRINUSE ? " (another program listens there: pick another "
							 "port, or 0 for any free one)"
				 : saved == EACCES ? " (a port below 1024 needs root or "
						     "CAP_NET_BIND_SERVICE)"
				 : saved == EADDRNOTAVAIL ? " (no interface of this machine has that "
							    "address)" : "";
		warn("cannot serve on %s: %s%s", srv->opt->serve_address, strerror(saved), hint);
		return -1;
	}
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (getsockname(h->listen_fd, (struct sockaddr *)&ss, &len) == 0) {
		if (ss.ss_family == AF_INET6) {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
			port = ntohs(s6->sin6_port);
		} else {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
			port = ntohs(s4->sin_port);
		}
	}
	snprintf(h->where, sizeof h->where, ss.ss_family == AF_INET6 ? "http://[%s]:%u" :
		 "http://%s:%u", host, port);
	bool loopback = strcmp(host, "127.0.0.1") == 0 || strncmp(host, "127.", 4) == 0 ||
			strcmp(host, "::1") == 0;
	if (!loopback && !srv->token && !srv->opt->quiet)
		warn("serving on %s to anyone who can reach it: it can read the stacks of process "
		     "%d; give --serve-token-file to require a token", host, (int)srv->opt->pid);
	return 0;
}

int srv_http_listen(struct server *srv)
{
	struct http *h = calloc(1, sizeof *h);
	if (!h) {
		warn_errno("cannot set up the server");
		return CS_EXIT_SYSTEM;
	}
	h->listen_fd = -1;
	srv->http = h;
	char err[256];
	if (serve_parse_address(srv->opt->serve_address, &h->addr, err, sizeof err) < 0) {
		warn("%s", err);  /* (options checked it already) */
		return CS_EXIT_SERVE;
	}
	if ((h->addr.unix_socket ? listen_unix(h) : listen_tcp(h, srv)) < 0)
		return CS_EXIT_SERVE;
	if (listen(h->listen_fd, 64) < 0) {
		warn_errno("cannot serve on %s", h->where);
		return CS_EXIT_SERVE;
	}
	return 0;
}

/* ---- answers ------------------------------------------------------------------------ */

/* Response headers: name, value, ..., as a NULL-terminated array. */
#define HEADERS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Queue R (LEN bytes) with STATUS and the HEADERS. */
static enum MHD_Result queue_answer(struct MHD_Connection *conn, struct request *rq,
				    unsigned status, struct MHD_Response *r, size_t len,
				    const char *const *headers)
{
	for (; headers[0]; headers += 2)
		MHD_add_response_header(r, headers[0], headers[1]);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	rq->status = status;
	rq->bytes = len;
	return ret;
}

/* Answer with BODY (LEN bytes, malloc'd: the response frees it). */
static enum MHD_Result answer(struct MHD_Connection *conn, struct request *rq, unsigned status,
			      char *body, size_t len, const char *const *headers)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r)
		free(body);
	return r ? queue_answer(conn, rq, status, r, len, headers) : MHD_NO;
}

/* Answer with the LEN bytes of the file FD (closed when sent). */
static enum MHD_Result answer_file(struct MHD_Connection *conn, struct request *rq,
				   unsigned status, int fd, size_t len, const char *const *headers)
{
	struct MHD_Response *r = MHD_create_response_from_fd(len, fd);
	if (!r)
		close(fd);
	return r ? queue_answer(conn, rq, status, r, len, headers) : MHD_NO;
}

/* P in format F written to an unnamed temp file ($TMPDIR): its descriptor
 * and *LEN, or -1 with errno. A body goes through a file as the outputs
 * do: a speedscope timeline of a long window at a high rate runs to
 * hundreds of megabytes, and several requests at once must not hold them
 * in memory. */
static int body_file(const struct profile *p, enum output_format f,
		     const struct write_options *wo, size_t *len)
{
	int fd = tempfile_open(NULL, "serve-body");
	if (fd < 0)
		return -1;
	int wfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	FILE *out = wfd >= 0 ? fdopen(wfd, "w") : NULL;
	errno = 0;
	int failed = !out || write_to_stream(p, out, f, wo) < 0;
	int err = errno ? errno : EIO;
	if (out && fclose(out) != 0 && !failed) {
		failed = 1;
		err = errno ? errno : EIO;
	} else if (!out && wfd >= 0) {
		close(wfd);
	}
	off_t end = failed ? -1 : lseek(fd, 0, SEEK_END);
	if (end < 0) {
		close(fd);
		errno = failed ? err : errno;
		return -1;
	}
	*len = (size_t)end;
	return fd;
}

/* A one-line text answer. */
__attribute__((format(printf, 4, 5)))
static enum MHD_Result answer_text(struct MHD_Connection *conn, struct request *rq,
				   unsigned status, const char *fmt, ...)
{
	char *body = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return answer(conn, rq, status, body, (size_t)n,
		      HEADERS("Content-Type", "text/plain; charset=utf-8"));
}

/* An error a window or dump ended with, with Retry-After where retrying helps. */
static enum MHD_Result answer_failure(struct MHD_Connection *conn, struct request *rq,
				      unsigned status, const char *reason, unsigned retry_after)
{
	char *body = NULL, retry[16];
	int n = asprintf(&body, "%s\n", reason);
	if (n < 0)
		return MHD_NO;
	snprintf(retry, sizeof retry, "%u", retry_after);
	if (retry_after)
		return answer(conn, rq, status, body, (size_t)n,
			      HEADERS("Content-Type", "text/plain; charset=utf-8", "Retry-After", retry));
	return answer(conn, rq, status, body, (size_t)n,
		      HEADERS("Content-Type", "text/plain; charset=utf-8"));
}

static void html_text(FILE *f, const char *s)
{
	escape_xml(f, s, strlen(s), 200);
}

static enum MHD_Result answer_index(struct MHD_Connection *conn, struct request *rq)
{
	const struct server *srv = rq->srv;
	char comm[64] = "", *body = NULL;
	size_t len = 0;
	procfs_read_comm(srv->pid, comm, sizeof comm);
	FILE *f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>/debug/pprof/ (csampler)"
	      "</title></head>\n<body>\n<h1>/debug/pprof/</h1>\n<p>csampler profiles process ", f);
	fprintf(f, "%d (<code>", (int)srv->pid);
	html_text(f, comm);
	fputs("</code>) from outside: it samples its call stacks while a profile is being taken, "
	      "and does not trace it otherwise. CPU profiles only.</p>\n<table>\n", f);
	static const struct { const char *query, *what; } links[] = {
		{ "profile?seconds=30", "CPU profile of the next 30 seconds (pprof, gzipped): "
		  "<code>go tool pprof -http=: URL</code>" },
		{ "profile?seconds=10&amp;format=svg", "flame graph of the next 10 seconds (SVG)" },
		{ "profile?seconds=10&amp;format=folded", "folded stacks (for flamegraph.pl)" },
		{ "profile?seconds=10&amp;format=text", "text report" },
		{ "profile?seconds=10&amp;format=speedscope", "speedscope JSON (a timeline per thread)" },
		{ "dump", "every thread's stack now, as <code>csampler --dump</code> prints it" },
	};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
		fprintf(f, "<tr><td><a href=\"/debug/pprof/%s\">%s</a></td><td>%s</td></tr>\n",
			links[i].query, links[i].query, links[i].what);
	fprintf(f, "</table>\n<p>Parameters of <code>profile</code>: <code>seconds</code> (1 to %u, "
		"default %u), <code>hz</code> or <code>frequency</code> (default %u), "
		"<code>idle=1</code> (wall-clock: blocked threads too), <code>threads=1</code> (a "
		"root frame per thread), <code>tid=N</code> (that thread only; repeatable), "
		"<code>format=pprof|svg|folded|text|speedscope</code>.</p>\n"
		"</body></html>\n", srv->opt->serve_max_seconds, SERVE_DEFAULT_SECONDS,
		srv->opt->rate);
	if (fclose(f) != 0) {
		free(body);
		return MHD_NO;
	}
	return answer(conn, rq, 200, body, len, HEADERS("Content-Type", "text/html; charset=utf-8"));
}

/* ---- /debug/pprof/profile ------------------------------------------------------------- */

struct query_parse {
	struct serve_query q;
	unsigned max_seconds;
	char error[256];
	bool failed;
};

static enum MHD_Result query_param(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct query_parse *qp = cls;
	(void)kind;
	if (serve_query_set(&qp->q, key, value, qp->max_seconds, 10000, qp->error,
			    sizeof qp->error) < 0) {
		qp->failed = true;
		return MHD_NO;
	}
	return MHD_YES;
}

static const char *content_type(enum output_format f)
{
	const struct write_format_info *fi = write_format_info(f);
	return fi ? fi->mime : "application/octet-stream";
}

static const char *content_disposition(enum output_format f)
{
	const struct write_format_info *fi = write_format_info(f);
	return fi ? fi->disposition : NULL;
}

static int client_fd(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	return ci ? ci->connect_fd : -1;
}

static enum MHD_Result answer_profile(struct MHD_Connection *conn, struct request *rq)
{
	struct server *srv = rq->srv;
	const struct options *o = srv->opt;
	struct query_parse qp = {
		.q = { .seconds = SERVE_DEFAULT_SECONDS, .rate = o->rate, .idle = o->idle,
		       .threads = o->threads || o->ngroups, .format = FORMAT_PPROF },
		.max_seconds = o->serve_max_seconds,
	};
	if (qp.q.seconds > qp.max_seconds)
		qp.q.seconds = qp.max_seconds;
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, query_param, &qp);
	if (qp.failed)
		return answer_text(conn, rq, 400, "bad request: %s\n", qp.error);
	for (size_t i = 0; i < qp.q.ntids; i++) {
		char task[64];
		snprintf(task, sizeof task, "/proc/%d/task/%d", (int)srv->pid, qp.q.tids[i]);
		if (access(task, F_OK) != 0)
			return answer_text(conn, rq, 400, "bad request: tid %d is not a thread of "
					   "process %d\n", qp.q.tids[i], (int)srv->pid);
	}
	const struct backend_caps *caps = backend_caps(o->backend);
	if (qp.q.idle && caps && !caps->idle)
		return answer_text(conn, rq, 400, "bad request: idle=1 needs --backend=ptrace: this "
				   "csampler samples with %s: %s\n", caps->name, caps->idle_refusal);

	struct window *w = calloc(1, sizeof *w);
	if (!w)
		return MHD_NO;
	w->q = qp.q;
	pthread_mutex_lock(&srv->lock);
	srv_window_run(srv, w, client_fd(conn));
	unsigned retry = w->retry_after;
	pthread_mutex_unlock(&srv->lock);

	enum MHD_Result ret;
	if (w->profile) {
		struct write_options wo = { .threads = w->q.threads, .annotate = o->annotate };
		size_t len = 0;
		int fd = body_file(w->profile, w->q.format, &wo, &len);
		if (fd < 0) {
			warn_errno("serve: cannot write the profile (in %s)", tempfile_dir());
			ret = answer_failure(conn, rq, 500, "cannot write the profile", 0);
		} else if (content_disposition(w->q.format)) {
			ret = answer_file(conn, rq, 200, fd, len,
					  HEADERS("Content-Type", content_type(w->q.format),
						  "Content-Disposition",
						  content_disposition(w->q.format)));
		} else {
			ret = answer_file(conn, rq, 200, fd, len,
					  HEADERS("Content-Type", content_type(w->q.format)));
		}
		profile_free(w->profile);
	} else if (w->http_status == 0) {
		rq->abandoned = true;
		ret = MHD_NO;  /* the client went away: close */
	} else {
		ret = answer_failure(conn, rq, (unsigned)w->http_status, w->reason, retry);
	}
	free(w);
	return ret;
}

static enum MHD_Result answer_dump(struct MHD_Connection *conn, struct request *rq)
{
	struct server *srv = rq->srv;
	char reason[256] = "";
	int status = 200;
	size_t len = 0;
	pthread_mutex_lock(&srv->lock);
	char *text = srv_dump(srv, &len, &status, reason, sizeof reason);
	unsigned retry = status == 409 ? srv_busy_seconds(srv) : 0;
	pthread_mutex_unlock(&srv->lock);
	if (!text)
		return answer_failure(conn, rq, (unsigned)status, reason, retry);
	return answer(conn, rq, 200, text, len,
		      HEADERS("Content-Type", "text/plain; charset=utf-8"));
}

/* ---- the request's way ---------------------------------------------------------------- */

static struct serve_guard *http_guard(const struct server *srv)
{
	const struct http *h = srv->http;
	return h->guard;
}

/* The guard's slot of CONN (MHD_OPTION_NOTIFY_CONNECTION's socket context). */
static void *connection_slot(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct server *srv = cls;
	struct request *rq = *req_cls;
	(void)version;
	(void)upload_data;
	if (!rq)
		return MHD_NO;
	if (!rq->method[0])  /* the first call: the headers are all in */
		guard_headers_done(http_guard(srv), connection_slot(conn));
	snprintf(rq->method, sizeof rq->method, "%s", method);
	if (*upload_data_size) {
		*upload_data_size = 0;  /* a body is not for us: read and dropped */
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		char *body = strdup("csampler answers GET only\n");
		return body ? answer(conn, rq, 405, body, strlen(body),
				     HEADERS("Allow", "GET, HEAD",
					     "Content-Type", "text/plain; charset=utf-8"))
			    : MHD_NO;
	}
	const char *auth = NULL;
	size_t auth_len = 0;
	if (srv->token &&
	    (MHD_lookup_connection_value_n(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION,
					   strlen(MHD_HTTP_HEADER_AUTHORIZATION), &auth,
					   &auth_len) != MHD_YES ||
	     !serve_bearer_matches(auth, auth_len, srv->token, srv->token_len))) {
		char *body = strdup("this server needs the header 'Authorization: Bearer TOKEN'\n");
		return body ? answer(conn, rq, 401, body, strlen(body),
				     HEADERS("WWW-Authenticate", "Bearer realm=\"csampler\"",
					     "Content-Type", "text/plain; charset=utf-8"))
			    : MHD_NO;
	}
	switch (serve_route(url)) {
	case SERVE_ROUTE_INDEX:
		return answer_index(conn, rq);
	case SERVE_ROUTE_PROFILE:
		return answer_profile(conn, rq);
	case SERVE_ROUTE_DUMP:
		return answer_dump(conn, rq);
	case SERVE_ROUTE_GO_ONLY:
		return answer_text(conn, rq, 404, "csampler serves CPU profiles only: "
				   "/debug/pprof/profile (and /debug/pprof/dump); the others are "
				   "the Go runtime's\n");
	case SERVE_ROUTE_NONE:
		break;
	}
	return answer_text(conn, rq, 404, "not found: csampler serves /debug/pprof/profile "
			   "(see /debug/pprof/)\n");
}

/* The request's start: its line, for the log (MHD_OPTION_URI_LOG_CALLBACK). */
static void *on_request_start(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct server *srv = cls;
	(void)conn;
	struct request *rq = calloc(1, sizeof *rq);
	if (!rq)
		return NULL;
	rq->srv = srv;
	rq->start_ns = clock_monotonic_ns();
	snprintf(rq->uri, sizeof rq->uri, "%s", uri ? uri : "");
	pthread_mutex_lock(&srv->lock);
	srv->requests++;
	pthread_mutex_unlock(&srv->lock);
	return rq;
}

static void client_name(struct MHD_Connection *conn, char *out, size_t size)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	char host[INET6_ADDRSTRLEN];
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		snprintf(out, size, "%s:%u", inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host),
			 ntohs(s4->sin_port));
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		snprintf(out, size, "[%s]:%u", inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host),
			 ntohs(s6->sin6_port));
	} else {
		snprintf(out, size, "unix");
	}
}

/* A connection accepted or closed (MHD_OPTION_NOTIFY_CONNECTION). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct server *srv = cls;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		guard_closed(http_guard(srv), *socket_context);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn,
		MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ca = MHD_get_connection_info(conn,
		MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ca ? ca->client_addr : NULL;
	socklen_t len = !sa ? 0 : sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
			sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(sa_family_t);
	guard_opened(http_guard(srv), fd ? fd->connect_fd : -1, sa, len, socket_context,
		     clock_monotonic_ns());
}

/* Whether a new connection may be accepted (libmicrohttpd's policy hook). */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct server *srv = cls;
	return guard_admit(http_guard(srv), addr, len) ? MHD_YES : MHD_NO;
}

/* The request's end: its log line (MHD_OPTION_NOTIFY_COMPLETED). */
static void on_request_done(void *cls, struct MHD_Connection *conn, void **req_cls,
			    enum MHD_RequestTerminationCode toe)
{
	struct server *srv = cls;
	struct request *rq = *req_cls;
	if (!rq)
		return;
	*req_cls = NULL;
	guard_answered(http_guard(srv), connection_slot(conn), clock_monotonic_ns());
	if (!srv->opt->quiet) {
		char client[INET6_ADDRSTRLEN + 16], uri[sizeof rq->uri * 4], method[64];
		client_name(conn, client, sizeof client);
		escape_terminal(rq->uri, uri, sizeof uri);
		escape_terminal(rq->method, method, sizeof method);
		const char *end = rq->abandoned ? " (client went away: not answered)"
				  : toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? ""
				  : toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED ? " (timed out)"
				  : toe == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN ? " (shut down)"
				  : toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT ? " (client went away)"
				  : " (connection failed)";
		double secs = (double)(clock_monotonic_ns() - rq->start_ns) / 1e9;
		if (!rq->method[0])  /* libmicrohttpd answered it before our handler */
			fprintf(stderr, "csampler: %s %s refused: malformed or oversized request "
				"%.3fs\n", client, uri, secs);
		else
			fprintf(stderr, "csampler: %s %s %s %u %zu bytes %.3fs%s\n", client, method,
				uri, rq->status, rq->bytes, secs, end);
	}
	free(rq);
	pthread_mutex_lock(&srv->lock);
	srv->requests--;
	pthread_cond_broadcast(&srv->changed);
	pthread_mutex_unlock(&srv->lock);
}

__attribute__((format(printf, 2, 0)))
static void on_mhd_error(void *cls, const char *fmt, va_list ap)
{
	struct server *srv = cls;
	if (srv->opt->verbose) {
		fputs("csampler: libmicrohttpd: ", stderr);
		vfprintf(stderr, fmt, ap);
	}
}

int srv_http_start(struct server *srv)
{
	struct http *h = srv->http;
	h->guard = guard_new(SERVE_MAX_CONNECTIONS, SERVE_MAX_PER_CLIENT, SERVE_HEADER_DEADLINE,
			     srv->opt->quiet);
	if (!h->guard || guard_start(h->guard) < 0) {
		warn_errno("cannot serve on %s", h->where);
		return CS_EXIT_SYSTEM;
	}
	/* (libmicrohttpd's own limit one above the guard's: the guard refuses
	 * first, and says so) */
	h->daemon = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
		MHD_USE_ITC | MHD_USE_ERROR_LOG, 0, on_accept, srv, on_request, srv,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_error, srv,
		MHD_OPTION_LISTEN_SOCKET, h->listen_fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_MAX_CONNECTIONS + 1,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_CONNECTION_MEMORY,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_IDLE_TIMEOUT,
		MHD_OPTION_URI_LOG_CALLBACK, on_request_start, srv,
		MHD_OPTION_NOTIFY_COMPLETED, on_request_done, srv,
		MHD_OPTION_END);
	if (!h->daemon) {
		warn("cannot serve on %s: libmicrohttpd refused to start", h->where);
		return CS_EXIT_SERVE;
	}
	if (!srv->opt->quiet) {
		char comm[64] = "", safe[256];
		procfs_read_comm(srv->pid, comm, sizeof comm);
		escape_terminal(comm, safe, sizeof safe);
		fprintf(stderr, "csampler: serving %s/debug/pprof/ for process %d (%s)\n",
			h->addr.unix_socket ? "http://localhost" : h->where, (int)srv->pid, safe);
		if (h->addr.unix_socket)
			fprintf(stderr, "csampler: on the socket %s: curl --unix-socket %s "
				"http://localhost/debug/pprof/profile\n", h->where, h->addr.path);
	}
	return 0;
}

void srv_http_quiesce(struct server *srv)
{
	struct http *h = srv->http;
	pthread_mutex_lock(&srv->lock);
	if (h && h->daemon && !h->quiesced) {
		MHD_quiesce_daemon(h->daemon);  /* the socket stays ours */
		h->quiesced = true;
	}
	pthread_mutex_unlock(&srv->lock);
}

void srv_http_stop(struct server *srv)
{
	struct http *h = srv->http;
	if (!h || !h->daemon)
		return;
	srv_http_quiesce(srv);
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += SERVE_STOP_WAIT_NS / 1000000000u;
	pthread_mutex_lock(&srv->lock);
	while (srv->requests > 0 &&
	       pthread_cond_timedwait(&srv->changed, &srv->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&srv->lock);
	MHD_stop_daemon(h->daemon);
	h->daemon = NULL;
}

void srv_http_close(struct server *srv)
{
	struct http *h = srv->http;
	if (!h)
		return;
	if (h->daemon) {
		MHD_quiesce_daemon(h->daemon);  /* (the socket is ours to close) */
		MHD_stop_daemon(h->daemon);
	}
	guard_free(h->guard);  /* (every connection closed with the daemon) */
	if (h->listen_fd >= 0)
		close(h->listen_fd);
	if (h->unlink_socket)
		unlink(h->addr.path);
	free(h);
	srv->http = NULL;
}
