/*
 * cmd_roofline.c - `flashstep bench --roofline`: every kernel of the
 * table and torch's backends placed on the H200's roofline, prefill and
 * decode shapes both.
 *
 * The achieved FLOP/s are the figures recorded on the H200 (rows of
 * doc/performance.md's tables, copied into lessons/h200-roofline.txt and
 * held to the document by tests/h200_figures.test), each labelled with
 * the machine and the commit of its table; the intensities are
 * flashstep's own counts (src/model/roofline.c over traffic.c) for the
 * same shapes.  With --gpu on a machine with a GPU, the four forward
 * kernels are also timed live (gpu_ladder, as `bench --gpu --ladder`
 * times them) on one prefill shape and placed on the same roofs, above
 * the recorded table.  The figure under the table is the view's
 * (src/ui/ui_roofline.c), printed line by line.
 */
#include "config.h"

#include "cmd.h"
#include "gpu/gpu.h"
#include "lesson/lesson_path.h"
#include "model/problem.h"
#include "model/roofline.h"
#include "model/util.h"
#include "ui/ui_roofline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOFLINE_FIGURES "h200-roofline.txt"
#define ROOFLINE_MAX_ROWS 48

static const char roofline_usage[] =
    "usage: flashstep bench [--gpu] --roofline [--figures FILE]\n"
    "The kernels and torch's backends on the H200's roofline: intensity\n"
    "(FLOPs a byte, flashstep's counts) against the FLOP/s recorded on\n"
    "the H200 (from FILE, by default h200-roofline.txt beside the lessons).\n"
    "--gpu, where a GPU is: the four forward kernels timed live first.\n";

/* What a table's kernel computes on and how it tiles. */
struct roofline_kernel {
	const char *name;
	enum roofline_pass pass;
	int tensor;		/* on the tensor cores (else float32 FMA) */
	int fp32_storage;	/* Q, K, V, O in float32 whatever the dtype */
	int br64, bc64, br128, bc128;	/* tiles at d = 64 and d = 128; 0: not ours */
};

static const struct roofline_kernel roofline_kernels[] = {
	{ "naive", ROOFLINE_STANDARD, 0, 1, 0, 0, 0, 0 },
	{ "teaching", ROOFLINE_TILED, 0, 1, 64, 64, 64, 64 },
	{ "fast", ROOFLINE_TILED, 1, 0, 128, 64, 128, 32 },
	{ "wgmma", ROOFLINE_TILED, 1, 0, 192, 128, 128, 128 },
	{ "torch FA2", ROOFLINE_TILED, 1, 0, 0, 0, 0, 0 },
	{ "torch cuDNN", ROOFLINE_TILED, 1, 0, 0, 0, 0, 0 },
	{ "teaching bwd", ROOFLINE_TILED_BWD, 0, 1, 64, 64, 64, 64 },
	{ "fast bwd", ROOFLINE_TILED_BWD, 1, 0, 64, 128, 64, 128 },
	{ "torch FA2 bwd", ROOFLINE_TILED_BWD, 1, 0, 0, 0, 0, 0 },
	{ "torch cuDNN bwd", ROOFLINE_TILED_BWD, 1, 0, 0, 0, 0, 0 },
	{ "decode", ROOFLINE_TILED, 1, 0, 0, 0, 0, 0 },
	{ "torch FA2 dec", ROOFLINE_TILED, 1, 0, 0, 0, 0, 0 },
	{ "torch cuDNN dec", ROOFLINE_TILED, 1, 0, 0, 0, 0, 0 },
};
enum { K_NAIVE, K_TEACH, K_FAST, K_WGMMA, K_FA2, K_CUDNN, K_TBWD, K_FBWD,
    K_FA2BWD, K_CUDNNBWD, K_DEC, K_FA2DEC, K_CUDNNDEC };

struct roofline_row {
	int kernel;
	const char *commit;
	struct roofline_shape shape;
	double achieved;	/* FLOP/s, as recorded */
	double time_s;		/* decode: the call's time (FLOP/s from our count) */
	struct roofline_count count;
};

struct roofline_figures {
	char machine[128];
	char commit[5][32];	/* bench, fwd, bwd, fastbwd, decode */
	struct roofline_row row[ROOFLINE_MAX_ROWS];
	int n;
};

