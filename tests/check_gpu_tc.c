/*
 * check_gpu_tc.c - a tensor-core kernel of the table against the
 * simulator run with --dtype fp16|bf16 and the kernel's own tiling.  One
 * source, two programs: check_gpu_fast (gpu/fast.cu, mma.sync) and
 * check_gpu_wgmma (gpu/wgmma.cu, Hopper's wgmma), CHECK_TC_KERNEL naming
 * the entry (gpu/local.mk).
 *
 * Random ragged problems (Tq != Tk, causal or not, several heads, both
 * dtypes, both d, every tiling the entry lists) agree step by step in m,
 * alpha, l and the numerator (from the kernel's trace build) and in the
 * timed kernel's O and lse, within the tolerance gpu/gpucheck.c derives;
 * causal rows that see no key give O = 0 and lse = -inf; O is within the
 * same rule of the double reference; what the kernel cannot take is
 * refused from its entry in the table, by name, and so is a device its
 * code is not for; the kernel run with bug no-rescale against a correct
 * simulator is caught, so the check is shown able to fail; and with
 * no-rescale on both sides (the kernel's trace build runs it) they
 * agree.  A kernel with GPU_CAP_VARLEN runs packed batches (--seqlens)
 * in one launch, step by step against the simulator's sequences and in
 * O and lse against varlen_reference (the others refuse them).
 *
 * As in check_gpu.c the device probe runs in a forked child (gpuprobe.c):
 * without a device that can run the kernel the program fails, or skips
 * (77) only where the hardware is missing and FLASHSTEP_REQUIRE_GPU is
 * not set.
 */
#include "config.h"

#include "testutil.h"
#include "model/compare.h"
#include "gpu/gpu.h"
#include "gpu/gpucheck.h"
#include "gpuprobe.h"
#include "model/backward.h"
#include "model/merge.h"
#include "model/reference.h"
#include "model/sim.h"
#include "model/varlen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CHECK_TC_KERNEL
#error "CHECK_TC_KERNEL names the kernel under test (fast, wgmma)"
#endif

/* The largest number of heads a random case draws. */
#define TC_MAX_HEADS 3
/* The most tilings an entry lists for one d. */
#define TC_MAX_TILINGS 8

static const struct gpu_kernel *
tc(void)
{
	const struct gpu_kernel *k = gpu_kernel_find(CHECK_TC_KERNEL);

	ck_assert_msg(k != NULL, "no kernel %s", CHECK_TC_KERNEL);
	return k;
}

/* The kernel's tiling for d (0, 0: its default), or the test fails. */
static void
tc_tiling(int d, int br, int bc, struct tiling *t)
{
	char err[512];

	ck_assert_msg(gpu_kernel_tiling(tc(), d, br, bc, t, err,
	    sizeof err) == 0, "%s", err);
}

/*
 * The tilings the entry lists for d ("192x128 (default), 128x128"),
 * default first, into t; returns how many.
 */
static int
tc_tilings(int d, struct tiling *t)
{
	char buf[256];
	const char *c = buf;
	int n = 0, used;

	tc()->tilings(d, buf, sizeof buf);
	ck_assert_msg(strstr(buf, " (default)") != NULL &&
	    strstr(buf, " (default)") == strchr(buf, ' '), "d = %d: the "
	    "default is not listed first: '%s'", d, buf);
	while (n < TC_MAX_TILINGS && sscanf(c, "%dx%d%n", &t[n].br, &t[n].bc,
	    &used) == 2) {
		t[n++].order = ORDER_FA2;
		c += used;
		c += strcspn(c, ",");
		c += strspn(c, ", ");
	}
	ck_assert_msg(n > 0 && *c == '\0', "d = %d: cannot read '%s'", d, buf);
	return n;
}

/* gpu_run of the kernel: 0, or -1 with err. */
static int
tc_run(const struct problem *ps, int n, const struct tiling *t,
    unsigned flags, int repeat, struct gpu_result *res, char *err,
    size_t errlen)
{
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };

	return gpu_run(tc(), ps, n, t, &rule, flags, repeat, res, err, errlen);
}

static int
draw(struct inputs_rng *rng, int lo, int hi)
{
	return lo + (int)(inputs_rng_next(rng) % (uint64_t)(hi - lo + 1));
}

/* nh problems of one shape, seeds seed .. seed + nh - 1. */
static void
tc_problems(struct problem_spec *spec, int nh, struct problem *ps)
{
	char err[256];
	uint64_t seed = spec->seed;
	int b;

	for (b = 0; b < nh; b++) {
		spec->seed = seed + (uint64_t)b;
		ck_assert_msg(problem_build(spec, &ps[b], err, sizeof err) == 0,
		    "%s", err);
	}
	spec->seed = seed;
}

static void
tc_free(struct problem *ps, int nh)
{
	int b;

	for (b = 0; b < nh; b++)
		problem_free(&ps[b]);
}

/* Its tilings: the default first, each one taken as itself, one it does
 * not have refused with the list, and a d it does not take. */
START_TEST(test_tc_tilings)
{
	struct tiling all[TC_MAX_TILINGS], t;
	char err[512];
	int d, n, i;

	for (d = 64; d <= 128; d += 64) {
		n = tc_tilings(d, all);
		tc_tiling(d, 0, 0, &t);
		ck_assert(t.br == all[0].br && t.bc == all[0].bc &&
		    t.order == ORDER_FA2);
		for (i = 0; i < n; i++) {
			tc_tiling(d, all[i].br, all[i].bc, &t);
			ck_assert(t.br == all[i].br && t.bc == all[i].bc);
		}
		ck_assert_int_eq(gpu_kernel_tiling(tc(), d, 16, 16, &t, err,
		    sizeof err), -1);
		ck_assert_msg(strstr(err, "has no Br = 16, Bc = 16 tiling") !=
		    NULL && strstr(err, "(default)") != NULL, "%s", err);
	}
	ck_assert_int_eq(gpu_kernel_tiling(tc(), 96, 0, 0, &t, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "d = dv = 64, 128") != NULL, "%s", err);
}
END_TEST

/* What the kernel cannot take is refused from its entry, naming the
 * fault and what it takes. */
