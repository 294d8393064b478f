/*
 * check_gpu_fast_bwd.c - the tensor-core backward (gpu/fast_bwd.cu)
 * against the references a user trusts, two ways:
 *   the simulator  through the kernel table (gpu_backward_run, the path
 *                  `flashstep gpu --backward --kernel fast` takes) and
 *                  gpucheck_bwd: random ragged problems, d = 64 and 128,
 *                  causal or not, Tq != Tk, several heads, fp16 and bf16,
 *                  both dQ modes, the final gradients within the bound
 *                  gpucheck_bwd.c derives for tensor-core arithmetic
 *                  (rtol of the dtype widened by the forward's delta, and
 *                  the slack of dP and D);
 *   the double     fast_bwd_run_host with grouped K/V heads and batches
 *                  (dK and dV summed over a group's query heads), against
 *                  a double-precision backward computed here from the
 *                  same 16-bit inputs (itself checked against
 *                  gradref.c's on one head), within the same kind of
 *                  bound: rtol = 2 u16 + 2 delta_b times the terms'
 *                  magnitudes, where dS's magnitude carries P (|dP| +
 *                  |D|) times what its sums and O's 16 bits can move.
 * The trace build: dK, dV and the ordered dQ after every step against
 * the simulator's steps on the kernel's own tiles.
 * The rules its forward takes (fast_attention_bwd_masked): windows of
 * both edges, of one, and leaving rows with no key, the softcap, ALiBi
 * and all together, both ways (the simulator step by step, its tiles
 * skipped as the kernel skips them; the double reference with grouped
 * heads), and the kernel told none of the rules far outside the bound.
 * Besides: rows that see no key get dQ exactly 0 (a floor of FLT_MIN);
 * the ordered dQ gives the same bits twice, and within the bound of the
 * atomic one; the bugs no-scale and no-d (run by the kernel alone) are
 * caught; what it cannot take is refused by name.
 *
 * Without a device the program skips (77), or fails under
 * FLASHSTEP_REQUIRE_GPU=1 (gpuprobe.c).
 */
#include "config.h"

#include "testutil.h"
#include "gpu/fast.h"
#include "gpu/fast_bwd.h"
#include "gpu/gpu.h"
#include "gpu/gpucheck.h"
#include "gpu/gpucheck_bwd.h"
#include "gpuprobe.h"
#include "model/backward.h"
#include "model/dtype.h"
#include "model/gradref.h"
#include "model/merge.h"
#include "model/tile_rule.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FB_MAX_HEADS 3

#ifndef HAVE_CUDA
/* A build without CUDA has no fast_bwd.cu (gpu_stub.c stands in for the
 * device): gpuprobe_require_device() skips before any test runs, and
 * these only let the program link. */
int
fast_bwd_run_host(struct fast_bwd_host *job, char *err, size_t errlen)
{
	(void)job;
	snprintf(err, errlen, "built without CUDA support");
	return -1;
}

long
fast_bwd_trace_steps(int tq, int tk, int causal)
{
	(void)tq; (void)tk; (void)causal;
	return -1;
}

long
fast_bwd_trace_steps_masked(int tq, int tk, const struct tc_mask *mask)
{
	(void)tq; (void)tk; (void)mask;
	return -1;
}

int
fast_attention_bwd(const void *q, const void *k, const void *v,
    const void *o, const void *dout, const float *lse, void *dq, void *dk,
    void *dv, void *work, int batch, int heads, int kv_heads, int tq,
    int tk, int d, int dtype, int causal, float scale, int flags,
    void *stream, char *err, size_t errlen)
{
	(void)q; (void)k; (void)v; (void)o; (void)dout; (void)lse; (void)dq;
	(void)dk; (void)dv; (void)work; (void)batch; (void)heads;
	(void)kv_heads; (void)tq; (void)tk; (void)d; (void)dtype;
	(void)causal; (void)scale; (void)flags; (void)stream;
	snprintf(err, errlen, "built without CUDA support");
	return -1;
}
#endif

static const struct online_rule rule_plain = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };

static const struct gpu_kernel *
fast(void)
{
	const struct gpu_kernel *k = gpu_kernel_find("fast");

	ck_assert(k != NULL && k->backward != NULL);
	return k;
}

static int
draw(struct inputs_rng *rng, int lo, int hi)
{
	return lo + (int)(inputs_rng_next(rng) % (uint64_t)(hi - lo + 1));
}

/* n values N(0, 1) rounded to dtype, malloc'd. */
static float *
fb_normal(struct inputs_rng *rng, size_t n, enum dtype dt)
{
	float *x = malloc(n * sizeof *x);
	size_t i;

	ck_assert(x != NULL);
	for (i = 0; i < n; i++)
		x[i] = dtype_round(dt, (float)inputs_rng_normal(rng));
	return x;
}

/* nh problems of spec's shape, seeds seed .. seed + nh - 1. */
static void
fb_problems(struct problem_spec *spec, int nh, struct problem *ps)
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

/*
 * Through the table: 24 random problems (Tq, Tk 1..300, often ragged
 * against the kernel's 64 x 128 tiles, causal with Tq > Tk included), each
 * with 1..3 heads, fp16 and bf16 in turn, both d, both dQ modes, against
 * the simulator's backward at the end and, with the ordered dQ, after
 * every step (the trace build).
 */
