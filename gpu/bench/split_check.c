/*
 * split_check.c - the split-KV teaching kernel (gpu/teach_split.cu)
 * against the simulator, per partial, per merge and after the merge,
 * with its two test faults caught where they belong.  A standalone
 * driver until `flashstep compare --splits` takes this over: it links the
 * model's sources and the kernel, no other part of the GPU half.
 *
 *   gcc -std=gnu11 -O2 -ffp-contract=off -I. -Isrc -c (each src/model .c file)
 *   nvcc -gencode arch=compute_90,code=sm_90 -O3 -fmad=false -std=c++17 \
 *       -I. -Isrc -Igpu -c gpu/teach_split.cu
 *   nvcc -o split_check gpu/bench/split_check.c *.o -I. -Isrc -Igpu
 *
 * (config.h from a configured tree.)  Exit 0 when every case agrees and
 * every fault is caught; 1 otherwise.
 *
 * Tolerance, as gpucheck.h's: |gpu - sim| <= 1e-4 + 1e-4 |sim| for m, l,
 * lse; |gpu - sim| <= 1e-4 (|sim| + max |V| (times l for u)) for the
 * accumulator, o and O (2^-10 and 2^-7 for fp16 and bf16).  Both sides
 * add in the same order without fused multiply-adds, so they differ only
 * where CUDA's expf and logf differ from the C library's.
 */
#include "config.h"

#include "model/combine.h"
#include "model/problem.h"
#include "model/sim.h"
#include "teach_split.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct check_case {
	const char *what;
	int tq, tk, d, dv, heads, kv_heads, pack, causal, br, bc, splits;
	enum inputs_kind input;
	enum dtype dtype;
	enum online_convention convention;
	enum merge_form form;
	enum combine_order order;
	enum merge_bug merge_bug;
};

static const struct check_case cases[] = {
	{ "single head, causal, ragged", 37, 53, 16, 12, 1, 1, 0, 1, 8, 8, 3,
	    INPUTS_NORMAL, DTYPE_FP32, CONV_UNNORMALIZED, MERGE_MLU, COMBINE_LTR,
	    MERGE_BUG_NONE },
	{ "Tq > Tk causal, empty ranges", 20, 9, 8, 8, 1, 1, 0, 1, 4, 2, 7,
	    INPUTS_SPIKE, DTYPE_FP32, CONV_UNNORMALIZED, MERGE_OLSE, COMBINE_TREE,
	    MERGE_BUG_NONE },
	{ "normalized convention, reverse", 33, 70, 8, 8, 1, 1, 0, 0, 16, 8, 4,
	    INPUTS_RAMP, DTYPE_FP32, CONV_NORMALIZED, MERGE_MLU, COMBINE_REVERSE,
	    MERGE_BUG_NONE },
	{ "decode: 8 heads on 2, packed", 1, 300, 32, 32, 8, 2, 1, 0, 16, 32, 5,
	    INPUTS_NORMAL, DTYPE_FP32, CONV_UNNORMALIZED, MERGE_OLSE, COMBINE_TREE,
	    MERGE_BUG_NONE },
	{ "3 rows x 6 heads on 3, packed, causal", 3, 90, 16, 16, 6, 3, 1, 1, 4,
	    16, 3, INPUTS_NORMAL, DTYPE_FP32, CONV_UNNORMALIZED, MERGE_MLU,
	    COMBINE_LTR, MERGE_BUG_NONE },
	{ "MQA unpacked, fp16", 2, 128, 64, 64, 4, 1, 0, 0, 2, 16, 4,
	    INPUTS_NORMAL, DTYPE_FP16, CONV_UNNORMALIZED, MERGE_OLSE,
	    COMBINE_LTR, MERGE_BUG_NONE },
	{ "bf16, tree of 6", 16, 96, 32, 32, 1, 1, 0, 0, 8, 16, 6, INPUTS_UNIFORM,
	    DTYPE_BF16, CONV_UNNORMALIZED, MERGE_MLU, COMBINE_TREE, MERGE_BUG_NONE },
	{ "merge bug no-rescale-one, reverse", 8, 64, 8, 8, 1, 1, 0, 0, 8, 8, 4,
	    INPUTS_RAMP, DTYPE_FP32, CONV_UNNORMALIZED, MERGE_MLU, COMBINE_REVERSE,
	    MERGE_BUG_NO_RESCALE_ONE },
	{ "merge bug unweighted", 8, 64, 8, 8, 1, 1, 0, 0, 8, 8, 4, INPUTS_RAMP,
	    DTYPE_FP32, CONV_UNNORMALIZED, MERGE_OLSE, COMBINE_LTR,
	    MERGE_BUG_UNWEIGHTED },
};

