/* lesson_view.c - a lesson's state and questions as lines of text. */
#include "config.h"

#include "lesson_view.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Beyond these the state shows the focus row alone, and cuts rows of
 * numbers short: the lines must fit a handout and a terminal pane. */
#define VIEW_TILE_ROWS 8
#define VIEW_COLS 6
#define VIEW_ROWS 4
#define VIEW_ACC 4

void
lesson_lines_clear(struct lesson_lines *ls)
{
	while (ls->n > 0)
		free(ls->line[--ls->n]);
	ls->oom = 0;
}

void
lesson_lines_free(struct lesson_lines *ls)
{
	lesson_lines_clear(ls);
	free(ls->line);
	memset(ls, 0, sizeof *ls);
}

static void
add_owned(struct lesson_lines *ls, char *s)
{
	char **grown;

	if (s == NULL) {
		ls->oom = 1;
		return;
	}
	if (ls->n == ls->cap) {
		grown = realloc(ls->line, (size_t)(ls->cap ? 2 * ls->cap : 32) *
		    sizeof *grown);
		if (grown == NULL) {
			free(s);
			ls->oom = 1;
			return;
		}
		ls->line = grown;
		ls->cap = ls->cap ? 2 * ls->cap : 32;
	}
	ls->line[ls->n++] = s;
}

void
lesson_lines_add(struct lesson_lines *ls, const char *fmt, ...)
{
	va_list ap, again;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n >= 0 && (s = malloc((size_t)n + 1)) != NULL)
		vsnprintf(s, (size_t)n + 1, fmt, again);
	va_end(again);
	va_end(ap);
	add_owned(ls, s);
}

void
lesson_lines_wrap(struct lesson_lines *ls, const char *text, int width,
    const char *first, const char *indent)
{
	const char *p = text, *w, *prefix = first;
	size_t plen, len, wl;
	char *line;

	if (width < 20)
		width = 20;
	for (;;) {
		/* Words and single blanks never outgrow the rest of the text. */
		plen = strlen(prefix);
		line = malloc(plen + strlen(p) + 1);
		if (line == NULL) {
			ls->oom = 1;
			return;
		}
		memcpy(line, prefix, plen);
		len = plen;
		while (*p == ' ')
			p++;
		/* Words until the next would pass the width; a word longer
		 * than a line stands alone on it. */
		while (*p != '\0') {
			for (w = p; *w != '\0' && *w != ' '; w++)
				;
			wl = (size_t)(w - p);
			if (len > plen && len + 1 + wl > (size_t)width)
				break;
			if (len > plen)
				line[len++] = ' ';
			memcpy(line + len, p, wl);
			len += wl;
			for (p = w; *p == ' '; p++)
				;
		}
		line[len] = '\0';
		add_owned(ls, line);
		if (*p == '\0')
			return;
		prefix = indent;
	}
}

/* ---- the state ---- */

static const char *
num(double x, char *buf, size_t len)
{
	return lesson_format(x, buf, len);
}

/* Up to VIEW_ACC entries: "0.5" for one, "[0.5 1 2 3 ...]" for several. */
static void
vec(const float *x, int n, char *buf, size_t len)
{
	char one[32];
	size_t used = 0;
	int i;

	if (n == 1) {
		num(x[0], buf, len);
		return;
	}
	used += (size_t)snprintf(buf, len, "[");
	for (i = 0; i < n && i < VIEW_ACC && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "",
		    num(x[i], one, sizeof one));
	if (used < len)
		snprintf(buf + used, len - used, "%s]", n > VIEW_ACC ? " ..." : "");
}

void
lesson_view_position(struct lesson_run *run, char *buf, size_t len)
{
	const struct sim_view *v = lesson_run_view(run);

	if (v == NULL) {
		snprintf(buf, len, "before the first step (%ld steps)",
		    run->built ? sim_steps(run->setup.sim) : 0L);
		return;
	}
	/* Counted as people count, as the view counts them. */
	snprintf(buf, len, "step %ld of %ld, after phase %s", v->step + 1,
	    sim_steps(run->setup.sim), lesson_parser_phase_name(run->phase));
}

static void
tile_map(struct lesson_run *run, struct lesson_lines *out)
{
	const struct schedule *s = sim_schedule(run->setup.sim);
	char line[128];
	size_t used;
	long k;
	int i, j;

	if (s->tr > 16 || s->tc > 24)
		return;
	for (i = 0; i < s->tr; i++) {
		used = (size_t)snprintf(line, sizeof line, "%-8s", i == 0 ? "tiles" : "");
		for (j = 0; j < s->tc; j++) {
			char c;
			k = schedule_step_of(s, i, j);
			if (k < 0)
				c = '/';
			else if (run->step < 0 || k > run->step)
				c = 'o';
			else if (k == run->step)
				c = '@';
			else
				c = '#';
			used += (size_t)snprintf(line + used, sizeof line - used, "%s%c",
			    j ? " " : "", c);
		}
		lesson_lines_add(out, "%s", line);
	}
	lesson_lines_add(out, "%8s(@ this step, # done, o to come, / skipped)", "");
}

