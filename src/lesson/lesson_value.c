/* lesson_value.c - values read from the simulator, and their checks
 * (lesson_value.h). */
#include "config.h"

#include "lesson_value.h"
#include "lesson_quantity.h"
#include "model/compare.h"
#include "model/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most words a {...} holds. */
#define FILL_WORDS 16

static int
is_op(const char *w)
{
	return w[0] != '\0' && w[1] == '\0' && strchr("/*-+", w[0]) != NULL;
}

/* A quantity name near a misspelt one, for the message. */
static const char *
nearest(const char *name)
{
	const struct lesson_quantity *q, *best = NULL;
	int d, bestd = 1000;

	for (q = lesson_quantities(); q->name != NULL; q++) {
		d = lesson_parser_distance(name, q->name);
		if (d < bestd) {
			bestd = d;
			best = q;
		}
	}
	return best != NULL && bestd <= (strlen(name) <= 4 ? 1 : 2) ?
	    best->name : NULL;
}

/* One TERM at words[*at]; advances *at. */
static int
parse_term(const struct lesson_parser *ps, const char *who, char **words,
    int n, int *at, struct lesson_term *t, int *kind, int *vector, char *err,
    size_t errlen)
{
	const struct lesson_quantity *q;
	char name[64], *br;
	const char *hint;
	long x;

	memset(t, 0, sizeof *t);
	t->index = -1;
	if (*at < n && strcmp(words[*at], "final") == 0) {
		t->final = 1;
		(*at)++;
	}
	if (*at >= n)
		return util_error(err, errlen, "%s needs a quantity and a value "
		    "(expect m 2)", who);
	snprintf(name, sizeof name, "%s", words[(*at)++]);
	br = strchr(name, '[');
	if (br != NULL) {
		size_t len = strlen(br);
		if (len < 3 || br[len - 1] != ']')
			return util_error(err, errlen, "%s: '%s' is not NAME[I]", who,
			    words[*at - 1]);
		br[len - 1] = '\0';
		*br++ = '\0';
		if (lesson_parser_long(br, 0, INT_MAX, &x) != 0)
			return util_error(err, errlen, "%s: the index in '%s' is not a "
			    "number from 0", who, words[*at - 1]);
		t->index = (int)x;
	}
	q = lesson_quantity_find(name);
	if (q == NULL) {
		t->kept = lesson_parser_kept(ps, name);
		if (t->kept < 0) {
			hint = nearest(name);
			if (hint != NULL)
				return util_error(err, errlen, "%s: unknown quantity "
				    "'%s' (did you mean '%s'?)", who, name, hint);
			return util_error(err, errlen, "%s: unknown quantity '%s' (see "
			    "flashstep-lesson(5) for the list, or keep a value under "
			    "that name first)", who, name);
		}
		if (t->final || t->index >= 0)
			return util_error(err, errlen, "%s: '%s' is a kept number: "
			    "no final, no [index]", who, name);
		*kind = ps->l->kept[t->kept].kind;
		*vector = 0;
		return 0;
	}
	t->quantity = q;
	if (t->final && !q->final)
		return util_error(err, errlen, "%s final applies to what the whole "
		    "run ends with (o, lse, error, D, the gradients, the "
		    "partials), not %s", who, q->name);
	if (t->index >= 0 && !q->vector)
		return util_error(err, errlen, "%s: %s is one number; it takes no "
		    "[index]", who, q->name);
	*kind = q->kind;
	*vector = q->vector && t->index < 0;
	return 0;
}

/* How a WANT was written: decimals and e-notation. */
static void
written(const char *w, struct lesson_shown *sh)
{
	const char *dot = strchr(w, '.'), *e = strpbrk(w, "eE");
	int d = 0;

	sh->exp = e != NULL;
	if (strchr(w, 'i') != NULL || strchr(w, 'n') != NULL) {	/* inf, nan */
		sh->decimals = -1;
		return;
	}
	if (dot != NULL)
		for (dot++; *dot >= '0' && *dot <= '9'; dot++)
			d++;
	/* Up to 17, the digits a double holds: a quoted double result shows
	 * (and is checked to) every digit it is written with. */
	sh->decimals = (signed char)(d > 17 ? 17 : d);
}

