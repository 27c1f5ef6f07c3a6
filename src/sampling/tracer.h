/* tracer: the thread that is the ptrace tracer of a session.
 *
 * ptrace ties a tracee to the tracer *thread*. When that thread exits, the
 * kernel detaches every tracee without stopping or waking it (exit_ptrace):
 * a thread blocked in epoll_wait, sigtimedwait or a socket read stays
 * blocked and never sees EINTR; a group-stop is kept; a signal-delivery-stop
 * goes on to deliver its signal; a pending interrupt is cancelled (but a
 * blocked call it already woke returns EINTR: target_detach first takes
 * the stops its interrupts still owe). That is
 * how csampler detaches: every ptrace call of a session is made in one
 * tracer thread, and the session ends by returning from it. csampler never
 * uses PTRACE_O_EXITKILL, so its own death (even SIGKILL) detaches the same way.
 *
 * tracer_run(FN, ARG) runs FN(ARG) in a new thread, which inherits the
 * caller's signal mask (block the session's signals first; SIGCHLD, which
 * the tracer takes, is blocked in the caller while the thread lives), and
 * returns FN's value once that thread is gone, when every tracee is
 * released. If no thread can be made, it returns -1 with errno set and FN is
 * not run. */
#ifndef CSAMPLER_TRACER_H
#define CSAMPLER_TRACER_H

int tracer_run(int (*fn)(void *arg), void *arg);

#endif
