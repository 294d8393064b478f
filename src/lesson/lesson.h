/*
 * lesson.h - lesson scripts: what a parsed lesson is, and the parser.
 *
 * A lesson is plain text, one directive a line (flashstep-lesson(5)):
 *
 *   # a comment
 *   title The online softmax on four scores
 *   scores 1 2 1001 1002          <- problem: any option of `run`, no "--"
 *   values 2 -1 4 8
 *   bc 2
 *   say Two tiles of two keys.    <- narration; an indented line
 *       The max is now {m 2}.        continues it; {...} is filled from
 *   step                             the simulator and checked
 *   expect m 2
 *   pause
 *
 * Parsing reads the whole file first: a script with one bad line runs
 * nothing.  The layers, each using only those above it:
 *
 *   lesson.h           the parsed lesson (this file): types only, and
 *                      the entry points of the parser
 *   lesson_parser.c    the parser's state and small readers (numbers,
 *                      names, nearest names) that directives use
 *   lesson_say.c, lesson_ask.c, lesson_move.c, lesson_expect.c,
 *   lesson_problem.c, lesson_meta.c, lesson_gpu.c
 *                      the directives, one group a file: how each reads
 *                      its words and what it does when it runs
 *   lesson_directive.c the table of every group, found by name
 *   lesson.c           lines, continuations, words, file:line messages
 *   lesson_run.c       the runner (lesson_run.h), which calls a
 *                      directive through the table's function pointers
 */
#ifndef FLASHSTEP_LESSON_H
#define FLASHSTEP_LESSON_H

#include <stddef.h>

#include "app/options.h"

struct lesson;
struct lesson_cmd;
struct lesson_parser;
struct lesson_quantity;
struct lesson_run;

/* Flags of a directive. */
#define LESSON_TEXT	0x1	/* takes free text; indented lines continue it */
#define LESSON_PROBLEM	0x2	/* changes the problem */
#define LESSON_SILENT	0x4	/* shows nothing and does not move: may
				 * stand between a question and its pause */

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

/* One operand of a value: a quantity of the simulator, or a value that
 * an earlier `keep` remembered. */
struct lesson_term {
	const struct lesson_quantity *quantity;	/* NULL: a kept value */
	int kept;		/* the kept value's index */
	int final;		/* `final o`: after the whole run */
	int index;		/* u[2] -> 2; -1: every entry */
};

/* What expect, keep and {...} read: one term, or two joined by one of
 * / * - + ("hbm / standard-hbm"). */
struct lesson_value {
	struct lesson_term term[2];
	char op;		/* 0: one term */
	int kind;		/* enum lesson_qkind of the result */
	int vector;		/* may have several entries */
	char name[64];		/* as written, for messages */
};

/* A check: `expect VALUE WANT...`, or `{VALUE WANT...}` in narration.
 * With no WANT (n == 0) the value is only read, and must exist. */
struct lesson_expect {
	struct lesson_value value;
	int n;
	double *values;
	double atol, rtol;	/* |got - want| <= atol + rtol |want| */
	int by_digits;		/* {...} with no tol: each WANT holds to half a
				 * unit in its last digit instead */
	/* {...}: each value shown as its WANT was written (as many
	 * decimals, e-notation or not); no WANT: %.7g. */
	struct lesson_shown *shown;
};

/* How a number was written: decimals after the point (of the mantissa
 * in e-notation; -1 when it is not a plain number, as inf), and half a
 * unit in its last digit. */
struct lesson_shown {
	signed char decimals;
	char exp;
	double half;
};

/* A question: `ask`, then its `choice`s or its `number`, then its
 * `answer`. */
struct lesson_question {
	int line;
	char *text;
	int nchoices;
	char **choices;
	int answer;		/* index of the right choice, or -1 */
	int numeric;		/* `number`: the student types a number */
	double number, tol;	/* the right number, and how near counts */
	double rtol;		/* the tolerance as given, when relative */
	char *number_text;	/* the number as written */
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

/* A {...} in narration: where it stands in the text, and its check. */
struct lesson_fill {
	size_t start, end;	/* the braces, [start, end) of the text */
	struct lesson_expect expect;
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

	long n, n2;		/* counts, step numbers, tile (I, J), rows;
				 * focus: n2 = 1 for a key */
	int phase;		/* a phase (lesson_parser_phase), or -1: the
				 * step's last */
	int segment;		/* goto: 1 + the enum timeline_kind named
				 * (goto backward step 3); 0: none */
	enum lesson_target target;
	int ref;		/* goto label: the label; ask: the question;
				 * keep: the kept value */
	float *matrix;		/* inline q, k, v, scores: rows x cols */
	int rows, cols;
	char *path;		/* q, k, v, scores FILE, from the lesson's folder */
	const struct options_entry *option;	/* a problem option */
	struct lesson_expect expect;	/* expect, keep */
	int nfills;
	struct lesson_fill *fills;	/* say: the {...} in its text */
};

/* A name that `keep` gives a value. */
struct lesson_kept {
	char *name;
	int kind;		/* enum lesson_qkind */
	int line;
};

struct lesson {
	char *path;		/* as given: messages start with it */
	char *title;
	int ncmds;
	struct lesson_cmd *cmds;
	int nquestions;
	struct lesson_question *questions;
	int nlabels;		/* labels are numbered in script order */
	int nkept;
	struct lesson_kept *kept;
	int nbuilds_on;
	char **builds_on;	/* names of the lessons this one builds on */
};

/*
 * Parses the lesson in file path.  Returns a lesson, or NULL with one
 * line in err: "path:line: what is wrong" (or "path: ..." when the file
 * cannot be read, is not a regular file, or is too large).  Only regular
 * files are read.
 */
struct lesson *lesson_parse_file(const char *path, char *err, size_t errlen);

/* The same for a script in memory; path names it in messages, and the
 * files it mentions are found from path's folder. */
struct lesson *lesson_parse_string(const char *path, const char *text,
    char *err, size_t errlen);

void lesson_free(struct lesson *l);

/*
 * Does the text at s (n bytes left) start with what a lesson may not
 * hold: a control character (C0 but tab, DEL, C1 U+0080-U+009F) or bytes
 * that are not UTF-8?  Returns how many bytes to name (what then says
 * what they are, "the control character ESC (\x1b)"), or 0.  The parser
 * refuses such text by file:line; whatever shows text a lesson did not
 * parse (another lesson's title) escapes it with this.
 */
size_t lesson_bad_bytes(const char *s, size_t n, char *what, size_t whatlen);

/* s with every such byte written \xHH, malloc'd (NULL: no memory). */
char *lesson_escape_text(const char *s);

#endif
