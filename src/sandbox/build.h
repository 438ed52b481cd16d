/* image build: a Dockerfile (image/dockerfile.h) into an image, step by
 * step. RUN runs in a disposable sandbox of the previous step's image whose
 * disk is committed as the step's layer (commit.h); COPY and ADD write a
 * layer from the context's files; the other instructions change the config
 * only. A step cache (ROOT/images/build-cache) maps the parent image, the
 * instruction, the copied files' content and the build args to the image
 * the step made. */
#ifndef SB_SANDBOX_BUILD_H
#define SB_SANDBOX_BUILD_H

#include <jansson.h>
#include <stddef.h>

#include "base/digest.h"
#include "base/error.h"
#include "base/root.h"
#include "image/bootstrap.h"

struct sb_build_event {
	size_t step, n_steps;            /* 1-based */
	int line;
	const char *word, *args;         /* "RUN", "apt-get ..." */
	int cached;                      /* the step cache had it: nothing ran */
};

struct sb_build_opts {
	const char *context;             /* the directory COPY reads from */
	const char *dockerfile;          /* NULL: CONTEXT/Dockerfile */
	const char *ref;                 /* the result's name (sb_image_ref_local) */
	int network;                     /* 1: every RUN with the network on */
	char *const *build_args;         /* "K=V" for ARG */
	size_t n_build_args;
	int no_cache;
	int log_fd;                      /* where RUN's output goes; -1: nowhere */
	void (*progress)(void *user, const struct sb_build_event *ev);
	void *user;
};

struct sb_build_result {
	char digest[SB_DIGEST_STR_LEN];
	char *ref;                       /* canonical ("localhost/x:latest") */
	size_t steps, cached, sandboxes;
	int exit_code;                   /* a RUN that failed: its status; else 0 */
};

/* Builds and names the image. Bad input (the Dockerfile, a path out of the
 * context, a build arg) is refused before anything runs; a failing RUN
 * (SB_ERR_STATE, exit_code set) leaves no sandbox and names nothing. */
int sb_build(struct sb_build_result *out, struct sb_root *root, const struct sb_build_opts *o, struct sb_error *err);
void sb_build_result_clear(struct sb_build_result *r);
/* The result as `sandbench image build --json` prints it (src/sandbox/json.c). */
json_t *sb_build_result_json(const struct sb_build_result *r);

/* The default image (SB_IMAGE_DEFAULT_NAME): the bootstrap base under
 * SB_IMAGE_BASE_NAME (image/bootstrap.h), then a recipe built on it: the
 * shipped default.Dockerfile (installed in the data folder; a build that was
 * not installed reads its source tree's) unless o->recipe names another. */
struct sb_default_image_opts {
	struct sb_bootstrap_opts base;   /* its name is SB_IMAGE_BASE_NAME */
	const char *recipe;              /* NULL: the shipped default.Dockerfile */
	int log_fd;                      /* as in sb_build_opts */
	void (*progress)(void *user, const struct sb_build_event *ev);
	void *user;
};

struct sb_default_image_result {
	struct sb_bootstrap_result base;
	struct sb_build_result image;
	char recipe[4096];               /* the Dockerfile it was built from */
};

int sb_build_default_image(struct sb_default_image_result *out, struct sb_root *root,
			   const struct sb_default_image_opts *o, struct sb_error *err);
void sb_default_image_result_clear(struct sb_default_image_result *r);

#endif
