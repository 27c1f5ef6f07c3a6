/* replay: run a libFuzzer harness over files without libFuzzer, so make
 * check replays every kept input (seeds and past findings) with the normal
 * compiler, sanitizers if configured. Arguments are files or directories;
 * with none, CORPUS_DIR (set at build time) is replayed. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *bigger = realloc(buf, cap *= 2);
			if (!bigger)
				free(buf);
			buf = bigger;
		}
	}
	fclose(f);
	if (!buf)
		return -1;
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int replay_path(const char *path, unsigned *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	struct dirent **names;
	int n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		perror(path);
		return -1;
	}
	int r = 0;
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			char sub[4096];
			snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name);
			if (replay_path(sub, count) != 0)
				r = -1;
		}
		free(names[i]);
	}
	free(names);
	return r;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int r = 0;
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	if (argc < 2)
		r = replay_path(CORPUS_DIR, &count);
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i], &count) != 0)
			r = -1;
	fprintf(stderr, "replayed %u inputs\n", count);
	return r == 0 && count > 0 ? 0 : 1;
}