/* Half a unit in the last digit of w: what rounding to it may hide. */
static double
half_unit(const char *w, const struct lesson_shown *sh)
{
	const char *e = strpbrk(w, "eE");
	double unit = pow(10, -sh->decimals);

	if (sh->decimals < 0)
		return 0;
	if (e != NULL)
		unit *= pow(10, strtol(e + 1, NULL, 10));
	return unit / 2;
}

int
lesson_value_parse(const struct lesson_parser *ps, const char *who,
    char **words, int n, enum lesson_value_mode mode,
    struct lesson_expect *e, char *err, size_t errlen)
{
	struct lesson_value *v = &e->value;
	int at = 0, kind[2], vec[2], nvals, i, bad;
	size_t used = 0;
	double x;
	long whole;

	memset(e, 0, sizeof *e);
	if (parse_term(ps, who, words, n, &at, &v->term[0], &kind[0], &vec[0],
	    err, errlen) != 0)
		return -1;
	v->kind = kind[0];
	v->vector = vec[0];
	if (at < n && is_op(words[at])) {
		v->op = words[at++][0];
		if (parse_term(ps, who, words, n, &at, &v->term[1], &kind[1],
		    &vec[1], err, errlen) != 0)
			return -1;
		for (i = 0; i < 2; i++)
			if (kind[i] != LESSON_Q_REAL && kind[i] != LESSON_Q_COUNT)
				return util_error(err, errlen, "%s: '%c' joins numbers, "
				    "not a phase or a tile", who, v->op);
		v->kind = kind[0] == LESSON_Q_COUNT && kind[1] == LESSON_Q_COUNT &&
		    v->op != '/' ? LESSON_Q_COUNT : LESSON_Q_REAL;
		v->vector = 0;
	}
	for (i = 0; i < at && used < sizeof v->name; i++)
		used += (size_t)snprintf(v->name + used, sizeof v->name - used,
		    "%s%s", i ? " " : "", words[i]);

	for (nvals = 0; at + nvals < n && strcmp(words[at + nvals], "tol") &&
	    strcmp(words[at + nvals], "rtol"); nvals++)
		;
	if (mode == LESSON_VALUE_KEEP) {
		if (nvals > 0 || at < n)
			return util_error(err, errlen, "keep takes a name and a value, "
			    "nothing after it ('%s')", words[at]);
		if (v->kind != LESSON_Q_REAL && v->kind != LESSON_Q_COUNT)
			return util_error(err, errlen, "keep takes a number, not %s",
			    v->name);
		return 0;
	}
	if (nvals == 0 && mode == LESSON_VALUE_EXPECT)
		return util_error(err, errlen, "%s %s needs the value it should "
		    "have", who, v->name);
	if (nvals > 0 && ((v->kind == LESSON_Q_PHASE && nvals != 1) ||
	    (v->kind == LESSON_Q_TILE && nvals != 2) ||
	    (!v->vector && v->kind != LESSON_Q_TILE && nvals != 1)))
		return util_error(err, errlen, "%s %s takes %s value%s, not %d", who,
		    v->name, v->kind == LESSON_Q_TILE ? "two" : "one",
		    v->kind == LESSON_Q_TILE ? "s (I J)" : "", nvals);
	e->values = calloc((size_t)nvals + 1, sizeof *e->values);
	e->shown = calloc((size_t)nvals + 1, sizeof *e->shown);
	if (e->values == NULL || e->shown == NULL)
		return util_error(err, errlen, "out of memory");
	e->n = nvals;
	for (i = 0; i < nvals; i++) {
		const char *w = words[at + i];

		bad = 0;
		if (v->kind == LESSON_Q_PHASE) {
			int ph = lesson_parser_phase(w);
			bad = ph < 0;
			e->values[i] = ph;
		} else if (v->kind == LESSON_Q_REAL && strcmp(w, "nan") == 0)
			e->values[i] = NAN;	/* what e^(-inf + inf) gives */
		else if (v->kind == LESSON_Q_REAL)
			bad = lesson_parser_number(w, 1, &e->values[i]) != 0;
		else {
			whole = 0;
			bad = lesson_parser_long(w, -1, LONG_MAX, &whole) != 0;
			e->values[i] = (double)whole;
		}
		if (bad)
			return util_error(err, errlen, "%s %s: '%s' is not %s", who,
			    v->name, w, v->kind == LESSON_Q_PHASE ? "a phase (load, "
			    "scores, max, rescale, exp, update, finalize)" :
			    v->kind == LESSON_Q_REAL ? "a number" : "a whole number");
		written(w, &e->shown[i]);
		e->shown[i].half = half_unit(w, &e->shown[i]);
	}
	at += nvals;

