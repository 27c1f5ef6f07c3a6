/* libFuzzer harness for options_parse (src/options.c): the input is split on
 * NUL bytes into argv[1..] (argv[0] is "csampler"); parse, then free. Every
 * outcome must be one of the three results, a profile to run names what it
 * profiles (a command, -p, -t, or -i and outputs), and parsing never exits (no
 * exit() in the library; stdout goes to /dev/null, messages to stderr).
 * Built by make fuzz; replayed over corpus/options/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "options.h"

#define MAX_ARGS 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_text(data, size);
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	argv[argc++] = (char *)"csampler";
	for (size_t i = 0; i <= size && argc <= MAX_ARGS;) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;

	struct options o;
	enum options_result r = options_parse(&o, argc, argv);
	if (r != OPTIONS_RUN && r != OPTIONS_EXIT_OK && r != OPTIONS_EXIT_USAGE)
		abort();
	if (r == OPTIONS_RUN) {
		/* what validation promises the other rooms: one target (a
		 * command, or -p and/or -t), or an input to convert */
		if (o.mode == MODE_RECORD && !o.command && !o.pid && !o.ntids)
			abort();
		if (o.command && (o.pid || o.ntids))
			abort();
		if (o.mode != MODE_RECORD && o.mode != MODE_TOP && o.mode != MODE_DUMP &&
		    o.mode != MODE_SERVE && o.mode != MODE_CONVERT)
			abort();
		if ((o.mode == MODE_CONVERT) != (o.input != NULL))
			abort();
		if (o.mode == MODE_CONVERT && (o.noutputs == 0 || o.pid || o.command || o.ntids ||
					       o.diff != (o.input2 != NULL)))
			abort();
		if (o.ntids > OPTIONS_MAX_TIDS || o.nlabels > OPTIONS_MAX_LABELS)
			abort();
		for (size_t i = 0; i < o.nlabels; i++)
			if (!o.labels[i].key[0] || (o.labels[i].key[0] >= '0' && o.labels[i].key[0] <= '9') ||
			    strlen(o.labels[i].value) > OPTIONS_LABEL_VALUE_MAX)
				abort();
		/* --serve: an address, a bound on seconds, no file and no children */
		if ((o.mode == MODE_SERVE) != (o.serve_address != NULL))
			abort();
		if (o.mode == MODE_SERVE && (o.serve_max_seconds < 1 || o.serve_max_seconds > 86400 ||
					     o.noutputs != 0 || o.children || o.duration != 0))
			abort();
		if (o.rate < 1 || o.rate > 10000 || o.noutputs > OPTIONS_MAX_OUTPUTS ||
		    o.ngroups > OPTIONS_MAX_GROUPS)
			abort();
		for (size_t i = 0; i < o.noutputs; i++)
			if (!o.outputs[i].path || o.outputs[i].format == FORMAT_AUTO)
				abort();
	}
	options_free(&o);
	free(buf);
	return 0;
}
