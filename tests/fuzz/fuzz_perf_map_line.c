/* libFuzzer harness for procmaps_parse_perf_map_line (any bytes, any size).
 * Built and run by make fuzz (tests/Makefile.am); replayed over
 * corpus/perf_map_line/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The first byte picks the name buffer size (0 must be refused). */
	size_t namesz = size > 0 ? data[0] % 64 : 0;
	const char *line = size > 0 ? (const char *)data + 1 : (const char *)data;
	size_t len = size > 0 ? size - 1 : 0;
	char *name = malloc(namesz ? namesz : 1);
	uint64_t start, sz;
	int r = procmaps_parse_perf_map_line(line, len, &start, &sz, name, namesz);
	if (r == 0) {
		if (namesz == 0 || sz > UINT64_MAX - start)
			abort();
		if (strnlen(name, namesz) >= namesz || strlen(name) > len)
			abort();
	}
	free(name);
	return 0;
}
