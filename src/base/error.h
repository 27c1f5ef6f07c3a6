/* error: one family of messages on stderr, and the exit statuses csampler uses.
 *
 * Every message is one line "csampler: <text>\n". die() runs the cleanup hook
 * (which detaches every tracee) before exiting, so no exit path leaves the
 * target stopped or traced. The statuses below are documented in csampler(1). */
#ifndef CSAMPLER_ERROR_H
#define CSAMPLER_ERROR_H

enum cs_exit {
	CS_EXIT_OK = 0,
	CS_EXIT_FAILURE = 1,      /* runtime failure not covered below */
	CS_EXIT_USAGE = 64,       /* bad option, value or combination */
	CS_EXIT_NO_PROCESS = 65,  /* no such process */
	CS_EXIT_BAD_TARGET = 66,  /* zombie, kernel thread, csampler itself or an ancestor */
	CS_EXIT_PERMISSION = 67,  /* ptrace refused: EPERM (with a diagnosis) */
	CS_EXIT_TRACED = 68,      /* the target is already traced by another process */
	CS_EXIT_OUTPUT = 69,      /* an output file could not be written */
	CS_EXIT_INTERNAL = 70,    /* a bug in csampler */
	CS_EXIT_SYSTEM = 71,      /* the system refused a resource (memory, fds, ...) */
	CS_EXIT_SERVE = 72,       /* --serve: the address cannot be served, or the token
	                           * file read */
	CS_EXIT_INPUT = 73,       /* -i: the input cannot be read, or is not a profile read */
	CS_EXIT_NOT_EXEC = 126,   /* launch: command found but not executable */
	CS_EXIT_NOT_FOUND = 127,  /* launch: command not found */
};

/* Print "csampler: MSG". */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "csampler: MSG: strerror(errno)". */
void warn_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Run the cleanup hook (once), print "csampler: MSG", exit with STATUS. */
_Noreturn void die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Install the hook die() runs before exiting (NULL removes it). */
void error_set_cleanup(void (*fn)(void *arg), void *arg);

#endif
