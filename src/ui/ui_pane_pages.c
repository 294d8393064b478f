/*
 * ui_pane_pages.c - the paged KV cache beside the tile (--page-size P):
 * where the current key tile's keys live.  Keys [c0, c1) of the tile are
 * logical pages c0 / P .. (c1 - 1) / P; the page table sends each to a
 * physical page of the pool, and the tile reads one contiguous run per
 * page it touches (paged_runs), where contiguous K/V reads one.  The
 * pane says so in its first lines, then draws the page table (logical
 * page b over physical page table[b]) and the pool (physical page over
 * the logical page it holds, "-" when free), the tile's pages marked
 * "*" and highlighted in both.  In the forward under split-KV it adds
 * the key range the tile belongs to; in the backward the tile is the
 * key block the backward holds on chip.  The combine reads no K or V:
 * the pane is not in its stack.
 *
 * A pool of hundreds of pages wraps into bands (a line of numbers over
 * a line of numbers); when the bands do not all fit, the table shows a
 * window around the tile's logical pages and the pool the bands that
 * hold the pages read, with the entries left out counted at the end of
 * each section's first line ("+N->").  Nothing here computes a slot: it
 * is all paged_page and paged_runs (model/paged.h).
 */
#include "config.h"

#include "ui_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct ui_pane ui_pane_pages;	/* at the end */

/* Columns of a band's label ("table b", "holds b"). */
#define UI_PAGES_LW 8

/* The pane's own: the first band of the table's window, kept so the
 * window moves as little as it can from step to step. */
struct ui_pane_pages_data {
	int table_first;
};

static void *
ui_pane_pages_init(struct ui *ui)
{
	(void)ui;
	return calloc(1, sizeof(struct ui_pane_pages_data));
}

static void
ui_pane_pages_free(void *data)
{
	free(data);
}

/* Is the problem paged: the pane is in the forward's and backward's
 * stacks only then. */
static int
ui_pane_pages_shown(const struct ui *ui)
{
	return UI_PROBLEM(ui)->paged.page_size > 0;
}

/* The key tile the current step reads: the forward's tile, or the
 * backward's key block.  Returns 0 in the combine (no K/V read). */
static int
ui_pane_pages_tile(const struct ui *ui, struct schedule_tile *t)
{
	switch (ui_kind(ui)) {
	case TIMELINE_FORWARD:
		*t = sim_view(ui->sim)->tile;
		return 1;
	case TIMELINE_BACKWARD:
		*t = ui_bwd_view(ui)->tile;
		return 1;
	default:
		return 0;
	}
}

/* Width of one entry: a marker column and the widest page number. */
static int
ui_pane_pages_cw(const struct paged_cache *pc)
{
	int most = pc->pool > pc->pages ? pc->pool : pc->pages;

	return 2 + ui_digits(most > 0 ? most - 1 : 0);
}

/* Entries a band holds in w columns, leaving reserve for a cut mark. */
static int
ui_pane_pages_per_band(const struct paged_cache *pc, int w, int reserve)
{
	int n = (w - UI_PAGES_LW - reserve) / ui_pane_pages_cw(pc);

	return n < 1 ? 1 : n;
}

/* Lines above the bands: the tile's runs, its keys by page, the table's
 * origin, and under split-KV the tile's key range. */
static int
ui_pane_pages_head_lines(const struct ui *ui)
{
	return 3 + (ui_kind(ui) == TIMELINE_FORWARD &&
	    sim_schedule(ui->sim)->splits > 1);
}

static void
ui_pane_pages_size(const struct ui *ui, int w, int h, int *minh, int *wanth,
    int *wantw)
{
	const struct paged_cache *pc = &UI_PROBLEM(ui)->paged;
	int per;

	(void)h;
	*minh = 1;
	*wantw = w;
	if (pc->page_size <= 0) {
		*wanth = 1;
		return;
	}
	per = ui_pane_pages_per_band(pc, w, 0);
	*wanth = ui_pane_pages_head_lines(ui) + 2 * ((pc->pages + per - 1) /
	    per + (pc->pool + per - 1) / per);
}