/* Rows of S or P of the current tile (all rows of a small tile, else the
 * focus row). */
static void
tile_matrix(struct lesson_run *run, const char *name, const float *x,
    struct lesson_lines *out)
{
	const struct sim_view *v = lesson_run_view(run);
	char line[160], one[32], label[16];
	size_t used;
	int r, c, first = 1;

	for (r = 0; r < v->rows; r++) {
		if (v->rows > VIEW_TILE_ROWS && v->tile.r0 + r != run->focus)
			continue;
		if (v->rows == 1)
			snprintf(label, sizeof label, "%s", name);
		else
			snprintf(label, sizeof label, "%s[%d]", first ? name : " ",
			    v->tile.r0 + r);
		first = 0;
		used = (size_t)snprintf(line, sizeof line, "%-8s", label);
		for (c = 0; c < v->cols && c < VIEW_COLS; c++)
			used += (size_t)snprintf(line + used, sizeof line - used, "%11s",
			    num(x[(size_t)r * v->cols + c], one, sizeof one));
		if (v->cols > VIEW_COLS)
			snprintf(line + used, sizeof line - used, " ...");
		lesson_lines_add(out, "%s", line);
	}
}

/* One row of the current tile: old -> new as far as the phase goes. */
static void
tile_row(struct lesson_run *run, int x, struct lesson_lines *out)
{
	const struct sim_view *v = lesson_run_view(run);
	const char *acc = run->opts.rule.convention == CONV_NORMALIZED ? "o" : "u";
	int r = v->tile.r0 + x, ph = run->phase, dv = v->dv;
	char a[32], b[32], c[32], d[32], va[160], vb[160], head[16];

	/* Several rows: the focus row is marked, the others keep its column. */
	if (v->rows > 1)
		snprintf(head, sizeof head, "%crow %d", r == run->focus ? '>' : ' ',
		    r);
	else
		snprintf(head, sizeof head, "row %d", r);
	if (ph >= SIM_PHASE_MAX)
		snprintf(va, sizeof va, "m %s -> %s", num(v->m_old[x], a, sizeof a),
		    num(v->m_new[x], b, sizeof b));
	else
		snprintf(va, sizeof va, "m %s", num(v->m_old[x], a, sizeof a));
	if (ph >= SIM_PHASE_UPDATE)
		lesson_lines_add(out, "%-8s%s%s%s   l %s -> %s", head, va,
		    "   alpha ", num(v->alpha[x], c, sizeof c),
		    num(v->l_old[x], d, sizeof d), num(v->l_new[x], b, sizeof b));
	else if (ph >= SIM_PHASE_RESCALE)
		lesson_lines_add(out, "%-8s%s   alpha %s   l %s", head, va,
		    num(v->alpha[x], c, sizeof c), num(v->l_old[x], d, sizeof d));
	else
		lesson_lines_add(out, "%-8s%s   l %s", head, va,
		    num(v->l_old[x], d, sizeof d));
	vec(v->acc_old + (size_t)x * dv, dv, va, sizeof va);
	if (ph >= SIM_PHASE_UPDATE) {
		vec(v->acc_new + (size_t)x * dv, dv, vb, sizeof vb);
		/* Long vectors: old and new one above the other. */
		if (strlen(va) + strlen(vb) > 60) {
			lesson_lines_add(out, "%8s%s    %s", "", acc, va);
			lesson_lines_add(out, "%8s%*s -> %s", "", (int)strlen(acc), "",
			    vb);
		} else
			lesson_lines_add(out, "%8s%s %s -> %s", "", acc, va, vb);
	} else
		lesson_lines_add(out, "%8s%s %s", "", acc, va);
	/* Under the normalized convention o is the accumulator already. */
	if (ph == SIM_PHASE_FINALIZE && *acc == 'o')
		lesson_lines_add(out, "%8slse %s", "", num(v->lse[x], a, sizeof a));
	else if (ph == SIM_PHASE_FINALIZE) {
		vec(v->o + (size_t)x * dv, dv, va, sizeof va);
		lesson_lines_add(out, "%8so %s   lse %s", "", va,
		    num(v->lse[x], a, sizeof a));
	}
}

/* The focus row when the current tile does not hold it. */
static void
other_row(struct lesson_run *run, struct lesson_lines *out)
{
	const char *acc = run->opts.rule.convention == CONV_NORMALIZED ? "o" : "u";
	struct lesson_row row;
	char a[32], b[32], va[160], head[64];

	if (lesson_run_row(run, run->focus, &row) != 0)
		return;
	if (row.from_step < 0)
		snprintf(head, sizeof head, "row %d (not reached yet)", run->focus);
	else
		snprintf(head, sizeof head, "row %d (as step %ld left it)", run->focus,
		    row.from_step + 1);
	vec(row.acc, run->setup.problem.dv, va, sizeof va);
	lesson_lines_add(out, "%s: m %s   l %s   %s %s", head,
	    num(row.m, a, sizeof a), num(row.l, b, sizeof b), acc, va);
	if (row.has_out) {
		vec(row.o, run->setup.problem.dv, va, sizeof va);
		lesson_lines_add(out, "%8so %s   lse %s", "", va,
		    num(row.lse, a, sizeof a));
	}
}

