/* lesson_plain.c - the plain text writer of lessons (lesson_plain.h). */
#include "config.h"

#include "lesson_plain.h"
#include "lesson_path.h"
#include "lesson_run.h"
#include "lesson_view.h"

#include <stdlib.h>
#include <string.h>

#define PLAIN_WIDTH 76

struct plain {
	FILE *f;
	int presenter;
	struct lesson_lines lines;
	/* the questions asked, for the answers at the end */
	int nasked;
	const struct lesson_question **asked;
	int oom;
};

/* Prints and empties the lines. */
static void
flush_lines(struct plain *pl, const char *indent)
{
	int i;

	for (i = 0; i < pl->lines.n; i++)
		fprintf(pl->f, "%s%s\n", pl->lines.n && *pl->lines.line[i] ? indent :
		    "", pl->lines.line[i]);
	if (pl->lines.oom)
		pl->oom = 1;
	lesson_lines_clear(&pl->lines);
}

static void
plain_begin(void *ctx, struct lesson_run *run)
{
	struct plain *pl = ctx;
	const struct lesson *l = run->lesson;
	char *path, *title, err[256];
	size_t n = strlen(l->title);
	int i;

	fprintf(pl->f, "%s\n", l->title);
	while (n-- > 0)
		fputc('=', pl->f);
	fputc('\n', pl->f);
	for (i = 0; i < l->nbuilds_on; i++) {
		path = lesson_path_find(l->builds_on[i], l->path, err, sizeof err);
		title = path != NULL ? lesson_path_title(path) : NULL;
		fprintf(pl->f, "%s %s%s%s%s\n", i == 0 ? "Builds on:" : "          ",
		    l->builds_on[i], title ? " (" : "", title ? title : "",
		    title ? ")" : "");
		free(title);
		free(path);
	}
	fputc('\n', pl->f);
}

static void
plain_text(void *ctx, struct lesson_run *run, enum lesson_text_kind kind,
    const char *text)
{
	struct plain *pl = ctx;

	(void)run;
	if (kind == LESSON_NOTE) {
		if (!pl->presenter)
			return;
		lesson_lines_wrap(&pl->lines, text, PLAIN_WIDTH, "  [note] ",
		    "         ");
	} else
		lesson_lines_wrap(&pl->lines, text, PLAIN_WIDTH, "", "");
	flush_lines(pl, "");
	fputc('\n', pl->f);
}

static void
plain_problem(void *ctx, struct lesson_run *run)
{
	struct plain *pl = ctx;

	setup_describe(pl->f, run->setup.sim);
	fputc('\n', pl->f);
}

static void
plain_ask(void *ctx, struct lesson_run *run, const struct lesson_question *q,
    int number)
{
	struct plain *pl = ctx;
	const struct lesson_question **grown;

	(void)run;
	lesson_view_question(q, number, 0, PLAIN_WIDTH, &pl->lines);
	flush_lines(pl, "");
	fprintf(pl->f, "    (the answer is at the end)\n\n");
	grown = realloc(pl->asked, ((size_t)pl->nasked + 1) * sizeof *grown);
	if (grown == NULL) {
		pl->oom = 1;
		return;
	}
	pl->asked = grown;
	pl->asked[pl->nasked++] = q;
}

static void
plain_pause(void *ctx, struct lesson_run *run)
{
	struct plain *pl = ctx;

	lesson_view_state(run, &pl->lines);
	if (pl->lines.n > 0) {
		fprintf(pl->f, "    [pause %d] %s\n", run->npauses, pl->lines.line[0]);
		free(pl->lines.line[0]);
		memmove(pl->lines.line, pl->lines.line + 1,
		    (size_t)(pl->lines.n - 1) * sizeof *pl->lines.line);
		pl->lines.n--;
	}
	flush_lines(pl, "    ");
	fputc('\n', pl->f);
}

static void
plain_failed(void *ctx, struct lesson_run *run, const char *msg)
{
	struct plain *pl = ctx;

	(void)run;
	fprintf(pl->f, "!! %s\n\n", msg);
}

static void
plain_compare(void *ctx, struct lesson_run *run,
    const struct gpucheck_report *rep, const char *skipped)
{
	struct plain *pl = ctx;

	(void)run;
	if (rep == NULL) {
		fprintf(pl->f, "    [compare gpu] skipped: %s\n\n", skipped);
		return;
	}
	fprintf(pl->f, "    [compare gpu] %s, %ld steps: %s\n", rep->device,
	    rep->steps, rep->pass ? "the kernel agrees with the simulator" :
	    "the kernel DISAGREES with the simulator");
	fprintf(pl->f, "    largest differences over the steps: m %.3g, alpha "
	    "%.3g, l %.3g, acc %.3g (worst at step %ld)\n", rep->max_m,
	    rep->max_alpha, rep->max_l, rep->max_acc, rep->worst_step);
	fprintf(pl->f, "    in the output: O %.3g, lse %.3g (tolerance %.3g + "
	    "%.3g |x|); kernel time %.3f ms\n\n", rep->max_o, rep->max_lse,
	    rep->atol, rep->rtol, rep->kernel_ms);
}

static void
plain_end(void *ctx, struct lesson_run *run)
{
	struct plain *pl = ctx;
	int i;

	(void)run;
	if (pl->nasked == 0)
		return;
	fprintf(pl->f, "Answers\n-------\n");
	for (i = 0; i < pl->nasked; i++)
		lesson_view_answer(pl->asked[i], i + 1, PLAIN_WIDTH, "", &pl->lines);
	flush_lines(pl, "");
}

static const struct lesson_sink plain_sink = {
	.begin = plain_begin,
	.text = plain_text,
	.problem = plain_problem,
	.ask = plain_ask,
	.pause = plain_pause,
	.failed = plain_failed,
	.compare = plain_compare,
	.end = plain_end,
};

int
lesson_plain_write(const struct lesson *l, FILE *f, int presenter, char *err,
    size_t errlen)
{
	struct lesson_run *run;
	struct plain pl;
	int rc = -1;

	memset(&pl, 0, sizeof pl);
	pl.f = f;
	pl.presenter = presenter;

	/* A rehearsal first: a lesson that cannot run writes nothing. */
	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_DRY);
	if (run == NULL)
		return util_error(err, errlen, "%s: out of memory", l->path);
	if (lesson_run_all(run) == LESSON_ERROR) {
		util_error(err, errlen, "%s", run->err);
		goto done;
	}
	lesson_run_free(run);

	run = lesson_run_new(l, &plain_sink, &pl, 0);
	if (run == NULL)
		return util_error(err, errlen, "%s: out of memory", l->path);
	if (lesson_run_all(run) == LESSON_ERROR) {
		util_error(err, errlen, "%s", run->err);
		goto done;
	}
	if (pl.oom || pl.lines.oom) {
		util_error(err, errlen, "%s: out of memory", l->path);
		goto done;
	}
	if (fflush(f) != 0 || ferror(f)) {
		util_error(err, errlen, "writing the lesson failed");
		goto done;
	}
	rc = run->failures > 0 ? 1 : 0;
done:
	lesson_run_free(run);
	lesson_lines_free(&pl.lines);
	free(pl.asked);
	return rc;
}