START_TEST(test_tc_refusals)
{
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_opts naive = { 0, NULL, NULL };
	struct gpucheck_report rep;
	struct problem_spec spec;
	struct problem p;
	struct gpu_result res;
	struct tiling t;
	char err[512];

	problem_spec_init(&spec);
	spec.tq = spec.tk = 40;
	spec.d = 64;
	spec.input = INPUTS_NORMAL;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	tc_tiling(64, 0, 0, &t);
	ck_assert_int_eq(tc_run(&p, 1, &t, 0, 0, &res, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "--dtype fp32") != NULL &&
	    strstr(err, "fp16, bf16") != NULL, "%s", err);
	ck_assert(res.o == NULL);
	/* The naive kernel has no trace to compare. */
	naive.kernel = gpu_kernel_find("naive");
	ck_assert_int_eq(gpucheck_run_many(&p, 1, &t, &rule, &naive, &rep, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "naive has no trace") != NULL, "%s", err);
	problem_free(&p);

	spec.dtype = DTYPE_FP16;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	t.order = ORDER_FA1;
	ck_assert_int_eq(tc_run(&p, 1, &t, 0, 0, &res, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "--order fa1") != NULL, "%s", err);
	t.order = ORDER_FA2;
	t.bc = 16;
	ck_assert_int_eq(tc_run(&p, 1, &t, 0, 0, &res, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "Bc = 16 tiling") != NULL, "%s", err);
	tc_tiling(64, 0, 0, &t);
	rule.convention = CONV_NORMALIZED;
	ck_assert_int_eq(gpu_run(tc(), &p, 1, &t, &rule, 0, 0, &res, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "--convention normalized") != NULL, "%s", err);
	problem_free(&p);

	spec.dv = 32;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	ck_assert_int_eq(tc_run(&p, 1, &t, 0, 0, &res, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "dv = 32") != NULL, "%s", err);
	problem_free(&p);
}
END_TEST

/*
 * A device the kernel's code is not for is refused by name, before any
 * CUDA call could fail: the entry as it is, but with its code said to be
 * for compute capability 1.0, which no device has.
 */
START_TEST(test_tc_other_device)
{
	struct gpu_kernel other = *tc();
	struct problem_spec spec;
	struct problem p;
	struct gpu_result res;
	struct tiling t;
	static const struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512], want[256], name[64];
	int cc;

	problem_spec_init(&spec);
	spec.tq = spec.tk = 40;
	spec.d = spec.dv = 64;
	spec.input = INPUTS_NORMAL;
	spec.dtype = DTYPE_FP16;
	ck_assert_int_eq(problem_build(&spec, &p, err, sizeof err), 0);
	tc_tiling(64, 0, 0, &t);
	ck_assert_msg(gpu_compute_capability(&cc, name, sizeof name, err,
	    sizeof err) == 0, "%s", err);
	other.cc = 10;
	ck_assert_int_eq(gpu_run(&other, &p, 1, &t, &rule, 0, 0, &res, err,
	    sizeof err), -1);
	snprintf(want, sizeof want, "kernel %s runs only on compute capability "
	    "1.0 (sm_10a); this GPU, %s, is %d.%d", tc()->name, name, cc / 10,
	    cc % 10);
	ck_assert_str_eq(err, want);
	ck_assert(res.o == NULL);
	/* The real entry runs here (gpuprobe_require_kernel said so). */
	ck_assert_msg(gpu_kernel_on_device(tc(), err, sizeof err) == 0, "%s",
	    err);
	problem_free(&p);
}
END_TEST

/*
 * 32 random cases: d and dtype and the mask cycle through all eight
 * combinations four times; Tq != Tk in [1, 600] (ragged against every
 * tiling); 1 to 3 heads; normal, uniform, ramp (the max rises tile after
 * tile) or spike inputs; every tiling the kernel lists for d in turn.
 */
START_TEST(test_tc_random)
{
	struct tiling tiles[2][TC_MAX_TILINGS];
	struct gpucheck_opts opts = { 0, NULL, NULL };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_report reps[TC_MAX_HEADS];
	struct problem ps[TC_MAX_HEADS];
	struct problem_spec spec;
	struct inputs_rng rng;
	struct tiling t;
	char err[512], what[200];
	double worst = 0, dm = 0, dl = 0, dacc = 0, dout = 0, dlse = 0;
	int n, b, nh, heads = 0, ragged = 0, causal = 0, bf16 = 0, d128 = 0;
	int ramp = 0, ntiles[2], used[2][TC_MAX_TILINGS], i;

	ntiles[0] = tc_tilings(64, tiles[0]);
	ntiles[1] = tc_tilings(128, tiles[1]);
	memset(used, 0, sizeof used);
	opts.kernel = tc();
	inputs_rng_seed(&rng, 6006);
	for (n = 0; n < 32; n++) {
		problem_spec_init(&spec);
		spec.d = spec.dv = n % 2 ? 128 : 64;
		spec.dtype = n / 2 % 2 ? DTYPE_BF16 : DTYPE_FP16;
		spec.causal = n / 4 % 2;
		spec.tq = draw(&rng, 1, 600);
		spec.tk = draw(&rng, 1, 600);
		if (spec.tk == spec.tq)
			spec.tk++;
		spec.input = (enum inputs_kind)draw(&rng, 0, 3);
		spec.seed = inputs_rng_next(&rng);
		nh = draw(&rng, 1, TC_MAX_HEADS);
		i = n / 8 % ntiles[n % 2];
		t = tiles[n % 2][i];
		used[n % 2][i] = 1;
		spec.bc = t.bc;
		tc_problems(&spec, nh, ps);
		snprintf(what, sizeof what, "case %d: %s d=%d Tq=%d Tk=%d%s %s "
		    "inputs, %d heads, Br=%d Bc=%d", n, dtype_name(spec.dtype),
		    spec.d, spec.tq, spec.tk, spec.causal ? " causal" : "",
		    inputs_kind_name(spec.input), nh, t.br, t.bc);
		ck_assert_msg(gpucheck_run_many(ps, nh, &t, &rule, &opts, reps,
		    err, sizeof err) == 0, "%s: %s", what, err);
		for (b = 0; b < nh; b++) {
			ck_assert_msg(reps[b].pass, "%s, head %d: %ld values differ, "
			    "first at step %ld; largest |gpu - sim|: m %g alpha %g "
			    "l %g acc %g O %g lse %g (delta %g)", what, b,
			    reps[b].failures, reps[b].first_failure, reps[b].max_m,
			    reps[b].max_alpha, reps[b].max_l, reps[b].max_acc,
			    reps[b].max_o, reps[b].max_lse, reps[b].delta);
			ck_assert_msg(reps[b].acc_compared, "%s: acc not compared",
			    what);
			ck_assert_int_gt(reps[b].steps, 0);
			worst = fmax(worst, reps[b].worst_excess);
			dm = fmax(dm, reps[b].max_m);
			dl = fmax(dl, reps[b].max_l);
			dacc = fmax(dacc, reps[b].max_acc);
			dout = fmax(dout, reps[b].max_o);
			dlse = fmax(dlse, reps[b].max_lse);
			gpucheck_report_free(&reps[b]);
		}
		heads += nh > 1;
		ragged += spec.tq % t.br != 0 || spec.tk % t.bc != 0;
		causal += spec.causal;
		bf16 += spec.dtype == DTYPE_BF16;
		d128 += spec.d == 128;
		ramp += spec.input == INPUTS_RAMP;
		tc_free(ps, nh);
	}
	/* The draw covered what the comment above claims. */
	ck_assert_int_ge(heads, 8);
	ck_assert_int_ge(ragged, 24);
	ck_assert_int_eq(causal, 16);
	ck_assert_int_eq(bf16, 16);
	ck_assert_int_eq(d128, 16);
	ck_assert_int_ge(ramp, 2);
	for (i = 0; i < ntiles[0]; i++)
		ck_assert_msg(used[0][i], "d = 64 tiling %d untried", i);
	for (i = 0; i < ntiles[1]; i++)
		ck_assert_msg(used[1][i], "d = 128 tiling %d untried", i);
	printf("%s kernel, 32 random cases agree; worst value at %.3g of the "
	    "tolerance; largest |gpu - sim|: m %.3g, l %.3g, acc %.3g, O %.3g, "
	    "lse %.3g\n", tc()->name, worst, dm, dl, dacc, dout, dlse);
}
END_TEST