enum { C_BENCH, C_FWD, C_BWD, C_FASTBWD, C_DECODE };
static const char *const roofline_tables[] = { "roof-bench", "roof-fwd",
    "roof-bwd", "roof-fastbwd", "roof-decode" };

static int
roofline_num(const char *cell, double *x)
{
	char *end;

	errno = 0;
	*x = strtod(cell, &end);
	return end != cell && errno == 0 && (*end == '\0' || *end == '%') ? 0 : -1;
}

static struct roofline_row *
roofline_add(struct roofline_figures *f, int kernel, int table)
{
	struct roofline_row *r;

	if (f->n >= ROOFLINE_MAX_ROWS)
		return NULL;
	r = &f->row[f->n++];
	memset(r, 0, sizeof *r);
	r->kernel = kernel;
	r->commit = f->commit[table];
	return r;
}

/* A prefill shape: B = 32768 / T, H = 16, as the bench runs them. */
static void
roofline_prefill(struct roofline_row *r, enum dtype dt, int d, int t)
{
	const struct roofline_kernel *k = &roofline_kernels[r->kernel];

	r->shape.pass = k->pass;
	r->shape.heads = r->shape.kv_heads = 16;
	r->shape.batch = 32768 / t;
	r->shape.tq = r->shape.tk = t;
	r->shape.d = d;
	r->shape.dtype = k->fp32_storage ? DTYPE_FP32 : dt;
	r->shape.br = d == 64 ? k->br64 : k->br128;
	r->shape.bc = d == 64 ? k->bc64 : k->bc128;
}

/* One table row of the figures file into rows; -1 when it is not one. */
static int
roofline_parse_row(struct roofline_figures *f, int table, char **c, int n)
{
	static const int fwd[] = { K_FAST, K_WGMMA, K_FA2, K_CUDNN };
	static const int fbwd[] = { K_FBWD, -1, K_FA2BWD, K_CUDNNBWD };
	struct roofline_row *r;
	enum dtype dt = DTYPE_FP16;
	double x[8];
	int i, d, t, g;

	switch (table) {
	case C_BENCH:	/* dtype d T BxH causal naive-ms naive-TF teach-ms teach-TF ... */
		if (n < 9 || strcmp(c[4], "no") != 0 || dtype_parse(c[0], &dt) != 0 ||
		    roofline_num(c[1], &x[0]) || roofline_num(c[2], &x[1]) ||
		    roofline_num(c[6], &x[2]) || roofline_num(c[8], &x[3]))
			return -1;
		for (i = 0; i < 2; i++) {
			if ((r = roofline_add(f, i == 0 ? K_NAIVE : K_TEACH, table)) == NULL)
				return -1;
			roofline_prefill(r, dt, (int)x[0], (int)x[1]);
			r->achieved = x[2 + i] * 1e12;
		}
		return 0;
	case C_FWD:	/* dtype d T causal fast wgmma FA2 cuDNN ... */
		if (n < 8 || strcmp(c[3], "no") != 0 || dtype_parse(c[0], &dt) != 0 ||
		    roofline_num(c[1], &x[0]) || roofline_num(c[2], &x[1]))
			return -1;
		for (i = 0; i < 4; i++) {
			if (roofline_num(c[4 + i], &x[2]) != 0 ||
			    (r = roofline_add(f, fwd[i], table)) == NULL)
				return -1;
			roofline_prefill(r, dt, (int)x[0], (int)x[1]);
			r->achieved = x[2] * 1e12;
		}
		return 0;
	case C_BWD:	/* d T mask fwd-ms fwd-TF bwd-ms bwd-TF ratio (fp16 inputs) */
		if (n < 7 || strcmp(c[2], "none") != 0 || roofline_num(c[0], &x[0]) ||
		    roofline_num(c[1], &x[1]) || roofline_num(c[6], &x[2]) ||
		    (r = roofline_add(f, K_TBWD, table)) == NULL)
			return -1;
		roofline_prefill(r, DTYPE_FP16, (int)x[0], (int)x[1]);
		r->achieved = x[2] * 1e12;
		return 0;
	case C_FASTBWD:	/* dtype T mask ours ordered flash cuDNN ... (d = 128) */
		if (n < 7 || strcmp(c[2], "none") != 0 || dtype_parse(c[0], &dt) != 0 ||
		    roofline_num(c[1], &x[0]))
			return -1;
		for (i = 0; i < 4; i++) {
			if (fbwd[i] < 0)
				continue;
			if (roofline_num(c[3 + i], &x[1]) != 0 ||
			    (r = roofline_add(f, fbwd[i], table)) == NULL)
				return -1;
			roofline_prefill(r, dt, 128, (int)x[0]);
			r->achieved = x[1] * 1e12;
		}
		return 0;
	case C_DECODE:	/* dtype B G Tk us path ranges TB/s of bench flash/ours cuDNN/ours */
		if (n < 12 || dtype_parse(c[0], &dt) != 0 || roofline_num(c[1], &x[0]) ||
		    roofline_num(c[2], &x[1]) || roofline_num(c[3], &x[2]) ||
		    roofline_num(c[4], &x[3]) || roofline_num(c[10], &x[4]) ||
		    roofline_num(c[11], &x[5]))
			return -1;
		for (i = 0; i < 3; i++) {
			if ((r = roofline_add(f, K_DEC + i, table)) == NULL)
				return -1;
			g = (int)x[1];
			t = (int)x[2];
			/* One query row, 32 query heads on G K/V heads, d = 128;
			 * grouped heads packed into one row block. */
			r->shape.pass = ROOFLINE_TILED;
			r->shape.batch = (int)x[0];
			r->shape.heads = 32;
			r->shape.kv_heads = g;
			r->shape.tq = 1;
			r->shape.tk = t;
			d = 128;
			r->shape.d = d;
			r->shape.dtype = dt;
			r->shape.br = 32 / g;
			r->shape.bc = 128;
			r->shape.pack_gqa = g != 32;
			r->time_s = x[3] * 1e-6 * (i == 0 ? 1 : x[3 + i]);
		}
		return 0;
	}
	return -1;
}

