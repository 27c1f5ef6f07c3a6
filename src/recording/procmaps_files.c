/* procmaps_files: the files many processes of one run share
 * (procmaps_files, see procmaps.h): a mapped file open once by device and
 * inode, a root directory once by device, inode and mount namespace, one
 * vDSO image per distinct bytes; each held by reference. And a map of no
 * process, made of files named by hand (procmaps_new_files,
 * procmaps_add_file: -i's mappings). And a mapping's file opened, the one
 * its listing named (pm_open_mapped_file). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "array.h"
#include "procmaps_internal.h"

int pm_open_mapped_file(const struct procmaps *pm, const struct procmaps_entry *e,
			const char *path)
{
	char name[96];
	struct stat st;
	snprintf(name, sizeof name, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pm->proc_pid,
		 e->start, e->end);
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	/* (the link names the file mapped there when it is opened, which is
	 * not E's if the process mapped another over its range since the
	 * listing: attached to swaplibs, libalpha.so's mapping once held
	 * libbravo.so's file, and every alpha sample was named by bravo's
	 * symbols) */
	if (fd >= 0 && (fstat(fd, &st) < 0 || (uint64_t)st.st_ino != e->inode)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0 && pm->root_fd >= 0 && !e->deleted) {
		fd = pm_open_in_root(pm->root_fd, path, O_RDONLY | O_NONBLOCK);
		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
				(uint64_t)st.st_ino != e->inode)) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0)
			fcntl(fd, F_SETFL, 0);
	}
	return fd;
}

struct shared_file *pm_shared_find(struct procmaps_files *f, bool root, unsigned dev_major,
				       unsigned dev_minor, uint64_t inode, uint64_t mntns)
{
	for (size_t i = 0; i < f->n; i++) {
		struct shared_file *sf = &f->v[i];
		if (sf->root == root && sf->inode == inode && sf->dev_major == dev_major &&
		    sf->dev_minor == dev_minor && sf->mntns == mntns)
			return sf;
	}
	return NULL;
}

/* Add FD (now owned by F, one reference); false if out of memory. */
bool pm_shared_add(struct procmaps_files *f, bool root, unsigned dev_major, unsigned dev_minor,
		       uint64_t inode, uint64_t mntns, int fd)
{
	if (array_grow(&f->v, &f->cap, f->n + 1, sizeof *f->v, 16) < 0)
		return false;
	f->v[f->n++] = (struct shared_file){ .inode = inode, .mntns = mntns, .dev_major = dev_major,
					     .dev_minor = dev_minor, .root = root, .fd = fd, .refs = 1 };
	return true;
}

/* Drop one reference to FD; the last closes it. */
void pm_shared_unref(struct procmaps_files *f, int fd)
{
	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i].fd != fd)
			continue;
		if (--f->v[i].refs == 0) {
			close(fd);
			f->v[i] = f->v[--f->n];
		}
		return;
	}
}

/* IMG (LEN bytes, malloc'd) as the image held by F for those bytes: IMG
 * itself, now F's, or the equal one F holds (IMG freed); NULL when F has
 * no room (IMG stays the caller's). */
void *pm_shared_vdso_take(struct procmaps_files *f, void *img, size_t len)
{
	struct shared_vdso *free_slot = NULL;
	for (size_t i = 0; i < SHARED_VDSOS; i++) {
		struct shared_vdso *v = &f->vdso[i];
		if (v->refs && v->len == len && memcmp(v->img, img, len) == 0) {
			free(img);
			v->refs++;
			return v->img;
		}
		if (!v->refs && !free_slot)
			free_slot = v;
	}
	if (!free_slot)
		return NULL;
	*free_slot = (struct shared_vdso){ .img = img, .len = len, .refs = 1 };
	return img;
}

