/*
 * lesson_plain.c - the lesson as a document (lesson_plain.h).  One
 * writer walks the lesson; a style (a table of the markup each part
 * gets) makes it plain text or Markdown.
 */
#include "config.h"

#include "lesson_check.h"
#include "lesson_plain.h"
#include "lesson_path.h"
#include "lesson_run.h"
#include "lesson_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PLAIN_WIDTH 76

/* The markup of each part of the document. */
struct plain_style {
	const char *note, *note_more;	/* a speaker note's first line, rest */
	const char *fence, *fence_end;	/* around the problem and frames */
	const char *frame_indent;	/* before each line of a frame */
	const char *failed;	/* before a failed check */
	const char *answers;	/* the heading of the answers */
	const char *unanswered;	/* under a question: where its answer is */
	const char *blank;	/* under a number question: room to write */
	/* Writes text with what the style must escape, escaped. */
	void (*text)(FILE *f, const char *text);
	void (*title)(FILE *f, const char *title);
};

struct plain {
	FILE *f;
	const struct plain_style *st;
	const struct lesson_plain_opts *o;
	int slides;		/* of the whole lesson */
	struct lesson_lines lines;
	/* The last frame printed and its slide (0: none since the problem
	 * changed), so a slide that moves nothing does not print it again. */
	struct lesson_lines frame;
	int frame_slide;
	/* the questions asked, for the answers at the end */
	int nasked;
	const struct lesson_question **asked;
	int oom;
	int werr;		/* the first write error's errno, or 0 */
};

/* Remembers why the stream first failed, while errno still says it
 * (a write error is sticky; the final flush may fail for other reasons
 * or not at all). */
static void
plain_watch(struct plain *pl)
{
	if (pl->werr == 0 && ferror(pl->f))
		pl->werr = errno != 0 ? errno : EIO;
}

static void
text_as_is(FILE *f, const char *text)
{
	fputs(text, f);
}

/* Markdown reads * _ ` [ ] < > | \ and a leading # as markup. */
static void
text_markdown(FILE *f, const char *text)
{
	const char *p;

	for (p = text; *p != '\0'; p++) {
		if (strchr("\\`*_[]<>|", *p) != NULL || (*p == '#' && p == text))
			fputc('\\', f);
		fputc(*p, f);
	}
}

static void
title_text(FILE *f, const char *title)
{
	size_t n = strlen(title);

	fprintf(f, "%s\n", title);
	while (n-- > 0)
		fputc('=', f);
	fputc('\n', f);
}

static void
title_markdown(FILE *f, const char *title)
{
	fputs("# ", f);
	text_markdown(f, title);
	fputc('\n', f);
}

static const struct plain_style style_text = {
	.note = "  [note] ", .note_more = "         ",
	.fence = "", .fence_end = "",
	.frame_indent = "    ",
	.failed = "!! ",
	.answers = "Answers\n-------",
	.unanswered = "    (the answer is at the end)\n",
	.blank = "    Your answer: ____________\n",
	.text = text_as_is,
	.title = title_text,
};

static const struct plain_style style_markdown = {
	.note = "> Note: ", .note_more = "> ",
	.fence = "```text\n", .fence_end = "```\n",
	.frame_indent = "",
	.failed = "**!!** ",
	.answers = "## Answers\n",
	.unanswered = "*(the answer is at the end)*\n",
	.blank = "Your answer: ____________\n",
	.text = text_markdown,
	.title = title_markdown,
};

/* Prints the lines, each after indent (blank lines bare), and empties
 * them; with text, through the style's escaping. */
static void
flush_lines(struct plain *pl, const char *indent, int text)
{
	int i;

	/* a worksheet does not tell what its questions ask */
	if (!pl->o->answers)
		lesson_check_withhold(pl->asked, pl->nasked, &pl->lines);
	for (i = 0; i < pl->lines.n; i++) {
		fputs(*pl->lines.line[i] ? indent : "", pl->f);
		if (text)
			pl->st->text(pl->f, pl->lines.line[i]);
		else
			fputs(pl->lines.line[i], pl->f);
		fputc('\n', pl->f);
	}
	if (pl->lines.oom)
		pl->oom = 1;
	lesson_lines_clear(&pl->lines);
	plain_watch(pl);
}

