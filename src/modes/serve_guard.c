/* serve_guard: --serve's connections bounded in number and time (see
 * serve_guard.h). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "clock.h"
#include "serve_guard.h"

#define GUARD_LOG_GAP_NS 1000000000ull   /* refusals: one line a second at most */

struct guard_slot {
	bool used;
	int fd;
	char client[INET6_ADDRSTRLEN];  /* the address, no port: the client's key */
	char shown[INET6_ADDRSTRLEN + 8];  /* for the log, with the port */
	uint64_t deadline_ns;           /* headers due by then; 0: not running */
};

struct serve_guard {
	pthread_mutex_t lock;
	pthread_cond_t stop_cond;
	pthread_t thread;
	bool thread_running, stopping, quiet;
	unsigned max_conns, max_per_client;
	uint64_t deadline_ns;           /* the header deadline, as a span */
	unsigned open;
	uint64_t last_refusal_log_ns, refusals_unlogged;
	struct guard_slot *slots;       /* max_conns of them */
};

/* ADDR as its client key (the address without the port) and as shown. */
static void client_of(const struct sockaddr *addr, socklen_t len, char *key, size_t keysz,
		      char *shown, size_t shownsz)
{
	char host[INET6_ADDRSTRLEN] = "unix";
	unsigned port = 0;
	if (addr && addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)addr;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
		port = ntohs(s4->sin_port);
	} else if (addr && addr->sa_family == AF_INET6 &&
		   len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)addr;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
		port = ntohs(s6->sin6_port);
	}
	snprintf(key, keysz, "%s", host);
	if (port == 0)
		snprintf(shown, shownsz, "%s", host);
	else if (addr->sa_family == AF_INET6)
		snprintf(shown, shownsz, "[%s]:%u", host, port);
	else
		snprintf(shown, shownsz, "%s:%u", host, port);
}

struct serve_guard *guard_new(unsigned max_conns, unsigned max_per_client,
			      unsigned header_deadline_s, bool quiet)
{
	struct serve_guard *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->slots = calloc(max_conns ? max_conns : 1, sizeof *g->slots);
	if (!g->slots) {
		free(g);
		return NULL;
	}
	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->stop_cond, &ca);
	pthread_condattr_destroy(&ca);
	g->max_conns = max_conns;
	g->max_per_client = max_per_client;
	g->deadline_ns = (uint64_t)header_deadline_s * 1000000000u;
	g->quiet = quiet;
	return g;
}

/* Log a refusal of SHOWN (lock held), at most one line a second. */
static void log_refusal(struct serve_guard *g, const char *shown, const char *why)
{
	uint64_t now = clock_monotonic_ns();
	if (g->quiet)
		return;
	if (g->last_refusal_log_ns && now - g->last_refusal_log_ns < GUARD_LOG_GAP_NS) {
		g->refusals_unlogged++;
		return;
	}
	char more[64] = "";
	if (g->refusals_unlogged)
		snprintf(more, sizeof more, " (and %llu more refused before it)",
			 (unsigned long long)g->refusals_unlogged);
	fprintf(stderr, "csampler: %s refused: %s%s\n", shown, why, more);
	g->refusals_unlogged = 0;
	g->last_refusal_log_ns = now;
}

bool guard_admit(struct serve_guard *g, const struct sockaddr *addr, socklen_t len)
{
	char key[INET6_ADDRSTRLEN], shown[INET6_ADDRSTRLEN + 8], why[128];
	client_of(addr, len, key, sizeof key, shown, sizeof shown);
	pthread_mutex_lock(&g->lock);
	unsigned same = 0;
	for (unsigned i = 0; i < g->max_conns; i++)
		same += g->slots[i].used && strcmp(g->slots[i].client, key) == 0;
	bool ok = g->open < g->max_conns && same < g->max_per_client;
	if (!ok) {
		if (g->open >= g->max_conns)
			snprintf(why, sizeof why, "the server holds its %u connections", g->max_conns);
		else
			snprintf(why, sizeof why, "%u connections from %s already (at most %u per client)",
				 same, key, g->max_per_client);
		log_refusal(g, shown, why);
	}
	pthread_mutex_unlock(&g->lock);
	return ok;
}

void guard_opened(struct serve_guard *g, int fd, const struct sockaddr *addr, socklen_t len,
		  void **slot, uint64_t now_ns)
{
	*slot = NULL;
	pthread_mutex_lock(&g->lock);
	for (unsigned i = 0; i < g->max_conns; i++) {
		struct guard_slot *s = &g->slots[i];
		if (s->used)
			continue;
		s->used = true;
		s->fd = fd;
		client_of(addr, len, s->client, sizeof s->client, s->shown, sizeof s->shown);
		s->deadline_ns = now_ns + g->deadline_ns;
		g->open++;
		*slot = s;
		break;
	}
	pthread_mutex_unlock(&g->lock);
}

void guard_closed(struct serve_guard *g, void *slot)
{
	struct guard_slot *s = slot;
	if (!s)
		return;
	pthread_mutex_lock(&g->lock);
	s->used = false;
	s->fd = -1;
	g->open--;
	pthread_mutex_unlock(&g->lock);
}

static void set_deadline(struct serve_guard *g, struct guard_slot *s, uint64_t deadline_ns)
{
	if (!s)
		return;
	pthread_mutex_lock(&g->lock);
	s->deadline_ns = deadline_ns;
	pthread_mutex_unlock(&g->lock);
}

void guard_headers_done(struct serve_guard *g, void *slot)
{
	set_deadline(g, slot, 0);
}

void guard_answered(struct serve_guard *g, void *slot, uint64_t now_ns)
{
	set_deadline(g, slot, now_ns + g->deadline_ns);
}

unsigned guard_expire(struct serve_guard *g, uint64_t now_ns)
{
	unsigned n = 0;
	pthread_mutex_lock(&g->lock);
	for (unsigned i = 0; i < g->max_conns; i++) {
		struct guard_slot *s = &g->slots[i];
		if (!s->used || !s->deadline_ns || now_ns < s->deadline_ns)
			continue;
		/* (the descriptor is libmicrohttpd's and open: it closes it only
		 * after guard_closed, which waits for this lock) */
		shutdown(s->fd, SHUT_RDWR);
		s->deadline_ns = 0;
		n++;
		if (!g->quiet)
			fprintf(stderr, "csampler: %s closed: no complete request within %llu s\n",
				s->shown, (unsigned long long)(g->deadline_ns / 1000000000u));
	}
	pthread_mutex_unlock(&g->lock);
	return n;
}

static void *guard_thread(void *arg)
{
	struct serve_guard *g = arg;
	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&g->stop_cond, &g->lock, &until);
		if (g->stopping)
			break;
		pthread_mutex_unlock(&g->lock);
		guard_expire(g, clock_monotonic_ns());
		pthread_mutex_lock(&g->lock);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int guard_start(struct serve_guard *g)
{
	int err = pthread_create(&g->thread, NULL, guard_thread, g);
	if (err) {
		errno = err;
		return -1;
	}
	g->thread_running = true;
	return 0;
}

void guard_free(struct serve_guard *g)
{
	if (!g)
		return;
	if (g->thread_running) {
		pthread_mutex_lock(&g->lock);
		g->stopping = true;
		pthread_cond_signal(&g->stop_cond);
		pthread_mutex_unlock(&g->lock);
		pthread_join(g->thread, NULL);
	}
	pthread_cond_destroy(&g->stop_cond);
	pthread_mutex_destroy(&g->lock);
	free(g->slots);
	free(g);
}
