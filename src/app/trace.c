/* trace.c - the text, CSV and JSONL step writers (see trace.h). */
#include "config.h"

#include "trace.h"
#include "model/mask.h"

#include <math.h>
#include <string.h>

void
trace_number(FILE *f, float x, int quoted)
{
	const char *q = quoted ? "\"" : "";

	if (isnan(x))
		fprintf(f, "%snan%s", q, q);
	else if (isinf(x))
		fprintf(f, "%s%sinf%s", q, x < 0 ? "-" : "", q);
	else
		fprintf(f, "%.9g", (double)x);
}

int
trace_step(const struct sim_view *v, void *ctx)
{
	struct trace *t = ctx;

	t->format->step(t, v);
	return ferror(t->f) ? -1 : 0;
}

int
trace_merge(const struct combine_view *v, void *ctx)
{
	struct trace *t = ctx;

	if (t->format->merge != NULL)
		t->format->merge(t, v);
	return ferror(t->f) ? -1 : 0;
}

/* A merge operand in words: "empty", "partial 2", "slot 0". */
static const char *
trace_operand(struct combine_operand x, char *buf, size_t len)
{
	if (x.source == COMBINE_EMPTY)
		snprintf(buf, len, "empty");
	else
		snprintf(buf, len, "%s %d", x.source == COMBINE_PARTIAL ?
		    "partial" : "slot", x.index);
	return buf;
}

int
trace_backward_step(const struct backward_view *v, void *ctx)
{
	struct trace *t = ctx;

	t->format->backward_step(t, v);
	return ferror(t->f) ? -1 : 0;
}

/* The length of one row of w numbers (0 when w = 0): the backward's
 * summary of a gradient row. */
static float
row_norm(const float *x, int w)
{
	double sum = 0.0;
	int i;

	for (i = 0; i < w; i++)
		sum += (double)x[i] * x[i];
	return (float)sqrt(sum);
}

/* ---- JSON Lines ---- */

/* A JSON string: quotes, backslashes and control characters escaped. */
static void
json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void
json_array(FILE *f, const char *key, const float *x, int n)
{
	int i;

	fprintf(f, ",\"%s\":[", key);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		trace_number(f, x[i], 1);
	}
	fputc(']', f);
}

static void
json_matrix(FILE *f, const char *key, const float *x, int rows, int cols)
{
	int r, c;

	fprintf(f, ",\"%s\":[", key);
	for (r = 0; r < rows; r++) {
		fputs(r ? ",[" : "[", f);
		for (c = 0; c < cols; c++) {
			if (c)
				fputc(',', f);
			trace_number(f, x[(size_t)r * cols + c], 1);
		}
		fputc(']', f);
	}
	fputc(']', f);
}

