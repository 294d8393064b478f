/*
 * cmd_pipeline_fit.c - the pipeline model fed with a recording's
 * durations, beside the recording (--durations) and in the what-if
 * table beside the recordings of each variant (--what-if); see
 * cmd_pipeline_fit.h.
 */
#include "config.h"

#include "cmd.h"
#include "cmd_pipeline_fit.h"
#include "app/pipeline_json.h"
#include "model/pipeline.h"
#include "model/pipeline_fit.h"
#include "model/util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A recording read whole: its events, its configuration, its figures. */
struct fit_rec {
	struct pipeline_json_meta meta;
	struct pipeline_event *ev;
	size_t nev;
	struct pipeline_figures fig;
};

static int
fit_read(const char *path, struct fit_rec *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	if (pipeline_json_read(path, &r->ev, &r->nev, &r->meta, err,
	    errlen) != 0)
		return -1;
	if (r->nev == 0 || pipeline_figures(r->ev, r->nev, r->meta.cfg.consumers,
	    &r->fig, err, errlen) != 0) {
		if (r->nev == 0)
			util_error(err, errlen, "%s: a trace with no events",
			    path);
		free(r->ev);
		r->ev = NULL;
		return -1;
	}
	return 0;
}

/* The fed model of cfg (its blocks as many as the recording's) into
 * run and fig; 0, or -1 with err set. */
static int
fit_model(const struct pipeline_config *cfg, const struct pipeline_costs *k,
    int ncta, struct pipeline_run *run, struct pipeline_figures *fig,
    char *err, size_t errlen)
{
	struct pipeline_config c = *cfg;

	c.ctas = ncta;
	if (pipeline_model(&c, k, run, err, errlen) != 0)
		return -1;
	if (pipeline_figures(run->ev, run->nev, c.consumers, fig, err,
	    errlen) != 0) {
		pipeline_run_free(run);
		return -1;
	}
	return 0;
}

static double
fit_min_stamp(const struct pipeline_costs *k)
{
	double m = INFINITY;
	int x;

	for (x = 0; x < PIPELINE_NKINDS; x++)
		m = fmin(m, k->stamp[x]);
	return m;
}

static double
fit_max_stamp(const struct pipeline_costs *k)
{
	double m = 0;
	int x;

	for (x = 0; x < PIPELINE_NKINDS; x++)
		m = fmax(m, k->stamp[x]);
	return m;
}

static void
fit_print_costs(const struct pipeline_config *c, const struct pipeline_costs *k)
{
	printf("durations (clocks): softmax %.0f (mask +%.0f), rescale %.0f, "
	    "epilogue %.0f, issue S %.0f, issue P V %.0f;\n", k->softmax,
	    k->mask, k->rescale, k->epilogue, k->issue_qk, k->issue_pv);
	printf("  the recording's own: a pause of %.0f to %.0f after a step "
	    "(%.0f after a softmax), a wait on a barrier %.0f at least, %.0f "
	    "before the first copy; Q lands %.0f after its copy;\n",
	    fit_min_stamp(k), fit_max_stamp(k), k->stamp[PIPELINE_SOFTMAX],
	    k->poll, k->prologue,
	    k->copy_latency + 2.0 * c->br * c->d / k->copy_bytes_per_clk);
	printf("  not seen by a recording, nominal: S %.0f and P V %.0f on the "
	    "tensor core, %.0f bytes a clock from L2\n",
	    k->qk_instr * (c->d / 16), k->pv_instr * (c->bc / 16),
	    k->copy_bytes_per_clk);
}