/* Causal with Tq > Tk: rows 0 .. Tq - Tk - 1 see no key. */
START_TEST(test_tc_rows_without_keys)
{
	struct gpucheck_opts opts = { 0, NULL, NULL };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_report reps[2];
	struct problem_spec spec;
	struct problem ps[2];
	struct gpu_result res;
	struct tiling t;
	char err[512];
	int b, r, x, dt;

	for (dt = 0; dt < 2; dt++) {
		problem_spec_init(&spec);
		spec.tq = 300;
		spec.tk = 100;
		spec.d = spec.dv = 64;
		spec.causal = 1;
		spec.input = INPUTS_NORMAL;
		spec.dtype = dt ? DTYPE_BF16 : DTYPE_FP16;
		tc_problems(&spec, 2, ps);
		tc_tiling(64, 0, 0, &t);
		opts.kernel = tc();
		ck_assert_msg(gpucheck_run_many(ps, 2, &t, &rule, &opts, reps, err,
		    sizeof err) == 0, "%s", err);
		for (b = 0; b < 2; b++) {
			ck_assert_msg(reps[b].pass, "head %d: %ld values differ", b,
			    reps[b].failures);
			gpucheck_report_free(&reps[b]);
		}
		ck_assert_msg(tc_run(ps, 2, &t, 0, 0, &res, err, sizeof err) ==
		    0, "%s", err);
		for (b = 0; b < 2; b++) {
			for (r = 0; r < 300; r++) {
				const float lse = res.lse[b * 300 + r];
				ck_assert_msg(r < 200 ? isinf(lse) && lse < 0 :
				    isfinite(lse), "head %d row %d: lse %g", b, r,
				    (double)lse);
				for (x = 0; r < 200 && x < 64; x++)
					ck_assert_float_eq(res.o[((size_t)b * 300 + r) *
					    64 + x], 0.0f);
			}
		}
		gpu_result_free(&res);
		tc_free(ps, 2);
	}
}
END_TEST

/*
 * The timed kernel at a size where many tiles and every warp's rows
 * matter: it agrees with the simulator step by step, and its O and lse
 * are within the same rule (gpucheck.h) of the double reference.  The
 * heads' outputs differ (each head read its own data).
 */
START_TEST(test_tc_reference)
{
	struct gpucheck_opts opts = { 0, NULL, NULL };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_report reps[2];
	struct gpucheck_tol tol;
	struct problem_spec spec;
	struct problem ps[2];
	struct gpu_result res;
	struct tiling t;
	double *ref, *ref_lse, worst_o, worst_lse, allowed;
	char err[512];
	int b, r, dt;
	size_t no, i;

	opts.kernel = tc();
	for (dt = 0; dt < 2; dt++) {
		problem_spec_init(&spec);
		spec.tq = 1000;
		spec.tk = 1100;
		spec.d = spec.dv = 128;
		spec.causal = dt;
		spec.input = INPUTS_NORMAL;
		spec.dtype = dt ? DTYPE_BF16 : DTYPE_FP16;
		tc_problems(&spec, 2, ps);
		tc_tiling(128, 0, 0, &t);
		ck_assert_msg(gpucheck_run_many(ps, 2, &t, &rule, &opts, reps,
		    err, sizeof err) == 0, "%s", err);
		for (b = 0; b < 2; b++) {
			ck_assert_msg(reps[b].pass, "%s head %d: %ld values differ "
			    "from the simulator", dtype_name(spec.dtype), b,
			    reps[b].failures);
			gpucheck_report_free(&reps[b]);
		}
		ck_assert_msg(tc_run(ps, 2, &t, 0, 2, &res, err, sizeof err) ==
		    0, "%s", err);
		ck_assert(res.ms > 0);
		no = (size_t)spec.tq * spec.dv;
		ref = malloc(no * sizeof *ref);
		ref_lse = malloc((size_t)spec.tq * sizeof *ref_lse);
		ck_assert(ref != NULL && ref_lse != NULL);
		for (b = 0; b < 2; b++) {
			ck_assert_int_eq(reference_attention(&ps[b], ref, ref_lse, err,
			    sizeof err), 0);
			gpucheck_tolerance(tc(), &ps[b], &tol);
			worst_o = 0;
			for (i = 0; i < no; i++) {
				allowed = gpucheck_atol_acc(&tol, 1.0) + tol.rtol_acc *
				    fabs(ref[i]);
				worst_o = fmax(worst_o, fabs(res.o[b * no + i] -
				    ref[i]) / allowed);
			}
			worst_lse = 0;
			for (r = 0; r < spec.tq; r++)
				worst_lse = fmax(worst_lse, fabs(res.lse[b * spec.tq + r] -
				    ref_lse[r]) / (tol.rtol * (1.0 + fabs(ref_lse[r]))));
			ck_assert_msg(worst_o <= 1.0 && worst_lse <= 1.0, "%s head "
			    "%d: against the reference O at %g, lse at %g of the "
			    "tolerance", dtype_name(spec.dtype), b, worst_o,
			    worst_lse);
		}
		ck_assert_msg(memcmp(res.o, res.o + no, no * sizeof *res.o) != 0,
		    "heads 0 and 1 gave the same output");
		free(ref);
		free(ref_lse);
		gpu_result_free(&res);
		tc_free(ps, 2);
	}
}
END_TEST

/* The rules of case n of test_tc_rules on spec (the window, the cap,
 * ALiBi's slope), said in what. */
