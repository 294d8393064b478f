/*
 * lesson.h - lesson scripts: the language and its parser.
 *
 * A lesson is plain text, one directive a line (flashstep-lesson(5)):
 *
 *   # a comment
 *   title The online softmax on four scores
 *   scores 1 2 1001 1002          <- problem: any option of `run`, no "--"
 *   values 2 -1 4 8
 *   bc 2
 *   say Two tiles of two keys.    <- narration; an indented line
 *       It goes on here.             continues the text above it
 *   step                          <- move through the simulator
 *   expect m 2
 *   pause
 *
 * Parsing reads the whole file first: a script with one bad line runs
 * nothing.  Each directive is an entry of a table (lesson_directive.c)
 * with the function that reads its words and the one that executes it;
 * the parser here only splits lines, joins continuations, finds the entry
 * (or suggests the nearest name) and prefixes messages with file:line.
 */
#ifndef FLASHSTEP_LESSON_H
#define FLASHSTEP_LESSON_H

#include <stddef.h>

#include "model/options.h"

struct lesson;
struct lesson_cmd;
struct lesson_parser;
struct lesson_run;

/* Flags of a directive. */
#define LESSON_TEXT	0x1	/* takes free text; indented lines continue it */
#define LESSON_PROBLEM	0x2	/* changes the problem */

struct lesson_directive {
	const char *name;
	const char *usage;	/* the forms, for messages and the man page */
	int flags;
	/* Reads c's words (c->argv) or text into c's fields; 0 or -1 with
	 * err set (without the file:line, which the caller adds). */
	int (*parse)(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
	    size_t errlen);
	/* Runs c; see lesson_run.h for what it returns. */
	int (*exec)(struct lesson_run *run, const struct lesson_cmd *c);
};

/* An `expect`: a quantity (lesson_run.c's table) and what it should be. */
struct lesson_expect {
	const struct lesson_quantity *quantity;
	int final;		/* `expect final o|lse`: after the whole run */
	int index;		/* u[2] -> 2; -1: every entry */
	int n;
	double *values;
	double atol, rtol;	/* |got - want| <= atol + rtol |want| */
};

/* A question: `ask`, its `choice`s and its `answer`. */
struct lesson_question {
	int line;
	char *text;
	int nchoices;
	char **choices;
	int answer;		/* index of the right choice, or -1 */
	char *explanation;
};

/* Variants of `goto` and `step until`. */
enum lesson_target {
	LESSON_GOTO_STEP,	/* goto step N [phase P] */
	LESSON_GOTO_TILE,	/* goto tile I J [phase P] */
	LESSON_GOTO_START,	/* before the first step */
	LESSON_GOTO_END,	/* the last step, done */
	LESSON_GOTO_LABEL,	/* goto label NAME */
	LESSON_UNTIL_ROW,	/* step until row: the next tile of the focus row */
	LESSON_UNTIL_RISE,	/* step until max-rises */
	LESSON_UNTIL_DONE,	/* step until row-done: it is finalized */
};

/* One directive of the script, as parsed.  Which fields mean something
 * depends on the directive; the rest stay zero. */
struct lesson_cmd {
	const struct lesson_directive *dir;
	int line;
	char *name;		/* the directive's name as written */
	char *text;		/* LESSON_TEXT: the text, continuations joined */
	int argc;
	char **argv;		/* the words after the name */

	long n, n2;		/* counts, step numbers, tile (I, J), rows */
	int phase;		/* a phase, or SIM_PHASE_LAST */
	enum lesson_target target;
	int ref;		/* goto label: the label's index; ask: question */
	float *matrix;		/* inline q, k, v, scores: rows x cols */
	int rows, cols;
	char *path;		/* q, k, v, scores FILE, from the lesson's folder */
	const struct options_entry *option;	/* a problem option */
	struct lesson_expect expect;
};

struct lesson {
	char *path;		/* as given: messages start with it */
	char *title;
	int ncmds;
	struct lesson_cmd *cmds;
	int nquestions;
	struct lesson_question *questions;
	int nlabels;		/* labels are numbered in script order */
	int nbuilds_on;
	char **builds_on;	/* names of the lessons this one builds on */
};

/*
 * Parses the lesson in file path.  Returns a lesson, or NULL with one
 * line in err: "path:line: what is wrong" (or "path: ..." when the file
 * cannot be read).
 */
struct lesson *lesson_parse_file(const char *path, char *err, size_t errlen);

/* The same for a script in memory; path names it in messages, and the
 * files it mentions are found from path's folder. */
struct lesson *lesson_parse_string(const char *path, const char *text,
    char *err, size_t errlen);

void lesson_free(struct lesson *l);

/* The directive called name, or NULL.  Problem options are directives
 * too (every option of `run`, without the "--"). */
const struct lesson_directive *lesson_directive_find(const char *name,
    const struct options_entry **option);

/* The known name nearest to a misspelt one (edit distance at most 2, or
 * 3 for long words), or NULL. */
const char *lesson_directive_suggest(const char *name);

/* Edit distance (Levenshtein) between two short words; exposed for tests. */
int lesson_distance(const char *a, const char *b);

/* The parser's state that directives may consult (lesson.c). */
struct lesson *lesson_parser_lesson(struct lesson_parser *ps);
const char *lesson_parser_folder(struct lesson_parser *ps);
/* The index of the question still waiting for its answer, or -1. */
int lesson_parser_open_question(struct lesson_parser *ps);
void lesson_parser_set_open_question(struct lesson_parser *ps, int q);
/* The index of an earlier `label NAME`, or -1. */
int lesson_parser_label(struct lesson_parser *ps, const char *name);
/* The previous directive (NULL at the first). */
const struct lesson_cmd *lesson_parser_previous(struct lesson_parser *ps);

/* Directive table iteration, for the man page test and suggestions. */
const struct lesson_directive *lesson_directives(void);

/* Drops the "--" of option names in a message of the shared option
 * parser: in a script the options are spelt without it. */
void lesson_unflag(char *msg);

/* Reads one number strictly ("-inf" and "inf" allowed when inf is set);
 * 0 or -1. */
int lesson_number(const char *word, int inf, double *out);

#endif
