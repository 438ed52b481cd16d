/* Layer extraction: layers are built here with libarchive's writer, unpacked
 * into a scratch root, and the resulting tree is checked. Beside the root
 * sits a sentinel directory that hostile layers aim at: every test checks
 * that nothing outside the root changed. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/fs.h"
#include "testutil.h"
#include "image/internal.h"

#define MTIME 1000000000

static char *base, *root, *sentinel, *host_before;
static int root_fd = -1;

/* One archive entry to write. mode carries the type (S_IFREG when 0). */
struct ent {
	const char *name;
	mode_t mode;
	const char *data;       /* file content, or the symlink target */
	const char *hardlink;
	long uid, gid;
	const char *uname;
	const char *xattr, *xvalue;
	size_t xsize;           /* of xvalue when it is binary; 0: strlen */
	size_t zeros;           /* file content of this many zero bytes instead of data */
};

static char *host_listing(void)
{
	return tu_sh_out("cd %s && find . -path ./root -prune -o -path ./layers -prune -o "
			 "-printf '%%y %%m %%n %%s %%T@ %%p\\n' | LC_ALL=C sort", base);
}

static void setup(void)
{
	base = tu_tempdir("unpack");
	cr_assert_not_null(base);
	root = sb_path_join(base, "root");
	sentinel = sb_path_join(base, "sentinel");
	cr_assert_eq(mkdir(root, 0755), 0);
	cr_assert_eq(mkdir(sentinel, 0755), 0);
	cr_assert_eq(tu_sh("mkdir %s/layers && echo host > %s/keep && mkdir %s/dir && echo host > %s/dir/f",
			   base, sentinel, sentinel, sentinel), 0);
	root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(root_fd, 0);
	host_before = host_listing();
	cr_assert_not_null(host_before);
}

static void teardown(void)
{
	if (root_fd >= 0)
		close(root_fd);
	tu_remove(base);
	free(base);
	free(root);
	free(sentinel);
	free(host_before);
}

TestSuite(unpack, .init = setup, .fini = teardown);

static void assert_host_untouched(void)
{
	char *now = host_listing();

	cr_assert_not_null(now);
	cr_assert_str_eq(now, host_before, "something outside the root changed");
	free(now);
}

static void put(struct archive *a, const struct ent *e)
{
	struct archive_entry *ae = archive_entry_new();
	mode_t type = e->mode & S_IFMT ? e->mode & S_IFMT : S_IFREG;
	size_t size = 0;

	archive_entry_set_pathname(ae, e->name);
	archive_entry_set_mode(ae, type | (e->mode & 07777 ? e->mode & 07777 : 0644));
	archive_entry_set_uid(ae, e->uid);
	archive_entry_set_gid(ae, e->gid);
	if (e->uname)
		archive_entry_set_uname(ae, e->uname);
	archive_entry_set_mtime(ae, MTIME, 0);
	if (e->hardlink) {
		archive_entry_set_hardlink(ae, e->hardlink);
	} else if (type == S_IFLNK) {
		archive_entry_set_symlink(ae, e->data);
	} else if (type == S_IFREG) {
		size = e->zeros ? e->zeros : e->data ? strlen(e->data) : 0;
	} else if (type == S_IFCHR) {
		archive_entry_set_rdev(ae, makedev(1, 3));
	}
	archive_entry_set_size(ae, (la_int64_t)size);
	if (e->xattr)
		archive_entry_xattr_add_entry(ae, e->xattr, e->xvalue, e->xsize ? e->xsize : strlen(e->xvalue));
	cr_assert_eq(archive_write_header(a, ae), ARCHIVE_OK, "%s", archive_error_string(a));
	if (e->zeros) {
		static const char zero[65536];
		for (size_t done = 0; done < size; done += sizeof(zero))
			archive_write_data(a, zero, size - done < sizeof(zero) ? size - done : sizeof(zero));
	} else if (size) {
		cr_assert_eq(archive_write_data(a, e->data, size), (la_ssize_t)size);
	}
	archive_entry_free(ae);
}

