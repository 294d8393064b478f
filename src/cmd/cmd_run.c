/*
 * cmd_run.c - `flashstep run`: the whole problem through the simulator,
 * checked against the double-precision reference, with the counters of
 * the tiled algorithm beside those of standard attention.
 */
#include "config.h"

#include "cmd.h"
#include "cmd_run_varlen.h"
#include "app/fulltimeline.h"
#include "model/combine.h"
#include "model/compare.h"
#include "model/gradref.h"
#include "model/memory.h"
#include "model/reference.h"
#include "app/setup.h"
#include "model/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char run_usage[] =
    "usage: flashstep run [options]\n"
    "\n"
    "Runs the problem through the tiled simulator, compares the output with\n"
    "naive attention in double precision, and prints the HBM bytes, on-chip\n"
    "bytes, FLOPs and exps of the tiled algorithm and of standard attention.\n"
    "Without options it runs the built-in example (Tq = Tk = 16, d = 4,\n"
    "Br = Bc = 4, ramp inputs).  --backward runs FlashAttention 2's backward\n"
    "pass after it and compares dQ, dK and dV with the double-precision\n"
    "gradients, with its counters beside standard attention's backward.\n"
    "\n"
    "With --splits N each row block's keys run as N ranges whose partial\n"
    "states a combine merges; run then also prints how far the split result\n"
    "lies from the unsplit one (and the bound float32 rounding allows), the\n"
    "partials' round trip through HBM, and the parallel runs splitting gives\n"
    "a GPU.  With --heads and --kv-heads it runs grouped heads and prints the\n"
    "K/V bytes packing (--pack-gqa) saves.  With --seqlens (or --seqlens-q\n"
    "and --seqlens-k) it runs a packed batch sequence by sequence and prints\n"
    "each sequence's error, and the counters summed over the sequences.\n"
    "\n";

#define RUN_GROUPS (OPT_PROBLEM | OPT_OUTFILES | OPT_BACKWARD | OPT_SPLIT)

/* The SM count the parallelism figures assume: an H100 or H200 SXM. */
#define RUN_DEFAULT_SMS 132

struct run_args {
	int sms;
};

static int
set_sms(void *ctx, const char *v, char *err, size_t errlen)
{
	long x;

	if (options_int("sms", v, 1, 100000, &x, err, errlen) != 0)
		return -1;
	((struct run_args *)ctx)->sms = (int)x;
	return 0;
}

static const struct options_entry run_entries[] = {
	{ "sms", "N", "SMs the parallelism figures assume (default 132, "
	    "as on an H100 or H200)", set_sms },
	{ NULL, NULL, NULL, NULL },
};


/* One counter, tiled beside standard; `bytes` prints them as sizes. */
static void
print_row(const char *label, uint64_t tiled, uint64_t standard, int bytes)
{
	char a[32], b[32];

	if (bytes) {
		util_bytes((double)tiled, a, sizeof a);
		util_bytes((double)standard, b, sizeof b);
	} else {
		snprintf(a, sizeof a, "%llu", (unsigned long long)tiled);
		snprintf(b, sizeof b, "%llu", (unsigned long long)standard);
	}
	printf("  %-24s %14s %14s\n", label, a, b);
}

/* One gradient's error against the double reference. */
static void
print_error(const char *name, const float *got, const double *ref, long n,
    int rows, int cols)
{
	struct compare_result res;

	compare_arrays(got, ref, n, 0, 0, &res);
	printf("  %-3s (%d x %d)  max abs %.3g, max rel %.3g\n", name, rows, cols,
	    res.max_abs, res.max_rel);
}

/*
 * The backward after the forward: gradients, their errors, the counters
 * beside standard attention's backward, the gradient files.
 */
static int
run_backward(const struct options *o, const struct sim *sim,
    struct fulltimeline *b, char *err, size_t errlen)
{
	const struct problem *p = backward_problem(b->bwd);
	size_t nq = (size_t)p->tq * p->d, nk = (size_t)p->tk * p->d;
	size_t nv = (size_t)p->tk * p->dv, ns = (size_t)p->tq * p->tk;
	int want_ds = p->scores_mode || o->grad_s != NULL, rc = -1;
	struct backward_grads g = { 0 };
	struct traffic flash, standard;
	uint64_t fwd;
	double *rq = NULL, *rk = NULL, *rv = NULL, *rs = NULL, t0, t_bwd;
	char buf[32], buf2[32];

