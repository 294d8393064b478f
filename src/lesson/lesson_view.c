/* lesson_view.c - a lesson's state and questions as lines of text. */
#include "config.h"

#include "lesson_show.h"
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

/* "(12 steps: 4 forward, 8 backward)" */
static void
all_steps(struct lesson_run *run, char *buf, size_t len)
{
	const struct timeline_segment *seg;
	size_t used;
	int s, nseg = timeline_segments(run->bwd.tl);

	used = (size_t)snprintf(buf, len, "%ld steps", timeline_steps(run->bwd.tl));
	for (s = 0; nseg > 1 && s < nseg && used < len; s++) {
		seg = timeline_segment(run->bwd.tl, s);
		used += (size_t)snprintf(buf + used, len - used, "%s%ld %s",
		    s ? ", " : ": ", seg->steps(timeline_engine(run->bwd.tl, s)),
		    seg->name);
	}
}

/* The position in a few words: "step 2 of 2, after phase update" or
 * "before the first step (2 steps)". */
static void
lesson_view_position(struct lesson_run *run, char *buf, size_t len)
{
	const struct timeline_segment *seg = lesson_run_segment(run);
	struct timeline_pos pos;
	char steps[96];

	if (!run->built) {
		snprintf(buf, len, "before the first step");
		return;
	}
	all_steps(run, steps, sizeof steps);
	if (run->step < 0) {
		snprintf(buf, len, "before the first step (%s)", steps);
		return;
	}
	/* Counted as people count, as the view counts them. */
	timeline_position(run->bwd.tl, &pos);
	if (timeline_segments(run->bwd.tl) == 1)
		snprintf(buf, len, "step %ld of %ld, after phase %s", run->step + 1,
		    timeline_steps(run->bwd.tl), lesson_run_phase_name(run));
	else
		snprintf(buf, len, "%s step %ld of %ld (step %ld of %ld), after "
		    "phase %s", seg->name, pos.step + 1,
		    seg->steps(timeline_engine(run->bwd.tl, pos.seg)), run->step + 1,
		    timeline_steps(run->bwd.tl), lesson_run_phase_name(run));
}

/* The tiles of schedule s, with step `now` (-1: none yet; past the last:
 * all done) marked. */