static void
jsonl_begin(struct trace *t)
{
	const struct problem *p = sim_problem(t->sim);
	const struct schedule *s = sim_schedule(t->sim);
	const struct online_rule *r = sim_rule(t->sim);
	int h;

	fprintf(t->f, "{\"type\":\"problem\",\"tq\":%d,\"tk\":%d,\"d\":%d,"
	    "\"dv\":%d,\"br\":%d,\"bc\":%d,\"tr\":%d,\"tc\":%d,\"order\":\"%s\","
	    "\"causal\":%s,\"scale\":", p->tq, p->tk, p->d, p->dv, s->br, s->bc,
	    s->tr, s->tc, schedule_order_name(s->order),
	    p->causal ? "true" : "false");
	trace_number(t->f, p->scale, 1);
	fprintf(t->f, ",\"convention\":\"%s\",\"bug\":\"%s\",\"dtype\":\"%s\","
	    "\"steps\":%ld,\"scores\":%s,\"acc\":\"%s\",\"input\":",
	    online_convention_name(r->convention), online_bug_name(r->bug),
	    dtype_name(p->dtype), s->nsteps, p->scores_mode ? "true" : "false",
	    r->convention == CONV_UNNORMALIZED ? "u" : "o");
	json_string(t->f, p->source);
	/* The score rules (mask_rule.h): the window, the cap (0: none), a
	 * slope per head (empty: no ALiBi), the mask bug. */
	fprintf(t->f, ",\"window\":[%d,%d],\"softcap\":",
	    problem_mask(p, 0).window ? problem_mask(p, 0).left : -1,
	    problem_mask(p, 0).window ? problem_mask(p, 0).right : -1);
	trace_number(t->f, p->mask.softcap, 1);
	fputs(",\"alibi\":[", t->f);
	for (h = 0; p->alibi != NULL && h < s->heads; h++) {
		if (h > 0)
			fputc(',', t->f);
		trace_number(t->f, p->alibi[h], 1);
	}
	fprintf(t->f, "],\"mask_bug\":\"%s\"", mask_bug_name(r->mask_bug));
	/* Dropout: p (0: none), the seed and the offset its keep bits come
	 * from, so a reader regenerates them (mask_rule_keep). */
	fputs(",\"dropout\":", t->f);
	trace_number(t->f, p->mask.dropout, 1);
	fprintf(t->f, ",\"dropout_seed\":%llu,\"dropout_offset\":%u",
	    (unsigned long long)p->mask.seed_lo |
	    (unsigned long long)p->mask.seed_hi << 32,
	    (unsigned)p->mask.drop_offset);
	if (p->paged.page_size > 0)
		fprintf(t->f, ",\"page_size\":%d", p->paged.page_size);
	fprintf(t->f, ",\"heads\":%d,\"kv_heads\":%d,\"pack_gqa\":%s,"
	    "\"splits\":%d", s->heads, s->kv_heads, s->pack ? "true" : "false",
	    s->splits);
	if (t->combine != NULL)
		fprintf(t->f, ",\"partials\":\"%s\",\"merge_order\":\"%s\","
		    "\"merge_bug\":\"%s\",\"merges\":%ld",
		    combine_form_name(s->partials),
		    combine_order_name(combine_rule(t->combine)->order),
		    combine_bug_name(combine_rule(t->combine)->bug),
		    combine_steps(t->combine));
	if (t->batch != NULL)
		fprintf(t->f, ",\"seq\":%d,\"nseq\":%d,\"q0\":%d,\"k0\":%d",
		    t->seq, t->batch->nseq, t->batch->cu_q[t->seq],
		    t->batch->cu_k[t->seq]);
	fputs("}\n", t->f);
}

/* With packed heads, the row of O each row of [r0, r1) stands for. */
static void
json_out_rows(struct trace *t, int r0, int r1)
{
	const struct schedule *s = sim_schedule(t->sim);
	int r;

	if (!s->pack)
		return;
	fputs(",\"out\":[", t->f);
	for (r = r0; r < r1; r++)
		fprintf(t->f, "%s%d", r > r0 ? "," : "", schedule_row_out(s, r));
	fputc(']', t->f);
}

/* Paged: the physical page of each page of the tile's keys, in key
 * order (paged.h). */
static void
json_pages(struct trace *t, const struct schedule_tile *tile)
{
	const struct paged_cache *pc = &sim_problem(t->sim)->paged;
	long c;

	if (pc->page_size <= 0 || tile->c1 <= tile->c0)
		return;
	fputs(",\"pages\":[", t->f);
	for (c = tile->c0; c < tile->c1; c = (c / pc->page_size + 1) *
	    pc->page_size)
		fprintf(t->f, "%s%d", c > tile->c0 ? "," : "", paged_page(pc, c));
	fputc(']', t->f);
}

static void
jsonl_step(struct trace *t, const struct sim_view *v)
{
	const struct schedule_tile *tile = &v->tile;
	FILE *f = t->f;

	fprintf(f, "{\"type\":\"step\",\"step\":%ld,\"i\":%d,\"j\":%d,"
	    "\"rows\":[%d,%d],\"cols\":[%d,%d]", v->step, tile->i, tile->j,
	    tile->r0, tile->r1, tile->c0, tile->c1);
	if (t->batch != NULL)
		fprintf(f, ",\"seq\":%d", t->seq);
	if (sim_schedule(t->sim)->splits > 1)
		fprintf(f, ",\"split\":%d", tile->split);
	json_out_rows(t, tile->r0, tile->r1);
	json_pages(t, tile);
	json_array(f, "m_old", v->m_old, v->rows);
	json_array(f, "m_new", v->m_new, v->rows);
	json_array(f, "alpha", v->alpha, v->rows);
	json_array(f, "l_old", v->l_old, v->rows);
	json_array(f, "l_new", v->l_new, v->rows);
	json_array(f, "rowmax", v->rowmax, v->rows);
	if (t->with_tiles) {
		json_matrix(f, "s", v->s, v->rows, v->cols);
		json_matrix(f, "p", v->p, v->rows, v->cols);
	}
	if (t->with_acc) {
		json_matrix(f, "acc_old", v->acc_old, v->rows, v->dv);
		json_matrix(f, "acc_new", v->acc_new, v->rows, v->dv);
	}
	fprintf(f, ",\"finalize\":%s,\"hbm_read\":%llu,\"hbm_write\":%llu,"
	    "\"flops\":%llu}\n", tile->last_in_row ? "true" : "false",
	    (unsigned long long)v->traffic.hbm_read,
	    (unsigned long long)v->traffic.hbm_write,
	    (unsigned long long)v->traffic.flops);
}