static void
tc_rules_draw(int n, struct inputs_rng *rng, struct problem_spec *spec,
    char *what, size_t len)
{
	const int kind = n / 4 % 6;

	if (kind == 0 || kind == 5) {		/* both sides bounded */
		spec->window_set = 1;
		spec->window_left = draw(rng, 0, 150);
		spec->window_right = draw(rng, 0, 150);
	} else if (kind == 1) {			/* left bounded alone */
		spec->window_set = 1;
		spec->window_left = draw(rng, 0, 300);
		spec->window_right = -1;
	} else if (kind == 2) {			/* sliding causal (L, 0) */
		spec->window_set = 1;
		spec->window_left = draw(rng, 0, 200);
		spec->window_right = 0;
	}
	if (kind == 3 || kind == 5) {
		spec->softcap_set = 1;
		spec->softcap = 0.5 + draw(rng, 0, 60) / 2.0;
	}
	if (kind == 4 || kind == 5) {
		spec->alibi_set = 1;
		spec->alibi = draw(rng, 1, 50) / 100.0;
	}
	snprintf(what, len, "window %s%d,%d softcap %g alibi %g",
	    spec->window_set ? "" : "(none) ", spec->window_left,
	    spec->window_right, spec->softcap_set ? spec->softcap : 0.0,
	    spec->alibi_set ? spec->alibi : 0.0);
}

/*
 * The nh heads' step reports all passed (and, with need_acc, compared
 * the numerator); the largest excess into *worst.  Frees the reports.
 */
static void
tc_assert_steps(struct gpucheck_report *reps, int nh, const char *what,
    int need_acc, double *worst)
{
	int b;

	for (b = 0; b < nh; b++) {
		ck_assert_msg(reps[b].pass, "%s, head %d: %ld values differ, "
		    "first at step %ld; largest |gpu - sim|: m %g alpha %g l %g "
		    "acc %g O %g lse %g (delta %g)", what, b, reps[b].failures,
		    reps[b].first_failure, reps[b].max_m, reps[b].max_alpha,
		    reps[b].max_l, reps[b].max_acc, reps[b].max_o,
		    reps[b].max_lse, reps[b].delta);
		ck_assert_msg(!need_acc || reps[b].acc_compared, "%s: acc not "
		    "compared", what);
		*worst = fmax(*worst, reps[b].worst_excess);
		gpucheck_report_free(&reps[b]);
	}
}

/*
 * O and lse of the nh heads of res against the double reference of ps,
 * in the kernel's tolerance (gpucheck_tolerance); rows that see no key
 * must give lse = -inf (counted in *empty).  The largest share of the
 * tolerance into *worst.
 */
static void
tc_assert_reference(const struct problem *ps, int nh,
    const struct gpu_result *res, const char *what, double *worst,
    int *empty)
{
	const int tq = ps[0].tq;
	const size_t no = (size_t)tq * ps[0].dv;
	struct gpucheck_tol tol;
	double *ref, *ref_lse, allowed, e;
	char err[256];
	size_t i;
	int b, r;

	ref = malloc(no * sizeof *ref);
	ref_lse = malloc((size_t)tq * sizeof *ref_lse);
	ck_assert(ref != NULL && ref_lse != NULL);
	for (b = 0; b < nh; b++) {
		ck_assert_int_eq(reference_attention(&ps[b], ref, ref_lse, err,
		    sizeof err), 0);
		gpucheck_tolerance(tc(), &ps[b], &tol);
		for (i = 0; i < no; i++) {
			allowed = gpucheck_atol_acc(&tol, 1.0) + tol.rtol_acc *
			    fabs(ref[i]);
			e = fabs(res->o[b * no + i] - ref[i]) / allowed;
			ck_assert_msg(e <= 1.0, "%s head %d: O[%zu] %g, the "
			    "reference %g (%g of the tolerance)", what, b, i,
			    (double)res->o[b * no + i], ref[i], e);
			*worst = fmax(*worst, e);
		}
		for (r = 0; r < tq; r++) {
			const double g = res->lse[b * tq + r];

			if (isinf(ref_lse[r])) {
				ck_assert_msg(isinf(g) && g < 0, "%s head %d row %d "
				    "sees no key: lse %g", what, b, r, g);
				(*empty)++;
				continue;
			}
			e = fabs(g - ref_lse[r]) / (tol.rtol * (1.0 +
			    fabs(ref_lse[r])));
			ck_assert_msg(e <= 1.0, "%s head %d row %d: lse %g, the "
			    "reference %g", what, b, r, g, ref_lse[r]);
			*worst = fmax(*worst, e);
		}
	}
	free(ref);
	free(ref_lse);
}

/*
 * The rules the kernel takes (gpu/tc_mask.cuh): 24 random ragged cases,
 * d and dtype in turn, each under a window (both sides bounded, the left
 * alone, or sliding causal), a softcap, ALiBi (each head its own slope),
 * or all three; step by step against the simulator, whose schedule skips
 * the tiles the window hides (so the kernel's trace must fall on the
 * same steps), and O and lse against the double reference, rows that see
 * no key included (O = 0, lse = -inf).  Dropout, which it does not take,
 * is refused naming what it does.
 */
