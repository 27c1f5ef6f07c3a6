/* Unit tests for procmaps: the maps and perf-map line parsers on a table of
 * good and bad lines, refresh on this very process (its own code, libc, the
 * vdso, mappings appearing and going away, exec), a dead process, and JIT
 * symbols from a /tmp/perf-PID.map written for this process. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "procmaps.h"

/* ---- /proc/PID/maps lines ------------------------------------------------- */

struct maps_case {
	const char *line;
	int ret;
	uint64_t start, end, offset, inode;
	unsigned major, minor;
	const char *perms;
	bool deleted;
	const char *path;
};

static const struct maps_case maps_cases[] = {
	{ "55aa06949000-55aa0694b000 r-xp 00002000 fe:00 247498                     /usr/bin/head\n",
	  0, 0x55aa06949000, 0x55aa0694b000, 0x2000, 247498, 0xfe, 0, "r-xp", false, "/usr/bin/head" },
	{ "55aa06949000-55aa0694b000 r--p 00000000 fe:00 247498 /usr/bin/head",
	  0, 0x55aa06949000, 0x55aa0694b000, 0, 247498, 0xfe, 0, "r--p", false, "/usr/bin/head" },
	{ "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n",
	  0, 0x7f0000000000, 0x7f0000001000, 0, 0, 0, 0, "rw-p", false, "" },
	{ "7f0000000000-7f0000001000 ---p 00000000 00:00 0",
	  0, 0x7f0000000000, 0x7f0000001000, 0, 0, 0, 0, "---p", false, "" },
	{ "7ffe39f19000-7ffe39f3a000 rw-p 00000000 00:00 0                          [stack]\n",
	  0, 0x7ffe39f19000, 0x7ffe39f3a000, 0, 0, 0, 0, "rw-p", false, "[stack]" },
	{ "7f4671882000-7f4671884000 r-xp 00000000 00:00 0                          [vdso]\n",
	  0, 0x7f4671882000, 0x7f4671884000, 0, 0, 0, 0, "r-xp", false, "[vdso]" },
	{ "7f4671882000-7f4671884000 rw-s 00000000 00:05 12 [anon:my region]\n",
	  0, 0x7f4671882000, 0x7f4671884000, 0, 12, 0, 5, "rw-s", false, "[anon:my region]" },
	{ "1000-2000 r-xp 00000010 08:11 42       /opt/my app/lib thing.so\n",
	  0, 0x1000, 0x2000, 0x10, 42, 8, 0x11, "r-xp", false, "/opt/my app/lib thing.so" },
	{ "1000-2000 r-xp 00000000 08:01 42 /tmp/gone.so (deleted)\n",
	  0, 0x1000, 0x2000, 0, 42, 8, 1, "r-xp", true, "/tmp/gone.so" },
	{ "1000-2000 r-xp 00000000 08:01 42 /tmp/a (deleted) b\n",
	  0, 0x1000, 0x2000, 0, 42, 8, 1, "r-xp", false, "/tmp/a (deleted) b" },
	{ "ffffffffff600000-ffffffffffffffff --xp 00000000 00:00 0 [vsyscall]\n",
	  0, 0xffffffffff600000, 0xffffffffffffffff, 0, 0, 0, 0, "--xp", false, "[vsyscall]" },
	{ "1000-2000 r-xp ffffffffffffffff fff:fffff 18446744073709551615 /x\n",
	  0, 0x1000, 0x2000, UINT64_MAX, UINT64_MAX, 0xfff, 0xfffff, "r-xp", false, "/x" },
	{ .line = "1000-2000 r-xP 00000000 00:00 0", .ret = -1 },
	/* malformed */
	{ .line = "", .ret = -1 },
	{ .line = "\n", .ret = -1 },
	{ .line = "1000", .ret = -1 },
	{ .line = "1000-", .ret = -1 },
	{ .line = "1000-2000", .ret = -1 },
	{ .line = "1000-2000 ", .ret = -1 },
	{ .line = "1000-2000 r-x", .ret = -1 },
	{ .line = "1000-2000 rwxq 0 0:0 0", .ret = -1 },
	{ .line = "1000-2000 xwrp 0 0:0 0", .ret = -1 },
	{ .line = "1000-2000 r-xp 0 0:0", .ret = -1 },
	{ .line = "1000-2000 r-xp 0 00 0", .ret = -1 },
	{ .line = "1000-2000 r-xp 0 0:0 x", .ret = -1 },
	{ .line = "1000-2000 r-xp 0 0:0 0/x", .ret = -1 },
	{ .line = "2000-1000 r-xp 0 0:0 0", .ret = -1 },
	{ .line = "1000-1000 r-xp 0 0:0 0", .ret = -1 },
	{ .line = "g000-2000 r-xp 0 0:0 0", .ret = -1 },
	{ .line = "-1000-2000 r-xp 0 0:0 0", .ret = -1 },
	{ .line = " 1000-2000 r-xp 0 0:0 0", .ret = -1 },
	{ .line = "10000000000000000-20000000000000000 r-xp 0 0:0 0", .ret = -1 },
	{ .line = "1000-2000 r-xp 10000000000000000 0:0 0", .ret = -1 },
	{ .line = "1000-2000 r-xp 0 100000000:0 0", .ret = -1 },
	{ .line = "1000-2000 r-xp 0 0:100000000 0", .ret = -1 },
	{ .line = "1000-2000 r-xp 0 0:0 18446744073709551616 /x", .ret = -1 },
	{ .line = "1000-2000 r-xp 0 0:0 99999999999999999999999 /x", .ret = -1 },
};