/* The simulator's side of one case. */
struct sim_side {
	struct problem p;
	struct sim *sim;
	struct combine *comb;
	float *o, *lse, *merge_m, *merge_l;
};

/* Where gpu and sim disagree most, as a multiple of the tolerance. */
struct worst {
	double ratio;
	long at;
};

static void
worst_init(struct worst *w)
{
	w->ratio = 0.0;
	w->at = -1;
}

/* got against want with tolerance atol + rtol |want|; -inf = -inf. */
static void
worst_add(struct worst *w, const float *got, const float *want, size_t n,
    double atol, double rtol, double scale_abs)
{
	size_t i;
	double tol, d;

	for (i = 0; i < n; i++) {
		if (got[i] == want[i])
			continue;
		tol = atol * (1.0 + scale_abs) + rtol * fabs((double)want[i]);
		d = fabs((double)got[i] - (double)want[i]);
		if (isnan(d))
			d = INFINITY;
		if (d / tol > w->ratio) {
			w->ratio = d / tol;
			w->at = (long)i;
		}
	}
}

static int
record_merge(const struct combine_view *v, void *ctx)
{
	struct sim_side *s = ctx;
	int r, n = combine_merges(s->comb);

	for (r = 0; r < v->rows; r++) {
		s->merge_m[(size_t)(v->r0 + r) * n + v->merge] = v->m[r];
		s->merge_l[(size_t)(v->r0 + r) * n + v->merge] = v->l[r];
	}
	return 0;
}

