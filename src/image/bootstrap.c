#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/archive_dl.h"
#include "base/fs.h"
#include "base/i18n.h"
#include "image/bootstrap.h"
#include "base/log.h"
#include "base/proc.h"

#define CONNECT_TIMEOUT_MS 3000
#define MMDEBSTRAP_TIMEOUT_MS (20 * 60 * 1000)

/* Files of the busybox image besides busybox and its applet links. */
static const struct {
	const char *path;
	mode_t mode;               /* S_IFDIR or S_IFREG with permissions */
	const char *content;
} busybox_files[] = {
	{ "bin", S_IFDIR | 0755, NULL },
	{ "dev", S_IFDIR | 0755, NULL },
	{ "etc", S_IFDIR | 0755, NULL },
	{ "etc/group", S_IFREG | 0644, "root:x:0:\nnogroup:x:65534:\n" },
	{ "etc/passwd", S_IFREG | 0644, "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n" },
	{ "proc", S_IFDIR | 0755, NULL },
	{ "root", S_IFDIR | 0700, NULL },
	{ "sbin", S_IFDIR | 0755, NULL },
	{ "sys", S_IFDIR | 0755, NULL },
	{ "tmp", S_IFDIR | 01777, NULL },
	{ "usr", S_IFDIR | 0755, NULL },
	{ "usr/bin", S_IFDIR | 0755, NULL },
	{ "usr/sbin", S_IFDIR | 0755, NULL },
};

/* Is host:port of an http(s) URL accepting connections? why says why not. */
static int mirror_reachable(char *why, size_t size, const char *url)
{
	char host[256], port[8];
	const char *p = strstr(url, "://");
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	size_t n;
	int ok = 0, rc;

	snprintf(port, sizeof(port), "%s", p && !strncmp(url, "https", 5) ? "443" : "80");
	p = p ? p + 3 : url;
	n = strcspn(p, ":/");
	snprintf(host, sizeof(host), "%.*s", (int)n, p);
	if (p[n] == ':')
		snprintf(port, sizeof(port), "%.*s", (int)strcspn(p + n + 1, "/"), p + n + 1);
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		snprintf(why, size, _("cannot resolve %s: %s"), host, gai_strerror(rc));
		return 0;
	}
	for (ai = res; ai && !ok; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), soerr = 0;
		socklen_t len = sizeof(soerr);
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    (errno == EINPROGRESS && poll(&pfd, 1, CONNECT_TIMEOUT_MS) == 1 &&
		     getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0))
			ok = 1;
		else
			snprintf(why, size, _("cannot connect to %s:%s: %s"), host, port,
				 soerr ? strerror(soerr) : _("no answer"));
		close(fd);
	}
	freeaddrinfo(res);
	return ok;
}

static int run_tool(char *const argv[], int in_fd, int out_fd, int timeout_ms, struct sb_error *err)
{
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result res;
	char line[512];
	int rc;

	opts.timeout_ms = timeout_ms;
	opts.stdin_fd = in_fd;
	opts.stdout_fd = out_fd;
	if ((rc = sb_proc_run(&res, argv, &opts, err)) < 0)
		return rc;
	if (res.timed_out)
		rc = sb_error_set(err, SB_ERR_TIMEOUT, _("%s did not finish in time"), argv[0]);
	else if (res.status == 127)
		rc = sb_error_set(err, SB_ERR_PREREQ, _("%s is not installed (apt-get install %s)"), argv[0], argv[0]);
	else if (res.status != 0)
		rc = sb_error_set(err, SB_ERR_RUNTIME, _("%s failed (exit status %d): %s"), argv[0], res.status,
				  sb_proc_last_line(&res, line, sizeof(line)));
	sb_proc_result_clear(&res);
	return rc;
}

