/*
 * cmd_pipeline.c - `flashstep pipeline`: the wgmma kernel's pipeline,
 * modelled (--model) or recorded on the GPU (--record; --kernel fast
 * records the mma.sync kernel, a row per warp), as a Chrome trace and a
 * summary; --check holds a trace against the model's dependencies (a
 * warp recording against its kernel's own, model/pipeline_warps.h).
 */
#include "config.h"

#include "cmd.h"
#include "app/outfile.h"
#include "app/pipeline_json.h"
#include "cmd_pipeline_fit.h"
#include "model/pipeline.h"
#include "model/pipeline_fit.h"
#include "model/pipeline_warps.h"
#include "model/util.h"
#include "ui/ui_pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(HAVE_CUDA) && defined(HAVE_SM90A)
#include "gpucmd.h"
#include "gpu/wgmma_record.h"
#define PIPELINE_CAN_RECORD 1
#endif
#ifdef HAVE_CUDA
#include "gpucmd.h"
#include "gpu/fast_record.h"
#define PIPELINE_CAN_RECORD_FAST 1
#endif

static const char pipeline_usage[] =
    "usage: flashstep pipeline --model [--stages N] [--no-pingpong]\n"
    "                          [--no-overlap] [--ctas N] [--output FILE]\n"
    "                          [problem options]\n"
    "       flashstep pipeline --record [--kernel wgmma|fast] [--no-pingpong]\n"
    "                          [--ctas N] [--cost] [--label TEXT]\n"
    "                          [--output FILE] [problem options]\n"
    "       flashstep pipeline --model --durations FILE [--output FILE]\n"
    "       flashstep pipeline --what-if FILE\n"
    "       flashstep pipeline --check FILE [--ignore-turns]\n"
    "       flashstep pipeline --view FILE\n"
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
    "\n"
    "--record runs the kernel's recording build on the GPU (an H100 or\n"
    "H200): one thread of each role stamps its steps with the cycle counter\n"
    "and the global timer; the events are checked against the model's\n"
    "dependencies and written the same way.  --kernel fast records the\n"
    "mma.sync kernel instead (any CUDA GPU): one row per warp, checked\n"
    "against that kernel's own rules.  --cost also times the recording\n"
    "build against the timed one on 16 heads of the shape.\n"
    "--model --durations FILE runs the model with the durations of the\n"
    "recording FILE (its configuration, its blocks) and prints it beside\n"
    "the recording, block by block and key tile by key tile (exit 1 when\n"
    "one is outside the margins flashstep(1) states).  --what-if FILE prints\n"
    "what one stage, one more, no ping-pong or no overlap would cost with\n"
    "those durations, beside a recording of that variant in FILE's folder.\n"
    "--check FILE reads a trace this command wrote and checks it\n"
    "(--ignore-turns: the ring's rules only, not the ping-pong order).\n"
    "--view FILE steps through a trace in the terminal, event by event.\n"
    "\n";

struct pipeline_args {
	int model;
	long stages, ctas;
	int no_pingpong, no_overlap;
	const char *output;
	int record, cost, ignore_turns;
	const char *kernel, *check, *label, *view;
	const char *durations, *what_if;	/* cmd_pipeline_fit.c */
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

static int
set_record(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct pipeline_args *)ctx)->record, v, err,
	    errlen);
}

static int
set_cost(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct pipeline_args *)ctx)->cost, v, err,
	    errlen);
}

static int
set_ignore_turns(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct pipeline_args *)ctx)->ignore_turns, v,
	    err, errlen);
}

static int
set_kernel(void *ctx, const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "wgmma") != 0 && strcmp(v, "fast") != 0)
		return util_error(err, errlen, "--kernel must be wgmma or fast "
		    "(the kernels with a recording build), not '%s'", v);
	((struct pipeline_args *)ctx)->kernel = v;
	return 0;
}

static int
set_check(void *ctx, const char *v, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	((struct pipeline_args *)ctx)->check = v;
	return 0;
}

static int
set_view(void *ctx, const char *v, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	((struct pipeline_args *)ctx)->view = v;
	return 0;
}

static int
set_label(void *ctx, const char *v, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	((struct pipeline_args *)ctx)->label = v;
	return 0;
}

static int
set_durations(void *ctx, const char *v, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	((struct pipeline_args *)ctx)->durations = v;
	return 0;
}