START_TEST(test_fast_bwd_random)
{
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report reps[FB_MAX_HEADS];
	struct problem_spec spec;
	struct problem ps[FB_MAX_HEADS];
	struct inputs_rng rng;
	struct tiling t = { 64, 64, ORDER_FA2 };
	float *dout;
	double worst = 0;
	char what[160];
	int n, nh, b, mode, causal = 0, ragged = 0, tqne = 0, d128 = 0;

	memset(&o, 0, sizeof o);
	o.kernel = fast();
	inputs_rng_seed(&rng, 2626);
	for (n = 0; n < 24; n++) {
		problem_spec_init(&spec);
		spec.tq = draw(&rng, 1, 300);
		spec.tk = n % 5 == 0 ? spec.tq : draw(&rng, 1, 300);
		spec.d = spec.dv = n % 2 ? 128 : 64;
		spec.causal = n % 3 != 0;
		spec.dtype = n % 4 < 2 ? DTYPE_FP16 : DTYPE_BF16;
		spec.input = INPUTS_NORMAL;
		spec.seed = 100 + (uint64_t)n * 7;
		nh = draw(&rng, 1, FB_MAX_HEADS);
		fb_problems(&spec, nh, ps);
		dout = fb_normal(&rng, (size_t)nh * spec.tq * spec.dv,
		    spec.dtype);
		for (mode = 0; mode < 2; mode++) {
			o.dq = mode ? GPU_DQ_ORDERED : GPU_DQ_ATOMIC;
			snprintf(what, sizeof what, "case %d: Tq %d Tk %d d %d %s%s "
			    "%d heads, dQ %s", n, spec.tq, spec.tk, spec.d,
			    dtype_name(spec.dtype), spec.causal ? " causal" : "", nh,
			    gpu_dq_mode_name(o.dq));
			char err[512];
			ck_assert_msg(gpucheck_bwd_run_many(ps, nh, &t, &rule_plain,
			    dout, &o, reps, err, sizeof err) == 0, "%s: %s", what,
			    err);
			for (b = 0; b < nh; b++) {
				ck_assert_msg(reps[b].pass, "%s, head %d: %ld values "
				    "beyond the bound, worst %g of it (dQ %g dK %g dV "
				    "%g)", what, b, reps[b].failures,
				    reps[b].worst_excess, reps[b].max_dq,
				    reps[b].max_dk, reps[b].max_dv);
				/* The ordered dQ's trace: every step too. */
				ck_assert_int_eq(reps[b].steps_compared,
				    o.dq == GPU_DQ_ORDERED);
				worst = fmax(worst, reps[b].worst_excess);
				gpucheck_bwd_report_free(&reps[b]);
			}
		}
		causal += spec.causal;
		ragged += spec.tq % 64 != 0 || spec.tk % 128 != 0;
		tqne += spec.tq != spec.tk;
		d128 += spec.d == 128;
		free(dout);
		for (b = 0; b < nh; b++)
			problem_free(&ps[b]);
	}
	ck_assert_int_ge(causal, 8);
	ck_assert_int_ge(ragged, 12);
	ck_assert_int_ge(tqne, 12);
	ck_assert_int_ge(d128, 8);
	printf("fast backward: 24 random problems agree with the simulator, "
	    "atomic and ordered dQ; worst value at %.3g of the bound\n", worst);
}
END_TEST

/*
 * The trace build, step by step: problems of several key and row blocks
 * (causal with rows that see no key, ragged, Tq != Tk, both d, both 16-bit
 * dtypes, two heads), the ordered dQ.  The simulator steps on the
 * kernel's own 64 x 128 tiles whatever the forward's tiling, its steps
 * are the trace build's (fast_bwd_trace_steps), and dK, dV and dQ agree
 * after each of them within the bound; the differences are not all 0
 * (the comparison sees the tensor cores' own rounding), and every entry
 * of the trace was written (it starts as NaN, which never agrees).
 */
START_TEST(test_fast_bwd_steps)
{
	static const struct {
		int tq, tk, d, causal;
		enum dtype dt;
	} cases[] = {
		{ 300, 700, 64, 1, DTYPE_FP16 },
		{ 260, 130, 128, 1, DTYPE_BF16 },
		{ 200, 390, 128, 0, DTYPE_FP16 },
		{ 129, 257, 64, 0, DTYPE_BF16 },
	};
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report reps[2];
	struct problem_spec spec;
	struct problem ps[2];
	struct inputs_rng rng;
	struct tiling t = { 128, 32, ORDER_FA2 };	/* the forward's */
	float *dout;
	double worst = 0;
	char err[512];
	long steps = 0, k, moved;
	size_t n;
	int b;

	memset(&o, 0, sizeof o);
	o.kernel = fast();
	o.dq = GPU_DQ_ORDERED;
	o.per_step = 1;
	inputs_rng_seed(&rng, 2627);
	for (n = 0; n < sizeof cases / sizeof cases[0]; n++) {
		problem_spec_init(&spec);
		spec.tq = cases[n].tq;
		spec.tk = cases[n].tk;
		spec.d = spec.dv = cases[n].d;
		spec.causal = cases[n].causal;
		spec.dtype = cases[n].dt;
		spec.input = INPUTS_NORMAL;
		spec.seed = 900 + (uint64_t)n;
		fb_problems(&spec, 2, ps);
		dout = fb_normal(&rng, (size_t)2 * spec.tq * spec.dv, spec.dtype);
		ck_assert_msg(gpucheck_bwd_run_many(ps, 2, &t, &rule_plain, dout,
		    &o, reps, err, sizeof err) == 0, "case %zu: %s", n, err);
		for (b = 0; b < 2; b++) {
			ck_assert_int_eq(reps[b].steps_compared, 1);
			ck_assert_int_eq(reps[b].steps, fast_bwd_trace_steps(
			    spec.tq, spec.tk, spec.causal));
			ck_assert_int_gt(reps[b].steps, (spec.tk + 127) / 128);
			ck_assert_msg(reps[b].pass, "case %zu head %d: %ld values "
			    "beyond the bound, first at step %ld, worst %g of it "
			    "at step %ld", n, b, reps[b].failures,
			    reps[b].first_failure, reps[b].worst_excess,
			    reps[b].worst_step);
			for (moved = 0, k = 0; k < reps[b].steps; k++)
				moved += reps[b].step[k].excess > 0;
			ck_assert_msg(moved * 2 > reps[b].steps, "case %zu: only "
			    "%ld of %ld steps differ at all", n, moved,
			    reps[b].steps);
			ck_assert(reps[b].step_dq > 0 && reps[b].step_dk > 0 &&
			    reps[b].step_dv > 0);
			worst = fmax(worst, reps[b].worst_excess);
			steps += reps[b].steps;
			gpucheck_bwd_report_free(&reps[b]);
		}
		free(dout);
		for (b = 0; b < 2; b++)
			problem_free(&ps[b]);
	}
	printf("fast backward: the trace build agrees with the simulator after "
	    "each of %ld steps; worst value at %.3g of the bound\n", steps,
	    worst);
}
END_TEST

/* ---- the rules its forward takes: window, softcap, ALiBi ---- */

/* The rules of one case: a window (-1, -1: none), a cap (0: none), an
 * ALiBi slope (0: none). */
