/*
 * ui_pane_heat.c - the whole score matrix S as a heatmap: the current
 * tile reversed, tiles not visited yet dim, tiles the mask skips
 * hatched (a window's on both sides of its band, causal's right of the
 * diagonal), masked entries blank, so a window shows as a band of
 * scores between hidden entries and skipped tiles.  The scores are the
 * scaled products x = scale Q K^T, before a softcap or ALiBi bends them
 * (the tile pane shows both).  In the backward "visited" follows its
 * own order (key blocks outside); in the combine every tile is done and
 * the row block being merged is the current one.  One screen cell shows fy rows by fx
 * keys; when that is more than one entry the pane says "pooled" and each
 * cell shows the max of its entries (from heatmap.c, never recomputed
 * here).  Pooling is chosen to line up with the tiles where it can, so
 * the tile outline stays crisp.  With a paged cache a tick above the
 * grid marks where each page of keys starts.  A packed batch
 * (--seqlens) shows its packed matrix whole: the sequence boundaries
 * ticked on both axes, the blocks of two different sequences' rows and
 * keys marked as never computed (no tile crosses a boundary), the
 * sequences before the current one done, those after it ahead
 * (ui_varlen.c).
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct ui_pane ui_pane_heat;	/* at the end */

/* What the pane keeps between frames. */
struct ui_pane_heat_data {
	/* Where the last frame put the matrix: clicks are read with it. */
	struct ui_heat_geom geom;
	/* The heatmap as last drawn, one value per screen cell: pooling
	 * reads many summary cells per screen cell, so it is done again
	 * only when the pooling, the mask or the summary (its layout,
	 * ui->heat_gen, or its progress) changes. */
	float *pool;
	int ny, nx, fy, fx, bands;
	struct mask_rule mask;
	long heat_gen;
};

static void *
ui_pane_heat_init(struct ui *ui)
{
	struct ui_pane_heat_data *hs = calloc(1, sizeof *hs);

	(void)ui;
	if (hs != NULL)
		hs->heat_gen = -1;	/* nothing pooled yet */
	return hs;
}

static void
ui_pane_heat_free(void *data)
{
	struct ui_pane_heat_data *hs = data;

	free(hs->pool);
	free(hs);
}

const struct ui_heat_geom *
ui_pane_heat_last(struct ui *ui)
{
	static const struct ui_heat_geom none;
	const struct ui_pane_heat_data *hs = ui_pane_data(ui, &ui_pane_heat);

	return hs != NULL ? &hs->geom : &none;
}

/* The matrix the pane shows: a packed batch's whole (its sums of Tq_b
 * and Tk_b), else the problem's. */
static const struct problem *
ui_pane_heat_problem(const struct ui *ui)
{
	return ui->vl.nseq > 0 ? UI_BUILT(ui) : UI_PROBLEM(ui);
}

/* The summary's progress, for the pooled picture's cache. */
static int
ui_pane_heat_bands(const struct ui *ui)
{
	int b, n = 0;

	if (ui->vl.nseq == 0)
		return ui->heat.bands_done;
	for (b = 0; b < ui->vl.nseq && ui->vl.heat_ok; b++)
		n += ui->vl.heat[b].bands_done;
	return n;
}

/*
 * Entries per screen cell along an axis of n entries shown in avail
 * cells: a multiple of the summary's cell g, lined up with the tile when
 * a near value does (it divides the tile or the tile divides it).
 */
static int
ui_pane_heat_pool(int n, int avail, int tile, int g)
{
	int need, f;

	if (avail < 1)
		avail = 1;
	need = (n + avail - 1) / avail;
	if (need < g)
		need = g;
	for (f = need; f <= 2 * need + tile; f++)
		if (f % g == 0 && (tile % f == 0 || f % tile == 0))
			return f;
	return (need + g - 1) / g * g;
}