static int
set_what_if(void *ctx, const char *v, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	((struct pipeline_args *)ctx)->what_if = v;
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
	{ "record", NULL, "record the kernel on the GPU", set_record },
	{ "kernel", "NAME", "the kernel to record: wgmma (default) or fast",
	    set_kernel },
	{ "cost", NULL, "--record: time the recording build against the timed "
	    "one", set_cost },
	{ "label", "TEXT", "--record: add TEXT (a commit, say) to the trace's "
	    "source", set_label },
	{ "check", "FILE", "check a trace against the dependencies", set_check },
	{ "view", "FILE", "step through a trace in the terminal", set_view },
	{ "durations", "FILE", "--model: the durations of the recording FILE, "
	    "beside it", set_durations },
	{ "what-if", "FILE", "the what-if table with FILE's durations, beside "
	    "the recordings", set_what_if },
	{ "ignore-turns", NULL, "--check, --record: the ring's rules only, not "
	    "the ping-pong order", set_ignore_turns },
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
	for (x = 0; x < PIPELINE_NVARIANTS; x++) {
		pipeline_variant(x, c, &v);
		if (v.stages > PIPELINE_MAX_STAGES)
			continue;
		if ((t = pipeline_what_if(&v, err, errlen)) < 0)
			return -1;
		printf("  %-28s %10.0f clocks  %6.3fx\n", x == PIPELINE_AS_IS ?
		    "as modelled" : pipeline_variant_name(x), t,
		    span > 0 ? t / span : 0);
	}
	return 0;
}

