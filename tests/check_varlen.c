/*
 * check_varlen.c - packed batches (--seqlens: problem.h's nseq, varlen.h):
 * the packed forward equals each sequence run alone bit for bit, it and
 * the double reference agree, so do the backward and the double
 * gradients, a packed batch does no work across sequences (its counters
 * are its sequences' sums, less than one problem over all the rows), and
 * what is not modelled is refused by name.
 */
#include "config.h"

#include "testutil.h"
#include "model/backward.h"
#include "model/gradref.h"
#include "model/reference.h"
#include "model/sim.h"
#include "model/varlen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The masks each case runs under. */
enum { M_NONE, M_CAUSAL, M_WINDOW, M_SOFTCAP, M_ALIBI, M_DROPOUT, NMASK };

static void
spec_mask(struct problem_spec *spec, int mask)
{
	switch (mask) {
	case M_CAUSAL:
		spec->causal = 1;
		break;
	case M_WINDOW:
		spec->window_set = 1;
		spec->window_left = 2;
		spec->window_right = 1;
		break;
	case M_SOFTCAP:
		spec->softcap_set = 1;
		spec->softcap = 2.5;
		break;
	case M_ALIBI:
		spec->alibi_set = 1;
		spec->alibi = 0.25;
		break;
	case M_DROPOUT:
		spec->dropout_set = 1;
		spec->dropout = 0.3;
		spec->dropout_seed = 5;
		break;
	}
}

/* The packed batch the tests build: lengths lq over lk, d = 5, dv = 3,
 * heads query heads over kv_heads K/V heads, normal inputs from seed,
 * the mask. */
static void
packed_spec(struct problem_spec *spec, const char *lq, const char *lk,
    int heads, int kv_heads, uint64_t seed, int mask)
{
	problem_spec_init(spec);
	spec->seqlens_q = lq;
	spec->seqlens_k = lk;
	spec->d = 5;
	spec->dv = 3;
	spec->heads = heads;
	spec->kv_heads = kv_heads;
	spec->input = INPUTS_NORMAL;
	spec->seed = seed;
	spec_mask(spec, mask);
}

static void
build_packed(const char *lq, const char *lk, int mask, struct problem *p)
{
	struct problem_spec spec;
	char err[256];

	packed_spec(&spec, lq, lk, 1, 1, 7, mask);
	ck_assert_msg(problem_build(&spec, p, err, sizeof err) == 0, "%s", err);
}

/* Sequence b of p as a problem of its own: its numbers copied into
 * inline inputs, not a view of the packed storage. */