/* The geometry for a pane of w x h cells at (x, y). */
static void
ui_pane_heat_geom(const struct ui *ui, int x, int y, int w, int h,
    struct ui_heat_geom *gm)
{
	const struct problem *p = ui_pane_heat_problem(ui);
	const struct schedule *s = sim_schedule(ui->sim);
	int lw = ui_digits(p->tq - 1) + 1, gw = w - lw - 1;
	int gh = h - 2, budget, gy = 1, gx = 1;

	if (ui->heat_ok) {
		gy = ui->heat.gy;
		gx = ui->heat.gx;
	}
	gm->fy = ui_pane_heat_pool(p->tq, gh, s->br, gy);
	gm->ny = (p->tq + gm->fy - 1) / gm->fy;
	/* A small matrix in a tall pane: several lines per row, leaving
	 * room for the legend. */
	gm->sy = gm->fy == 1 ? (gh - 4) / p->tq : 1;
	gm->sy = gm->sy < 1 ? 1 : gm->sy > 3 ? 3 : gm->sy;
	/* Square on screen: a cell is about twice as tall as wide. */
	budget = (int)ceil(2.0 * gm->ny * gm->sy * p->tk / p->tq);
	if (budget > gw)
		budget = gw;
	if (budget < 1)
		budget = 1;
	gm->fx = ui_pane_heat_pool(p->tk, budget, s->bc, gx);
	gm->nx = (p->tk + gm->fx - 1) / gm->fx;
	gm->sx = budget / gm->nx;
	gm->sx = gm->sx < 1 ? 1 : gm->sx > 2 * gm->sy ? 2 * gm->sy : gm->sx;
	gm->x0 = x + lw + 1;
	gm->y0 = y + 2;
}

static void
ui_pane_heat_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	struct ui_heat_geom gm;

	ui_pane_heat_geom(ui, 0, 0, w, h, &gm);
	*minh = 4;
	*wanth = gm.ny * gm.sy + 2;
	*wantw = gm.x0 + gm.nx * gm.sx + 1;
}

/* How the tiles under a screen cell stand at the current step. */
enum ui_pane_heat_state { HEAT_NEVER, HEAT_SKIPPED, HEAT_DONE, HEAT_PENDING,
    HEAT_CURRENT };

/* Where the current segment stands, as the heatmap marks it. */
struct ui_heat_cursor {
	const struct schedule *s;	/* whose steps say done or ahead */
	long step;			/* steps after it are ahead */
	int i0, i1, j0, j1;		/* the current tiles, inclusive */
	int c0, c1;			/* the keys marked above the grid */
	int focus_row;
	/* c0, c1 and focus_row are rows and keys of the matrix shown (a
	 * packed batch's); the tiles are the current sequence's. */
};

static void
ui_pane_heat_cursor(const struct ui *ui, struct ui_heat_cursor *cu)
{
	const struct schedule_tile *t;

	switch (ui_kind(ui)) {
	case TIMELINE_COMBINE: {
		const struct combine_view *v = ui_comb_view(ui);

		cu->s = sim_schedule(ui->sim);
		cu->step = cu->s->nsteps;	/* the forward is done */
		cu->i0 = cu->i1 = v->block;
		cu->j0 = 0;
		cu->j1 = cu->s->tc - 1;
		cu->c0 = cu->c1 = 0;
		cu->focus_row = v->r0 + ui->focus;
		return;
	}
	case TIMELINE_BACKWARD:
		cu->s = backward_schedule(ui->line.bwd);
		cu->step = ui_bwd_view(ui)->step;
		t = &ui_bwd_view(ui)->tile;
		break;
	default:
		cu->s = sim_schedule(ui->sim);
		cu->step = sim_view(ui->sim)->step;
		t = &sim_view(ui->sim)->tile;
		break;
	}
	cu->i0 = cu->i1 = t->i;
	cu->j0 = cu->j1 = t->j;
	cu->c0 = t->c0;
	cu->c1 = t->c1;
	cu->focus_row = t->r0 + ui->focus;
	if (ui->vl.nseq > 0) {
		cu->c0 += UI_BUILT(ui)->cu_k[ui->vl.seq];
		cu->c1 += UI_BUILT(ui)->cu_k[ui->vl.seq];
		cu->focus_row += UI_BUILT(ui)->cu_q[ui->vl.seq];
	}
}

