/*
 * ui_pipeline.c - the pipeline viewer (ui_pipeline.h).
 *
 * The screen, top to bottom:
 *   the source and the configuration; the block and the clocks shown
 *   one row per role: its events as spans, a letter per kind (legend
 *     below), the key tile's j inside the span when it fits, the
 *     cursor's event highlighted
 *   the ring at the cursor's time: each stage's K and V, empty, being
 *     filled, full (read by how many consumers) or released (in a warp
 *     recording: filling until every warp's wait for its share ended,
 *     released by how many warps)
 *   the cursor's event in words, and the step of the algorithm it
 *     computes
 *   the keys
 */
#include "config.h"

#include "ui/ui_pipeline.h"

#include <stdio.h>
#include <string.h>

/* Columns of the role names left of the timelines. */
#define UI_PL_LABEL 12

/* A letter per kind: copies by tensor, waits as dots, the GEMMs' issue
 * in lower case and their runs on the tensor core in upper case. */
static const char ui_pl_glyph[PIPELINE_NKINDS] = {
	[PIPELINE_COPY_Q] = 'Q', [PIPELINE_COPY_K] = 'K',
	[PIPELINE_COPY_V] = 'V',
	[PIPELINE_WAIT_EMPTY_Q] = '.', [PIPELINE_WAIT_EMPTY_K] = '.',
	[PIPELINE_WAIT_EMPTY_V] = '.', [PIPELINE_WAIT_FULL_Q] = '.',
	[PIPELINE_WAIT_FULL_K] = '.', [PIPELINE_WAIT_FULL_V] = '.',
	[PIPELINE_WAIT_TURN] = 't',
	[PIPELINE_ISSUE_QK] = 's', [PIPELINE_ISSUE_PV] = 'p',
	[PIPELINE_WAIT_QK] = '-', [PIPELINE_WAIT_PV] = '-',
	[PIPELINE_SOFTMAX] = 'x', [PIPELINE_RESCALE] = 'r',
	[PIPELINE_EPILOGUE] = 'E',
	[PIPELINE_RELEASE_Q] = '|', [PIPELINE_RELEASE_K] = '|',
	[PIPELINE_RELEASE_V] = '|', [PIPELINE_PASS_TURN] = '>',
	[PIPELINE_GEMM_QK] = 'S', [PIPELINE_GEMM_PV] = 'P',
	[PIPELINE_XFER] = '=', [PIPELINE_BARRIER] = '#',
};

/* What the algorithm computes at each kind of event (doc/algorithm.md's
 * steps for tile (i, j)); NULL: the machine's bookkeeping alone. */
static const char *
ui_pl_step(int kind)
{
	switch (kind) {
	case PIPELINE_COPY_Q: return "loads Q_i, the block's rows";
	case PIPELINE_COPY_K: return "loads K_j for S = Q_i K_j^T";
	case PIPELINE_COPY_V: return "loads V_j for O += P V_j";
	case PIPELINE_ISSUE_QK: case PIPELINE_GEMM_QK:
		return "S = Q_i K_j^T (the scores)";
	case PIPELINE_ISSUE_PV: case PIPELINE_GEMM_PV:
		return "O += P V_j (the numerator)";
	case PIPELINE_SOFTMAX:
		return "m_new = max(m, rowmax S); P = exp(S - m_new); "
		    "l = alpha l + rowsum P";
	case PIPELINE_RESCALE: return "O = alpha O (alpha = exp(m_old - m_new))";
	case PIPELINE_EPILOGUE: return "O / l and lse = m + log l, stored";
	case PIPELINE_RELEASE_K: return "K_j read: its stage may be refilled";
	case PIPELINE_RELEASE_V: return "V_j read: its stage may be refilled";
	default: return NULL;
	}
}

static int
ui_pl_block_first(const struct ui_pipeline *v, int cta, size_t *first,
    size_t *end)
{
	size_t x;

	for (x = 0; x < v->nev && v->ev[x].cta != cta; x++)
		;
	if (x == v->nev)
		return -1;
	*first = x;
	for (; x < v->nev && v->ev[x].cta == cta; x++)
		;
	*end = x;
	return 0;
}