static void
plain_begin(void *ctx, struct lesson_run *run)
{
	struct plain *pl = ctx;
	const struct lesson *l = run->lesson;
	char *path, *title, *clean, err[256];
	int i;

	pl->st->title(pl->f, l->title);
	for (i = 0; i < l->nbuilds_on; i++) {
		path = lesson_path_find(l->builds_on[i], l->path, err, sizeof err);
		title = path != NULL ? lesson_path_title(path) : NULL;
		/* Another lesson's title, read but not parsed: shown safe. */
		if (title != NULL) {
			clean = lesson_escape_text(title);
			free(title);
			title = clean;
		}
		fprintf(pl->f, "%s%s%s", i == 0 && pl->o->markdown ? "\n" : "",
		    i == 0 ? "Builds on: " : "           ", l->builds_on[i]);
		if (title != NULL) {
			fputs(" (", pl->f);
			pl->st->text(pl->f, title);
			fputc(')', pl->f);
		}
		fputs(pl->o->markdown ? "  \n" : "\n", pl->f);
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
		if (!pl->o->presenter)
			return;
		lesson_lines_wrap(&pl->lines, text, PLAIN_WIDTH, "", "");
		if (pl->lines.n > 0) {
			fputs(pl->st->note, pl->f);
			pl->st->text(pl->f, pl->lines.line[0]);
			fputc('\n', pl->f);
			free(pl->lines.line[0]);
			memmove(pl->lines.line, pl->lines.line + 1,
			    (size_t)(pl->lines.n - 1) * sizeof *pl->lines.line);
			pl->lines.n--;
		}
		flush_lines(pl, pl->st->note_more, 1);
	} else {
		lesson_lines_wrap(&pl->lines, text, PLAIN_WIDTH, "", "");
		flush_lines(pl, "", 1);
	}
	fputc('\n', pl->f);
	plain_watch(pl);
}

static void
plain_problem(void *ctx, struct lesson_run *run)
{
	struct plain *pl = ctx;

	pl->frame_slide = 0;	/* a new problem: its first frame is shown */
	fputs(pl->st->fence, pl->f);
	lesson_run_describe(run, pl->f);
	fputs(pl->st->fence_end, pl->f);
	fputc('\n', pl->f);
}

static void
plain_ask(void *ctx, struct lesson_run *run, const struct lesson_question *q,
    const char *text, int number)
{
	struct plain *pl = ctx;
	const struct lesson_question **grown;
	int i;

	(void)run;
	if (pl->o->markdown) {
		/* a paragraph and a list: Markdown wraps them itself */
		fprintf(pl->f, "**Q%d.** ", number);
		pl->st->text(pl->f, text);
		fputs("\n\n", pl->f);
		for (i = 0; i < q->nchoices; i++) {
			fprintf(pl->f, "- %c) ", 'a' + i);
			pl->st->text(pl->f, q->choices[i]);
			fputc('\n', pl->f);
		}
		if (q->nchoices > 0)
			fputc('\n', pl->f);
	} else {
		lesson_view_question(q, text, number, PLAIN_WIDTH, &pl->lines);
		flush_lines(pl, "", 1);
	}
	if (q->numeric)
		fputs(pl->st->blank, pl->f);
	if (pl->o->answers)
		fputs(pl->st->unanswered, pl->f);
	fputc('\n', pl->f);
	grown = realloc(pl->asked, ((size_t)pl->nasked + 1) * sizeof *grown);
	if (grown == NULL) {
		pl->oom = 1;
		return;
	}
	pl->asked = grown;
	pl->asked[pl->nasked++] = q;
}

/* Are the two frames the same, line for line? */
static int
same_frame(const struct lesson_lines *a, const struct lesson_lines *b)
{
	int i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->line[i], b->line[i]) != 0)
			return 0;
	return 1;
}

/* The frame: where the slide ends, as the view shows it; a frame the
 * slide before already showed is named, not printed again. */
static void
plain_pause(void *ctx, struct lesson_run *run)
{
	struct plain *pl = ctx;
	struct lesson_lines swap;
	int i;

	lesson_view_state(run, &pl->lines);
	if (pl->lines.n == 0)
		return;
	/* a worksheet's frames do not tell what its questions ask */
	if (!pl->o->answers)
		lesson_check_withhold(pl->asked, pl->nasked, &pl->lines);
	fputs(pl->st->fence, pl->f);
	if (pl->frame_slide > 0 && same_frame(&pl->lines, &pl->frame)) {
		fprintf(pl->f, "%s[slide %d of %d] the view is unchanged since slide "
		    "%d\n", pl->st->frame_indent, run->npauses, pl->slides,
		    pl->frame_slide);
		lesson_lines_clear(&pl->lines);
	} else {
		fprintf(pl->f, "%s[slide %d of %d] %s\n", pl->st->frame_indent,
		    run->npauses, pl->slides, pl->lines.line[0]);
		for (i = 1; i < pl->lines.n; i++)
			fprintf(pl->f, "%s%s\n", *pl->lines.line[i] ?
			    pl->st->frame_indent : "", pl->lines.line[i]);
		if (pl->lines.oom)
			pl->oom = 1;
		/* keep this frame; the old one's lines are reused */
		swap = pl->frame;
		pl->frame = pl->lines;
		pl->lines = swap;
		lesson_lines_clear(&pl->lines);
		pl->frame_slide = run->npauses;
	}
	fputs(pl->st->fence_end, pl->f);
	fputc('\n', pl->f);
	plain_watch(pl);
}