static void
jsonl_merge(struct trace *t, const struct combine_view *v)
{
	FILE *f = t->f;
	char a[32], b[32];

	fprintf(f, "{\"type\":\"merge\",\"merge\":%ld,\"i\":%d,\"op\":%d,"
	    "\"rows\":[%d,%d]", v->step, v->block, v->merge, v->r0, v->r1);
	if (t->batch != NULL)
		fprintf(f, ",\"seq\":%d", t->seq);
	json_out_rows(t, v->r0, v->r1);
	fprintf(f, ",\"dst\":%d,\"a\":\"%s\",\"b\":\"%s\"", v->op.dst,
	    trace_operand(v->op.a, a, sizeof a), trace_operand(v->op.b, b, sizeof b));
	json_array(f, "m_a", v->m_a, v->rows);
	json_array(f, "l_a", v->l_a, v->rows);
	json_array(f, "m_b", v->m_b, v->rows);
	json_array(f, "l_b", v->l_b, v->rows);
	json_array(f, "m", v->m, v->rows);
	json_array(f, "w_a", v->w_a, v->rows);
	json_array(f, "w_b", v->w_b, v->rows);
	json_array(f, "l", v->l, v->rows);
	if (t->with_acc) {
		json_matrix(f, "u_a", v->u_a, v->rows, v->dv);
		json_matrix(f, "u_b", v->u_b, v->rows, v->dv);
		json_matrix(f, "u", v->u, v->rows, v->dv);
	}
	fprintf(f, ",\"finalize\":%s", v->last ? "true" : "false");
	if (v->last)
		json_array(f, "lse", v->lse, v->rows);
	fprintf(f, ",\"hbm_read\":%llu,\"hbm_write\":%llu}\n",
	    (unsigned long long)v->traffic.hbm_read,
	    (unsigned long long)v->traffic.hbm_write);
}

static void
jsonl_end(struct trace *t, const float *o, const float *lse)
{
	const struct problem *p = sim_problem(t->sim);

	fputs("{\"type\":\"output\"", t->f);
	if (t->batch != NULL)
		fprintf(t->f, ",\"seq\":%d", t->seq);
	json_matrix(t->f, "o", o, problem_rows(p), p->dv);
	json_array(t->f, "lse", lse, problem_rows(p));
	fputs("}\n", t->f);
}

/* The norms of n rows of width w, as a JSON array. */
static void
json_norms(FILE *f, const char *key, const float *x, int n, int w)
{
	int r;

	fprintf(f, ",\"%s\":[", key);
	for (r = 0; r < n; r++) {
		if (r)
			fputc(',', f);
		trace_number(f, row_norm(x + (size_t)r * w, w), 1);
	}
	fputc(']', f);
}

static void
jsonl_backward_begin(struct trace *t, const float *o, const float *lse)
{
	const struct schedule *s = backward_schedule(t->bwd);

	jsonl_begin(t);
	jsonl_end(t, o, lse);
	fprintf(t->f, "{\"type\":\"backward\",\"steps\":%ld,\"first\":%ld,"
	    "\"tr\":%d,\"tc\":%d,\"grad_bug\":\"%s\",\"grad_output\":",
	    s->nsteps, t->bwd_first, s->tr, s->tc,
	    backward_bug_name(backward_bug(t->bwd)));
	json_string(t->f, t->grad_output);
	json_array(t->f, "D", backward_dsum(t->bwd), s->tq);
	fputs("}\n", t->f);
}

