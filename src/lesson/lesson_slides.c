/* lesson_slides.c - slides of a lesson, forwards and back (see
 * lesson_slides.h). */
#include "config.h"

#include "lesson_slides.h"
#include "lesson_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
clear_items(struct lesson_slides *s)
{
	while (s->nitems > 0)
		free(s->items[--s->nitems].text);
}

static struct lesson_item *
add_item(struct lesson_slides *s, enum lesson_item_kind kind, const char *text)
{
	struct lesson_item *grown, *it;

	if (s->nitems == s->cap) {
		grown = realloc(s->items, (size_t)(s->cap ? 2 * s->cap : 16) *
		    sizeof *grown);
		if (grown == NULL) {
			s->oom = 1;
			return NULL;
		}
		s->items = grown;
		s->cap = s->cap ? 2 * s->cap : 16;
	}
	it = &s->items[s->nitems];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	if (text != NULL && (it->text = strdup(text)) == NULL) {
		s->oom = 1;
		return NULL;
	}
	s->nitems++;
	return it;
}

static void
slides_text(void *ctx, struct lesson_run *run, enum lesson_text_kind kind,
    const char *text)
{
	struct lesson_slides *s = ctx;

	(void)run;
	add_item(s, kind == LESSON_NOTE ? LESSON_ITEM_NOTE : LESSON_ITEM_SAY, text);
}

static void
slides_problem(void *ctx, struct lesson_run *run)
{
	struct lesson_slides *s = ctx;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	/* The same three lines `flashstep run` prints. */
	f = open_memstream(&text, &len);
	if (f == NULL) {
		s->oom = 1;
		return;
	}
	lesson_run_describe(run, f);
	if (fclose(f) != 0 || text == NULL) {
		s->oom = 1;
		free(text);
		return;
	}
	if (len > 0 && text[len - 1] == '\n')
		text[len - 1] = '\0';
	add_item(s, LESSON_ITEM_PROBLEM, text);
	free(text);
}

static void
slides_ask(void *ctx, struct lesson_run *run, const struct lesson_question *q,
    const char *text, int number)
{
	struct lesson_slides *s = ctx;
	struct lesson_item *it;

	(void)run;
	it = add_item(s, LESSON_ITEM_QUESTION, text);
	if (it != NULL) {
		it->q = q;
		it->number = number;
	}
}

static void
slides_failed(void *ctx, struct lesson_run *run, const char *msg)
{
	(void)run;
	add_item(ctx, LESSON_ITEM_FAILED, msg);
}

static void
slides_compare(void *ctx, struct lesson_run *run,
    const struct gpucheck_report *rep, const char *skipped)
{
	char text[512];

	(void)run;
	if (rep == NULL)
		snprintf(text, sizeof text, "The GPU check was skipped: %s",
		    skipped);
	else
		snprintf(text, sizeof text, "The GPU kernel on %s, %ld steps: %s; "
		    "largest differences m %.3g, alpha %.3g, l %.3g, acc %.3g "
		    "(worst at step %ld), O %.3g, lse %.3g", rep->device, rep->steps,
		    rep->pass ? "it agrees with the simulator" :
		    "it DISAGREES with the simulator", rep->max_m,
		    rep->max_alpha, rep->max_l, rep->max_acc, rep->worst_step + 1,
		    rep->max_o, rep->max_lse);
	add_item(ctx, LESSON_ITEM_COMPARE, text);
}

static void
slides_ladder(void *ctx, struct lesson_run *run,
    const struct gpu_ladder_rung *rungs, const char *device,
    const char *skipped)
{
	struct lesson_slides *s = ctx;
	struct lesson_lines ls = { 0 };
	char *text;
	size_t len = 1;
	int i;

	(void)run;
	lesson_view_ladder(rungs, device, skipped, &ls);
	for (i = 0; i < ls.n; i++)
		len += strlen(ls.line[i]) + 1;
	text = calloc(len, 1);
	if (text == NULL || ls.oom) {
		s->oom = 1;
		free(text);
		lesson_lines_free(&ls);
		return;
	}
	for (i = 0; i < ls.n; i++) {
		strcat(text, ls.line[i]);
		if (i + 1 < ls.n)
			strcat(text, "\n");
	}
	add_item(ctx, rungs != NULL ? LESSON_ITEM_TABLE : LESSON_ITEM_COMPARE,
	    text);
	free(text);
	lesson_lines_free(&ls);
}

static const struct lesson_sink slides_sink = {
	.text = slides_text,
	.problem = slides_problem,
	.ask = slides_ask,
	.failed = slides_failed,
	.compare = slides_compare,
	.ladder = slides_ladder,
};