static void
build_alone(const struct problem *p, int b, int mask, struct problem *out)
{
	struct problem_spec spec;
	struct problem one;
	char err[256];

	problem_seq(p, b, &one);
	problem_spec_init(&spec);
	spec.q.data = one.q;
	spec.q.rows = one.tq;
	spec.q.cols = p->d;
	spec.k.data = one.k;
	spec.k.rows = one.tk;
	spec.k.cols = p->d;
	spec.v.data = one.v;
	spec.v.rows = one.tk;
	spec.v.cols = p->dv;
	spec_mask(&spec, mask);
	ck_assert_msg(problem_build(&spec, out, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(out->nseq, 0);
	/* Dropout's counter: sequence b's head h is head b H + h. */
	out->head0 = one.head0;
}

static const char *const cases[][2] = {
	{ "5,17,3", "5,17,3" },
	{ "5,17,3", "9,4,3" },	/* Tq_b > Tk_b and < Tk_b */
	{ "1,8,13,2", "6,8,1,11" },
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

static const struct tiling tilings[] = {
	{ 4, 4, ORDER_FA2 }, { 3, 5, ORDER_FA2 }, { 4, 4, ORDER_FA1 },
	{ 64, 64, ORDER_FA2 },
};
#define NTILINGS (int)(sizeof tilings / sizeof tilings[0])

START_TEST(test_packed_equals_alone)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem p, alone, one;
	float *o, *lse, *oa, *la;
	char err[256];
	int c, m, t, b;

	for (c = 0; c < NCASES; c++)
		for (m = 0; m < NMASK; m++) {
			build_packed(cases[c][0], cases[c][1], m, &p);
			o = malloc((size_t)p.tq * p.dv * sizeof *o);
			lse = malloc((size_t)p.tq * sizeof *lse);
			ck_assert(o != NULL && lse != NULL);
			for (t = 0; t < NTILINGS; t++) {
				ck_assert_msg(varlen_forward(&p, &tilings[t], &rule, o,
				    lse, NULL, NULL, err, sizeof err) == 0, "%s", err);
				for (b = 0; b < p.nseq; b++) {
					build_alone(&p, b, m, &alone);
					tu_run(&alone, &tilings[t], &rule, &oa, &la);
					ck_assert_msg(memcmp(oa, o + (size_t)p.cu_q[b] * p.dv,
					    (size_t)alone.tq * alone.dv * sizeof *oa) == 0 &&
					    memcmp(la, lse + p.cu_q[b], (size_t)alone.tq *
					    sizeof *la) == 0, "case %d mask %d tiling %d: "
					    "sequence %d differs from itself run alone", c, m,
					    t, b);
					/* And both are right: the double reference. */
					problem_seq(&p, b, &one);
					ck_assert_msg(tu_rel_error(&one, o + (size_t)p.cu_q[b] *
					    p.dv) < 1e-5, "case %d mask %d sequence %d: O "
					    "against the double reference", c, m, b);
					free(oa);
					free(la);
					problem_free(&alone);
				}
			}
			free(o);
			free(lse);
			problem_free(&p);
		}
}
END_TEST

/*
 * Grouped heads (H = 4 query heads on G = 2 K/V heads, each head packed,
 * head after head): every (head, sequence) of the packed forward equals
 * that head's sequence run alone bit for bit, under each mask and ALiBi
 * slopes of their own per head, and varlen_reference agrees with it.
 */
START_TEST(test_heads)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem_spec spec;
	struct problem p, head, one, alone;
	float *o, *lse, *oa, *la;
	double *ref, *ref_lse;
	char err[256];
	int c, m, t, b, h;
	size_t at, rows;

	for (c = 0; c < NCASES; c++)
		for (m = 0; m < NMASK; m++) {
			packed_spec(&spec, cases[c][0], cases[c][1], 4, 2, 11,
			    m);
			if (m == M_ALIBI) {
				spec.alibi_set = 0;
				spec.alibi_slopes = "0.5,0.25,0.125,0.0625";
			}
			ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0,
			    "%s", err);
			rows = (size_t)problem_rows(&p);
			ck_assert_int_eq(rows, 4 * p.tq);
			o = malloc(rows * p.dv * sizeof *o);
			lse = malloc(rows * sizeof *lse);
			ref = malloc(rows * p.dv * sizeof *ref);
			ref_lse = malloc(rows * sizeof *ref_lse);
			ck_assert(o && lse && ref && ref_lse);
			ck_assert(varlen_reference(&p, ref, ref_lse, err,
			    sizeof err) == 0);
			for (t = 0; t < NTILINGS; t++) {
				ck_assert_msg(varlen_forward(&p, &tilings[t], &rule, o,
				    lse, NULL, NULL, err, sizeof err) == 0, "%s", err);
				for (h = 0; h < 4; h++) {
					problem_head(&p, h, &head);
					for (b = 0; b < p.nseq; b++) {
						at = problem_packed_row(&p, h, p.cu_q[b]);
						build_alone(&head, b, m, &alone);
						if (m == M_ALIBI) {
							/* build_alone gives no slope: the head's */
							alone.alibi[0] = p.alibi[h];
						}
						tu_run(&alone, &tilings[t], &rule, &oa, &la);
						ck_assert_msg(memcmp(oa, o + at * p.dv,
						    (size_t)alone.tq * p.dv * sizeof *oa) == 0 &&
						    memcmp(la, lse + at, (size_t)alone.tq *
						    sizeof *la) == 0, "case %d mask %d tiling %d: "
						    "head %d sequence %d differs from itself run "
						    "alone", c, m, t, h, b);
						problem_seq(&head, b, &one);
						ck_assert_msg(tu_rel_error(&one, o + at * p.dv) <
						    1e-5, "case %d mask %d head %d sequence %d: O "
						    "against the double reference", c, m, h, b);
						free(oa);
						free(la);
						problem_free(&alone);
					}
				}
				for (at = 0; at < rows * p.dv; at++)
					ck_assert_msg(fabs(o[at] - ref[at]) <= 1e-5 * (1 +
					    fabs(ref[at])), "case %d mask %d: O entry %zu is "
					    "%g, varlen_reference's %g", c, m, at, o[at],
					    ref[at]);
			}
			free(o);
			free(lse);
			free(ref);
			free(ref_lse);
			problem_free(&p);
		}
}
END_TEST