/* Reads the figures; -1 with err naming the file and line at fault. */
static int
roofline_read(const char *path, struct roofline_figures *f, char *err,
    size_t errlen)
{
	char line[1024], *c[16], *key;
	FILE *fp;
	int n, lineno = 0, t, rc = 0;

	memset(f, 0, sizeof *f);
	if ((fp = fopen(path, "r")) == NULL)
		return util_error(err, errlen, "%s: %s", path, strerror(errno));
	while (rc == 0 && fgets(line, sizeof line, fp) != NULL) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		n = util_table_cells(line, c, 16);
		if (n < 2)
			continue;
		key = c[0];
		if (strcmp(key, "machine") == 0) {
			snprintf(f->machine, sizeof f->machine, "%s", c[1]);
			continue;
		}
		for (t = 0; t < 5; t++) {
			size_t len = strlen(roofline_tables[t]);

			if (strncmp(key, roofline_tables[t], len) != 0)
				continue;
			if (strcmp(key + len, "-commit") == 0)
				snprintf(f->commit[t], sizeof f->commit[t], "%s", c[1]);
			else if (key[len] == '\0' &&
			    roofline_parse_row(f, t, c + 1, n - 1) != 0)
				rc = util_error(err, errlen, "%s:%d: not a %s row "
				    "this command reads", path, lineno, key);
			break;
		}
	}
	fclose(fp);
	if (rc == 0 && (f->n == 0 || f->machine[0] == '\0'))
		rc = util_error(err, errlen, "%s: no machine or no roof-* rows",
		    path);
	for (t = 0; rc == 0 && t < f->n; t++)
		if (f->row[t].commit[0] == '\0')
			rc = util_error(err, errlen, "%s: a %s row without its "
			    "commit", path, roofline_kernels[f->row[t].kernel].name);
	return rc;
}

static double
roofline_peak(const struct roofline_row *r)
{
	return roofline_kernels[r->kernel].tensor ? roofline_h200.tensor :
	    roofline_h200.fp32;
}