START_TEST(test_tc_rules)
{
	struct gpucheck_opts opts = { 0, NULL, NULL };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_report reps[TC_MAX_HEADS];
	struct problem ps[TC_MAX_HEADS];
	struct problem_spec spec;
	struct inputs_rng rng;
	struct gpu_result res;
	struct tiling t;
	char err[512], what[300], rules[120];
	double worst = 0, worst_ref = 0;
	int n, b, nh, r, empty = 0, skipped = 0;

	opts.kernel = tc();
	inputs_rng_seed(&rng, 2828);
	for (n = 0; n < 24; n++) {
		problem_spec_init(&spec);
		spec.d = spec.dv = n % 2 ? 128 : 64;
		spec.dtype = n / 2 % 2 ? DTYPE_BF16 : DTYPE_FP16;
		spec.tq = draw(&rng, 1, 600);
		spec.tk = draw(&rng, 1, 600);
		spec.input = (enum inputs_kind)draw(&rng, 0, 3);
		spec.seed = inputs_rng_next(&rng);
		tc_rules_draw(n, &rng, &spec, rules, sizeof rules);
		nh = draw(&rng, 1, TC_MAX_HEADS);
		tc_tiling(spec.d, 0, 0, &t);
		spec.bc = t.bc;
		/* each head its own data and its own ALiBi slope */
		for (b = 0; b < nh; b++) {
			struct problem_spec one = spec;

			one.seed = spec.seed + (uint64_t)b;
			one.alibi = spec.alibi * (b + 1);
			ck_assert_msg(problem_build(&one, &ps[b], err,
			    sizeof err) == 0, "%s", err);
		}
		snprintf(what, sizeof what, "case %d: %s d=%d Tq=%d Tk=%d %s, "
		    "%s inputs, %d heads", n, dtype_name(spec.dtype), spec.d,
		    spec.tq, spec.tk, rules, inputs_kind_name(spec.input), nh);
		ck_assert_msg(gpucheck_run_many(ps, nh, &t, &rule, &opts, reps,
		    err, sizeof err) == 0, "%s: %s", what, err);
		tc_assert_steps(reps, nh, what, 0, &worst);
		ck_assert_msg(tc_run(ps, nh, &t, 0, 0, &res, err, sizeof err) ==
		    0, "%s: %s", what, err);
		tc_assert_reference(ps, nh, &res, what, &worst_ref, &empty);
		/* the window hid whole tiles in this case */
		{
			struct schedule sc;

			ck_assert_int_eq(schedule_init(&sc, &ps[0], &t, err,
			    sizeof err), 0);
			for (r = 0; r < sc.tr; r++)
				skipped += sc.tc - (sc.jend[r] - sc.jbegin[r]) > 0;
			schedule_free(&sc);
		}
		gpu_result_free(&res);
		tc_free(ps, nh);
	}
	/* The draw reached rows that see no key and skipped tiles. */
	ck_assert_int_gt(empty, 0);
	ck_assert_int_gt(skipped, 0);
	printf("%s kernel, 24 cases under windows, softcap and ALiBi agree; "
	    "worst step value at %.3g of the tolerance, worst against the "
	    "reference %.3g; %d rows saw no key; %d row blocks skipped "
	    "tiles\n", tc()->name, worst, worst_ref, empty, skipped);

	/* dropout: refused, naming what the kernel takes */
	problem_spec_init(&spec);
	spec.tq = spec.tk = 40;
	spec.d = spec.dv = 64;
	spec.dtype = DTYPE_FP16;
	spec.dropout_set = 1;
	spec.dropout = 0.1;
	ck_assert_int_eq(problem_build(&spec, &ps[0], err, sizeof err), 0);
	tc_tiling(64, 0, 0, &t);
	ck_assert_int_eq(tc_run(ps, 1, &t, 0, 0, &res, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "--dropout") != NULL && strstr(err,
	    "--window, --softcap, --alibi/--alibi-slopes") != NULL, "%s", err);
	problem_free(&ps[0]);
}
END_TEST

/*
 * FP8 (the kernels whose dtypes have it: wgmma, at d = 128): 16 random
 * ragged cases of 1 to 3 heads, normal or outlier inputs (FlashAttention
 * 3's experiment), block scales of a tile (FA3's) or of two, the Hadamard
 * rotation in some, causal, a window, a softcap or ALiBi in some, and
 * one scale a whole tensor in one: step by step against the simulator's
 * emulation (P's e4m3 flips in the numerator's tolerance), and O and lse
 * against the double reference on the dequantized inputs, which is what
 * the kernel computes; the reference on the inputs as given measures the
 * whole FP8 error (printed).  Scale blocks that split a key tile and
 * d = 64 are refused; a kernel without FP8 refuses it.
 *
 * The step check's numerator tolerance must allow every p to flip one
 * e4m3 unit (2^-3 of itself), so it is loose: a V tile's scale left out
 * stays inside it.  So O is also held, over all cases, to the
 * simulator's O in root mean square: the two do the same arithmetic on
 * the same codes, and differ where S's sums (FP8's ~14 bits against
 * float32) move a p across a rounding point, which the kernel's delta
 * makes rare, and by O's fp16 rounding (2^-12 relative).  TC_FP8_RMS
 * is not a worst-case bound but a statistical one, far above both and
 * far below what a wrong scale does (tests/gpu_planted.sh, "fp8 V scale
 * ignored"); the figure is printed.
 */
