/* lesson_parser.c - the parser's state as directives see it, and the
 * readers they share (lesson_parser.h). */
#include "config.h"

#include "lesson_parser.h"
#include "model/sim.h"
#include "model/timeline.h"
#include "model/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Phases are named by the segments of a timeline: the forward's (load,
 * scores, max, rescale, exp, update, finalize), then the names the
 * combine and the backward add (weights; P, dV, dP, dS, dQ, dK, write).
 * Each distinct name gets a number in that order, so a forward phase's
 * number is its enum sim_phase.  Returns the name of number id, or the
 * number of name (then *id), walking the same list.
 */
static const char *
phase_walk(int want, const char *name, int *id)
{
	static const struct timeline_segment *const segs[] = {
		&timeline_forward, &timeline_combine, &timeline_backward,
	};
	const char *seen[64], *x;
	size_t s;
	int n = 0, p, k;

	for (s = 0; s < sizeof segs / sizeof segs[0]; s++)
		for (p = 0; n < 64 && strcmp(x = segs[s]->phase_name(p), "?") != 0;
		    p++) {
			for (k = 0; k < n && strcmp(seen[k], x) != 0; k++)
				;
			if (k < n)
				continue;
			if (n == want || (name != NULL && strcmp(x, name) == 0)) {
				*id = n;
				return x;
			}
			seen[n++] = x;
		}
	return NULL;
}

const char *
lesson_parser_phase_name(int phase)
{
	int id;
	const char *name = phase >= 0 ? phase_walk(phase, NULL, &id) : NULL;

	return name != NULL ? name : "?";
}

int
lesson_parser_phase(const char *name)
{
	int id;

	return phase_walk(-1, name, &id) != NULL ? id : -1;
}

/* The previous directive (NULL at the first). */
static const struct lesson_cmd *
lesson_parser_previous(const struct lesson_parser *ps)
{
	return ps->idx > 0 ? &ps->l->cmds[ps->idx - 1] : NULL;
}

int
lesson_parser_after(const struct lesson_parser *ps, const char *a,
    const char *b)
{
	const struct lesson_cmd *p = lesson_parser_previous(ps);

	return p != NULL && (strcmp(p->dir->name, a) == 0 ||
	    (b != NULL && strcmp(p->dir->name, b) == 0));
}

