/*
 * gradref.h - the gradients of attention computed the plain way, in
 * double: the ground truth for the backward pass.
 *
 * The loss is L = sum(dO o O), so dO is its gradient with respect to O.
 * For each query row r, with s = scale Q_r K^T (masked entries -inf):
 *
 *   P_r = softmax(s)      O_r = P_r V      D_r = dO_r . O_r
 *   for each key c:  dP_rc = dO_r . V_c     dS_rc = P_rc (dP_rc - D_r)
 *                    dV_c += P_rc dO_r
 *                    dQ_r += scale dS_rc K_c     dK_c += scale dS_rc Q_r
 *
 * The score rules (mask_rule.h) bend s first: the softmax sees
 * C tanh(x / C) - slope |r + Tk - Tq - c| of the scaled product x, so
 * dS_rc above is the gradient of that score, and the one that goes on to
 * dQ, dK and the returned dS is dS_rc (1 - tanh^2(x / C)), the gradient
 * of x (ALiBi's bias is a constant and changes nothing).
 *
 * Dropout (mask_rule.h) multiplies P by Z = keep / (1 - p) where P V
 * reads it, so O_r = sum_c P_rc Z_rc V_c; then dP_rc = Z_rc dO_r . V_c,
 * dV_c += P_rc Z_rc dO_r, and D_r = dO_r . O_r is still sum_c P_rc dP_rc,
 * so dS_rc = P_rc (dP_rc - D_r) keeps its form: a dropped entry gets
 * -P_rc D_r (its P still moved the softmax's denominator).
 *
 * A scores problem's gradient with respect to S is dS itself (and dV).
 * Rows that see no key contribute nothing.  It never tiles and shares no
 * code and no rounding with backward.c; tests check it in turn against
 * finite differences of the forward.
 */
#ifndef FLASHSTEP_GRADREF_H
#define FLASHSTEP_GRADREF_H

#include <stddef.h>

#include "problem.h"

/*
 * dQ (Tq, d), dK (Tk, d), dV (Tk, dv) and dS (Tq, Tk), the gradient
 * with respect to S, for the upstream gradient dout (Tq, dv).  Any output
 * may be NULL (dQ and dK are ignored in a scores problem).  Returns 0, or -1
 * when out of memory (err set).
 */
int gradref_gradients(const struct problem *p, const float *dout, double *dq,
    double *dk, double *dv, double *ds, char *err, size_t errlen);

/*
 * The same sums over the absolute values of their terms: what rounding
 * errors scale with (|fl(sum) - sum| <= gamma sum |terms|).  dS's terms
 * are P |dP| and P D with |dP| = sum |dO| |V| and |D| = sum |dO| |O|;
 * dQ's are scale |dS| |K|, dK's scale |dS| |Q|, dV's P |dO|.  Same
 * arguments and returns as gradref_gradients.
 */
int gradref_magnitudes(const struct problem *p, const float *dout, double *dq,
    double *dk, double *dv, double *ds, char *err, size_t errlen);

#endif
