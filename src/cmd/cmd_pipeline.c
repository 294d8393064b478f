/*
 * cmd_pipeline.c - `flashstep pipeline`: the wgmma kernel's pipeline,
 * modelled (--model), as a Chrome trace and a summary.
 */
#include "config.h"

#include "cmd.h"
#include "app/outfile.h"
#include "app/pipeline_json.h"
#include "model/pipeline.h"
#include "model/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char pipeline_usage[] =
    "usage: flashstep pipeline --model [--stages N] [--no-pingpong]\n"
    "                          [--no-overlap] [--ctas N] [--output FILE]\n"
    "                          [problem options]\n"
    "\n"
    "Models the Hopper (wgmma) kernel's forward pipeline as a schedule of\n"
    "events: the producer's TMA copies into a ring of shared-memory stages,\n"
    "the consumer warpgroups' QK^T, softmax and PV, the tensor core and the\n"
    "copy engine.  Durations come from the H200's nominal figures (see\n"
    "flashstep(1)).  Prints the time of a block and of a key tile, how full\n"
    "each stage was, and what one stage, no ping-pong or no overlap would\n"
    "cost.  --output writes the events as a Chrome trace-event file that\n"
    "Perfetto (ui.perfetto.dev) and chrome://tracing open.  d is 64 or 128\n"
    "(default 128), Tq and Tk default to 1024; blocks are the work items of\n"
    "one head in launch order (the last row block first).\n"
    "\n";

struct pipeline_args {
	int model;
	long stages, ctas;
	int no_pingpong, no_overlap;
	const char *output;
};

static int
set_model(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct pipeline_args *)ctx)->model, v, err,
	    errlen);
}

static int
set_stages(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_int("stages", v, 1, PIPELINE_MAX_STAGES,
	    &((struct pipeline_args *)ctx)->stages, err, errlen);
}

static int
set_ctas(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_int("ctas", v, 1, 132,
	    &((struct pipeline_args *)ctx)->ctas, err, errlen);
}

static int
set_no_pingpong(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct pipeline_args *)ctx)->no_pingpong, v,
	    err, errlen);
}

static int
set_no_overlap(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct pipeline_args *)ctx)->no_overlap, v,
	    err, errlen);
}

static int
set_output(void *ctx, const char *v, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	((struct pipeline_args *)ctx)->output = v;
	return 0;
}

static const struct options_entry pipeline_entries[] = {
	{ "model", NULL, "model the pipeline (no GPU needed)", set_model },
	{ "stages", "N", "slots in the K/V ring (default: the kernel's, 2 at "
	    "d = 128, 4 at d = 64)", set_stages },
	{ "no-pingpong", NULL, "consumers do not take turns at the tensor core",
	    set_no_pingpong },
	{ "no-overlap", NULL, "S, softmax, P V one after the other (implies "
	    "--no-pingpong, as in the kernel)", set_no_overlap },
	{ "ctas", "N", "blocks to model, 1 to 132 (default 2)", set_ctas },
	{ "output", "FILE", "write the events as a Chrome trace (JSON)",
	    set_output },
	{ NULL, NULL, NULL, NULL },
};

/* The block time of cfg with the nominal costs, or -1 (err set). */
static double
pipeline_what_if(const struct pipeline_config *cfg, char *err, size_t errlen)
{
	struct pipeline_costs k;
	struct pipeline_run r;
	double t;

	pipeline_costs_nominal(cfg, &k);
	if (pipeline_model(cfg, &k, &r, err, errlen) != 0)
		return -1;
	t = pipeline_span(&r);
	pipeline_run_free(&r);
	return t;
}