/*
 * A row block's visible key blocks are [jbegin, jend), and both never
 * decrease with i (the band moves right as the rows go down).  So among
 * the cell's row blocks i0 .. i1 the last with a visible tile in key
 * blocks j0 .. j1 is the last whose jbegin <= j1, when its jend > j0;
 * and in both loop orders the cell's tile visited last is that row
 * block's last visible one in the cell, (i, min(j1, jend[i] - 1)): fa2
 * orders steps by (i, j), fa1 by (j, i), and no later row block of the
 * cell reaches that key block.  A few look-ups tell a cell's state,
 * however many tiles a pooled cell covers (millions in a large
 * problem).
 */
static enum ui_pane_heat_state
ui_pane_heat_tiles(const struct ui_heat_cursor *cu, int r0, int r1, int c0,
    int c1)
{
	const struct schedule *s = cu->s;
	int i0 = r0 / s->br, i1 = (r1 - 1) / s->br, j0 = c0 / s->bc;
	int j1 = (c1 - 1) / s->bc, i, jv;

	if (cu->i1 >= i0 && cu->i0 <= i1 && cu->j1 >= j0 && cu->j0 <= j1)
		return HEAT_CURRENT;
	for (i = i1; i > i0 && s->jbegin[i] > j1; i--)
		;
	if (s->jbegin[i] > j1 || s->jend[i] <= j0)
		return HEAT_SKIPPED;
	jv = j1 < s->jend[i] - 1 ? j1 : s->jend[i] - 1;
	return schedule_step_of(s, i, jv) > cu->step ? HEAT_PENDING : HEAT_DONE;
}

/*
 * A packed batch's cell: the diagonal blocks it covers, each in its own
 * sequence's tiles (the current sequence's by the cursor, earlier ones
 * all done, later ones all ahead), the most telling state of them; none
 * covered (rows and keys of different sequences): never computed.
 */
static enum ui_pane_heat_state
ui_pane_heat_packed(const struct ui *ui, const struct ui_heat_cursor *cu,
    int r0, int r1, int c0, int c1)
{
	const struct problem *p = UI_BUILT(ui);
	struct ui_heat_cursor other;
	enum ui_pane_heat_state best = HEAT_NEVER, st;
	int b, q0, q1, k0, k1;

	for (b = 0; b < p->nseq; b++) {
		q0 = r0 > p->cu_q[b] ? r0 : p->cu_q[b];
		q1 = r1 < p->cu_q[b + 1] ? r1 : p->cu_q[b + 1];
		k0 = c0 > p->cu_k[b] ? c0 : p->cu_k[b];
		k1 = c1 < p->cu_k[b + 1] ? c1 : p->cu_k[b + 1];
		if (q0 >= q1 || k0 >= k1)
			continue;
		q0 -= p->cu_q[b];
		q1 -= p->cu_q[b];
		k0 -= p->cu_k[b];
		k1 -= p->cu_k[b];
		if (b == ui->vl.seq)
			st = ui_pane_heat_tiles(cu, q0, q1, k0, k1);
		else {
			other.s = sim_schedule(ui->vl.sims[b]);
			other.step = b < ui->vl.seq ? other.s->nsteps : -1;
			other.i0 = other.i1 = other.j0 = other.j1 = -1;
			st = ui_pane_heat_tiles(&other, q0, q1, k0, k1);
		}
		if (st > best)
			best = st;
	}
	return best;
}

/* Does the mask hide every entry of rows [r0, r1) by keys [c0, c1)?
 * The keys the rows see between them are one interval (mask_rule_keys). */
static int
ui_pane_heat_hidden(const struct problem *p, int r0, int r1, int c0, int c1)
{
	long lo, hi;

	mask_rule_keys(problem_mask(p, 0), r0, r1 - 1, p->tq, p->tk, &lo, &hi);
	return lo > hi || hi < c0 || lo > c1 - 1;
}

