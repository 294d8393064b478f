/*
 * cmd_bench_steps.c - `flashstep bench --steps`: the time of one step as
 * the problem grows.
 *
 * With 1 x 1 tiles a row block (forward) or key block (backward) has N
 * steps at Tq = Tk = N, and the counters shown beside each step once
 * walked from the block's first step: N^2 steps at O(N) each.  This
 * times the forward and the backward step by step, with a callback after
 * every step as trace and the view have, at N = 125, 250, ... up to
 * --max-size: a cost per step that stays flat as N doubles is what the
 * counters promise (traffic.h's cursor).
 */
#include "config.h"

#include "cmd.h"
#include "model/backward.h"
#include "model/problem.h"
#include "model/sim.h"
#include "model/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char bench_steps_usage[] =
    "usage: flashstep bench --steps [--max-size N]\n"
    "\n"
    "Times each step of the forward and of the backward, with a callback\n"
    "after every step (as trace and the view run them), at Tq = Tk = N,\n"
    "d = 1, Br = Bc = 1, for N = 125, 250, ... up to --max-size (default\n"
    "1000, at most 4000): the time per step should stay flat as N grows.\n"
    "\n";

/* Reads the counters after every step, as trace and the view do. */
static int
bench_steps_sim_fn(const struct sim_view *v, void *ctx)
{
	*(uint64_t *)ctx += v->traffic.flops;
	return 0;
}

static int
bench_steps_bwd_fn(const struct backward_view *v, void *ctx)
{
	*(uint64_t *)ctx += v->traffic.flops;
	return 0;
}

/* One size: nanoseconds a step of the forward and of the backward. */
static int
bench_steps_one(int n, double *fwd_ns, double *bwd_ns, char *err,
    size_t errlen)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 1, 1, ORDER_FA2 };
	struct online_rule rule;
	struct backward_input in;
	struct backward *b = NULL;
	struct sim *sim = NULL;
	float *o = NULL, *lse = NULL, *m = NULL, *dout = NULL;
	uint64_t sink = 0;
	double t0;
	int rc = -1;

	problem_spec_init(&spec);
	spec.tq = spec.tk = n;
	spec.d = 1;
	spec.br = spec.bc = 1;
	memset(&rule, 0, sizeof rule);
	rule.convention = CONV_UNNORMALIZED;
	rule.bug = BUG_NONE;
	if (problem_build(&spec, &p, err, errlen) != 0)
		return -1;
	sim = sim_new(&p, &t, &rule, err, errlen);
	o = util_calloc((size_t)n, sizeof *o, "O", err, errlen);
	lse = util_calloc((size_t)n, sizeof *lse, "lse", err, errlen);
	m = util_calloc((size_t)n, sizeof *m, "m", err, errlen);
	if (sim == NULL || o == NULL || lse == NULL || m == NULL)
		goto done;
	t0 = util_now();
	if (backward_forward(sim, NULL, o, lse, m) != 0 ||
	    sim_run(sim, bench_steps_sim_fn, &sink, o, lse) != 0) {
		util_error(err, errlen, "the forward: out of memory");
		goto done;
	}
	/* two forward runs with a callback: backward_forward's and ours */
	*fwd_ns = (util_now() - t0) * 1e9 / (2.0 * (double)sim_steps(sim));
	if (problem_grad_output(&spec, &p, &dout, err, errlen) != 0)
		goto done;
	in.o = o;
	in.lse = lse;
	in.m = m;
	in.dout = dout;
	if ((b = backward_new(&p, &t, &in, BWD_BUG_NONE, err, errlen)) == NULL)
		goto done;
	t0 = util_now();
	if (backward_run(b, bench_steps_bwd_fn, &sink, NULL) != 0) {
		util_error(err, errlen, "the backward: out of memory");
		goto done;
	}
	*bwd_ns = (util_now() - t0) * 1e9 / (double)backward_steps(b);
	rc = sink == 0 ? -1 : 0;	/* (keeps the callbacks' reads) */
	if (rc != 0)
		util_error(err, errlen, "no FLOPs counted");
done:
	backward_free(b);
	sim_free(sim);
	free(o);
	free(lse);
	free(m);
	free(dout);
	problem_free(&p);
	return rc;
}

int
cmd_bench_steps(int argc, char **argv)
{
	long max = 1000, x;
	double f, bw, f0 = 0, b0 = 0;
	char err[512];
	int i, n;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--steps") == 0)
			continue;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(bench_steps_usage, stdout);
			return CMD_OK;
		}
		if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc) {
			if (options_int("max-size", argv[++i], 125, 4000, &x, err,
			    sizeof err) != 0) {
				fprintf(stderr, "flashstep bench: %s\n", err);
				return CMD_USAGE;
			}
			max = x;
			continue;
		}
		fprintf(stderr, "flashstep bench: --steps takes only --max-size "
		    "N, not '%s'\n%s", argv[i], bench_steps_usage);
		return CMD_USAGE;
	}
	printf("time per step, Tq = Tk = N, d = 1, Br = Bc = 1, a callback "
	    "after each step:\n");
	printf("  %6s %10s %14s %14s\n", "N", "steps", "forward ns", "backward ns");
	for (n = 125; n <= max; n *= 2) {
		if (bench_steps_one(n, &f, &bw, err, sizeof err) != 0) {
			fprintf(stderr, "flashstep bench: N = %d: %s\n", n, err);
			return CMD_FAILED;
		}
		if (n == 125) {
			f0 = f;
			b0 = bw;
		}
		printf("  %6d %10ld %14.1f %14.1f   (x%.2f, x%.2f of N = 125)\n",
		    n, (long)n * n, f, bw, f0 > 0 ? f / f0 : 0.0,
		    b0 > 0 ? bw / b0 : 0.0);
	}
	return CMD_OK;
}