/* FNV-1a: names are short, and any spread will do. */
static size_t
label_hash(const char *name)
{
	size_t h = 2166136261u;

	for (; *name != '\0'; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

static const char *
label_name(const struct lesson_parser *ps, int i)
{
	return ps->l->cmds[i].argv[0];
}

/* The slot of name in the index: where it is, or the empty slot where
 * it would go. */
static size_t
label_slot(const struct lesson_parser *ps, const char *name)
{
	size_t mask = ps->labels_cap - 1, k = label_hash(name) & mask;

	while (ps->labels[k] != 0 &&
	    strcmp(label_name(ps, ps->labels[k] - 1), name) != 0)
		k = (k + 1) & mask;
	return k;
}

/* Doubles the index (at half full); 0 or -1 (no memory). */
static int
label_grow(struct lesson_parser *ps)
{
	size_t cap = ps->labels_cap ? 2 * ps->labels_cap : 64, i, k;
	int *old = ps->labels, *grown;
	size_t oldcap = ps->labels_cap;

	grown = calloc(cap, sizeof *grown);
	if (grown == NULL)
		return -1;
	ps->labels = grown;
	ps->labels_cap = cap;
	for (i = 0; i < oldcap; i++)
		if (old[i] != 0) {
			k = label_slot(ps, label_name(ps, old[i] - 1));
			ps->labels[k] = old[i];
		}
	free(old);
	return 0;
}

int
lesson_parser_label(struct lesson_parser *ps, const char *name)
{
	const struct lesson_cmd *c;
	size_t k;

	/* Index the directives parsed since the last lookup: every
	 * directive is indexed once, so n lookups cost O(n) in all.  The
	 * first of two labels of one name stays (the second is refused). */
	for (; ps->labels_upto < ps->idx; ps->labels_upto++) {
		c = &ps->l->cmds[ps->labels_upto];
		if (strcmp(c->dir->name, "label") != 0 || c->argc < 1)
			continue;
		if (2 * (ps->labels_n + 1) > ps->labels_cap &&
		    label_grow(ps) != 0)
			return -1;
		k = label_slot(ps, c->argv[0]);
		if (ps->labels[k] == 0) {
			ps->labels[k] = ps->labels_upto + 1;
			ps->labels_n++;
		}
	}
	if (ps->labels_cap == 0)
		return -1;
	k = label_slot(ps, name);
	return ps->labels[k] != 0 ? ps->labels[k] - 1 : -1;
}

void
lesson_parser_free(struct lesson_parser *ps)
{
	free(ps->labels);
	ps->labels = NULL;
	ps->labels_cap = ps->labels_n = 0;
	ps->labels_upto = 0;
}

int
lesson_parser_kept(const struct lesson_parser *ps, const char *name)
{
	int i;

	for (i = 0; i < ps->l->nkept; i++)
		if (strcmp(ps->l->kept[i].name, name) == 0)
			return i;
	return -1;
}

int
lesson_parser_number(const char *word, int inf, double *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(word, &end);
	if (*word == '\0' || *end != '\0' || errno == ERANGE || isnan(x))
		return -1;
	if (isinf(x) && !inf)
		return -1;
	/* strtod takes "infinity" and "0x1p3"; lessons keep to plain words */
	if (isinf(x) && strcmp(word, "inf") != 0 && strcmp(word, "-inf") != 0)
		return -1;
	if (strpbrk(word, "xXpP") != NULL)
		return -1;
	*out = x;
	return 0;
}

int
lesson_parser_long(const char *word, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(word, &end, 10);
	if (*word == '\0' || *end != '\0' || errno == ERANGE || v < min ||
	    v > max)
		return -1;
	*out = v;
	return 0;
}

int
lesson_parser_phase_suffix(struct lesson_cmd *c, int at, char *err,
    size_t errlen)
{
	char names[200];
	size_t used = 0;
	int p;

	c->phase = SIM_PHASE_LAST;
	if (c->argc == at)
		return 0;
	if (c->argc != at + 2 || strcmp(c->argv[at], "phase") != 0)
		return util_error(err, errlen, "%s: unexpected '%s' (the line may end "
		    "with 'phase P')", c->name, c->argv[at]);
	c->phase = lesson_parser_phase(c->argv[at + 1]);
	if (c->phase >= 0)
		return 0;
	for (p = 0; strcmp(lesson_parser_phase_name(p), "?") != 0 &&
	    used < sizeof names; p++)
		used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
		    p ? ", " : "", lesson_parser_phase_name(p));
	return util_error(err, errlen, "%s: unknown phase '%s' (the phases: "
	    "%s)", c->name, c->argv[at + 1], names);
}

int
lesson_parser_no_words(const struct lesson_cmd *c, char *err, size_t errlen)
{
	if (c->argc != 0)
		return util_error(err, errlen, "%s takes nothing after it, not '%s'",
		    c->name, c->argv[0]);
	return 0;
}

int
lesson_parser_need_text(const struct lesson_cmd *c, const char *what,
    char *err, size_t errlen)
{
	if (c->text == NULL || *c->text == '\0')
		return util_error(err, errlen, "%s needs %s", c->name, what);
	return 0;
}

char *
lesson_parser_strdup(const char *s, char *err, size_t errlen)
{
	char *d = strdup(s);

	if (d == NULL)
		util_error(err, errlen, "out of memory");
	return d;
}

int
lesson_parser_distance(const char *a, const char *b)
{
	int d[32][32], n = (int)strlen(a), m = (int)strlen(b), i, j, x;

	n = n > 31 ? 31 : n;
	m = m > 31 ? 31 : m;
	for (i = 0; i <= n; i++)
		d[i][0] = i;
	for (j = 0; j <= m; j++)
		d[0][j] = j;
	for (i = 1; i <= n; i++) {
		for (j = 1; j <= m; j++) {
			int cost = a[i - 1] != b[j - 1];
			x = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < x)
				x = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < x)
				x = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < x)
				x = d[i - 2][j - 2] + 1;
			d[i][j] = x;
		}
	}
	return d[n][m];
}

void
lesson_parser_unflag(char *msg)
{
	char *p = msg, *q = msg;

	/* "--tq must be ..." from the shared option parser reads, in a
	 * script, "tq must be ...": the lesson spells options without "--". */
	while (*p != '\0') {
		if (p[0] == '-' && p[1] == '-' && islower((unsigned char)p[2]) &&
		    (p == msg || p[-1] == ' ' || p[-1] == '\'' || p[-1] == '('))
			p += 2;
		else
			*q++ = *p++;
	}
	*q = '\0';
}