static void
jsonl_backward_step(struct trace *t, const struct backward_view *v)
{
	const struct schedule_tile *tile = &v->tile;
	FILE *f = t->f;

	fprintf(f, "{\"type\":\"backward_step\",\"step\":%ld,"
	    "\"timeline_step\":%ld,\"i\":%d,\"j\":%d,\"rows\":[%d,%d],"
	    "\"cols\":[%d,%d]", v->step, t->bwd_first + v->step, tile->i,
	    tile->j, tile->r0, tile->r1, tile->c0, tile->c1);
	json_array(f, "lse", v->lse, v->rows);
	json_array(f, "D", v->dsum, v->rows);
	json_norms(f, "dq_norm", v->dq_new, v->rows, v->d);
	json_norms(f, "dk_norm", v->dk_new, v->cols, v->d);
	json_norms(f, "dv_norm", v->dv_new, v->cols, v->dv);
	if (t->with_tiles) {
		json_matrix(f, "s", v->s, v->rows, v->cols);
		json_matrix(f, "p", v->p, v->rows, v->cols);
		json_matrix(f, "dp", v->dp, v->rows, v->cols);
		json_matrix(f, "ds", v->ds, v->rows, v->cols);
	}
	if (t->with_acc) {
		json_matrix(f, "dq_old", v->dq_old, v->rows, v->d);
		json_matrix(f, "dq_new", v->dq_new, v->rows, v->d);
		json_matrix(f, "dk_old", v->dk_old, v->cols, v->d);
		json_matrix(f, "dk_new", v->dk_new, v->cols, v->d);
		json_matrix(f, "dv_old", v->dv_old, v->cols, v->dv);
		json_matrix(f, "dv_new", v->dv_new, v->cols, v->dv);
	}
	fprintf(f, ",\"dq_final\":%s,\"write\":%s,\"hbm_read\":%llu,"
	    "\"hbm_write\":%llu,\"flops\":%llu}\n",
	    tile->last_in_row ? "true" : "false",
	    v->last_in_key ? "true" : "false",
	    (unsigned long long)v->traffic.hbm_read,
	    (unsigned long long)v->traffic.hbm_write,
	    (unsigned long long)v->traffic.flops);
}

static void
jsonl_backward_end(struct trace *t, const struct backward_grads *g)
{
	const struct problem *p = backward_problem(t->bwd);

	fputs("{\"type\":\"gradients\"", t->f);
	if (p->scores_mode)
		json_matrix(t->f, "ds", g->ds, p->tq, p->tk);
	else {
		json_matrix(t->f, "dq", g->dq, p->tq, p->d);
		json_matrix(t->f, "dk", g->dk, p->tk, p->d);
	}
	json_matrix(t->f, "dv", g->dv, p->tk, p->dv);
	fputs("}\n", t->f);
}

/* ---- CSV: one line per row of each step; no output section ---- */

static void
csv_begin(struct trace *t)
{
	const struct schedule *s = sim_schedule(t->sim);
	int c, x, dv = sim_problem(t->sim)->dv;

	/* A packed batch: one header, a column for the sequence. */
	if (t->batch != NULL && t->seq > 0)
		return;
	if (t->batch != NULL)
		fputs("seq,", t->f);
	fputs(s->splits > 1 ? "step,i,j,split,row,c0,c1,m_old,m_new,alpha,l_old,"
	    "l_new,rowmax" : "step,i,j,row,c0,c1,m_old,m_new,alpha,l_old,l_new,"
	    "rowmax", t->f);
	if (t->with_tiles) {
		for (c = 0; c < s->bc; c++)
			fprintf(t->f, ",s%d", c);
		for (c = 0; c < s->bc; c++)
			fprintf(t->f, ",p%d", c);
	}
	if (t->with_acc) {
		for (x = 0; x < dv; x++)
			fprintf(t->f, ",acc_old%d", x);
		for (x = 0; x < dv; x++)
			fprintf(t->f, ",acc_new%d", x);
	}
	fputc('\n', t->f);
}

/* n numbers, then empty cells up to width (a ragged tile's columns). */
static void
csv_cells(FILE *f, const float *x, int n, int width)
{
	int c;

	for (c = 0; c < width; c++) {
		fputc(',', f);
		if (c < n)
			trace_number(f, x[c], 0);
	}
}

