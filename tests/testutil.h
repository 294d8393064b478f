/*
 * testutil.h - what the check suites share: one main() that runs the
 * suite a test program defines, and random problems for the property
 * tests.
 */
#ifndef FLASHSTEP_TESTUTIL_H
#define FLASHSTEP_TESTUTIL_H

#include <check.h>

#include "model/inputs.h"
#include "model/online.h"
#include "model/problem.h"
#include "model/schedule.h"

/* Each check_<module>.c defines this; check_main.c runs it. */
Suite *test_suite(void);

/* Which kinds of random problem tu_random_problem may draw. */
#define TU_SCORES	0x1	/* some problems give S directly */
#define TU_CAUSAL	0x2	/* some problems are causal */
#define TU_MASKED_ROWS	0x4	/* scores problems with -inf entries and rows */

struct tu_case {
	struct problem p;
	struct tiling t;
	struct online_rule rule;
	char what[160];		/* the case in words, for failure messages */
};

/*
 * Draws a random problem: Tq, Tk in [1, maxt], d, dv in [1, 24], Br and
 * Bc in [1, maxt / 2 + 8] (often ragged, sometimes larger than the
 * problem), both orders, both conventions, bug none, dtype as given.
 */
void tu_random_case(struct inputs_rng *rng, int maxt, unsigned kinds,
    enum dtype dtype, struct tu_case *c);
void tu_case_free(struct tu_case *c);

/* Builds a scores problem from row-major S (tq, tk) and V (tk, dv). */
void tu_scores_problem(const float *s, int tq, int tk, const float *v, int dv,
    struct problem *p);

/* Runs the sim to the end; O and lse are malloc'd (caller frees). */
void tu_run(const struct problem *p, const struct tiling *t,
    const struct online_rule *rule, float **o, float **lse);

/*
 * Runs p (every head) through the sim with its keys split into splits
 * ranges (< 2: none) and each K/V group's query rows packed or not, then
 * the combine (left to right) where it splits: O and lse into o
 * (problem_rows x dv) and lse (problem_rows).
 */
void tu_run_split(const struct problem *p, const struct tiling *t,
    int splits, int pack_gqa, const struct online_rule *rule, float *o,
    float *lse);

/*
 * O of every head of p against the double reference: returns max |o -
 * ref| / max(1, max |ref|), *lse_err the worst |lse - ref| / max(1,
 * |ref|).  Fails where O is not finite, or lse is -inf (a row that sees
 * no key) where the reference's is not, or the other way.
 */
double tu_forward_error(const struct problem *p, const float *o,
    const float *lse, double *lse_err);

/* The loss sum(dO o O) of p (one head) with the double reference's O:
 * what finite differences of the double gradients take. */
double tu_reference_loss(const struct problem *p, const float *dout);

/*
 * g, the gradient of tu_reference_loss over p's Q (over S for a scores
 * problem), against central differences of that loss (step 2^-9, each
 * entry of Q or S moved and put back): returns the worst |g - the
 * difference|; *big (may be NULL) gets max(1e-30, max |g|).
 */
double tu_fd_error(struct problem *p, const float *dout, const double *g,
    double *big);

/*
 * Gives spec its scores directly, for heads x Tq x Tk of spec (its
 * heads, kv_heads, tq, tk): S drawn N(0, scale^2) and V (kv_heads x Tk,
 * dv columns) N(0, 1) from seed, in *s and *v (malloc'd: free them
 * after problem_build); spec's tq, tk, d and dv become 0 (S sets them).
 */
void tu_spec_scores(struct problem_spec *spec, uint64_t seed, double scale,
    float **s, float **v);

/* max |o - ref| / max |ref| against the double reference. */
double tu_rel_error(const struct problem *p, const float *o);

/*
 * lse (Tq, one head) against the double reference, row by row, within
 * the float32 bound tu_lse_check derives (testutil.c).  Returns 0 when
 * every row is within it; 1 otherwise, with the first bad row in msg.
 * *worst (may be NULL) gets the largest |lse - ref| / bound over the
 * rows, so a caller can show the bound is not vacuous.
 */
int tu_lse_check(const struct problem *p, const float *lse, double *worst,
    char *msg, size_t msglen);

#endif