	if (v->kind == LESSON_Q_REAL)
		e->atol = e->rtol = 1e-6;
	/* In narration a number holds to the digits it is written with,
	 * unless the script says how near. */
	e->by_digits = mode == LESSON_VALUE_FILL && v->kind == LESSON_Q_REAL;
	while (at < n) {
		if (at + 1 >= n || lesson_parser_number(words[at + 1], 0, &x) != 0 ||
		    x < 0)
			return util_error(err, errlen, "%s: %s takes a number from 0",
			    who, words[at]);
		if (v->kind != LESSON_Q_REAL)
			return util_error(err, errlen, "%s %s takes no tolerance", who,
			    v->name);
		if (strcmp(words[at], "tol") == 0)
			e->atol = x;
		else
			e->rtol = x;
		e->by_digits = 0;
		at += 2;
	}
	return 0;
}

void
lesson_value_free(struct lesson_expect *e)
{
	free(e->values);
	free(e->shown);
	e->values = NULL;
	e->shown = NULL;
}

/* ---- reading ---- */

static int
read_term(struct lesson_run *run, const struct lesson_term *t, double *out,
    int max, int *n, char *err, size_t errlen)
{
	if (t->quantity == NULL) {
		out[0] = run->kept[t->kept];
		*n = 1;
		return 0;
	}
	if (lesson_quantity_read(run, t->quantity, t->final, out, max, n, err,
	    errlen) != 0)
		return -1;
	if (t->index >= 0) {
		if (t->index >= *n)
			return util_error(err, errlen, "%s has %d entr%s, no [%d]",
			    t->quantity->name, *n, *n == 1 ? "y" : "ies", t->index);
		out[0] = out[t->index];
		*n = 1;
	}
	return 0;
}

int
lesson_value_read(struct lesson_run *run, const struct lesson_value *v,
    double *out, int max, int *n, char *err, size_t errlen)
{
	double b;
	int nb;

	double *tmp;

	if (read_term(run, &v->term[0], out, max, n, err, errlen) != 0)
		return -1;
	if (v->op == 0)
		return 0;
	tmp = calloc((size_t)max, sizeof *tmp);
	if (tmp == NULL)
		return util_error(err, errlen, "out of memory");
	nb = 0;
	if (read_term(run, &v->term[1], tmp, max, &nb, err, errlen) != 0) {
		free(tmp);
		return -1;
	}
	b = tmp[0];
	free(tmp);
	if (*n != 1 || nb != 1)
		return util_error(err, errlen, "'%c' joins single numbers, and %s has "
		    "%d entries here: pick one ([0])", v->op, *n != 1 ?
		    (v->term[0].quantity ? v->term[0].quantity->name : "it") :
		    (v->term[1].quantity ? v->term[1].quantity->name : "it"),
		    *n != 1 ? *n : nb);
	switch (v->op) {
	case '/':
		out[0] /= b;
		break;
	case '*':
		out[0] *= b;
		break;
	case '-':
		out[0] -= b;
		break;
	default:
		out[0] += b;
		break;
	}
	*n = 1;
	return 0;
}

/* ---- checking ---- */