#define TC_FP8_RMS 0x1p-7
START_TEST(test_tc_fp8)
{
	struct gpucheck_opts opts = { 0, NULL, NULL };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_report reps[TC_MAX_HEADS];
	struct problem ps[TC_MAX_HEADS], exact;
	struct problem_spec spec;
	struct inputs_rng rng;
	struct gpu_result res;
	struct tiling t;
	char err[512], what[300], rules[120];
	double *ref, *ref_lse, worst = 0, worst_ref = 0;
	double sq_err = 0, sq_ref = 0, sq_sim = 0, sq_so = 0;
	float *so, *slse;
	struct sim *sim;
	int n, b, nh, outliers = 0, rotated = 0, empty = 0;
	size_t no, i;

	opts.kernel = tc();
	tc_tiling(128, 0, 0, &t);
	problem_spec_init(&spec);
	spec.tq = spec.tk = 40;
	spec.d = spec.dv = 128;
	spec.dtype = DTYPE_FP8;
	spec.br = t.br;
	spec.bc = t.bc;
	if (!(tc()->dtypes & (1u << DTYPE_FP8))) {
		ck_assert_int_eq(problem_build(&spec, &ps[0], err, sizeof err), 0);
		ck_assert_int_eq(tc_run(ps, 1, &t, 0, 0, &res, err, sizeof err),
		    -1);
		ck_assert_msg(strstr(err, "does not take --dtype fp8") != NULL,
		    "%s", err);
		problem_free(&ps[0]);
		return;
	}
	/* scale blocks of 64 keys split a 128-key tile */
	spec.tk = 300;
	spec.fp8.block = 64;
	ck_assert_int_eq(problem_build(&spec, &ps[0], err, sizeof err), 0);
	ck_assert_int_eq(tc_run(ps, 1, &t, 0, 0, &res, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "one K and one V scale a tile of 128 keys")
	    != NULL, "%s", err);
	problem_free(&ps[0]);

	inputs_rng_seed(&rng, 8448);
	for (n = 0; n < 16; n++) {
		problem_spec_init(&spec);
		spec.d = spec.dv = 128;
		spec.dtype = DTYPE_FP8;
		spec.tq = draw(&rng, 1, 600);
		spec.tk = draw(&rng, 1, 600);
		spec.input = n % 2 ? INPUTS_OUTLIERS : INPUTS_NORMAL;
		spec.seed = inputs_rng_next(&rng);
		spec.br = t.br;
		spec.bc = t.bc;
		spec.fp8.block = n % 3 == 2 ? 2 * t.bc : 0;
		spec.fp8.hadamard = n / 2 % 2;
		if (n == 7)
			spec.fp8.bug = FP8_BUG_WHOLE_TENSOR;
		spec.causal = n % 4 == 1;
		rules[0] = '\0';
		if (n % 4 == 3) {	/* both window edges, a cap, ALiBi, all */
			static const int kinds[4] = { 0, 3, 4, 5 };

			tc_rules_draw(4 * kinds[n / 4], &rng, &spec, rules,
			    sizeof rules);
		}
		nh = draw(&rng, 1, TC_MAX_HEADS);
		tc_problems(&spec, nh, ps);
		snprintf(what, sizeof what, "case %d: fp8 d=128 Tq=%d Tk=%d%s "
		    "%s, %s inputs, block %d%s%s, %d heads", n, spec.tq, spec.tk,
		    spec.causal ? " causal" : "", rules,
		    inputs_kind_name(spec.input), spec.fp8.block,
		    spec.fp8.hadamard ? " hadamard" : "",
		    spec.fp8.bug ? " one scale a tensor" : "", nh);
		ck_assert_msg(gpucheck_run_many(ps, nh, &t, &rule, &opts, reps,
		    err, sizeof err) == 0, "%s: %s", what, err);
		tc_assert_steps(reps, nh, what, 1, &worst);
		ck_assert_msg(tc_run(ps, nh, &t, 0, 0, &res, err, sizeof err) ==
		    0, "%s: %s", what, err);
		tc_assert_reference(ps, nh, &res, what, &worst_ref, &empty);
		no = (size_t)spec.tq * spec.dv;
		ref = malloc(no * sizeof *ref);
		ref_lse = malloc((size_t)spec.tq * sizeof *ref_lse);
		ck_assert(ref != NULL && ref_lse != NULL);
		for (b = 0; b < nh; b++) {
			/* against the simulator's emulation, root mean square */
			so = malloc(no * sizeof *so);
			slse = malloc((size_t)spec.tq * sizeof *slse);
			ck_assert(so != NULL && slse != NULL);
			sim = sim_new(&ps[b], &t, &rule, err, sizeof err);
			ck_assert_msg(sim != NULL, "%s", err);
			ck_assert_int_eq(sim_run(sim, NULL, NULL, so, slse), 0);
			for (i = 0; i < no; i++) {
				sq_sim += (res.o[b * no + i] - so[i]) *
				    (res.o[b * no + i] - so[i]);
				sq_so += (double)so[i] * so[i];
			}
			sim_free(sim);
			free(so);
			free(slse);
			/* the whole error: against the inputs as given */
			fp8_exact(&ps[b], &exact);
			ck_assert_int_eq(reference_attention(&exact, ref, ref_lse,
			    err, sizeof err), 0);
			for (i = 0; i < no; i++) {
				sq_err += (res.o[b * no + i] - ref[i]) *
				    (res.o[b * no + i] - ref[i]);
				sq_ref += ref[i] * ref[i];
			}
		}
		outliers += spec.input == INPUTS_OUTLIERS;
		rotated += spec.fp8.hadamard;
		free(ref);
		free(ref_lse);
		gpu_result_free(&res);
		tc_free(ps, nh);
	}
	ck_assert_int_eq(outliers, 8);
	ck_assert_int_eq(rotated, 8);
	ck_assert_msg(sqrt(sq_sim / sq_so) <= TC_FP8_RMS, "O differs from the "
	    "simulator's by %g in root mean square, relative (over %g)",
	    sqrt(sq_sim / sq_so), TC_FP8_RMS);
	printf("%s kernel, 16 fp8 cases agree; worst step value at %.3g of "
	    "the tolerance, worst against the dequantized reference %.3g; O "
	    "against the simulator's %.3g in root mean square, relative "
	    "(bound %.3g); O's error against the inputs as given %.3g\n",
	    tc()->name, worst, worst_ref, sqrt(sq_sim / sq_so), TC_FP8_RMS,
	    sqrt(sq_err / sq_ref));

	/* d = 64: refused by the entry */
	problem_spec_init(&spec);
	spec.tq = spec.tk = 40;
	spec.d = spec.dv = 64;
	spec.dtype = DTYPE_FP8;
	ck_assert_int_eq(problem_build(&spec, &ps[0], err, sizeof err), 0);
	tc_tiling(64, 0, 0, &t);
	ck_assert_int_eq(tc_run(ps, 1, &t, 0, 0, &res, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "fp8 at d = 128 alone") != NULL, "%s", err);
	problem_free(&ps[0]);
}
END_TEST

/* A ramp problem (the max rises tile after tile, so alpha < 1 at every
 * step past the first) with the default tiling's Bc. */
static void
tc_ramp(int d, enum dtype dtype, int causal, struct tiling *t,
    struct problem *p)
{
	struct problem_spec spec;

	problem_spec_init(&spec);
	spec.tq = 200;
	spec.tk = 700;
	spec.d = spec.dv = d;
	spec.causal = causal;
	spec.input = INPUTS_RAMP;
	spec.dtype = dtype;
	tc_tiling(d, 0, 0, t);
	spec.bc = t->bc;
	tc_problems(&spec, 1, p);
}

/* The injected fault: the kernel leaves the rescale out (it runs bug
 * no-rescale, the simulator none); the comparison must say so, at a
 * step, by far more than the tolerance. */
START_TEST(test_tc_fault_caught)
{
	static const struct gpucheck_fault no_rescale = { BUG_NO_RESCALE,
	    MERGE_BUG_NONE, BWD_BUG_NONE };
	struct gpucheck_opts opts = { 0, NULL, NULL };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_report rep;
	struct problem p;
	struct tiling t;
	char err[512];
	int d;

	opts.kernel = tc();
	for (d = 64; d <= 128; d += 64) {
		tc_ramp(d, DTYPE_FP16, 0, &t, &p);
		/* The control: without the fault they agree. */
		opts.fault = NULL;
		ck_assert_msg(gpucheck_run_many(&p, 1, &t, &rule, &opts, &rep,
		    err, sizeof err) == 0, "%s", err);
		ck_assert_msg(rep.pass, "d=%d without fault: %ld differ", d,
		    rep.failures);
		gpucheck_report_free(&rep);

		opts.fault = &no_rescale;
		ck_assert_msg(gpucheck_run_many(&p, 1, &t, &rule, &opts, &rep,
		    err, sizeof err) == 0, "%s", err);
		ck_assert_msg(!rep.pass, "d=%d: the fault went unnoticed", d);
		ck_assert_int_gt(rep.failures, 0);
		ck_assert_int_ge(rep.first_failure, 0);
		ck_assert_msg(rep.max_l > 1e-2, "d=%d: l moved only %g", d,
		    rep.max_l);
		ck_assert_msg(rep.worst_excess > 100, "only %g of the tolerance",
		    rep.worst_excess);
		/* alpha itself is traced true: the fault is in its use. */
		ck_assert_msg(rep.max_alpha <= rep.rtol * 2, "alpha %g",
		    rep.max_alpha);
		gpucheck_report_free(&rep);
		problem_free(&p);
	}
}
END_TEST

