/* serve: --serve, CPU profiles over HTTP for `go tool pprof URL`, Parca,
 * Grafana Alloy and the OpenTelemetry collector, from a process not made
 * for it.
 *
 * Each /debug/pprof/profile request is a window of its own. One sampling
 * stream (a session in a tracer thread) runs while any window is open and
 * feeds every open window (a stackmap each: recorder sinks), so concurrent
 * requests neither wait for each other nor sample the target twice; when the
 * last window closes the tracer thread exits and the target is untraced
 * (TracerPid 0) until the next request. The recorder (processes, mappings,
 * thread keys) and the symbolization cache live as long as the server, so
 * a binary's debug information is loaded once. Only the process given on
 * the command line (or the program launched) is ever profiled; the server
 * ends when it exits (passing a launched program's status) or on SIGTERM or
 * SIGINT, which answer every request in progress with a complete 503 and
 * exit 0. Returns the exit status (error.h). */
#ifndef CSAMPLER_SERVE_H
#define CSAMPLER_SERVE_H
#include "options.h"
int serve_run(const struct options *o);
#endif