static void
plain_failed(void *ctx, struct lesson_run *run, const char *msg)
{
	struct plain *pl = ctx;

	(void)run;
	fputs(pl->st->failed, pl->f);
	pl->st->text(pl->f, msg);
	fputs("\n\n", pl->f);
}

static void
plain_compare(void *ctx, struct lesson_run *run,
    const struct gpucheck_report *rep, const char *skipped)
{
	struct plain *pl = ctx;
	const char *in = pl->st->frame_indent;

	(void)run;
	fputs(pl->st->fence, pl->f);
	if (rep == NULL)
		fprintf(pl->f, "%sthe GPU check was skipped: %s\n", in, skipped);
	else {
		fprintf(pl->f, "%sthe GPU kernel on %s, %ld steps: %s\n", in,
		    rep->device, rep->steps, rep->pass ? "it agrees with the "
		    "simulator" : "it DISAGREES with the simulator");
		fprintf(pl->f, "%slargest differences over the steps: m %.3g, alpha "
		    "%.3g, l %.3g, acc %.3g (worst at step %ld)\n", in, rep->max_m,
		    rep->max_alpha, rep->max_l, rep->max_acc, rep->worst_step + 1);
		fprintf(pl->f, "%sin the output: O %.3g, lse %.3g (tolerance %.3g + "
		    "%.3g |x|); kernel time %.3f ms\n", in, rep->max_o, rep->max_lse,
		    rep->atol, rep->rtol, rep->kernel_ms);
	}
	fputs(pl->st->fence_end, pl->f);
	fputc('\n', pl->f);
}

static void
plain_ladder(void *ctx, struct lesson_run *run,
    const struct gpu_ladder_rung *rungs, const char *device,
    const char *skipped)
{
	struct plain *pl = ctx;

	(void)run;
	lesson_view_ladder(rungs, device, skipped, &pl->lines);
	fputs(pl->st->fence, pl->f);
	flush_lines(pl, pl->st->frame_indent, 0);
	fputs(pl->st->fence_end, pl->f);
	fputc('\n', pl->f);
}

static void
plain_end(void *ctx, struct lesson_run *run)
{
	struct plain *pl = ctx;
	int i;

	(void)run;
	if (pl->nasked == 0 || !pl->o->answers)
		return;
	fprintf(pl->f, "%s\n", pl->st->answers);
	for (i = 0; i < pl->nasked; i++) {
		lesson_view_answer(pl->asked[i], i + 1, PLAIN_WIDTH, &pl->lines);
		if (pl->o->markdown && pl->lines.n > 0) {
			fprintf(pl->f, "**Q%d.** ", i + 1);
			pl->st->text(pl->f, strchr(pl->lines.line[0], ' ') + 1);
			fputc('\n', pl->f);
			free(pl->lines.line[0]);
			memmove(pl->lines.line, pl->lines.line + 1,
			    (size_t)(pl->lines.n - 1) * sizeof *pl->lines.line);
			pl->lines.n--;
			flush_lines(pl, "", 1);
			fputc('\n', pl->f);
		} else
			flush_lines(pl, "", 1);
	}
}

static const struct lesson_sink plain_sink = {
	.begin = plain_begin,
	.text = plain_text,
	.problem = plain_problem,
	.ask = plain_ask,
	.pause = plain_pause,
	.failed = plain_failed,
	.compare = plain_compare,
	.ladder = plain_ladder,
	.end = plain_end,
};

int
lesson_plain_write(const struct lesson *l, FILE *f,
    const struct lesson_plain_opts *o, char *err, size_t errlen)
{
	struct lesson_run *run;
	struct plain pl;
	int rc = -1;

	memset(&pl, 0, sizeof pl);
	errno = 0;
	pl.f = f;
	pl.o = o;
	pl.st = o->markdown ? &style_markdown : &style_text;

	/* A rehearsal first: a lesson that cannot run writes nothing. */
	if (lesson_run_rehearse(l, NULL, &pl.slides, err, errlen) != 0)
		return -1;
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
	if (fflush(f) != 0 && pl.werr == 0)
		pl.werr = errno;
	plain_watch(&pl);
	if (pl.werr != 0) {
		util_error(err, errlen, "writing %s output to %s: %s", o->markdown ?
		    "--handout" : "--plain", o->output != NULL ? o->output :
		    "its file", strerror(pl.werr));
		rc = -2;
		goto done;
	}
	rc = run->failures > 0 ? 1 : 0;
done:
	lesson_run_free(run);
	lesson_lines_free(&pl.lines);
	lesson_lines_free(&pl.frame);
	free(pl.asked);
	return rc;
}