int
pipeline_fit_run(const char *path, const char *output)
{
	struct fit_rec rec;
	struct pipeline_costs k;
	struct pipeline_run run;
	struct pipeline_figures fig;
	struct pipeline_json_meta meta;
	char err[512];
	int b, out = 0;

	if (fit_read(path, &rec, err, sizeof err) != 0 ||
	    pipeline_fit_costs(rec.ev, rec.nev, &rec.meta.cfg, &k, err,
	    sizeof err) != 0) {
		free(rec.ev);
		fprintf(stderr, "flashstep pipeline: %s%s%s\n",
		    strstr(err, path) == NULL ? path : "",
		    strstr(err, path) == NULL ? ": " : "", err);
		return CMD_USAGE;
	}
	k.clock_ghz = rec.meta.clock_ghz > 0 ? rec.meta.clock_ghz : k.clock_ghz;
	if (fit_model(&rec.meta.cfg, &k, rec.fig.ncta, &run, &fig, err,
	    sizeof err) != 0) {
		free(rec.ev);
		fprintf(stderr, "flashstep pipeline: %s: %s\n", path, err);
		return CMD_USAGE;
	}
	printf("the model fed with the durations of %s (%s)\n", path,
	    rec.meta.source);
	printf("d = %d, %d consumers, %d stages, ping-pong %s, overlap %s; "
	    "Tq = %d, Tk = %d%s; %d blocks\n", rec.meta.cfg.d,
	    rec.meta.cfg.consumers, rec.meta.cfg.stages,
	    rec.meta.cfg.pingpong ? "on" : "off",
	    rec.meta.cfg.overlap ? "on" : "off", rec.meta.cfg.tq,
	    rec.meta.cfg.tk, rec.meta.cfg.causal ? ", causal" : "",
	    rec.fig.ncta);
	fit_print_costs(&rec.meta.cfg, &k);
	printf("clocks (model / recorded):\n");
	for (b = 0; b < rec.fig.ncta && b < fig.ncta; b++) {
		printf("  block %d (row block %d, %d tiles): %.0f / %.0f = "
		    "%.3f", b, run.cta_i[b], run.cta_nt[b], fig.block[b],
		    rec.fig.block[b], fig.block[b] / rec.fig.block[b]);
		out += !pipeline_fit_within(fig.block[b], rec.fig.block[b],
		    PIPELINE_FIT_MARGIN_BLOCK);
		if (!isnan(rec.fig.tile[b]) && !isnan(fig.tile[b])) {
			printf("; a key tile %.0f / %.0f = %.3f", fig.tile[b],
			    rec.fig.tile[b], fig.tile[b] / rec.fig.tile[b]);
			out += !pipeline_fit_within(fig.tile[b], rec.fig.tile[b],
			    PIPELINE_FIT_MARGIN_TILE);
		}
		printf("\n");
	}
	printf("median: a block %.0f / %.0f = %.3f", fig.block_median,
	    rec.fig.block_median, fig.block_median / rec.fig.block_median);
	if (rec.fig.ntile > 0 && fig.ntile > 0)
		printf(", a key tile %.0f / %.0f = %.3f", fig.tile_median,
		    rec.fig.tile_median, fig.tile_median / rec.fig.tile_median);
	printf("\n");
	if (out == 0)
		printf("within the margins (a block %.2fx, a key tile %.2fx "
		    "either way): every block and key tile\n",
		    PIPELINE_FIT_MARGIN_BLOCK, PIPELINE_FIT_MARGIN_TILE);
	else
		printf("outside the margins (a block %.2fx, a key tile %.2fx "
		    "either way): %d figure%s\n", PIPELINE_FIT_MARGIN_BLOCK,
		    PIPELINE_FIT_MARGIN_TILE, out, out == 1 ? "" : "s");
	if (output != NULL) {
		memset(&meta, 0, sizeof meta);
		snprintf(meta.source, sizeof meta.source, "model (durations of "
		    "%.180s), flashstep %s", path, PACKAGE_VERSION);
		meta.cfg = run.cfg;
		meta.clock_ghz = k.clock_ghz;
		if (pipeline_json_write(output, run.ev, run.nev, &meta, err,
		    sizeof err) != 0) {
			fprintf(stderr, "flashstep pipeline: %s\n", err);
			pipeline_run_free(&run);
			free(rec.ev);
			return CMD_USAGE;
		}
		printf("wrote %s: %zu events\n", output, run.nev);
	}
	pipeline_run_free(&run);
	free(rec.ev);
	return out == 0 ? CMD_OK : CMD_FAILED;
}

static int
fit_same(const struct pipeline_config *a, const struct pipeline_config *b)
{
	return a->d == b->d && a->bc == b->bc && a->consumers == b->consumers &&
	    a->tq == b->tq && a->tk == b->tk && a->causal == b->causal &&
	    a->stages == b->stages && a->overlap == b->overlap &&
	    (a->pingpong && a->overlap) == (b->pingpong && b->overlap);
}

/* The kernel part of a recording's file name: up to its first '-'
 * ("wgmma-d128.json": "wgmma-"), or the whole name. */