/*
 * Which of the summary's two maxima serves the mask: the causal one
 * (keys right of the diagonal left out) when the mask's right edge is
 * the diagonal, else the one over every key.  A window's left edge is
 * the view's (ui_pane_heat_hidden): a cell wholly left of the band is
 * blank, and a pooled cell the edge crosses shows the max of all its
 * entries in the band's rows (exact when every cell is one entry).
 */
static int
ui_pane_heat_summary(const struct problem *p)
{
	return mask_rule_hides(problem_mask(p, 0)) &&
	    problem_mask(p, 0).right == 0;
}

/*
 * The max of each screen cell, pooled from the summary once per pooling,
 * mask and summary progress: redrawing after a key then costs a look-up
 * per cell.  Returns the ny x nx values (-inf: nothing visible; NaN: not
 * computed yet), or NULL without memory.
 */
static const float *
ui_pane_heat_pooled(struct ui *ui, struct ui_pane_heat_data *hs,
    const struct ui_heat_geom *gm)
{
	const struct problem *p = ui_pane_heat_problem(ui);
	struct mask_rule m = problem_mask(p, 0);
	int causal = ui_pane_heat_summary(p), bands = ui_pane_heat_bands(ui);
	float *pool;
	int a, b, r0, r1, c0, c1, known;

	if (hs->pool != NULL && hs->ny == gm->ny && hs->nx == gm->nx &&
	    hs->fy == gm->fy && hs->fx == gm->fx &&
	    memcmp(&hs->mask, &m, sizeof m) == 0 &&
	    hs->heat_gen == ui->heat_gen && hs->bands == bands)
		return hs->pool;
	pool = realloc(hs->pool, (size_t)gm->ny * gm->nx * sizeof *pool);
	if (pool == NULL)
		return NULL;
	hs->pool = pool;
	for (a = 0; a < gm->ny; a++) {
		r0 = a * gm->fy;
		r1 = r0 + gm->fy < p->tq ? r0 + gm->fy : p->tq;
		for (b = 0; b < gm->nx; b++) {
			c0 = b * gm->fx;
			c1 = c0 + gm->fx < p->tk ? c0 + gm->fx : p->tk;
			if (ui->vl.nseq > 0) {
				pool[(size_t)a * gm->nx + b] = ui_varlen_heat_max(ui,
				    causal, r0, r1, c0, c1);
				continue;
			}
			pool[(size_t)a * gm->nx + b] = heatmap_max(&ui->heat, causal,
			    r0, r1, c0, c1, &known);
			if (!known)
				pool[(size_t)a * gm->nx + b] = NAN;
			else if (ui_pane_heat_hidden(p, r0, r1, c0, c1))
				pool[(size_t)a * gm->nx + b] = -INFINITY;
		}
	}
	hs->ny = gm->ny;
	hs->nx = gm->nx;
	hs->fy = gm->fy;
	hs->fx = gm->fx;
	hs->mask = m;
	hs->heat_gen = ui->heat_gen;
	hs->bands = bands;
	return pool;
}

static void
ui_pane_heat_legend(struct ui *ui, struct ui_grid *g, int x, int y, int w)
{
	const struct ui_glyphs *gl = ui->gl;
	int i, n = 0;

	for (i = 0; i < UI_HEAT_LEVELS; i++)
		n += ui_grid_text(g, x + n, y, w - n, UI_ROLE_HEAT0 + i, gl->heat[i]);
	ui_grid_printf(g, x + n, y, w - n, UI_ROLE_LABEL, " low%shigh", gl->arrow);
	n = ui_grid_text(g, x, y + 1, w, UI_ROLE_HEAT2, gl->heat[2]);
	ui_grid_mods(g, x, y + 1, UI_MOD_CURRENT);
	n += ui_grid_text(g, x + n, y + 1, w - n, UI_ROLE_LABEL, " now ");
	n += ui_grid_text(g, x + n, y + 1, w - n, UI_ROLE_HEAT2, gl->heat[2]);
	ui_grid_mods(g, x + n - 1, y + 1, UI_MOD_PENDING);
	n += ui_grid_text(g, x + n, y + 1, w - n, UI_ROLE_LABEL, " ahead ");
	n += ui_grid_text(g, x + n, y + 1, w - n, UI_ROLE_TILE_SKIPPED,
	    gl->skipped);
	ui_grid_text(g, x + n, y + 1, w - n, UI_ROLE_LABEL, " skip");
}

