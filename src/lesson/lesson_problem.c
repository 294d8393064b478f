/*
 * lesson_problem.c - the problem: every option of `flashstep run` that
 * changes the problem (its problem, backward and split options, not
 * those that write files) is a directive of one shape (tq 8, causal,
 * order fa1, splits 4, ...), its value checked by the shared setter with
 * its own message; q, k, v, values, scores and grad-output take inline
 * matrices or .npy files; new-problem forgets them all.  The options in
 * force are parsed together when the problem is built (lesson_run.c), as
 * a command line is.
 */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_parser.h"
#include "lesson_run.h"
#include "model/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The option groups of `run` a script takes, and the options of them
 * it does not: those write files. */
static const unsigned option_groups[] = { OPT_PROBLEM, OPT_BACKWARD, OPT_SPLIT };
static const char *const writes_files[] = {
	"grad-q", "grad-k", "grad-v", "grad-scores",
};

const struct options_entry *
lesson_problem_option_at(int i)
{
	const struct options_entry *e;
	size_t g, k;

	for (g = 0; g < sizeof option_groups / sizeof option_groups[0]; g++)
		for (e = options_group_entries(option_groups[g]); e->name != NULL;
		    e++) {
			for (k = 0; k < sizeof writes_files / sizeof writes_files[0];
			    k++)
				if (strcmp(e->name, writes_files[k]) == 0)
					break;
			if (k == sizeof writes_files / sizeof writes_files[0] &&
			    i-- == 0)
				return e;
		}
	return NULL;
}

static const struct options_entry *
option_named(const char *name)
{
	const struct options_entry *e;
	int i;

	for (i = 0; (e = lesson_problem_option_at(i)) != NULL; i++)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

/* Which problem options take a matrix: inline numbers or a file. */
static int
is_matrix(const char *name)
{
	return strcmp(name, "q") == 0 || strcmp(name, "k") == 0 ||
	    strcmp(name, "v") == 0 || strcmp(name, "scores") == 0 ||
	    strcmp(name, "values") == 0 || strcmp(name, "grad-output") == 0;
}

/*
 * Inline numbers, rows separated by ';'.  One row without any ';' is a
 * row for q and scores and a column for k and v, as a 1-D .npy file is:
 * `scores 1 2 1001 1002` is S (1, 4), `values 2 -1 4 8` is V (4, 1).
 */
static int
parse_matrix(struct lesson_cmd *c, const char *name, char *err, size_t errlen)
{
	int i, rows = 0, cols = -1, inrow = 0, n = 0, semis = 0;
	int scores = strcmp(name, "scores") == 0;
	double x;

	c->matrix = calloc((size_t)c->argc + 1, sizeof *c->matrix);
	if (c->matrix == NULL)
		return util_error(err, errlen, "out of memory");
	for (i = 0; i <= c->argc; i++) {
		if (i == c->argc || strcmp(c->argv[i], ";") == 0) {
			if (i < c->argc)
				semis++;
			if (inrow == 0) {
				if (i < c->argc)
					return util_error(err, errlen, "%s: row %d is "
					    "empty", name, rows + 1);
				continue;
			}
			if (cols >= 0 && inrow != cols)
				return util_error(err, errlen, "%s: row %d has %d "
				    "number%s but row 1 has %d", name, rows + 1, inrow,
				    inrow == 1 ? "" : "s", cols);
			cols = inrow;
			rows++;
			inrow = 0;
			continue;
		}
		/* Beyond float32's range is refused here, not rounded to inf. */
		if (lesson_parser_number(c->argv[i], scores, &x) != 0 ||
		    (isinf(x) && x > 0) || (isfinite(x) && fabs(x) > 3.4e38))
			return util_error(err, errlen, "%s: '%s' is not a finite "
			    "number%s", name, c->argv[i], scores ?
			    " (or -inf, masked)" : "");
		c->matrix[n++] = (float)x;
		inrow++;
	}
	if (rows == 0)
		return util_error(err, errlen, "%s needs numbers or a file", name);
	if (semis == 0 && (name[0] == 'k' || name[0] == 'v')) {
		c->rows = cols;
		c->cols = 1;
	} else {
		c->rows = rows;
		c->cols = cols;
	}
	return 0;
}

static int
option_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	const char *folder = ps->folder;
	struct options o;
	double x;
	int rc;

	if (c->option == NULL)	/* values: another name for v */
		c->option = option_named("v");
	if (is_matrix(c->name)) {
		if (c->argc == 0)
			return util_error(err, errlen, "%s needs numbers or a .npy "
			    "file", c->name);
		if (c->argc == 1 && strcmp(c->argv[0], ";") != 0 &&
		    lesson_parser_number(c->argv[0], 1, &x) != 0) {
			if (c->argv[0][0] == '/')
				c->path = strdup(c->argv[0]);
			else {
				c->path = malloc(strlen(folder) + strlen(c->argv[0]) + 1);
				if (c->path != NULL)
					sprintf(c->path, "%s%s", folder, c->argv[0]);
			}
			if (c->path == NULL)
				return util_error(err, errlen, "out of memory");
			if (access(c->path, R_OK) != 0)
				return util_error(err, errlen, "%s: cannot read %s", c->name,
				    c->path);
			return 0;
		}
		return parse_matrix(c, c->name, err, errlen);
	}
	if (c->option->metavar == NULL) {	/* a flag: causal, backward */
		if (c->argc == 0 || (c->argc == 1 && (strcmp(c->argv[0], "on") == 0 ||
		    strcmp(c->argv[0], "off") == 0)))
			return 0;
		return util_error(err, errlen, "%s takes nothing, 'on' or 'off'",
		    c->name);
	}
	if (c->argc != 1)
		return util_error(err, errlen, "%s takes one value (%s %s)", c->name,
		    c->name, c->option->metavar);
	/* The shared setter checks the value, with the CLI's message; what
	 * it needs of other options is checked when the problem is built. */
	options_init(&o);
	rc = c->option->set(&o, c->argv[0], err, errlen);
	if (rc != 0)
		lesson_parser_unflag(err);
	return rc;
}

