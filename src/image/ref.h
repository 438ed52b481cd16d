/* Image references: [registry/]repository[:tag][@digest], Docker habits included
 * ("python:3.12" is docker.io/library/python:3.12). */
#ifndef SB_IMAGE_REF_H
#define SB_IMAGE_REF_H

#include "base/error.h"

#define SB_IMAGE_DEFAULT_REGISTRY "docker.io"
#define SB_IMAGE_DEFAULT_TAG "latest"

struct sb_image_ref {
	char *registry;    /* "docker.io", "localhost:5000", "127.0.0.1:41234" */
	char *repository;  /* "library/python" */
	char *tag;         /* "3.12"; "latest" when neither tag nor digest was given; may be NULL */
	char *digest;      /* "sha256:..." when pinned, else NULL */
};

/* Parses and normalises s; on error ref is left empty. */
int sb_image_ref_parse(struct sb_image_ref *ref, const char *s, struct sb_error *err);
/* Canonical form "registry/repository[:tag][@digest]" (malloc'd, NULL on OOM). */
char *sb_image_ref_format(const struct sb_image_ref *ref);
/* The canonical name of an image made on this machine (commit, build): a
 * reference without a registry goes under "localhost/" (podman's habit),
 * never under a public registry's name ("tools" -> "localhost/tools:latest");
 * one with a registry is kept. A digest is refused. *out is malloc'd. */
int sb_image_ref_local(char **out, const char *s, struct sb_error *err);
void sb_image_ref_clear(struct sb_image_ref *ref);

#endif