static void
csv_step(struct trace *t, const struct sim_view *v)
{
	const struct schedule_tile *tile = &v->tile;
	int r, bc = sim_schedule(t->sim)->bc;

	for (r = 0; r < v->rows; r++) {
		if (t->batch != NULL)
			fprintf(t->f, "%d,", t->seq);
		fprintf(t->f, "%ld,%d,%d", v->step, tile->i, tile->j);
		if (sim_schedule(t->sim)->splits > 1)
			fprintf(t->f, ",%d", tile->split);
		fprintf(t->f, ",%d,%d,%d", tile->r0 + r, tile->c0, tile->c1);
		csv_cells(t->f, v->m_old + r, 1, 1);
		csv_cells(t->f, v->m_new + r, 1, 1);
		csv_cells(t->f, v->alpha + r, 1, 1);
		csv_cells(t->f, v->l_old + r, 1, 1);
		csv_cells(t->f, v->l_new + r, 1, 1);
		csv_cells(t->f, v->rowmax + r, 1, 1);
		if (t->with_tiles) {
			csv_cells(t->f, v->s + (size_t)r * v->cols, v->cols, bc);
			csv_cells(t->f, v->p + (size_t)r * v->cols, v->cols, bc);
		}
		if (t->with_acc) {
			csv_cells(t->f, v->acc_old + (size_t)r * v->dv, v->dv, v->dv);
			csv_cells(t->f, v->acc_new + (size_t)r * v->dv, v->dv, v->dv);
		}
		fputc('\n', t->f);
	}
}

static void
csv_end(struct trace *t, const float *o, const float *lse)
{
	(void)t;
	(void)o;
	(void)lse;
}

/*
 * The backward: one line per query row of the tile ("q", with lse, D and
 * the norm of its dQ row) and one per key ("k", with the norms of its dK
 * and dV rows), the other kind's cells empty.
 */
static void
csv_backward_begin(struct trace *t, const float *o, const float *lse)
{
	const struct schedule *s = backward_schedule(t->bwd);
	const struct problem *p = backward_problem(t->bwd);
	static const char *tiles[] = { "s", "p", "dp", "ds" };
	int c, x, k;

	(void)o;
	(void)lse;
	fputs("step,timeline_step,i,j,kind,index,lse,D,dq_norm,dk_norm,dv_norm",
	    t->f);
	if (t->with_tiles)
		for (k = 0; k < 4; k++)
			for (c = 0; c < s->bc; c++)
				fprintf(t->f, ",%s%d", tiles[k], c);
	if (t->with_acc) {
		for (x = 0; x < p->d; x++)
			fprintf(t->f, ",dq%d", x);
		for (x = 0; x < p->d; x++)
			fprintf(t->f, ",dk%d", x);
		for (x = 0; x < p->dv; x++)
			fprintf(t->f, ",dv%d", x);
	}
	fputc('\n', t->f);
}

static void
csv_backward_step(struct trace *t, const struct backward_view *v)
{
	const struct schedule_tile *tile = &v->tile;
	int bc = backward_schedule(t->bwd)->bc, r, c;
	float nq, nk, nv;

	for (r = 0; r < v->rows; r++) {
		const size_t at = (size_t)r * v->cols;
		nq = row_norm(v->dq_new + (size_t)r * v->d, v->d);
		fprintf(t->f, "%ld,%ld,%d,%d,q,%d", v->step, t->bwd_first + v->step,
		    tile->i, tile->j, tile->r0 + r);
		csv_cells(t->f, v->lse + r, 1, 1);
		csv_cells(t->f, v->dsum + r, 1, 1);
		csv_cells(t->f, &nq, 1, 1);
		csv_cells(t->f, NULL, 0, 2);
		if (t->with_tiles) {
			csv_cells(t->f, v->s + at, v->cols, bc);
			csv_cells(t->f, v->p + at, v->cols, bc);
			csv_cells(t->f, v->dp + at, v->cols, bc);
			csv_cells(t->f, v->ds + at, v->cols, bc);
		}
		if (t->with_acc) {
			csv_cells(t->f, v->dq_new + (size_t)r * v->d, v->d, v->d);
			csv_cells(t->f, NULL, 0, v->d + v->dv);
		}
		fputc('\n', t->f);
	}
	for (c = 0; c < v->cols; c++) {
		nk = row_norm(v->dk_new + (size_t)c * v->d, v->d);
		nv = row_norm(v->dv_new + (size_t)c * v->dv, v->dv);
		fprintf(t->f, "%ld,%ld,%d,%d,k,%d", v->step, t->bwd_first + v->step,
		    tile->i, tile->j, tile->c0 + c);
		csv_cells(t->f, NULL, 0, 3);
		csv_cells(t->f, &nk, 1, 1);
		csv_cells(t->f, &nv, 1, 1);
		if (t->with_tiles)
			csv_cells(t->f, NULL, 0, 4 * bc);
		if (t->with_acc) {
			csv_cells(t->f, NULL, 0, v->d);
			csv_cells(t->f, v->dk_new + (size_t)c * v->d, v->d, v->d);
			csv_cells(t->f, v->dv_new + (size_t)c * v->dv, v->dv, v->dv);
		}
		fputc('\n', t->f);
	}
}

