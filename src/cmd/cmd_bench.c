/*
 * cmd_bench.c - `flashstep bench`: figures, not tests.
 *
 * --cpu (the default) times the tiled simulator against standard float32
 * attention that materializes the whole score matrix, on the same
 * problem, and measures the peak memory of each in a child process of
 * its own (the children alternate, so a noisy machine hurts both alike);
 * then times random seeks of the step-through engine.  --gpu hands over
 * to the GPU benchmark.
 */
#include "config.h"

#include "cmd.h"
#include "model/inputs.h"
#include "model/memory.h"
#include "app/options.h"
#include "model/reference.h"
#include "model/sim.h"
#include "model/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static const char bench_usage[] =
    "usage: flashstep bench [--cpu | --gpu] [options]\n"
    "\n"
    "--cpu (default): at Tq = Tk = SIZE, d = 64, Br = Bc = 64, fp32, times the\n"
    "tiled simulator against naive float32 attention that holds the whole\n"
    "score matrix, each in its own process, and reports their peak memory;\n"
    "then times random seeks at Tq = Tk = SEEK-SIZE.\n"
    "--gpu: the GPU benchmark (see flashstep bench --gpu --help).\n"
    "--steps: the time per step as the problem grows (bench --steps --help).\n"
    "--roofline: the kernels on the H200's roofline (bench --roofline --help).\n"
    "--fp8: FP8's error, FlashAttention 3's experiment (bench --fp8 --help).\n"
    "\n";

struct bench_args {
	int cpu, gpu;
	long size, seek_size, repeat, seeks;
};

static int
set_cpu(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct bench_args *)ctx)->cpu, v, err, errlen);
}

#define LONG_SETTER(fn, field, name, max)				\
static int								\
fn(void *ctx, const char *v, char *err, size_t errlen)			\
{									\
	return options_int(name, v, 1, max,				\
	    &((struct bench_args *)ctx)->field, err, errlen);		\
}
LONG_SETTER(set_size, size, "size", 65536)
LONG_SETTER(set_seek_size, seek_size, "seek-size", 65536)
LONG_SETTER(set_repeat, repeat, "repeat", 100)
LONG_SETTER(set_seeks, seeks, "seeks", 1000000)

static const struct options_entry bench_entries[] = {
	{ "cpu", NULL, "the CPU benchmark (default)", set_cpu },
	{ "gpu", NULL, "the GPU benchmark (see bench --gpu --help)", set_cpu },
	{ "size", "N", "Tq = Tk for the timing runs (default 4096)", set_size },
	{ "seek-size", "N", "Tq = Tk for the seeks (default 8192)", set_seek_size },
	{ "repeat", "N", "timing runs of each (default 3)", set_repeat },
	{ "seeks", "N", "random seeks timed (default 500)", set_seeks },
	{ NULL, NULL, NULL, NULL },
};

enum bench_kind { BENCH_BASE, BENCH_NAIVE, BENCH_TILED, BENCH_SEEKS };

static const char *const bench_kind_names[] = {
	[BENCH_BASE] = "the inputs alone",
	[BENCH_NAIVE] = "the naive float32 run",
	[BENCH_TILED] = "the tiled run",
	[BENCH_SEEKS] = "the seek benchmark",
};

/* What each kind holds besides the inputs (memory.h). */
static const unsigned bench_kind_parts[] = {
	[BENCH_BASE] = 0,
	[BENCH_NAIVE] = MEMORY_NAIVE,
	[BENCH_TILED] = MEMORY_SIM | MEMORY_RUN,
	[BENCH_SEEKS] = MEMORY_SIM | MEMORY_CHECKPOINTS,
};

/* The benchmark problem: normal inputs, d = 64, tiles of 64; its memory
 * is checked for what `kind` will hold. */
static int
bench_problem(enum bench_kind kind, long t, struct problem *p, char *err,
    size_t errlen)
{
	struct problem_spec spec;

	problem_spec_init(&spec);
	spec.tq = spec.tk = (int)t;
	spec.d = spec.dv = 64;
	spec.input = INPUTS_NORMAL;
	spec.br = spec.bc = 64;
	spec.memory_parts = bench_kind_parts[kind];
	return problem_build(&spec, p, err, errlen);
}

/* What a child tells its parent: the seconds, or why it failed. */
struct bench_report {
	double secs;
	char err[240];
};

/* In a child: build the problem, run one algorithm, report its seconds
 * through fd.  BENCH_BASE only builds: the memory every run shares. */