/*
 * Split-KV of a packed batch (2, 3 and 5 key ranges, grouped heads with
 * and without packing a group's rows): every (head, sequence) equals
 * that sequence run alone, split and combined left to right, bit for bit.
 */
START_TEST(test_split)
{
	static const int splits[] = { 2, 3, 5 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct combine_rule cr = { COMBINE_LTR, MERGE_BUG_NONE };
	struct split_plan sp = { 0, MERGE_MLU, 0 };
	struct problem_spec spec;
	struct problem p, one;
	float *o, *lse, *oa, *la;
	char err[256];
	int c, m, i, pack, b, h;
	size_t at, rows, n;

	for (c = 0; c < NCASES; c++)
		for (m = 0; m < NMASK; m++)
			for (i = 0; i < 3; i++)
				for (pack = 0; pack < 2; pack++) {
					packed_spec(&spec, cases[c][0],
					    cases[c][1], 4, 2, 13, m);
					ck_assert_msg(problem_build(&spec, &p, err, sizeof err) ==
					    0, "%s", err);
					rows = (size_t)problem_rows(&p);
					o = malloc(rows * p.dv * sizeof *o);
					lse = malloc(rows * sizeof *lse);
					ck_assert(o != NULL && lse != NULL);
					sp.splits = splits[i];
					sp.pack_gqa = pack;
					ck_assert_msg(varlen_forward_split(&p, &tilings[1], &sp,
					    &cr, &rule, o, lse, NULL, NULL, err, sizeof err) ==
					    0, "%s", err);
					for (b = 0; b < p.nseq; b++) {
						ck_assert(problem_seq_all(&p, b, &one, err,
						    sizeof err) == 0);
						n = (size_t)one.tq;
						oa = malloc(4 * n * p.dv * sizeof *oa);
						la = malloc(4 * n * sizeof *la);
						ck_assert(oa != NULL && la != NULL);
						tu_run_split(&one, &tilings[1], splits[i], pack,
						    &rule, oa, la);
						for (h = 0; h < 4; h++) {
							at = problem_packed_row(&p, h, p.cu_q[b]);
							ck_assert_msg(memcmp(oa + h * n * p.dv, o + at *
							    p.dv, n * p.dv * sizeof *oa) == 0 &&
							    memcmp(la + h * n, lse + at, n *
							    sizeof *la) == 0, "case %d mask %d splits "
							    "%d pack %d: head %d sequence %d differs "
							    "from itself split alone", c, m, splits[i],
							    pack, h, b);
						}
						free(oa);
						free(la);
						problem_seq_free(&one);
					}
					free(o);
					free(lse);
					problem_free(&p);
				}
}
END_TEST

/*
 * Dropout's counter counts a packed batch's heads per sequence (b H + h,
 * as FlashAttention counts (batch, head)): each sequence draws keep bits
 * of its own, so sequence 1 run with sequence 0's counter gives another
 * O than it gives packed.
 */
START_TEST(test_dropout_counter)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem p, alone;
	float *o, *lse, *oa, *la;
	char err[256];

	build_packed("6,6", "9,9", M_DROPOUT, &p);
	ck_assert_int_eq(p.seq_heads, 1);
	o = malloc((size_t)p.tq * p.dv * sizeof *o);
	lse = malloc((size_t)p.tq * sizeof *lse);
	ck_assert(o != NULL && lse != NULL);
	ck_assert_msg(varlen_forward(&p, &tilings[0], &rule, o, lse, NULL, NULL,
	    err, sizeof err) == 0, "%s", err);
	build_alone(&p, 1, M_DROPOUT, &alone);
	ck_assert_int_eq(alone.head0, 1);
	tu_run(&alone, &tilings[0], &rule, &oa, &la);
	ck_assert(memcmp(oa, o + (size_t)p.cu_q[1] * p.dv, (size_t)alone.tq *
	    p.dv * sizeof *oa) == 0);
	free(oa);
	free(la);
	alone.head0 = 0;
	tu_run(&alone, &tilings[0], &rule, &oa, &la);
	ck_assert_msg(memcmp(oa, o + (size_t)p.cu_q[1] * p.dv, (size_t)alone.tq *
	    p.dv * sizeof *oa) != 0, "sequence 1 drew sequence 0's keep bits");
	free(oa);
	free(la);
	problem_free(&alone);
	free(o);
	free(lse);
	problem_free(&p);
}
END_TEST