/* The window's band in keys of row r, under the legend. */
static void
ui_pane_heat_rules(struct ui *ui, struct ui_grid *g, int x, int y, int w)
{
	const struct problem *p = UI_PROBLEM(ui);
	const struct mask_rule mr = problem_mask(p, 0), *m = &mr;
	char lo[32], hi[32];
	int n;

	if (ui->vl.nseq > 0) {
		/* The never-computed mark first, where a narrow pane still
		 * shows it; each sequence's band is its own (Tk_b - Tq_b). */
		n = ui_grid_text(g, x, y, w, UI_ROLE_DIM, ui->gl->never);
		ui_grid_printf(g, x + n, y, w - n, UI_ROLE_LABEL, " never: %d seqs "
		    "packed%s", ui->vl.nseq, mask_rule_hides(*m) ?
		    "; masks bottom-right in each" : "");
		return;
	}
	if (mask_rule_has(*m, MASK_WINDOW)) {
		if (m->left >= 0)
			snprintf(lo, sizeof lo, "r%+d", p->tk - p->tq - m->left);
		else
			snprintf(lo, sizeof lo, "0");
		if (m->right >= 0)
			snprintf(hi, sizeof hi, "r%+d", p->tk - p->tq + m->right);
		else
			snprintf(hi, sizeof hi, "%d", p->tk - 1);
		/* "r+0" reads better as "r". */
		if (strcmp(lo, "r+0") == 0)
			lo[1] = '\0';
		if (strcmp(hi, "r+0") == 0)
			hi[1] = '\0';
		ui_grid_printf(g, x, y, w, UI_ROLE_LABEL, "band: row r sees keys "
		    "%s..%s", lo, hi);
	}
}

/* Does the problem bend its scores (a softcap or ALiBi)?  Then the map
 * shows x = scale Q K^T, before they are bent, and says so. */
static int
ui_pane_heat_bends(const struct problem *p)
{
	return mask_rule_has(p->mask, MASK_SOFTCAP) || p->alibi != NULL;
}

/*
 * A packed batch's boundaries: a tick left of the grid on the line of
 * each sequence's first row, and one below the grid under each
 * sequence's first key (the rows of a pooled cell that holds the
 * boundary), where nothing else is drawn.
 */
static void
ui_pane_heat_bounds(struct ui *ui, struct ui_grid *g, struct ui_rect r,
    const struct ui_heat_geom *gm)
{
	const struct problem *p = UI_BUILT(ui);
	int b, a, y = gm->y0 + gm->ny * gm->sy;

	for (b = 1; b < p->nseq; b++) {
		a = p->cu_q[b] / gm->fy;
		if (a < gm->ny)
			ui_grid_text(g, gm->x0 - 1, gm->y0 + a * gm->sy, 1,
			    UI_ROLE_LABEL, ui->gl->hline);
		a = p->cu_k[b] / gm->fx;
		if (a < gm->nx && y < r.y + r.h)
			ui_grid_text(g, gm->x0 + a * gm->sx, y, 1, UI_ROLE_LABEL,
			    ui->gl->vline);
	}
}

/* How much of the summary is computed, in percent. */
static int
ui_pane_heat_percent(const struct ui *ui)
{
	int b, done = 0, all = 0;

	if (ui->vl.nseq == 0)
		return heatmap_complete(&ui->heat) ? 100 :
		    100 * ui->heat.bands_done / ui->heat.ny;
	for (b = 0; b < ui->vl.nseq; b++) {
		done += ui->vl.heat[b].bands_done;
		all += ui->vl.heat[b].ny;
	}
	return done >= all ? 100 : (int)(100L * done / all);
}