/* "1 2 3": the first 8 of x, as lessons write numbers. */
static void
format_plain(const double *x, int n, int kind, char *buf, size_t len)
{
	char one[48];
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && i < 8 && used < len; i++) {
		if (kind == LESSON_Q_PHASE)
			snprintf(one, sizeof one, "%s", lesson_parser_phase_name((int)x[i]));
		else if (kind == LESSON_Q_REAL)
			lesson_format(x[i], one, sizeof one);
		else
			snprintf(one, sizeof one, "%.0f", x[i]);
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "",
		    one);
	}
	if (n > 8 && used < len)
		snprintf(buf + used, len - used, " ...");
}

static void format_one(double x, int kind, const struct lesson_shown *sh,
    char *buf, size_t len);

/*
 * What a failed check expected and got, side by side: at %.7g
 * (format_plain), unless a pair that differs prints alike there (a quote
 * of 16 digits against float32's value); then each number with the
 * quote's own decimals, or %.17g where even those print alike.
 */
static void
format_versus(const struct lesson_expect *e, const double *got, int n,
    char *want, size_t wlen, char *have, size_t hlen)
{
	const int kind = e->value.kind;
	char a[48], b[48];
	size_t uw = 0, uh = 0;
	int i, alike = 0, digits = 1;

	format_plain(e->values, e->n, kind, want, wlen);
	format_plain(got, n, kind, have, hlen);
	if (kind != LESSON_Q_REAL || n != e->n)
		return;
	for (i = 0; i < n; i++)
		if (got[i] != e->values[i] && strcmp(lesson_format(e->values[i], a,
		    sizeof a), lesson_format(got[i], b, sizeof b)) == 0)
			alike = 1;
	if (!alike)
		return;
	for (i = 0; i < n; i++) {
		format_one(e->values[i], kind, &e->shown[i], a, sizeof a);
		format_one(got[i], kind, &e->shown[i], b, sizeof b);
		if (got[i] != e->values[i] && strcmp(a, b) == 0)
			digits = 0;
	}
	want[0] = have[0] = '\0';
	for (i = 0; i < n && i < 8 && uw < wlen && uh < hlen; i++) {
		if (digits) {
			format_one(e->values[i], kind, &e->shown[i], a, sizeof a);
			format_one(got[i], kind, &e->shown[i], b, sizeof b);
		} else {
			snprintf(a, sizeof a, "%.17g", e->values[i]);
			snprintf(b, sizeof b, "%.17g", got[i]);
		}
		uw += (size_t)snprintf(want + uw, wlen - uw, "%s%s", i ? " " : "", a);
		uh += (size_t)snprintf(have + uh, hlen - uh, "%s%s", i ? " " : "", b);
	}
	if (n > 8 && uw < wlen && uh < hlen) {
		snprintf(want + uw, wlen - uw, " ...");
		snprintf(have + uh, hlen - uh, " ...");
	}
}

/* "row 0 at step 1, phase update" for messages. */
static void
where(struct lesson_run *run, const struct lesson_expect *e, char *buf,
    size_t len)
{
	const struct lesson_term *t = &e->value.term[0];
	int real = e->value.kind == LESSON_Q_REAL;
	char row[24] = "";

	if (real)
		snprintf(row, sizeof row, "row %d, ", run->focus);
	if (t->final)
		snprintf(buf, len, "%safter the whole run", row);
	else if (run->step < 0)
		snprintf(buf, len, "%sbefore the first step", row);
	else
		snprintf(buf, len, "%sat step %ld, phase %s", row, run->step,
		    lesson_run_phase_name(run));
}

/* Marks the number questions asked so far whose answer got[0] is. */
static void
confirm(struct lesson_run *run, const double *got, int n)
{
	const struct lesson_question *q;
	struct lesson_shown sh;
	int i, k;

	for (i = 0; i < run->nasked; i++) {
		q = &run->lesson->questions[i];
		if (!q->numeric || run->confirmed[i])
			continue;
		written(q->number_text, &sh);
		for (k = 0; k < n; k++)
			if (compare_close(got[k], q->number,
			    half_unit(q->number_text, &sh), 0))
				run->confirmed[i] = 1;
	}
}