/* The option in force of each name is the latest: the list loses the
 * earlier one, and a flag turned off leaves it. */
static int
option_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	int i, n = 0;

	run->dirty = 1;
	run->problem_line = c->line;
	for (i = 0; i < run->ngiven; i++)
		if (strcmp(run->given[i]->option->name, c->option->name) != 0)
			run->given[n++] = run->given[i];
	run->ngiven = n;
	if (!(c->option->metavar == NULL && c->argc == 1 &&
	    strcmp(c->argv[0], "off") == 0))
		run->given[run->ngiven++] = c;
	return LESSON_NEXT;
}

/* Forgets every problem option: a later part of a lesson starts from
 * run's defaults instead of undoing the earlier part's options one by
 * one (inline q, k, v cannot be undone by an option). */
static int
new_problem_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	(void)ps;
	return lesson_parser_no_words(c, err, errlen);
}

static int
new_problem_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	run->ngiven = 0;
	run->dirty = 1;
	run->problem_line = c->line;
	return LESSON_NEXT;
}

const struct lesson_directive lesson_problem_directives[] = {
	{ .name = "values", .usage = "values NUMBERS|FILE", .flags = LESSON_PROBLEM,
	  .parse = option_parse, .exec = option_exec },
	{ .name = "new-problem", .usage = "new-problem", .flags = LESSON_PROBLEM,
	  .parse = new_problem_parse, .exec = new_problem_exec },
	{ .name = NULL },
};

/* Every problem option of `run` is a directive of this one shape. */
const struct lesson_directive lesson_problem_option = {
	.name = "problem option", .usage = "NAME VALUE (any option of run)",
	.flags = LESSON_PROBLEM, .parse = option_parse, .exec = option_exec,
};