void
ui_pipeline_init(struct ui_pipeline *v, const struct pipeline_event *ev,
    size_t nev, const struct pipeline_json_meta *meta)
{
	size_t x;

	memset(v, 0, sizeof *v);
	v->ev = ev;
	v->nev = nev;
	v->meta = meta;
	for (x = 0; x < nev; x++)
		if (ev[x].cta + 1 > v->ncta)
			v->ncta = ev[x].cta + 1;
}

/* The block's first and last clocks. */
static void
ui_pl_span(const struct ui_pipeline *v, size_t first, size_t end,
    double *t0, double *t1)
{
	size_t x;

	*t0 = end > first ? v->ev[first].begin : 0;
	*t1 = *t0;
	for (x = first; x < end; x++) {
		if (v->ev[x].begin < *t0)
			*t0 = v->ev[x].begin;
		if (v->ev[x].end > *t1)
			*t1 = v->ev[x].end;
	}
}

/*
 * A stage's K or V (tensor 1 or 2) at time t, in words into buf.  In a
 * warp recording a copy is every warp's share, landed once every warp's
 * wait for it (wait_kind) ended; else once its copy event ended.
 */
static const char *
ui_pl_slot(const struct ui_pipeline *v, size_t first, size_t end, int stage,
    int copy_kind, int wait_kind, int release_kind, double t, char *buf,
    size_t len)
{
	const struct pipeline_event *last = NULL;
	int consumers = v->meta != NULL ? v->meta->cfg.consumers : 1;
	int released = 0, landed = 0;
	size_t x;

	for (x = first; x < end; x++) {
		const struct pipeline_event *e = &v->ev[x];
		if (e->kind == copy_kind && e->stage == stage && e->begin <= t &&
		    (last == NULL || e->begin > last->begin))
			last = e;
	}
	if (last == NULL) {
		snprintf(buf, len, "empty");
		return buf;
	}
	for (x = first; x < end; x++) {
		const struct pipeline_event *e = &v->ev[x];
		if (e->kind == release_kind && e->stage == stage &&
		    e->round == last->round && e->end <= t)
			released++;
		if (e->kind == wait_kind && e->stage == stage &&
		    e->round == last->round && e->end <= t)
			landed++;
	}
	if (pipeline_json_warps(v->meta) ? landed < consumers : t < last->end)
		snprintf(buf, len, "filling j%d", last->j);
	else if (released < consumers)
		snprintf(buf, len, "full j%d %d/%d", last->j, released,
		    consumers);
	else
		snprintf(buf, len, "free (j%d)", last->j);
	return buf;
}