/* Is row r the first of a tile (in a packed batch: of its sequence's)? */
static int
ui_pane_heat_tile_row(const struct ui *ui, int r, int br)
{
	int b;

	if (ui->vl.nseq == 0)
		return r % br == 0;
	b = ui_varlen_seq_of_row(ui, r);
	return b >= 0 && (r - UI_BUILT(ui)->cu_q[b]) % br == 0;
}

static void
ui_pane_heat_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct problem *p = ui_pane_heat_problem(ui);
	const struct schedule *s = sim_schedule(ui->sim);
	const struct ui_glyphs *gl = ui->gl;
	struct ui_pane_heat_data *hs = ui_pane_data(ui, &ui_pane_heat);
	struct ui_heat_geom *gm;
	struct ui_heat_cursor cu;
	enum ui_pane_heat_state st;
	const float *pool;
	float lo, hi, m;
	int a, b, r0, r1, c0, c1, x, y, level, focus_row, n, lw;
	char buf[32];

	if (hs == NULL) {
		ui_grid_text(g, r.x, r.y, r.w, UI_ROLE_ERROR, "heatmap: out of "
		    "memory");
		return;
	}
	gm = &hs->geom;
	ui_pane_heat_geom(ui, r.x, r.y, r.w, r.h, gm);
	if (gm->ny * gm->sy > r.h - 2)
		gm->ny = (r.h - 2) / gm->sy;
	if (gm->nx * gm->sx > r.x + r.w - gm->x0)
		gm->nx = (r.x + r.w - gm->x0) / gm->sx;
	lw = gm->x0 - r.x - 1;

	n = ui_grid_printf(g, r.x, r.y, r.w, UI_ROLE_TITLE, "%s %d%s%d",
	    ui_pane_heat_bends(p) ? "x" : "S", p->tq, gl->times, p->tk);
	if (gm->fy > 1 || gm->fx > 1)
		ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_LABEL,
		    " pooled %d%s%d", gm->fy, gl->times, gm->fx);
	else if (p->scores_mode)
		ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_LABEL, " given");
	else
		ui_grid_printf(g, r.x + n, r.y, r.w - n, UI_ROLE_LABEL,
		    " = scale%sQK%s", gl->dot, gl->transp);

	if (ui->vl.nseq > 0 ? !ui->vl.heat_ok : !ui->heat_ok) {
		ui_grid_text(g, r.x, r.y + 2, r.w, UI_ROLE_DIM, "(no heatmap)");
		return;
	}
	lo = ui_pane_heat_summary(p) ? ui->heat.lo_causal : ui->heat.lo_all;
	hi = ui_pane_heat_summary(p) ? ui->heat.hi_causal : ui->heat.hi_all;
	if (ui->vl.nseq > 0)
		ui_varlen_heat_range(ui, ui_pane_heat_summary(p), &lo, &hi);
	pool = ui_pane_heat_pooled(ui, hs, gm);
	if (pool == NULL) {
		ui_grid_text(g, r.x, r.y + 2, r.w, UI_ROLE_DIM, "(out of memory)");
		return;
	}

	/* A paged cache's page starts, ticked above the grid where a page
	 * spans two cells or more (denser ticks would mark every cell);
	 * the current tile's marks go over them. */
	if (p->paged.page_size >= 2 * gm->fx)
		for (b = 0; b < gm->nx; b++)
			if ((b * gm->fx) % p->paged.page_size < gm->fx)
				ui_grid_text(g, gm->x0 + b * gm->sx, r.y + 1, 1,
				    UI_ROLE_DIM, gl->vline);
	/* The current tile's keys, marked above the grid. */
	ui_pane_heat_cursor(ui, &cu);
	for (b = 0; b < gm->nx; b++) {
		c0 = b * gm->fx;
		c1 = c0 + gm->fx;
		if (c0 < cu.c1 && c1 > cu.c0)
			for (x = 0; x < gm->sx; x++)
				ui_grid_text(g, gm->x0 + b * gm->sx + x, r.y + 1, 1,
				    UI_ROLE_TILE_CURRENT, gl->colmark);
	}

	focus_row = cu.focus_row;
	for (a = 0; a < gm->ny * gm->sy; a++) {
		y = gm->y0 + a;
		r0 = a / gm->sy * gm->fy;
		r1 = r0 + gm->fy < p->tq ? r0 + gm->fy : p->tq;
		/* Labels where a tile starts, not on every line. */
		if (a % gm->sy == 0 && ui_pane_heat_tile_row(ui, r0, s->br) &&
		    (gm->fy < s->br || a % 4 == 0)) {
			snprintf(buf, sizeof buf, "%*d", lw - 1, r0);
			ui_grid_text(g, r.x, y, lw - 1, UI_ROLE_LABEL, buf);
		}
		if (a % gm->sy == 0 && focus_row >= r0 && focus_row < r1)
			ui_grid_text(g, r.x + lw - 1, y, 1, UI_ROLE_FOCUS, gl->focus);
		for (b = 0; b < gm->nx; b++) {
			c0 = b * gm->fx;
			c1 = c0 + gm->fx < p->tk ? c0 + gm->fx : p->tk;
			st = ui->vl.nseq > 0 ? ui_pane_heat_packed(ui, &cu, r0, r1,
			    c0, c1) : ui_pane_heat_tiles(&cu, r0, r1, c0, c1);
			m = pool[(size_t)(a / gm->sy) * gm->nx + b];
			x = gm->x0 + b * gm->sx;
			if (st == HEAT_NEVER) {
				for (n = 0; n < gm->sx; n++)
					ui_grid_text(g, x + n, y, 1, UI_ROLE_DIM,
					    gl->never);
				continue;
			}
			if (st == HEAT_SKIPPED) {
				for (n = 0; n < gm->sx; n++)
					ui_grid_text(g, x + n, y, 1,
					    UI_ROLE_TILE_SKIPPED, gl->skipped);
				continue;
			}
			for (n = 0; n < gm->sx; n++) {
				if (isnan(m))
					ui_grid_text(g, x + n, y, 1, UI_ROLE_DIM,
					    gl->unknown);
				else if (isinf(m) && m < 0)
					ui_grid_text(g, x + n, y, 1, UI_ROLE_MASKED,
					    gl->masked);
				else {
					level = hi > lo ? (int)((m - lo) / (hi - lo) *
					    UI_HEAT_LEVELS) : UI_HEAT_LEVELS / 2;
					if (level >= UI_HEAT_LEVELS)
						level = UI_HEAT_LEVELS - 1;
					if (level < 0)
						level = 0;
					ui_grid_text(g, x + n, y, 1,
					    UI_ROLE_HEAT0 + level, gl->heat[level]);
				}
				if (st == HEAT_CURRENT)
					ui_grid_mods(g, x + n, y, UI_MOD_CURRENT);
				else if (st == HEAT_PENDING)
					ui_grid_mods(g, x + n, y, UI_MOD_PENDING);
			}
		}
	}
	if (ui->vl.nseq > 0)
		ui_pane_heat_bounds(ui, g, r, gm);
	y = gm->y0 + gm->ny * gm->sy + 1;
	if (ui_pane_heat_percent(ui) < 100 && y < r.y + r.h)
		ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_DIM, "computing S: %d%%",
		    ui_pane_heat_percent(ui));
	if (y + 1 < r.y + r.h)
		ui_pane_heat_legend(ui, g, r.x, y, r.w);
	if (y + 2 < r.y + r.h && isfinite(lo))
		ui_grid_printf(g, r.x, y + 2, r.w, UI_ROLE_LABEL, "%s %s %.4g..%.4g",
		    ui_pane_heat_bends(p) ? "x" : "S",
		    gm->fy > 1 || gm->fx > 1 ? "max" : "in", (double)lo, (double)hi);
	if (y + 3 < r.y + r.h)
		ui_pane_heat_rules(ui, g, r.x, y + 3, r.w);
}

