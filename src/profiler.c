/* profiler: see profiler.h.
 *
 * The sampling loop is the session's (session_run: the tick clock, the
 * signalfd, the target's events); the profiler adds what a recording does
 * with a stop signal and the progress line drawn every second. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "builder.h"
#include "error.h"
#include "profiler.h"
#include "report.h"
#include "sampler.h"
#include "session.h"
#include "stackmap.h"
#include "target.h"
#include "tempfile.h"
#include "timeline.h"
#include "tracer.h"
#include "write.h"


struct run {
	const struct options *opt;
	struct session s;            /* target, stackmap, sampler, signalfd */
	uint64_t start_realtime_ns, start_ns, end_ns;
	int stop_signal;             /* the last stop signal received, or 0 */
	unsigned stop_signals;       /* how many were received */
	bool progress;               /* draw a status line on stderr */
	bool attached;               /* the session sampled (the tracer thread says) */
	struct timeline *timeline;   /* every sample in time order, for timeline outputs */
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void draw_progress(const struct run *r, uint64_t now)
{
	struct recorder_stats st;
	recorder_get_stats(r->s.recorder, &st);
	double elapsed = (double)(now - r->start_ns) / 1e9;
	char dur[32] = "";
	if (r->opt->duration > 0)
		snprintf(dur, sizeof dur, " / %.0fs", r->opt->duration);
	size_t nthreads = recorder_nthreads(r->s.recorder);
	fprintf(stderr, "\r\033[K[%.1fs%s] %llu samples, %zu %s, %.1f samples/s", elapsed, dur,
		(unsigned long long)st.samples, nthreads, nthreads == 1 ? "thread" : "threads",
		elapsed > 0 ? (double)st.samples / elapsed : 0.0);
	fflush(stderr);
}

/* A stop signal. Attach mode: any ends sampling. Launch mode: Ctrl-C
 * reached the program too (same process group), so sample on until it
 * exits; a second signal stops us. */
static bool on_stop_signal(void *ctx, int signo)
{
	struct run *r = ctx;
	r->stop_signal = signo;
	r->stop_signals++;
	return r->stop_signals > (r->opt->command ? 1u : 0u);
}

static int on_second(void *ctx, uint64_t now)
{
	draw_progress(ctx, now);
	return 0;
}

/* Sample until the duration elapses, a stop signal arrives, or every traced
 * process is gone. Returns 0 or -1 on a fatal error. */
static int sample_loop(struct run *r)
{
	struct session_hooks h = {
		.ctx = r, .on_stop_signal = on_stop_signal, .extra_fd = -1,
		.on_second = r->progress ? on_second : NULL,
	};
	enum session_end end = session_run(&r->s, r->start_ns, &h);
	if (r->progress)
		fputs("\r\033[K", stderr);
	return end == SESSION_END_ERROR ? -1 : 0;
}

/* ---- reporting -------------------------------------------------------------------- */

