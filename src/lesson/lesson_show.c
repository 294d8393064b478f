/*
 * lesson_show.c - `show FIGURE` (lesson_show.h): the directive, and the
 * figures drawn for a slide by the view's own drawing code.
 */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_parser.h"
#include "lesson_path.h"
#include "lesson_show.h"
#include "app/pipeline_json.h"
#include "model/pipeline.h"
#include "ui/ui_fp8.h"
#include "ui/ui_pipeline.h"
#include "ui/ui_roofline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum show_figure {
	SHOW_VIEW,
	SHOW_ROOFLINE,
	SHOW_PIPELINE,
	SHOW_FP8,
};

static const char *const show_names[] = {
	[SHOW_VIEW] = "view", [SHOW_ROOFLINE] = "roofline",
	[SHOW_PIPELINE] = "pipeline", [SHOW_FP8] = "fp8",
};
#define SHOW_NFIGURES (int)(sizeof show_names / sizeof show_names[0])

/* A pipeline's events: a recording's, or the model's of the problem. */
struct show_trace {
	struct pipeline_event *ev;	/* a recording's (malloc'd) */
	struct pipeline_run model;	/* the model's */
	int is_model;
	size_t nev;
	struct pipeline_json_meta meta;
};

static void
show_trace_free(struct show_trace *t)
{
	if (t->is_model)
		pipeline_run_free(&t->model);
	else
		free(t->ev);
	memset(t, 0, sizeof *t);
}

static const struct pipeline_event *
show_trace_events(const struct show_trace *t)
{
	return t->is_model ? t->model.ev : t->ev;
}

/* The model of the problem's head, as W in the view and `flashstep
 * pipeline --model` run it (two blocks).  0, or -1 with err set. */
static int
show_model(const struct problem *p, struct show_trace *t, char *err,
    size_t errlen)
{
	struct pipeline_config cfg;
	struct pipeline_costs k;

	memset(t, 0, sizeof *t);
	if (pipeline_config_default(&cfg, p->d, p->tq, p->tk, p->causal, err,
	    errlen) != 0)
		return -1;
	cfg.ctas = 2;
	pipeline_costs_nominal(&cfg, &k);
	if (pipeline_model(&cfg, &k, &t->model, err, errlen) != 0)
		return -1;
	t->is_model = 1;
	t->nev = t->model.nev;
	snprintf(t->meta.source, sizeof t->meta.source, "model of this head, "
	    "Tq %d, Tk %d%s", p->tq, p->tk, p->causal ? ", causal" : "");
	t->meta.cfg = cfg;
	t->meta.clock_ghz = k.clock_ghz;
	return 0;
}

static int
show_trace_open(struct lesson_run *run, const struct lesson_cmd *c,
    struct show_trace *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	if (c->path == NULL)
		return show_model(&run->setup.problem, t, err, errlen);
	return pipeline_json_read(c->path, &t->ev, &t->nev, &t->meta, err,
	    errlen);
}

/* The event of the first block the cursor goes to: `at N` (from 1),
 * `tile J` (its first softmax, else its first event), else the first.
 * 0, or -1 when the block has no such event. */
static int
show_cursor(const struct pipeline_event *ev, size_t nev, long at, int tile,
    size_t *cur)
{
	size_t x, end, any = nev;

	for (end = 0; end < nev && ev[end].cta == ev[0].cta; end++)
		;
	*cur = 0;
	if (at > 0) {
		if ((size_t)at > end)
			return -1;
		*cur = (size_t)at - 1;
		return 0;
	}
	if (tile < 0)
		return 0;
	for (x = 0; x < end; x++) {
		if (ev[x].j != tile)
			continue;
		if (ev[x].kind == PIPELINE_SOFTMAX) {
			*cur = x;
			return 0;
		}
		if (any == nev)
			any = x;
	}
	if (any == nev)
		return -1;
	*cur = any;
	return 0;
}

/* The recording FILE: a path from the lesson's folder when it has a
 * '/', else a file of the recordings beside a lessons folder (the
 * source tree's doc/recordings, an install's recordings), the lesson's
 * own folder first.  A malloc'd path, or NULL. */
static char *
show_find(const char *folder, const char *name)
{
	static const char *const beside[] = { "../doc/recordings/",
	    "../recordings/" };
	const char *dirs[17];
	char path[4400];
	int n, i, b;

	if (strchr(name, '/') != NULL) {
		snprintf(path, sizeof path, "%s%s", name[0] == '/' ? "" : folder,
		    name);
		return access(path, R_OK) == 0 ? strdup(path) : NULL;
	}
	dirs[0] = folder;
	n = lesson_path_folders(dirs + 1, 16);
	n = n < 0 ? 1 : n + 1;
	for (i = 0; i < n; i++)
		for (b = 0; b < 2; b++) {
			snprintf(path, sizeof path, "%s%s%s%s", dirs[i], i == 0 ||
			    dirs[i][0] == '\0' ? "" : "/", beside[b], name);
			if (access(path, R_OK) == 0)
				return strdup(path);
		}
	return NULL;
}