	g.dq = util_calloc(nq + 1, sizeof(float), "dQ", err, errlen);
	g.dk = util_calloc(nk + 1, sizeof(float), "dK", err, errlen);
	g.dv = util_calloc(nv, sizeof(float), "dV", err, errlen);
	rq = util_calloc(nq + 1, sizeof(double), "reference dQ", err, errlen);
	rk = util_calloc(nk + 1, sizeof(double), "reference dK", err, errlen);
	rv = util_calloc(nv, sizeof(double), "reference dV", err, errlen);
	if (g.dq == NULL || g.dk == NULL || g.dv == NULL || rq == NULL ||
	    rk == NULL || rv == NULL)
		goto done;
	if (want_ds && ((g.ds = util_calloc(ns, sizeof(float), "dS", err,
	    errlen)) == NULL || (rs = util_calloc(ns, sizeof(double),
	    "reference dS", err, errlen)) == NULL))
		goto done;

	t0 = util_now();
	if (backward_run(b->bwd, NULL, NULL, &g) != 0) {
		util_error(err, errlen, "the backward pass: out of memory");
		goto done;
	}
	t_bwd = util_now() - t0;
	if (backward_check_grads(b->bwd, &g, err, errlen) != 0)
		goto done;
	if (gradref_gradients(p, b->dout, rq, rk, rv, rs, err, errlen) != 0)
		goto done;

	printf("\n");
	fulltimeline_describe(stdout, b);
	printf("gradients against the double reference (max rel is relative to "
	    "the largest |gradient|):\n");
	if (!p->scores_mode) {
		print_error("dQ", g.dq, rq, (long)nq, p->tq, p->d);
		print_error("dK", g.dk, rk, (long)nk, p->tk, p->d);
	}
	print_error("dV", g.dv, rv, (long)nv, p->tk, p->dv);
	if (want_ds)
		print_error("dS", g.ds, rs, (long)ns, p->tq, p->tk);
	printf("backward time: %.3f s\n", t_bwd);

	traffic_upto(backward_traffic(b->bwd), backward_steps(b->bwd) - 1, &flash);
	flash.onchip = backward_traffic(b->bwd)->total.onchip;
	traffic_standard_backward(p, &standard);
	printf("\n  %-24s %14s %14s\n", "backward counters", "flash", "standard");
	print_row("HBM read", flash.hbm_read, standard.hbm_read, 1);
	print_row("HBM written", flash.hbm_write, standard.hbm_write, 1);
	print_row("HBM total", flash.hbm_read + flash.hbm_write,
	    standard.hbm_read + standard.hbm_write, 1);
	print_row("intermediates in HBM", flash.stored, standard.stored, 1);
	print_row("matmul FLOPs", flash.flops, standard.flops, 0);
	print_row("exp of scores", flash.exps, standard.exps, 0);
	printf("  on chip during a step (peak): %s; standard attention reads\n"
	    "  the P its forward stored, and keeps P, dP and dS (%s) in HBM.\n",
	    util_bytes((double)flash.onchip, buf, sizeof buf),
	    util_bytes((double)standard.stored, buf2, sizeof buf2));
	fwd = sim_traffic(sim)->total.flops;
	printf("  matmul FLOPs, backward / forward: %.4g (%s)\n",
	    fwd > 0 ? (double)flash.flops / (double)fwd : 0.0, p->scores_mode ?
	    "dV and dP per tile against P V: S is given" :
	    "five products per tile against two");
	rc = fulltimeline_write(o, p, &g, err, errlen);
done:
	free(g.dq);
	free(g.dk);
	free(g.dv);
	free(g.ds);
	free(rq);
	free(rk);
	free(rv);
	free(rs);
	return rc;
}

/* The double reference, head by head, of the inputs as given (fp8's
 * unquantized and unrotated: fp8_exact). */
static int
run_reference(const struct problem *p, double *o, double *lse, char *err,
    size_t errlen)
{
	struct problem one, exact;
	int h, heads = p->heads > 0 ? p->heads : 1;

	fp8_exact(p, &exact);
	for (h = 0; h < heads; h++) {
		problem_head(&exact, h, &one);
		if (reference_attention(&one, o + (size_t)h * p->tq * p->dv,
		    lse + (size_t)h * p->tq, err, errlen) != 0)
			return -1;
	}
	return 0;
}

