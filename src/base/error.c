/* error: see error.h. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* The cleanup hook: the one piece of process-wide state outside the signal
 * flag, because die() may be called from any depth and must detach first. */
static struct {
	void (*fn)(void *);
	void *arg;
} cleanup_hook;

__attribute__((format(printf, 1, 0)))
static void vmessage(const char *fmt, va_list ap, int errnum)
{
	char buf[1024];
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	if (n < 0)
		buf[0] = '\0';
	if (errnum)
		fprintf(stderr, "csampler: %s: %s\n", buf, strerror(errnum));
	else
		fprintf(stderr, "csampler: %s\n", buf);
}

void warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmessage(fmt, ap, 0);
	va_end(ap);
}

void warn_errno(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;
	va_start(ap, fmt);
	vmessage(fmt, ap, errnum);
	va_end(ap);
	errno = errnum;
}

void error_set_cleanup(void (*fn)(void *arg), void *arg)
{
	cleanup_hook.fn = fn;
	cleanup_hook.arg = arg;
}

void die(int status, const char *fmt, ...)
{
	void (*fn)(void *) = cleanup_hook.fn;
	va_list ap;

	cleanup_hook.fn = NULL;
	if (fn)
		fn(cleanup_hook.arg);
	va_start(ap, fmt);
	vmessage(fmt, ap, 0);
	va_end(ap);
	exit(status);
}