int
lesson_value_check(struct lesson_run *run, const struct lesson_cmd *c,
    const struct lesson_expect *e, const char *where_, double *got, int *n)
{
	const struct lesson_value *v = &e->value;
	char msg[256], want[256], have[256], at[96], tol[64];
	int i, ok = 1, max = lesson_quantity_max(run);

	where(run, e, at, sizeof at);
	format_plain(e->values, e->n, v->kind, want, sizeof want);
	tol[0] = '\0';
	if (e->by_digits)
		snprintf(tol, sizeof tol, " (to the digits written)");
	else if (e->atol > 0 || e->rtol > 0)
		snprintf(tol, sizeof tol, " (tol %g, rtol %g)", e->atol, e->rtol);
	*n = 0;
	if (lesson_value_read(run, v, got, max, n, msg, sizeof msg) != 0) {
		*n = 0;
		if (e->n == 0)
			return lesson_run_error(run, c, "%s%s (%s)", where_, msg, at);
		return lesson_run_fail(run, c, "%sexpected %s %s%s got none: %s "
		    "(%s)", where_, v->name, want, tol, msg, at);
	}
	confirm(run, got, *n);
	if (e->n == 0)
		return LESSON_NEXT;
	if (*n != e->n) {
		format_plain(got, *n, v->kind, have, sizeof have);
		return lesson_run_fail(run, c, "%sexpected %s %s got %s (%d value%s, "
		    "not %d; %s)", where_, v->name, want, have, *n, *n == 1 ? "" :
		    "s", e->n, at);
	}
	for (i = 0; i < *n; i++)
		ok = ok && (isnan(e->values[i]) ? isnan(got[i]) :
		    compare_close(got[i], e->values[i], e->by_digits ?
		    e->shown[i].half : e->atol, e->by_digits ? 0 : e->rtol));
	if (ok)
		return LESSON_NEXT;
	format_versus(e, got, *n, want, sizeof want, have, sizeof have);
	return lesson_run_fail(run, c, "%sexpected %s %s%s got %s (%s)", where_,
	    v->name, want, tol, have, at);
}

/* One number as sh says: "%.6f", "1.7e-5", or %.7g. */
static void
format_one(double x, int kind, const struct lesson_shown *sh, char *buf,
    size_t len)
{
	char *e;

	if (kind == LESSON_Q_COUNT || kind == LESSON_Q_TILE) {
		snprintf(buf, len, "%.0f", x);
		return;
	}
	if (kind == LESSON_Q_PHASE) {
		snprintf(buf, len, "%s", lesson_parser_phase_name((int)x));
		return;
	}
	if (sh == NULL || sh->decimals < 0 || !isfinite(x)) {
		lesson_format(x, buf, len);
		return;
	}
	if (!sh->exp) {
		snprintf(buf, len, "%.*f", sh->decimals, x);
		/* -0.000 reads as a sign error */
		if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
			memmove(buf, buf + 1, strlen(buf));
		return;
	}
	snprintf(buf, len, "%.*e", sh->decimals, x);
	/* C writes e-05 and e+03; lessons write e-5 and e3. */
	e = strchr(buf, 'e');
	if (e != NULL) {
		char *d = e + 1, *s = e + 1;
		if (*s == '+')
			s++;
		else if (*s == '-')
			*d++ = *s++;
		while (*s == '0' && s[1] != '\0')
			s++;
		memmove(d, s, strlen(s) + 1);
	}
}

/* got[0..n) as e shows it ("0.006738", "[1 0.3678795]"). */
static void
lesson_value_format(const struct lesson_expect *e, const double *got, int n,
    char *buf, size_t len)
{
	char one[48];
	size_t used = 0;
	int i;

	buf[0] = '\0';
	if (n == 0) {
		snprintf(buf, len, "?");	/* not known here: a failed check */
		return;
	}
	if (e->value.kind == LESSON_Q_TILE && n == 2) {
		snprintf(buf, len, "(%.0f, %.0f)", got[0], got[1]);
		return;
	}
	for (i = 0; i < n && used < len; i++) {
		format_one(got[i], e->value.kind, i < e->n ? &e->shown[i] : NULL, one,
		    sizeof one);
		used += (size_t)snprintf(buf + used, len - used, "%s%s%s",
		    i == 0 && n > 1 ? "[" : i ? " " : "", one, n > 1 && i == n - 1 ?
		    "]" : "");
	}
}