/* fp8: how each tensor was quantized, and the error FP8 makes in O. */
static void
run_fp8_report(const struct problem *p, const struct compare_result *co)
{
	const struct fp8_data *f = p->fp8;
	const struct fp8_tensor *t[3] = { &f->q, &f->k, &f->v };
	struct fp8_stats st;
	int i;

	printf("\nfp8 (e4m3: 3 mantissa bits, max 448, subnormals to 2^-9): ");
	if (f->spec.bug == FP8_BUG_WHOLE_TENSOR)
		printf("one scale a tensor (--fp8-bug whole-tensor)\n");
	else
		printf("a scale for every %d rows of Q, %d of K and V\n",
		    f->q.block, f->k.block);
	if (f->spec.hadamard)
		printf("  Q%s multiplied by diag(signs) H / sqrt(%d) before "
		    "quantizing%s\n", f->k.rotated ? " and K" : "", f->d,
		    f->k.rotated ? "" : "; K is not (--fp8-bug rotate-q-only)");
	printf("  %-3s %7s %9s %19s %10s %10s %6s %6s\n", "", "blocks", "amax",
	    "scales", "rms err", "max err", "to 0", "subn");
	for (i = 0; i < 3; i++) {
		fp8_stats(t[i], &st);
		printf("  %-3s %7d %9.4g %9.3g..%-9.3g %10.3g %10.3g %6ld %6ld\n",
		    t[i]->name, t[i]->nblocks, st.amax, st.min_scale,
		    st.max_scale, st.rms_err, st.max_err, st.zeros, st.subnormal);
	}
	printf("  P is rounded to e4m3 before P V, with no scale (P <= 1); the "
	    "sums stay float32\n");
	printf("  RMSE of O against the double reference of the unquantized "
	    "inputs: %.3g\n", co->rmse);
}

/* --page-size: the pool, the table, and what paging does to the reads. */
static void
run_paged_report(const struct options *o, const struct problem *p,
    const struct schedule *sc)
{
	const struct paged_cache *pc = &p->paged;
	struct paged_reads r;

	paged_count(pc, sc, &r);
	printf("\npaged cache: %d pages of %d keys (the last holds %d) in a "
	    "pool of %d, table %s\n", pc->pages, pc->page_size,
	    p->tk - (pc->pages - 1) * pc->page_size, pc->pool,
	    o->spec.block_table != NULL ? o->spec.block_table :
	    "shuffled from --seed");
	printf("  K/V read in %ld contiguous runs of at most %ld key%s "
	    "(contiguous K/V: %ld runs,\n  one a tile); %ld of %ld tiles span "
	    "two pages or more; HBM bytes as contiguous K/V\n", r.runs,
	    r.longest, r.longest == 1 ? "" : "s", r.tiles, r.spanning, r.tiles);
}

/* The traffic of schedule s over p, with its own table. */
static int
run_schedule_traffic(const struct problem *p, const struct tiling *t,
    const struct split_plan *sp, int sms, struct traffic *total,
    struct traffic_parallel *par, char *err, size_t errlen)
{
	struct schedule s;
	struct traffic_table tt;

	if (schedule_init_split(&s, p, t, sp, err, errlen) != 0)
		return -1;
	if (traffic_init(&tt, p, &s, err, errlen) != 0) {
		schedule_free(&s);
		return -1;
	}
	*total = tt.total;
	traffic_parallel(&s, sms, par);
	traffic_free(&tt);
	schedule_free(&s);
	return 0;
}

/* Percent of SMs busy in the waves of par. */
static double
run_busy(const struct traffic_parallel *par)
{
	return par->waves > 0 ? 100.0 * (double)par->runs /
	    ((double)par->waves * par->sms) : 0.0;
}

/*
 * Split-KV: the result against the unsplit run's and the bound rounding
 * allows, the partials' round trip, and the parallel runs it buys.
 */