/* A click on a packed batch's entry (row, col): its sequence's tile, or
 * why there is none. */
static int
ui_pane_heat_key_packed(struct ui *ui, int row, int col)
{
	const struct problem *p = UI_BUILT(ui);
	int bq = ui_varlen_seq_of_row(ui, row), bk = ui_varlen_seq_of_key(ui, col);
	const struct schedule *s;
	char what[80];
	long step;
	int i, j;

	if (bq != bk) {
		ui_message(ui, UI_ROLE_MESSAGE, "rows of sequence %d, keys of "
		    "sequence %d: never computed (no tile crosses a boundary)",
		    bq + 1, bk + 1);
		return UI_HANDLED;
	}
	s = sim_schedule(ui->vl.sims[bq]);
	i = (row - p->cu_q[bq]) / s->br;
	j = (col - p->cu_k[bq]) / s->bc;
	step = schedule_step_of(s, i, j);
	if (step < 0) {
		ui_message(ui, UI_ROLE_MESSAGE, "sequence %d's tile (%d,%d) is "
		    "skipped by the mask (%s)", bq + 1, i, j,
		    mask_describe(problem_mask(&ui->vl.seqs[bq], 0), 0, what,
		    sizeof what));
		return UI_HANDLED;
	}
	ui_goto(ui, timeline_first(ui->line.tl, bq) + step);
	return UI_HANDLED;
}

