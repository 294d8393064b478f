/*
 * lesson_parser.h - what a directive's parse function may consult while
 * the script is read (the lesson so far, the lesson's folder, the open
 * question, earlier labels and kept names), and the small strict readers
 * every directive shares.
 *
 * lesson.c owns the state and fills it as it goes; nothing here calls
 * back into lesson.c or the directive table.
 */
#ifndef FLASHSTEP_LESSON_PARSER_H
#define FLASHSTEP_LESSON_PARSER_H

#include <stddef.h>

#include "lesson.h"

struct lesson_parser {
	struct lesson *l;
	char *folder;		/* where the lesson's files are found */
	int idx;		/* the directive being parsed */
	int open_q;		/* a question waiting for its answer, or -1 */
	/* The labels of cmds[0 .. labels_upto), hashed by name, so that a
	 * lookup costs the same with 80,000 labels as with 8 (a scan of
	 * every earlier directive made a long script quadratic). */
	int *labels;		/* a directive's index + 1; 0: an empty slot */
	size_t labels_cap;	/* a power of two, or 0 */
	size_t labels_n;
	int labels_upto;
};

/* Frees what the parser's state holds (its label index). */
void lesson_parser_free(struct lesson_parser *ps);

/* Phase names, one number each across the segments of a run: the
 * forward's "load", "scores", "max", "rescale", "exp", "update",
 * "finalize" (numbered as enum sim_phase), then the combine's "weights"
 * and the backward's "P", "dV", "dP", "dS", "dQ", "dK", "write" ("?" for
 * anything else); parsing gives -1 for an unknown name.  Which phase of
 * a step a number means depends on the segment: lesson_run.h. */
const char *lesson_parser_phase_name(int phase);
int lesson_parser_phase(const char *name);

/* Is the previous directive called a (or b, when not NULL)? */
int lesson_parser_after(const struct lesson_parser *ps, const char *a,
    const char *b);

/* The index of an earlier `label NAME` directive, or -1 (also when out
 * of memory: the caller then reports the name as unknown). */
int lesson_parser_label(struct lesson_parser *ps, const char *name);

/* The index of an earlier `keep NAME`, or -1. */
int lesson_parser_kept(const struct lesson_parser *ps, const char *name);

/* Reads one number strictly ("-inf" and "inf" allowed when inf is set);
 * 0 or -1. */
int lesson_parser_number(const char *word, int inf, double *out);

/* A whole number in [min, max]; 0 or -1. */
int lesson_parser_long(const char *word, long min, long max, long *out);

/* "phase P" at c->argv[at], or nothing there (c->phase = the step's
 * last phase).  0, or -1 with err set. */
int lesson_parser_phase_suffix(struct lesson_cmd *c, int at, char *err,
    size_t errlen);

/* Errors unless c has no words / has text. */
int lesson_parser_no_words(const struct lesson_cmd *c, char *err,
    size_t errlen);
int lesson_parser_need_text(const struct lesson_cmd *c, const char *what,
    char *err, size_t errlen);

/* strdup that reports no memory in err: NULL then. */
char *lesson_parser_strdup(const char *s, char *err, size_t errlen);

/* Edit distance (optimal string alignment: Levenshtein plus the swap of
 * two neighbours) between two short words, cut at 31 characters. */
int lesson_parser_distance(const char *a, const char *b);

/* Drops the "--" of option names in a message of the shared option
 * parser: in a script the options are spelt without it. */
void lesson_parser_unflag(char *msg);

#endif