static int
run_split_report(const struct options *o, const struct setup *s,
    const struct combine *comb, const float *out, const float *lse,
    const double *ref, int sms, char *err, size_t errlen)
{
	const struct problem *p = &s->problem;
	const struct schedule *sc = sim_schedule(s->sim);
	struct split_plan one = o->split;
	struct combine_bounds bound;
	struct compare_result c_o, c_l, r1, rn;
	struct traffic t1, tn, ct;
	struct traffic_parallel par1, parn;
	struct sim *sim1;
	size_t rows = (size_t)problem_rows(p);
	float *o1 = NULL, *l1 = NULL;
	double *d1 = NULL, *dl1 = NULL;
	char b1[32], b2[32], b3[32], b4[32];
	int rc = -1;
	size_t x;

	one.splits = 1;
	sim1 = sim_new_split(p, &o->tiling, &one, &o->rule, err, errlen);
	o1 = util_calloc(rows * (size_t)p->dv, sizeof *o1, "O", err, errlen);
	l1 = util_calloc(rows, sizeof *l1, "lse", err, errlen);
	d1 = util_calloc(rows * (size_t)p->dv, sizeof *d1, "O", err, errlen);
	dl1 = util_calloc(rows, sizeof *dl1, "lse", err, errlen);
	if (sim1 == NULL || o1 == NULL || l1 == NULL || d1 == NULL || dl1 == NULL)
		goto done;
	if (sim_run(sim1, NULL, NULL, o1, l1) != 0) {
		util_error(err, errlen, "out of memory");
		goto done;
	}
	for (x = 0; x < rows * (size_t)p->dv; x++)
		d1[x] = o1[x];
	for (x = 0; x < rows; x++)
		dl1[x] = l1[x];
	compare_arrays(out, d1, (long)(rows * (size_t)p->dv), 0, 0, &c_o);
	compare_arrays(lse, dl1, (long)rows, 0, 0, &c_l);
	compare_arrays(o1, ref, (long)(rows * (size_t)p->dv), 0, 0, &r1);
	compare_arrays(out, ref, (long)(rows * (size_t)p->dv), 0, 0, &rn);
	combine_bound(comb, &bound);

	printf("\nsplit-KV: %d key ranges per row block, partials as %s, merged "
	    "%s (%d merges a row block)%s%s\n", sc->splits,
	    sc->partials == MERGE_MLU ? "(m, l, u)" : "(o, lse)",
	    combine_order_name(o->combine.order),
	    combine_merges(comb), o->combine.bug != MERGE_BUG_NONE ?
	    ", merge bug " : "", o->combine.bug != MERGE_BUG_NONE ?
	    combine_bug_name(o->combine.bug) : "");
	printf("  O split vs unsplit: max abs %.3g (float32 rounding allows "
	    "%.3g)\n", c_o.max_abs, bound.o);
	printf("  lse split vs unsplit: max abs %.3g (allowed %.3g)\n",
	    c_l.max_abs, bound.lse);
	if (c_o.max_abs > bound.o || c_l.max_abs > bound.lse)
		printf("  beyond what rounding allows: a bug mode (--merge-bug, "
		    "--bug) changed the result\n");
	else
		printf("  %s: the same terms summed in another order round "
		    "differently\n", c_o.max_abs == 0 && c_l.max_abs == 0 ?
		    "bit for bit the same here, though it need not be" :
		    "within rounding, not bit for bit the same");
	printf("  O against the double reference: split max abs %.3g, unsplit "
	    "%.3g\n", rn.max_abs, r1.max_abs);

	traffic_upto(sim_traffic(s->sim), sim_steps(s->sim) - 1, &tn);
	combine_traffic(comb, &ct);
	printf("  partials' round trip through HBM: %s written by the forward, "
	    "%s read back\n  by the combine (%s a row each, float32); the "
	    "combine writes O and lse, %s\n",
	    util_bytes((double)tn.partials, b1, sizeof b1),
	    util_bytes((double)ct.hbm_read, b2, sizeof b2),
	    util_bytes((double)traffic_partial_bytes(sc->partials, p->dv), b3,
	    sizeof b3), util_bytes((double)ct.hbm_write, b4, sizeof b4));
	if (run_schedule_traffic(p, &o->tiling, &one, sms, &t1, &par1, err,
	    errlen) != 0)
		goto done;
	traffic_parallel(sc, sms, &parn);
	printf("  HBM in all: %s split (forward and combine), %s unsplit\n",
	    util_bytes((double)(tn.hbm_read + tn.hbm_write + ct.hbm_read +
	    ct.hbm_write), b1, sizeof b1),
	    util_bytes((double)(t1.hbm_read + t1.hbm_write), b2, sizeof b2));
	printf("  what it buys, on %d SMs (an assumption: --sms; 132 is an "
	    "H100 or H200 SXM):\n", sms);
	printf("    runs to spread (one per row block, or per row block and "
	    "range): %ld, unsplit %ld\n", parn.runs, par1.runs);
	printf("    waves %ld, %.0f%% of SMs busy; unsplit %ld, %.0f%%\n",
	    parn.waves, run_busy(&parn), par1.waves, run_busy(&par1));
	printf("    longest run %ld tiles, unsplit %ld; at one tile a step per "
	    "SM, at least\n    %ld steps, unsplit %ld (%.1fx fewer), plus %d "
	    "merges a row block\n", parn.longest, par1.longest, parn.span,
	    par1.span, parn.span > 0 ? (double)par1.span / parn.span : 0.0,
	    combine_merges(comb));
	rc = 0;
done:
	sim_free(sim1);
	free(o1);
	free(l1);
	free(d1);
	free(dl1);
	return rc;
}