static int
pipeline_summary(const struct pipeline_run *run, char *err, size_t errlen)
{
	const struct pipeline_config *c = &run->cfg;
	const struct pipeline_costs *k = &run->costs;
	const double span = pipeline_span(run);
	double occ[PIPELINE_MAX_STAGES], busy = 0, t;
	struct pipeline_config v;
	char why[256];
	int s, x, bad, tiles = 0;
	struct { const char *what; int stages, pp, ov; } rows[] = {
		{ "as modelled", c->stages, c->pingpong, c->overlap },
		{ "one stage", 1, c->pingpong, c->overlap },
		{ "one more stage", c->stages + 1, c->pingpong, c->overlap },
		{ "no ping-pong", c->stages, 0, c->overlap },
		{ "no overlap (nor ping-pong)", c->stages, 0, 0 },
	};

	for (x = 0; x < run->ncta; x++)
		tiles += run->cta_nt[x];
	printf("wgmma pipeline model: d = %d, Br = %d (%d consumers), Bc = %d, "
	    "%d stage%s, ping-pong %s, overlap %s\n", c->d, c->br,
	    c->consumers, c->bc, c->stages, c->stages == 1 ? "" : "s",
	    c->pingpong && c->overlap ? "on" : "off",
	    c->overlap ? "on" : "off");
	printf("problem: Tq = %d, Tk = %d%s; %d block%s, %d key tiles\n", c->tq,
	    c->tk, c->causal ? ", causal" : "", run->ncta,
	    run->ncta == 1 ? "" : "s", tiles);
	printf("durations (clocks, nominal H200): S %.0f, P V %.0f, softmax "
	    "%.0f, copy of a K or V tile %.0f + %.0f latency\n",
	    k->qk_instr * (c->d / 16), k->pv_instr * (c->bc / 16), k->softmax,
	    2.0 * c->bc * c->d / k->copy_bytes_per_clk, k->copy_latency);
	for (x = 0; x < run->ncta; x++)
		printf("  block %d (row block %d, %d tiles): %.0f clocks, "
		    "%.2f us, %.0f clocks a key tile\n", x, run->cta_i[x],
		    run->cta_nt[x], run->cta_end[x],
		    run->cta_end[x] / (1e3 * k->clock_ghz),
		    run->cta_nt[x] > 0 ? run->cta_end[x] / run->cta_nt[x] : 0);
	for (x = 0; x < run->ncta; x++)
		busy += run->cta_nt[x] * c->consumers *
		    (k->qk_instr * (c->d / 16) + k->pv_instr * (c->bc / 16));
	if (span > 0)
		printf("tensor core busy: %.0f%% of the blocks' time\n",
		    100 * busy / (span * run->ncta));
	pipeline_occupancy(run, occ);
	printf("stage occupancy (a landed tile not yet released):");
	for (s = 0; s < c->stages; s++)
		printf(" %d: %.0f%%", s, 100 * occ[s]);
	printf("\n");
	bad = pipeline_check(run->ev, run->nev, c->consumers,
	    c->pingpong && c->overlap, why, sizeof why);
	if (bad != 0)
		return util_error(err, errlen, "the model broke %d of its own "
		    "dependencies: %s", bad, why);
	printf("dependencies: all hold (%zu events)\n", run->nev);
	printf("\nwhat if (the same problem, nominal durations):\n");
	for (x = 0; x < (int)(sizeof rows / sizeof rows[0]); x++) {
		v = *c;
		v.stages = rows[x].stages;
		v.pingpong = rows[x].pp;
		v.overlap = rows[x].ov;
		if (v.stages > PIPELINE_MAX_STAGES)
			continue;
		if ((t = pipeline_what_if(&v, err, errlen)) < 0)
			return -1;
		printf("  %-28s %10.0f clocks  %6.3fx\n", rows[x].what, t,
		    span > 0 ? t / span : 0);
	}
	return 0;
}

int
cmd_pipeline(int argc, char **argv)
{
	struct pipeline_args a = { 0, 0, 2, 0, 0, NULL };
	struct pipeline_config cfg;
	struct pipeline_costs k;
	struct pipeline_run run;
	struct pipeline_json_meta meta;
	struct options o;
	char err[512];
	int rc, d, tq, tk;

	rc = cmd_parse("pipeline", pipeline_usage, argc, argv, OPT_PROBLEM,
	    pipeline_entries, &a, &o);
	if (rc >= 0) {
		options_free(&o);
		return rc;
	}
	/* a path that cannot be written is refused before any work */
	if (a.output != NULL) {
		struct outfile_set check;

		outfile_init(&check);
		if (outfile_add(&check, a.output, err, sizeof err) < 0)
			goto fail;
		outfile_abort(&check);
	}
	if (!a.model) {
		fprintf(stderr, "flashstep pipeline: say --model (the recording "
		    "of the kernel is not built yet)\n");
		options_free(&o);
		return CMD_USAGE;
	}
	d = options_given(&o, "d") ? o.spec.d : 128;
	tq = options_given(&o, "tq") ? o.spec.tq : 1024;
	tk = options_given(&o, "tk") ? o.spec.tk : 1024;
	if (pipeline_config_default(&cfg, d, tq, tk, o.spec.causal, err,
	    sizeof err) != 0)
		goto fail;
	if (a.stages > 0)
		cfg.stages = (int)a.stages;
	cfg.pingpong = !a.no_pingpong && !a.no_overlap;
	cfg.overlap = !a.no_overlap;
	cfg.ctas = (int)a.ctas;
	pipeline_costs_nominal(&cfg, &k);
	if (pipeline_model(&cfg, &k, &run, err, sizeof err) != 0)
		goto fail;
	if (pipeline_summary(&run, err, sizeof err) != 0) {
		pipeline_run_free(&run);
		goto fail;
	}
	if (a.output != NULL) {
		memset(&meta, 0, sizeof meta);
		snprintf(meta.source, sizeof meta.source, "model (nominal H200 "
		    "durations), flashstep %s", PACKAGE_VERSION);
		meta.cfg = cfg;
		meta.clock_ghz = k.clock_ghz;
		if (pipeline_json_write(a.output, run.ev, run.nev, &meta, err,
		    sizeof err) != 0) {
			pipeline_run_free(&run);
			goto fail;
		}
		printf("wrote %s: %zu events\n", a.output, run.nev);
	}
	pipeline_run_free(&run);
	options_free(&o);
	return CMD_OK;
fail:
	fprintf(stderr, "flashstep pipeline: %s\n", err);
	options_free(&o);
	return CMD_USAGE;
}