/*
 * A paged packed batch (pages of 1, 3, 4 and 16 keys, grouped heads):
 * one pool whose pages the sequences' tables share out (each a page of
 * its own, ceil(Tk_b / P) a sequence), and the same bits as the batch
 * unpaged, O and lse.
 */
START_TEST(test_paged)
{
	static const int sizes[] = { 1, 3, 4, 16 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem_spec spec;
	struct problem p, flat, one;
	float *o, *lse, *of, *lf;
	unsigned char *seen;
	char err[256];
	int c, m, i, b, x, pages;
	size_t rows;

	for (c = 0; c < NCASES; c++)
		for (m = 0; m < NMASK; m++)
			for (i = 0; i < 4; i++) {
				packed_spec(&spec, cases[c][0], cases[c][1], 2,
				    1, 17, m);
				ck_assert_msg(problem_build(&spec, &flat, err, sizeof err) ==
				    0, "%s", err);
				spec.page_size = sizes[i];
				ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0,
				    "%s", err);
				seen = calloc((size_t)p.paged.pool, 1);
				ck_assert(seen != NULL);
				for (b = 0, pages = 0; b < p.nseq; b++) {
					problem_seq(&p, b, &one);
					ck_assert_int_eq(one.paged.pages, (one.tk + sizes[i] -
					    1) / sizes[i]);
					for (x = 0; x < one.paged.pages; x++) {
						ck_assert(one.paged.table[x] >= 0 &&
						    one.paged.table[x] < p.paged.pool);
						ck_assert_msg(!seen[one.paged.table[x]], "page %d "
						    "given twice", one.paged.table[x]);
						seen[one.paged.table[x]] = 1;
					}
					pages += one.paged.pages;
				}
				ck_assert_int_eq(pages, p.paged.pool);
				free(seen);
				rows = (size_t)problem_rows(&p);
				o = malloc(rows * p.dv * sizeof *o);
				lse = malloc(rows * sizeof *lse);
				of = malloc(rows * p.dv * sizeof *of);
				lf = malloc(rows * sizeof *lf);
				ck_assert(o && lse && of && lf);
				ck_assert(varlen_forward(&p, &tilings[1], &rule, o, lse,
				    NULL, NULL, err, sizeof err) == 0);
				ck_assert(varlen_forward(&flat, &tilings[1], &rule, of, lf,
				    NULL, NULL, err, sizeof err) == 0);
				ck_assert_msg(memcmp(o, of, rows * p.dv * sizeof *o) == 0 &&
				    memcmp(lse, lf, rows * sizeof *lse) == 0, "case %d "
				    "mask %d pages of %d: not the unpaged bits", c, m,
				    sizes[i]);
				free(o);
				free(lse);
				free(of);
				free(lf);
				problem_free(&p);
				problem_free(&flat);
			}
}
END_TEST

