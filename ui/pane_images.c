/* The Images pane: installed images with their pinned digest, size and the
 * sandboxes that use them; remove and prune from here. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "base/i18n.h"
#include "image/store.h"
#include "query.h"
#include "registry/registry.h"
#include "ui.h"
#include "base/units.h"

struct images {
	struct sb_image_info *list;
	size_t n;
	size_t *shown;               /* the rows of the pane: indexes that pass its query */
	size_t n_shown;
};

/* The query's view of an image (query.h): its references, digest and users. */
struct image_row {
	struct ui_app *app;
	const struct sb_image_info *img;
};

static size_t values(const void *row, const char *field, char (*vals)[UI_QUERY_VALUE_MAX], size_t max)
{
	const struct image_row *r = row;
	size_t n = 0;

	for (size_t i = 0; (!field || !strcmp(field, "name")) && i < r->img->n_refs && n < max; i++)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", r->img->refs[i]);
	if ((!field || !strcmp(field, "digest")) && n < max)
		snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", r->img->digest);
	for (size_t i = 0; (!field || !strcmp(field, "user")) && i < r->app->n_sbx && n < max; i++)
		if (!strcmp(r->app->sbx[i].rec.image_digest, r->img->digest))
			snprintf(vals[n++], UI_QUERY_VALUE_MAX, "%s", r->app->sbx[i].rec.name);
	return n;
}

static const char *const field_names[] = { "name", "digest", "user", NULL };
static const struct ui_query_fields fields = { field_names, NULL, values };

static void refilter(struct ui_app *app)
{
	struct images *im = app->images;
	size_t *shown;

	if (!im)
		return;
	/* out of memory: no rows rather than rows of the list before */
	if (!(shown = realloc(im->shown, sizeof(*shown) * (im->n ? im->n : 1)))) {
		im->n_shown = 0;
		return;
	}
	im->shown = shown;
	im->n_shown = 0;
	for (size_t i = 0; i < im->n; i++) {
		struct image_row r = { app, &im->list[i] };
		if (ui_filter_match(app, UI_PANE_IMAGES, &r))
			shown[im->n_shown++] = i;
	}
	app->dirty = 1;
}

static const char *image_ref(const struct sb_image_info *img)
{
	return img->ref[0] ? img->ref : img->digest;
}

/* The image of a row of the pane, NULL if none. */
static const struct sb_image_info *row_image(struct images *im, size_t row)
{
	return im && row < im->n_shown ? &im->list[im->shown[row]] : NULL;
}

static struct images *state(struct ui_app *app)
{
	if (!app->images)
		app->images = calloc(1, sizeof(struct images));
	return app->images;
}

void ui_images_reload(struct ui_app *app)
{
	struct images *im = state(app);
	struct sb_error err;
	struct sb_image_info *list = NULL;
	size_t n = 0;

	if (!im)
		return;
	ui_app_note_generation(app, SB_GEN_IMAGES);
	if (sb_image_list(&list, &n, app->root, &err) < 0) {
		ui_app_message(app, 1, "%s", err.msg);
		return;
	}
	sb_image_list_free(im->list, im->n);
	im->list = list;
	im->n = n;
	refilter(app);
}

void ui_images_free(struct ui_app *app)
{
	struct images *im = app->images;

	if (!im)
		return;
	sb_image_list_free(im->list, im->n);
	free(im->shown);
	free(im);
	app->images = NULL;
}

size_t ui_images_count(struct ui_app *app)
{
	struct images *im = state(app);

	return im ? im->n : 0;
}

const char *ui_images_ref(struct ui_app *app, size_t i)
{
	struct images *im = state(app);

	if (!im || i >= im->n)
		return NULL;
	return image_ref(&im->list[i]);
}

static size_t rows(struct ui_app *app)
{
	struct images *im = state(app);

	return im ? im->n_shown : 0;
}

/* The sandboxes pinned to img, from the workbench's own listing (current
 * without re-reading every record for the image list); returns their count. */