void
ui_pipeline_draw(const struct ui_pipeline *v, struct ui_grid *g)
{
	const struct ui_rect all = { 0, 0, g->w, g->h };
	const struct pipeline_event *cur = v->cur < v->nev ? &v->ev[v->cur] :
	    NULL;
	const struct pipeline_config *c = v->meta != NULL ? &v->meta->cfg :
	    NULL;
	const int tw = g->w - UI_PL_LABEL;
	size_t first = 0, end = 0, x;
	double t0, t1, lo, per;
	char buf[160], role[32], a[32], b[32];
	int y = 0, r, s, col;

	ui_grid_unclip(g);
	ui_grid_clear(g, all, UI_ROLE_NORMAL);
	ui_grid_printf(g, 0, y++, -1, UI_ROLE_BAR, " pipeline: %s",
	    v->meta != NULL ? v->meta->source : "");
	if (cur == NULL || tw < 8 ||
	    ui_pl_block_first(v, cur->cta, &first, &end) != 0) {
		ui_grid_text(g, 0, y, -1, UI_ROLE_MESSAGE,
		    cur == NULL ? "no events" : "the screen is too narrow");
		return;
	}
	if (c != NULL && pipeline_json_warps(v->meta))
		ui_grid_printf(g, 0, y++, -1, UI_ROLE_LABEL, "mma.sync: d = %d, "
		    "Br = %d, Bc = %d, %d warps, %d K/V buffers (cp.async; a "
		    "barrier releases them)", c->d, c->br, c->bc, c->consumers,
		    c->stages);
	else if (c != NULL)
		ui_grid_printf(g, 0, y++, -1, UI_ROLE_LABEL, "d = %d, Br = %d, "
		    "Bc = %d, %d consumers, %d stages, ping-pong %s",
		    c->d, c->br, c->bc, c->consumers, c->stages,
		    c->pingpong && c->overlap ? "on" : "off");
	ui_pl_span(v, first, end, &t0, &t1);
	per = v->zoom > 0 ? v->zoom : (t1 - t0) / tw;
	if (!(per > 0))
		per = 1;
	/* the window: the whole block, or centred on the cursor */
	lo = v->zoom > 0 ? (cur->begin + cur->end) / 2 - per * tw / 2 : t0;
	if (v->meta != NULL && v->meta->have_sm && cur->cta < PIPELINE_JSON_MAX_SM)
		snprintf(a, sizeof a, ", SM %d", v->meta->sm[cur->cta]);
	else
		a[0] = '\0';
	ui_grid_printf(g, 0, y++, -1, UI_ROLE_NORMAL, "block %d of %d, row "
	    "block %d%s; clocks %.0f to %.0f, %.0f a column", cur->cta + 1,
	    v->ncta, cur->i, a, lo, lo + per * tw, per);
	for (r = 0; r < PIPELINE_NROLES && y < g->h - 6; r++) {
		int any = 0;

		for (x = first; x < end && !any; x++)
			any = v->ev[x].role == r;
		if (!any)
			continue;
		ui_grid_text(g, 0, y, UI_PL_LABEL - 1,
		    r == cur->role ? UI_ROLE_FOCUS : UI_ROLE_LABEL,
		    pipeline_json_role_name(v->meta, r, role, sizeof role));
		for (x = first; x < end; x++) {
			const struct pipeline_event *e = &v->ev[x];
			int c0, c1, k, rl;

			if (e->role != r || e->end < lo || e->begin > lo + per * tw)
				continue;
			c0 = (int)((e->begin - lo) / per);
			c1 = (int)((e->end - lo) / per);
			if (c0 < 0)
				c0 = 0;
			if (c1 >= tw)
				c1 = tw - 1;
			rl = e == cur ? UI_ROLE_TILE_CURRENT : UI_ROLE_NORMAL;
			for (k = c0; k <= c1; k++) {
				char ch[2] = { ui_pl_glyph[e->kind], 0 };
				ui_grid_text(g, UI_PL_LABEL + k, y, 1, rl, ch);
			}
			/* the key tile inside a span that has room */
			if (e->j >= 0 && c1 - c0 >= 3) {
				snprintf(buf, sizeof buf, "%d", e->j);
				if ((int)strlen(buf) <= c1 - c0 - 1)
					ui_grid_text(g, UI_PL_LABEL + c0 + 1, y,
					    c1 - c0 - 1, rl, buf);
			}
		}
		y++;
	}
	/* the ring at the cursor's time */
	y++;
	ui_grid_text(g, 0, y, UI_PL_LABEL, UI_ROLE_LABEL, "ring");
	col = UI_PL_LABEL;
	for (s = 0; c != NULL && s < c->stages && col < g->w; s++) {
		ui_pl_slot(v, first, end, s, PIPELINE_COPY_K,
		    PIPELINE_WAIT_FULL_K, PIPELINE_RELEASE_K, cur->begin, a,
		    sizeof a);
		ui_pl_slot(v, first, end, s, PIPELINE_COPY_V,
		    PIPELINE_WAIT_FULL_V, PIPELINE_RELEASE_V, cur->begin, b,
		    sizeof b);
		snprintf(buf, sizeof buf, "[%d K %s, V %s] ", s, a, b);
		col += ui_grid_text(g, col, y, g->w - col,
		    s == cur->stage ? UI_ROLE_FOCUS : UI_ROLE_NORMAL, buf);
	}
	y += 2;
	ui_grid_printf(g, 0, y++, -1, UI_ROLE_TITLE, "event %zu of %zu: %s, "
	    "%s, tile (%d,%d), stage %d, round %d", v->cur - first + 1,
	    end - first, pipeline_json_role_name(v->meta, cur->role, role,
	    sizeof role),
	    pipeline_kind_name(cur->kind), cur->i, cur->j, cur->stage,
	    cur->round);
	ui_grid_printf(g, 0, y++, -1, UI_ROLE_NORMAL, "clocks %.0f to %.0f "
	    "(%.0f)", cur->begin, cur->end, cur->end - cur->begin);
	if (ui_pl_step(cur->kind) != NULL)
		ui_grid_printf(g, 0, y++, -1, UI_ROLE_PHASE, "the algorithm: %s",
		    ui_pl_step(cur->kind));
	if (pipeline_json_warps(v->meta))
		ui_grid_text(g, 0, g->h - 2, -1, UI_ROLE_DIM, "K V Q copy  "
		    ". wait  # barrier  s QK^T  x softmax  p PV  E epilogue  "
		    "| release");
	else
		ui_grid_text(g, 0, g->h - 2, -1, UI_ROLE_DIM, "K V Q copy  "
		    ". wait  t turn  s p issue  S P tensor core  x softmax  "
		    "r rescale  E epilogue  | release");
	ui_grid_text(g, 0, g->h - 1, -1, UI_ROLE_BAR, " n/p event  N/P same "
	    "role  b/B block  +/- zoom  0 whole block  q quit");
}