static void
csv_backward_end(struct trace *t, const struct backward_grads *g)
{
	(void)t;
	(void)g;
}

/* ---- text, for reading ---- */

static void
text_cell(FILE *f, float x)
{
	char buf[32];

	if (isinf(x))
		snprintf(buf, sizeof buf, "%s", x < 0 ? "-inf" : "inf");
	else
		snprintf(buf, sizeof buf, "%.6g", (double)x);
	fprintf(f, " %12s", buf);
}

static void
text_begin(struct trace *t)
{
	const struct problem *p = sim_problem(t->sim);
	const struct schedule *s = sim_schedule(t->sim);
	const struct online_rule *r = sim_rule(t->sim);

	if (t->batch != NULL)
		fprintf(t->f, "%ssequence %d of %d: queries [%d, %d), keys [%d, %d) "
		    "of the packed batch\n", t->seq > 0 ? "\n" : "", t->seq,
		    t->batch->nseq, t->batch->cu_q[t->seq],
		    t->batch->cu_q[t->seq + 1], t->batch->cu_k[t->seq],
		    t->batch->cu_k[t->seq + 1]);
	fprintf(t->f, "problem: Tq=%d Tk=%d d=%d dv=%d scale=%g causal=%s "
	    "order=%s Br=%d Bc=%d convention=%s bug=%s dtype=%s inputs=%s\n"
	    "steps: %ld (Tr=%d x Tc=%d tiles, %ld skipped by the mask)\n",
	    p->tq, p->tk, p->d, p->dv, (double)p->scale, p->causal ? "yes" : "no",
	    schedule_order_name(s->order), s->br, s->bc,
	    online_convention_name(r->convention), online_bug_name(r->bug),
	    dtype_name(p->dtype), p->source, s->nsteps, s->tr, s->tc,
	    (long)s->tr * s->tc - s->nsteps);
	if (problem_beyond_causal(p) || r->mask_bug != MASK_BUG_NONE) {
		char what[128];

		fprintf(t->f, "mask: %s, mask-bug=%s\n", mask_describe(problem_mask(p, 0),
		    p->alibi != NULL, what, sizeof what),
		    mask_bug_name(r->mask_bug));
	}
	if (s->heads > 1)
		fprintf(t->f, "heads: H=%d query heads share G=%d K/V heads%s; "
		    "rows are %s\n", s->heads, s->kv_heads, s->pack ? ", packed" : "",
		    s->pack ? "in packed order (the output below is head after head)" :
		    "head after head");
	if (t->combine != NULL)
		fprintf(t->f, "split: %d key ranges per row block, partials %s, "
		    "then %ld merges (%s, merge bug %s)\n", s->splits,
		    combine_form_name(s->partials), combine_steps(t->combine),
		    combine_order_name(combine_rule(t->combine)->order),
		    combine_bug_name(combine_rule(t->combine)->bug));
}

static void
text_matrix(FILE *f, const char *name, const float *x, int rows, int cols)
{
	int r, c;

	fprintf(f, "  %s:\n", name);
	for (r = 0; r < rows; r++) {
		fputs("   ", f);
		for (c = 0; c < cols; c++)
			text_cell(f, x[(size_t)r * cols + c]);
		fputc('\n', f);
	}
}