static int
show_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	int f, at = 1;

	if (c->argc < 1)
		return util_error(err, errlen, "show needs a figure: roofline, "
		    "pipeline model|FILE, fp8 or view");
	for (f = 0; f < SHOW_NFIGURES; f++)
		if (strcmp(c->argv[0], show_names[f]) == 0)
			break;
	if (f == SHOW_NFIGURES)
		return util_error(err, errlen, "show: no figure '%s' (roofline, "
		    "pipeline, fp8, view)", c->argv[0]);
	c->n = f;
	c->n2 = 0;
	c->ref = -1;
	if (f == SHOW_FP8 && c->argc == 2) {
		const char *t = c->argv[1];

		if (strcmp(t, "q") != 0 && strcmp(t, "k") != 0 &&
		    strcmp(t, "v") != 0)
			return util_error(err, errlen, "show fp8: no tensor '%s' "
			    "(q, k or v)", t);
		c->n2 = t[0] == 'q' ? 0 : t[0] == 'k' ? 1 : 2;
		return 0;
	}
	if (f != SHOW_PIPELINE) {
		if (c->argc > 1)
			return util_error(err, errlen, "show %s takes no more words, "
			    "not '%s'", show_names[f], c->argv[1]);
		return 0;
	}
	if (c->argc < 2)
		return util_error(err, errlen, "show pipeline needs 'model' or a "
		    "recording's file");
	if (strcmp(c->argv[1], "model") != 0) {
		struct show_trace t;
		char why[512];

		c->path = show_find(ps->folder, c->argv[1]);
		if (c->path == NULL)
			return util_error(err, errlen, "show pipeline: no recording "
			    "'%s' beside the lessons (doc/recordings)", c->argv[1]);
		memset(&t, 0, sizeof t);
		if (pipeline_json_read(c->path, &t.ev, &t.nev, &t.meta, why,
		    sizeof why) != 0)
			return util_error(err, errlen, "show pipeline: %s", why);
		at = 0;
		show_trace_free(&t);
	}
	if (c->argc == 2)
		return 0;
	if (c->argc != 4 || (strcmp(c->argv[2], "at") != 0 &&
	    strcmp(c->argv[2], "tile") != 0))
		return util_error(err, errlen, "show pipeline %s: then 'at N' or "
		    "'tile J', not '%s'", c->argv[1], c->argv[2]);
	if (strcmp(c->argv[2], "at") == 0) {
		if (lesson_parser_long(c->argv[3], 1, 1000000, &c->n2) != 0)
			return util_error(err, errlen, "show pipeline: 'at' takes an "
			    "event's number from 1, not '%s'", c->argv[3]);
	} else {
		long j;

		if (lesson_parser_long(c->argv[3], 0, 1000000, &j) != 0)
			return util_error(err, errlen, "show pipeline: 'tile' takes a "
			    "key tile's number from 0, not '%s'", c->argv[3]);
		c->ref = (int)j;
	}
	/* a recording's events are known now: the cursor must find its
	 * event (the model's, once the problem is built) */
	if (!at) {
		struct show_trace t;
		size_t cur;
		char why[512];
		int rc;

		if (pipeline_json_read(c->path, &t.ev, &t.nev, &t.meta, why,
		    sizeof why) != 0)
			return util_error(err, errlen, "show pipeline: %s", why);
		t.is_model = 0;
		rc = show_cursor(t.ev, t.nev, c->n2, c->ref, &cur);
		show_trace_free(&t);
		if (rc != 0)
			return util_error(err, errlen, "show pipeline %s: its first "
			    "block has no %s %s", c->argv[1], c->argv[2], c->argv[3]);
	}
	return 0;
}

static int
show_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	struct show_trace t;
	char why[512];
	size_t cur;
	int rc;

	if (c->n == SHOW_VIEW) {
		run->show = NULL;
		return LESSON_NEXT;
	}
	if ((c->n != SHOW_PIPELINE || c->path == NULL) &&
	    lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	if (c->n == SHOW_FP8 && run->setup.problem.fp8 == NULL)
		return lesson_run_error(run, c, "show fp8: the problem is %s, not "
		    "fp8 (dtype fp8)", dtype_name(run->setup.problem.dtype));
	if (c->n == SHOW_PIPELINE && c->path == NULL) {
		if (show_model(&run->setup.problem, &t, why, sizeof why) != 0)
			return lesson_run_error(run, c, "show pipeline model: %s", why);
		rc = show_cursor(t.model.ev, t.nev, c->n2, c->ref, &cur);
		show_trace_free(&t);
		if (rc != 0)
			return lesson_run_error(run, c, "show pipeline model: its "
			    "first block has no %s %s", c->argv[2], c->argv[3]);
	}
	run->show = c;
	return LESSON_NEXT;
}

