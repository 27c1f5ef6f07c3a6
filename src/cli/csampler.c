/* csampler: sample the stacks of a running native Linux program.
 * main: parse the options, run the mode they ask for (a recording, --top,
 * --dump or --serve), and return its exit status. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"
#include "error.h"
#include "options.h"
#include "dump.h"
#include "profiler.h"
#include "serve.h"
#include "session.h"
#include "target.h"
#include "top.h"

/* A closed descriptor 0, 1 or 2 would be reused by the first file csampler
 * opens (the signalfd, a temp file), and "-o -" or a message would then write
 * into it. Hold each closed one with /dev/null opened read-only, so that
 * writing to a closed stdout still fails (EBADF) with a clear message. */
static void hold_closed_standard_fds(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", O_RDONLY | O_NOCTTY) != fd)
			_exit(CS_EXIT_SYSTEM);
}

/* --backend=auto: resolved for what the mode and options need of it;
 * any other backend stays as given. */
static void resolve_backend(struct options *o)
{
	struct backend_needs needs = {
		.idle = o->idle, .dump = o->mode == MODE_DUMP,
		.per_sample_attach = o->seize_mode == TARGET_SEIZE_PER_SAMPLE,
	};
	o->backend = backend_resolve(o->backend, &needs);
}

/* --dump, its stop signals held from here to csampler's exit: one that
 * comes while the target is attached waits for the detach (killed in a stop
 * round, csampler would let go threads our interrupt woke with EINTR), then
 * the snapshot taken is printed and csampler exits as after a whole dump
 * (as a recording Ctrl-C'd writes its outputs). */
static int run_dump(const struct options *opts)
{
	struct dump_config dc;
	sigset_t stop;
	options_dump_config(opts, &dc);
	session_stop_signals(&stop);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	int status = dump_tree(&dc, stdout);
	struct timespec now = { 0, 0 };
	for (int sig; (sig = sigtimedwait(&stop, NULL, &now)) > 0;)
		if (!opts->quiet)
			warn("%s came during --dump: held until the target was let go",
			     sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" :
			     sig == SIGHUP ? "SIGHUP" : "SIGQUIT");
	return status;
}

int main(int argc, char **argv)
{
	struct options opts;
	int status;

	hold_closed_standard_fds();
	switch (options_parse(&opts, argc, argv)) {
	case OPTIONS_EXIT_OK:
		options_free(&opts);
		return CS_EXIT_OK;
	case OPTIONS_EXIT_USAGE:
		options_free(&opts);
		return CS_EXIT_USAGE;
	case OPTIONS_RUN:
		break;
	}
	resolve_backend(&opts);
	if (opts.pid || opts.ntids) {
		status = session_exit_status(
			target_resolve_threads(&opts.pid, opts.tids, opts.ntids, opts.quiet));
		if (status != 0) {
			options_free(&opts);
			return status;
		}
	}
	switch (opts.mode) {
	case MODE_DUMP:
		status = run_dump(&opts);
		break;
	case MODE_TOP:
		status = top_run(&opts);
		break;
	case MODE_SERVE:
		status = serve_run(&opts);
		break;
	case MODE_CONVERT:
		status = convert_run(&opts);
		break;
	case MODE_RECORD:
	default:
		status = profiler_run(&opts);
		break;
	}
	options_free(&opts);
	return status;
}