/* An intensity in 6 columns: decimals where it is small. */
static void
roofline_intensity(char *buf, size_t len, double in)
{
	snprintf(buf, len, in < 10 ? "%.2f" : "%.0f", in);
}

/* The row's shape in a few words. */
static void
roofline_shape_name(const struct roofline_row *r, char *buf, size_t len)
{
	const struct roofline_shape *s = &r->shape;

	if (s->tq == 1)
		snprintf(buf, len, "dec Tk%d B%d G%d", s->tk, s->batch,
		    s->kv_heads);
	else
		snprintf(buf, len, "%s d%d T%d", dtype_name(s->dtype), s->d,
		    s->tq);
}

/* The table's rows as the figure's points, each its table letter;
 * torch's backends under the others, so that where two rows meet the
 * kernel of this project is the letter shown. */
static int
roofline_plot(const struct roofline_figures *f)
{
	struct ui_roofline_point pt[ROOFLINE_MAX_ROWS];
	struct ui_grid g = { 0 };
	char err[128], line[4 * UI_ROOFLINE_W + 1];
	int i;

	for (i = 0; i < f->n; i++) {
		pt[i].intensity = (double)f->row[i].count.flops /
		    (double)f->row[i].count.hbm_bytes;
		pt[i].flops = f->row[i].achieved;
		pt[i].letter = (char)(i < 26 ? 'A' + i : 'a' + i - 26);
		pt[i].under = strncmp(roofline_kernels[f->row[i].kernel].name,
		    "torch", 5) == 0;
	}
	if (ui_grid_resize(&g, UI_ROOFLINE_W, UI_ROOFLINE_H, err,
	    sizeof err) != 0)
		return -1;
	ui_roofline_draw(&g, 0, 0, &roofline_h200, pt, f->n);
	putchar('\n');
	for (i = 0; i < g.h; i++)
		printf("%s\n", ui_grid_line(&g, i, line, sizeof line));
	ui_grid_free(&g);
	return 0;
}

static int
roofline_print(struct roofline_figures *f)
{
	const struct roofline_machine *m = &roofline_h200;
	char shape[48], tiles[16], hbm[16], over[64] = "";
	int i, t, above = 0;

	printf("Roofline of the %s: tensor %.0f TFLOP/s (dense fp16/bf16),\n"
	    "fp32 %.0f TFLOP/s, HBM3e %.1f TB/s (NVIDIA's datasheet); a copy "
	    "measured %.1f TB/s.\n", m->name, m->tensor / 1e12, m->fp32 / 1e12,
	    m->hbm / 1e12, m->copy / 1e12);
	printf("Ridge points (peak / bandwidth): tensor %.0f FLOPs a byte, "
	    "fp32 %.1f.\n", roofline_ridge(m->tensor, m->hbm),
	    roofline_ridge(m->fp32, m->hbm));
	printf("Achieved: as recorded on an %s,\n", f->machine);
	for (t = 0; t < 5; t++)
		printf("%s%s %s%s", t == 0 ? "the tables at commits: " :
		    t == 3 ? ",\n" : ", ", roofline_tables[t] + 5, f->commit[t],
		    t == 4 ? ".\n" : "");
	printf("Prefill: B = 32768 / T, 16 heads.  Decode (dec): one query "
	    "row, 32 heads on\nG K/V heads, d = 128.  I: FLOPs a byte, "
	    "flashstep's counts (I tile: what the\nkernel's own tiles ask "
	    "for; I HBM: each tensor once).  Roof and bound: at I HBM.\n\n");
	printf("  %-15s %-17s %5s %5s %7s %6s %5s %s\n", "kernel", "shape",
	    "I tile", "I HBM", "TFLOP/s", "roof", "%roof", "bound");
	for (i = 0; i < f->n; i++) {
		struct roofline_row *r = &f->row[i];
		double in = (double)r->count.flops / (double)r->count.hbm_bytes;
		double peak = roofline_peak(r);
		double roof = roofline_roof(peak, m->hbm, in);

		double tin = (double)r->count.flops / (double)r->count.tile_bytes;

		roofline_shape_name(r, shape, sizeof shape);
		if (r->shape.br > 0 || r->shape.pass == ROOFLINE_STANDARD)
			roofline_intensity(tiles, sizeof tiles, tin);
		else
			snprintf(tiles, sizeof tiles, "-");
		roofline_intensity(hbm, sizeof hbm, in);
		if (r->shape.br > 0 && r->achieved > roofline_roof(peak, m->hbm, tin) &&
		    above < 20)
			over[above++] = (char)(i < 26 ? 'A' + i : 'a' + i - 26);
		printf("%c %-15s %-17s %5s %5s %7.2f %6.1f %4.0f%% %s\n",
		    i < 26 ? 'A' + i : 'a' + i - 26,
		    roofline_kernels[r->kernel].name, shape, tiles, hbm,
		    r->achieved / 1e12, roof / 1e12, 100 * r->achieved / roof,
		    roofline_compute_bound(peak, m->hbm, in) ? "compute" :
		    "bandwidth");
	}
	/* Above the roof of its tile count, a kernel cannot be reading
	 * every tile's K and V from HBM: L2 serves the repeats. */
	if (above > 0)
		printf("\nAbove the roof at their tile count (I tile x %.1f TB/s): "
		    "%s.  Their repeated\nreads of K and V come from L2, not "
		    "HBM.\n", m->hbm / 1e12, over);
	return roofline_plot(f);
}