const struct lesson_directive lesson_show_directives[] = {
	{ .name = "show", .usage = "show roofline|pipeline model|pipeline "
	  "FILE [at N|tile J]|fp8 [q|k|v]|view", .parse = show_parse,
	  .exec = show_exec },
	{ .name = NULL },
};

/* ---- the figures ---- */

int
lesson_show_active(const struct lesson_run *run)
{
	return run->show != NULL && run->show->n != SHOW_VIEW;
}

/* The fp8 pane's rows for as many entries as fit a handout. */
#define SHOW_FP8_ENTRIES 16
#define SHOW_PIPELINE_ROWS 17

int
lesson_show_want(const struct lesson_run *run)
{
	if (!lesson_show_active(run))
		return 0;
	switch (run->show->n) {
	case SHOW_ROOFLINE:
		return UI_ROOFLINE_H + 4;
	case SHOW_FP8:
		return 8 + SHOW_FP8_ENTRIES;
	default:
		return SHOW_PIPELINE_ROWS;
	}
}

/* The pipeline viewer drawn into r: into a grid of its own one row
 * taller, copied without its last row (the viewer's keys, which the
 * slide does not take). */
static void
show_pipeline(struct lesson_run *run, struct ui_grid *g, struct ui_rect r)
{
	const struct lesson_cmd *c = run->show;
	struct ui_grid tmp = { 0 };
	struct ui_pipeline v;
	struct show_trace t;
	char why[512];
	int x, y;

	if (show_trace_open(run, c, &t, why, sizeof why) != 0) {
		ui_grid_wrap(g, r, UI_ROLE_ERROR, why);
		return;
	}
	if (ui_grid_resize(&tmp, r.w, r.h + 1, why, sizeof why) != 0) {
		ui_grid_wrap(g, r, UI_ROLE_ERROR, why);
		show_trace_free(&t);
		return;
	}
	ui_pipeline_init(&v, show_trace_events(&t), t.nev, &t.meta);
	if (show_cursor(show_trace_events(&t), t.nev, c->n2, c->ref,
	    &v.cur) != 0)
		v.cur = 0;
	ui_pipeline_draw(&v, &tmp);
	for (y = 0; y < r.h; y++)
		for (x = 0; x < r.w; x++)
			if (r.x + x < g->w && r.y + y < g->h)
				g->cells[(size_t)(r.y + y) * g->w + r.x + x] =
				    tmp.cells[(size_t)y * tmp.w + x];
	ui_grid_free(&tmp);
	show_trace_free(&t);
}

void
lesson_show_draw(struct lesson_run *run, struct ui_grid *g, struct ui_rect r,
    int unicode)
{
	const struct problem *p = &run->setup.problem;
	struct ui_fp8 s;
	int row;

	if (!lesson_show_active(run) || r.w < 1 || r.h < 1)
		return;
	ui_grid_clip(g, r);
	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	switch (run->show->n) {
	case SHOW_ROOFLINE:
		if (run->built)
			ui_roofline_problem(g, r, p,
			    sim_schedule(run->setup.sim)->br,
			    sim_schedule(run->setup.sim)->bc);
		break;
	case SHOW_FP8:
		if (!run->built || p->fp8 == NULL)
			break;
		memset(&s, 0, sizeof s);
		s.tensor = (int)run->show->n2;
		/* the focus row: its row of O is Q's; K and V's the same
		 * number, within the tensor */
		row = lesson_run_out_row(run, run->focus);
		s.row = row;
		ui_fp8_figure(g, r, p->fp8, &s, unicode);
		break;
	case SHOW_PIPELINE:
		ui_grid_unclip(g);
		show_pipeline(run, g, r);
		break;
	}
	ui_grid_unclip(g);
}

void
lesson_show_lines(struct lesson_run *run, struct lesson_lines *out)
{
	struct ui_grid g = { 0 };
	char err[200], line[4 * LESSON_SHOW_WIDTH + 1];
	int h = lesson_show_want(run), y, last;

	if (ui_grid_resize(&g, LESSON_SHOW_WIDTH, h, err, sizeof err) != 0) {
		out->oom = 1;
		return;
	}
	lesson_show_draw(run, &g, (struct ui_rect){ 0, 0, g.w, g.h }, 0);
	for (last = h; last > 0; last--)
		if (ui_grid_line(&g, last - 1, line, sizeof line)[0] != '\0')
			break;
	lesson_lines_add(out, "the figure: show %s%s%s", show_names[run->show->n],
	    run->show->argc > 1 ? " " : "", run->show->argc > 1 ?
	    run->show->argv[1] : "");
	for (y = 0; y < last; y++)
		lesson_lines_add(out, "%s", ui_grid_line(&g, y, line, sizeof line));
	ui_grid_free(&g);
}
