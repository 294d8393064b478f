/* lesson_directive.c - the directive groups, found by name
 * (lesson_directive.h). */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_parser.h"

#include <string.h>

static const struct lesson_directive *const groups[] = {
	lesson_meta_directives,
	lesson_say_directives,
	lesson_ask_directives,
	lesson_problem_directives,
	lesson_move_directives,
	lesson_expect_directives,
	lesson_gpu_directives,
	lesson_show_directives,
};
#define NGROUPS (sizeof groups / sizeof groups[0])

const struct lesson_directive *
lesson_directive_at(int i)
{
	const struct lesson_directive *d;
	size_t g;

	for (g = 0; g < NGROUPS; g++)
		for (d = groups[g]; d->name != NULL; d++)
			if (i-- == 0)
				return d;
	return NULL;
}

const struct lesson_directive *
lesson_directive_find(const char *name, const struct options_entry **option)
{
	const struct lesson_directive *d;
	const struct options_entry *o;
	int i;

	*option = NULL;
	for (i = 0; (d = lesson_directive_at(i)) != NULL; i++)
		if (strcmp(d->name, name) == 0)
			return d;
	for (i = 0; (o = lesson_problem_option_at(i)) != NULL; i++)
		if (strcmp(o->name, name) == 0) {
			*option = o;
			return &lesson_problem_option;
		}
	return NULL;
}

static void
consider(const char *name, const char *cand, const char **best, int *bestd)
{
	int dist = lesson_parser_distance(name, cand);

	if (dist < *bestd) {
		*best = cand;
		*bestd = dist;
	}
}

const char *
lesson_directive_suggest(const char *name)
{
	const struct lesson_directive *d;
	const struct options_entry *o;
	const char *best = NULL;
	size_t len = strlen(name);
	int bestd = 1000, limit, i;

	for (i = 0; (d = lesson_directive_at(i)) != NULL; i++)
		consider(name, d->name, &best, &bestd);
	for (i = 0; (o = lesson_problem_option_at(i)) != NULL; i++)
		consider(name, o->name, &best, &bestd);
	/* One edit in a short word, two in a longer one, three in a long
	 * one; never so many that any word would do. */
	limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	return bestd <= limit ? best : NULL;
}