static size_t used_by(struct ui_app *app, const struct sb_image_info *img, char *buf, size_t size)
{
	size_t len = 0, count = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < app->n_sbx; i++) {
		if (strcmp(app->sbx[i].rec.image_digest, img->digest) != 0)
			continue;
		count++;
		if (len + 1 < size) {
			int n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", app->sbx[i].rec.name);
			if (n > 0)
				len += (size_t)n;
		}
	}
	if (!count)
		snprintf(buf, size, "-");
	return count;
}

static void draw(struct ui_app *app, WINDOW *w, int focused)
{
	struct images *im = state(app);
	struct ui_pane_view *v = &app->views[UI_PANE_IMAGES];
	int h = getmaxy(w) - 2, width = getmaxx(w), wd = 14, ws = 8;
	int wr = (width - wd - ws - 3) / 2, wu = width - wr - wd - ws - 3;
	char buf[1024];

	ui_draw_text(w, 1, 0, wr, _("REFERENCE"), ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
	ui_draw_text(w, 1, wr + 1, wd, _("DIGEST"), ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
	ui_draw_text(w, 1, wr + wd + 2, ws, _("SIZE"), ui_theme_attr(UI_ROLE_COLUMNS), UI_RIGHT);
	ui_draw_text(w, 1, wr + wd + ws + 3, wu, _("USED BY"), ui_theme_attr(UI_ROLE_COLUMNS), UI_LEFT);
	if (!im || im->n_shown == 0) {
		ui_draw_put(w, 3, 2, width - 4, im && im->n ? _("no image matches the filter (Esc on '/' clears it)")
			    : _("no images: 'sandbench image pull REF' or p here"), ui_theme_attr(UI_ROLE_DIM));
		return;
	}
	ui_app_clamp_view(app, UI_PANE_IMAGES, im->n_shown, h);
	for (int r = 0; r < h && v->top + (size_t)r < im->n_shown; r++) {
		size_t idx = v->top + (size_t)r;
		const struct sb_image_info *img = row_image(im, idx);
		attr_t a = idx == v->selected ? ui_theme_attr(focused ? UI_ROLE_SELECTED : UI_ROLE_SELECTED_DIM) : A_NORMAL;
		const char *hex = strchr(img->digest, ':');
		ui_draw_text(w, 2 + r, 0, width, "", a, UI_LEFT);
		ui_draw_text(w, 2 + r, 0, wr, img->ref[0] ? img->ref : _("<untagged>"), a, UI_LEFT);
		snprintf(buf, sizeof(buf), "%.12s", hex ? hex + 1 : img->digest);
		ui_draw_text(w, 2 + r, wr + 1, wd, buf, a, UI_LEFT);
		sb_units_format_size(buf, sizeof(buf), img->size, SB_UNITS_COMPACT);
		ui_draw_text(w, 2 + r, wr + wd + 2, ws, buf, a, UI_RIGHT);
		used_by(app, img, buf, sizeof(buf));
		ui_draw_text(w, 2 + r, wr + wd + ws + 3, wu, buf, a, UI_LEFT);
	}
}

static void details(struct ui_app *app, size_t row, void (*line)(void *, const char *, const char *, int), void *ctx)
{
	struct images *im = state(app);
	const struct sb_image_info *img;
	char buf[1024];

	if (!(img = row_image(im, row)))
		return;
	line(ctx, _("Reference"), img->ref[0] ? img->ref : _("<untagged>"), 0);
	for (size_t i = 1; i < img->n_refs; i++)
		line(ctx, "", img->refs[i], 0);
	line(ctx, _("Digest"), img->digest, 0);
	line(ctx, _("Platform"), img->platform ? img->platform : "", 0);
	sb_units_format_size(buf, sizeof(buf), img->size, SB_UNITS_COMPACT);
	line(ctx, _("Size"), buf, 0);
	sb_units_format_size(buf, sizeof(buf), img->content_size, SB_UNITS_COMPACT);
	line(ctx, _("Download"), buf, 0);
	snprintf(buf, sizeof(buf), "%zu", img->n_layers);
	line(ctx, _("Layers"), buf, 0);
	line(ctx, _("Created"), img->created ? img->created : "", 0);
	line(ctx, _("Installed"), img->installed ? img->installed : "", 0);
	line(ctx, _("Source"), img->source ? img->source : "", 0);
	line(ctx, _("Rootfs"), img->rootfs ? img->rootfs : "", 0);
	used_by(app, img, buf, sizeof(buf));
	line(ctx, _("Used by"), buf, 0);
}

/* ---- remove and prune as jobs ---- */

struct image_op {
	char ref[SB_IMAGE_REF_MAX];
};

static int job_remove(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct sb_image_removal r;
	int rc;

	(void)ctx;
	rc = sb_image_remove(&r, root, ((struct image_op *)arg)->ref, 0, err);
	if (rc == 0)
		sb_image_removal_clear(&r);
	return rc;
}

/* arg non-NULL: the dry run, whose counts the confirmation shows */
static int job_prune(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct sb_image_prune_report rep;
	char size[32];
	int rc;

	if ((rc = arg ? sb_image_prune(&rep, root, SB_IMAGE_PRUNE_DRY_RUN, err) : sb_image_prune(&rep, root, 0, err)) < 0)
		return rc;
	sb_units_format_size(size, sizeof(size), rep.bytes, SB_UNITS_COMPACT);
	if (!arg) {
		ui_job_event(ctx, 0, _("prune: %zu image(s), %zu blob(s), %zu unpacked tree(s) removed, %s freed"), rep.images,
			     rep.blobs, rep.rootfs, size);
	} else if (rep.images + rep.blobs + rep.rootfs + rep.partial > 0) {
		ui_job_result(ctx, _("  %zu image(s) with no reference that no sandbox uses"), rep.images);
		ui_job_result(ctx, _("  %zu blob(s) no remaining image refers to"), rep.blobs);
		ui_job_result(ctx, _("  %zu unpacked tree(s) of no image or of dead installs"), rep.rootfs);
		ui_job_result(ctx, _("  %zu partial download(s)"), rep.partial);
		ui_job_result(ctx, _("  %s freed in all"), size);
	}
	return 0;
}

static void image_done(struct ui_app *app, int rc, const char *message, void *arg)
{
	(void)arg;
	if (rc < 0) {
		ui_app_message(app, 1, "%s", message);
		ui_event_add(app, 1, "%s", message);
	} else {
		ui_app_message(app, 0, "%s", _("done"));
	}
	ui_images_reload(app);
}

static void prune_now(struct ui_app *app, const char *unused)
{
	static const char *const args[] = { "image", "prune", NULL };

	(void)unused;
	ui_cmdlog_add(app, args);
	ui_job_start(app, _("pruning images"), job_prune, NULL, image_done, NULL);
}

static void prune_planned(struct ui_app *app, int rc, const char *message, void *arg)
{
	static char text[2048];

	(void)arg;
	if (rc < 0) {
		ui_app_message(app, 1, "%s", message);
	} else if (!message[0]) {
		ui_app_message(app, 0, "%s", _("prune: nothing to remove"));
	} else {
		snprintf(text, sizeof(text), "%s\n%s\n\n%s", _("Prune would remove (its dry run):"), message,
			 _("Kept: every image with a reference or a sandbox, and its blobs."));
		ui_confirm_open(app, _("Prune unused images?"), text, _("prune"), prune_now, "");
	}
}

struct pull {
	char ref[SB_IMAGE_REF_MAX];
};

/* Loopback registries (the Debian docker-registry in tests) speak plain HTTP. */
static int loopback(const char *ref)
{
	return !strncmp(ref, "localhost:", 10) || !strncmp(ref, "localhost/", 10) || !strncmp(ref, "127.0.0.1:", 10) ||
	       !strncmp(ref, "127.0.0.1/", 10);
}

static int job_pull(struct sb_root *root, void *arg, struct ui_job_ctx *ctx, struct sb_error *err)
{
	struct pull *p = arg;
	struct sb_registry_opts opts = { .insecure = loopback(p->ref), .progress = ui_job_progress(ctx) };
	char digest[SB_DIGEST_STR_LEN], *canonical = NULL;
	int rc;

	if ((rc = sb_registry_pull(digest, &canonical, root, p->ref, &opts, err)) == 0)
		ui_job_event(ctx, 0, _("pulled %s (%s)"), canonical ? canonical : p->ref, digest);
	free(canonical);
	return rc;
}

static void pull_start(struct ui_app *app, const char *ref)
{
	struct pull *p = calloc(1, sizeof(*p));
	char label[600];

	if (!*ref || !p) {
		free(p);
		return;
	}
	snprintf(p->ref, sizeof(p->ref), "%s", ref);
	const char *args[] = { "image", "pull", loopback(ref) ? "--insecure" : ref, ref, NULL };
	if (!loopback(ref))
		args[3] = NULL;
	ui_cmdlog_add(app, args);
	snprintf(label, sizeof(label), _("pulling %s"), ref);
	ui_job_start(app, label, job_pull, p, image_done, free);
}

static void remove_confirmed(struct ui_app *app, const char *unused)
{
	struct images *im = state(app);
	const struct sb_image_info *img = row_image(im, app->views[UI_PANE_IMAGES].selected);
	struct image_op *op;
	char label[600];

	(void)unused;
	if (!img || !(op = calloc(1, sizeof(*op))))
		return;
	snprintf(op->ref, sizeof(op->ref), "%s", image_ref(img));
	const char *args[] = { "image", "rm", op->ref, NULL };
	ui_cmdlog_add(app, args);
	snprintf(label, sizeof(label), _("removing image %s"), op->ref);
	ui_job_start(app, label, job_remove, op, image_done, free);
}

static int action(struct ui_app *app, enum ui_action a)
{
	struct images *im = state(app);
	const struct sb_image_info *img = row_image(im, app->views[UI_PANE_IMAGES].selected);
	char title[700], text[1200], users[1024];

	switch (a) {
	case UI_ACT_REMOVE:
		if (!img)
			return 1;
		if (used_by(app, img, users, sizeof(users))) {
			ui_app_message(app, 1, _("%s is used by %s: remove those sandboxes first"), image_ref(img), users);
			return 1;
		}
		snprintf(title, sizeof(title), _("Remove image %s?"), image_ref(img));
		snprintf(text, sizeof(text), _("Removed: the reference %s (and the unpacked image when\nno other reference points at it).\nKept: the downloaded blobs until prune (P).\nNo sandbox uses it."),
			 image_ref(img));
		ui_confirm_open(app, title, text, _("Remove"), remove_confirmed, "");
		return 1;
	case UI_ACT_PULL:
		ui_prompt_open(app, _("pull image (e.g. python:3.12):"), "", pull_start);
		return 1;
	case UI_ACT_PRUNE: {
		static int dry = 1;   /* any non-NULL arg: the dry run */
		ui_job_start(app, _("prune --dry-run"), job_prune, &dry, prune_planned, NULL);
		return 1;
	}
	default:   /* UI_ACT_CREATE too: the form starts with the selected image */
		return 0;
	}
}

static const enum ui_action hints[] = { UI_ACT_PULL, UI_ACT_CREATE, UI_ACT_REMOVE, UI_ACT_PRUNE, UI_ACT_REFRESH, UI_ACT_NONE };

const struct ui_pane ui_pane_images = {
	.title = N_("Images"),
	.rows = rows,
	.draw = draw,
	.details = details,
	.action = action,
	.hints = hints,
	.fields = &fields,
	.refilter = refilter,
};
