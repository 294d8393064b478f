/*
 * lesson_value.h - values a script reads from the simulator, and the
 * checks on them: what `expect`, `keep` and {...} in narration share.
 *
 *   VALUE  = TERM | TERM OP TERM          OP: / * - +
 *   TERM   = [final] QUANTITY[[I]] | KEPT (a name an earlier `keep` set)
 *   CHECK  = VALUE [WANT...] [tol X] [rtol X]
 *
 * `expect m 2` and `{m 2}` are the same check: the value must be what
 * the script says.  In narration, {alpha 0.006738} shows the simulator's
 * alpha written as 0.006738 was (six decimals), and holds when the two
 * agree to half a unit in that last digit; {alpha} shows %.7g and only
 * requires that alpha exists here.  A check whose value is the answer of
 * a `number` question asked before it marks that answer as computed.
 */
#ifndef FLASHSTEP_LESSON_VALUE_H
#define FLASHSTEP_LESSON_VALUE_H

#include <stddef.h>

#include "lesson.h"
#include "lesson_parser.h"
#include "lesson_run.h"

/* What a CHECK may hold. */
enum lesson_value_mode {
	LESSON_VALUE_EXPECT,	/* WANT required; default tol 1e-6, rtol 1e-6 */
	LESSON_VALUE_KEEP,	/* no WANT, one number */
	LESSON_VALUE_FILL,	/* WANT optional; tolerance from its digits */
};

/* Parses a CHECK from words[0..n) into e; 0, or -1 with err set.  who
 * names the directive in messages ("expect"). */
int lesson_value_parse(const struct lesson_parser *ps, const char *who,
    char **words, int n, enum lesson_value_mode mode,
    struct lesson_expect *e, char *err, size_t errlen);

/*
 * Reads e's value into got (lesson_quantity_max(run) entries) and
 * checks it against e's WANT.  Returns LESSON_NEXT, LESSON_FAILED (a
 * failed check when the run stops at failures), or LESSON_ERROR when the
 * value does not exist here and there is no WANT to report it against.
 * where prefixes messages ("" or "in the narration, ").
 */
int lesson_value_check(struct lesson_run *run, const struct lesson_cmd *c,
    const struct lesson_expect *e, const char *where, double *got, int *n);

/* Reads a VALUE at the current position into out (up to max entries,
 * lesson_quantity_max(run)); 0, or -1 with err saying why there is none
 * here.  Nothing is checked or confirmed. */
int lesson_value_read(struct lesson_run *run, const struct lesson_value *v,
    double *out, int max, int *n, char *err, size_t errlen);

/* Frees what lesson_value_parse allocated in e. */
void lesson_value_free(struct lesson_expect *e);

/* ---- {...} in text ---- */

/* Finds the {...} in c->text and parses each as a CHECK (FILL mode);
 * 0, or -1 with err set. */
int lesson_value_parse_fills(const struct lesson_parser *ps,
    struct lesson_cmd *c, char *err, size_t errlen);

/*
 * c->text with each {...} replaced by its value, checked: a malloc'd
 * string in *out.  Returns LESSON_NEXT (then *out is set), LESSON_FAILED
 * or LESSON_ERROR.
 */
int lesson_value_fill(struct lesson_run *run, const struct lesson_cmd *c,
    char **out);

#endif