/* Drop one reference to IMG; false if F does not hold it (the caller's). */
bool pm_shared_vdso_drop(struct procmaps_files *f, const void *img)
{
	for (size_t i = 0; f && i < SHARED_VDSOS; i++) {
		struct shared_vdso *v = &f->vdso[i];
		if (!v->refs || v->img != img)
			continue;
		if (--v->refs == 0) {
			free(v->img);
			v->img = NULL;
		}
		return true;
	}
	return false;
}


struct procmaps_files *procmaps_files_new(void)
{
	return calloc(1, sizeof(struct procmaps_files));
}

void procmaps_files_free(struct procmaps_files *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		close(f->v[i].fd);
	for (size_t i = 0; i < SHARED_VDSOS; i++)
		free(f->vdso[i].img);
	free(f->v);
	free(f);
}

size_t procmaps_files_count(const struct procmaps_files *f)
{
	return f ? f->n : 0;
}

/* The mount namespace of PID (the inode of /proc/PID/ns/mnt), or 0. */
static uint64_t mount_namespace(pid_t pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Share the root directory just opened with the processes that have the
 * same one (same directory, same mount namespace). */
void pm_share_root(struct procmaps *pm)
{
	struct stat st;
	uint64_t mntns = mount_namespace(pm->proc_pid);
	if (!pm->shared || pm->root_fd < 0 || mntns == 0 || fstat(pm->root_fd, &st) < 0)
		return;
	struct shared_file *sf = pm_shared_find(pm->shared, true, major(st.st_dev), minor(st.st_dev),
					     (uint64_t)st.st_ino, mntns);
	if (sf) {
		close(pm->root_fd);
		pm->root_fd = sf->fd;
		sf->refs++;
		pm->root_shared = true;
	} else {
		pm->root_shared = pm_shared_add(pm->shared, true, major(st.st_dev), minor(st.st_dev),
					     (uint64_t)st.st_ino, mntns, pm->root_fd);
	}
}

/* ---- a map of files named by hand ------------------------------------------ */

struct procmaps *procmaps_new_files(void)
{
	struct procmaps *pm = pm_alloc();
	if (pm)
		pm->gone = true;
	return pm;
}

/* PATH opened read-only if it is a regular file: looked at first without
 * opening it (O_PATH: no device's open runs), then reopened through that
 * very descriptor. A descriptor, or -1 with errno. */
static int open_regular_file(const char *path, struct stat *st)
{
	int pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	if (fstat(pfd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(pfd);
		errno = EINVAL;
		return -1;
	}
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
	int fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	close(pfd);
	return fd;
}

int procmaps_add_file(struct procmaps *pm, uint64_t start, uint64_t end, uint64_t offset,
		      const char *path)
{
	if (start >= end || !path || path[0] != '/' || strlen(path) >= PROCMAPS_PATH_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (pm->nfiles >= MAX_FILES) {
		errno = EMFILE;
		return -1;
	}
	struct stat st;
	int fd = open_regular_file(path, &st);
	if (fd < 0)
		return -1;
	struct procmaps_entry e = {
		.start = start, .end = end, .offset = offset, .inode = (uint64_t)st.st_ino,
		.dev_major = major(st.st_dev), .dev_minor = minor(st.st_dev),
		.readable = true, .executable = true,
	};
	int held = pm_held_fd(pm, &e);
	if (held < 0) {
		if (array_grow(&pm->files, &pm->filescap, pm->nfiles + 1, sizeof *pm->files, 16) < 0) {
			close(fd);
			errno = ENOMEM;
			return -1;
		}
		pm->files[pm->nfiles++] = (struct open_file){
			.inode = e.inode, .dev_major = e.dev_major, .dev_minor = e.dev_minor, .fd = fd,
		};
		held = fd;
	} else {
		close(fd);
	}
	size_t before = pm->n;
	struct node *nd = pm_add_mapping(pm, before, &e, path);
	if (!nd || pm_rebuild_indexes(pm, before) < 0) {
		errno = ENOMEM;
		return -1;
	}
	nd->e.fd = held;
	pm->generation++;
	return (int)nd->e.tag;
}