/* Grouped heads: the K/V bytes read with and without packing. */
static int
run_heads_report(const struct options *o, const struct setup *s, int sms,
    char *err, size_t errlen)
{
	const struct problem *p = &s->problem;
	const struct schedule *sc = sim_schedule(s->sim);
	struct split_plan other = o->split;
	struct traffic mine, alt;
	struct traffic_parallel par, apar;
	char b1[32], b2[32];

	other.pack_gqa = !sc->pack;
	if (run_schedule_traffic(p, &o->tiling, &o->split, sms, &mine, &par,
	    err, errlen) != 0 ||
	    run_schedule_traffic(p, &o->tiling, &other, sms, &alt, &apar, err,
	    errlen) != 0)
		return -1;
	printf("\ngrouped heads: H=%d query heads read G=%d K/V heads (%d "
	    "each)\n", sc->heads, sc->kv_heads, sc->group);
	printf("  K and V read: %s %s, %s %s: packing reads %.2fx less\n",
	    util_bytes((double)mine.kv_read, b1, sizeof b1),
	    sc->pack ? "packed" : "unpacked",
	    util_bytes((double)alt.kv_read, b2, sizeof b2),
	    sc->pack ? "unpacked" : "with --pack-gqa",
	    sc->pack ? (mine.kv_read > 0 ? (double)alt.kv_read / mine.kv_read : 0) :
	    (alt.kv_read > 0 ? (double)mine.kv_read / alt.kv_read : 0));
	printf("  runs to spread over %d SMs: %ld %s, %ld %s\n", sms, par.runs,
	    sc->pack ? "packed" : "unpacked", apar.runs,
	    sc->pack ? "unpacked" : "packed");
	if (sc->group == 1)
		printf("  (with one query head per K/V head packing changes "
		    "nothing)\n");
	return 0;
}

