/* csampler: sample the stacks of a running native Linux program.
 * main: parse the options, run one profile, map the result to an exit status. */
#include "config.h"

#include <stdlib.h>

#include "error.h"
#include "options.h"
#include "profiler.h"

int main(int argc, char **argv)
{
	struct options opts;
	int status;

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
	status = profiler_run(&opts);
	options_free(&opts);
	return status;
}
