/* libFuzzer harness for procmaps_parse_line (any bytes, any buffer size).
 * Built and run by make fuzz (tests/Makefile.am); replayed over
 * corpus/maps_line/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The first byte picks the path buffer size (0 = no buffer). */
	size_t pathsz = size > 0 ? data[0] % 64 : 0;
	if (size > 0 && data[0] == 0xff)
		pathsz = PROCMAPS_PATH_MAX;
	const char *line = size > 0 ? (const char *)data + 1 : (const char *)data;
	size_t len = size > 0 ? size - 1 : 0;
	char *path = pathsz ? malloc(pathsz) : NULL;
	struct procmaps_entry e;
	if (procmaps_parse_line(line, len, &e, path, pathsz) == 0) {
		if (e.start >= e.end || e.fd != -1 || e.path != NULL)
			abort();
		if (path && (strnlen(path, pathsz) >= pathsz || strlen(path) > len))
			abort();
	}
	free(path);
	return 0;
}