struct fb_rules {
	int left, right;
	double softcap, alibi;
};

static void
fb_spec_rules(struct problem_spec *spec, const struct fb_rules *r)
{
	if (r->left != -1 || r->right != -1) {
		spec->window_set = 1;
		spec->window_left = r->left;
		spec->window_right = r->right;
	}
	if (r->softcap > 0) {
		spec->softcap_set = 1;
		spec->softcap = r->softcap;
	}
	if (r->alibi > 0) {
		spec->alibi_set = 1;
		spec->alibi = r->alibi;
	}
}

static const struct fb_rules fb_rule_cases[] = {
	{ 100, 20, 0, 0 },	/* both edges */
	{ 70, -1, 0, 0 },	/* left only */
	{ -1, 40, 0, 0 },	/* right only */
	{ 10, 0, 0, 0 },	/* with Tq > Tk: rows that see no key */
	{ 0, 0, 0, 0 },		/* the diagonal alone */
	{ -1, -1, 2.0, 0 },	/* softcap */
	{ -1, -1, 0, 0.25 },	/* ALiBi */
	{ -1, 0, 3.0, 0.1 },	/* causal, softcap and ALiBi */
	{ 50, 10, 1.5, 0.05 },	/* all three */
	{ 60, 0, 0, 0 },	/* long: the window skips half the causal tiles */
};

/*
 * The rules through the table against the simulator's backward (its
 * tiles skipped under the window as the kernel skips them): each case
 * of fb_rule_cases at d = 64 and 128, fp16 and bf16 in turn, ragged Tq
 * != Tk (Tq > Tk for the window that leaves rows with no key), two
 * heads (problems), both dQ modes; with the ordered dQ every step of
 * the trace build too, its steps the simulator's count under the
 * window (fast_bwd_trace_steps_masked), which a window with a left
 * edge makes fewer than the causal count.
 */
START_TEST(test_fast_bwd_rules)
{
	static const int shapes[][2] = {
		{ 300, 200 }, { 150, 333 }, { 257, 129 },
	};
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report reps[2];
	struct problem_spec spec;
	struct problem ps[2];
	struct inputs_rng rng;
	struct tiling t = { 64, 64, ORDER_FA2 };
	float *dout;
	double worst = 0;
	char what[200], err[512];
	size_t n;
	int b, mode, dd, fewer = 0, empty_rows = 0;

	memset(&o, 0, sizeof o);
	o.kernel = fast();
	inputs_rng_seed(&rng, 2628);
	for (n = 0; n < sizeof fb_rule_cases / sizeof fb_rule_cases[0]; n++)
		for (dd = 0; dd < 2; dd++) {
			const struct fb_rules *ru = &fb_rule_cases[n];
			struct tc_mask mask = tc_mask_causal(0);
			long steps;

			problem_spec_init(&spec);
			spec.tq = shapes[(n + dd) % 3][0];
			spec.tk = shapes[(n + dd) % 3][1];
			if (ru->left == 10) {
				spec.tq = 300;
				spec.tk = 140;
			}
			if (ru->left == 60) {
				spec.tq = 650;
				spec.tk = 700;
			}
			spec.d = spec.dv = dd ? 128 : 64;
			spec.dtype = (n + dd) % 2 ? DTYPE_BF16 : DTYPE_FP16;
			spec.input = INPUTS_NORMAL;
			spec.seed = 3000 + (uint64_t)n * 2 + (uint64_t)dd;
			fb_spec_rules(&spec, ru);
			fb_problems(&spec, 2, ps);
			for (b = 0; ru->left == 10 && b < spec.tq; b++)
				empty_rows += b + spec.tk - spec.tq < 0;
			mask.left = ru->left;
			mask.right = ru->right;
			steps = fast_bwd_trace_steps_masked(spec.tq, spec.tk,
			    &mask);
			fewer += ru->left >= 0 && steps <
			    fast_bwd_trace_steps(spec.tq, spec.tk, 1);
			if (ru->left == 60)
				ck_assert_msg(2 * steps < fast_bwd_trace_steps(
				    spec.tq, spec.tk, 1) + 2, "window (60, 0): "
				    "%ld steps", steps);
			dout = fb_normal(&rng, (size_t)2 * spec.tq * spec.dv,
			    spec.dtype);
			for (mode = 0; mode < 2; mode++) {
				o.dq = mode ? GPU_DQ_ORDERED : GPU_DQ_ATOMIC;
				snprintf(what, sizeof what, "Tq %d Tk %d d %d %s, "
				    "window (%d, %d) softcap %g alibi %g, dQ %s",
				    spec.tq, spec.tk, spec.d,
				    dtype_name(spec.dtype), ru->left, ru->right,
				    ru->softcap, ru->alibi, gpu_dq_mode_name(o.dq));
				ck_assert_msg(gpucheck_bwd_run_many(ps, 2, &t,
				    &rule_plain, dout, &o, reps, err,
				    sizeof err) == 0, "%s: %s", what, err);
				for (b = 0; b < 2; b++) {
					ck_assert_msg(reps[b].pass, "%s, head %d: %ld "
					    "values beyond the bound, first at step "
					    "%ld, worst %g of it (dQ %g dK %g dV %g)",
					    what, b, reps[b].failures,
					    reps[b].first_failure,
					    reps[b].worst_excess, reps[b].max_dq,
					    reps[b].max_dk, reps[b].max_dv);
					ck_assert_int_eq(reps[b].steps_compared, mode);
					ck_assert_int_eq(reps[b].steps, steps);
					worst = fmax(worst, reps[b].worst_excess);
					gpucheck_bwd_report_free(&reps[b]);
				}
			}
			free(dout);
			for (b = 0; b < 2; b++)
				problem_free(&ps[b]);
		}
	ck_assert_int_ge(fewer, 6);
	ck_assert_int_gt(empty_rows, 0);
	printf("fast backward: windows, softcap and ALiBi agree with the "
	    "simulator, every step of the ordered trace; worst value at %.3g "
	    "of the bound\n", worst);
}
END_TEST

/* ---- the double reference, grouped heads ---- */