static int
sim_side_run(const struct check_case *c, struct sim_side *s, char *err,
    size_t errlen)
{
	struct problem_spec spec;
	struct tiling t;
	struct split_plan sp;
	struct online_rule rule;
	struct combine_rule cr;
	size_t rows;

	memset(s, 0, sizeof *s);
	problem_spec_init(&spec);
	spec.tq = c->tq;
	spec.tk = c->tk;
	spec.d = c->d;
	spec.dv = c->dv;
	spec.heads = c->heads;
	spec.kv_heads = c->kv_heads;
	spec.causal = c->causal;
	spec.input = c->input;
	spec.dtype = c->dtype;
	spec.bc = c->bc;
	if (problem_build(&spec, &s->p, err, errlen) != 0)
		return -1;
	t.br = c->br;
	t.bc = c->bc;
	t.order = ORDER_FA2;
	sp.splits = c->splits;
	sp.partials = c->form;
	sp.pack_gqa = c->pack;
	rule.convention = c->convention;
	rule.bug = BUG_NONE;
	cr.order = c->order;
	cr.bug = c->merge_bug;
	if ((s->sim = sim_new_split(&s->p, &t, &sp, &rule, err, errlen)) == NULL ||
	    (s->comb = combine_new(s->sim, &cr, err, errlen)) == NULL)
		return -1;
	rows = (size_t)problem_rows(&s->p);
	s->o = calloc(rows * c->dv, sizeof *s->o);
	s->lse = calloc(rows, sizeof *s->lse);
	s->merge_m = calloc(rows * (size_t)combine_merges(s->comb), sizeof(float));
	s->merge_l = calloc(rows * (size_t)combine_merges(s->comb), sizeof(float));
	if (s->o == NULL || s->lse == NULL || s->merge_m == NULL ||
	    s->merge_l == NULL || sim_run(s->sim, NULL, NULL, NULL, NULL) != 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	combine_run(s->comb, record_merge, s, s->o, s->lse);
	return 0;
}

static void
sim_side_free(struct sim_side *s)
{
	combine_free(s->comb);
	sim_free(s->sim);
	problem_free(&s->p);
	free(s->o);
	free(s->lse);
	free(s->merge_m);
	free(s->merge_l);
}

/* The kernel's job from the simulator's schedule and the case. */
struct gpu_side {
	struct teach_split_job job;
	int *block_rows, *block_kv, *range, *row_out, *row_pos;
	float *pm, *pl, *plse, *pacc, *po, *mm, *ml, *o, *lse;
};

static int
gpu_side_run(const struct check_case *c, const struct sim_side *s,
    unsigned faults, struct gpu_side *g, char *err, size_t errlen)
{
	const struct schedule *sc = sim_schedule(s->sim);
	struct teach_split_job *j = &g->job;
	size_t rows = (size_t)sc->rows, np = rows * sc->splits;
	int i, k, r1;

	memset(g, 0, sizeof *g);
	g->block_rows = calloc((size_t)sc->tr + 1, sizeof(int));
	g->block_kv = calloc((size_t)sc->tr, sizeof(int));
	g->range = calloc((size_t)sc->tr * sc->splits * 2, sizeof(int));
	g->row_out = calloc(rows, sizeof(int));
	g->row_pos = calloc(rows, sizeof(int));
	g->pm = calloc(np, sizeof(float));
	g->pl = calloc(np, sizeof(float));
	g->plse = calloc(np, sizeof(float));
	g->pacc = calloc(np * c->dv, sizeof(float));
	g->po = calloc(np * c->dv, sizeof(float));
	g->mm = calloc(rows * (size_t)combine_merges(s->comb), sizeof(float));
	g->ml = calloc(rows * (size_t)combine_merges(s->comb), sizeof(float));
	g->o = calloc(rows * c->dv, sizeof(float));
	g->lse = calloc(rows, sizeof(float));
	if (g->lse == NULL || g->o == NULL || g->ml == NULL || g->mm == NULL ||
	    g->po == NULL || g->pacc == NULL || g->plse == NULL || g->pl == NULL ||
	    g->pm == NULL || g->row_pos == NULL || g->row_out == NULL ||
	    g->range == NULL || g->block_kv == NULL || g->block_rows == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < sc->tr; i++) {
		schedule_rows(sc, i, &g->block_rows[i], &r1);
		g->block_rows[i + 1] = r1;
		g->block_kv[i] = schedule_kv_head(sc, i);
		for (k = 0; k < sc->splits; k++)
			schedule_split_range(sc, i, k, &g->range[(i * sc->splits + k) * 2],
			    &g->range[(i * sc->splits + k) * 2 + 1]);
	}
	for (i = 0; i < (int)rows; i++) {
		g->row_out[i] = schedule_row_out(sc, i);
		g->row_pos[i] = schedule_row_pos(sc, i);
	}
	j->heads = s->p.heads;
	j->kv_heads = s->p.kv_heads;
	j->tq = s->p.tq;
	j->tk = s->p.tk;
	j->d = s->p.d;
	j->dv = s->p.dv;
	j->scale = s->p.scale;
	j->causal = s->p.causal;
	j->scores = s->p.scores_mode;
	j->dtype = s->p.dtype;
	j->q = s->p.q;
	j->k = s->p.k;
	j->v = s->p.v;
	j->s = s->p.s;
	j->rows = sc->rows;
	j->br = sc->br;
	j->bc = sc->bc;
	j->tr = sc->tr;
	j->splits = sc->splits;
	j->block_rows = g->block_rows;
	j->block_kv = g->block_kv;
	j->range = g->range;
	j->row_out = g->row_out;
	j->row_pos = g->row_pos;
	j->convention = c->convention;
	j->bug = BUG_NONE;
	j->form = c->form;
	j->merge_bug = c->merge_bug;
	j->plan = combine_plan(s->comb);
	j->merges = combine_merges(s->comb);
	for (k = 0; k < j->merges; k++)
		if (j->plan[k].dst + 1 > j->slots)
			j->slots = j->plan[k].dst + 1;
	j->faults = faults;
	j->part_m = g->pm;
	j->part_l = g->pl;
	j->part_lse = g->plse;
	j->part_acc = g->pacc;
	j->part_o = g->po;
	j->merge_m = g->mm;
	j->merge_l = g->ml;
	j->o = g->o;
	j->lse = g->lse;
	return teach_split_run(j, err, errlen);
}

static void
gpu_side_free(struct gpu_side *g)
{
	free(g->block_rows);
	free(g->block_kv);
	free(g->range);
	free(g->row_out);
	free(g->row_pos);
	free(g->pm);
	free(g->pl);
	free(g->plse);
	free(g->pacc);
	free(g->po);
	free(g->mm);
	free(g->ml);
	free(g->o);
	free(g->lse);
}

/* The worst ratios: of the partials and of the merged result. */
static void
compare(const struct check_case *c, const struct sim_side *s,
    const struct gpu_side *g, double *partials, double *merged)
{
	const struct sim_partials *pt = sim_partials(s->sim);
	size_t rows = (size_t)pt->rows, np = rows * pt->splits, e;
	double tol = c->dtype == DTYPE_FP16 ? 0x1p-10 : c->dtype == DTYPE_BF16 ?
	    0x1p-7 : 1e-4, vmax = 0.0;
	struct worst w;
	float *want_acc;

	for (e = 0; e < (size_t)s->p.kv_heads * s->p.tk * s->p.dv; e++)
		vmax = fabs(s->p.v[e]) > vmax ? fabs(s->p.v[e]) : vmax;
	/* the kernel's acc is the state: u, or o when normalized */
	want_acc = c->convention == CONV_UNNORMALIZED ? pt->u : pt->o;
	worst_init(&w);
	worst_add(&w, g->pm, pt->m, np, 1e-4, 1e-4, 0.0);
	worst_add(&w, g->pl, pt->l, np, 1e-4, 1e-4, 0.0);
	worst_add(&w, g->plse, pt->lse, np, 1e-4, 1e-4, 0.0);
	worst_add(&w, g->po, pt->o, np * c->dv, tol, tol, vmax);
	for (e = 0; e < np; e++)
		worst_add(&w, g->pacc + e * c->dv, want_acc + e * c->dv, c->dv, tol,
		    tol, vmax * (c->convention == CONV_UNNORMALIZED ? pt->l[e] : 1));
	*partials = w.ratio;
	worst_init(&w);
	worst_add(&w, g->mm, s->merge_m, rows * combine_merges(s->comb), 1e-4,
	    1e-4, 0.0);
	worst_add(&w, g->ml, s->merge_l, rows * combine_merges(s->comb), 1e-4,
	    1e-4, 0.0);
	worst_add(&w, g->o, s->o, rows * c->dv, tol, tol, vmax);
	worst_add(&w, g->lse, s->lse, rows, 1e-4, 1e-4, 0.0);
	*merged = w.ratio;
}

/* Key blocks in the longest range of the case. */
static int
longest_range(const struct sim_side *s)
{
	const struct schedule *sc = sim_schedule(s->sim);
	int i, k, j0, j1, best = 0;

	for (i = 0; i < sc->tr; i++)
		for (k = 0; k < sc->splits; k++) {
			schedule_split_range(sc, i, k, &j0, &j1);
			best = j1 - j0 > best ? j1 - j0 : best;
		}
	return best;
}

int
main(void)
{
	struct sim_side s;
	struct gpu_side g;
	char err[512];
	double part, merged;
	int n, fault, fails = 0;
	const unsigned faults[3] = { 0, TEACH_SPLIT_FAULT_RESCALE,
	    TEACH_SPLIT_FAULT_MERGE };

	for (n = 0; n < (int)(sizeof cases / sizeof cases[0]); n++) {
		const struct check_case *c = &cases[n];

		if (sim_side_run(c, &s, err, sizeof err) != 0) {
			printf("FAIL %s: simulator: %s\n", c->what, err);
			fails++;
			continue;
		}
		for (fault = 0; fault < 3; fault++) {
			int ok;

			if (gpu_side_run(c, &s, faults[fault], &g, err, sizeof err)) {
				printf("FAIL %s: kernel: %s\n", c->what, err);
				fails++;
				gpu_side_free(&g);
				break;
			}
			compare(c, &s, &g, &part, &merged);
			/* no fault: all within tolerance; the rescale fault
			 * must show in the partials (unless no range has two
			 * tiles: then nothing is ever rescaled); the merge
			 * fault in the merged result only */
			ok = fault == 0 ? part <= 1 && merged <= 1 :
			    fault == 1 ? (longest_range(&s) > 1) == (part > 1) :
			    part <= 1 && merged > 1;
			printf("%s %-40s N=%d %s %s%s%s: partials %.3g, merged %.3g of "
			    "tolerance; %.3f + %.3f ms\n", ok ? "ok  " : "FAIL", c->what,
			    c->splits, combine_form_name(c->form),
			    combine_order_name(c->order), fault == 1 ? ", fault rescale" :
			    fault == 2 ? ", fault merge" : "",
			    c->merge_bug != MERGE_BUG_NONE ? ", merge bug" : "",
			    part, merged, g.job.ms_split, g.job.ms_combine);
			fails += !ok;
			gpu_side_free(&g);
		}
		sim_side_free(&s);
	}
	printf("split_check: %s\n", fails == 0 ? "all agree, every fault caught" :
	    "FAILED");
	return fails == 0 ? 0 : 1;
}