/* varlen_reference is each sequence's reference at its offsets, and a
 * packed batch is not one problem over all its rows. */
START_TEST(test_reference_per_sequence)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem p, whole;
	double *ro, *rl, *wo, *wl;
	float *o;
	char err[256];
	double worst = 0, cross = 0;
	long e;

	build_packed("5,17,3", "9,4,3", M_CAUSAL, &p);
	ro = malloc((size_t)p.tq * p.dv * sizeof *ro);
	rl = malloc((size_t)p.tq * sizeof *rl);
	wo = malloc((size_t)p.tq * p.dv * sizeof *wo);
	wl = malloc((size_t)p.tq * sizeof *wl);
	o = malloc((size_t)p.tq * p.dv * sizeof *o);
	ck_assert(ro && rl && wo && wl && o);
	ck_assert_msg(varlen_reference(&p, ro, rl, err, sizeof err) == 0, "%s",
	    err);
	ck_assert_int_eq(varlen_forward(&p, &tilings[1], &rule, o, NULL, NULL,
	    NULL, err, sizeof err), 0);
	whole = p;
	whole.nseq = 0;		/* the same storage as one problem */
	whole.kt = NULL;
	ck_assert_msg(reference_attention(&whole, wo, wl, err, sizeof err) == 0,
	    "%s", err);
	for (e = 0; e < (long)p.tq * p.dv; e++) {
		worst = fmax(worst, fabs(o[e] - ro[e]));
		cross = fmax(cross, fabs(wo[e] - ro[e]));
	}
	ck_assert_msg(worst < 1e-5, "packed O against the per-sequence "
	    "reference: %g", worst);
	ck_assert_msg(cross > 1e-2, "one attention over all the rows should "
	    "differ from the packed batch (it mixes sequences): %g", cross);
	free(ro);
	free(rl);
	free(wo);
	free(wl);
	free(o);
	problem_free(&p);
}
END_TEST

static double
max_rel(const float *g, const double *r, long n)
{
	double err = 0, mag = 0;
	long e;

	for (e = 0; e < n; e++) {
		err = fmax(err, fabs(g[e] - r[e]));
		mag = fmax(mag, fabs(r[e]));
	}
	return mag > 0 ? err / mag : err;
}