static void test_parse_maps_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(maps_cases) / sizeof(maps_cases[0]); i++) {
		const struct maps_case *c = &maps_cases[i];
		struct procmaps_entry e;
		char path[PROCMAPS_PATH_MAX];
		memset(&e, 0x5a, sizeof e);
		int r = procmaps_parse_line(c->line, strlen(c->line), &e, path, sizeof path);
		if (r != c->ret)
			fail_msg("case %zu \"%s\": got %d, expected %d", i, c->line, r, c->ret);
		if (r != 0)
			continue;
		assert_int_equal(e.start, c->start);
		assert_int_equal(e.end, c->end);
		assert_int_equal(e.offset, c->offset);
		assert_int_equal(e.inode, c->inode);
		assert_int_equal(e.dev_major, c->major);
		assert_int_equal(e.dev_minor, c->minor);
		assert_int_equal(e.readable, c->perms[0] == 'r');
		assert_int_equal(e.writable, c->perms[1] == 'w');
		assert_int_equal(e.executable, c->perms[2] == 'x');
		assert_int_equal(e.shared, c->perms[3] == 's');
		assert_int_equal(e.deleted, c->deleted);
		assert_int_equal(e.fd, -1);
		assert_false(e.current);
		assert_null(e.path);
		assert_string_equal(path, c->path);
	}
}

static void test_parse_maps_edges(void **state)
{
	(void)state;
	struct procmaps_entry e;
	char path[8];
	/* The length is honoured: nothing past it is read. */
	const char *line = "1000-2000 r-xp 0 0:0 0 /usr/lib/x.so";
	assert_int_equal(procmaps_parse_line(line, 9, &e, path, sizeof path), -1);
	assert_int_equal(procmaps_parse_line(line, 22, &e, path, sizeof path), 0);
	assert_string_equal(path, "");
	/* A long path is cut to the buffer. */
	assert_int_equal(procmaps_parse_line(line, strlen(line), &e, path, sizeof path), 0);
	assert_string_equal(path, "/usr/li");
	/* No path buffer at all. */
	assert_int_equal(procmaps_parse_line(line, strlen(line), &e, NULL, 0), 0);
	/* A NUL or a raw newline inside the path. */
	const char nul[] = "1000-2000 r-xp 0 0:0 0 /a\0b";
	assert_int_equal(procmaps_parse_line(nul, sizeof nul - 1, &e, path, sizeof path), -1);
	const char *nl = "1000-2000 r-xp 0 0:0 0 /a\nb";
	assert_int_equal(procmaps_parse_line(nl, strlen(nl), &e, path, sizeof path), -1);
	assert_int_equal(procmaps_parse_line(NULL, 10, &e, path, sizeof path), -1);
	/* Every prefix of a good line is either rejected or parsed, never overread. */
	const char *good = maps_cases[0].line;
	for (size_t n = 0; n <= strlen(good); n++) {
		char *copy = malloc(n ? n : 1);
		memcpy(copy, good, n);
		procmaps_parse_line(copy, n, &e, path, sizeof path);
		free(copy);
	}
}