/* A click on the grid goes to the tile under it (the middle of a pooled
 * cell). */
static int
ui_pane_heat_key(struct ui *ui, const struct ui_key *k, struct ui_rect r)
{
	const struct problem *p = ui_pane_heat_problem(ui);
	const struct schedule *s = sim_schedule(ui->sim);
	const struct ui_heat_geom *gm = ui_pane_heat_last(ui);
	struct timeline_pos pos;
	int a = k->y - gm->y0, b, row, col, i, j;
	long step;

	(void)r;
	if (k->x < gm->x0 || a < 0 || a >= gm->ny * gm->sy)
		return UI_HANDLED;
	a /= gm->sy;
	if (a >= gm->ny)
		return UI_HANDLED;
	b = (k->x - gm->x0) / gm->sx;
	if (b >= gm->nx)
		return UI_HANDLED;
	row = a * gm->fy + gm->fy / 2;
	col = b * gm->fx + gm->fx / 2;
	row = row < p->tq ? row : p->tq - 1;
	col = col < p->tk ? col : p->tk - 1;
	if (ui->vl.nseq > 0)
		return ui_pane_heat_key_packed(ui, row, col);
	i = row / s->br;
	j = col / s->bc;
	if (schedule_step_of(s, i, j) < 0) {
		char what[80];

		ui_message(ui, UI_ROLE_MESSAGE, "tile (%d,%d) is skipped by the "
		    "mask (%s): it sees no key there", i, j,
		    mask_describe(problem_mask(p, 0), 0, what, sizeof what));
		return UI_HANDLED;
	}
	/* The tile in the segment shown: its step there, or in the
	 * combine its row block's first merge. */
	ui_position(ui, &pos);
	switch (ui_kind(ui)) {
	case TIMELINE_COMBINE:
		step = (long)i * combine_merges(ui->line.comb);
		break;
	case TIMELINE_BACKWARD:
		step = schedule_step_of(backward_schedule(ui->line.bwd), i, j);
		break;
	default:
		step = schedule_step_of(s, i, j);
		break;
	}
	ui_goto(ui, timeline_first(ui->line.tl, pos.seg) + step);
	return UI_HANDLED;
}

const struct ui_pane ui_pane_heat = {
	.name = "heatmap",
	.init = ui_pane_heat_init,
	.free = ui_pane_heat_free,
	.size = ui_pane_heat_size,
	.draw = ui_pane_heat_draw,
	.handle_key = ui_pane_heat_key,
};
