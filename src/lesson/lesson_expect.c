/*
 * lesson_expect.c - checks: `expect VALUE WANT...` holds when the
 * simulator's value is what the script says; `keep NAME VALUE` remembers
 * a value under a name, so that a later check can compare two sizes or
 * two settings ("expect hbm / hbm256 4").  Values: lesson_value.h.
 */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_parser.h"
#include "lesson_quantity.h"
#include "lesson_run.h"
#include "lesson_value.h"
#include "model/util.h"

#include <stdlib.h>
#include <string.h>

static int
expect_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	return lesson_value_parse(ps, "expect", c->argv, c->argc,
	    LESSON_VALUE_EXPECT, &c->expect, err, errlen);
}

static int
expect_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	double *got;
	int n, rc;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	got = calloc((size_t)lesson_quantity_max(run), sizeof *got);
	if (got == NULL)
		return lesson_run_error(run, c, "out of memory");
	rc = lesson_value_check(run, c, &c->expect, "", got, &n);
	free(got);
	return rc;
}

static int
keep_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson *l = ps->l;
	struct lesson_kept *grown, *k;
	const char *s;
	int prev;

	if (c->argc < 2)
		return util_error(err, errlen, "keep takes a name and a value (keep "
		    "hbm256 hbm)");
	for (s = c->argv[0]; *s != '\0'; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && *s != '-' && *s != '_')
			return util_error(err, errlen, "kept names hold letters, "
			    "digits, '-' and '_', not '%s'", c->argv[0]);
	if (lesson_quantity_find(c->argv[0]) != NULL)
		return util_error(err, errlen, "keep: '%s' is a quantity; give the "
		    "kept value a name of its own", c->argv[0]);
	prev = lesson_parser_kept(ps, c->argv[0]);
	if (prev >= 0)
		return util_error(err, errlen, "keep: '%s' is already kept at line "
		    "%d", c->argv[0], l->kept[prev].line);
	if (lesson_value_parse(ps, "keep", c->argv + 1, c->argc - 1,
	    LESSON_VALUE_KEEP, &c->expect, err, errlen) != 0)
		return -1;
	grown = realloc(l->kept, ((size_t)l->nkept + 1) * sizeof *grown);
	if (grown == NULL)
		return util_error(err, errlen, "out of memory");
	l->kept = grown;
	k = &l->kept[l->nkept];
	k->kind = c->expect.value.kind;
	k->line = c->line;
	k->name = lesson_parser_strdup(c->argv[0], err, errlen);
	if (k->name == NULL)
		return -1;
	c->ref = l->nkept++;
	return 0;
}

static int
keep_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	double *got;
	int n, rc;

	if (lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	got = calloc((size_t)lesson_quantity_max(run), sizeof *got);
	if (got == NULL)
		return lesson_run_error(run, c, "out of memory");
	rc = lesson_value_check(run, c, &c->expect, "keep: ", got, &n);
	if (rc == LESSON_NEXT && n != 1)
		rc = lesson_run_error(run, c, "keep takes one number: %s has %d "
		    "entries here (pick one: %s[0])", c->expect.value.name, n,
		    c->expect.value.name);
	else if (rc == LESSON_NEXT)
		run->kept[c->ref] = got[0];
	free(got);
	return rc;
}

const struct lesson_directive lesson_expect_directives[] = {
	{ .name = "expect", .usage = "expect VALUE WANT... [tol X] [rtol X]",
	  .flags = LESSON_SILENT, .parse = expect_parse, .exec = expect_exec },
	{ .name = "keep", .usage = "keep NAME VALUE", .flags = LESSON_SILENT,
	  .parse = keep_parse, .exec = keep_exec },
	{ .name = NULL },
};