/* --check FILE: 0 when every dependency holds, 1 when one does not. */
static int
pipeline_check_file(const char *path, int ignore_turns)
{
	struct pipeline_json_meta m;
	struct pipeline_event *ev;
	size_t nev;
	char err[512];
	int bad;

	if (pipeline_json_read(path, &ev, &nev, &m, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep pipeline: %s\n", err);
		return CMD_USAGE;
	}
	if (pipeline_json_warps(&m))
		bad = pipeline_check_warps(ev, nev, m.cfg.consumers, err,
		    sizeof err);
	else
		bad = pipeline_check(ev, nev, m.cfg.consumers,
		    m.cfg.pingpong && m.cfg.overlap && !ignore_turns, err,
		    sizeof err);
	free(ev);
	if (bad != 0) {
		printf("%s: %d broken dependenc%s; the first: %s\n", path, bad,
		    bad == 1 ? "y" : "ies", err);
		return CMD_FAILED;
	}
	printf("%s: %zu events (%s), every dependency holds%s\n", path,
	    nev, m.source, ignore_turns && !pipeline_json_warps(&m) ?
	    " (the turns not checked)" : "");
	return CMD_OK;
}

/* --view FILE: the viewer on a trace this command wrote. */
static int
pipeline_view_file(const char *path)
{
	struct pipeline_json_meta m;
	struct pipeline_event *ev;
	size_t nev;
	char err[512];
	int rc;

	if (pipeline_json_read(path, &ev, &nev, &m, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep pipeline: %s\n", err);
		return CMD_USAGE;
	}
	/* a warp recording is written warp by warp: step through its time */
	if (pipeline_json_warps(&m))
		pipeline_warps_sort(ev, nev);
	rc = ui_pipeline_run(ev, nev, &m, err, sizeof err);
	free(ev);
	if (rc != 0) {
		fprintf(stderr, "flashstep pipeline: %s\n", err);
		return CMD_USAGE;
	}
	return CMD_OK;
}

#ifdef PIPELINE_CAN_RECORD
/*
 * The recorded events of run as the model's: each block's clocks from
 * its first stamp, the blocks placed against each other by the global
 * timer (converted at the clock the two counters gave together, into
 * *ghz).  Returns the events (malloc'd, *nev) or NULL with err set.
 */
static struct pipeline_event *
pipeline_from_recording(const struct wgmma_rec_run *run,
    const struct pipeline_config *cfg, size_t *nev, double *ghz,
    double *block_clk, char *err, size_t errlen)
{
	const int nroles = 1 + run->consumers;
	struct pipeline_event *ev;
	long long g_first = 0;
	double cyc = 0, ns = 0;
	size_t n = 0;
	int b, r, x;

	*nev = 0;
	ev = calloc((size_t)run->blocks * nroles * run->cap + 1, sizeof *ev);
	if (ev == NULL) {
		util_error(err, errlen, "out of memory (the recording)");
		return NULL;
	}
	/* the clock: cycles over nanoseconds, every block's first to last */
	for (b = 0; b < run->blocks; b++) {
		long long c0 = 0, c1 = 0, g0 = 0, g1 = 0;
		int any = 0;

		for (r = 0; r < nroles; r++) {
			const int at = b * nroles + r;
			if (run->n[at] > run->cap) {
				free(ev);
				util_error(err, errlen, "block %d role %d wrote %d "
				    "events, room for %d: some were lost", b, r,
				    run->n[at], run->cap);
				return NULL;
			}
			for (x = 0; x < run->n[at]; x++) {
				const struct wgmma_rec_event *e =
				    &run->ev[(size_t)at * run->cap + x];
				if (!any || e->c0 < c0) { c0 = e->c0; g0 = e->g0; }
				if (!any || e->c1 > c1) { c1 = e->c1; g1 = e->g1; }
				any = 1;
			}
		}
		if (any && g1 > g0) {
			cyc += (double)(c1 - c0);
			ns += (double)(g1 - g0);
		}
		if (any && (b == 0 || g0 < g_first))
			g_first = g0;
	}
	*ghz = ns > 0 ? cyc / ns : 1.98;
	for (b = 0; b < run->blocks; b++) {
		long long c0 = 0, g0 = 0, c1 = 0;
		int any = 0, i, nt;

		pipeline_item(cfg, b, &i, &nt);
		for (r = 0; r < nroles; r++)
			for (x = 0; x < run->n[b * nroles + r]; x++) {
				const struct wgmma_rec_event *e = &run->ev[
				    (size_t)(b * nroles + r) * run->cap + x];
				if (!any || e->c0 < c0) { c0 = e->c0; g0 = e->g0; }
				if (!any || e->c1 > c1)
					c1 = e->c1;
				any = 1;
			}
		block_clk[b] = any ? (double)(c1 - c0) : 0;
		for (r = 0; r < nroles; r++)
			for (x = 0; x < run->n[b * nroles + r]; x++) {
				const struct wgmma_rec_event *e = &run->ev[
				    (size_t)(b * nroles + r) * run->cap + x];
				struct pipeline_event *o = &ev[n++];
				const double off = (double)(g0 - g_first) * *ghz;

				o->cta = b;
				o->role = r == 0 ? PIPELINE_PRODUCER :
				    PIPELINE_CONSUMER + r - 1;
				o->kind = e->kind;
				o->wg = r - 1;
				o->i = i;
				o->j = e->j;
				o->stage = e->stage;
				o->round = e->round;
				o->begin = off + (double)(e->c0 - c0);
				o->end = off + (double)(e->c1 - c0);
			}
	}
	*nev = n;
	return ev;
}

static int
pipeline_record(const struct pipeline_args *a, const struct options *o,
    struct pipeline_config *cfg, char *err, size_t errlen)
{
	struct wgmma_rec_run run, cost;
	struct pipeline_json_meta meta;
	struct pipeline_event *ev = NULL;
	struct pipeline_costs k;
	struct pipeline_run model;
	char dev[128], why[256];
	double ghz, *block_clk = NULL;
	size_t nev;
	int rc, bad, b, variant;

	if ((rc = gpucmd_device("pipeline", dev, sizeof dev)) != CMD_OK)
		return rc;
	if (a->no_overlap || a->stages > 0) {
		util_error(err, errlen, "the recording build has the kernel's "
		    "own stages and overlap (--no-overlap and --stages are "
		    "for --model)");
		return CMD_USAGE;
	}
	variant = 0;
	if (!cfg->pingpong) {
		if (cfg->d != 128) {
			util_error(err, errlen, "--no-pingpong is recorded at "
			    "d = 128 only");
			return CMD_USAGE;
		}
		variant = 1;
	}
	if (wgmma_record(cfg->d, variant, 1, 1, cfg->tq, cfg->tk, cfg->causal,
	    cfg->ctas, 0, o->spec.seed, &run, err, errlen) != 0)
		return CMD_FAILED;
	cfg->ctas = run.blocks;
	if ((block_clk = calloc((size_t)run.blocks, sizeof *block_clk)) == NULL ||
	    (ev = pipeline_from_recording(&run, cfg, &nev, &ghz, block_clk, err,
	    errlen)) == NULL) {
		if (block_clk == NULL)
			util_error(err, errlen, "out of memory");
		rc = CMD_FAILED;
		goto done;
	}
	printf("wgmma recording on %s: d = %d, Br = %d (%d consumers), "
	    "Bc = %d, %d stages, ping-pong %s\n", dev, cfg->d, run.br,
	    run.consumers, run.bc, run.stages, run.pingpong ? "on" : "off");
	printf("problem: Tq = %d, Tk = %d%s; %d block%s recorded, %zu events; "
	    "clock %.3f GHz (cycles over the global timer)\n", cfg->tq,
	    cfg->tk, cfg->causal ? ", causal" : "", run.blocks,
	    run.blocks == 1 ? "" : "s", nev, ghz);
	pipeline_costs_nominal(cfg, &k);
	k.clock_ghz = ghz;
	if (pipeline_model(cfg, &k, &model, err, errlen) != 0) {
		rc = CMD_FAILED;
		goto done;
	}
	for (b = 0; b < run.blocks; b++) {
		printf("  block %d (row block %d, %d tiles): recorded %.0f "
		    "clocks, modelled %.0f (%.2fx)\n", b, model.cta_i[b],
		    model.cta_nt[b], block_clk[b], model.cta_end[b],
		    block_clk[b] > 0 ? model.cta_end[b] / block_clk[b] : 0);
	}
	pipeline_run_free(&model);
	bad = pipeline_check(ev, nev, run.consumers, run.pingpong &&
	    !a->ignore_turns, why, sizeof why);
	if (bad != 0)
		printf("dependencies: %d broken; the first: %s\n", bad, why);
	else
		printf("dependencies: all hold (%zu events)\n", nev);
	if (a->cost) {
		if (wgmma_record(cfg->d, variant, 16, 1, cfg->tq, cfg->tk,
		    cfg->causal, 1, 20, o->spec.seed, &cost, err, errlen) != 0) {
			rc = CMD_FAILED;
			goto done;
		}
		free(cost.ev);
		free(cost.n);
		if (cost.timed_ms > 0)
			printf("cost of recording (16 heads, every block "
			    "recording): timed build %.4f ms, recording build "
			    "%.4f ms (%+.1f%%)\n", cost.timed_ms, cost.record_ms,
			    100 * (cost.record_ms / cost.timed_ms - 1));
		else
			printf("cost of recording: recording build %.4f ms (the "
			    "timed build has no such variant)\n", cost.record_ms);
	}
	if (a->output != NULL) {
		memset(&meta, 0, sizeof meta);
		snprintf(meta.source, sizeof meta.source, "recording on %s, "
		    "flashstep %s%s%s", dev, PACKAGE_VERSION,
		    a->label != NULL ? ", " : "",
		    a->label != NULL ? a->label : "");
		meta.cfg = *cfg;
		meta.cfg.consumers = run.consumers;
		meta.cfg.stages = run.stages;
		meta.cfg.pingpong = run.pingpong;
		meta.clock_ghz = ghz;
		if (pipeline_json_write(a->output, ev, nev, &meta, err,
		    errlen) != 0) {
			rc = CMD_USAGE;
			goto done;
		}
		printf("wrote %s: %zu events\n", a->output, nev);
	}
	rc = bad != 0 ? CMD_FAILED : CMD_OK;
done:
	free(ev);
	free(block_clk);
	free(run.ev);
	free(run.n);
	return rc;
}
#endif

#ifdef PIPELINE_CAN_RECORD_FAST
/*
 * The mma.sync kernel's recorded events as the model's: role w is warp
 * w, block b of the one head recorded is row block tr - 1 - b, each
 * block's clocks from its first stamp, the blocks placed against each
 * other by the global timer (at the clock the two counters gave
 * together, into *ghz).  Returns the events (malloc'd, *nev) or NULL
 * with err set.
 */
static struct pipeline_event *
pipeline_from_fast_recording(const struct fast_rec_run *run, size_t *nev,
    double *ghz, double *block_clk, int *block_nt, char *err,
    size_t errlen)
{
	const int nw = run->warps;
	struct pipeline_event *ev;
	long long g_first = 0;
	double cyc = 0, ns = 0;
	size_t n = 0;
	int b, w, x, pass, have_first = 0;

	*nev = 0;
	*ghz = 1.98;	/* (no block with two stamps apart: a nominal rate) */
	ev = calloc((size_t)run->blocks * nw * run->cap + 1, sizeof *ev);
	if (ev == NULL) {
		util_error(err, errlen, "out of memory (the recording)");
		return NULL;
	}
	/* pass 0: the clock and the first stamp; pass 1: the events */
	for (pass = 0; pass < 2; pass++) {
		for (b = 0; b < run->blocks; b++) {
			long long c0 = 0, c1 = 0, g0 = 0, g1 = 0;
			int any = 0, nt = 0;

			for (w = 0; w < nw; w++) {
				const int at = b * nw + w;
				if (run->n[at] > run->cap) {
					free(ev);
					util_error(err, errlen, "block %d warp %d "
					    "wrote %d events, room for %d: some "
					    "were lost", b, w, run->n[at],
					    run->cap);
					return NULL;
				}
				for (x = 0; x < run->n[at]; x++) {
					const struct wgmma_rec_event *e =
					    &run->ev[(size_t)at * run->cap + x];
					if (!any || e->c0 < c0) {
						c0 = e->c0;
						g0 = e->g0;
					}
					if (!any || e->c1 > c1) {
						c1 = e->c1;
						g1 = e->g1;
					}
					if (e->kind == PIPELINE_ISSUE_QK &&
					    e->j + 1 > nt)
						nt = e->j + 1;
					any = 1;
				}
			}
			if (pass == 0) {
				if (any && g1 > g0) {
					cyc += (double)(c1 - c0);
					ns += (double)(g1 - g0);
				}
				if (any && (!have_first || g0 < g_first)) {
					g_first = g0;
					have_first = 1;
				}
				continue;
			}
			block_clk[b] = any ? (double)(c1 - c0) : 0;
			block_nt[b] = nt;
			for (w = 0; w < nw; w++)
				for (x = 0; x < run->n[b * nw + w]; x++) {
					const struct wgmma_rec_event *e = &run->ev[
					    (size_t)(b * nw + w) * run->cap + x];
					struct pipeline_event *o = &ev[n++];
					const double off = (double)(g0 - g_first) *
					    *ghz;

					o->cta = b;
					o->role = w;
					o->kind = e->kind;
					o->wg = w;
					o->i = run->tr - 1 - b;
					o->j = e->j;
					o->stage = e->stage;
					o->round = e->round;
					o->begin = off + (double)(e->c0 - c0);
					o->end = off + (double)(e->c1 - c0);
				}
		}
		if (pass == 0 && ns > 0)
			*ghz = cyc / ns;
	}
	*nev = n;
	return ev;
}

/* --record --kernel fast: the mma.sync kernel's recording build. */
static int
pipeline_record_fast(const struct pipeline_args *a, const struct options *o,
    struct pipeline_config *cfg, char *err, size_t errlen)
{
	struct fast_rec_run run, cost;
	struct pipeline_json_meta meta;
	struct pipeline_event *ev = NULL;
	char dev[128], why[256];
	double ghz, *block_clk = NULL;
	int *block_nt = NULL;
	size_t nev;
	int rc, bad, b;

	if ((rc = gpucmd_device("pipeline", dev, sizeof dev)) != CMD_OK)
		return rc;
	if (fast_record(cfg->d, 1, 1, cfg->tq, cfg->tk, cfg->causal,
	    cfg->ctas, 0, o->spec.seed, &run, err, errlen) != 0)
		return CMD_FAILED;
	cfg->br = run.br;
	cfg->bc = run.bc;
	cfg->consumers = run.warps;
	cfg->stages = 2;
	cfg->pingpong = cfg->overlap = 0;
	cfg->ctas = run.blocks;
	if ((block_clk = calloc((size_t)run.blocks, sizeof *block_clk)) ==
	    NULL || (block_nt = calloc((size_t)run.blocks,
	    sizeof *block_nt)) == NULL) {
		util_error(err, errlen, "out of memory");
		rc = CMD_FAILED;
		goto done;
	}
	if ((ev = pipeline_from_fast_recording(&run, &nev, &ghz, block_clk,
	    block_nt, err, errlen)) == NULL) {
		rc = CMD_FAILED;
		goto done;
	}
	printf("fast (mma.sync) recording on %s: d = %d, Br = %d, Bc = %d, "
	    "%d warps, 2 K/V buffers\n", dev, cfg->d, run.br, run.bc,
	    run.warps);
	printf("problem: Tq = %d, Tk = %d%s; %d block%s recorded, %zu events; "
	    "clock %.3f GHz (cycles over the global timer)\n", cfg->tq,
	    cfg->tk, cfg->causal ? ", causal" : "", run.blocks,
	    run.blocks == 1 ? "" : "s", nev, ghz);
	for (b = 0; b < run.blocks; b++)
		printf("  block %d (row block %d, SM %d, %d tiles): %.0f "
		    "clocks, %.0f a key tile\n", b, run.tr - 1 - b, run.sm[b],
		    block_nt[b], block_clk[b], block_nt[b] > 0 ?
		    block_clk[b] / block_nt[b] : 0);
	bad = pipeline_check_warps(ev, nev, run.warps, why, sizeof why);
	if (bad != 0)
		printf("dependencies: %d broken; the first: %s\n", bad, why);
	else
		printf("dependencies: all hold (%zu events)\n", nev);
	if (a->cost) {
		if (fast_record(cfg->d, 16, 1, cfg->tq, cfg->tk, cfg->causal, 1,
		    20, o->spec.seed, &cost, err, errlen) != 0) {
			rc = CMD_FAILED;
			goto done;
		}
		printf("cost of recording (16 heads, every block recording): "
		    "timed build %.4f ms, recording build %.4f ms (%+.1f%%)\n",
		    cost.timed_ms, cost.record_ms,
		    100 * (cost.record_ms / cost.timed_ms - 1));
		fast_record_free(&cost);
	}
	if (a->output != NULL) {
		memset(&meta, 0, sizeof meta);
		snprintf(meta.source, sizeof meta.source, "recording on %s, "
		    "flashstep %s%s%s", dev, PACKAGE_VERSION,
		    a->label != NULL ? ", " : "",
		    a->label != NULL ? a->label : "");
		snprintf(meta.kernel, sizeof meta.kernel, "fast");
		meta.cfg = *cfg;
		meta.clock_ghz = ghz;
		meta.have_sm = 1;
		for (b = 0; b < run.blocks && b < PIPELINE_JSON_MAX_SM; b++)
			meta.sm[b] = run.sm[b];
		if (pipeline_json_write(a->output, ev, nev, &meta, err,
		    errlen) != 0) {
			rc = CMD_USAGE;
			goto done;
		}
		printf("wrote %s: %zu events\n", a->output, nev);
	}
	rc = bad != 0 ? CMD_FAILED : CMD_OK;
done:
	free(ev);
	free(block_clk);
	free(block_nt);
	fast_record_free(&run);
	return rc;
}
#endif

/*
 * The forms of the command: each uses a few options and every other one
 * given is refused, not ignored (a --softcap or a --window the model
 * never saw would leave a summary that looks like theirs).
 */
enum pipeline_form {
	PIPELINE_MODEL,		/* --model, nominal durations */
	PIPELINE_RECORD,	/* --record (--kernel wgmma) */
	PIPELINE_RECORD_FAST,	/* --record --kernel fast */
	PIPELINE_DURATIONS,	/* --model --durations FILE */
	PIPELINE_WHAT_IF,	/* --what-if FILE */
	PIPELINE_CHECK,		/* --check FILE */
	PIPELINE_VIEW		/* --view FILE */
};

#define PF(f)		(1u << (f))
#define PF_RECORDS	(PF(PIPELINE_RECORD) | PF(PIPELINE_RECORD_FAST))
#define PF_RUNS		(PF(PIPELINE_MODEL) | PF_RECORDS)

/* Which forms use an option; an option not listed (most problem
 * options) is used by none. */
static const struct {
	const char *name;
	unsigned forms;
} pipeline_uses[] = {
	/* the problem: one head's shape and the causal mask, whose tiles
	 * the kernel skips (model/pipeline.c runs the same skip) */
	{ "d", PF_RUNS },
	{ "tq", PF_RUNS },
	{ "tk", PF_RUNS },
	{ "causal", PF_RUNS },
	{ "dtype", PF_RUNS },	/* its values: pipeline_dtype_refused */
	{ "seed", PF_RECORDS },
	{ "model", PF(PIPELINE_MODEL) | PF(PIPELINE_DURATIONS) },
	{ "record", PF_RECORDS },
	{ "kernel", PF_RECORDS },
	{ "cost", PF_RECORDS },
	{ "label", PF_RECORDS },
	{ "stages", PF(PIPELINE_MODEL) | PF(PIPELINE_RECORD) },
	{ "no-pingpong", PF(PIPELINE_MODEL) | PF(PIPELINE_RECORD) },
	{ "no-overlap", PF(PIPELINE_MODEL) | PF(PIPELINE_RECORD) },
	{ "ctas", PF_RUNS },
	{ "output", PF_RUNS | PF(PIPELINE_DURATIONS) },
	{ "ignore-turns", PF(PIPELINE_CHECK) | PF(PIPELINE_RECORD) },
	{ "check", PF(PIPELINE_CHECK) },
	{ "view", PF(PIPELINE_VIEW) },
	{ "durations", PF(PIPELINE_DURATIONS) },
	{ "what-if", PF(PIPELINE_WHAT_IF) },
};

static int
pipeline_named(const char *name, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(name, *list) == 0)
			return 1;
	return 0;
}

/* Is name one of the problem options (options.h's OPT_PROBLEM)? */
static int
pipeline_problem_option(const char *name)
{
	const struct options_entry *e = options_group_entries(OPT_PROBLEM);

	for (; e->name != NULL; e++)
		if (strcmp(e->name, name) == 0)
			return 1;
	return 0;
}

/* Why the form f has no use for the option name (one that it does not
 * use): the words after "--name: ". */
static const char *
pipeline_why_unused(const char *name, enum pipeline_form f)
{
	static const char *const modifiers[] = { "softcap", "alibi",
	    "alibi-slopes", "dropout", "dropout-seed", "dropout-offset", NULL };
	static const char *const paged[] = { "page-size", "block-table", NULL };
	static const char *const fp8[] = { "fp8-block", "hadamard", "fp8-bug",
	    NULL };
	static const char *const inputs[] = { "seed", "input", "q", "k", "v",
	    "scale", NULL };
	static const char *const ring[] = { "stages", "no-pingpong",
	    "no-overlap", NULL };

	switch (f) {
	case PIPELINE_CHECK:
		return "--check FILE checks the trace as it was written (only "
		    "--ignore-turns changes the check)";
	case PIPELINE_VIEW:
		return "--view FILE shows the trace as it was written";
	case PIPELINE_DURATIONS:
	case PIPELINE_WHAT_IF:
		if (pipeline_named(name, ring) || strcmp(name, "ctas") == 0)
			return f == PIPELINE_WHAT_IF ? "--what-if runs the "
			    "recording's own configuration and blocks (its "
			    "table is the variants)" : "--durations runs the "
			    "recording's own configuration and blocks "
			    "(--what-if FILE prints the variants)";
		if (strcmp(name, "output") == 0)
			return "--what-if prints a table; --output is for "
			    "--model and --record";
		if (pipeline_problem_option(name))
			return f == PIPELINE_WHAT_IF ? "--what-if runs the "
			    "recording's own problem (its shape, mask and "
			    "inputs)" : "--durations runs the recording's own "
			    "problem (its shape, mask and inputs)";
		break;
	default:
		break;
	}
	if (pipeline_named(name, modifiers))
		return "the pipeline times the wgmma kernel's tiles as they "
		    "are; it takes no score modifier (softcap, ALiBi, dropout)";
	if (strcmp(name, "mask-bug") == 0)
		return "the pipeline runs no mask rule to break (the causal "
		    "tiles it skips are the kernel's)";
	if (strcmp(name, "window") == 0)
		return "the pipeline skips the tiles of --causal only; a "
		    "window's band of tiles is not modelled";
	if (pipeline_named(name, paged))
		return "the pipeline's K and V are one tensor; it has no paged "
		    "cache";
	if (pipeline_named(name, fp8))
		return "the pipeline models and records the 16-bit kernel; "
		    "its FP8 build is not modelled";
	if (pipeline_named(name, inputs))
		return f == PIPELINE_MODEL ? "the model draws no inputs (only "
		    "--record runs them)" : "the recording build draws its own "
		    "inputs (from --seed)";
	if (pipeline_named(name, ring))
		return "--kernel fast records the kernel as it is: two buffers, "
		    "no ping-pong, no overlap (the option is for the wgmma "
		    "kernel)";
	if (strcmp(name, "ignore-turns") == 0)
		return f == PIPELINE_RECORD_FAST ? "the mma.sync kernel's "
		    "warps take no turns; its own rules are checked" : "it is "
		    "for --check and --record";
	if (strcmp(name, "kernel") == 0 || strcmp(name, "cost") == 0 ||
	    strcmp(name, "label") == 0)
		return "it is for --record";
	return "the pipeline has no use for it (it runs the wgmma kernel's "
	    "own tiles on one sequence; give --d, --tq, --tk, --causal)";
}

/* The first option given that form f does not use, refused in one line
 * on stderr; 0 when every one is used. */
static int
pipeline_unused_option(const struct options *o, enum pipeline_form f)
{
	size_t u;
	int i;

	for (i = 0; i < o->ngiven; i++) {
		for (u = 0; u < sizeof pipeline_uses / sizeof *pipeline_uses; u++)
			if (strcmp(o->given[i], pipeline_uses[u].name) == 0)
				break;
		if (u < sizeof pipeline_uses / sizeof *pipeline_uses &&
		    (pipeline_uses[u].forms & PF(f)) != 0)
			continue;
		fprintf(stderr, "flashstep pipeline: --%s: %s\n", o->given[i],
		    pipeline_why_unused(o->given[i], f));
		return -1;
	}
	return 0;
}

/*
 * --dtype: the wgmma kernel takes fp16 or bf16, and the model's costs
 * are the same for both (two bytes an element, one tensor-core rate), so
 * the model takes either; the recording builds run fp16 only.
 */
static int
pipeline_dtype_refused(const struct options *o, enum pipeline_form f)
{
	if (!options_given(o, "dtype"))
		return 0;
	if (o->spec.dtype == DTYPE_FP32) {
		fprintf(stderr, "flashstep pipeline: --dtype fp32: the wgmma "
		    "kernel takes fp16 or bf16\n");
		return -1;
	}
	if (o->spec.dtype == DTYPE_FP8) {
		fprintf(stderr, "flashstep pipeline: --dtype fp8: the "
		    "pipeline models and records the 16-bit kernel; its FP8 "
		    "build is not modelled (it takes fp16 or bf16)\n");
		return -1;
	}
	if (o->spec.dtype == DTYPE_BF16 && f != PIPELINE_MODEL) {
		fprintf(stderr, "flashstep pipeline: --dtype bf16: the "
		    "recording build runs fp16 only\n");
		return -1;
	}
	return 0;
}

int
cmd_pipeline(int argc, char **argv)
{
	struct pipeline_args a = { 0, 0, 0, 0, 0, NULL, 0, 0, 0, NULL, NULL,
	    NULL, NULL, NULL, NULL };
	struct pipeline_config cfg;
	struct pipeline_costs k;
	struct pipeline_run run;
	struct pipeline_json_meta meta;
	struct options o;
	enum pipeline_form form;
	char err[512];
	int rc, d, tq, tk;

	rc = cmd_parse("pipeline", pipeline_usage, argc, argv, OPT_PROBLEM,
	    pipeline_entries, &a, &o);
	if (rc >= 0) {
		options_free(&o);
		return rc;
	}
	if (a.durations != NULL && !a.model) {
		fprintf(stderr, "flashstep pipeline: --durations is for "
		    "--model\n");
		options_free(&o);
		return CMD_USAGE;
	}
	if (a.model + a.record + (a.check != NULL) + (a.view != NULL) +
	    (a.what_if != NULL) != 1) {
		fprintf(stderr, "flashstep pipeline: say %s of --model, "
		    "--record, --what-if FILE, --check FILE or --view FILE\n",
		    a.model + a.record + (a.check != NULL) + (a.view != NULL) +
		    (a.what_if != NULL) ? "only one" : "one");
		options_free(&o);
		return CMD_USAGE;
	}
	form = a.check != NULL ? PIPELINE_CHECK : a.view != NULL ? PIPELINE_VIEW :
	    a.what_if != NULL ? PIPELINE_WHAT_IF : a.durations != NULL ?
	    PIPELINE_DURATIONS : !a.record ? PIPELINE_MODEL : a.kernel != NULL &&
	    strcmp(a.kernel, "fast") == 0 ? PIPELINE_RECORD_FAST :
	    PIPELINE_RECORD;
	if (pipeline_unused_option(&o, form) != 0 ||
	    pipeline_dtype_refused(&o, form) != 0) {
		options_free(&o);
		return CMD_USAGE;
	}
	if (a.check != NULL) {
		options_free(&o);
		return pipeline_check_file(a.check, a.ignore_turns);
	}
	if (a.view != NULL) {
		options_free(&o);
		return pipeline_view_file(a.view);
	}
	if (a.what_if != NULL) {
		options_free(&o);
		return pipeline_what_if_run(a.what_if);
	}
	/* a path that cannot be written is refused before any work */
	if (a.output != NULL) {
		struct outfile_set check;

		outfile_init(&check);
		if (outfile_add(&check, a.output, err, sizeof err) < 0)
			goto fail;
		outfile_abort(&check);
	}
	if (a.durations != NULL) {
		options_free(&o);
		return pipeline_fit_run(a.durations, a.output);
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
	cfg.ctas = a.ctas > 0 ? (int)a.ctas : 2;
	if (form == PIPELINE_RECORD_FAST) {
#ifdef PIPELINE_CAN_RECORD_FAST
		(void)k;
		err[0] = '\0';
		rc = pipeline_record_fast(&a, &o, &cfg, err, sizeof err);
		if (err[0] != '\0')
			fprintf(stderr, "flashstep pipeline: %s\n", err);
		options_free(&o);
		return rc;
#else
		fprintf(stderr, "flashstep pipeline: --record --kernel fast "
		    "needs CUDA, which this build does not have\n");
		options_free(&o);
		return CMD_NO_CUDA;
#endif
	}
	if (a.record) {
#ifdef PIPELINE_CAN_RECORD
		(void)k;
		err[0] = '\0';
		rc = pipeline_record(&a, &o, &cfg, err, sizeof err);
		if (err[0] != '\0')
			fprintf(stderr, "flashstep pipeline: %s\n", err);
		options_free(&o);
		return rc;
#else
		fprintf(stderr, "flashstep pipeline: --record needs the wgmma "
		    "kernel, which this build does not have (no CUDA, or an "
		    "nvcc that cannot build sm_90a)\n");
		options_free(&o);
		return CMD_NO_CUDA;
#endif
	}
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