/* The live shape: fp16, d = 64, T = 4096, 16 heads (one batch entry of
 * the ladder's shape), normal inputs. */
#define LIVE_T 4096
#define LIVE_HEADS 16
#define LIVE_REPEAT 10

/* --gpu: the ladder's kernels timed here; 0 (printed, or the GPU is
 * missing and that may be skipped: said so), -1 with err set. */
/* head, text and tail as one paragraph, cut at spaces to 80 columns
 * (the reason a GPU is missing can be long). */
static void
roofline_print_wrapped(const char *head, const char *text, const char *tail)
{
	char buf[1024];
	const char *p = buf;
	int n;

	snprintf(buf, sizeof buf, "%s%s%s", head, text, tail);
	while (*p != '\0') {
		n = (int)strlen(p);
		if (n > 80) {
			n = 80;
			while (n > 0 && p[n] != ' ')
				n--;
			if (n == 0)
				n = 80;
		}
		printf("%.*s\n", n, p);
		p += n;
		while (*p == ' ')
			p++;
	}
	putchar('\n');
}

static int
roofline_live(char *err, size_t errlen)
{
	const struct roofline_machine *m = &roofline_h200;
	struct gpu_ladder_rung rungs[GPU_LADDER_RUNGS];
	struct tiling any = { 64, 64, ORDER_FA2 };
	struct problem_spec spec;
	struct problem p, heads[LIVE_HEADS];
	struct roofline_shape s;
	struct roofline_count c;
	enum gpu_status st;
	char name[128] = "", why[256] = "";
	int h, i, rc;

	st = gpu_available(name, sizeof name, why, sizeof why);
	if (st != GPU_READY) {
		if (!gpu_may_skip(st))
			return util_error(err, errlen, "no live roofline: %s", why);
		roofline_print_wrapped("No live roofline (", why, "): the "
		    "figures recorded on the H200 follow.");
		return 0;
	}
	problem_spec_init(&spec);
	spec.tq = spec.tk = LIVE_T;
	spec.d = spec.dv = 64;
	spec.dtype = DTYPE_FP16;
	spec.input = INPUTS_NORMAL;
	spec.heads = spec.kv_heads = LIVE_HEADS;
	if (problem_build(&spec, &p, err, errlen) != 0)
		return -1;
	for (h = 0; h < LIVE_HEADS; h++)
		problem_head(&p, h, &heads[h]);
	rc = gpu_ladder(heads, LIVE_HEADS, &any, LIVE_REPEAT, rungs, err, errlen);
	if (rc != 0) {
		problem_free(&p);
		return -1;
	}
	printf("Live on this machine (%.60s):\nfp16, d = 64, T = %d, %d "
	    "heads, no mask; the roofs are the H200's.\n", name, LIVE_T,
	    LIVE_HEADS);
	printf("  %-15s %-17s %5s %5s %7s %6s %5s %s\n", "kernel", "shape",
	    "I tile", "I HBM", "TFLOP/s", "roof", "%roof", "bound");
	for (i = 0; i < GPU_LADDER_RUNGS; i++) {
		const struct roofline_kernel *k = &roofline_kernels[K_NAIVE + i];
		double in, tin, peak, roof;

		if (!rungs[i].ran) {
			printf("  %-15s skipped: %.60s\n", k->name, rungs[i].why);
			continue;
		}
		memset(&s, 0, sizeof s);
		s.pass = k->pass;
		s.batch = 1;
		s.heads = s.kv_heads = LIVE_HEADS;
		s.tq = s.tk = LIVE_T;
		s.d = 64;
		s.dtype = k->fp32_storage ? DTYPE_FP32 : DTYPE_FP16;
		s.br = rungs[i].tiling.br;
		s.bc = rungs[i].tiling.bc;
		if (roofline_count(&s, &c, err, errlen) != 0) {
			problem_free(&p);
			return -1;
		}
		in = (double)c.flops / (double)c.hbm_bytes;
		tin = (double)c.flops / (double)c.tile_bytes;
		peak = k->tensor ? m->tensor : m->fp32;
		roof = roofline_roof(peak, m->hbm, in);
		printf("  %-15s fp16 d64 T%-8d %5.0f %5.0f %7.2f %6.1f %4.0f%% %s\n",
		    k->name, LIVE_T, tin, in, rungs[i].tflops, roof / 1e12,
		    100 * rungs[i].tflops * 1e12 / roof,
		    roofline_compute_bound(peak, m->hbm, in) ? "compute" :
		    "bandwidth");
	}
	printf("\n");
	problem_free(&p);
	return 0;
}