int
cmd_run(int argc, char **argv)
{
	struct run_args a = { RUN_DEFAULT_SMS };
	struct options o;
	struct setup s;
	struct fulltimeline b;
	struct combine *comb = NULL;
	struct compare_result co, cl;
	struct traffic tiled, standard;
	const struct problem *p;
	float *out = NULL, *lse = NULL;
	double *ref = NULL, *ref_lse = NULL, t0, t_sim;
	char err[512], buf[32], buf2[32];
	int rc = CMD_USAGE, r, nshow, rows;

	memset(&b, 0, sizeof b);
	rc = cmd_parse("run", run_usage, argc, argv, RUN_GROUPS, run_entries,
	    &a, &o);
	if (rc >= 0) {
		options_free(&o);
		return rc;
	}
	o.spec.memory_parts = MEMORY_FOR_RUN;
	/* A packed batch runs sequence by sequence: a report of its own. */
	if (o.spec.seqlens_q != NULL || o.spec.seqlens_k != NULL) {
		rc = run_varlen(&o, err, sizeof err) == 0 ? CMD_OK : CMD_USAGE;
		if (rc != CMD_OK)
			fprintf(stderr, "flashstep run: %s\n", err);
		options_free(&o);
		return rc;
	}
	if (setup_open(&o, &s, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep run: %s\n", err);
		options_free(&o);
		return CMD_USAGE;
	}
	p = &s.problem;
	rows = problem_rows(p);
	if (sim_schedule(s.sim)->splits > 1 &&
	    (comb = combine_new(s.sim, &o.combine, err, sizeof err)) == NULL)
		goto fail;
	out = util_calloc((size_t)rows * p->dv, sizeof *out, "O", err, sizeof err);
	lse = util_calloc((size_t)rows, sizeof *lse, "lse", err, sizeof err);
	ref = util_calloc((size_t)rows * p->dv, sizeof *ref, "reference", err, sizeof err);
	ref_lse = util_calloc((size_t)rows, sizeof *ref_lse, "reference", err, sizeof err);
	if (out == NULL || lse == NULL || ref == NULL || ref_lse == NULL)
		goto fail;

	/* With --backward the forward runs once, inside fulltimeline_open. */
	t0 = util_now();
	if (o.backward) {
		if (fulltimeline_open(&o, &s, &b, err, sizeof err) != 0)
			goto fail;
		memcpy(out, b.o, (size_t)p->tq * p->dv * sizeof *out);
		memcpy(lse, b.lse, (size_t)p->tq * sizeof *lse);
	} else if (sim_run(s.sim, NULL, NULL, out, lse) != 0) {
		snprintf(err, sizeof err, "out of memory");
		goto fail;
	}
	if (comb != NULL)
		combine_run(comb, NULL, NULL, out, lse);
	t_sim = util_now() - t0;
	if (run_reference(p, ref, ref_lse, err, sizeof err) != 0)
		goto fail;

	setup_describe(stdout, s.sim);
	setup_print_matrix("output O", out, rows, p->dv);
	compare_arrays(out, ref, (long)rows * p->dv, 0, 0, &co);
	compare_arrays(lse, ref_lse, rows, 0, 0, &cl);
	printf("error of O against the double reference: max abs %.3g, "
	    "max rel %.3g (relative to max |O|)\n", co.max_abs, co.max_rel);
	nshow = rows < 4 ? rows : 4;
	printf("lse (first rows):");
	for (r = 0; r < nshow; r++)
		printf(" %.7g", (double)lse[r]);
	printf("%s; max abs error %.3g\n", rows > nshow ? " ..." : "", cl.max_abs);
	printf("simulator time: %.3f s\n", t_sim);
	if (p->fp8 != NULL)
		run_fp8_report(p, &co);

	traffic_upto(sim_traffic(s.sim), sim_steps(s.sim) - 1, &tiled);
	tiled.onchip = sim_traffic(s.sim)->total.onchip;
	if (comb != NULL) {
		struct traffic ct;

		combine_traffic(comb, &ct);
		tiled.hbm_read += ct.hbm_read;
		tiled.hbm_write += ct.hbm_write;
	}
	traffic_standard(p, &standard);
	printf("\n  %-24s %14s %14s\n", "counters", "tiled", "standard");
	print_row("HBM read", tiled.hbm_read, standard.hbm_read, 1);
	print_row("HBM written", tiled.hbm_write, standard.hbm_write, 1);
	print_row("HBM total", tiled.hbm_read + tiled.hbm_write,
	    standard.hbm_read + standard.hbm_write, 1);
	print_row("intermediates in HBM", tiled.stored, standard.stored, 1);
	print_row("matmul FLOPs", tiled.flops, standard.flops, 0);
	print_row("exp of scores", tiled.exps, standard.exps, 0);
	print_row("exp of rescale factors", tiled.rescale_exps,
	    standard.rescale_exps, 0);
	printf("  on chip during a step (peak): %s; standard attention keeps\n"
	    "  S and P (%s) in HBM instead.\n",
	    util_bytes((double)tiled.onchip, buf, sizeof buf),
	    util_bytes((double)standard.stored, buf2, sizeof buf2));

	if (p->paged.page_size > 0)
		run_paged_report(&o, p, sim_schedule(s.sim));
	if (comb != NULL && run_split_report(&o, &s, comb, out, lse, ref, a.sms,
	    err, sizeof err) != 0)
		goto fail;
	if (sim_schedule(s.sim)->heads > 1 &&
	    run_heads_report(&o, &s, a.sms, err, sizeof err) != 0)
		goto fail;
	if (o.backward && run_backward(&o, s.sim, &b, err, sizeof err) != 0)
		goto fail;
	if (setup_write_outputs(&o, p, out, lse, err, sizeof err) != 0)
		goto fail;
	rc = CMD_OK;
	goto done;
fail:
	fprintf(stderr, "flashstep run: %s\n", err);
	rc = CMD_USAGE;
done:
	free(out);
	free(lse);
	free(ref);
	free(ref_lse);
	fulltimeline_close(&b);
	combine_free(comb);
	setup_close(&s);
	options_free(&o);
	return rc;
}