struct fb_case {
	int batch, heads, kv_heads, tq, tk, d, causal;
	enum dtype dt;
	float scale;
	/* The rules besides causal (all 0 from a memset: none; window
	 * set: left and right apply, -1 unbounded), ALiBi's slope of
	 * query head h slopes[h] (NULL: none). */
	int window, left, right;
	float softcap;
	const float *slopes;
	float *q, *k, *v, *dout;	/* 16-bit values, in float */
	float *o, *lse;			/* the forward's, from the reference */
	double *dq, *dk, *dv;		/* the reference's gradients */
	double *mq, *mk, *mv;		/* ... and their bounds */
};

/* The case's window as mask_rule.h's rule (causal: (-1, 0)). */
static struct mask_rule
fb_mask_rule(const struct fb_case *c)
{
	if (c->window)
		return mask_rule_window(mask_rule_none(), c->left, c->right);
	if (c->causal)
		return mask_rule_window(mask_rule_none(), -1, 0);
	return mask_rule_none();
}

/* The case's rules as the kernel takes them (slopes on the host, as
 * fast_bwd_run_host takes them). */
static struct tc_mask
fb_tc_mask(const struct fb_case *c)
{
	struct tc_mask m = tc_mask_causal(c->causal);

	if (c->window) {
		m.left = c->left;
		m.right = c->right;
	}
	m.softcap = c->softcap;
	m.alibi = c->slopes;
	return m;
}

/*
 * The backward of one (batch, head) in double: O, lse and the gradients
 * added into the case's arrays, with each entry's bound (fb_reference
 * says how it is built).  q (Tq, d), k, v (Tk, d) of the head.
 */
static void
fb_reference_head(struct fb_case *c, int b, int h, double rtol, double eps)
{
	const int d = c->d, tq = c->tq, tk = c->tk;
	const int hk = h / (c->heads / c->kv_heads);
	const size_t qo = ((size_t)b * c->heads + h) * tq;
	const size_t ko = ((size_t)b * c->kv_heads + hk) * tk;
	const float *q = c->q + qo * d, *k = c->k + ko * d, *v = c->v + ko * d;
	const float *g = c->dout + qo * d;
	const struct mask_rule mr = fb_mask_rule(c);
	const double cap = c->softcap, slope = c->slopes != NULL ?
	    c->slopes[h] : 0;
	const double cap_slack = 32 * 0x1p-24 / rtol;
	/* The kernel rounds P and dS to 16 bits, which rtol covers down to
	 * fp16's normal range; below it the error is absolute, half its
	 * least subnormal (2^-25), and an entry under it is lost: dS is
	 * that small where ALiBi's bias and a cap's flat tanh meet (bf16
	 * keeps float32's range). */
	const double under = c->dt == DTYPE_FP16 ? 0x1p-25 / rtol : 0;
	double *s = malloc((size_t)tk * sizeof *s);
	double *th = malloc((size_t)tk * sizeof *th);
	double *orow = malloc((size_t)d * sizeof *orow);
	int r, cc, x;

	ck_assert(s != NULL && th != NULL && orow != NULL);
	for (r = 0; r < tq; r++) {
		double m = -INFINITY, l = 0, lse, dd = 0, bo = 0;

		for (cc = 0; cc < tk; cc++) {
			double t = 0;
			for (x = 0; x < d; x++)
				t += (double)q[r * d + x] * k[cc * d + x];
			/* mask_rule.h's score: C tanh(x / C), then the bias */
			t *= c->scale;
			th[cc] = cap > 0 ? tanh(t / cap) : 0;
			if (cap > 0)
				t = cap * th[cc];
			t -= slope * fabs((double)r + tk - tq - cc);
			s[cc] = mask_rule_visible(mr, r, cc, tq, tk) ? t :
			    -INFINITY;
			m = fmax(m, s[cc]);
		}
		if (m == -INFINITY) {
			for (x = 0; x < d; x++)
				c->o[(qo + r) * d + x] = 0.0f;
			c->lse[qo + r] = -INFINITY;
			continue;
		}
		for (cc = 0; cc < tk; cc++)
			l += exp(s[cc] - m);
		lse = m + log(l);
		for (x = 0; x < d; x++)
			orow[x] = 0;
		for (cc = 0; cc < tk; cc++) {
			s[cc] = exp(s[cc] - lse);	/* P */
			for (x = 0; x < d; x++)
				orow[x] += s[cc] * v[cc * d + x];
		}
		for (x = 0; x < d; x++) {
			c->o[(qo + r) * d + x] = (float)orow[x];
			dd += g[r * d + x] * orow[x];
			bo += fabs(g[r * d + x]) * fabs(orow[x]);
		}
		c->lse[qo + r] = (float)lse;
		for (cc = 0; cc < tk; cc++) {
			const double p = s[cc];
			double dp = 0, ap = 0, ds, mds;
			if (p == 0)
				continue;
			for (x = 0; x < d; x++) {
				dp += (double)g[r * d + x] * v[cc * d + x];
				ap += fabs(g[r * d + x]) * fabs(v[cc * d + x]);
			}
			ds = p * (dp - dd);
			mds = fabs(ds) + p * (ap + bo) * eps / rtol;
			/* back through the cap: (1 - t^2), its error an
			 * absolute 32 u of |dS| (gpucheck_bwd.c) */
			if (cap > 0) {
				const double f = 1 - th[cc] * th[cc];
				mds = mds * f + fabs(ds) * cap_slack;
				ds *= f;
			}
			mds += under;
			for (x = 0; x < d; x++) {
				c->dv[(ko + cc) * d + x] += p * g[r * d + x];
				c->mv[(ko + cc) * d + x] += (p + under) *
				    fabs(g[r * d + x]);
				c->dq[(qo + r) * d + x] += c->scale * ds *
				    k[cc * d + x];
				c->mq[(qo + r) * d + x] += c->scale * mds *
				    fabs(k[cc * d + x]);
				c->dk[(ko + cc) * d + x] += c->scale * ds *
				    q[r * d + x];
				c->mk[(ko + cc) * d + x] += c->scale * mds *
				    fabs(q[r * d + x]);
			}
		}
	}
	free(s);
	free(th);
	free(orow);
}

/* The largest row norm of n rows of x (d wide). */
static double
fb_max_norm(const float *x, size_t n, int d)
{
	double best = 0, t;
	size_t r;
	int i;

	for (r = 0; r < n; r++) {
		for (t = 0, i = 0; i < d; i++)
			t += (double)x[r * d + i] * x[r * d + i];
		best = fmax(best, sqrt(t));
	}
	return best;
}