/* The figures file beside the lessons (FLASHSTEP_LESSONS first). */
static char *
roofline_find(char *err, size_t errlen)
{
	const char *dirs[16];
	char *path;
	int n, i;
	FILE *fp;

	n = lesson_path_folders(dirs, 16);
	for (i = 0; i < n; i++) {
		path = malloc(strlen(dirs[i]) + sizeof ROOFLINE_FIGURES + 2);
		if (path == NULL)
			break;
		sprintf(path, "%s/%s", dirs[i], ROOFLINE_FIGURES);
		if ((fp = fopen(path, "r")) != NULL) {
			fclose(fp);
			return path;
		}
		free(path);
	}
	util_error(err, errlen, "cannot find %s beside the lessons (give "
	    "--figures FILE)", ROOFLINE_FIGURES);
	return NULL;
}

int
cmd_roofline(int argc, char **argv)
{
	struct roofline_figures *f = NULL;
	char err[512], *path = NULL;
	int i, rc = CMD_FAILED, live = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--roofline") == 0)
			continue;
		if (strcmp(argv[i], "--gpu") == 0) {
			live = 1;
			continue;
		}
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(roofline_usage, stdout);
			return CMD_OK;
		}
		if (strcmp(argv[i], "--figures") == 0 && i + 1 < argc) {
			free(path);
			if ((path = strdup(argv[++i])) == NULL)
				goto nomem;
			continue;
		}
		fprintf(stderr, "flashstep bench: --roofline takes only --gpu and "
		    "--figures FILE, not '%s'\n", argv[i]);
		free(path);
		return CMD_USAGE;
	}
	if (path == NULL && (path = roofline_find(err, sizeof err)) == NULL)
		goto fail;
	if ((f = malloc(sizeof *f)) == NULL)
		goto nomem;
	if (roofline_read(path, f, err, sizeof err) != 0)
		goto fail;
	for (i = 0; i < f->n; i++) {
		struct roofline_row *r = &f->row[i];

		if (roofline_count(&r->shape, &r->count, err, sizeof err) != 0)
			goto fail;
		if (r->time_s > 0)
			r->achieved = (double)r->count.flops / r->time_s;
	}
	if (live && roofline_live(err, sizeof err) != 0)
		goto fail;
	if (roofline_print(f) != 0)
		goto nomem;
	rc = CMD_OK;
	goto done;
nomem:
	snprintf(err, sizeof err, "out of memory");
fail:
	fprintf(stderr, "flashstep bench: %s\n", err);
done:
	free(f);
	free(path);
	return rc;
}