START_TEST(test_backward)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct backward_grads g;
	struct problem_spec spec;
	struct problem p;
	float *dout;
	double *dq, *dk, *dv;
	char err[256];
	int m, t;

	for (m = 0; m < NMASK; m++) {
		build_packed("5,17,3", "9,4,3", m, &p);
		problem_spec_init(&spec);
		spec.seed = 3;
		ck_assert_msg(problem_grad_output(&spec, &p, &dout, err, sizeof err)
		    == 0, "%s", err);
		g.dq = calloc((size_t)p.tq * p.d, sizeof(float));
		g.dk = calloc((size_t)p.tk * p.d, sizeof(float));
		g.dv = calloc((size_t)p.tk * p.dv, sizeof(float));
		g.ds = NULL;
		dq = calloc((size_t)p.tq * p.d, sizeof *dq);
		dk = calloc((size_t)p.tk * p.d, sizeof *dk);
		dv = calloc((size_t)p.tk * p.dv, sizeof *dv);
		ck_assert(g.dq && g.dk && g.dv && dq && dk && dv);
		ck_assert_msg(varlen_gradref(&p, dout, dq, dk, dv, err, sizeof err)
		    == 0, "%s", err);
		for (t = 0; t < 2; t++) {
			ck_assert_msg(varlen_backward(&p, &tilings[t], &rule, dout,
			    BWD_BUG_NONE, &g, NULL, err, sizeof err) == 0, "%s", err);
			ck_assert_msg(max_rel(g.dq, dq, (long)p.tq * p.d) < 1e-4 &&
			    max_rel(g.dk, dk, (long)p.tk * p.d) < 1e-4 &&
			    max_rel(g.dv, dv, (long)p.tk * p.dv) < 1e-4,
			    "mask %d tiling %d: gradients against the double "
			    "gradients: dQ %g dK %g dV %g", m, t,
			    max_rel(g.dq, dq, (long)p.tq * p.d),
			    max_rel(g.dk, dk, (long)p.tk * p.d),
			    max_rel(g.dv, dv, (long)p.tk * p.dv));
		}
		free(g.dq);
		free(g.dk);
		free(g.dv);
		free(dq);
		free(dk);
		free(dv);
		free(dout);
		problem_free(&p);
	}
}
END_TEST

/* No work across sequences: the packed batch's FLOPs and tiles are its
 * sequences' sums, each sequence's tiles those of its own (ragged)
 * grid, and fewer than one problem over all the rows would do. */
START_TEST(test_counters)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	const struct tiling *t = &tilings[1];	/* 3 x 5: ragged */
	struct varlen_counts vc;
	struct problem p, alone, whole;
	struct schedule s;
	struct sim *sim;
	uint64_t flops = 0, hbm = 0;
	long tiles[3], grid = 0;
	char err[256];
	int b, tq, tk;

	build_packed("5,17,3", "9,4,3", M_NONE, &p);
	ck_assert_int_eq(varlen_forward(&p, t, &rule, NULL, NULL, &vc, tiles,
	    err, sizeof err), 0);
	for (b = 0; b < p.nseq; b++) {
		tq = p.cu_q[b + 1] - p.cu_q[b];
		tk = p.cu_k[b + 1] - p.cu_k[b];
		ck_assert_int_eq(tiles[b], (long)((tq + t->br - 1) / t->br) *
		    ((tk + t->bc - 1) / t->bc));
		grid += tiles[b];
		build_alone(&p, b, M_NONE, &alone);
		sim = sim_new(&alone, t, &rule, err, sizeof err);
		ck_assert_msg(sim != NULL, "%s", err);
		flops += sim_traffic(sim)->total.flops;
		hbm += sim_traffic(sim)->total.hbm_read +
		    sim_traffic(sim)->total.hbm_write;
		/* Every entry of each sequence's S, two products each. */
		ck_assert_uint_eq(sim_traffic(sim)->total.flops,
		    (uint64_t)2 * tq * tk * (p.d + p.dv));
		sim_free(sim);
		problem_free(&alone);
	}
	ck_assert_int_eq(vc.tiles, grid);
	ck_assert_uint_eq(vc.total.flops, flops);
	ck_assert_uint_eq(vc.total.hbm_read + vc.total.hbm_write, hbm);
	/* One problem over the same rows would do the cross terms too. */
	whole = p;
	whole.nseq = 0;
	ck_assert_int_eq(schedule_init(&s, &whole, t, err, sizeof err), 0);
	ck_assert_int_gt(s.nsteps, vc.tiles);
	schedule_free(&s);
	ck_assert_uint_lt(vc.total.flops, (uint64_t)2 * p.tq * p.tk *
	    (p.d + p.dv));
	problem_free(&p);
}
END_TEST

/* Under every mask the packed counters are the sequences' own, each
 * run alone (the masks align within each sequence, so a causal batch
 * skips each sequence's own upper tiles). */