/*
 * The bound, as gpucheck_bwd.c derives it for the simulator but against
 * the exact gradients: P and dS rounded to 16 bits (a unit u16 each:
 * 2 u16), p moved by delta_b (the forward's delta, and the rounding of
 * lse), dP and D moved by their sums ((9d/8 + 2) u, (d + 2) u) and D by
 * O's 16 bits (u16): eps = u16 + (17d/8 + 4) u of P (|dP| + |D|).
 */
static void
fb_bounds(const struct fb_case *c, double *rtol, double *eps)
{
	const double u = 0x1p-24;
	const double u16 = c->dt == DTYPE_BF16 ? 0x1p-8 : 0x1p-11;
	const double s1 = c->scale * fb_max_norm(c->q, (size_t)c->batch *
	    c->heads * c->tq, c->d) * fb_max_norm(c->k, (size_t)c->batch *
	    c->kv_heads * c->tk, c->d);
	double delta = gpucheck_tensor_delta(c->d, s1) +
	    4 * u * (s1 + log((double)c->tk));
	double bias = 0;
	int h;

	/* the rules', as gpucheck_bwd.c widens them */
	if (c->softcap > 0)
		delta += 16 * u * c->softcap;
	for (h = 0; c->slopes != NULL && h < c->heads; h++)
		bias = fmax(bias, fabs((double)c->slopes[h]) *
		    ((double)c->tq + c->tk));
	delta += 6 * u * bias;
	*rtol = 2 * u16 + 2 * delta;
	*eps = u16 + (17.0 * c->d / 8 + 4) * u;
}

static void
fb_case_build(struct fb_case *c, uint64_t seed)
{
	struct inputs_rng rng;
	const size_t nq = (size_t)c->batch * c->heads * c->tq * c->d;
	const size_t nk = (size_t)c->batch * c->kv_heads * c->tk * c->d;
	double rtol, eps;
	int b, h;

	inputs_rng_seed(&rng, seed);
	c->scale = (float)(1.0 / sqrt((double)c->d));
	c->q = fb_normal(&rng, nq, c->dt);
	c->k = fb_normal(&rng, nk, c->dt);
	c->v = fb_normal(&rng, nk, c->dt);
	c->dout = fb_normal(&rng, nq, c->dt);
	c->o = calloc(nq, sizeof *c->o);
	c->lse = calloc(nq / c->d, sizeof *c->lse);
	c->dq = calloc(nq, sizeof *c->dq);
	c->mq = calloc(nq, sizeof *c->mq);
	c->dk = calloc(nk, sizeof *c->dk);
	c->mk = calloc(nk, sizeof *c->mk);
	c->dv = calloc(nk, sizeof *c->dv);
	c->mv = calloc(nk, sizeof *c->mv);
	ck_assert(c->o && c->lse && c->dq && c->mq && c->dk && c->mk &&
	    c->dv && c->mv);
	fb_bounds(c, &rtol, &eps);
	for (b = 0; b < c->batch; b++)
		for (h = 0; h < c->heads; h++)
			fb_reference_head(c, b, h, rtol, eps);
}

static void
fb_case_free(struct fb_case *c)
{
	free(c->q);
	free(c->k);
	free(c->v);
	free(c->dout);
	free(c->o);
	free(c->lse);
	free(c->dq);
	free(c->mq);
	free(c->dk);
	free(c->mk);
	free(c->dv);
	free(c->mv);
}

/* The kernel's float32 gradients (host) for the case, flags as given,
 * under the case's rules or, with kmask, those. */
static void
fb_run_mask(const struct fb_case *c, const struct tc_mask *kmask, int flags,
    int repeat, float *dq, float *dk, float *dv, double *ms)
{
	struct fast_bwd_host h;
	struct tc_mask mask = kmask != NULL ? *kmask : fb_tc_mask(c);
	char err[512];

	memset(&h, 0, sizeof h);
	h.batch = c->batch;
	h.heads = c->heads;
	h.kv_heads = c->kv_heads;
	h.tq = c->tq;
	h.tk = c->tk;
	h.d = c->d;
	h.dtype = c->dt == DTYPE_BF16 ? FAST_BF16 : FAST_FP16;
	h.causal = c->causal;
	h.mask = &mask;
	h.scale = c->scale;
	h.flags = flags;
	h.q = c->q;
	h.k = c->k;
	h.v = c->v;
	h.o = c->o;
	h.dout = c->dout;
	h.lse = c->lse;
	h.dq = dq;
	h.dk = dk;
	h.dv = dv;
	h.repeat = repeat;
	ck_assert_msg(fast_bwd_run_host(&h, err, sizeof err) == 0, "%s", err);
	if (ms != NULL)
		*ms = h.ms;
}

static void
fb_run(const struct fb_case *c, int flags, int repeat, float *dq, float *dk,
    float *dv, double *ms)
{
	fb_run_mask(c, NULL, flags, repeat, dq, dk, dv, ms);
}

/* n values against the reference: how many beyond the bound; the worst
 * ratio into *worst. */
static long
fb_compare(const float *got, const double *ref, const double *mag,
    size_t n, double rtol, double *worst, size_t *first)
{
	long bad = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const double allowed = rtol * mag[i] + FLT_MIN;
		const double e = fabs((double)got[i] - ref[i]);
		if (!(e <= allowed)) {
			if (bad++ == 0)
				*first = i;
		}
		if (isnan(e))
			*worst = INFINITY;
		else
			*worst = fmax(*worst, e / allowed);
	}
	return bad;
}

/* The case's three gradients against the reference (flags: the dQ mode);
 * returns the worst ratio. */