/* "keys 4-5 in page 3, 6-7 in page 1": which keys of [c0, c1) sit in
 * which physical page, one run each. */
static void
ui_pane_pages_runs(const struct paged_cache *pc, int c0, int c1, char *buf,
    size_t len)
{
	size_t n;
	int c, end;

	n = (size_t)snprintf(buf, len, "%s", c1 - c0 == 1 ? "key " : "keys ");
	for (c = c0; c < c1 && n < len; c = end) {
		end = (c / pc->page_size + 1) * pc->page_size;
		if (end > c1)
			end = c1;
		if (end - c == 1)
			n += (size_t)snprintf(buf + n, len - n, "%s%d in page %d",
			    c > c0 ? ", " : "", c, paged_page(pc, c));
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%d-%d in page %d",
			    c > c0 ? ", " : "", c, end - 1, paged_page(pc, c));
	}
}

/* Does the tile [c0, c1) read physical page phys? */
static int
ui_pane_pages_reads(const struct paged_cache *pc, int c0, int c1, int phys)
{
	int b;

	for (b = c0 / pc->page_size; c1 > c0 && b <= (c1 - 1) / pc->page_size;
	    b++)
		if (pc->table[b] == phys)
			return 1;
	return 0;
}

/*
 * One band: its label and first line of numbers (top[e]) over the
 * second (bottom[e], -1 drawn as "-"), entries [e0, e1), the marked ones
 * highlighted with a "*" before them.
 */
static void
ui_pane_pages_band(struct ui_grid *g, int x, int y, int cw,
    const char *label_top, const char *label_bottom, const int *top,
    const int *bottom, const unsigned char *mark, int e0, int e1, int lines)
{
	char b[24];
	int e, cx, role;

	ui_grid_text(g, x, y, UI_PAGES_LW, UI_ROLE_LABEL, label_top);
	if (lines > 1)
		ui_grid_text(g, x, y + 1, UI_PAGES_LW, UI_ROLE_LABEL, label_bottom);
	for (e = e0; e < e1; e++) {
		cx = x + UI_PAGES_LW + (e - e0) * cw;
		role = mark[e] ? UI_ROLE_TILE_CURRENT : UI_ROLE_NORMAL;
		snprintf(b, sizeof b, "%s%*d", mark[e] ? "*" : " ", cw - 2,
		    top != NULL ? top[e] : e);
		ui_grid_text(g, cx + 1, y, cw - 1, role, b);
		if (lines < 2)
			continue;
		if (bottom[e] < 0)
			snprintf(b, sizeof b, " %*s", cw - 2, "-");
		else
			snprintf(b, sizeof b, "%s%*d", mark[e] ? "*" : " ", cw - 2,
			    bottom[e]);
		ui_grid_text(g, cx + 1, y + 1, cw - 1, bottom[e] < 0 ? UI_ROLE_DIM :
		    role, b);
	}
}

/* The pool's bands to show, nb of them out of n (per entries each):
 * first those holding the pages the tile reads, in page order, then
 * their neighbours; into show[] (n flags).  Returns the entries left
 * out. */
static int
ui_pane_pages_pool_window(const struct paged_cache *pc, const unsigned char
    *read, int per, int n, int nb, unsigned char *show)
{
	int band, chosen = 0, dist, hidden = pc->pool;

	memset(show, 0, (size_t)n);
	for (band = 0; band < n && chosen < nb; band++) {
		int e, e1 = (band + 1) * per < pc->pool ? (band + 1) * per :
		    pc->pool;

		for (e = band * per; e < e1; e++)
			if (read[e]) {
				show[band] = 1;
				chosen++;
				break;
			}
	}
	for (dist = 1; dist < n && chosen < nb; dist++)
		for (band = 0; band < n && chosen < nb; band++)
			if (!show[band] && ((band >= dist && show[band - dist] == 1) ||
			    (band + dist < n && show[band + dist] == 1))) {
				show[band] = 2;		/* a neighbour: 2, not grown from */
				chosen++;
			}
	for (band = 0; band < n; band++)
		if (show[band])
			hidden -= ((band + 1) * per < pc->pool ? (band + 1) * per :
			    pc->pool) - band * per;
	return hidden;
}

