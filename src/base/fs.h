/* Small filesystem helpers: crash-safe writes, directory trees. */
#ifndef SB_FS_H
#define SB_FS_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

/* Joins path components with '/'; returns a malloc'd string or NULL. */
char *sb_path_join(const char *a, const char *b);
/* The executable name in $PATH (or the usual system folders when unset),
 * malloc'd; NULL when there is none (or out of memory). */
char *sb_path_search(const char *name);
/* printf into a fresh malloc'd string; NULL on failure. */
char *sb_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* mkdir -p with the given mode for created components. */
int sb_fs_mkdirs(const char *path, mode_t mode, struct sb_error *err);
/* write(2) until all of data is written (EINTR retried); 0, or -1 with errno. */
int sb_fs_write_all(int fd, const void *data, size_t len);
/* Writes data to path atomically: temp file in the same directory, fsync,
 * rename, fsync of the directory. A crash leaves the old or the new file. */
int sb_fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		       struct sb_error *err);
/* The same with sync 0: no fsyncs, so atomic against a crash of the process
 * but not of the host; for files a host restart throws away anyway. */
int sb_fs_replace(const char *path, const void *data, size_t len, mode_t mode, int sync, struct sb_error *err);
/* Writes data to path (O_NOFOLLOW) unless the file holds exactly that
 * already: for files rewritten before every boot, where a truncate and write
 * cost a journal commit each time and are mostly unchanged. Neither atomic
 * nor synced: a torn file differs, so the next call writes it whole again. */
int sb_fs_write_changed(const char *path, const void *data, size_t len, mode_t mode, struct sb_error *err);
/* Reads a whole (small) file; *out is NUL-terminated and malloc'd. max bounds it. */
int sb_fs_read_file(char **out, size_t *len, const char *path, size_t max, struct sb_error *err);
/* Reads a pipe or FIFO until its end (its last writer closed) into buf, at
 * most size - 1 bytes (more is left unread), NUL-terminated, within
 * timeout_ms in all: a short answer of another process. The length, or -1
 * when the deadline came first. */
ssize_t sb_fs_read_to_end(int fd, char *buf, size_t size, int timeout_ms);
int sb_fs_fsync_dir(const char *dir, struct sb_error *err);
/* 1 when path is a directory with something mounted on it (its device
 * differs from its parent's); a symlink never is. */
int sb_fs_mount_point(const char *path);
/* rm -rf that never follows symlinks and never crosses into another
 * filesystem (a mount point below path is an error, nothing under it is touched).
 * A missing path is not an error. */
int sb_fs_remove_tree(const char *path, struct sb_error *err);
/* The same for path relative to the directory dirfd (or AT_FDCWD); the
 * components of path before the last are followed as usual. */
int sb_fs_remove_tree_at(int dirfd, const char *path, struct sb_error *err);
/* Removes the temp files sb_fs_replace left in dir (PATH.tmp.PID) when its
 * process died before the rename: those whose process is gone. *removed (may
 * be NULL) gets how many (with dry_run, how many it would remove). */
int sb_fs_remove_stale_temps(unsigned *removed, const char *dir, int dry_run, struct sb_error *err);
/* Total bytes of regular files under path (no symlinks followed). */
int sb_fs_tree_size(unsigned long long *out, const char *path, struct sb_error *err);

#endif