static double
fb_check(const struct fb_case *c, int flags, const char *what)
{
	const size_t nq = (size_t)c->batch * c->heads * c->tq * c->d;
	const size_t nk = (size_t)c->batch * c->kv_heads * c->tk * c->d;
	float *dq = malloc(nq * sizeof *dq), *dk = malloc(nk * sizeof *dk);
	float *dv = malloc(nk * sizeof *dv);
	double rtol, eps, worst = 0;
	size_t first = 0;
	long bad;

	ck_assert(dq != NULL && dk != NULL && dv != NULL);
	fb_bounds(c, &rtol, &eps);
	fb_run(c, flags, 0, dq, dk, dv, NULL);
	bad = fb_compare(dq, c->dq, c->mq, nq, rtol, &worst, &first);
	ck_assert_msg(bad == 0, "%s: dQ: %ld beyond the bound, first [%zu] "
	    "%g against %g (bound %g)", what, bad, first, (double)dq[first],
	    c->dq[first], rtol * c->mq[first]);
	bad = fb_compare(dk, c->dk, c->mk, nk, rtol, &worst, &first);
	ck_assert_msg(bad == 0, "%s: dK: %ld beyond the bound, first [%zu] "
	    "%g against %g (bound %g)", what, bad, first, (double)dk[first],
	    c->dk[first], rtol * c->mk[first]);
	bad = fb_compare(dv, c->dv, c->mv, nk, rtol, &worst, &first);
	ck_assert_msg(bad == 0, "%s: dV: %ld beyond the bound, first [%zu] "
	    "%g against %g (bound %g)", what, bad, first, (double)dv[first],
	    c->dv[first], rtol * c->mv[first]);
	free(dq);
	free(dk);
	free(dv);
	return worst;
}

/*
 * The double reference itself, on one head: gradref.c's gradients (which
 * tests/check_backward.c holds to finite differences) of the same
 * inputs agree with fb_reference_head's to double's roundings.
 */
START_TEST(test_fast_bwd_reference_checked)
{
	static const float slope = 0.2f;
	struct fb_case c;
	struct problem_spec spec;
	struct problem p;
	char err[256];
	double *dq, *dk, *dv;
	size_t i;
	int rules;

	for (rules = 0; rules < 2; rules++) {
	memset(&c, 0, sizeof c);
	c.batch = c.heads = c.kv_heads = 1;
	c.tq = 70;
	c.tk = 90;
	c.d = 64;
	c.causal = !rules;
	c.dt = DTYPE_FP16;
	if (rules) {
		/* a window, the cap and ALiBi together */
		c.window = 1;
		c.left = 20;
		c.right = 3;
		c.softcap = 1.5f;
		c.slopes = &slope;
	}
	fb_case_build(&c, 77);
	problem_spec_init(&spec);
	spec.q.data = c.q;
	spec.q.rows = c.tq;
	spec.q.cols = c.d;
	spec.k.data = c.k;
	spec.k.rows = c.tk;
	spec.k.cols = c.d;
	spec.v.data = c.v;
	spec.v.rows = c.tk;
	spec.v.cols = c.d;
	spec.causal = !rules;
	spec.dtype = DTYPE_FP16;
	if (rules) {
		spec.window_set = 1;
		spec.window_left = c.left;
		spec.window_right = c.right;
		spec.softcap_set = 1;
		spec.softcap = c.softcap;
		spec.alibi_set = 1;
		spec.alibi = slope;
	}
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	ck_assert(fabs(p.scale - c.scale) <= 1e-7);
	dq = calloc((size_t)c.tq * c.d, sizeof *dq);
	dk = calloc((size_t)c.tk * c.d, sizeof *dk);
	dv = calloc((size_t)c.tk * c.d, sizeof *dv);
	ck_assert(dq && dk && dv);
	ck_assert_msg(gradref_gradients(&p, c.dout, dq, dk, dv, NULL, err,
	    sizeof err) == 0, "%s", err);
	for (i = 0; i < (size_t)c.tq * c.d; i++)
		ck_assert_msg(fabs(dq[i] - c.dq[i]) <= 1e-9 * (c.mq[i] + 1e-6),
		    "dQ[%zu] %g gradref %g", i, c.dq[i], dq[i]);
	for (i = 0; i < (size_t)c.tk * c.d; i++) {
		ck_assert_msg(fabs(dk[i] - c.dk[i]) <= 1e-9 * (c.mk[i] + 1e-6),
		    "dK[%zu] %g gradref %g", i, c.dk[i], dk[i]);
		ck_assert_msg(fabs(dv[i] - c.dv[i]) <= 1e-9 * (c.mv[i] + 1e-6),
		    "dV[%zu] %g gradref %g", i, c.dv[i], dv[i]);
	}
	free(dq);
	free(dk);
	free(dv);
	problem_free(&p);
	fb_case_free(&c);
	}
}
END_TEST

/*
 * Grouped K/V heads and batches against the double reference: G = 2 and
 * 3, one K/V head shared by all, causal with Tq > Tk (rows that see no
 * key: dQ exactly 0) and Tq < Tk, both d, both dtypes, both dQ modes,
 * both key-block widths (128, the default, and 64).
 */
START_TEST(test_fast_bwd_grouped)
{
	static const struct { int b, h, hk, tq, tk, d, causal; } shapes[] = {
		{ 2, 4, 2, 130, 77, 64, 1 },
		{ 1, 3, 1, 65, 200, 128, 1 },
		{ 2, 2, 2, 96, 96, 128, 0 },
		{ 1, 6, 2, 33, 150, 64, 0 },
		{ 1, 2, 1, 200, 64, 128, 1 },
	};
	double worst = 0;
	char what[128];
	int s, dt, mode;

	for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
		for (dt = 0; dt < 2; dt++) {
			struct fb_case c;
			memset(&c, 0, sizeof c);
			c.batch = shapes[s].b;
			c.heads = shapes[s].h;
			c.kv_heads = shapes[s].hk;
			c.tq = shapes[s].tq;
			c.tk = shapes[s].tk;
			c.d = shapes[s].d;
			c.causal = shapes[s].causal;
			c.dt = dt ? DTYPE_BF16 : DTYPE_FP16;
			fb_case_build(&c, 900 + (uint64_t)(s * 2 + dt));
			/* Both dQ modes, with 128 and 64 keys a block. */
			for (mode = 0; mode < 4; mode++) {
				snprintf(what, sizeof what, "B %d H %d Hkv %d Tq %d "
				    "Tk %d d %d%s %s, dQ %s, Bc %d", c.batch,
				    c.heads, c.kv_heads, c.tq, c.tk, c.d, c.causal ?
				    " causal" : "", dtype_name(c.dt), mode & 1 ?
				    "ordered" : "atomic", mode & 2 ? 64 : 128);
				worst = fmax(worst, fb_check(&c, (mode & 1 ?
				    FAST_BWD_ORDERED : 0) | (mode & 2 ?
				    FAST_BWD_BC64 : 0), what));
			}
			fb_case_free(&c);
		}
	printf("fast backward: grouped heads agree with the double reference; "
	    "worst value at %.3g of the bound\n", worst);
}
END_TEST