/* Writes the entries as layers/<tag> compressed with filter; returns its path. */
static char *mklayer(const char *tag, const char *filter, const struct ent *ents, size_t n)
{
	struct archive *a = archive_write_new();
	char *path = sb_strdupf("%s/layers/%s", base, tag);

	archive_write_set_format_pax_restricted(a);
	if (!strcmp(filter, "gzip"))
		archive_write_add_filter_gzip(a);
	else if (!strcmp(filter, "zstd"))
		archive_write_add_filter_zstd(a);
	else if (!strcmp(filter, "xz"))
		archive_write_add_filter_xz(a);
	cr_assert_eq(archive_write_open_filename(a, path), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++)
		put(a, &ents[i]);
	cr_assert_eq(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	return path;
}

#define LAYER(tag, filter, ...) \
	mklayer(tag, filter, (const struct ent[]){ __VA_ARGS__ }, \
		sizeof((const struct ent[]){ __VA_ARGS__ }) / sizeof(struct ent))

static int unpack(const char *layer, const struct sb_unpack_limits *limits, struct sb_error *err)
{
	return sb_unpack_layer(root_fd, layer, limits, NULL, err);
}

static void unpack_ok(const char *layer)
{
	struct sb_error err = { 0 };

	cr_assert_eq(unpack(layer, NULL, &err), 0, "%s", err.msg);
}

static void unpack_fails(const char *layer, int code, const char *needle)
{
	struct sb_error err = { 0 };

	cr_assert_eq(unpack(layer, NULL, &err), code, "got %d: %s", err.code, err.msg);
	cr_assert_not_null(strstr(err.msg, needle), "'%s' not in: %s", needle, err.msg);
}

/* lstat of a path inside the root; -1 when missing. */
static int rstat(const char *rel, struct stat *st)
{
	return fstatat(root_fd, rel, st, AT_SYMLINK_NOFOLLOW);
}

static int rexists(const char *rel)
{
	struct stat st;

	return rstat(rel, &st) == 0;
}

static mode_t rtype(const char *rel)
{
	struct stat st;

	return rstat(rel, &st) == 0 ? st.st_mode & S_IFMT : 0;
}

static char *rread(const char *rel)
{
	char *path = sb_path_join(root, rel), *text = NULL;

	sb_fs_read_file(&text, NULL, path, 1 << 20, NULL);
	free(path);
	return text;
}

static void assert_content(const char *rel, const char *want)
{
	char *got = rread(rel);

	cr_assert_not_null(got, "%s missing", rel);
	cr_assert_str_eq(got, want, "%s", rel);
	free(got);
}

static char *in_sentinel(const char *rel)
{
	return sb_path_join(sentinel, rel);
}

/* ---- hostile layers ---- */

Test(unpack, dotdot_name_refused)
{
	char *layer = LAYER("l", "none", { .name = "ok", .data = "x" }, { .name = "../sentinel/evil", .data = "x" });

	unpack_fails(layer, SB_ERR_UNSAFE, "../sentinel/evil");
	assert_host_untouched();
	free(layer);
}

Test(unpack, dotdot_inside_name_refused)
{
	char *layer = LAYER("l", "none", { .name = "a/../../sentinel/evil", .data = "x" });

	unpack_fails(layer, SB_ERR_UNSAFE, "a/../../sentinel/evil");
	assert_host_untouched();
	free(layer);
}

Test(unpack, absolute_name_refused)
{
	char *evil = in_sentinel("evil");
	char *layer = LAYER("l", "none", { .name = evil, .data = "x" });

	unpack_fails(layer, SB_ERR_UNSAFE, evil);
	assert_host_untouched();
	cr_assert_eq(tu_sh("test -z \"$(find %s -name evil)\"", root), 0);
	free(layer);
	free(evil);
}

Test(unpack, symlink_write_through_stays_in_root)
{
	char *abs_target = sentinel;
	char *l1 = LAYER("l1", "none", { .name = "abs", .mode = S_IFLNK, .data = abs_target },
			 { .name = "rel", .mode = S_IFLNK, .data = "../../../../../../sentinel" });
	char *l2 = LAYER("l2", "gzip", { .name = "abs/evil", .data = "inside" },
			 { .name = "rel/evil", .data = "inside too" },
			 { .name = "abs/dir/f", .data = "replaced inside" });
	char *inside = sb_path_join(sentinel + 1, "evil"), *inside_f = sb_path_join(sentinel + 1, "dir/f");

	unpack_ok(l1);
	unpack_ok(l2);
	assert_host_untouched();
	assert_content(inside, "inside");
	assert_content(inside_f, "replaced inside");
	assert_content("sentinel/evil", "inside too");
	cr_assert_eq(rtype("abs"), S_IFLNK);
	free(l1);
	free(l2);
	free(inside);
	free(inside_f);
}

Test(unpack, symlink_then_write_in_same_layer_stays_in_root)
{
	char *l = LAYER("l", "none", { .name = "esc", .mode = S_IFLNK, .data = "/../../.." },
			{ .name = "esc/sentinel-like", .data = "x" });

	unpack_ok(l);
	assert_content("sentinel-like", "x");
	assert_host_untouched();
	free(l);
}

Test(unpack, hardlink_to_absolute_target_refused)
{
	char *keep = in_sentinel("keep");
	char *l = LAYER("l", "none", { .name = "h", .hardlink = keep });

	unpack_fails(l, SB_ERR_UNSAFE, "h");
	cr_assert(!rexists("h"));
	assert_host_untouched();
	free(l);
	free(keep);
}

Test(unpack, hardlink_to_dotdot_target_refused)
{
	char *l = LAYER("l", "none", { .name = "h", .hardlink = "../sentinel/keep" });

	unpack_fails(l, SB_ERR_UNSAFE, "../sentinel/keep");
	cr_assert(!rexists("h"));
	assert_host_untouched();
	free(l);
}

Test(unpack, hardlink_through_symlink_stays_in_root)
{
	char *l1 = LAYER("l1", "none", { .name = "esc", .mode = S_IFLNK, .data = sentinel });
	char *l2 = LAYER("l2", "none", { .name = "h", .hardlink = "esc/keep" });
	struct sb_error err = { 0 };

	unpack_ok(l1);
	/* resolves to <root>/<sentinel>/keep, which does not exist */
	cr_assert_lt(unpack(l2, NULL, &err), 0);
	cr_assert_not_null(strstr(err.msg, "'h'"), "%s", err.msg);
	cr_assert(!rexists("h"));
	assert_host_untouched();
	free(l1);
	free(l2);
}

Test(unpack, whiteout_through_symlink_spares_host)
{
	char *l1 = LAYER("l1", "none", { .name = "abs", .mode = S_IFLNK, .data = sentinel },
			 { .name = "rel", .mode = S_IFLNK, .data = "../../../../sentinel" });
	char *l2 = LAYER("l2", "none", { .name = "abs/.wh.keep" }, { .name = "rel/.wh.keep" },
			 { .name = "abs/.wh.dir" }, { .name = "rel/dir/.wh.f" });

	unpack_ok(l1);
	unpack_ok(l2);
	assert_host_untouched();
	cr_assert_eq(rtype("abs"), S_IFLNK);
	free(l1);
	free(l2);
}

Test(unpack, opaque_through_symlink_spares_host)
{
	char *l1 = LAYER("l1", "none", { .name = "abs", .mode = S_IFLNK, .data = sentinel },
			 { .name = "rel", .mode = S_IFLNK, .data = "../sentinel" });
	char *l2 = LAYER("l2", "none", { .name = "abs/.wh..wh..opq" }, { .name = "rel/.wh..wh..opq" });

	unpack_ok(l1);
	unpack_ok(l2);
	assert_host_untouched();
	free(l1);
	free(l2);
}

Test(unpack, symlink_over_directory_of_same_layer_refused)
{
	/* libarchive fixes directory modes by path at the end of a layer:
	 * turning a/ into a symlink would aim that at the host's sentinel/dir */
	char *l = LAYER("l", "none", { .name = "a/", .mode = S_IFDIR | 0755 },
			{ .name = "a/dir/", .mode = S_IFDIR | 0700 },
			{ .name = "a", .mode = S_IFLNK, .data = sentinel });

	unpack_fails(l, SB_ERR_UNSAFE, "'a'");
	assert_host_untouched();
	free(l);
}

Test(unpack, hardlink_to_symlink_over_directory_of_same_layer_refused)
{
	char *l = LAYER("l", "none", { .name = "s", .mode = S_IFLNK, .data = sentinel },
			{ .name = "a/", .mode = S_IFDIR | 0755 }, { .name = "a/dir/", .mode = S_IFDIR | 0700 },
			{ .name = "a", .hardlink = "s" });

	unpack_fails(l, SB_ERR_UNSAFE, "'a'");
	assert_host_untouched();
	free(l);
}

Test(unpack, symlink_loop_refused)
{
	char *l = LAYER("l", "none", { .name = "a", .mode = S_IFLNK, .data = "b" },
			{ .name = "b", .mode = S_IFLNK, .data = "a" }, { .name = "a/x", .data = "x" });

	unpack_fails(l, SB_ERR_UNSAFE, "a/x");
	free(l);
}

Test(unpack, decompression_bomb_hits_byte_limit)
{
	struct sb_unpack_limits lim = { .max_bytes = 1 << 20 };
	struct sb_error err = { 0 };
	char *l = LAYER("bomb", "gzip", { .name = "small", .data = "ok" },
			{ .name = "zeros", .zeros = 64 << 20 });
	struct stat st;

	cr_assert_eq(stat(l, &st), 0);
	cr_assert_lt(st.st_size, 1 << 20, "the bomb is small compressed");
	cr_assert_eq(unpack(l, &lim, &err), SB_ERR_LIMIT, "%s", err.msg);
	cr_assert_not_null(strstr(err.msg, "zeros"), "%s", err.msg);
	cr_assert(!rexists("zeros"), "nothing of the bomb was written");
	assert_host_untouched();
	free(l);
}

Test(unpack, entry_limit)
{
	struct ent ents[50];
	char names[50][16];
	struct sb_unpack_limits lim = { .max_entries = 20 };
	struct sb_error err = { 0 };

	for (int i = 0; i < 50; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		ents[i] = (struct ent){ .name = names[i] };
	}
	char *l = mklayer("many", "zstd", ents, 50);
	cr_assert_eq(unpack(l, &lim, &err), SB_ERR_LIMIT, "%s", err.msg);
	cr_assert(!rexists("f20"));
	free(l);
}

Test(unpack, truncated_archive_is_format_error)
{
	char *l = LAYER("t.gz", "gzip", { .name = "a", .zeros = 100000 }, { .name = "b", .data = "b" });
	struct stat st;

	cr_assert_eq(stat(l, &st), 0);
	cr_assert_eq(truncate(l, st.st_size / 2), 0);
	unpack_fails(l, SB_ERR_FORMAT, l);
	free(l);
}

Test(unpack, corrupt_gzip_names_the_inflate_error)
{
	char *l = LAYER("c.gz", "gzip", { .name = "a", .zeros = 300000 }, { .name = "b", .data = "b" });
	struct stat st;

	cr_assert_eq(stat(l, &st), 0);
	/* overwrite the middle of the deflate stream: inflate (in its thread) fails */
	cr_assert_eq(tu_sh("printf 'XXXXXXXXXXXXXXXX' | dd of=%s bs=1 seek=%lld conv=notrunc status=none", l,
			   (long long)st.st_size / 2), 0);
	unpack_fails(l, SB_ERR_FORMAT, "cannot be decompressed");
	free(l);
}

Test(unpack, limit_stops_a_gzip_layer_mid_stream)
{
	struct ent ents[400];
	char names[400][16];
	struct sb_unpack_limits lim = { .max_entries = 20 };
	struct sb_error err = { 0 };

	/* enough data that the inflating thread is still writing when the extraction stops */
	for (int i = 0; i < 400; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		ents[i] = (struct ent){ .name = names[i], .zeros = 20000 };
	}
	char *l = mklayer("many-gz", "gzip", ents, 400);
	cr_assert_eq(unpack(l, &lim, &err), SB_ERR_LIMIT, "%s", err.msg);
	cr_assert(!rexists("f20"));
	free(l);
}

Test(unpack, garbage_is_format_error)
{
	char *l = sb_strdupf("%s/layers/garbage", base);

	cr_assert_eq(sb_fs_write_atomic(l, "this is not a tar archive, not even close....", 44, 0644, NULL), 0);
	unpack_fails(l, SB_ERR_FORMAT, "garbage");
	free(l);
}

Test(unpack, unsupported_compression_named)
{
	char *l = LAYER("x.xz", "xz", { .name = "a", .data = "a" });

	unpack_fails(l, SB_ERR_FORMAT, "xz");
	cr_assert(!rexists("a"));
	free(l);
}

Test(unpack, missing_layer_not_found)
{
	unpack_fails("/nonexistent/layer", SB_ERR_NOTFOUND, "/nonexistent/layer");
}

/* ---- good layers ---- */

Test(unpack, plain_gzip_zstd)
{
	static const char *const filters[] = { "none", "gzip", "zstd" };

	for (int i = 0; i < 3; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s/file", filters[i]);
		char *l = LAYER(filters[i], filters[i], { .name = name, .data = filters[i] });
		unpack_ok(l);
		assert_content(name, filters[i]);
		free(l);
	}
}

Test(unpack, whiteouts_remove_files_and_trees)
{
	char *l1 = LAYER("l1", "none", { .name = "a", .data = "a" }, { .name = "b", .data = "b" },
			 { .name = "d/x", .data = "x" }, { .name = "d/y", .data = "y" },
			 { .name = "t/deep/er/f", .data = "f" });
	char *l2 = LAYER("l2", "gzip", { .name = ".wh.a" }, { .name = "d/.wh.x" }, { .name = ".wh.t" },
			 { .name = ".wh.never-existed" });

	unpack_ok(l1);
	unpack_ok(l2);
	cr_assert(!rexists("a"));
	cr_assert(!rexists("d/x"));
	cr_assert(!rexists("t"));
	assert_content("b", "b");
	assert_content("d/y", "y");
	cr_assert(!rexists(".wh.a"), "markers are not extracted");
	cr_assert(!rexists("d/.wh.x"));
	free(l1);
	free(l2);
}

Test(unpack, whiteout_spares_what_the_same_layer_wrote)
{
	char *l1 = LAYER("l1", "none", { .name = "d/old", .data = "old" }, { .name = "f", .data = "old" });
	/* OCI: a whiteout hides lower layers only; "d/new" and "f" are this layer's */
	char *l2 = LAYER("l2", "none", { .name = "d/new", .data = "new" }, { .name = "f", .data = "new" },
			 { .name = ".wh.d" }, { .name = ".wh.f" });

	unpack_ok(l1);
	unpack_ok(l2);
	assert_content("d/new", "new");
	cr_assert(!rexists("d/old"));
	assert_content("f", "new");
	free(l1);
	free(l2);
}

Test(unpack, opaque_keeps_what_the_layer_wrote_before_the_marker)
{
	char *l1 = LAYER("l1", "none", { .name = "o/old", .data = "old" },
			 { .name = "o/sub/old2", .data = "old" }, { .name = "o/keepdir/old3", .data = "old" },
			 { .name = "other", .data = "other" });
	/* ".a-new" and "keepdir/new" sort before the marker, "z-new" after it */
	char *l2 = LAYER("l2", "zstd", { .name = "o/", .mode = S_IFDIR | 0750 },
			 { .name = "o/.a-new", .data = "new" }, { .name = "o/keepdir/new", .data = "new" },
			 { .name = "o/.wh..wh..opq" }, { .name = "o/z-new", .data = "new" });

	unpack_ok(l1);
	unpack_ok(l2);
	assert_content("o/.a-new", "new");
	assert_content("o/z-new", "new");
	assert_content("o/keepdir/new", "new");
	cr_assert(!rexists("o/old"));
	cr_assert(!rexists("o/sub"));
	cr_assert(!rexists("o/keepdir/old3"), "lower content below a kept directory goes too");
	cr_assert(!rexists("o/.wh..wh..opq"));
	assert_content("other", "other");
	struct stat st;
	cr_assert_eq(rstat("o", &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0750);
	free(l1);
	free(l2);
}

Test(unpack, aufs_metadata_ignored)
{
	char *l = LAYER("l", "none", { .name = ".wh..wh.plnk/1234.5678", .data = "x" },
			{ .name = ".wh..wh.aufs", .data = "x" }, { .name = "d/.wh..wh.orph/x", .data = "x" },
			{ .name = "real", .data = "r" });

	unpack_ok(l);
	cr_assert(!rexists(".wh..wh.plnk"));
	cr_assert(!rexists(".wh..wh.aufs"));
	cr_assert(!rexists("d/.wh..wh.orph"));
	assert_content("real", "r");
	free(l);
}

Test(unpack, type_changes_both_ways)
{
	char *l1 = LAYER("l1", "none", { .name = "dir2file/child/x", .data = "x" },
			 { .name = "file2dir", .data = "was a file" },
			 { .name = "link2dir", .mode = S_IFLNK, .data = "file2dir" });
	char *l2 = LAYER("l2", "none", { .name = "dir2file", .data = "now a file" },
			 { .name = "file2dir/", .mode = S_IFDIR | 0711 },
			 { .name = "file2dir/inner", .data = "inner" },
			 { .name = "link2dir/", .mode = S_IFDIR | 0755 });

	unpack_ok(l1);
	unpack_ok(l2);
	cr_assert_eq(rtype("dir2file"), S_IFREG);
	assert_content("dir2file", "now a file");
	cr_assert_eq(rtype("file2dir"), S_IFDIR);
	assert_content("file2dir/inner", "inner");
	cr_assert_eq(rtype("link2dir"), S_IFDIR, "a directory entry replaces a symlink");
	free(l1);
	free(l2);
}

Test(unpack, hardlinks)
{
	char *l1 = LAYER("l1", "none", { .name = "usr/lib/", .mode = S_IFDIR | 0755 },
			 { .name = "lib", .mode = S_IFLNK, .data = "usr/lib" });
	char *l2 = LAYER("l2", "gzip", { .name = "a", .data = "shared" }, { .name = "b", .hardlink = "a" },
			 { .name = "lib/c", .hardlink = "a" }, { .name = "d", .hardlink = "lib/c" });
	struct stat sa, sb, sc, sd;

	unpack_ok(l1);
	unpack_ok(l2);
	cr_assert_eq(rstat("a", &sa), 0);
	cr_assert_eq(rstat("b", &sb), 0);
	cr_assert_eq(rstat("usr/lib/c", &sc), 0);
	cr_assert_eq(rstat("d", &sd), 0);
	cr_assert_eq(sa.st_ino, sb.st_ino);
	cr_assert_eq(sa.st_ino, sc.st_ino);
	cr_assert_eq(sa.st_ino, sd.st_ino);
	cr_assert_eq(sa.st_nlink, 4);
	assert_content("d", "shared");
	free(l1);
	free(l2);
}

Test(unpack, modes_setuid_and_numeric_owners)
{
	char *l = LAYER("l", "none", { .name = "suid", .mode = 04755, .data = "#!/bin/sh\n" },
			{ .name = "sgid-dir/", .mode = S_IFDIR | 02775 },
			{ .name = "private", .mode = 0600, .data = "p" },
			{ .name = "owned", .uid = 1234, .gid = 5678, .uname = "root", .data = "o" },
			{ .name = "named", .uid = 4321, .gid = 4321, .uname = "daemon", .data = "n" },
			{ .name = "sticky/", .mode = S_IFDIR | 01777 },
			{ .name = "suid-user", .mode = 06755, .uid = 1234, .gid = 5678, .data = "s" });
	struct stat st;

	unpack_ok(l);
	cr_assert_eq(rstat("suid", &st), 0);
	cr_assert_eq(st.st_mode & 07777, 04755);
	cr_assert_eq(rstat("sgid-dir", &st), 0);
	cr_assert_eq(st.st_mode & 07777, 02775);
	cr_assert_eq(rstat("private", &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	cr_assert_eq(rstat("sticky", &st), 0);
	cr_assert_eq(st.st_mode & 07777, 01777);
	cr_assert_eq(rstat("owned", &st), 0);
	cr_assert_eq(st.st_uid, 1234);
	cr_assert_eq(st.st_gid, 5678);
	cr_assert_eq(rstat("named", &st), 0);
	cr_assert_eq(st.st_uid, 4321, "the name 'daemon' is not looked up on the host");
	cr_assert_eq(rstat("suid-user", &st), 0);
	cr_assert_eq(st.st_mode & 07777, 06755, "setuid/setgid survive the chown");
	cr_assert_eq(st.st_uid, 1234);
	free(l);
}

Test(unpack, mtimes_of_files_dirs_and_symlinks)
{
	char *l = LAYER("l", "none", { .name = "d/", .mode = S_IFDIR | 0755 }, { .name = "d/f", .data = "f" },
			{ .name = "d/s", .mode = S_IFLNK, .data = "f" });
	struct stat st;

	unpack_ok(l);
	cr_assert_eq(rstat("d", &st), 0);
	cr_assert_eq(st.st_mtime, MTIME, "directory time set after its children were written");
	cr_assert_eq(rstat("d/f", &st), 0);
	cr_assert_eq(st.st_mtime, MTIME);
	cr_assert_eq(rstat("d/s", &st), 0);
	cr_assert_eq(st.st_mtime, MTIME);
	free(l);
}

Test(unpack, xattrs_user_kept_trusted_dropped)
{
	char *l = LAYER("l", "none", { .name = "x", .data = "x", .xattr = "user.sandbench", .xvalue = "hello" },
			{ .name = "t", .data = "t", .xattr = "trusted.overlay.opaque", .xvalue = "y" });
	char *x = sb_path_join(root, "x"), *t = sb_path_join(root, "t");
	char buf[64];

	unpack_ok(l);
	ssize_t n = lgetxattr(x, "user.sandbench", buf, sizeof(buf));
	cr_assert_eq(n, 5, "user xattr missing (errno %d)", errno);
	cr_assert_eq(memcmp(buf, "hello", 5), 0);
	cr_assert_lt(lgetxattr(t, "trusted.overlay.opaque", buf, sizeof(buf)), 0);
	assert_content("t", "t");
	free(l);
	free(x);
	free(t);
}

Test(unpack, file_capability_kept)
{
	/* VFS_CAP_REVISION_2 | effective, permitted = CAP_NET_RAW (13): what ping carries */
	static const char cap[20] = { 0x01, 0x00, 0x00, 0x02, 0x00, 0x20 };
	char *l = LAYER("l", "none", { .name = "ping", .mode = 0755, .data = "p", .uid = 0,
				       .xattr = "security.capability", .xvalue = cap, .xsize = sizeof(cap) });
	char *path = sb_path_join(root, "ping");
	char buf[64];

	unpack_ok(l);
	cr_assert_eq(lgetxattr(path, "security.capability", buf, sizeof(buf)), (ssize_t)sizeof(cap),
		     "capability lost (errno %d)", errno);
	cr_assert_eq(memcmp(buf, cap, sizeof(cap)), 0);
	free(l);
	free(path);
}

Test(unpack, symlinks_stay_symlinks)
{
	char *l = LAYER("l", "none", { .name = "abs", .mode = S_IFLNK, .data = "/etc/passwd" },
			{ .name = "rel", .mode = S_IFLNK, .data = "../up/there" },
			{ .name = "dangling", .mode = S_IFLNK, .data = "nowhere" });
	char *abs = sb_path_join(root, "abs"), *rel = sb_path_join(root, "rel");
	char buf[64] = { 0 };

	unpack_ok(l);
	cr_assert_eq(rtype("abs"), S_IFLNK);
	cr_assert_eq(readlink(abs, buf, sizeof(buf) - 1), 11);
	cr_assert_str_eq(buf, "/etc/passwd");
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(readlink(rel, buf, sizeof(buf) - 1), 11);
	cr_assert_str_eq(buf, "../up/there");
	cr_assert_eq(rtype("dangling"), S_IFLNK);
	free(l);
	free(abs);
	free(rel);
}

Test(unpack, merged_usr_write_through)
{
	char *l1 = LAYER("l1", "gzip", { .name = "usr/", .mode = S_IFDIR | 0755 },
			 { .name = "usr/lib/", .mode = S_IFDIR | 0755 },
			 { .name = "usr/bin/", .mode = S_IFDIR | 0755 },
			 { .name = "lib", .mode = S_IFLNK, .data = "usr/lib" },
			 { .name = "bin", .mode = S_IFLNK, .data = "/usr/bin" });
	char *l2 = LAYER("l2", "zstd", { .name = "lib/x", .data = "x" }, { .name = "lib/newdir/y", .data = "y" },
			 { .name = "bin/tool", .mode = 0755, .data = "t" }, { .name = "lib/.wh.gone" });

	unpack_ok(l1);
	cr_assert_eq(tu_sh("echo gone > %s/usr/lib/gone", root), 0);
	unpack_ok(l2);
	cr_assert_eq(rtype("lib"), S_IFLNK, "the symlink survives");
	cr_assert_eq(rtype("bin"), S_IFLNK);
	assert_content("usr/lib/x", "x");
	assert_content("usr/lib/newdir/y", "y");
	assert_content("usr/bin/tool", "t");
	cr_assert(!rexists("usr/lib/gone"), "the whiteout went through the symlink too");
	free(l1);
	free(l2);
}

Test(unpack, device_nodes_skipped)
{
	char *l = LAYER("l", "none", { .name = "dev/null", .mode = S_IFCHR | 0666 }, { .name = "f", .data = "f" });

	unpack_ok(l);
	cr_assert(!rexists("dev/null"));
	assert_content("f", "f");
	free(l);
}

Test(unpack, root_entry_and_dot_prefixes)
{
	char *l = LAYER("l", "none", { .name = "./", .mode = S_IFDIR | 0700 },
			{ .name = "./etc/", .mode = S_IFDIR | 0755 }, { .name = "./etc//./hosts", .data = "h" });
	struct stat st;

	unpack_ok(l);
	assert_content("etc/hosts", "h");
	cr_assert_eq(fstat(root_fd, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0755, "the caller's root keeps its mode");
	free(l);
}

Test(unpack, utf8_names_kept_bytewise)
{
	/* the writer needs a UTF-8 locale; the unpacker runs in the "C" locale */
	cr_assert_not_null(setlocale(LC_CTYPE, "C.UTF-8"));
	char *l = LAYER("l", "gzip", { .name = "caf\xc3\xa9/na\xc3\xafve", .data = "u" });
	setlocale(LC_CTYPE, "C");

	unpack_ok(l);
	assert_content("caf\xc3\xa9/na\xc3\xafve", "u");
	free(l);
}

struct progress_log {
	int count;
	unsigned long long last_done, total;
	int monotonic;
};

static void on_progress(void *user, const struct sb_progress_event *ev)
{
	struct progress_log *p = user;

	cr_assert_eq(ev->phase, SB_PROGRESS_UNPACK);
	if (ev->done < p->last_done)
		p->monotonic = 0;
	p->count++;
	p->last_done = ev->done;
	p->total = ev->total;
}

Test(unpack, progress_reports_bytes)
{
	struct progress_log log = { .monotonic = 1 };
	struct sb_progress progress = { on_progress, &log };
	struct sb_error err = { 0 };
	char *l = LAYER("l", "none", { .name = "big", .zeros = 8 << 20 }, { .name = "small", .data = "s" });
	struct stat st;

	cr_assert_eq(stat(l, &st), 0);
	cr_assert_eq(sb_unpack_layer(root_fd, l, NULL, &progress, &err), 0, "%s", err.msg);
	cr_assert_geq(log.count, 1);
	cr_assert_lt(log.count, 100, "a modest rate");
	cr_assert(log.monotonic);
	cr_assert_eq(log.last_done, (unsigned long long)st.st_size);
	cr_assert_eq(log.total, (unsigned long long)st.st_size);
	free(l);
}

/* ---- in-root resolution ---- */

Test(unpack, resolve_in_root)
{
	char out[PATH_MAX];
	struct sb_error err = { 0 };

	cr_assert_eq(tu_sh("cd %s && mkdir -p usr/lib real && ln -s usr/lib lib && ln -s /real abs && "
			   "ln -s ../../../.. up && ln -s lib chain && ln -s self self", root), 0);
	cr_assert_eq(sb_unpack_resolve(out, root_fd, "lib/x/y", &err), 0);
	cr_assert_str_eq(out, "usr/lib/x/y");
	cr_assert_eq(sb_unpack_resolve(out, root_fd, "abs/f", &err), 0);
	cr_assert_str_eq(out, "real/f");
	cr_assert_eq(sb_unpack_resolve(out, root_fd, "up/etc", &err), 0);
	cr_assert_str_eq(out, "etc");
	cr_assert_eq(sb_unpack_resolve(out, root_fd, "chain/../lib", &err), 0);
	cr_assert_str_eq(out, "usr/lib");
	cr_assert_eq(sb_unpack_resolve(out, root_fd, "", &err), 0);
	cr_assert_str_eq(out, "");
	cr_assert_eq(sb_unpack_resolve(out, root_fd, "self/x", &err), SB_ERR_UNSAFE);
}

Test(unpack, clean_name)
{
	char out[PATH_MAX];

	cr_assert_eq(sb_unpack_clean_name(out, "./a//b/./c/", "entry", NULL), 0);
	cr_assert_str_eq(out, "a/b/c");
	cr_assert_eq(sb_unpack_clean_name(out, "./", "entry", NULL), 0);
	cr_assert_str_eq(out, "");
	cr_assert_eq(sb_unpack_clean_name(out, "/etc", "entry", NULL), SB_ERR_UNSAFE);
	cr_assert_eq(sb_unpack_clean_name(out, "a/..", "entry", NULL), SB_ERR_UNSAFE);
	cr_assert_eq(sb_unpack_clean_name(out, "a/..b", "entry", NULL), 0);
}

/* ---- a whole image ---- */

static char *layer_blob(const char *images, const char *key)
{
	return tu_sh_out(". %s/digests && echo %s/layered/blobs/sha256/${%s#sha256:}", images, images, key);
}

Test(unpack, busybox_two_layer_image_matches_expected_tree, .timeout = 120)
{
	char *images = sb_path_join(base, "layers/images"), *expect = sb_path_join(base, "layers/expected");
	char *mk = tu_srcpath("tests/fixtures/make-images.sh"), *tree = tu_srcpath("tests/fixtures/unpack-tree.sh");

	cr_assert_eq(tu_sh("sh %s %s >/dev/null", mk, images), 0);
	char *bb = layer_blob(images, "BUSYBOX_LAYER"), *chg = layer_blob(images, "CHANGES_LAYER");
	cr_assert_not_null(bb);
	cr_assert_not_null(chg);
	unpack_ok(bb);
	unpack_ok(chg);
	cr_assert_eq(tu_sh("sh %s expect %s %s", tree, bb, expect), 0);
	char *want = tu_sh_out("sh %s list %s", tree, expect), *got = tu_sh_out("sh %s list %s", tree, root);
	cr_assert_not_null(want);
	cr_assert_not_null(got);
	cr_assert_gt(strlen(want), 1000, "the busybox tree is listed");
	if (strcmp(want, got) != 0)
		tu_sh("sh %s list %s > %s.list; sh %s list %s | diff -u %s.list - >&2 || true",
		      tree, expect, expect, tree, root, expect);
	cr_assert_str_eq(got, want, "unpacked tree differs from the expected one (diff above)");
	assert_host_untouched();
	free(images);
	free(expect);
	free(mk);
	free(tree);
	free(bb);
	free(chg);
	free(want);
	free(got);
}
