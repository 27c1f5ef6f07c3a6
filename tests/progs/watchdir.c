/* watchdir: print every inotify event in a directory, one line each:
 *   EVENT NAME      (EVENT: create, modify, close_write, moved_from,
 *                    moved_to, delete)
 * so a test can tell which names appeared there and whether a file was
 * written while it had a name. Prints "ready PID" once watching; runs until
 * SIGTERM or SECONDS.
 *
 * usage: watchdir DIR SECONDS */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static void print_event(const struct inotify_event *ev)
{
	static const struct { unsigned mask; const char *name; } kinds[] = {
		{ IN_CREATE, "create" }, { IN_MODIFY, "modify" }, { IN_CLOSE_WRITE, "close_write" },
		{ IN_MOVED_FROM, "moved_from" }, { IN_MOVED_TO, "moved_to" }, { IN_DELETE, "delete" },
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (ev->mask & kinds[i].mask)
			printf("%s %s\n", kinds[i].name, ev->len ? ev->name : "");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: watchdir DIR SECONDS\n");
		return 2;
	}
	int fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, argv[1], IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE |
					 IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE) < 0) {
		perror("inotify");
		return 2;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	time_t end = time(NULL) + atoi(argv[2]);
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	while (time(NULL) < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf);
		for (ssize_t off = 0; off < n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
			print_event(ev);
			off += (ssize_t)(sizeof *ev + ev->len);
		}
		fflush(stdout);
	}
	return 0;
}