void
lesson_view_state(struct lesson_run *run, struct lesson_lines *out)
{
	const struct sim_view *v;
	struct traffic t;
	char pos[160];
	int x;

	if (!run->built)
		return;
	lesson_view_position(run, pos, sizeof pos);
	lesson_lines_add(out, "%s", pos);
	v = lesson_run_view(run);
	if (v != NULL)
		lesson_lines_add(out, "tile (%d, %d): rows %d-%d, keys %d-%d%s",
		    v->tile.i, v->tile.j, v->tile.r0, v->tile.r1 - 1, v->tile.c0,
		    v->tile.c1 - 1, v->tile.last_in_row ? "; finalizes its rows" : "");
	tile_map(run, out);
	if (v != NULL) {
		if (run->phase >= SIM_PHASE_SCORES)
			tile_matrix(run, "S", v->s, out);
		if (run->phase >= SIM_PHASE_EXP)
			tile_matrix(run, "P", v->p, out);
		for (x = 0; x < v->rows; x++)
			if (v->rows <= VIEW_ROWS || v->tile.r0 + x == run->focus)
				tile_row(run, x, out);
	}
	if (v == NULL || run->focus < v->tile.r0 || run->focus >= v->tile.r1)
		other_row(run, out);
	if (v != NULL)
		t = v->traffic;
	else
		memset(&t, 0, sizeof t);
	lesson_lines_add(out, "so far: HBM read %llu B, written %llu B; %llu "
	    "FLOPs; %llu exps", (unsigned long long)t.hbm_read,
	    (unsigned long long)t.hbm_write, (unsigned long long)t.flops,
	    (unsigned long long)t.exps);
}

/* ---- questions ---- */

/* "1002 (within 0.5)": a number answer as the handout gives it. */
static void
number_answer(const struct lesson_question *q, char *buf, size_t len)
{
	char tol[32];

	if (q->rtol > 0)
		snprintf(tol, sizeof tol, "%g%%", 100 * q->rtol);
	else
		lesson_format(q->tol, tol, sizeof tol);
	snprintf(buf, len, "%s (answers within %s count)", q->number_text, tol);
}

void
lesson_view_answer(const struct lesson_question *q, int number, int width,
    struct lesson_lines *out)
{
	const char *ex = q->explanation ? q->explanation : "";
	char first[32], head[96], *text;
	size_t n;

	snprintf(first, sizeof first, "Q%d. ", number);
	head[0] = '\0';
	if (q->answer >= 0)
		snprintf(head, sizeof head, "%c)", 'a' + q->answer);
	else if (q->numeric)
		number_answer(q, head, sizeof head);
	n = strlen(head) + strlen(ex) +
	    (q->answer >= 0 ? strlen(q->choices[q->answer]) : 0) + 16;
	text = malloc(n);
	if (text == NULL) {
		out->oom = 1;
		return;
	}
	if (q->answer >= 0)
		snprintf(text, n, "%s %s%s%s", head, q->choices[q->answer],
		    *ex ? " -- " : "", ex);
	else
		snprintf(text, n, "%s%s%s", head, *head && *ex ? " -- " : "", ex);
	lesson_lines_wrap(out, text, width, first, "    ");
	free(text);
}

void
lesson_view_question(const struct lesson_question *q, const char *text,
    int number, int width, struct lesson_lines *out)
{
	char first[32], letter[8];
	int i;

	snprintf(first, sizeof first, "Q%d. ", number);
	lesson_lines_wrap(out, text != NULL ? text : q->text, width, first,
	    "    ");
	for (i = 0; i < q->nchoices; i++) {
		snprintf(letter, sizeof letter, "    %c) ", 'a' + i);
		lesson_lines_wrap(out, q->choices[i], width, letter, "       ");
	}
}

void
lesson_view_reveal(const struct lesson_question *q, int width,
    struct lesson_lines *out)
{
	char head[96], first[128];

	if (q->answer >= 0) {
		snprintf(first, sizeof first, "    Answer: %c) ", 'a' + q->answer);
		lesson_lines_wrap(out, q->choices[q->answer], width, first,
		    "               ");
	} else if (q->numeric) {
		number_answer(q, head, sizeof head);
		lesson_lines_add(out, "    Answer: %s", head);
	}
	if (q->explanation != NULL)
		lesson_lines_wrap(out, q->explanation, width, q->answer >= 0 ||
		    q->numeric ? "    " : "    Answer: ", "    ");
}