static void
text_step(struct trace *t, const struct sim_view *v)
{
	const struct schedule_tile *tile = &v->tile;
	const char *acc = sim_rule(t->sim)->convention == CONV_UNNORMALIZED ?
	    "u" : "o";
	int r;

	char range[48] = "";

	if (sim_schedule(t->sim)->splits > 1)
		snprintf(range, sizeof range, ", range %d%s", tile->split,
		    tile->first_in_split ? " starts" : "");
	if (t->batch != NULL)
		fprintf(t->f, "\nsequence %d", t->seq);
	fprintf(t->f, "%sstep %ld: tile (%d, %d), rows [%d, %d), keys [%d, %d)%s%s\n",
	    t->batch != NULL ? ", " : "\n", v->step, tile->i, tile->j, tile->r0, tile->r1, tile->c0, tile->c1,
	    range, !tile->last_in_split ? "" :
	    sim_schedule(t->sim)->splits > 1 ? ", partial" : ", finalize");
	if (t->with_tiles) {
		text_matrix(t->f, "S", v->s, v->rows, v->cols);
		text_matrix(t->f, "P", v->p, v->rows, v->cols);
	}
	fprintf(t->f, "  %5s %12s %12s %12s %12s %12s\n", "row", "m_old", "m_new",
	    "alpha", "l_old", "l_new");
	for (r = 0; r < v->rows; r++) {
		fprintf(t->f, "  %5d", tile->r0 + r);
		text_cell(t->f, v->m_old[r]);
		text_cell(t->f, v->m_new[r]);
		text_cell(t->f, v->alpha[r]);
		text_cell(t->f, v->l_old[r]);
		text_cell(t->f, v->l_new[r]);
		fputc('\n', t->f);
	}
	if (t->with_acc) {
		char name[16];
		snprintf(name, sizeof name, "%s_new", acc);
		text_matrix(t->f, name, v->acc_new, v->rows, v->dv);
	}
}

static void
text_merge(struct trace *t, const struct combine_view *v)
{
	char a[32], b[32], name[16];
	int r;

	fprintf(t->f, "\nmerge %ld: row block %d, rows [%d, %d): slot %d = %s + "
	    "%s%s\n", v->step, v->block, v->r0, v->r1, v->op.dst,
	    trace_operand(v->op.a, a, sizeof a), trace_operand(v->op.b, b, sizeof b),
	    v->last ? ", finalize" : "");
	fprintf(t->f, "  %5s %12s %12s %12s %12s %12s %12s %12s %12s\n", "row",
	    "m_a", "l_a", "m_b", "l_b", "m", "w_a", "w_b", "l");
	for (r = 0; r < v->rows; r++) {
		fprintf(t->f, "  %5d", v->r0 + r);
		text_cell(t->f, v->m_a[r]);
		text_cell(t->f, v->l_a[r]);
		text_cell(t->f, v->m_b[r]);
		text_cell(t->f, v->l_b[r]);
		text_cell(t->f, v->m[r]);
		text_cell(t->f, v->w_a[r]);
		text_cell(t->f, v->w_b[r]);
		text_cell(t->f, v->l[r]);
		fputc('\n', t->f);
	}
	if (t->with_acc) {
		snprintf(name, sizeof name, "%s",
		    combine_form(t->combine) == MERGE_MLU ? "u" : "o");
		text_matrix(t->f, name, v->u, v->rows, v->dv);
	}
}

static void
text_end(struct trace *t, const float *o, const float *lse)
{
	const struct problem *p = sim_problem(t->sim);
	int r;

	fputs("\noutput:\n", t->f);
	fprintf(t->f, "  %5s %12s  O\n", "row", "lse");
	for (r = 0; r < problem_rows(p); r++) {
		int x;
		fprintf(t->f, "  %5d", r);
		text_cell(t->f, lse[r]);
		fputs(" ", t->f);
		for (x = 0; x < p->dv; x++)
			text_cell(t->f, o[(size_t)r * p->dv + x]);
		fputc('\n', t->f);
	}
}