static void
bench_child(enum bench_kind kind, long t, int fd)
{
	struct tiling tiling = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct bench_report rep;
	struct problem p;
	struct sim *sim = NULL;
	float *o = NULL, *lse = NULL;
	double t0;
	int built = 0;

	memset(&rep, 0, sizeof rep);
	rep.secs = -1.0;
	if (bench_problem(kind, t, &p, rep.err, sizeof rep.err) != 0)
		goto out;
	built = 1;
	o = util_calloc((size_t)p.tq * p.dv, sizeof *o, "O", rep.err,
	    sizeof rep.err);
	lse = util_calloc((size_t)p.tq, sizeof *lse, "lse", rep.err,
	    sizeof rep.err);
	if (o == NULL || lse == NULL)
		goto out;
	t0 = util_now();
	if (kind == BENCH_NAIVE) {
		if (reference_naive_f32(&p, o, rep.err, sizeof rep.err) != 0)
			goto out;
	} else if (kind == BENCH_TILED) {
		sim = sim_new(&p, &tiling, &rule, rep.err, sizeof rep.err);
		if (sim == NULL)
			goto out;
		if (sim_run(sim, NULL, NULL, o, lse) != 0) {
			snprintf(rep.err, sizeof rep.err, "out of memory");
			goto out;
		}
	}
	rep.secs = util_now() - t0;
out:
	/* Freed before _exit, though the process ends: a leak checker
	 * following the children (valgrind --trace-children) then sees
	 * the real leaks, not these. */
	sim_free(sim);
	free(o);
	free(lse);
	if (built)
		problem_free(&p);
	if (write(fd, &rep, sizeof rep) != (ssize_t)sizeof rep)
		_exit(1);
	_exit(rep.secs < 0);
}

/* Runs bench_child in a fresh process; its seconds and peak RSS, or -1
 * with the reason in err. */
