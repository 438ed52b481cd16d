/* Secure, streaming extraction of one OCI image layer (a tar, plain, gzip or
 * zstd) into an image root, with OCI whiteouts. */
#ifndef SB_UNPACK_H
#define SB_UNPACK_H

#include "error.h"
#include "progress.h"

#define SB_UNPACK_DEFAULT_MAX_BYTES (64ULL << 30)   /* 64 GiB of file data */
#define SB_UNPACK_DEFAULT_MAX_ENTRIES 2000000ULL

struct sb_unpack_limits {
	unsigned long long max_bytes;    /* total uncompressed file bytes; 0: default */
	unsigned long long max_entries;  /* archive entries, whiteouts included; 0: default */
};

/* Applies the layer at layer_path to the directory root_fd, on top of what
 * earlier layers left there. Compression is detected from the magic bytes.
 *
 * Every entry's parent is resolved inside the root as if it were "/" (see
 * unpack_path.h), so a layer writes through the symlinks of the layers below
 * (lib -> usr/lib) but nothing is ever written, linked or removed outside
 * the root. ".wh.NAME" removes NAME of the layers below; "DIR/.wh..wh..opq"
 * removes what DIR held before this layer (wherever the marker is in the
 * archive); what the layer itself wrote stays in both cases (OCI); other
 * ".wh..wh.*" (aufs) entries are ignored. A non-directory replacing a
 * directory of the same layer is refused (libarchive fixes directories up by
 * path when the layer ends). Modes (setuid included), numeric
 * owners (names are never looked up on the host), user.* and
 * security.capability xattrs and mtimes are kept; device nodes are skipped
 * (a device file on the host disk would bypass the sandbox). The image root
 * holds setuid files of the image: its parent must not be open to other users.
 *
 * Memory stays bounded whatever the layer size (it grows with the number of
 * entries). The call changes the working directory of the process while it
 * runs and restores it: not for multi-threaded callers.
 *
 * Errors: SB_ERR_UNSAFE for hostile entries (message names the entry),
 * SB_ERR_LIMIT when limits (NULL: defaults) are exceeded, SB_ERR_FORMAT for a
 * corrupt archive or an unsupported compression, SB_ERR_IO / SB_ERR_NOSPACE.
 * On error the root is left partly written: the caller discards it.
 * progress gets SB_PROGRESS_UNPACK events: done/total are compressed bytes
 * read / the layer's file size. */
int sb_unpack_layer(int root_fd, const char *layer_path, const struct sb_unpack_limits *limits,
		    const struct sb_progress *progress, struct sb_error *err);

#endif