int
ui_pipeline_key(struct ui_pipeline *v, int code)
{
	const int done = UI_HANDLED | UI_REDRAW;
	size_t first, end, x;
	int cta;

	if (v->nev == 0)
		return code == 'q' || code == UI_KEY_ESC ? UI_QUIT : 0;
	cta = v->ev[v->cur].cta;
	if (ui_pl_block_first(v, cta, &first, &end) != 0)
		return 0;
	switch (code) {
	case 'q':
	case UI_KEY_ESC:
		return UI_QUIT;
	case 'n':
	case UI_KEY_RIGHT:
		if (v->cur + 1 < end)
			v->cur++;
		return done;
	case 'p':
	case UI_KEY_LEFT:
		if (v->cur > first)
			v->cur--;
		return done;
	case 'N':
		for (x = v->cur + 1; x < end; x++)
			if (v->ev[x].role == v->ev[v->cur].role) {
				v->cur = x;
				break;
			}
		return done;
	case 'P':
		for (x = v->cur; x-- > first;)
			if (v->ev[x].role == v->ev[v->cur].role) {
				v->cur = x;
				break;
			}
		return done;
	case UI_KEY_HOME:
		v->cur = first;
		return done;
	case UI_KEY_END:
		v->cur = end - 1;
		return done;
	case 'b':
	case 'B':
		cta = (cta + (code == 'b' ? 1 : v->ncta - 1)) % v->ncta;
		if (ui_pl_block_first(v, cta, &first, &end) == 0)
			v->cur = first;
		return done;
	case '+':
	case '-': {
		double t0, t1, per;

		ui_pl_span(v, first, end, &t0, &t1);
		/* from the whole block: its clocks over 64 columns */
		per = v->zoom > 0 ? v->zoom : (t1 - t0) / 64;
		if (!(per > 0))
			per = 1;
		per = code == '+' ? per / 2 : per * 2;
		v->zoom = per < 0.25 ? 0.25 : per;
		return done;
	}
	case '0':
		v->zoom = 0;
		return done;
	default:
		return 0;
	}
}

int
ui_pipeline_run(const struct pipeline_event *ev, size_t nev,
    const struct pipeline_json_meta *meta, char *err, size_t errlen)
{
	struct ui_pipeline v;
	struct ui_style st;
	struct ui_grid g;
	struct ui_key k;
	int w, h, rc = 0, got;

	memset(&g, 0, sizeof g);
	ui_pipeline_init(&v, ev, nev, meta);
	if (ui_term_open(&st, err, errlen) != 0)
		return -1;
	for (;;) {
		ui_term_size(&w, &h);
		if (w != g.w || h != g.h) {
			if (ui_grid_resize(&g, w, h, err, errlen) != 0) {
				rc = -1;
				break;
			}
		}
		ui_pipeline_draw(&v, &g);
		ui_term_present(&g);
		got = ui_term_key(-1, &k);
		if (got < 0)
			break;		/* SIGINT or SIGTERM: leave */
		if (got > 0 && (ui_pipeline_key(&v, k.code) & UI_QUIT))
			break;
	}
	ui_grid_free(&g);
	ui_term_close();
	return rc;
}