static int
bench_fork(enum bench_kind kind, long t, double *secs, double *rss_bytes,
    char *err, size_t errlen)
{
	struct bench_report rep;
	struct rusage ru;
	int fds[2], status;
	pid_t pid;

	if (pipe(fds) != 0)
		return util_error(err, errlen, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return util_error(err, errlen, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		bench_child(kind, t, fds[1]);
	}
	close(fds[1]);
	if (read(fds[0], &rep, sizeof rep) != (ssize_t)sizeof rep) {
		rep.secs = -1.0;
		rep.err[0] = '\0';
	}
	close(fds[0]);
	if (wait4(pid, &status, 0, &ru) != pid)
		return util_error(err, errlen, "%s at Tq = Tk = %ld: wait: %s",
		    bench_kind_names[kind], t, strerror(errno));
	if (WIFSIGNALED(status))
		return util_error(err, errlen, "%s at Tq = Tk = %ld was killed by "
		    "signal %d (%s)%s", bench_kind_names[kind], t, WTERMSIG(status),
		    strsignal(WTERMSIG(status)), WTERMSIG(status) == SIGKILL ?
		    "; out of memory, perhaps (the kernel's OOM killer sends it)" : "");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || rep.secs < 0)
		return util_error(err, errlen, "%s at Tq = Tk = %ld failed: %s",
		    bench_kind_names[kind], t, rep.err[0] ? rep.err :
		    "no reason given");
	*secs = rep.secs;
	*rss_bytes = (double)ru.ru_maxrss * 1024.0;
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *x, long n)
{
	qsort(x, (size_t)n, sizeof *x, cmp_double);
	return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static int
bench_runs(const struct bench_args *a, char *err, size_t errlen)
{
	double *tn, *tt, rss[3] = { 0, 0, 0 }, secs, bytes, mn, mt;
	char b0[32], b1[32], b2[32];
	long rep;
	int rc = -1;

	tn = util_calloc((size_t)a->repeat, sizeof *tn, "timings", err, errlen);
	tt = util_calloc((size_t)a->repeat, sizeof *tt, "timings", err, errlen);
	if (tn == NULL || tt == NULL)
		goto out;
	if (bench_fork(BENCH_BASE, a->size, &secs, &rss[0], err, errlen) != 0)
		goto out;
	for (rep = 0; rep < a->repeat; rep++) {
		/* Alternate which goes first, so drift hurts both alike. */
		int first = rep % 2 ? BENCH_TILED : BENCH_NAIVE, k;
		for (k = 0; k < 2; k++) {
			enum bench_kind kind = k == 0 ? first :
			    (first == BENCH_TILED ? BENCH_NAIVE : BENCH_TILED);
			if (bench_fork(kind, a->size, &secs, &bytes, err, errlen) != 0)
				goto out;
			if (kind == BENCH_NAIVE) {
				tn[rep] = secs;
				rss[1] = bytes > rss[1] ? bytes : rss[1];
			} else {
				tt[rep] = secs;
				rss[2] = bytes > rss[2] ? bytes : rss[2];
			}
		}
	}
	mn = median(tn, a->repeat);
	mt = median(tt, a->repeat);
	printf("CPU, Tq = Tk = %ld, d = dv = 64, Br = Bc = 64, fp32, fa2, "
	    "normal inputs; median of %ld runs each, alternating\n",
	    a->size, a->repeat);
	printf("  %-34s %10s %14s\n", "", "time (s)", "peak RSS");
	printf("  %-34s %10s %14s\n", "inputs alone (no attention)", "-",
	    util_bytes(rss[0], b0, sizeof b0));
	printf("  %-34s %10.3f %14s\n", "naive float32 (whole S in memory)", mn,
	    util_bytes(rss[1], b1, sizeof b1));
	printf("  %-34s %10.3f %14s\n", "tiled simulator", mt,
	    util_bytes(rss[2], b2, sizeof b2));
	printf("  tiled / naive: time %.2fx, peak memory %.3fx\n", mt / mn,
	    rss[2] / rss[1]);
	rc = 0;
out:
	free(tn);
	free(tt);
	return rc;
}

static int
bench_seeks(const struct bench_args *a, char *err, size_t errlen)
{
	struct tiling tiling = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct inputs_rng rng;
	struct problem p;
	struct sim *sim = NULL;
	double *ms = NULL, t0, first;
	long i, n = a->seeks, steps;
	int o, rc = -1;

	if (bench_problem(BENCH_SEEKS, a->seek_size, &p, err, errlen) != 0)
		return -1;
	ms = util_calloc((size_t)n, sizeof *ms, "timings", err, errlen);
	if (ms == NULL)
		goto out;
	for (o = 0; o < 2; o++) {
		tiling.order = o == 0 ? ORDER_FA2 : ORDER_FA1;
		sim = sim_new(&p, &tiling, &rule, err, errlen);
		if (sim == NULL)
			goto out;
		steps = sim_steps(sim);
		inputs_rng_seed(&rng, 42);
		for (i = 0; i < n; i++) {
			long k = (long)(inputs_rng_next(&rng) % (uint64_t)steps);
			t0 = util_now();
			sim_seek(sim, k, SIM_PHASE_LAST);
			ms[i] = (util_now() - t0) * 1e3;
		}
		first = ms[0];
		printf("%s seeks at Tq = Tk = %ld (d = 64, Br = Bc = 64, %ld steps), "
		    "%ld random targets:\n  first %.2f ms, median %.2f ms, ",
		    schedule_order_name(tiling.order), a->seek_size, steps, n, first,
		    median(ms, n));
		printf("90th percentile %.2f ms, max %.2f ms\n", ms[(n * 9) / 10],
		    ms[n - 1]);
		sim_free(sim);
		sim = NULL;
	}
	rc = 0;
out:
	sim_free(sim);
	free(ms);
	problem_free(&p);
	return rc;
}

/* Every child's problem and parts against the memory limit. */
static int
bench_check_memory(const struct bench_args *a, char *err, size_t errlen)
{
	struct memory_job job;
	enum bench_kind k;
	char why[512];

	for (k = BENCH_BASE; k <= BENCH_SEEKS; k++) {
		memset(&job, 0, sizeof job);
		job.tq = job.tk = (int)(k == BENCH_SEEKS ? a->seek_size : a->size);
		job.d = job.dv = 64;
		job.br = job.bc = 64;
		job.parts = bench_kind_parts[k];
		if (memory_check(&job, why, sizeof why) != 0)
			return util_error(err, errlen, "%s (%s, --%s %d): %.400s",
			    bench_kind_names[k], k == BENCH_SEEKS ? "seeks" : "timing",
			    k == BENCH_SEEKS ? "seek-size" : "size", job.tq, why);
	}
	return 0;
}

int
cmd_bench(int argc, char **argv)
{
	struct bench_args a = { 0, 0, 4096, 8192, 3, 500 };
	struct options o;
	char err[512];
	int i, rc;

	/* --roofline places the recorded figures on the roofline
	 * (cmd_roofline.c), with or without --gpu. */
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--roofline") == 0)
			return cmd_roofline(argc, argv);
	/* --gpu hands the whole command line to the GPU benchmark. */
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--gpu") == 0)
			return cmd_bench_gpu(argc, argv);
		else if (strcmp(argv[i], "--steps") == 0)
			return cmd_bench_steps(argc, argv);
		else if (strcmp(argv[i], "--fp8") == 0)
			return cmd_bench_fp8(argc, argv);
	rc = cmd_parse("bench", bench_usage, argc, argv, 0, bench_entries, &a,
	    &o);
	options_free(&o);
	if (rc >= 0)
		return rc;
	/* Each child checks its own memory too; this refuses a size that
	 * cannot run before any time is spent on the others. */
	if (bench_check_memory(&a, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep bench: %s\n", err);
		return CMD_USAGE;
	}
	if (bench_runs(&a, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep bench: %s\n", err);
		return CMD_FAILED;
	}
	if (bench_seeks(&a, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep bench: the seek benchmark failed: %s\n",
		    err);
		return CMD_FAILED;
	}
	return CMD_OK;
}
