/* online.c - the seed's per-row update, in both conventions (online.h). */
#include "config.h"

#include "online.h"
#include "online_rule.h"

#include <assert.h>
#include <math.h>
#include <string.h>

static const char *convention_names[ONLINE_CONVENTIONS] = {
	[CONV_UNNORMALIZED] = "unnormalized",
	[CONV_NORMALIZED] = "normalized",
};

/* The host's copy of the table: the device reads the flags alone. */
static const struct online_bug_mode bug_modes[ONLINE_BUGS] = {
#define ONLINE_BUG_MODE(id, name, needs, sl, sa, kl, breaks)		\
	[id] = { id, name, breaks, needs, { sl, sa, kl, (needs) == CONV_NORMALIZED } },
	ONLINE_BUG_TABLE(ONLINE_BUG_MODE)
#undef ONLINE_BUG_MODE
};

const char *
online_convention_name(enum online_convention c)
{
	return convention_names[c];
}

int
online_convention_parse(const char *name, enum online_convention *out)
{
	int c;

	for (c = 0; c < ONLINE_CONVENTIONS; c++) {
		if (strcmp(name, convention_names[c]) == 0) {
			*out = (enum online_convention)c;
			return 0;
		}
	}
	return -1;
}

const struct online_bug_mode *
online_bug_mode(enum online_bug b)
{
	assert((int)b >= 0 && (int)b < ONLINE_BUGS);
	return &bug_modes[b];
}

const char *
online_bug_name(enum online_bug b)
{
	return online_bug_mode(b)->name;
}

int
online_bug_parse(const char *name, enum online_bug *out)
{
	int b;

	for (b = 0; b < ONLINE_BUGS; b++) {
		if (strcmp(name, bug_modes[b].name) == 0) {
			*out = (enum online_bug)b;
			return 0;
		}
	}
	return -1;
}

int
online_rule_valid(const struct online_rule *r)
{
	int needs = online_bug_mode(r->bug)->needs;

	return needs == ONLINE_ANY_CONVENTION || (int)r->convention == needs;
}

float
online_max(float m_old, const float *s, int n)
{
	float m = m_old;
	int c;

	for (c = 0; c < n; c++)
		m = s[c] > m ? s[c] : m;
	return m;
}

float
online_alpha(float m_old, float m_new)
{
	/* exp(-inf - (-inf)) would be NaN: nothing seen yet keeps a = 1. */
	if (isinf(m_new) && m_new < 0)
		return 1.0f;
	return expf(m_old - m_new);
}

void
online_exp(const float *s, int n, float m_new, float *p)
{
	int c;

	if (isinf(m_new) && m_new < 0) {
		memset(p, 0, (size_t)n * sizeof *p);
		return;
	}
	for (c = 0; c < n; c++)
		p[c] = expf(s[c] - m_new);	/* exp(-inf) = 0 for masked s */
}

float
online_update(const struct online_rule *r, float alpha, float l_old,
    float rowsum, const float *acc_old, const float *pv, int dv,
    float *acc_new)
{
	/* Which of l and the accumulator get the factor a (online_rule.h). */
	struct online_bug_flags f = online_bug_flags(r->bug);
	float la = f.scale_l ? alpha : 1.0f;
	float aa = f.scale_acc ? alpha : 1.0f;
	float l_new = la * l_old + rowsum;
	float keep;
	int x;

	if (r->convention == CONV_UNNORMALIZED) {
		for (x = 0; x < dv; x++)
			acc_new[x] = aa * acc_old[x] + pv[x];
		return l_new;
	}
	/* Normalized: o holds u / l_old, so the old part is a l_old o.
	 * Forgetting l_old is what mixing the two conventions does. */
	keep = f.keep_l ? aa * l_old : aa;
	for (x = 0; x < dv; x++)
		acc_new[x] = l_new > 0.0f ? (keep * acc_old[x] + pv[x]) / l_new : 0.0f;
	return l_new;
}

void
online_finalize(enum online_convention c, float m, float l, const float *acc,
    int dv, float *o, float *lse)
{
	int x;

	for (x = 0; x < dv; x++)
		o[x] = l > 0.0f ? (c == CONV_UNNORMALIZED ? acc[x] / l : acc[x]) : 0.0f;
	*lse = l > 0.0f ? m + logf(l) : -INFINITY;
}