static size_t
fit_kernel_len(const char *base)
{
	const char *dash = strchr(base, '-');

	return dash != NULL ? (size_t)(dash - base) + 1 : strlen(base);
}

/* The folder part of path ("." for none) into dir. */
static void
fit_folder(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/*
 * A recording of cfg in dir other than skip's file: read into r and its
 * name into name; 1 found, 0 none.  Files that are not traces are passed
 * over: the folder may hold anything.
 */
static int
fit_find(const char *dir, const char *skip, const struct pipeline_config *cfg,
    struct fit_rec *r, char *name, size_t len)
{
	const char *base = strrchr(skip, '/') != NULL ? strrchr(skip, '/') + 1 :
	    skip;
	struct dirent *de;
	DIR *d = opendir(dir);
	char path[4400], err[512];
	int found = 0;

	if (d == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		const size_t n = strlen(de->d_name);

		/* the same kernel's: its recordings are named by it */
		if (n < 6 || strcmp(de->d_name + n - 5, ".json") != 0 ||
		    strcmp(de->d_name, base) == 0 ||
		    strncmp(de->d_name, base, fit_kernel_len(base)) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (fit_read(path, r, err, sizeof err) != 0)
			continue;
		if (strncmp(r->meta.source, "recording", 9) == 0 &&
		    fit_same(&r->meta.cfg, cfg)) {
			snprintf(name, len, "%s", de->d_name);
			found = 1;
		} else {
			free(r->ev);
			r->ev = NULL;
		}
	}
	closedir(d);
	return found;
}

int
pipeline_what_if_run(const char *path)
{
	struct fit_rec rec, other;
	struct pipeline_costs k;
	struct pipeline_config c;
	struct pipeline_figures fig;
	char err[512], dir[4096], name[256];
	size_t v;

	if (fit_read(path, &rec, err, sizeof err) != 0 ||
	    pipeline_fit_costs(rec.ev, rec.nev, &rec.meta.cfg, &k, err,
	    sizeof err) != 0) {
		free(rec.ev);
		fprintf(stderr, "flashstep pipeline: %s%s%s\n",
		    strstr(err, path) == NULL ? path : "",
		    strstr(err, path) == NULL ? ": " : "", err);
		return CMD_USAGE;
	}
	fit_folder(path, dir, sizeof dir);
	printf("what if, with the durations of %s (d = %d, Tq = %d, Tk = %d%s, "
	    "%d blocks):\n", path, rec.meta.cfg.d, rec.meta.cfg.tq,
	    rec.meta.cfg.tk, rec.meta.cfg.causal ? ", causal" : "",
	    rec.fig.ncta);
	printf("  (clocks, medians over the blocks; recorded: a recording of "
	    "that variant in %s)\n", dir);
	printf("  %-27s %25s   %25s\n", "", "a key tile", "a block");
	printf("  %-27s %8s %8s %7s   %8s %8s %7s\n", "variant", "model",
	    "recorded", "ratio", "model", "recorded", "ratio");
	for (v = 0; v < PIPELINE_NVARIANTS; v++) {
		const struct pipeline_figures *rf = NULL;
		int have;

		pipeline_variant((int)v, &rec.meta.cfg, &c);
		if (c.stages > PIPELINE_MAX_STAGES)
			continue;
		if (pipeline_fit_model(&c, &k, rec.fig.ncta, &fig, err,
		    sizeof err) != 0) {
			free(rec.ev);
			fprintf(stderr, "flashstep pipeline: %s\n", err);
			return CMD_USAGE;
		}
		have = v == 0 ? 1 : fit_find(dir, path, &c, &other, name,
		    sizeof name);
		if (have)
			rf = v == 0 ? &rec.fig : &other.fig;
		printf("  %-27s %8.0f", pipeline_variant_name((int)v),
		    fig.tile_median);
		if (rf != NULL && rf->ntile > 0)
			printf(" %8.0f %7.3f", rf->tile_median,
			    fig.tile_median / rf->tile_median);
		else
			printf(" %8s %7s", "-", "-");
		printf("   %8.0f", fig.block_median);
		if (rf != NULL)
			printf(" %8.0f %7.3f", rf->block_median,
			    fig.block_median / rf->block_median);
		else
			printf(" %8s %7s", "-", "-");
		if (v > 0 && have)
			printf("  (%s)", name);
		printf("\n");
		if (v > 0 && have)
			free(other.ev);
	}
	free(rec.ev);
	return CMD_OK;
}
