/* libFuzzer harness for blocked_parse (the text of /proc/TID/syscall: any
 * bytes). Built and run by make fuzz (tests/Makefile.am); replayed over
 * corpus/syscall_line/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "blocked.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct blocked_syscall bs;
	enum blocked_state st = blocked_parse(text, &bs);
	if (st != BLOCKED_IN_KERNEL && st != BLOCKED_RUNNING && st != BLOCKED_MALFORMED)
		abort();
	if (st == BLOCKED_IN_KERNEL && (bs.nr < -1 || bs.nr > 4095))
		abort();
	if (st == BLOCKED_IN_KERNEL && bs.nr == -1)
		for (int i = 0; i < 6; i++)
			if (bs.args[i] != 0)
				abort();
	free(text);
	return 0;
}