/*
 * Bug no-rescale on both sides: the kernel (its trace build) breaks as
 * the simulator does, so they agree step by step and in O and lse.  The
 * run without a trace (what flashstep gpu makes) gives the same O and
 * lse bit for bit, and the bug does harm: that O is outside the
 * tolerance of the correct kernel's, with a margin (22 to 25 times it
 * at d = 64 fp16 on the H200, where the ramp's max rises tile by tile).
 */
START_TEST(test_tc_bug_no_rescale)
{
	struct gpucheck_opts opts = { 0, NULL, NULL };
	struct online_rule bug = { CONV_UNNORMALIZED, BUG_NO_RESCALE, MASK_BUG_NONE };
	struct online_rule none = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_report rep;
	struct gpucheck_tol tol;
	struct gpu_result traced, plain, right;
	struct problem p;
	struct tiling t;
	char err[512], what[64];
	double worst, allowed;
	size_t no, i;
	int d, dt;

	opts.kernel = tc();
	for (d = 64; d <= 128; d += 64)
	for (dt = 0; dt < 2; dt++) {
		/* fp16 without the mask, bf16 under it. */
		tc_ramp(d, dt ? DTYPE_BF16 : DTYPE_FP16, dt, &t, &p);
		snprintf(what, sizeof what, "d=%d %s%s", d,
		    dtype_name(p.dtype), dt ? " causal" : "");
		ck_assert_msg(gpucheck_run_many(&p, 1, &t, &bug, &opts, &rep,
		    err, sizeof err) == 0, "%s: %s", what, err);
		ck_assert_msg(rep.pass, "%s: %ld values differ from the "
		    "simulator's no-rescale (first at step %ld, %g of the "
		    "tolerance)", what, rep.failures, rep.first_failure,
		    rep.worst_excess);
		gpucheck_report_free(&rep);

		ck_assert_msg(gpu_run(tc(), &p, 1, &t, &bug, GPU_TRACE, 0,
		    &traced, err, sizeof err) == 0, "%s: %s", what, err);
		ck_assert_msg(gpu_run(tc(), &p, 1, &t, &bug, 0, 1, &plain, err,
		    sizeof err) == 0, "%s: %s", what, err);
		ck_assert_msg(gpu_run(tc(), &p, 1, &t, &none, 0, 1, &right, err,
		    sizeof err) == 0, "%s: %s", what, err);
		no = (size_t)p.tq * p.dv;
		ck_assert_msg(memcmp(plain.o, traced.o, no * sizeof *plain.o) ==
		    0 && memcmp(plain.lse, traced.lse, (size_t)p.tq *
		    sizeof *plain.lse) == 0, "%s: the run without a trace is "
		    "not the traced run's no-rescale", what);
		gpucheck_tolerance(tc(), &p, &tol);
		worst = 0;
		for (i = 0; i < no; i++) {
			allowed = gpucheck_atol_acc(&tol, 1.0) + tol.rtol_acc *
			    fabs(right.o[i]);
			worst = fmax(worst, fabs(plain.o[i] - right.o[i]) /
			    allowed);
		}
		ck_assert_msg(worst > 2, "%s: no-rescale did no harm (O at "
		    "%g of the tolerance from the correct O)", what, worst);
		gpu_result_free(&traced);
		gpu_result_free(&plain);
		gpu_result_free(&right);
		problem_free(&p);
	}
}
END_TEST

/* Packed batches of test_tc_varlen: ragged (a length 1, lengths not
 * multiples of a tile, Tq_b != Tk_b, rows that see no key under the
 * causal mask), and a long sequence before short ones, whose last row
 * block runs long past the short ones' only blocks: a store of its rows
 * past Tq_b would land after theirs. */
static const char *const tc_varlen_q[] = { "1,130,77,300", "1000,5,1" };
static const char *const tc_varlen_k[] = { "1,200,77,129", "1000,7,3" };

/* Packed batch case c of tc_varlen_q under mask m (0 none, 1 causal, 2 a
 * window 40,10) at d in dtype, nh heads (seeds seed .. seed + nh - 1),
 * into ps; what it is into what. */
static void
tc_varlen_problems(int c, int m, int d, enum dtype dtype, int nh,
    struct problem *ps, char *what, size_t len)
{
	struct problem_spec spec;

	problem_spec_init(&spec);
	spec.seqlens_q = tc_varlen_q[c];
	spec.seqlens_k = tc_varlen_k[c];
	spec.d = spec.dv = d;
	spec.causal = m == 1;
	if (m == 2) {
		spec.window_set = 1;
		spec.window_left = 40;
		spec.window_right = 10;
	}
	spec.input = INPUTS_NORMAL;
	spec.dtype = dtype;
	spec.seed = 11 + (uint64_t)c;
	tc_problems(&spec, nh, ps);
	snprintf(what, len, "--seqlens-q %s --seqlens-k %s %s d=%d %s",
	    tc_varlen_q[c], tc_varlen_k[c], m == 0 ? "(no mask)" : m == 1 ?
	    "causal" : "window 40,10", d, dtype_name(dtype));
}

/*
 * A packed batch (--seqlens) in one launch: with GPU_CAP_VARLEN, every
 * case of tc_varlen_q, with no mask, causal and a window, fp16 and bf16,
 * d = 64 and 128, two heads, agrees with the simulator step by step (its
 * steps numbered on from one sequence to the next) and in O and lse, and
 * the timed kernel's O and lse (poisoned before: a row never written
 * cannot pass) are within the tolerance of varlen_reference, sequence
 * by sequence at its offsets, rows that see no key at O = 0, lse = -inf.
 * Without the cap the kernel refuses it by name.
 */