/* Runs argv as a filter from the file in to the file out, then drops in. */
static int filter_file(char *const argv[], const char *in_path, const char *out_path, struct sb_error *err)
{
	int in = open(in_path, O_RDONLY | O_CLOEXEC);
	int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc;

	if (in < 0 || out < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot open '%s'"), in < 0 ? in_path : out_path);
	else
		rc = run_tool(argv, in, out, MMDEBSTRAP_TIMEOUT_MS, err);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	unlink(in_path);
	return rc;
}

/* mmdebstrap writes a tar with device nodes under /dev: mmtarfilter drops them
 * (a sandbox gets its own /dev). zstd makes the layer blob a third of the tar
 * and decompresses faster than anything else libarchive reads. */
static int build_debian(const char *dir, const char *tar, const char *mirror, struct sb_error *err)
{
	char *raw = sb_path_join(dir, "raw.tar"), *filtered = sb_path_join(dir, "filtered.tar");
	char *mm[] = { "mmdebstrap", "--quiet", "--variant=apt", "--include=python3",
		       "--customize-hook=rm -f \"$1/etc/resolv.conf\" \"$1/etc/hostname\"", "bookworm", raw,
		       (char *)mirror, NULL };
	char *filter[] = { "mmtarfilter", "--path-exclude=/dev/*", NULL };
	char *zstd[] = { "zstd", "-q", "-T0", "-c", NULL };
	int rc;

	if (!raw || !filtered)
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	else if ((rc = run_tool(mm, -1, -1, MMDEBSTRAP_TIMEOUT_MS, err)) == 0 &&
		 (rc = filter_file(filter, raw, filtered, err)) == 0)
		rc = filter_file(zstd, filtered, tar, err);
	if (raw)
		unlink(raw);
	if (filtered)
		unlink(filtered);
	free(raw);
	free(filtered);
	return rc;
}

/* One tar entry, all owned by root and dated at the epoch: the same busybox
 * gives the same image digest. */
static struct archive_entry *new_entry(const char *path, mode_t mode, la_int64_t size)
{
	struct archive_entry *e = archive_entry_new();

	if (!e)
		return NULL;
	archive_entry_set_pathname(e, path);
	archive_entry_set_mode(e, mode);
	archive_entry_set_size(e, size);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_mtime(e, 0, 0);
	return e;
}

static int write_entry(struct archive *a, struct archive_entry *e, const void *data, size_t len, const char *tar,
		       struct sb_error *err)
{
	int rc = 0;

	if (!e)
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	if (archive_write_header(a, e) != ARCHIVE_OK || (len && archive_write_data(a, data, len) != (la_ssize_t)len))
		rc = sb_error_set(err, SB_ERR_IO, _("cannot write '%s': %s"), tar, archive_error_string(a));
	archive_entry_free(e);
	return rc;
}

/* "usr/bin/awk" -> "../../bin/busybox": links stay inside the image. */
static int write_applet(struct archive *a, const char *applet, const char *tar, struct sb_error *err)
{
	char target[256] = "";
	struct archive_entry *e;

	if (!strncmp(applet, "bin/", 4) && !strchr(applet + 4, '/')) {
		snprintf(target, sizeof(target), "busybox");
	} else {
		for (const char *c = strchr(applet, '/'); c; c = strchr(c + 1, '/'))
			strncat(target, "../", sizeof(target) - strlen(target) - 1);
		strncat(target, "bin/busybox", sizeof(target) - strlen(target) - 1);
	}
	e = new_entry(applet, AE_IFLNK | 0777, 0);
	if (e)
		archive_entry_set_symlink(e, target);
	return write_entry(a, e, NULL, 0, tar, err);
}

static int write_busybox_binary(struct archive *a, const char *busybox, const char *tar, struct sb_error *err)
{
	char buf[1 << 16];
	struct stat st;
	ssize_t n;
	int fd = open(busybox, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = sb_error_errno(err, SB_ERR_PREREQ, errno, _("cannot read %s (apt-get install busybox-static)"),
				    busybox);
		goto out;
	}
	if ((rc = write_entry(a, new_entry("bin/busybox", AE_IFREG | 0755, st.st_size), NULL, 0, tar, err)) < 0)
		goto out;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (archive_write_data(a, buf, (size_t)n) != n) {
			rc = sb_error_set(err, SB_ERR_IO, _("cannot write '%s': %s"), tar, archive_error_string(a));
			goto out;
		}
	if (n < 0)
		rc = sb_error_errno(err, SB_ERR_IO, errno, _("cannot read %s"), busybox);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

static int build_busybox(const char *tar, const char *busybox, struct sb_error *err)
{
	char *argv[] = { (char *)busybox, "--list-full", NULL };
	struct sb_proc_opts opts = SB_PROC_OPTS_DEFAULT;
	struct sb_proc_result res = { 0 };
	struct archive *a;
	int rc;

	if ((rc = sb_archive_load(err)) < 0)
		return rc;
	if (!(a = archive_write_new()))
		return sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
	opts.capture_max = 1 << 20;
	if ((rc = sb_proc_run(&res, argv, &opts, err)) < 0 ||
	    (res.status != 0 && (rc = sb_error_set(err, SB_ERR_PREREQ, _("%s --list-full failed (install busybox-static)"),
						   busybox)) < 0))
		goto out;
	archive_write_set_format_pax_restricted(a);
	if (archive_write_open_filename(a, tar) != ARCHIVE_OK) {
		rc = sb_error_set(err, SB_ERR_IO, _("cannot create '%s': %s"), tar, archive_error_string(a));
		goto out;
	}
	for (size_t i = 0; rc == 0 && i < sizeof(busybox_files) / sizeof(busybox_files[0]); i++) {
		const char *c = busybox_files[i].content;
		rc = write_entry(a, new_entry(busybox_files[i].path, busybox_files[i].mode, c ? (la_int64_t)strlen(c) : 0),
				 c, c ? strlen(c) : 0, tar, err);
	}
	if (rc == 0)
		rc = write_busybox_binary(a, busybox, tar, err);
	/* one applet per line, e.g. "usr/bin/awk"; "linuxrc" (top level) is for initramfs only */
	for (char *line = strtok(res.out, "\n"); rc == 0 && line; line = strtok(NULL, "\n"))
		if (strchr(line, '/') && strcmp(line, "bin/busybox") != 0)
			rc = write_applet(a, line, tar, err);
	if (archive_write_close(a) != ARCHIVE_OK && rc == 0)
		rc = sb_error_set(err, SB_ERR_IO, _("cannot write '%s': %s"), tar, archive_error_string(a));
out:
	archive_write_free(a);
	sb_proc_result_clear(&res);
	return rc;
}

int sb_image_bootstrap(struct sb_bootstrap_result *out, struct sb_root *root, const struct sb_bootstrap_opts *opts,
		       struct sb_error *err)
{
	const char *mirror = opts->mirror ? opts->mirror : SB_BOOTSTRAP_DEFAULT_MIRROR;
	const char *busybox = opts->busybox ? opts->busybox : SB_BOOTSTRAP_DEFAULT_BUSYBOX;
	struct sb_image_import_opts iopts = { .name = opts->name ? opts->name : SB_IMAGE_BASE_NAME,
					      .progress = opts->progress };
	char *dir = NULL, *tar = NULL, *source = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	out->built = opts->kind;
	if (opts->kind == SB_BOOTSTRAP_AUTO) {
		out->built = SB_BOOTSTRAP_DEBIAN;
		if (!mirror_reachable(out->fallback_reason, sizeof(out->fallback_reason), mirror))
			out->built = SB_BOOTSTRAP_BUSYBOX;
	}
	/* in partial/: prune removes what a killed bootstrap leaves; the shared
	 * lock keeps prune away meanwhile */
	if ((rc = sb_root_lock(root, SB_LOCK_SHARED, err)) < 0)
		return rc;
	dir = sb_strdupf("%s/images/blobs/partial/bootstrap-XXXXXX", sb_root_path(root));
	if (!dir || !mkdtemp(dir)) {
		rc = dir ? sb_error_errno(err, SB_ERR_IO, errno, _("cannot create '%s'"), dir)
			 : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	if (!(tar = sb_path_join(dir, "rootfs.tar"))) {
		rc = sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
		goto out;
	}
	sb_log("image: bootstrapping %s into %s", out->built == SB_BOOTSTRAP_DEBIAN ? "debian" : "busybox", dir);
	if (out->built == SB_BOOTSTRAP_DEBIAN) {
		struct sb_error debian_err;
		rc = build_debian(dir, tar, mirror, &debian_err);
		/* auto: a host without mmdebstrap still gets a default image */
		if (rc == SB_ERR_PREREQ && opts->kind == SB_BOOTSTRAP_AUTO) {
			snprintf(out->fallback_reason, sizeof(out->fallback_reason), "%s", debian_err.msg);
			out->built = SB_BOOTSTRAP_BUSYBOX;
		} else if (rc < 0) {
			if (err)
				*err = debian_err;
			goto out;
		}
	}
	if (out->built == SB_BOOTSTRAP_BUSYBOX && (rc = build_busybox(tar, busybox, err)) < 0)
		goto out;
	source = out->built == SB_BOOTSTRAP_DEBIAN ? sb_strdupf("bootstrap debian bookworm + python3 from %s", mirror)
						   : sb_strdupf("bootstrap busybox from %s", busybox);
	iopts.source = source;
	rc = source ? sb_image_import(&out->image, root, tar, &iopts, err)
		    : sb_error_set(err, SB_ERR_NOMEM, _("out of memory"));
out:
	sb_root_unlock(root);
	if (dir)
		sb_fs_remove_tree(dir, NULL);
	free(dir);
	free(tar);
	free(source);
	return rc;
}
