/*
 * lesson_directive.h - every directive of the lesson language, found by
 * name.  Each group of directives lives in its own file as a table
 * ending with a zeroed entry; lesson_directive.c lists the groups, and
 * problem options (every option of `run`, without the "--") share one
 * entry of lesson_problem.c.
 */
#ifndef FLASHSTEP_LESSON_DIRECTIVE_H
#define FLASHSTEP_LESSON_DIRECTIVE_H

#include "lesson.h"
#include "app/options.h"

/* The groups, each in the file of its name: title and builds-on; say
 * and note; ask, choice, number and answer; step, phase, goto, label,
 * focus and pause; expect and keep; compare gpu; values and
 * new-problem, and the one entry every problem option (tq, d, causal,
 * ...) shares; show (lesson_show.c). */
extern const struct lesson_directive lesson_meta_directives[];
extern const struct lesson_directive lesson_say_directives[];
extern const struct lesson_directive lesson_ask_directives[];
extern const struct lesson_directive lesson_move_directives[];
extern const struct lesson_directive lesson_expect_directives[];
extern const struct lesson_directive lesson_gpu_directives[];
extern const struct lesson_directive lesson_show_directives[];
extern const struct lesson_directive lesson_problem_directives[];
extern const struct lesson_directive lesson_problem_option;

/* Option i of those a script takes (the problem, backward and split
 * options of `run`, not those that write files), NULL past the last. */
const struct options_entry *lesson_problem_option_at(int i);

/* The directive called name, or NULL.  For a problem option, *option is
 * its entry of the shared option table (else NULL). */
const struct lesson_directive *lesson_directive_find(const char *name,
    const struct options_entry **option);

/* The known name nearest to a misspelt one (edit distance at most 1 in
 * a short word, 2 in a longer one, 3 in a long one), or NULL. */
const char *lesson_directive_suggest(const char *name);

/* Directive i of all groups, in order (NULL past the last): for the man
 * page test and the list of names. */
const struct lesson_directive *lesson_directive_at(int i);

#endif