START_TEST(test_tc_varlen)
{
	struct gpucheck_opts opts = { 0, NULL, NULL };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_report reps[2];
	struct gpucheck_tol tol;
	struct problem ps[2];
	struct gpu_result res;
	struct tiling t;
	double *ref, *ref_lse, worst_o, worst_lse, allowed, g;
	char err[512], what[160];
	int c, m, x, b, r, empty;
	size_t no, i;

	opts.kernel = tc();
	if (!(tc()->caps & GPU_CAP_VARLEN)) {
		tc_varlen_problems(0, 0, 64, DTYPE_FP16, 1, ps, what,
		    sizeof what);
		tc_tiling(64, 0, 0, &t);
		ck_assert_int_eq(tc_run(ps, 1, &t, 0, 0, &res, err, sizeof err),
		    -1);
		ck_assert_msg(strstr(err, "does not take --seqlens") != NULL,
		    "%s", err);
		tc_free(ps, 1);
		return;
	}
	for (c = 0; c < 2; c++)
	for (m = 0; m < 3; m++)
	for (x = 0; x < 4; x++) {
		const int d = x & 1 ? 128 : 64;
		const enum dtype dt = x & 2 ? DTYPE_BF16 : DTYPE_FP16;

		tc_varlen_problems(c, m, d, dt, 2, ps, what, sizeof what);
		tc_tiling(d, 0, 0, &t);
		ck_assert_msg(gpucheck_run_many(ps, 2, &t, &rule, &opts, reps,
		    err, sizeof err) == 0, "%s: %s", what, err);
		for (b = 0; b < 2; b++) {
			ck_assert_msg(reps[b].pass, "%s head %d: %ld values differ "
			    "from the simulator, first at step %ld", what, b,
			    reps[b].failures, reps[b].first_failure);
			ck_assert_int_gt(reps[b].steps, 0);
			gpucheck_report_free(&reps[b]);
		}
		ck_assert_msg(tc_run(ps, 2, &t, 0, 1, &res, err, sizeof err) ==
		    0, "%s: %s", what, err);
		no = (size_t)ps[0].tq * ps[0].dv;
		ref = malloc(no * sizeof *ref);
		ref_lse = malloc((size_t)ps[0].tq * sizeof *ref_lse);
		ck_assert(ref != NULL && ref_lse != NULL);
		for (b = 0; b < 2; b++) {
			ck_assert_msg(varlen_reference(&ps[b], ref, ref_lse, err,
			    sizeof err) == 0, "%s", err);
			gpucheck_tolerance(tc(), &ps[b], &tol);
			worst_o = 0;
			for (i = 0; i < no; i++) {
				g = res.o[b * no + i];
				allowed = gpucheck_atol_acc(&tol, 1.0) +
				    tol.rtol_acc * fabs(ref[i]);
				ck_assert_msg(isfinite(g), "%s head %d: O[%zu] = %g",
				    what, b, i, g);
				worst_o = fmax(worst_o, fabs(g - ref[i]) / allowed);
			}
			worst_lse = 0;
			empty = 0;
			for (r = 0; r < ps[0].tq; r++) {
				g = res.lse[(size_t)b * ps[0].tq + r];
				if (isinf(ref_lse[r])) {
					ck_assert_msg(g == ref_lse[r], "%s head %d: "
					    "row %d sees no key but lse = %g", what,
					    b, r, g);
					empty++;
					continue;
				}
				ck_assert_msg(isfinite(g), "%s head %d: lse[%d] = "
				    "%g", what, b, r, g);
				worst_lse = fmax(worst_lse, fabs(g - ref_lse[r]) /
				    (tol.rtol * (1.0 + fabs(ref_lse[r]))));
			}
			ck_assert_msg(worst_o <= 1.0 && worst_lse <= 1.0, "%s head "
			    "%d: against the reference O at %g, lse at %g of the "
			    "tolerance", what, b, worst_o, worst_lse);
			/* case 0's sequence 300 x 129 under the causal mask
			 * has 171 rows that see nothing */
			if (c == 0 && m == 1)
				ck_assert_int_ge(empty, 171);
		}
		ck_assert_msg(memcmp(res.o, res.o + no, no * sizeof *res.o) != 0,
		    "%s: heads 0 and 1 gave the same output", what);
		free(ref);
		free(ref_lse);
		gpu_result_free(&res);
		tc_free(ps, 2);
	}
}
END_TEST

/* The trace and the step-by-step compare need the sequences' schedules:
 * a packed batch's report numbers its steps on from one sequence to the
 * next, and a fault (bug no-rescale in the kernel alone) is caught at a
 * step of the batch. */
START_TEST(test_tc_varlen_fault)
{
	static const struct gpucheck_fault no_rescale = { BUG_NO_RESCALE,
	    MERGE_BUG_NONE, BWD_BUG_NONE };
	struct gpucheck_opts opts = { 0, NULL, NULL };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpucheck_report rep;
	struct problem p;
	struct tiling t;
	long tiles[4], sum = 0;
	char err[512], what[160];
	int b;

	if (!(tc()->caps & GPU_CAP_VARLEN))
		return;
	opts.kernel = tc();
	opts.per_step = 1;
	tc_varlen_problems(0, 0, 128, DTYPE_FP16, 1, &p, what, sizeof what);
	tc_tiling(128, 0, 0, &t);
	ck_assert_int_eq(varlen_forward(&p, &t, &rule, NULL, NULL, NULL, tiles,
	    err, sizeof err), 0);
	for (b = 0; b < p.nseq; b++)
		sum += tiles[b];
	ck_assert_msg(gpucheck_run_many(&p, 1, &t, &rule, &opts, &rep, err,
	    sizeof err) == 0, "%s", err);
	ck_assert(rep.pass);
	ck_assert_int_eq(rep.steps, sum);
	gpucheck_report_free(&rep);
	opts.fault = &no_rescale;
	ck_assert_msg(gpucheck_run_many(&p, 1, &t, &rule, &opts, &rep, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_msg(!rep.pass, "%s: the fault went unnoticed", what);
	ck_assert_int_ge(rep.first_failure, 0);
	ck_assert_int_lt(rep.first_failure, sum);
	gpucheck_report_free(&rep);
	problem_free(&p);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("gpu_" CHECK_TC_KERNEL);
	TCase *tc_case = tcase_create(CHECK_TC_KERNEL " kernel");
	const struct gpu_kernel *k = gpu_kernel_find(CHECK_TC_KERNEL);

	if (k == NULL) {
		printf("FAIL: no kernel %s in the table\n", CHECK_TC_KERNEL);
		exit(1);
	}
	gpuprobe_require_kernel(k);
	tcase_set_timeout(tc_case, 300);
	tcase_add_test(tc_case, test_tc_tilings);
	tcase_add_test(tc_case, test_tc_refusals);
	tcase_add_test(tc_case, test_tc_other_device);
	tcase_add_test(tc_case, test_tc_random);
	tcase_add_test(tc_case, test_tc_rows_without_keys);
	tcase_add_test(tc_case, test_tc_reference);
	tcase_add_test(tc_case, test_tc_rules);
	tcase_add_test(tc_case, test_tc_fp8);
	tcase_add_test(tc_case, test_tc_fault_caught);
	tcase_add_test(tc_case, test_tc_bug_no_rescale);
	tcase_add_test(tc_case, test_tc_varlen);
	tcase_add_test(tc_case, test_tc_varlen_fault);
	suite_add_tcase(s, tc_case);
	return s;
}
