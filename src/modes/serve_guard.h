/* serve_guard: --serve's connections bounded in number and in time, so that
 * no client (a slow one, a hostile one, a flood from one address) keeps the
 * others from being answered.
 *   - at most MAX_CONNS connections, and MAX_PER_CLIENT from one client
 *     address (the port not counted; every unix-socket client is one);
 *   - a request's headers complete within HEADER_DEADLINE_S seconds of the
 *     connection (or of the previous answer on a kept-alive connection),
 *     else the connection is shut down: a client dripping one header byte
 *     at a time, or sending bytes that never make a request, holds its
 *     slot that long, not until the idle timeout;
 *   - each refusal and each connection closed for its deadline is logged
 *     on stderr (unless QUIET), refusals at most once a second with a
 *     count of those not logged.
 * guard_admit, guard_opened, guard_closed, guard_headers_done and
 * guard_answered are called from libmicrohttpd's threads; guard_expire
 * from the guard's own thread (guard_start), or directly by a test. All
 * take the guard's lock. */
#ifndef CSAMPLER_SERVE_GUARD_H
#define CSAMPLER_SERVE_GUARD_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct serve_guard;

struct serve_guard *guard_new(unsigned max_conns, unsigned max_per_client,
			      unsigned header_deadline_s, bool quiet);
/* Whether a connection from ADDR may be accepted now (refusals logged). */
bool guard_admit(struct serve_guard *g, const struct sockaddr *addr, socklen_t len);
/* Connection FD from ADDR accepted; *SLOT gets what names it (NULL when
 * the guard has no room: never, after guard_admit said yes). */
void guard_opened(struct serve_guard *g, int fd, const struct sockaddr *addr, socklen_t len,
		  void **slot, uint64_t now_ns);
void guard_closed(struct serve_guard *g, void *slot);
/* The current request's headers are all in (its deadline no longer runs). */
void guard_headers_done(struct serve_guard *g, void *slot);
/* The request was answered: on a kept-alive connection the next request's
 * headers have HEADER_DEADLINE_S from NOW_NS. */
void guard_answered(struct serve_guard *g, void *slot, uint64_t now_ns);
/* Shut down the connections whose headers are overdue at NOW_NS; how many. */
unsigned guard_expire(struct serve_guard *g, uint64_t now_ns);
/* The thread that calls guard_expire every second. 0, or -1 with errno. */
int guard_start(struct serve_guard *g);
/* Stops the thread; frees G. */
void guard_free(struct serve_guard *g);

#endif