/*
 * The rules, grouped heads and batches against the double reference: a
 * window of both edges, right only, left only, and one that leaves rows
 * with no key (dQ exactly 0 there, within FLT_MIN), a softcap, ALiBi's
 * slopes one per query head, and all together; d = 64 and 128, ragged
 * Tq != Tk, G = 1, 2, 3, both dtypes, both dQ modes, both key-block
 * widths.  Then the kernel given the case without its rule (the window
 * off, no cap, no slopes) is far outside the bound: the bound is tight
 * enough that a rule dropped in the backward is caught.
 */
START_TEST(test_fast_bwd_grouped_rules)
{
	static const float slopes[] = { 0.3f, 0.15f, 0.075f, 0.0375f,
	    0.01875f, 0.009375f };
	static const struct {
		int b, h, hk, tq, tk, d, window, left, right;
		float softcap;
		int alibi;
	} shapes[] = {
		{ 2, 4, 2, 130, 77, 64, 1, 20, 5, 0, 0 },
		{ 1, 3, 1, 65, 200, 128, 1, -1, 30, 2.0f, 0 },
		{ 1, 6, 2, 200, 150, 64, 1, 40, -1, 0, 1 },
		{ 1, 2, 1, 300, 100, 128, 1, 5, 0, 1.5f, 1 },
		{ 2, 2, 2, 96, 170, 128, 0, 0, 0, 3.0f, 1 },
	};
	double worst = 0, off;
	char what[160];
	int s, dt, mode, empty = 0;

	for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
		for (dt = 0; dt < 2; dt++) {
			struct fb_case c;
			struct tc_mask none;
			const size_t nq = (size_t)shapes[s].b * shapes[s].h *
			    shapes[s].tq * shapes[s].d;
			const size_t nk = (size_t)shapes[s].b * shapes[s].hk *
			    shapes[s].tk * shapes[s].d;
			float *dq = malloc(nq * sizeof *dq);
			float *dk = malloc(nk * sizeof *dk);
			float *dv = malloc(nk * sizeof *dv);
			double rtol, eps, w = 0;
			size_t first = 0, i;
			long bad;

			ck_assert(dq != NULL && dk != NULL && dv != NULL);
			memset(&c, 0, sizeof c);
			c.batch = shapes[s].b;
			c.heads = shapes[s].h;
			c.kv_heads = shapes[s].hk;
			c.tq = shapes[s].tq;
			c.tk = shapes[s].tk;
			c.d = shapes[s].d;
			c.window = shapes[s].window;
			c.left = shapes[s].left;
			c.right = shapes[s].right;
			c.softcap = shapes[s].softcap;
			c.slopes = shapes[s].alibi ? slopes : NULL;
			c.dt = dt ? DTYPE_BF16 : DTYPE_FP16;
			fb_case_build(&c, 1900 + (uint64_t)(s * 2 + dt));
			for (mode = 0; mode < 4; mode++) {
				snprintf(what, sizeof what, "B %d H %d Hkv %d Tq %d "
				    "Tk %d d %d window %d (%d, %d) cap %g alibi %d "
				    "%s, dQ %s, Bc %d", c.batch, c.heads,
				    c.kv_heads, c.tq, c.tk, c.d, c.window, c.left,
				    c.right, (double)c.softcap, c.slopes != NULL,
				    dtype_name(c.dt), mode & 1 ? "ordered" :
				    "atomic", mode & 2 ? 64 : 128);
				worst = fmax(worst, fb_check(&c, (mode & 1 ?
				    FAST_BWD_ORDERED : 0) | (mode & 2 ?
				    FAST_BWD_BC64 : 0), what));
			}
			/* rows that see no key: dQ 0 */
			for (i = 0; i < (size_t)c.batch * c.heads * c.tq; i++)
				if (c.lse[i] == -INFINITY) {
					empty++;
					fb_run(&c, 0, 0, dq, dk, dv, NULL);
					for (int x = 0; x < c.d; x++)
						ck_assert(fabsf(dq[i * c.d + x]) <=
						    FLT_MIN);
					break;
				}
			/* the rule dropped in the kernel alone */
			none = tc_mask_causal(0);
			fb_run_mask(&c, &none, 0, 0, dq, dk, dv, NULL);
			fb_bounds(&c, &rtol, &eps);
			bad = fb_compare(dq, c.dq, c.mq, nq, rtol, &w, &first);
			bad += fb_compare(dk, c.dk, c.mk, nk, rtol, &w, &first);
			off = w;
			ck_assert_msg(bad > 0 && off > 100, "%s: the kernel "
			    "without the rules is only %g of the bound", what,
			    off);
			free(dq);
			free(dk);
			free(dv);
			fb_case_free(&c);
		}
	ck_assert_int_ge(empty, 2);
	printf("fast backward: windows, softcap and ALiBi with grouped heads "
	    "agree with the double reference; worst value at %.3g of the "
	    "bound\n", worst);
}
END_TEST

/*
 * The ordered dQ: the same bits on two runs of a problem with many key
 * blocks racing; the atomic dQ within the bound of it (both are checked
 * against the reference in test_fast_bwd_grouped).
 */