static void
ui_pane_pages_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	const struct problem *p = UI_PROBLEM(ui);
	const struct paged_cache *pc = &p->paged;
	const struct schedule *sc = sim_schedule(ui->sim);
	struct ui_pane_pages_data *ps = ui_pane_data(ui, &ui_pane_pages);
	struct schedule_tile t;
	int *held = NULL;
	unsigned char *in_tile = NULL, *read = NULL, *show = NULL;
	char buf[512], mark[32];
	int y = r.y, per, cw, tb, pb, nb, ta, pa, b0, b1, first, band, e, wanth;
	int markw, hidden, drawn, minh, wantw, head, lw;
	long runs;

	if (ps == NULL || pc->page_size <= 0 || !ui_pane_pages_tile(ui, &t)) {
		ui_grid_text(g, r.x, r.y, r.w, UI_ROLE_DIM, ps == NULL ?
		    "pages: out of memory" : "pages: nothing read from K/V here");
		return;
	}
	runs = paged_runs(pc, t.c0, t.c1);
	ui_grid_printf(g, r.x, y++, r.w, UI_ROLE_TITLE, "paged K/V P=%d: %s "
	    "%d-%d read in %ld run%s (contiguous: 1)", pc->page_size,
	    ui_kind(ui) == TIMELINE_BACKWARD ? "key block" : "keys", t.c0,
	    t.c1 - 1, runs, runs == 1 ? "" : "s");
	ui_pane_pages_size(ui, r.w, r.h, &minh, &wanth, &wantw);
	if (y < r.y + r.h) {
		ui_pane_pages_runs(pc, t.c0, t.c1, buf, sizeof buf);
		ui_grid_fit(g, r.x, y++, r.w, UI_ROLE_NORMAL, buf, ui->gl->ellipsis);
	}
	if (y < r.y + r.h && sc->splits > 1 && ui_kind(ui) == TIMELINE_FORWARD) {
		int j0, j1, j, c1, c, srun = 0;

		schedule_split_range(sc, t.i, t.split, &j0, &j1);
		c1 = j1 * sc->bc < sc->tk ? j1 * sc->bc : sc->tk;
		for (j = j0; j < j1; j++)
			srun += (int)paged_runs(pc, j * sc->bc, (j + 1) * sc->bc < c1 ?
			    (j + 1) * sc->bc : c1);
		/* The range's pages in key order: each page once. */
		snprintf(buf, sizeof buf, "key range %d of %d: keys %d-%d, %d "
		    "run%s over its %d tile%s; pages", t.split, sc->splits,
		    j0 * sc->bc, c1 - 1, srun, srun == 1 ? "" : "s", j1 - j0,
		    j1 - j0 == 1 ? "" : "s");
		for (c = j0 * sc->bc; c < c1; c = (c / pc->page_size + 1) *
		    pc->page_size)
			snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " %d",
			    paged_page(pc, c));
		ui_grid_fit(g, r.x, y++, r.w, UI_ROLE_NORMAL, buf, ui->gl->ellipsis);
	}
	if (y < r.y + r.h) {
		if (ui->opts.spec.block_table != NULL)
			snprintf(buf, sizeof buf, "table from %s: %d logical pages "
			    "in a pool of %d", ui->opts.spec.block_table, pc->pages,
			    pc->pool);
		else
			snprintf(buf, sizeof buf, "table shuffled from seed %llu: %d "
			    "logical pages in a pool of %d",
			    (unsigned long long)ui->opts.spec.seed, pc->pages, pc->pool);
		ui_grid_fit(g, r.x, y++, r.w, UI_ROLE_LABEL, buf, ui->gl->ellipsis);
	}
	head = y - r.y;
	drawn = head;
	nb = (r.y + r.h - y) / 2;
	if (nb < 1)
		goto marks;

	/* Bands: all of them when they fit, else windows with marks. */
	cw = ui_pane_pages_cw(pc);
	per = ui_pane_pages_per_band(pc, r.w, 0);
	tb = (pc->pages + per - 1) / per;
	pb = (pc->pool + per - 1) / per;
	if (tb + pb > nb) {
		snprintf(mark, sizeof mark, " +%d%s", pc->pool, ui->gl->arrow);
		markw = ui_grid_width(mark) + 1;	/* and a blank before it */
		per = ui_pane_pages_per_band(pc, r.w, markw);
		tb = (pc->pages + per - 1) / per;
		pb = (pc->pool + per - 1) / per;
	}
	ta = tb < (nb + 1) / 2 ? tb : (nb + 1) / 2;
	pa = pb < nb - ta ? pb : nb - ta;
	ta = tb < nb - pa ? tb : nb - pa;

	held = malloc((size_t)pc->pool * sizeof *held);
	in_tile = calloc((size_t)pc->pages, 1);
	read = calloc((size_t)pc->pool, 1);
	show = calloc((size_t)pb, 1);
	if (held == NULL || in_tile == NULL || read == NULL || show == NULL) {
		ui_grid_text(g, r.x, y, r.w, UI_ROLE_ERROR, "pages: out of memory");
		goto done;
	}
	for (e = 0; e < pc->pool; e++)
		held[e] = -1;
	for (e = 0; e < pc->pages; e++)
		held[pc->table[e]] = e;
	b0 = t.c0 / pc->page_size;
	b1 = t.c1 > t.c0 ? (t.c1 - 1) / pc->page_size : b0;
	for (e = b0; e <= b1 && e < pc->pages; e++)
		in_tile[e] = 1;
	for (e = 0; e < pc->pool; e++)
		read[e] = (unsigned char)ui_pane_pages_reads(pc, t.c0, t.c1, e);

	/* The table: a window of bands from the one holding the tile's
	 * first logical page, its last too when they fit. */
	if (ta > 0) {
		first = ui_pane_tile_window(ps->table_first, b0 / per, tb, ta);
		if (b1 / per >= first + ta && b1 / per - b0 / per < ta)
			first = b1 / per - ta + 1;
		ps->table_first = first;
		lw = y;
		for (band = first; band < first + ta; band++, y += 2) {
			int e1 = (band + 1) * per < pc->pages ? (band + 1) * per :
			    pc->pages;

			ui_pane_pages_band(g, r.x, y, cw, "table b", "",
			    NULL, pc->table, in_tile, band * per, e1, 2);
			ui_grid_text(g, r.x + 2, y + 1, UI_PAGES_LW - 2, UI_ROLE_LABEL,
			    ui->gl->arrow);
		}
		band = (first + ta) * per < pc->pages ? (first + ta) * per :
		    pc->pages;
		hidden = pc->pages - (band - first * per);
		ui_pane_cut_mark(ui, g, (struct ui_rect){ r.x, lw, r.w, 1 }, 0, 0,
		    hidden);
		drawn += 2 * ta;
	}
	if (pa > 0) {
		hidden = pa < pb ? ui_pane_pages_pool_window(pc, read, per, pb, pa,
		    show) : 0;
		if (pa >= pb)
			memset(show, 1, (size_t)pb);
		lw = y;
		for (band = 0; band < pb; band++) {
			int e1 = (band + 1) * per < pc->pool ? (band + 1) * per :
			    pc->pool;

			if (!show[band])
				continue;
			ui_pane_pages_band(g, r.x, y, cw, "pool p", "holds b",
			    NULL, held, read, band * per, e1, 2);
			y += 2;
		}
		ui_pane_cut_mark(ui, g, (struct ui_rect){ r.x, lw, r.w, 1 }, 0, 0,
		    hidden);
		drawn += 2 * pa;
	}
done:
	free(held);
	free(in_tile);
	free(read);
	free(show);
marks:
	/* No band had room: the lines left out, on the title line (the
	 * bands' sections mark their own). */
	if (nb < 1 && wanth > drawn)
		ui_pane_cut_mark(ui, g, r, 0, wanth - drawn, 0);
}

const struct ui_pane ui_pane_pages = {
	.name = "pages",
	.init = ui_pane_pages_init,
	.free = ui_pane_pages_free,
	.shown = ui_pane_pages_shown,
	.size = ui_pane_pages_size,
	.draw = ui_pane_pages_draw,
};