/* Runs on to the next pause or the end, collecting a fresh slide. */
static int
next_slide(struct lesson_slides *s)
{
	int rc;

	clear_items(s);
	rc = lesson_run_next(s->run);
	if (rc == LESSON_ERROR) {
		snprintf(s->err, sizeof s->err, "%s", s->run->err);
		return -1;
	}
	if (s->oom) {
		snprintf(s->err, sizeof s->err, "%s: out of memory", s->lesson->path);
		return -1;
	}
	s->index++;
	s->at_end = lesson_run_last_slide(s->run, rc);
	return 0;
}

int
lesson_slides_go(struct lesson_slides *s, int n)
{
	if (n < 1)
		n = 1;
	if (n < s->index || s->index == 0) {
		lesson_run_reset(s->run);
		s->index = 0;
		s->at_end = 0;
	}
	while (s->index < n && !s->at_end)
		if (next_slide(s) != 0)
			return -1;
	return 0;
}

int
lesson_slides_open(struct lesson_slides *s, const struct lesson *l, char *err,
    size_t errlen)
{
	return lesson_slides_open_progress(s, l, NULL, err, errlen);
}

int
lesson_slides_open_progress(struct lesson_slides *s, const struct lesson *l,
    const struct fulltimeline_progress *progress, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	s->lesson = l;

	/* A rehearsal: a lesson that cannot run shows nothing. */
	if (lesson_run_rehearse(l, progress, &s->count, err, errlen) != 0)
		return -1;
	s->run = lesson_run_new(l, &slides_sink, s, 0);
	if (s->run == NULL)
		return util_error(err, errlen, "%s: out of memory", l->path);
	s->run->progress = progress;
	if (lesson_slides_go(s, 1) != 0) {
		util_error(err, errlen, "%s", s->err);
		lesson_slides_close(s);
		return -1;
	}
	return 0;
}

void
lesson_slides_close(struct lesson_slides *s)
{
	clear_items(s);
	free(s->items);
	lesson_run_free(s->run);
	memset(s, 0, sizeof *s);
}

int
lesson_slides_forward(struct lesson_slides *s)
{
	if (s->at_end)
		return 1;
	return next_slide(s);
}

int
lesson_slides_back(struct lesson_slides *s)
{
	if (s->index <= 1)
		return 1;
	return lesson_slides_go(s, s->index - 1);
}

struct lesson_item *
lesson_slides_hidden(struct lesson_slides *s)
{
	int i;

	for (i = 0; i < s->nitems; i++)
		if (s->items[i].kind == LESSON_ITEM_QUESTION && !s->items[i].revealed)
			return &s->items[i];
	return NULL;
}

int
lesson_slides_reveal(struct lesson_slides *s)
{
	struct lesson_item *it = lesson_slides_hidden(s);

	if (it == NULL)
		return 0;
	it->revealed = 1;
	return 1;
}

/* The UTF-8 characters (columns) of s. */
static int
columns(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		n += (*s & 0xc0) != 0x80;
	return n;
}

int
lesson_slides_heading(const struct lesson *l, int n, int width, char *buf,
    size_t len)
{
	const struct lesson_cmd *c = NULL;
	const char *text, *p;
	char *out, *cut;
	size_t used = 0, at;
	int slide = 1, i, f, cols;

	for (i = 0; i < l->ncmds && slide <= n; i++) {
		if (strcmp(l->cmds[i].dir->name, "pause") == 0)
			slide++;
		else if (slide == n && l->cmds[i].text != NULL &&
		    (strcmp(l->cmds[i].dir->name, "say") == 0 ||
		    strcmp(l->cmds[i].dir->name, "ask") == 0)) {
			c = &l->cmds[i];
			break;
		}
	}
	if (c == NULL || len < 8)
		return -1;
	out = malloc(strlen(c->text) * 3 + 8);
	if (out == NULL)
		return -1;
	/* The text with each {...} as "…", to the end of its first sentence. */
	text = c->text;
	for (at = 0, f = 0; text[at] != '\0'; at++) {
		if (f < c->nfills && at == c->fills[f].start) {
			used += (size_t)sprintf(out + used, "\xe2\x80\xa6");
			at = c->fills[f++].end - 1;
			continue;
		}
		out[used++] = text[at];
		if (strchr(".?!", text[at]) != NULL && (text[at + 1] == ' ' ||
		    text[at + 1] == '\0'))
			break;
	}
	out[used] = '\0';
	cols = columns(out);
	if (cols > width && width > 4) {
		/* cut at the last blank that leaves room for the ellipsis */
		for (p = out, i = 0, cut = NULL; *p != '\0'; p++) {
			if ((*p & 0xc0) != 0x80)
				i++;
			if (*p == ' ' && i <= width - 1)
				cut = (char *)p;
			if (i > width - 1)
				break;
		}
		if (cut == NULL)
			cut = (char *)p;
		while (cut > out && cut[-1] == ' ')
			cut--;
		strcpy(cut, "\xe2\x80\xa6");
	}
	snprintf(buf, len, "%s", out);
	free(out);
	return 0;
}