static int write_outputs(const struct run *r, const struct profile *p)
{
	const struct options *o = r->opt;
	struct write_options wo = { .threads = o->threads, .annotate = o->annotate };
	char deflt[128];
	struct output_spec def;
	const struct output_spec *outs = o->outputs;
	size_t nouts = o->noutputs;
	int status = CS_EXIT_OK;

	if (nouts == 0) {
		char date[32];
		time_t now = time(NULL);
		struct tm tm;
		strftime(date, sizeof date, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
		snprintf(deflt, sizeof deflt, "csampler-%d-%s.pb.gz", (int)p->pid, date);
		def.path = deflt;
		def.format = FORMAT_PPROF;
		outs = &def;
		nouts = 1;
	}
	for (size_t i = 0; i < nouts; i++) {
		if (write_output(p, outs[i].path, outs[i].format, &wo) < 0) {
			status = CS_EXIT_OUTPUT;
			continue;
		}
		if (strcmp(outs[i].path, "-") != 0)
			report_written(o, outs[i].path, outs[i].format, p->total_samples);
	}
	return status;
}

/* The tracer thread's part of a recording: attach or launch, sample, let
 * go. Returns 0, CS_EXIT_FAILURE when sampling failed (what was sampled is
 * still written), or the status to exit with when nothing was sampled. */
static int record(void *arg)
{
	struct run *r = arg;
	const struct options *o = r->opt;
	int status = session_attach(&r->s, o->max_stacks, NULL, NULL, NULL);
	if (status != 0)
		return status;
	r->attached = true;
	recorder_set_timeline(r->s.recorder, r->timeline);
	/* A closed stdout (-o - | head) must be an error we report, not a kill.
	 * Set after the launch fork: an ignored signal stays ignored across exec. */
	signal(SIGPIPE, SIG_IGN);
	r->progress = !o->quiet && isatty(STDERR_FILENO);
	report_start(o, target_main_pid(r->s.target));
	r->start_realtime_ns = clock_ns(CLOCK_REALTIME);
	r->start_ns = clock_ns(CLOCK_MONOTONIC);
	if (target_start(r->s.target) < 0) {
		session_detach(&r->s);
		r->attached = false;
		return CS_EXIT_FAILURE;
	}
	int loop = sample_loop(r);
	r->end_ns = clock_ns(CLOCK_MONOTONIC);
	session_detach(&r->s);
	sampler_close_threads(r->s.sampler);
	return loop < 0 ? CS_EXIT_FAILURE : 0;
}

int profiler_run(const struct options *o)
{

	struct run r = { .opt = o };
	for (size_t i = 0; i < o->noutputs; i++)
		if (write_output_check(o->outputs[i].path) < 0)
			return CS_EXIT_OUTPUT;
	int status = session_open(&r.s, o, 0);
	if (status != 0)
		return status;
	for (size_t i = 0; i < o->noutputs && !r.timeline; i++) {
		if (!write_format_is_timeline(o->outputs[i].format))
			continue;
		r.timeline = timeline_new(o->max_depth);
		if (!r.timeline) {
			warn_errno("cannot make the timeline");
			status = CS_EXIT_SYSTEM;
			goto out;
		}
	}
	status = tracer_run(record, &r);
	if (status < 0) {
		warn_errno("cannot start the tracer thread");
		status = CS_EXIT_SYSTEM;
	}
	if (!r.attached)
		goto out;
	struct sampler_stats sst;
	struct recorder_stats rst;
	sampler_get_stats(r.s.sampler, &sst);
	recorder_get_stats(r.s.recorder, &rst);
	/* Most stacks refused (a program that made itself non-dumpable after a
	 * sample or two of its start): the profile is not its profile. */
	if (rst.unreadable > 0 && rst.unreadable >= rst.samples && status == CS_EXIT_OK)
		status = CS_EXIT_PERMISSION;  /* said in the recorder's warning */

	report_summary(o, target_main_pid(r.s.target), &sst, &rst,
		       (double)(r.end_ns - r.start_ns) / 1e9);
	struct build_input in = {
		.opt = o, .recorder = r.s.recorder, .map = r.s.map, .timeline = r.timeline,
		.main_pid = target_main_pid(r.s.target), .start_ns = r.start_ns,
		.start_realtime_ns = r.start_realtime_ns,
		.duration_ns = r.end_ns - r.start_ns,
	};
	struct profile *p = builder_build(&in);
	if (!p) {
		status = CS_EXIT_SYSTEM;
		goto out;
	}
	int wstatus = write_outputs(&r, p);
	profile_free(p);
	struct stackmap_stats ms;
	stackmap_get_stats(r.s.map, &ms);
	if (ms.lost) {
		warn("%llu samples lost: the spill file in %s could not be written; the profile "
		     "lacks them", (unsigned long long)ms.lost, tempfile_dir());
		if (wstatus == CS_EXIT_OK && status == CS_EXIT_OK)
			status = CS_EXIT_SYSTEM;
	}
	if (r.timeline && timeline_lost(r.timeline)) {
		warn("%llu samples lost from the timeline: its file in %s could not be written",
		     (unsigned long long)timeline_lost(r.timeline), tempfile_dir());
		if (wstatus == CS_EXIT_OK && status == CS_EXIT_OK)
			status = CS_EXIT_SYSTEM;
	}
	if (wstatus != CS_EXIT_OK)
		status = wstatus;
	else if (status == CS_EXIT_OK && o->command)
		status = r.stop_signals > 1 ? 128 + r.stop_signal : target_wait_exit(r.s.target);
out:
	session_end(&r.s);
	timeline_free(r.timeline);
	return status;
}
