#include "config.h"

#include <archive.h>
#include <archive_entry.h>

#include "base/archive_dl.h"
#include "internal.h"

/* Every libarchive function sandbench calls. The constructors load the
 * library, so every other function is only reached with it loaded. */
#define ARCHIVE_CONSTRUCTORS(C)                                                                                     \
	C(struct archive *, archive_read_new)                                                                       \
	C(struct archive *, archive_write_new)                                                                      \
	C(struct archive *, archive_write_disk_new)                                                                 \
	C(struct archive_entry *, archive_entry_new)

/* return type, name, parameters, arguments */
#define ARCHIVE_FUNCTIONS(F)                                                                                        \
	F(int, archive_errno, (struct archive *a), (a))                                                             \
	F(const char *, archive_error_string, (struct archive *a), (a))                                             \
	F(la_int64_t, archive_filter_bytes, (struct archive *a, int n), (a, n))                                     \
	F(int, archive_read_support_filter_all, (struct archive *a), (a))                                           \
	F(int, archive_read_support_filter_gzip, (struct archive *a), (a))                                          \
	F(int, archive_read_support_filter_zstd, (struct archive *a), (a))                                          \
	F(int, archive_read_support_format_raw, (struct archive *a), (a))                                           \
	F(int, archive_read_support_format_tar, (struct archive *a), (a))                                           \
	F(int, archive_read_open_fd, (struct archive *a, int fd, size_t block), (a, fd, block))                     \
	F(int, archive_read_open_filename, (struct archive *a, const char *file, size_t block), (a, file, block))   \
	F(int, archive_read_next_header, (struct archive *a, struct archive_entry **e), (a, e))                     \
	F(la_ssize_t, archive_read_data, (struct archive *a, void *buf, size_t size), (a, buf, size))               \
	F(int, archive_read_data_block, (struct archive *a, const void **buf, size_t *size, la_int64_t *offset),    \
	  (a, buf, size, offset))                                                                                   \
	F(int, archive_read_free, (struct archive *a), (a))                                                         \
	F(int, archive_write_disk_set_options, (struct archive *a, int flags), (a, flags))                          \
	F(int, archive_write_set_format_pax_restricted, (struct archive *a), (a))                                   \
	F(int, archive_write_set_format_gnutar, (struct archive *a), (a))                                           \
	F(int, archive_write_open_fd, (struct archive *a, int fd), (a, fd))                                         \
	F(int, archive_write_open, (struct archive *a, void *client, archive_open_callback *o,                      \
				    archive_write_callback *w, archive_close_callback *c), (a, client, o, w, c))    \
	F(int, archive_write_set_bytes_per_block, (struct archive *a, int n), (a, n))                               \
	F(int, archive_write_set_format_raw, (struct archive *a), (a))                                              \
	F(int, archive_write_add_filter_gzip, (struct archive *a), (a))                                             \
	F(int, archive_write_add_filter_zstd, (struct archive *a), (a))                                             \
	F(int, archive_write_open_filename, (struct archive *a, const char *file), (a, file))                       \
	F(int, archive_write_header, (struct archive *a, struct archive_entry *e), (a, e))                          \
	F(la_ssize_t, archive_write_data, (struct archive *a, const void *buf, size_t size), (a, buf, size))        \
	F(la_ssize_t, archive_write_data_block, (struct archive *a, const void *buf, size_t size, la_int64_t off),  \
	  (a, buf, size, off))                                                                                      \
	F(int, archive_write_finish_entry, (struct archive *a), (a))                                                \
	F(int, archive_write_close, (struct archive *a), (a))                                                       \
	F(int, archive_write_free, (struct archive *a), (a))                                                        \
	F(const char *, archive_entry_pathname, (struct archive_entry *e), (e))                                     \
	F(const char *, archive_entry_hardlink, (struct archive_entry *e), (e))                                     \
	F(const char *, archive_entry_symlink, (struct archive_entry *e), (e))                                      \
	F(__LA_MODE_T, archive_entry_filetype, (struct archive_entry *e), (e))                                      \
	F(__LA_MODE_T, archive_entry_mode, (struct archive_entry *e), (e))                                          \
	F(time_t, archive_entry_mtime, (struct archive_entry *e), (e))                                              \
	F(struct archive_entry *, archive_entry_clear, (struct archive_entry *e), (e))                              \
	F(la_int64_t, archive_entry_size, (struct archive_entry *e), (e))                                           \
	F(int, archive_entry_size_is_set, (struct archive_entry *e), (e))                                           \
	F(int, archive_entry_xattr_reset, (struct archive_entry *e), (e))                                           \
	F(int, archive_entry_xattr_next, (struct archive_entry *e, const char **name, const void **value,           \
					  size_t *size), (e, name, value, size))