/* ---- perf map lines ------------------------------------------------------- */

static void test_parse_perf_map(void **state)
{
	(void)state;
	uint64_t start, size;
	char name[64];
	const char *l = "7f0000001000 100 my_func\n";
	assert_int_equal(procmaps_parse_perf_map_line(l, strlen(l), &start, &size, name, sizeof name), 0);
	assert_int_equal(start, 0x7f0000001000);
	assert_int_equal(size, 0x100);
	assert_string_equal(name, "my_func");

	l = "0x1000 0x20 LazyCompile:*foo bar.js:12\r\n";
	assert_int_equal(procmaps_parse_perf_map_line(l, strlen(l), &start, &size, name, sizeof name), 0);
	assert_int_equal(start, 0x1000);
	assert_int_equal(size, 0x20);
	assert_string_equal(name, "LazyCompile:*foo bar.js:12");

	l = "ABC\t10\tjit code";
	assert_int_equal(procmaps_parse_perf_map_line(l, strlen(l), &start, &size, name, sizeof name), 0);
	assert_int_equal(start, 0xabc);
	assert_string_equal(name, "jit code");

	l = "1000 10 a_rather_long_name";
	assert_int_equal(procmaps_parse_perf_map_line(l, strlen(l), &start, &size, name, 5), 0);
	assert_string_equal(name, "a_ra");

	l = "ffffffffffffff00 ff last";
	assert_int_equal(procmaps_parse_perf_map_line(l, strlen(l), &start, &size, name, sizeof name), 0);

	static const char *const bad[] = {
		"", "\n", "1000", "1000 ", "1000 10", "1000 10 ", "1000 10 \n", "x1000 10 f",
		"1000 zz f", "1000-10 f", "1000 10f", "ffffffffffffff00 100 overflow",
		"11111111111111111 10 f", "1000 11111111111111111 f", " 1000 10 f", "0x 10 f",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (procmaps_parse_perf_map_line(bad[i], strlen(bad[i]), &start, &size, name, sizeof name) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
	const char nul[] = "1000 10 a\0b";
	assert_int_equal(procmaps_parse_perf_map_line(nul, sizeof nul - 1, &start, &size, name, sizeof name), -1);
	assert_int_equal(procmaps_parse_perf_map_line("1000 10 f", 9, &start, &size, name, 0), -1);
	/* The length is honoured. */
	assert_int_equal(procmaps_parse_perf_map_line("1000 10 fgh", 9, &start, &size, name, sizeof name), 0);
	assert_string_equal(name, "f");
}

/* ---- this process --------------------------------------------------------- */

static int some_function(int x)
{
	return x * 3 + 1;
}

static void assert_file_of(const struct procmaps_entry *e)
{
	assert_true(e->fd >= 0);
	struct stat st;
	assert_int_equal(fstat(e->fd, &st), 0);
	assert_int_equal((uint64_t)st.st_ino, e->inode);
	assert_int_equal(fcntl(e->fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(fcntl(e->fd, F_GETFL) & O_ACCMODE, O_RDONLY);
}

/* After procmaps_reserve, a refresh that finds a few new mappings (a new
 * thread's stack, in a tick) allocates nothing, and keeps them sorted. */
static void test_reserve_refresh_no_alloc(void **state)
{
	(void)state;
	struct procmaps *pm = procmaps_new(getpid());
	assert_non_null(pm);
	assert_true(procmaps_refresh(pm) > 5);
	long page = sysconf(_SC_PAGESIZE);
	enum { PAGES = 12 };
	char *area = mmap(NULL, PAGES * (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(area != MAP_FAILED);
	assert_true(procmaps_refresh(pm) >= 1);
	procmaps_reserve(pm);
	/* one mapping becomes PAGES: every other page readable */
	for (int i = 1; i < PAGES; i += 2)
		assert_int_equal(mprotect(area + i * page, (size_t)page, PROT_READ), 0);
	struct mallinfo2 before = mallinfo2();
	int added = procmaps_refresh(pm);
	struct mallinfo2 after = mallinfo2();
#if defined(__SANITIZE_ADDRESS__)
	/* AddressSanitizer maps memory of its own as it goes, and its malloc
	 * is not libc's: only the mappings are checked */
	(void)before, (void)after;
	assert_true(added >= PAGES);
#else
	assert_int_equal(added, PAGES);
	assert_true(added <= PROCMAPS_SPARE);
	assert_int_equal(after.uordblks, before.uordblks);
	assert_int_equal(after.hblkhd, before.hblkhd);
#endif
	for (size_t i = 1; i < procmaps_count(pm); i++)
		assert_true(procmaps_at(pm, i - 1)->start <= procmaps_at(pm, i)->start);
	for (int i = 0; i < PAGES; i++) {
		const struct procmaps_entry *e = procmaps_find(pm, (uintptr_t)(area + i * page + 8));
		assert_non_null(e);
		assert_true(e->current);
		assert_int_equal(e->start, (uintptr_t)(area + i * page));
		assert_int_equal(e->end - e->start, (uint64_t)page);
		assert_int_equal(e->readable, i % 2 == 1);
	}
	assert_int_equal(munmap(area, PAGES * (size_t)page), 0);
	procmaps_free(pm);
}

/* A mapping made after the maps were read (a new thread's stack) ends, at
 * the latest, where the first known mapping above it starts; an address
 * above every known mapping has no such end. */
static void test_next_start(void **state)
{
	(void)state;
	long page = sysconf(_SC_PAGESIZE);
	char *area = mmap(NULL, 4 * (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(area != MAP_FAILED);
	/* known: the top page, readable (the rest PROT_NONE, a mapping too) */
	assert_int_equal(mprotect(area + 3 * page, (size_t)page, PROT_READ), 0);
	struct procmaps *pm = procmaps_new(getpid());
	assert_non_null(pm);
	assert_true(procmaps_refresh(pm) >= 0);
	/* made since: the second page readable, not read yet */
	assert_int_equal(mprotect(area + page, (size_t)page, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(procmaps_next_start(pm, (uintptr_t)(area + page + 8)),
			 (uintptr_t)(area + 3 * page));
	assert_int_equal(procmaps_next_start(pm, (uintptr_t)(area + 3 * page)),
			 procmaps_next_start(pm, (uintptr_t)(area + 4 * page - 1)));
	assert_true(procmaps_next_start(pm, (uintptr_t)(area + 3 * page)) > (uintptr_t)(area + 3 * page));
	assert_int_equal(procmaps_next_start(pm, UINT64_MAX), UINT64_MAX);
	assert_int_equal(procmaps_next_start(pm, UINT64_MAX - 1), UINT64_MAX);
	assert_int_equal(munmap(area, 4 * (size_t)page), 0);
	procmaps_free(pm);
}

/* Tags tell code mappings apart: a data mapping found later over a code
 * mapping's addresses, holding its tag, does not take its addresses (each
 * round a new one and the rest of the area: every tag in 63 rounds). */
static void test_tag_code_only(void **state)
{
	(void)state;
	long page = sysconf(_SC_PAGESIZE);
	enum { PAGES = 160 };
	char path[] = "/tmp/procmaps-tag.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, page), 0);
	char *area = mmap(NULL, PAGES * (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(area != MAP_FAILED);
	assert_true(mmap(area, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0) ==
		    area);
	struct procmaps *pm = procmaps_new(getpid());
	assert_non_null(pm);
	assert_true(procmaps_refresh(pm) >= 0);
	const struct procmaps_entry *code = procmaps_find(pm, (uintptr_t)area);
	assert_true(code && code->executable);
	unsigned tag = code->tag;
	uint64_t inode = code->inode;
	bool shared = false;
	for (int k = 1; k < PAGES && !shared; k++) {
		assert_true(mmap(area, (size_t)k * (size_t)page, PROT_READ,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == area);
		assert_true(procmaps_refresh(pm) >= 1);
		const struct procmaps_entry *e = procmaps_find(pm, (uintptr_t)area);
		assert_true(e && !e->executable);
		if (e->tag != tag)
			continue;
		shared = true;
		e = procmaps_find_tagged(pm, (uintptr_t)area, tag);
		assert_true(e && e->executable && e->inode == inode);
	}
	assert_true(shared);
	assert_int_equal(munmap(area, PAGES * (size_t)page), 0);
	procmaps_free(pm);
	close(fd);
	unlink(path);
}

static void test_refresh_self(void **state)
{
	(void)state;
	struct procmaps *pm = procmaps_new(getpid());
	assert_non_null(pm);
	assert_int_equal(procmaps_pid(pm), getpid());
	assert_true(procmaps_root_fd(pm) >= 0);
	assert_int_equal(procmaps_count(pm), 0);
	assert_null(procmaps_find(pm, (uintptr_t)&some_function));
	uint64_t g0 = procmaps_generation(pm);

	int added = procmaps_refresh(pm);
	assert_true(added > 5);
	assert_int_equal(procmaps_count(pm), (size_t)added);
	uint64_t g1 = procmaps_generation(pm);
	assert_true(g1 != g0);

	/* Our own code, with its file open. */
	const struct procmaps_entry *e = procmaps_find(pm, (uintptr_t)&some_function);
	assert_non_null(e);
	assert_true(e->executable && e->current && !e->deleted);
	char exe[PROCMAPS_PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_string_equal(e->path, exe);
	assert_file_of(e);
	assert_int_equal(some_function(1), 4);

	/* libc. */
	e = procmaps_find(pm, (uintptr_t)&getpid);
	assert_non_null(e);
	assert_non_null(strstr(e->path, "libc"));
	assert_true(e->executable);
	assert_file_of(e);

	/* The stack and the vdso. */
	int local = 0;
	e = procmaps_find(pm, (uintptr_t)&local);
	assert_non_null(e);
	assert_string_equal(e->path, "[stack]");
	assert_int_equal(e->fd, -1);
	size_t vlen;
	uint64_t vstart;
	const unsigned char *img = procmaps_vdso_image(pm, &vlen, &vstart);
	assert_non_null(img);
	assert_true(vlen >= 4096);
	assert_memory_equal(img, "\177ELF", 4);
	e = procmaps_find(pm, vstart);
	assert_non_null(e);
	assert_string_equal(e->path, "[vdso]");
	assert_int_equal(e->end - e->start, vlen);

	/* Sorted by start; pointers handed out are stable. */
	for (size_t i = 1; i < procmaps_count(pm); i++)
		assert_true(procmaps_at(pm, i - 1)->start <= procmaps_at(pm, i)->start);
	assert_null(procmaps_at(pm, procmaps_count(pm)));
	assert_null(procmaps_find(pm, 0));

	/* Known mappings stay the same entries (this process may map more
	 * meanwhile: exact "nothing new" checks are on a paused child below). */
	const struct procmaps_entry *code = procmaps_find(pm, (uintptr_t)&some_function);
	assert_true(procmaps_refresh(pm) >= 0);
	assert_ptr_equal(procmaps_find(pm, (uintptr_t)&some_function), code);

	/* A new mapping appears, then goes away but stays known. */
	size_t before = procmaps_count(pm);
	void *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	uint64_t addr = (uintptr_t)p + 4096;
	assert_true(procmaps_refresh(pm) >= 1);
	uint64_t g2 = procmaps_generation(pm);
	assert_true(g2 != g1);
	e = procmaps_find(pm, addr);
	assert_non_null(e);
	assert_true(e->current && e->executable && !e->writable);
	assert_true(e->start <= addr && addr < e->end);
	const struct procmaps_entry *anon = e;
	assert_int_equal(munmap(p, 3 * 4096), 0);
	assert_true(procmaps_refresh(pm) >= 0);
	assert_true(procmaps_generation(pm) != g2);
	e = procmaps_find(pm, addr);
	assert_ptr_equal(e, anon);
	assert_false(e->current);
	assert_true(procmaps_count(pm) > before);

	/* exec: everything becomes history; a refresh brings it back. */
	uint64_t g3 = procmaps_generation(pm);
	procmaps_exec(pm);
	assert_true(procmaps_generation(pm) != g3);
	e = procmaps_find(pm, (uintptr_t)&some_function);
	assert_ptr_equal(e, code);
	assert_false(e->current);
	assert_true(procmaps_refresh(pm) >= 0);
	assert_ptr_equal(procmaps_find(pm, (uintptr_t)&some_function), code);
	assert_true(code->current);
	procmaps_free(pm);
}

/* Two maps of one process through one procmaps_files: every file and the
 * root are opened once (the same descriptors), and they stay open until
 * the last map that uses them is freed. */
static void test_shared_files(void **state)
{
	(void)state;
	struct procmaps_files *files = procmaps_files_new();
	assert_non_null(files);
	struct procmaps *a = procmaps_new_shared(getpid(), files);
	struct procmaps *b = procmaps_new_shared(getpid(), files);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(procmaps_root_fd(a), procmaps_root_fd(b));
	assert_true(procmaps_refresh(a) > 5);
	size_t after_a = procmaps_files_count(files);
	assert_true(after_a >= 2);               /* the root and our executable, at least */
	assert_true(procmaps_refresh(b) > 5);
	assert_int_equal(procmaps_files_count(files), after_a);
	const struct procmaps_entry *ea = procmaps_find(a, (uintptr_t)&some_function);
	const struct procmaps_entry *eb = procmaps_find(b, (uintptr_t)&some_function);
	assert_non_null(ea);
	assert_non_null(eb);
	assert_true(ea->fd >= 0);
	assert_int_equal(ea->fd, eb->fd);
	int fd = ea->fd;
	procmaps_free(a);
	assert_true(fcntl(fd, F_GETFD) >= 0);    /* b still uses it */
	assert_int_equal(procmaps_files_count(files), after_a);
	procmaps_free(b);
	assert_int_equal(procmaps_files_count(files), 0);
	errno = 0;
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
	procmaps_files_free(files);
}

static void test_history_prefers_current_then_newest(void **state)
{
	(void)state;
	/* Map, forget, map something else over the same place. */
	struct procmaps *pm = procmaps_new(getpid());
	assert_non_null(pm);
	void *p = mmap(NULL, 8 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_true(procmaps_refresh(pm) > 0);
	uint64_t addr = (uintptr_t)p + 5 * 4096;
	const struct procmaps_entry *old = procmaps_find(pm, addr);
	assert_non_null(old);
	assert_true(old->start <= (uintptr_t)p && old->end >= (uintptr_t)p + 8 * 4096);
	/* A hole, then an executable mapping at a page inside the old range. */
	assert_int_equal(munmap(p, 8 * 4096), 0);
	void *q = mmap((char *)p + 5 * 4096, 4096, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	assert_true(q != MAP_FAILED);
	assert_true(procmaps_refresh(pm) > 0);
	const struct procmaps_entry *e = procmaps_find(pm, addr);
	assert_non_null(e);
	assert_true(e != old);
	assert_true(e->current && e->executable);
	/* An address only the old mapping covered resolves to history (unless
	 * something new was mapped there meanwhile). */
	const struct procmaps_entry *h = procmaps_find(pm, (uintptr_t)p + 4096);
	assert_non_null(h);
	assert_true(h == old || h->current);
	assert_false(old->current);
	assert_int_equal(munmap(q, 4096), 0);
	assert_true(procmaps_refresh(pm) >= 0);
	e = procmaps_find(pm, addr);
	assert_non_null(e);
	assert_false(e->current);
	assert_true(e->executable);   /* the newest of the two that held addr */
	procmaps_free(pm);
}

static void test_child_process(void **state)
{
	(void)state;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	struct procmaps *pm = procmaps_new(child);
	assert_non_null(pm);
	int added = procmaps_refresh(pm);
	assert_true(added > 0);
	/* A paused process: nothing new, same generation. */
	uint64_t g = procmaps_generation(pm);
	assert_int_equal(procmaps_refresh(pm), 0);
	assert_int_equal(procmaps_generation(pm), g);
	/* exec: all history, same generation no more; the same mappings come back. */
	const struct procmaps_entry *code = procmaps_find(pm, (uintptr_t)&some_function);
	assert_non_null(code);
	procmaps_exec(pm);
	assert_false(code->current);
	assert_true(procmaps_generation(pm) != g);
	g = procmaps_generation(pm);
	assert_int_equal(procmaps_refresh(pm), 0);
	assert_true(procmaps_generation(pm) != g);
	assert_int_equal(procmaps_count(pm), (size_t)added);
	assert_true(code->current);
	assert_ptr_equal(procmaps_find(pm, (uintptr_t)&some_function), code);
	assert_true(code->fd >= 0);
	size_t vlen;
	assert_non_null(procmaps_vdso_image(pm, &vlen, NULL));
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	errno = 0;
	assert_int_equal(procmaps_refresh(pm), -1);
	assert_int_equal(errno, ESRCH);
	/* What was seen is still there. */
	assert_true(procmaps_count(pm) > 0);
	procmaps_free(pm);

	errno = 0;
	assert_null(procmaps_new(child));
	assert_int_equal(errno, ESRCH);
	assert_null(procmaps_new(0));
}

/* ---- perf map of this process --------------------------------------------- */

static char perf_map_path[64];

static int remove_perf_map(void **state)
{
	(void)state;
	if (perf_map_path[0])
		unlink(perf_map_path);
	return 0;
}

static void write_perf_map(const char *text)
{
	snprintf(perf_map_path, sizeof perf_map_path, "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(perf_map_path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void test_perf_map_load(void **state)
{
	(void)state;
	struct procmaps *pm = procmaps_new(getpid());
	assert_non_null(pm);
	assert_int_equal(procmaps_load_perf_map(pm), 0);   /* no file yet */
	assert_null(procmaps_find_jit(pm, 0x1000));

	char *text = malloc(20000);
	assert_non_null(text);
	int len = snprintf(text, 20000,
			   "7f0000002000 100 second one\n"
			   "garbage line\n"
			   "7f0000001000 80 first\n"
			   "7f0000003000 10 replaced_later\n"
			   "7f0000003000 20 replacement\n");
	/* A line longer than any name we keep is skipped whole. */
	memset(text + len, 'x', 9000);
	len += 9000;
	/* An unterminated last line may be half written: it is left for later. */
	len += snprintf(text + len, 20000 - (size_t)len,
			" 10 tail_of_long_line\n7f0000004000 8 last\n7f0000006000 8 partial");
	write_perf_map(text);

	assert_int_equal(procmaps_load_perf_map(pm), 4);
	const struct procmaps_jit_symbol *s = procmaps_find_jit(pm, 0x7f0000001000);
	assert_non_null(s);
	assert_string_equal(s->name, "first");
	s = procmaps_find_jit(pm, 0x7f000000107f);
	assert_non_null(s);
	assert_string_equal(s->name, "first");
	assert_null(procmaps_find_jit(pm, 0x7f0000001080));
	s = procmaps_find_jit(pm, 0x7f00000020ff);
	assert_non_null(s);
	assert_string_equal(s->name, "second one");
	assert_int_equal(s->size, 0x100);
	s = procmaps_find_jit(pm, 0x7f000000301f);
	assert_non_null(s);
	assert_string_equal(s->name, "replacement");
	s = procmaps_find_jit(pm, 0x7f0000004007);
	assert_non_null(s);
	assert_string_equal(s->name, "last");
	assert_null(procmaps_find_jit(pm, 0x7f0000004008));
	assert_null(procmaps_find_jit(pm, 0x7f0000006000));
	assert_null(procmaps_find_jit(pm, 0));
	assert_null(procmaps_find_jit(pm, UINT64_MAX));

	/* Reload a file that lost old lines and gained new ones: old ones kept,
	 * a new symbol at a known start replaces the old one. */
	write_perf_map("7f0000005000 10 new_symbol\n7f0000001000 40 first_v2\n");
	assert_int_equal(procmaps_load_perf_map(pm), 5);
	s = procmaps_find_jit(pm, 0x7f0000005000);
	assert_non_null(s);
	assert_string_equal(s->name, "new_symbol");
	s = procmaps_find_jit(pm, 0x7f0000001010);
	assert_non_null(s);
	assert_string_equal(s->name, "first_v2");
	assert_null(procmaps_find_jit(pm, 0x7f0000001050));
	s = procmaps_find_jit(pm, 0x7f0000002000);
	assert_non_null(s);
	assert_string_equal(s->name, "second one");

	/* Unchanged file: nothing changes. */
	assert_int_equal(procmaps_load_perf_map(pm), 5);
	unlink(perf_map_path);
	assert_int_equal(procmaps_load_perf_map(pm), 5);
	free(text);
	procmaps_free(pm);
}

static void test_perf_map_not_regular_file(void **state)
{
	(void)state;
	snprintf(perf_map_path, sizeof perf_map_path, "/tmp/perf-%d.map", (int)getpid());
	unlink(perf_map_path);
	assert_int_equal(mkfifo(perf_map_path, 0600), 0);
	struct procmaps *pm = procmaps_new(getpid());
	assert_non_null(pm);
	/* A FIFO neither blocks nor counts. */
	assert_int_equal(procmaps_load_perf_map(pm), 0);
	procmaps_free(pm);
	unlink(perf_map_path);
}

/* A map of no process: regular files only, through links too; a device,
 * a FIFO, a directory, a relative path or an empty range are refused and
 * not added; overlapping mappings get their own tags; no perf map is read
 * for pid 0. */
static void test_files_map(void **state)
{
	(void)state;
	char dir[] = "/tmp/procmaps-files.XXXXXX", file[64], link[64], fifo[64];
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof file, "%s/bin", dir);
	snprintf(link, sizeof link, "%s/link", dir);
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fputs("not an ELF, a regular file", f);
	fclose(f);
	assert_int_equal(symlink(file, link), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);

	struct procmaps *pm = procmaps_new_files();
	assert_non_null(pm);
	assert_int_equal(procmaps_pid(pm), 0);
	int t1 = procmaps_add_file(pm, 0x1000, 0x3000, 0, file);
	assert_true(t1 > 0);
	int t2 = procmaps_add_file(pm, 0x2000, 0x4000, 0x1000, link);
	assert_true(t2 > 0 && t2 != t1);
	const char *refused[] = { "/dev/zero", "/dev/null", fifo, dir, "bin", "/no/such/file" };
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		assert_int_equal(procmaps_add_file(pm, 0x8000, 0x9000, 0, refused[i]), -1);
	assert_int_equal(procmaps_add_file(pm, 0x9000, 0x9000, 0, file), -1);
	assert_int_equal(procmaps_count(pm), 2);
	const struct procmaps_entry *e = procmaps_find_tagged(pm, 0x2800, (unsigned)t1);
	assert_non_null(e);
	assert_int_equal(e->start, 0x1000);
	assert_true(e->executable && e->fd >= 0);
	e = procmaps_find_tagged(pm, 0x2800, (unsigned)t2);
	assert_non_null(e);
	assert_int_equal(e->start, 0x2000);
	assert_string_equal(e->path, link);
	assert_null(procmaps_find(pm, 0x8800));
	/* one file, one descriptor */
	assert_int_equal(procmaps_open_file(pm, procmaps_find_tagged(pm, 0x1800, (unsigned)t1)),
			 procmaps_open_file(pm, e));
	assert_int_equal(procmaps_load_perf_map(pm), 0);
	/* a library loaded where another was, 63 mappings added since: not
	 * the tag of the one over its addresses (it was 1 + its number % 63:
	 * the same) */
	for (uint64_t a = 0x10000; a < 0x10000 + 61 * 0x1000; a += 0x1000)
		assert_true(procmaps_add_file(pm, a, a + 0x1000, 0, file) > 0);
	int t3 = procmaps_add_file(pm, 0x1000, 0x2000, 0x2000, file);
	assert_true(t3 > 0 && t3 != t1);
	e = procmaps_find_tagged(pm, 0x1800, (unsigned)t3);
	assert_true(e && e->start == 0x1000 && e->offset == 0x2000);
	e = procmaps_find_tagged(pm, 0x1800, (unsigned)t1);
	assert_true(e && e->start == 0x1000 && e->offset == 0);
	procmaps_free(pm);
	unlink(fifo);
	unlink(link);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files_map),
		cmocka_unit_test(test_tag_code_only),
		cmocka_unit_test(test_next_start),
		cmocka_unit_test(test_parse_maps_table),
		cmocka_unit_test(test_parse_maps_edges),
		cmocka_unit_test(test_parse_perf_map),
		cmocka_unit_test(test_refresh_self),
		cmocka_unit_test(test_shared_files),
		cmocka_unit_test(test_history_prefers_current_then_newest),
		cmocka_unit_test(test_child_process),
		cmocka_unit_test(test_reserve_refresh_no_alloc),
		cmocka_unit_test_teardown(test_perf_map_load, remove_perf_map),
		cmocka_unit_test_teardown(test_perf_map_not_regular_file, remove_perf_map),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