START_TEST(test_counters_masks)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct varlen_counts vc;
	struct problem p, alone;
	struct sim *sim;
	uint64_t flops, exps, hbm;
	long steps, tiles[4];
	char err[256];
	int m, b, t;

	for (m = 0; m < NMASK; m++)
		for (t = 0; t < NTILINGS; t++) {
			build_packed(cases[2][0], cases[2][1], m, &p);
			ck_assert_int_eq(varlen_forward(&p, &tilings[t], &rule, NULL,
			    NULL, &vc, tiles, err, sizeof err), 0);
			flops = exps = hbm = 0;
			steps = 0;
			for (b = 0; b < p.nseq; b++) {
				build_alone(&p, b, m, &alone);
				sim = sim_new(&alone, &tilings[t], &rule, err, sizeof err);
				ck_assert_msg(sim != NULL, "%s", err);
				ck_assert_int_eq(tiles[b], sim_schedule(sim)->nsteps);
				steps += sim_schedule(sim)->nsteps;
				flops += sim_traffic(sim)->total.flops;
				exps += sim_traffic(sim)->total.exps;
				hbm += sim_traffic(sim)->total.hbm_read +
				    sim_traffic(sim)->total.hbm_write;
				sim_free(sim);
				problem_free(&alone);
			}
			ck_assert_int_eq(vc.tiles, steps);
			ck_assert_uint_eq(vc.total.flops, flops);
			ck_assert_uint_eq(vc.total.exps, exps);
			ck_assert_uint_eq(vc.total.hbm_read + vc.total.hbm_write, hbm);
			problem_free(&p);
		}
}
END_TEST

static void
refused(const char *lq, const char *lk, void (*more)(struct problem_spec *),
    const char *want)
{
	struct problem_spec spec;
	struct problem p;
	char err[256] = "";

	problem_spec_init(&spec);
	spec.seqlens_q = lq;
	spec.seqlens_k = lk;
	if (more != NULL)
		more(&spec);
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
	ck_assert(strchr(err, '\n') == NULL);
}

static void with_tq(struct problem_spec *s) { s->tq = 4; }
static void with_fp8(struct problem_spec *s) { s->dtype = DTYPE_FP8; }

START_TEST(test_refusals)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct problem p;
	struct schedule s;
	double o[64], l[64];
	char err[256];

	refused("", "", NULL, "not a whole number");
	refused("3,,4", "3,4,4", NULL, "length 2");
	refused("3,0", "3,1", NULL, "from 1");
	refused("3,1", "3,0", NULL, "seqlens-k");
	refused("3,x", "3,4", NULL, "not a whole number");
	refused("3,-4", "3,4", NULL, "not a whole number");
	refused(" 3", "3", NULL, "not a whole number");
	refused("3,4", "3", NULL, "has 2 lengths but --seqlens-k has 1");
	refused("3,4", NULL, NULL, "go together");
	refused("3,4", "3,4", with_tq, "drop --tq");
	refused("3,4", "3,4", with_fp8, "fp8");
	refused("2147483647,1", "1,1", NULL, "add up");

	/* The packed problem itself never runs whole. */
	build_packed("3,4", "5,2", M_NONE, &p);
	ck_assert_int_eq(schedule_init(&s, &p, &tilings[0], err, sizeof err), -1);
	ck_assert(strstr(err, "--seqlens") != NULL);
	ck_assert(sim_new(&p, &tilings[0], &rule, err, sizeof err) == NULL);
	ck_assert_int_eq(reference_attention(&p, o, l, err, sizeof err), -1);
	ck_assert(strstr(err, "--seqlens") != NULL);
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("varlen");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_packed_equals_alone);
	tcase_add_test(tc, test_reference_per_sequence);
	tcase_add_test(tc, test_heads);
	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_dropout_counter);
	tcase_add_test(tc, test_paged);
	tcase_add_test(tc, test_backward);
	tcase_add_test(tc, test_counters);
	tcase_add_test(tc, test_counters_masks);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	return s;
}