/* name, parameters, arguments of the functions that return nothing */
#define ARCHIVE_PROCEDURES(P)                                                                                       \
	P(archive_entry_free, (struct archive_entry *e), (e))                                                       \
	P(archive_entry_set_pathname, (struct archive_entry *e, const char *s), (e, s))                             \
	P(archive_entry_copy_pathname, (struct archive_entry *e, const char *s), (e, s))                            \
	P(archive_entry_copy_hardlink, (struct archive_entry *e, const char *s), (e, s))                            \
	P(archive_entry_set_symlink, (struct archive_entry *e, const char *s), (e, s))                              \
	P(archive_entry_set_mode, (struct archive_entry *e, __LA_MODE_T m), (e, m))                                 \
	P(archive_entry_set_uid, (struct archive_entry *e, la_int64_t id), (e, id))                                 \
	P(archive_entry_set_gid, (struct archive_entry *e, la_int64_t id), (e, id))                                 \
	P(archive_entry_set_size, (struct archive_entry *e, la_int64_t size), (e, size))                            \
	P(archive_entry_set_mtime, (struct archive_entry *e, time_t t, long ns), (e, t, ns))                        \
	P(archive_entry_xattr_clear, (struct archive_entry *e), (e))                                                \
	P(archive_entry_xattr_add_entry, (struct archive_entry *e, const char *name, const void *value,             \
					  size_t size), (e, name, value, size))

#define CONSTRUCTOR_SLOT(ret, name) ret (*name)(void); /* NOLINT(bugprone-macro-parentheses): declarators */
#define SLOT(ret, name, params, args) ret(*name) params; /* NOLINT(bugprone-macro-parentheses): declarators */
#define PROC_SLOT(name, params, args) void(*name) params; /* NOLINT(bugprone-macro-parentheses): declarators */
static struct {
	ARCHIVE_CONSTRUCTORS(CONSTRUCTOR_SLOT)
	ARCHIVE_FUNCTIONS(SLOT)
	ARCHIVE_PROCEDURES(PROC_SLOT)
} api;

#define CONSTRUCTOR_SYMBOL(ret, name) { #name, (void **)&api.name },
#define SYMBOL(ret, name, params, args) { #name, (void **)&api.name },
#define PROC_SYMBOL(name, params, args) { #name, (void **)&api.name },
static const struct sb_dynlib_symbol symbols[] = {
	ARCHIVE_CONSTRUCTORS(CONSTRUCTOR_SYMBOL)
	ARCHIVE_FUNCTIONS(SYMBOL)
	ARCHIVE_PROCEDURES(PROC_SYMBOL)
};

static struct sb_dynlib lib = { "libarchive.so.13", "libarchive13", symbols, sizeof(symbols) / sizeof(symbols[0]),
				0, "" };

int sb_archive_load(struct sb_error *err)
{
	return sb_dynlib_load(&lib, err);
}

/* NULL (as for no memory) when the library is missing */
#define CONSTRUCTOR_WRAPPER(ret, name)                                                                              \
	SB_DYNLIB_FORWARDER ret name(void)                                                                          \
	{                                                                                                           \
		return sb_archive_load(NULL) == 0 ? api.name() : NULL;                                              \
	}
#define WRAPPER(ret, name, params, args)                                                                            \
	SB_DYNLIB_FORWARDER ret name params                                                                         \
	{                                                                                                           \
		return api.name args;                                                                               \
	}
#define PROC_WRAPPER(name, params, args)                                                                            \
	SB_DYNLIB_FORWARDER void name params                                                                        \
	{                                                                                                           \
		api.name args;                                                                                      \
	}
ARCHIVE_CONSTRUCTORS(CONSTRUCTOR_WRAPPER)
ARCHIVE_FUNCTIONS(WRAPPER)
ARCHIVE_PROCEDURES(PROC_WRAPPER)
