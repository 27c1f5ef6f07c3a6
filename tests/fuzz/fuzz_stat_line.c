/* libFuzzer harness for procfs' parsers of target-written text:
 * procfs_parse_stat (the text of /proc/TID/stat: any bytes up to a NUL, the
 * comm above all), procfs_parse_schedstat and procfs_status_field/long. Built and run by make fuzz
 * (tests/Makefile.am); replayed over corpus/stat_line/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct procfs_stat st;
	if (procfs_parse_stat(text, &st)) {
		if (strlen(st.comm) >= sizeof st.comm || st.state == '\0' || st.cpu < -1)
			abort();
		/* the comm is a piece of the text between its parentheses */
		if (st.comm[0] && !strstr(text, st.comm))
			abort();
	}
	struct procfs_schedstat ss;
	(void)procfs_parse_schedstat(text, &ss);
	/* a status field's value is a piece of the text, after its name */
	const char *v = procfs_status_field(text, "State");
	if (v && (v < text || v > text + size))
		abort();
	(void)procfs_status_long(text, "TracerPid", -1);
	free(text);
	return 0;
}