static void
text_backward_begin(struct trace *t, const float *o, const float *lse)
{
	const struct schedule *s = backward_schedule(t->bwd);

	(void)o;
	(void)lse;
	text_begin(t);
	fprintf(t->f, "backward: key blocks outside, query blocks inside: %ld "
	    "steps (timeline steps %ld-%ld), Tc=%d x Tr=%d tiles, grad_bug=%s, "
	    "dO %s\n", s->nsteps, t->bwd_first, t->bwd_first + s->nsteps - 1,
	    s->tc, s->tr, backward_bug_name(backward_bug(t->bwd)),
	    t->grad_output);
}

static void
text_backward_step(struct trace *t, const struct backward_view *v)
{
	const struct schedule_tile *tile = &v->tile;
	int r, c;

	fprintf(t->f, "\nstep %ld (timeline %ld): tile (%d, %d), rows [%d, %d), "
	    "keys [%d, %d)%s%s\n", v->step, t->bwd_first + v->step, tile->i,
	    tile->j, tile->r0, tile->r1, tile->c0, tile->c1,
	    tile->last_in_row ? ", dQ_i final" : "",
	    v->last_in_key ? ", write dK_j and dV_j" : "");
	if (t->with_tiles) {
		text_matrix(t->f, "S", v->s, v->rows, v->cols);
		text_matrix(t->f, "P", v->p, v->rows, v->cols);
		text_matrix(t->f, "dP", v->dp, v->rows, v->cols);
		text_matrix(t->f, "dS", v->ds, v->rows, v->cols);
	}
	fprintf(t->f, "  %5s %12s %12s %12s\n", "row", "lse", "D", "|dQ row|");
	for (r = 0; r < v->rows; r++) {
		fprintf(t->f, "  %5d", tile->r0 + r);
		text_cell(t->f, v->lse[r]);
		text_cell(t->f, v->dsum[r]);
		text_cell(t->f, row_norm(v->dq_new + (size_t)r * v->d, v->d));
		fputc('\n', t->f);
	}
	fprintf(t->f, "  %5s %12s %12s\n", "key", "|dK row|", "|dV row|");
	for (c = 0; c < v->cols; c++) {
		fprintf(t->f, "  %5d", tile->c0 + c);
		text_cell(t->f, row_norm(v->dk_new + (size_t)c * v->d, v->d));
		text_cell(t->f, row_norm(v->dv_new + (size_t)c * v->dv, v->dv));
		fputc('\n', t->f);
	}
	if (t->with_acc) {
		text_matrix(t->f, "dQ_i", v->dq_new, v->rows, v->d);
		text_matrix(t->f, "dK_j", v->dk_new, v->cols, v->d);
		text_matrix(t->f, "dV_j", v->dv_new, v->cols, v->dv);
	}
}

static void
text_backward_end(struct trace *t, const struct backward_grads *g)
{
	const struct problem *p = backward_problem(t->bwd);

	fputs("\ngradients:\n", t->f);
	if (p->scores_mode)
		text_matrix(t->f, "dS", g->ds, p->tq, p->tk);
	else {
		text_matrix(t->f, "dQ", g->dq, p->tq, p->d);
		text_matrix(t->f, "dK", g->dk, p->tk, p->d);
	}
	text_matrix(t->f, "dV", g->dv, p->tk, p->dv);
}

static const struct trace_format trace_formats[] = {
	{ .name = "text", .begin = text_begin, .step = text_step,
	  .merge = text_merge, .end = text_end,
	  .backward_begin = text_backward_begin,
	  .backward_step = text_backward_step,
	  .backward_end = text_backward_end },
	{ .name = "csv", .begin = csv_begin, .step = csv_step, .end = csv_end,
	  .backward_begin = csv_backward_begin,
	  .backward_step = csv_backward_step,
	  .backward_end = csv_backward_end },
	{ .name = "jsonl", .begin = jsonl_begin, .step = jsonl_step,
	  .merge = jsonl_merge, .end = jsonl_end,
	  .backward_begin = jsonl_backward_begin,
	  .backward_step = jsonl_backward_step,
	  .backward_end = jsonl_backward_end },
};

const struct trace_format *
trace_format_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof trace_formats / sizeof trace_formats[0]; i++)
		if (strcmp(trace_formats[i].name, name) == 0)
			return &trace_formats[i];
	return NULL;
}