START_TEST(test_fast_bwd_ordered)
{
	struct fb_case c;
	size_t nq, nk, i;
	float *a, *b, *k, *v;
	long differ = 0;

	memset(&c, 0, sizeof c);
	c.batch = 2;
	c.heads = 2;
	c.kv_heads = 1;
	c.tq = 300;
	c.tk = 700;
	c.d = 64;
	c.dt = DTYPE_FP16;
	fb_case_build(&c, 4);
	nq = (size_t)c.batch * c.heads * c.tq * c.d;
	nk = (size_t)c.batch * c.kv_heads * c.tk * c.d;
	a = malloc(nq * sizeof *a);
	b = malloc(nq * sizeof *b);
	k = malloc(nk * sizeof *k);
	v = malloc(nk * sizeof *v);
	ck_assert(a && b && k && v);
	fb_run(&c, FAST_BWD_ORDERED, 0, a, k, v, NULL);
	fb_run(&c, FAST_BWD_ORDERED, 2, b, k, v, NULL);
	ck_assert_msg(memcmp(a, b, nq * sizeof *a) == 0, "the ordered dQ "
	    "changed between two runs");
	fb_run(&c, 0, 0, b, k, v, NULL);
	for (i = 0; i < nq; i++)
		differ += memcmp(&a[i], &b[i], sizeof *a) != 0;
	printf("fast backward: ordered dQ the same bits twice; the atomic "
	    "dQ differs from it in %ld of %zu entries (the adds' order)\n",
	    differ, nq);
	(void)fb_check(&c, 0, "atomic, 2 x 2 heads of 300 x 700");
	free(a);
	free(b);
	free(k);
	free(v);
	fb_case_free(&c);
}
END_TEST

/*
 * The bugs, run by the kernel alone against a correct simulator: no-scale
 * (dQ and dK without the factor) and no-d (dS = P o dP) are caught, far
 * beyond the bound; dV, which neither touches, is left as it was.
 */
START_TEST(test_fast_bwd_fault_caught)
{
	static const struct gpucheck_fault no_scale = { BUG_NONE,
	    MERGE_BUG_NONE, BWD_BUG_NO_SCALE };
	static const struct gpucheck_fault no_d = { BUG_NONE,
	    MERGE_BUG_NONE, BWD_BUG_NO_D };
	const struct gpucheck_fault *faults[2] = { &no_scale, &no_d };
	struct gpucheck_bwd_opts o;
	struct gpucheck_bwd_report rep;
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct inputs_rng rng;
	float *dout;
	char err[512];
	int f;

	problem_spec_init(&spec);
	spec.tq = 100;
	spec.tk = 130;
	spec.d = spec.dv = 64;
	spec.causal = 1;
	spec.input = INPUTS_NORMAL;
	spec.dtype = DTYPE_FP16;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	inputs_rng_seed(&rng, 12);
	dout = fb_normal(&rng, (size_t)p.tq * p.dv, p.dtype);
	memset(&o, 0, sizeof o);
	o.kernel = fast();
	for (o.dq = GPU_DQ_ATOMIC; o.dq <= GPU_DQ_ORDERED; o.dq++) {
		o.fault = NULL;
		ck_assert_msg(gpucheck_bwd_run_many(&p, 1, &t, &rule_plain, dout,
		    &o, &rep, err, sizeof err) == 0, "%s", err);
		ck_assert_msg(rep.pass, "control: %ld beyond, worst %g",
		    rep.failures, rep.worst_excess);
		gpucheck_bwd_report_free(&rep);
		for (f = 0; f < 2; f++) {
			o.fault = faults[f];
			ck_assert_msg(gpucheck_bwd_run_many(&p, 1, &t, &rule_plain,
			    dout, &o, &rep, err, sizeof err) == 0, "%s", err);
			ck_assert_int_eq(rep.pass, 0);
			ck_assert_msg(rep.worst_excess > 100, "fault %d: only %g of "
			    "the bound", f, rep.worst_excess);
			ck_assert_msg(rep.max_dk > 100 * rep.max_dv, "fault %d: dK "
			    "%g dV %g", f, rep.max_dk, rep.max_dv);
			gpucheck_bwd_report_free(&rep);
		}
	}
	free(dout);
	problem_free(&p);
}
END_TEST

/* What the fast backward cannot take is refused by name, before any
 * device work. */
START_TEST(test_fast_bwd_refusals)
{
	struct problem_spec spec;
	struct problem p;
	char err[512];
	/* 16-byte aligned, as the entry asks, so its other checks speak. */
	static _Alignas(16) float z[16];
	void *dummy = z;

	problem_spec_init(&spec);
	spec.tq = spec.tk = 32;
	spec.d = spec.dv = 32;
	spec.dtype = DTYPE_FP16;
	spec.input = INPUTS_NORMAL;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(gpu_backward_check(fast(), &p, BWD_BUG_NONE, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "d = 32, dv = 32 backward") != NULL, "%s",
	    err);
	problem_free(&p);
	spec.d = spec.dv = 64;
	spec.dtype = DTYPE_FP32;
	ck_assert_msg(problem_build(&spec, &p, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(gpu_backward_check(fast(), &p, BWD_BUG_NONE, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "--dtype fp32 backward") != NULL, "%s", err);
	p.dtype = DTYPE_FP16;
	ck_assert_int_eq(gpu_backward_check(fast(), &p, BWD_BUG_MAX_NOT_LSE,
	    err, sizeof err), -1);
	ck_assert_msg(strstr(err, "max-not-lse") != NULL, "%s", err);
	problem_free(&p);
	/* The C entry: a group that does not divide, and d. */
	ck_assert_int_eq(fast_attention_bwd(dummy, dummy, dummy, dummy, dummy,
	    z, dummy, dummy, dummy, dummy, 1, 3, 2, 16, 16, 64, FAST_FP16, 0,
	    0.f, 0, NULL, err, sizeof err), -1);
	ck_assert_str_eq(err, "fast_attention_bwd: 3 query heads are not a "
	    "whole number of groups of 2 K/V heads");
	ck_assert_int_eq(fast_attention_bwd(dummy, dummy, dummy, dummy, dummy,
	    z, dummy, dummy, dummy, dummy, 1, 1, 1, 16, 16, 96, FAST_FP16, 0,
	    0.f, 0, NULL, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "d = 96") != NULL, "%s", err);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("gpu_fast_bwd");
	TCase *tc = tcase_create("fast backward");

	gpuprobe_require_device();
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_fast_bwd_refusals);
	tcase_add_test(tc, test_fast_bwd_reference_checked);
	tcase_add_test(tc, test_fast_bwd_random);
	tcase_add_test(tc, test_fast_bwd_steps);
	tcase_add_test(tc, test_fast_bwd_rules);
	tcase_add_test(tc, test_fast_bwd_grouped);
	tcase_add_test(tc, test_fast_bwd_grouped_rules);
	tcase_add_test(tc, test_fast_bwd_ordered);
	tcase_add_test(tc, test_fast_bwd_fault_caught);
	suite_add_tcase(s, tc);
	return s;
}
