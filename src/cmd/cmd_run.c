/*
 * cmd_run.c - `flashstep run`: the whole problem through the simulator,
 * checked against the double-precision reference, with the counters of
 * the tiled algorithm beside those of standard attention.
 */
#include "config.h"

#include "cmd.h"
#include "model/bwdsetup.h"
#include "model/compare.h"
#include "model/gradref.h"
#include "model/reference.h"
#include "model/setup.h"
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
    "\n";

#define RUN_GROUPS (OPT_PROBLEM | OPT_OUTFILES | OPT_BACKWARD)

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
    struct bwdsetup *b, char *err, size_t errlen)
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
	if (gradref_gradients(p, b->dout, rq, rk, rv, rs, err, errlen) != 0)
		goto done;

	printf("\n");
	bwdsetup_describe(stdout, b);
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
	rc = bwdsetup_write(o, p, &g, err, errlen);
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

int
cmd_run(int argc, char **argv)
{
	struct options o;
	struct setup s;
	struct bwdsetup b;
	struct compare_result co, cl;
	struct traffic tiled, standard;
	const struct problem *p;
	float *out = NULL, *lse = NULL;
	double *ref = NULL, *ref_lse = NULL, t0, t_sim;
	char err[512], buf[32], buf2[32];
	int rc = CMD_USAGE, r, nshow;

	options_init(&o);
	memset(&b, 0, sizeof b);
	if (options_parse(argc, argv, 1, RUN_GROUPS, NULL, NULL, &o, err,
	    sizeof err) != 0) {
		fprintf(stderr, "flashstep run: %s\n", err);
		options_free(&o);
		return CMD_USAGE;
	}
	if (o.help) {
		fputs(run_usage, stdout);
		options_usage(stdout, RUN_GROUPS, NULL);
		options_free(&o);
		return CMD_OK;
	}
	if (o.nargs > 0) {
		fprintf(stderr, "flashstep run: unexpected argument '%s'\n", o.args[0]);
		options_free(&o);
		return CMD_USAGE;
	}
	if (setup_open(&o, &s, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep run: %s\n", err);
		options_free(&o);
		return CMD_USAGE;
	}
	p = &s.problem;
	out = util_calloc((size_t)p->tq * p->dv, sizeof *out, "O", err, sizeof err);
	lse = util_calloc((size_t)p->tq, sizeof *lse, "lse", err, sizeof err);
	ref = util_calloc((size_t)p->tq * p->dv, sizeof *ref, "reference", err, sizeof err);
	ref_lse = util_calloc((size_t)p->tq, sizeof *ref_lse, "reference", err, sizeof err);
	if (out == NULL || lse == NULL || ref == NULL || ref_lse == NULL)
		goto fail;

	/* With --backward the forward runs once, inside bwdsetup_open. */
	t0 = util_now();
	if (o.backward) {
		if (bwdsetup_open(&o, &s, &b, err, sizeof err) != 0)
			goto fail;
		memcpy(out, b.o, (size_t)p->tq * p->dv * sizeof *out);
		memcpy(lse, b.lse, (size_t)p->tq * sizeof *lse);
	} else if (sim_run(s.sim, NULL, NULL, out, lse) != 0) {
		snprintf(err, sizeof err, "out of memory");
		goto fail;
	}
	t_sim = util_now() - t0;
	if (reference_attention(p, ref, ref_lse, err, sizeof err) != 0)
		goto fail;

	setup_describe(stdout, s.sim);
	setup_print_matrix("output O", out, p->tq, p->dv);
	compare_arrays(out, ref, (long)p->tq * p->dv, 0, 0, &co);
	compare_arrays(lse, ref_lse, p->tq, 0, 0, &cl);
	printf("error of O against the double reference: max abs %.3g, "
	    "max rel %.3g (relative to max |O|)\n", co.max_abs, co.max_rel);
	nshow = p->tq < 4 ? p->tq : 4;
	printf("lse (first rows):");
	for (r = 0; r < nshow; r++)
		printf(" %.7g", (double)lse[r]);
	printf("%s; max abs error %.3g\n", p->tq > nshow ? " ..." : "", cl.max_abs);
	printf("simulator time: %.3f s\n", t_sim);

	traffic_upto(sim_traffic(s.sim), sim_steps(s.sim) - 1, &tiled);
	tiled.onchip = sim_traffic(s.sim)->total.onchip;
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
	bwdsetup_close(&b);
	setup_close(&s);
	options_free(&o);
	return rc;
}