static void
tile_map(const struct schedule *s, long now, struct lesson_lines *out)
{
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
			else if (now < 0 || k > now)
				c = 'o';
			else if (k == now)
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

/* Rows of a (rows, cols) matrix of the current tile, whose first row is
 * row r0 (all rows of a small tile, else the focus row). */
static void
tile_matrix(struct lesson_run *run, const char *name, const float *x,
    int rows, int cols, int r0, struct lesson_lines *out)
{
	char line[160], one[32], label[16];
	size_t used;
	int r, c, first = 1;

	for (r = 0; r < rows; r++) {
		if (rows > VIEW_TILE_ROWS && r0 + r != run->focus)
			continue;
		if (rows == 1)
			snprintf(label, sizeof label, "%s", name);
		else
			snprintf(label, sizeof label, "%s[%d]", first ? name : " ",
			    r0 + r);
		first = 0;
		used = (size_t)snprintf(line, sizeof line, "%-8s", label);
		for (c = 0; c < cols && c < VIEW_COLS; c++)
			used += (size_t)snprintf(line + used, sizeof line - used, " %10s",
			    num(x[(size_t)r * cols + c], one, sizeof one));
		if (cols > VIEW_COLS)
			snprintf(line + used, sizeof line - used, " ...");
		lesson_lines_add(out, "%s", line);
	}
}

/* Dropout's keep bits of a tile as a 0/1 matrix under P: keep from the
 * backward (the bits it drew), or, when NULL, the forward's, drawn here
 * as the simulator draws them (mask_rule_keep).  Nothing without
 * dropout. */
static void
keep_matrix(struct lesson_run *run, const struct schedule *sc,
    const struct schedule_tile *t, int rows, int cols,
    const unsigned char *keep, struct lesson_lines *out)
{
	const struct problem *p = &run->setup.problem;
	float *bits;
	int r, c, row;

	if (!mask_rule_has(p->mask, MASK_DROPOUT))
		return;
	bits = malloc((size_t)rows * cols * sizeof *bits);
	if (bits == NULL)
		return;
	for (r = 0; r < rows; r++) {
		row = schedule_row_out(sc, t->r0 + r);
		for (c = 0; c < cols; c++)
			bits[(size_t)r * cols + c] = keep != NULL ?
			    keep[(size_t)r * cols + c] :
			    (float)mask_rule_keep(problem_mask(p, row / p->tq),
			    schedule_row_pos(sc, t->r0 + r), t->c0 + c);
	}
	tile_matrix(run, "keep", bits, rows, cols, t->r0, out);
	free(bits);
}

/* "S --" or "S [a b] -> [c d]", one above the other when long. */
static void
old_new(const char *name, const char *a, const char *b,
    struct lesson_lines *out)
{
	if (b == NULL)
		lesson_lines_add(out, "%8s%s %s", "", name, a);
	else if (strlen(a) + strlen(b) > 60) {
		lesson_lines_add(out, "%8s%s    %s", "", name, a);
		lesson_lines_add(out, "%8s%*s -> %s", "", (int)strlen(name), "", b);
	} else
		lesson_lines_add(out, "%8s%s %s -> %s", "", name, a, b);
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
		old_new(acc, va, vb, out);
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

static void
counters(struct lesson_lines *out, const char *what, const struct traffic *t)
{
	lesson_lines_add(out, "%s: HBM read %llu B, written %llu B; %llu "
	    "FLOPs; %llu exps", what, (unsigned long long)t->hbm_read,
	    (unsigned long long)t->hbm_write, (unsigned long long)t->flops,
	    (unsigned long long)t->exps);
}

/* The forward's frame (and, before the first step, any problem's). */
static void
forward_state(struct lesson_run *run, struct lesson_lines *out)
{
	const struct sim_view *v = lesson_run_view(run);
	const struct schedule *s = sim_schedule(run->setup.sim);
	struct traffic t;
	char range[96] = "";
	int x;

	if (v != NULL && s->splits > 1)
		snprintf(range, sizeof range, "; key range %d of %d%s",
		    v->tile.split + 1, s->splits, v->tile.last_in_split ?
		    ", its last tile: the partial ends" : "");
	if (v != NULL)
		lesson_lines_add(out, "tile (%d, %d): rows %d-%d, keys %d-%d%s%s",
		    v->tile.i, v->tile.j, v->tile.r0, v->tile.r1 - 1, v->tile.c0,
		    v->tile.c1 - 1, v->tile.last_in_row && s->splits < 2 ?
		    "; finalizes its rows" : "", range);
	tile_map(s, v != NULL ? v->step : -1, out);
	if (v != NULL) {
		if (run->phase >= SIM_PHASE_SCORES)
			tile_matrix(run, "S", v->s, v->rows, v->cols, v->tile.r0, out);
		if (run->phase >= SIM_PHASE_EXP) {
			tile_matrix(run, "P", v->p, v->rows, v->cols, v->tile.r0, out);
			keep_matrix(run, s, &v->tile, v->rows, v->cols, NULL, out);
		}
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
	counters(out, "so far", &t);
}

/* A key's dV or dK, after head: "old" or "old -> new", on one line
 * when it fits. */
static void
key_grad(struct lesson_lines *out, const char *head, const char *name,
    const char *a, const char *b)
{
	if (b == NULL)
		lesson_lines_add(out, "%-8s%s %s", head, name, a);
	else if (strlen(a) + strlen(b) <= 60)
		lesson_lines_add(out, "%-8s%s %s -> %s", head, name, a, b);
	else {
		lesson_lines_add(out, "%-8s%s    %s", head, name, a);
		lesson_lines_add(out, "%8s%*s -> %s", "", (int)strlen(name), "", b);
	}
}

/* The backward's frame: its tile, S, P, dP, dS as far as the phase
 * goes, the rows' lse, D and dQ, the keys' dV and dK, its counters. */
static void
backward_state(struct lesson_run *run, struct lesson_lines *out)
{
	const struct backward_view *v = lesson_run_backward_view(run);
	const struct schedule *s = backward_schedule(run->bwd.bwd);
	struct lesson_grad g;
	int ph = (int)v->phase, x, r, c;
	char a[32], b[32], va[160], vb[160], head[24];

	lesson_lines_add(out, "tile (%d, %d): rows %d-%d, keys %d-%d", v->tile.i,
	    v->tile.j, v->tile.r0, v->tile.r1 - 1, v->tile.c0, v->tile.c1 - 1);
	if (v->tile.first_in_outer || v->last_in_key || v->tile.last_in_row)
		lesson_lines_add(out, "%8s%s%s%s%s%s", "", v->tile.first_in_outer ?
		    "key block's first: dK, dV from 0 on chip" : "",
		    v->tile.first_in_outer && v->last_in_key ? "; " : "",
		    v->last_in_key ? "key block's last: dK, dV written" : "",
		    v->tile.last_in_row && (v->tile.first_in_outer ||
		    v->last_in_key) ? "; " : "", v->tile.last_in_row ?
		    "row block's last: its dQ whole" : "");
	tile_map(s, v->step, out);
	if (ph >= BWD_PHASE_SCORES)
		tile_matrix(run, "S", v->s, v->rows, v->cols, v->tile.r0, out);
	if (ph >= BWD_PHASE_P)
		tile_matrix(run, "P", v->p, v->rows, v->cols, v->tile.r0, out);
	if (ph >= BWD_PHASE_DP) {
		keep_matrix(run, s, &v->tile, v->rows, v->cols, v->keep, out);
		tile_matrix(run, "dP", v->dp, v->rows, v->cols, v->tile.r0, out);
	}
	if (ph >= BWD_PHASE_DS)
		tile_matrix(run, "dS", v->ds, v->rows, v->cols, v->tile.r0, out);
	for (x = 0; x < v->rows; x++) {
		r = v->tile.r0 + x;
		if (v->rows > VIEW_ROWS && r != run->focus)
			continue;
		snprintf(head, sizeof head, "%crow %d", r == run->focus &&
		    v->rows > 1 ? '>' : ' ', r);
		lesson_lines_add(out, "%-8slse %s   D %s", head,
		    num(v->lse[x], a, sizeof a), num(v->dsum[x], b, sizeof b));
		vec(v->dq_old + (size_t)x * v->d, v->d, va, sizeof va);
		vec(v->dq_new + (size_t)x * v->d, v->d, vb, sizeof vb);
		if (v->d > 0)
			old_new("dQ", va, ph >= BWD_PHASE_DQ ? vb : NULL, out);
	}
	if (v->d > 0 && (run->focus < v->tile.r0 || run->focus >= v->tile.r1)) {
		lesson_run_grad(run, LESSON_DQ, run->focus, 0, &g);
		vec(g.x, g.n, va, sizeof va);
		if (g.from_step < 0)
			lesson_lines_add(out, "row %d: dQ %s (no tile has added to it "
			    "yet)", run->focus, va);
		else
			lesson_lines_add(out, "row %d: dQ %s (as backward step %ld "
			    "left it)", run->focus, va, g.from_step + 1);
	}
	for (x = 0; x < v->cols; x++) {
		c = v->tile.c0 + x;
		if (v->cols > VIEW_ROWS && c != run->focus_key)
			continue;
		snprintf(head, sizeof head, "%ckey %d", c == run->focus_key &&
		    v->cols > 1 ? '>' : ' ', c);
		vec(v->dv_old + (size_t)x * v->dv, v->dv, va, sizeof va);
		vec(v->dv_new + (size_t)x * v->dv, v->dv, vb, sizeof vb);
		key_grad(out, head, "dV", va, ph >= BWD_PHASE_DV ? vb : NULL);
		vec(v->dk_old + (size_t)x * v->d, v->d, va, sizeof va);
		vec(v->dk_new + (size_t)x * v->d, v->d, vb, sizeof vb);
		if (v->d > 0)
			key_grad(out, "", "dK", va, ph >= BWD_PHASE_DK ? vb : NULL);
	}
	counters(out, "backward so far", &v->traffic);
}

/* An operand of a merge, in words. */
static const char *
operand(struct combine_operand x, char *buf, size_t len)
{
	if (x.source == COMBINE_EMPTY)
		snprintf(buf, len, "empty");
	else if (x.source == COMBINE_PARTIAL)
		snprintf(buf, len, "partial %d", x.index);
	else
		snprintf(buf, len, "slot %d", x.index);
	return buf;
}

/* The combine's frame: the merge, each row's operands, weights and
 * result as far as the phase goes, its counters. */
static void
combine_state(struct lesson_run *run, struct lesson_lines *out)
{
	const struct combine_view *v = lesson_run_combine_view(run);
	int ph = (int)v->phase, x, r, dv = v->dv;
	char a[32], b[32], c[32], d[32], va[160], vb[160], head[24];
	int olse = combine_form(run->bwd.comb) == MERGE_OLSE;

	lesson_lines_add(out, "merge %d of %d of row block %d (rows %d-%d): slot "
	    "%d = %s + %s%s", v->merge + 1, combine_merges(run->bwd.comb), v->block,
	    v->r0, v->r1 - 1, v->op.dst, operand(v->op.a, a, sizeof a),
	    operand(v->op.b, b, sizeof b), v->last ? "; the block's last: "
	    "finalizes" : "");
	lesson_lines_add(out, "partials as %s", olse ? "(o, lse): m is the "
	    "lse, l is 1" : "(m, l, u)");
	for (x = 0; x < v->rows; x++) {
		r = v->r0 + x;
		if (v->rows > VIEW_ROWS && r != run->focus)
			continue;
		snprintf(head, sizeof head, "%crow %d", r == run->focus &&
		    v->rows > 1 ? '>' : ' ', r);
		vec(v->u_a + (size_t)x * dv, dv, va, sizeof va);
		vec(v->u_b + (size_t)x * dv, dv, vb, sizeof vb);
		lesson_lines_add(out, "%-8sa: m %s l %s %s %s", head,
		    num(v->m_a[x], a, sizeof a), num(v->l_a[x], b, sizeof b),
		    olse ? "o" : "u", va);
		lesson_lines_add(out, "%8sb: m %s l %s %s %s", "",
		    num(v->m_b[x], a, sizeof a), num(v->l_b[x], b, sizeof b),
		    olse ? "o" : "u", vb);
		if (ph >= COMBINE_PHASE_UPDATE)
			lesson_lines_add(out, "%8sm %s   w_a %s   w_b %s   l %s", "",
			    num(v->m[x], a, sizeof a), num(v->w_a[x], b, sizeof b),
			    num(v->w_b[x], c, sizeof c), num(v->l[x], d, sizeof d));
		else if (ph >= COMBINE_PHASE_WEIGHTS)
			lesson_lines_add(out, "%8sm %s   w_a %s   w_b %s", "",
			    num(v->m[x], a, sizeof a), num(v->w_a[x], b, sizeof b),
			    num(v->w_b[x], c, sizeof c));
		else if (ph >= COMBINE_PHASE_MAX)
			lesson_lines_add(out, "%8sm %s", "", num(v->m[x], a, sizeof a));
		if (ph >= COMBINE_PHASE_UPDATE) {
			vec(v->u + (size_t)x * dv, dv, va, sizeof va);
			lesson_lines_add(out, "%8s%s %s", "", olse ? "o" : "u", va);
		}
		if (ph == COMBINE_PHASE_FINALIZE) {
			vec(v->o + (size_t)x * dv, dv, va, sizeof va);
			lesson_lines_add(out, "%8so %s   lse %s", "", va,
			    num(v->lse[x], a, sizeof a));
		}
	}
	lesson_lines_add(out, "combine so far: HBM read %llu B (partials), "
	    "written %llu B", (unsigned long long)v->traffic.hbm_read,
	    (unsigned long long)v->traffic.hbm_write);
}

/* "head 3 of 16 (kv head 0 of 4)": the head of the focus row, or ""
 * for a problem of one head. */
static void
focus_head(const struct lesson_run *run, char *buf, size_t len)
{
	const struct problem *p = &run->setup.problem;
	int h = p->heads > 0 ? p->heads : 1, g = p->kv_heads > 0 ? p->kv_heads : 1;
	int head;

	buf[0] = '\0';
	if (!run->built || h <= 1 || p->tq <= 0)
		return;
	head = lesson_run_out_row(run, run->focus) / p->tq;
	snprintf(buf, len, "head %d of %d (kv head %d of %d)", head, h,
	    head / (h / g), g);
}

int
lesson_view_source(const struct lesson_run *run, char *why, size_t len)
{
	char head[64];

	why[0] = '\0';
	if (run->built && run->dirty && run->problem_line > 0) {
		snprintf(why, len, "the problem changed here, but the slide ends "
		    "before anything builds it: the view would show the problem "
		    "before it while the narration speaks of this one; show it on "
		    "this slide (goto start) or change it after the pause");
		return LESSON_VIEW_STALE;
	}
	if (!run->built) {
		snprintf(why, len, "no problem yet: the view shows none");
		return LESSON_VIEW_NONE;
	}
	focus_head(run, head, sizeof head);
	if (head[0] != '\0') {
		snprintf(why, len, "the panes show one head, this problem has %d: "
		    "the lesson's frame shows %s", run->setup.problem.heads, head);
		return LESSON_VIEW_FRAME;
	}
	return LESSON_VIEW_PANES;
}

void
lesson_view_state(struct lesson_run *run, struct lesson_lines *out)
{
	char pos[200], head[64];

	if (lesson_show_active(run)) {
		lesson_show_lines(run, out);
		return;
	}
	if (!run->built)
		return;
	lesson_view_position(run, pos, sizeof pos);
	lesson_lines_add(out, "%s", pos);
	/* Several heads: the frame is one head's, and says which. */
	focus_head(run, head, sizeof head);
	if (head[0] != '\0')
		lesson_lines_add(out, "%s, the head's row %d of %d (focus row %d)", head,
		    lesson_run_out_row(run, run->focus) % run->setup.problem.tq,
		    run->setup.problem.tq, run->focus);
	switch (run->step < 0 ? TIMELINE_FORWARD : lesson_run_kind(run)) {
	case TIMELINE_BACKWARD:
		backward_state(run, out);
		break;
	case TIMELINE_COMBINE:
		combine_state(run, out);
		break;
	default:
		forward_state(run, out);
		break;
	}
}

/* ---- the kernel ladder ---- */

void
lesson_view_ladder(const struct gpu_ladder_rung *rungs, const char *device,
    const char *skipped, struct lesson_lines *out)
{
	const struct gpu_ladder_rung *r;
	char tiles[32], speed[32];
	int i;

	if (rungs == NULL) {
		lesson_lines_add(out, "the kernel ladder was skipped: %s", skipped);
		return;
	}
	lesson_lines_add(out, "the kernel ladder on %s (ms: the median kernel "
	    "time; O: against the lowest rung's)", device);
	lesson_lines_add(out, "%-9s %-8s %9s %8s %8s %8s", "rung", "tiles",
	    "ms", "TFLOP/s", "speed-up", "O");
	for (i = 0; i < GPU_LADDER_RUNGS; i++) {
		r = &rungs[i];
		if (!r->ran) {
			lesson_lines_add(out, "%-9s skipped: %s", r->kernel->name,
			    r->why);
			continue;
		}
		gpu_ladder_cells(r, tiles, sizeof tiles, speed, sizeof speed);
		lesson_lines_add(out, "%-9s %-8s %9.3f %8.2f %8s %8.2g", r->kernel->name,
		    tiles, r->ms, r->tflops, speed, r->o_diff);
	}
	for (i = 0; i < GPU_LADDER_RUNGS; i++)
		lesson_lines_add(out, "%-9s %s", rungs[i].kernel->name,
		    rungs[i].change);
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