/* ---- {...} in text ---- */

int
lesson_value_parse_fills(const struct lesson_parser *ps, struct lesson_cmd *c,
    char *err, size_t errlen)
{
	const char *t = c->text, *open, *close;
	char *inner, *words[FILL_WORDS], *w;
	struct lesson_fill *grown, *f;
	int nw;

	for (open = strchr(t, '{'); open != NULL; open = strchr(close, '{')) {
		close = strchr(open, '}');
		if (close == NULL)
			return util_error(err, errlen, "%s: a '{' with no '}' (a value "
			    "is written {m} or {m 2})", c->name);
		if (memchr(open + 1, '{', (size_t)(close - open - 1)) != NULL)
			return util_error(err, errlen, "%s: a '{' inside {...}", c->name);
		grown = realloc(c->fills, ((size_t)c->nfills + 1) * sizeof *grown);
		if (grown == NULL)
			return util_error(err, errlen, "out of memory");
		c->fills = grown;
		f = &c->fills[c->nfills];
		memset(f, 0, sizeof *f);
		f->start = (size_t)(open - t);
		f->end = (size_t)(close - t) + 1;
		inner = strndup(open + 1, (size_t)(close - open - 1));
		if (inner == NULL)
			return util_error(err, errlen, "out of memory");
		nw = 0;
		for (w = strtok(inner, " \t"); w != NULL && nw < FILL_WORDS;
		    w = strtok(NULL, " \t"))
			words[nw++] = w;
		if (nw == 0 || w != NULL) {
			free(inner);
			return util_error(err, errlen, "%s: {%.*s} is not a value (a "
			    "value is written {m} or {m 2})", c->name,
			    (int)(close - open - 1), open + 1);
		}
		c->nfills++;
		if (lesson_value_parse(ps, c->name, words, nw, LESSON_VALUE_FILL,
		    &f->expect, err, errlen) != 0) {
			free(inner);
			return -1;
		}
		free(inner);
		close++;
	}
	if (strchr(t, '}') != NULL && c->nfills == 0)
		return util_error(err, errlen, "%s: a '}' with no '{'", c->name);
	return 0;
}

int
lesson_value_fill(struct lesson_run *run, const struct lesson_cmd *c,
    char **out)
{
	const struct lesson_fill *f;
	char shown[512], *text, *grown;
	size_t len, cap, from = 0, k;
	double *got;
	int i, n, r, rc = LESSON_NEXT;

	*out = NULL;
	got = calloc((size_t)lesson_quantity_max(run), sizeof *got);
	cap = strlen(c->text) + 1;
	text = malloc(cap);
	if (got == NULL || text == NULL) {
		free(got);
		free(text);
		return lesson_run_error(run, c, "out of memory");
	}
	len = 0;
	for (i = 0; i <= c->nfills; i++) {
		f = i < c->nfills ? &c->fills[i] : NULL;
		/* the text up to this {...} (or the end), then its value */
		k = f != NULL ? f->start : strlen(c->text);
		shown[0] = '\0';
		if (f != NULL) {
			r = lesson_value_check(run, c, &f->expect,
			    "in the narration, ", got, &n);
			if (r != LESSON_NEXT)
				rc = r;
			if (r == LESSON_ERROR)
				break;
			lesson_value_format(&f->expect, got, n, shown, sizeof shown);
		}
		if (len + (k - from) + strlen(shown) + 1 > cap) {
			cap = 2 * (len + (k - from) + strlen(shown) + 1);
			grown = realloc(text, cap);
			if (grown == NULL) {
				rc = lesson_run_error(run, c, "out of memory");
				break;
			}
			text = grown;
		}
		memcpy(text + len, c->text + from, k - from);
		len += k - from;
		memcpy(text + len, shown, strlen(shown));
		len += strlen(shown);
		text[len] = '\0';
		if (f != NULL)
			from = f->end;
	}
	free(got);
	if (rc == LESSON_ERROR) {
		free(text);
		return rc;
	}
	*out = text;
	return rc;
}
