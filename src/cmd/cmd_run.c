/*
 * cmd_run.c - `flashstep run`: the whole problem through the simulator,
 * checked against the double-precision reference, with the counters of
 * the tiled algorithm beside those of standard attention.
 */
#include "config.h"

#include "cmd.h"
#include "model/compare.h"
#include "model/memory.h"
#include "model/reference.h"
#include "model/setup.h"
#include "model/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char run_usage[] =
    "usage: flashstep run [options]\n"
    "\n"
    "Runs the problem through the tiled simulator, compares the output with\n"
    "naive attention in double precision, and prints the HBM bytes, on-chip\n"
    "bytes, FLOPs and exps of the tiled algorithm and of standard attention.\n"
    "Without options it runs the built-in example (Tq = Tk = 16, d = 4,\n"
    "Br = Bc = 4, ramp inputs).\n"
    "\n";

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

int
cmd_run(int argc, char **argv)
{
	struct options o;
	struct setup s;
	struct compare_result co, cl;
	struct traffic tiled, standard;
	const struct problem *p;
	float *out = NULL, *lse = NULL;
	double *ref = NULL, *ref_lse = NULL, t0, t_sim;
	char err[512], buf[32], buf2[32];
	int rc = CMD_USAGE, r, nshow;

	options_init(&o);
	if (options_parse(argc, argv, 1, OPT_PROBLEM | OPT_OUTFILES, NULL, NULL,
	    &o, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep run: %s\n", err);
		options_free(&o);
		return CMD_USAGE;
	}
	if (o.help) {
		fputs(run_usage, stdout);
		options_usage(stdout, OPT_PROBLEM | OPT_OUTFILES, NULL);
		options_free(&o);
		return CMD_OK;
	}
	if (o.nargs > 0) {
		fprintf(stderr, "flashstep run: unexpected argument '%s'\n", o.args[0]);
		options_free(&o);
		return CMD_USAGE;
	}
	o.spec.memory_parts = MEMORY_FOR_RUN;
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

	t0 = util_now();
	if (sim_run(s.sim, NULL, NULL, out, lse) != 0) {
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
	setup_close(&s);
	options_free(&o);
	return rc;
}
