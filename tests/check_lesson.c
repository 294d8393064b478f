/*
 * check_lesson.c - the lesson language: every directive parses into what
 * it means, every error names its line, and the runner (positions,
 * expect, labels, rows read outside the current tile, slides back and
 * forth, the plain writer, finding lessons by name) does what the man
 * page says.
 */
#include "config.h"

#include "testutil.h"
#include "lesson/lesson.h"
#include "lesson/lesson_check.h"
#include "lesson/lesson_directive.h"
#include "lesson/lesson_lint.h"
#include "lesson/lesson_notes.h"
#include "lesson/lesson_parser.h"
#include "lesson/lesson_quantity.h"
#include "lesson/lesson_path.h"
#include "lesson/lesson_plain.h"
#include "lesson/lesson_run.h"
#include "lesson/lesson_slides.h"
#include "lesson/lesson_view.h"
#include "model/sim.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The seed's example, the head of many tests below. */
#define SEED "title t\nscores 1 2 1001 1002\nvalues 2 -1 4 8\nbr 1\nbc 2\n"

static struct lesson *
parse_ok(const char *text)
{
	struct lesson *l;
	char err[512];

	l = lesson_parse_string("t.lesson", text, err, sizeof err);
	ck_assert_msg(l != NULL, "parse failed: %s\n--- script:\n%s", err, text);
	return l;
}

/* The script must fail to parse with a message holding want. */
static void
parse_fails(const char *text, const char *want)
{
	struct lesson *l;
	char err[512] = "";

	l = lesson_parse_string("t.lesson", text, err, sizeof err);
	ck_assert_msg(l == NULL, "parsed, but should fail with '%s':\n%s", want,
	    text);
	ck_assert_msg(strstr(err, want) != NULL, "message '%s' lacks '%s'", err,
	    want);
}

/* Runs a script to the end with flags; returns the runner's result and
 * leaves the message (error or first failure) in msg. */
static int
run_script(const char *text, int flags, char *msg, size_t len)
{
	struct lesson_run *run;
	struct lesson *l = parse_ok(text);
	int rc;

	run = lesson_run_new(l, NULL, NULL, flags);
	ck_assert(run != NULL);
	rc = lesson_run_all(run);
	snprintf(msg, len, "%s", rc == LESSON_ERROR ? run->err : run->failure);
	if (rc == LESSON_END && run->failures > 0)
		rc = LESSON_FAILED;
	lesson_run_free(run);
	lesson_free(l);
	return rc;
}

static void
runs_clean(const char *text)
{
	char msg[512];
	int rc = run_script(text, LESSON_RUN_STOP, msg, sizeof msg);

	ck_assert_msg(rc == LESSON_END, "script did not hold (%d): %s\n%s", rc,
	    msg, text);
}

static void
run_fails(const char *text, int want_rc, const char *want)
{
	char msg[512];
	int rc = run_script(text, LESSON_RUN_STOP, msg, sizeof msg);

	ck_assert_msg(rc == want_rc, "rc %d, not %d (%s)\n%s", rc, want_rc, msg,
	    text);
	ck_assert_msg(strstr(msg, want) != NULL, "message '%s' lacks '%s'", msg,
	    want);
}

/* ---- lines, words, names ---- */

START_TEST(test_lines)
{
	struct lesson *l;

	/* Comments, blank lines, continuation lines, trailing comments. */
	l = parse_ok("# head\n\ntitle A  title\nsay one\n  two\n\tthree\n"
	    "   # an indented comment\n  four\nstep 2 # two steps\n\n"
	    "note x # stays text\n");
	ck_assert_str_eq(l->title, "A  title");
	ck_assert_int_eq(l->ncmds, 4);
	ck_assert_str_eq(l->cmds[1].text, "one two three four");
	ck_assert_int_eq(l->cmds[1].line, 4);
	ck_assert_int_eq(l->cmds[2].line, 9);
	ck_assert_int_eq(l->cmds[2].n, 2);
	ck_assert_str_eq(l->cmds[3].text, "x # stays text");
	lesson_free(l);

	/* Windows line ends and no final newline. */
	l = parse_ok("title t\r\nstep\r\npause");
	ck_assert_str_eq(l->title, "t");
	ck_assert_int_eq(l->ncmds, 3);
	lesson_free(l);
}
END_TEST

START_TEST(test_line_errors)
{
	parse_fails("  say x\ntitle t\n", "t.lesson:1: an indented line");
	parse_fails("title t\n\n  more\n", "t.lesson:3: an indented line");
	parse_fails("say hello\n", "t.lesson:1: the lesson has no title");
	parse_fails("title t\nsay a\n  b\n  c\nstpe\n",
	    "t.lesson:5: unknown directive 'stpe' (did you mean 'step'?)");
	parse_fails("title t\nexpcet m 1\n", "t.lesson:2: unknown directive "
	    "'expcet' (did you mean 'expect'?)");
	parse_fails("title t\nconvnetion normalized\n", "did you mean "
	    "'convention'?");
	parse_fails("title t\nfrobnicate\n", "t.lesson:2: unknown directive "
	    "'frobnicate' (see flashstep-lesson(5))");
}
END_TEST

START_TEST(test_distance)
{
	ck_assert_int_eq(lesson_parser_distance("step", "step"), 0);
	ck_assert_int_eq(lesson_parser_distance("stpe", "step"), 1);
	ck_assert_int_eq(lesson_parser_distance("stp", "step"), 1);
	ck_assert_int_eq(lesson_parser_distance("", "pause"), 5);
	ck_assert_int_eq(lesson_parser_distance("kitten", "sitting"), 3);
	ck_assert_str_eq(lesson_directive_suggest("pasue"), "pause");
	ck_assert_str_eq(lesson_directive_suggest("causl"), "causal");
	ck_assert_ptr_null(lesson_directive_suggest("zzzzzz"));
	/* One edit is as far as a short word may go. */
	ck_assert_ptr_null(lesson_directive_suggest("xyz"));
}
END_TEST

START_TEST(test_numbers)
{
	double x;

	ck_assert_int_eq(lesson_parser_number("1e-6", 0, &x), 0);
	ck_assert_double_eq(x, 1e-6);
	ck_assert_int_eq(lesson_parser_number("-inf", 1, &x), 0);
	ck_assert(isinf(x) && x < 0);
	ck_assert_int_eq(lesson_parser_number("-inf", 0, &x), -1);
	ck_assert_int_eq(lesson_parser_number("infinity", 1, &x), -1);
	ck_assert_int_eq(lesson_parser_number("nan", 1, &x), -1);
	ck_assert_int_eq(lesson_parser_number("1x", 1, &x), -1);
	ck_assert_int_eq(lesson_parser_number("", 1, &x), -1);
}
END_TEST

/* ---- each directive ---- */

START_TEST(test_title_builds_on)
{
	struct lesson *l = parse_ok("title t\nbuilds-on 01-scalar\nbuilds-on b\n");

	ck_assert_int_eq(l->nbuilds_on, 2);
	ck_assert_str_eq(l->builds_on[0], "01-scalar");
	lesson_free(l);
	parse_fails("title t\ntitle u\n", "t.lesson:2: a second title (the first "
	    "is at line 1)");
	parse_fails("title\n", "t.lesson:1: title needs the lesson's title");
	parse_fails("title t\nbuilds-on\n", "t.lesson:2: builds-on takes one "
	    "lesson name");
	parse_fails("title t\nbuilds-on a b\n", "t.lesson:2: builds-on takes one");
}
END_TEST

START_TEST(test_narration)
{
	struct lesson *l = parse_ok("title t\nsay hi there\nnote for me\n");

	ck_assert_str_eq(l->cmds[1].dir->name, "say");
	ck_assert_str_eq(l->cmds[2].text, "for me");
	lesson_free(l);
	parse_fails("title t\nsay\n", "t.lesson:2: say needs some text");
	parse_fails("title t\nnote   \n", "t.lesson:2: note needs some text");
}
END_TEST

START_TEST(test_questions)
{
	struct lesson *l;
	const struct lesson_question *q;

	l = parse_ok("title t\nask Why?\nchoice no\nchoice because\n"
	    "answer b) it is so\nask Free?\nanswer yes\n");
	ck_assert_int_eq(l->nquestions, 2);
	q = &l->questions[0];
	ck_assert_str_eq(q->text, "Why?");
	ck_assert_int_eq(q->nchoices, 2);
	ck_assert_str_eq(q->choices[1], "because");
	ck_assert_int_eq(q->answer, 1);
	ck_assert_str_eq(q->explanation, "it is so");
	ck_assert_int_eq(l->questions[1].answer, -1);
	ck_assert_str_eq(l->questions[1].explanation, "yes");
	lesson_free(l);

	l = parse_ok("title t\nask a?\nchoice x\nanswer a\n");
	ck_assert_int_eq(l->questions[0].answer, 0);
	ck_assert_ptr_null(l->questions[0].explanation);
	lesson_free(l);

	parse_fails("title t\nask\n", "t.lesson:2: ask needs the question");
	parse_fails("title t\nask a?\nask b?\n", "t.lesson:3: the question at "
	    "line 2 has no answer yet");
	parse_fails("title t\nask a?\nsay x\n", "t.lesson:2: this question has "
	    "no answer");
	parse_fails("title t\nchoice x\n", "t.lesson:2: choice follows an 'ask'");
	parse_fails("title t\nask a?\nsay x\nchoice y\n", "t.lesson:4: choice "
	    "follows");
	parse_fails("title t\nanswer x\n", "t.lesson:2: answer follows its "
	    "question's 'ask'");
	parse_fails("title t\nask a?\nchoice x\nchoice y\nanswer c\n",
	    "t.lesson:5: answer starts with the letter of the right choice "
	    "(a to b)");
	parse_fails("title t\nask a?\nchoice x\nanswer because\n",
	    "t.lesson:4: answer starts with the letter");
	/* An answer with nothing after it (found by the fuzzer: it read
	 * past the end of the text). */
	parse_fails("title t\nask a?\nchoice x\nanswer\n",
	    "t.lesson:4: answer starts with the letter");
	parse_fails("title t\nask a?\nchoice\n", "t.lesson:3: choice needs");
	parse_fails("title t\nask a?\nanswer\n", "t.lesson:3: answer needs the "
	    "answer");
}
END_TEST

START_TEST(test_moves)
{
	struct lesson *l;

	l = parse_ok("title t\nstep\nstep 3\nstep until max-rises\n"
	    "step until row-done phase max\nphase\nphase -2\nfocus row 3\n"
	    "pause\n");
	ck_assert_int_eq(l->cmds[1].n, 1);
	ck_assert_int_eq(l->cmds[2].n, 3);
	ck_assert_int_eq(l->cmds[3].target, LESSON_UNTIL_RISE);
	ck_assert_int_eq(l->cmds[3].phase, SIM_PHASE_LAST);
	ck_assert_int_eq(l->cmds[4].target, LESSON_UNTIL_DONE);
	ck_assert_int_eq(l->cmds[4].phase, SIM_PHASE_MAX);
	ck_assert_int_eq(l->cmds[5].n, 1);
	ck_assert_int_eq(l->cmds[6].n, -2);
	ck_assert_int_eq(l->cmds[7].n, 3);
	lesson_free(l);

	parse_fails("title t\nstep 0\n", "t.lesson:2: step takes a number of "
	    "steps from 1");
	parse_fails("title t\nstep two\n", "t.lesson:2: step takes");
	parse_fails("title t\nstep 1 2\n", "t.lesson:2: step takes");
	parse_fails("title t\nstep until\n", "t.lesson:2: step until needs an "
	    "event");
	parse_fails("title t\nstep until dawn\n", "t.lesson:2: step until: "
	    "unknown event 'dawn'");
	parse_fails("title t\nstep until row phase\n", "t.lesson:2: step: "
	    "unexpected 'phase'");
	parse_fails("title t\nphase 0\n", "t.lesson:2: phase takes a number of "
	    "phases");
	parse_fails("title t\nphase up\n", "t.lesson:2: phase takes");
	parse_fails("title t\npause now\n", "t.lesson:2: pause takes nothing "
	    "after it, not 'now'");
	parse_fails("title t\nfocus 3\n", "t.lesson:2: focus takes 'row R'");
	parse_fails("title t\nfocus row -1\n", "t.lesson:2: focus takes");
	parse_fails("title t\nfocus column 1\n", "t.lesson:2: focus takes");
}
END_TEST

START_TEST(test_goto_label)
{
	struct lesson *l;

	l = parse_ok("title t\ngoto step 4\ngoto tile 1 2 phase exp\ngoto start\n"
	    "goto end\nlabel here\nlabel there_2\ngoto label here\n");
	ck_assert_int_eq(l->cmds[1].target, LESSON_GOTO_STEP);
	ck_assert_int_eq(l->cmds[1].n, 4);
	ck_assert_int_eq(l->cmds[1].phase, SIM_PHASE_LAST);
	ck_assert_int_eq(l->cmds[2].target, LESSON_GOTO_TILE);
	ck_assert_int_eq(l->cmds[2].n, 1);
	ck_assert_int_eq(l->cmds[2].n2, 2);
	ck_assert_int_eq(l->cmds[2].phase, SIM_PHASE_EXP);
	ck_assert_int_eq(l->cmds[3].target, LESSON_GOTO_START);
	ck_assert_int_eq(l->cmds[4].target, LESSON_GOTO_END);
	ck_assert_int_eq(l->nlabels, 2);
	ck_assert_int_eq(l->cmds[7].target, LESSON_GOTO_LABEL);
	ck_assert_int_eq(l->cmds[7].ref, 0);
	lesson_free(l);

	parse_fails("title t\ngoto\n", "t.lesson:2: goto takes [forward|combine|"
	    "backward] step N, tile I J, start or end, or label NAME");
	parse_fails("title t\ngoto home\n", "not 'home'");
	parse_fails("title t\ngoto step x\n", "t.lesson:2: goto step takes a step "
	    "number");
	parse_fails("title t\ngoto tile 1\n", "t.lesson:2: goto tile takes a row "
	    "block I and a key block J");
	parse_fails("title t\ngoto step 1 phase warp\n", "t.lesson:2: goto: "
	    "unknown phase 'warp'");
	parse_fails("title t\ngoto end now\n", "t.lesson:2: goto end takes "
	    "nothing");
	parse_fails("title t\ngoto label later\nlabel later\n", "t.lesson:2: no "
	    "label 'later' before this line");
	parse_fails("title t\nlabel a\nlabel a\n", "t.lesson:3: label 'a' is "
	    "already at line 2");
	parse_fails("title t\nlabel a.b\n", "t.lesson:2: label names hold");
	parse_fails("title t\nlabel\n", "t.lesson:2: label takes one name");
}
END_TEST

START_TEST(test_expect_parse)
{
	struct lesson *l;
	const struct lesson_expect *e;

	l = parse_ok("title t\nexpect m 2\nexpect u[1] -inf tol 0.5\n"
	    "expect final o 1 2 3 rtol 1e-3\nexpect hbm 48\nexpect tile 1 0\n"
	    "expect phase rescale\n");
	e = &l->cmds[1].expect;
	ck_assert_str_eq(e->value.term[0].quantity->name, "m");
	ck_assert_int_eq(e->n, 1);
	ck_assert_double_eq(e->values[0], 2);
	ck_assert_double_eq(e->atol, 1e-6);
	ck_assert_double_eq(e->rtol, 1e-6);
	e = &l->cmds[2].expect;
	ck_assert_int_eq(e->value.term[0].index, 1);
	ck_assert(isinf(e->values[0]));
	ck_assert_double_eq(e->atol, 0.5);
	e = &l->cmds[3].expect;
	ck_assert(e->value.term[0].final);
	ck_assert_int_eq(e->n, 3);
	ck_assert_double_eq(e->rtol, 1e-3);
	e = &l->cmds[4].expect;
	ck_assert_double_eq(e->atol, 0);	/* counters: exact */
	ck_assert_int_eq(l->cmds[5].expect.n, 2);
	ck_assert_double_eq(l->cmds[6].expect.values[0], SIM_PHASE_RESCALE);
	lesson_free(l);

	parse_fails("title t\nexpect\n", "t.lesson:2: expect needs a quantity");
	parse_fails("title t\nexpect alhpa 1\n", "t.lesson:2: expect: unknown "
	    "quantity 'alhpa' (did you mean 'alpha'?)");
	parse_fails("title t\nexpect zebra 1\n", "t.lesson:2: expect: unknown "
	    "quantity 'zebra' (see");
	parse_fails("title t\nexpect m\n", "t.lesson:2: expect m needs the value");
	parse_fails("title t\nexpect m 1 2\n", "t.lesson:2: expect m takes one "
	    "value, not 2");
	parse_fails("title t\nexpect tile 1\n", "t.lesson:2: expect tile takes two");
	parse_fails("title t\nexpect final m 1\n", "t.lesson:2: expect final "
	    "applies to what the whole run ends with (o, lse, error, D, the "
	    "gradients, the partials), not m");
	parse_fails("title t\nexpect m[0] 1\n", "t.lesson:2: expect: m is one "
	    "number");
	parse_fails("title t\nexpect u[x] 1\n", "t.lesson:2: expect: the index");
	parse_fails("title t\nexpect u[1 1\n", "t.lesson:2: expect: 'u[1' is not");
	parse_fails("title t\nexpect u[0] 1 2\n", "t.lesson:2: expect u[0] takes one");
	parse_fails("title t\nexpect m two\n", "t.lesson:2: expect m: 'two' is not "
	    "a number");
	parse_fails("title t\nexpect hbm 1.5\n", "t.lesson:2: expect hbm: '1.5' is "
	    "not a whole number");
	parse_fails("title t\nexpect phase warp\n", "t.lesson:2: expect phase: "
	    "'warp' is not a phase");
	parse_fails("title t\nexpect m 1 tol\n", "t.lesson:2: expect: tol takes a "
	    "number from 0");
	parse_fails("title t\nexpect m 1 tol -1\n", "t.lesson:2: expect: tol takes");
	parse_fails("title t\nexpect phase max tol 1\n", "t.lesson:2: expect phase "
	    "takes no tolerance");
}
END_TEST

START_TEST(test_compare_parse)
{
	struct lesson *l = parse_ok("title t\ncompare gpu\n");

	lesson_free(l);
	parse_fails("title t\ncompare\n", "t.lesson:2: compare takes 'gpu'");
	parse_fails("title t\ncompare cpu\n", "t.lesson:2: compare takes 'gpu'");
}
END_TEST

/* The shipped recordings sit beside the source tree's lessons; a test
 * binary copied out of the build tree (tests/planted.sh) no longer looks
 * there by itself (lesson_path.c), so the show tests name the folder. */
static void
lessons_from_source(void)
{
	setenv("FLASHSTEP_LESSONS", LESSONS_SRCDIR, 0);
}

START_TEST(test_show_parse)
{
	struct lesson *l;

	lessons_from_source();
	l = parse_ok("title t\nshow roofline\nshow view\n"
	    "show fp8 k\nshow pipeline model tile 1\nshow pipeline "
	    "wgmma-d128.json at 3\n");

	lesson_free(l);
	parse_fails("title t\nshow\n", "t.lesson:2: show needs a figure");
	parse_fails("title t\nshow rooflines\n", "t.lesson:2: show: no figure "
	    "'rooflines'");
	parse_fails("title t\nshow roofline now\n", "t.lesson:2: show roofline "
	    "takes no more words");
	parse_fails("title t\nshow fp8 x\n", "t.lesson:2: show fp8: no tensor");
	parse_fails("title t\nshow pipeline\n", "t.lesson:2: show pipeline "
	    "needs 'model'");
	parse_fails("title t\nshow pipeline nothere.json\n", "t.lesson:2: show "
	    "pipeline: no recording 'nothere.json'");
	parse_fails("title t\nshow pipeline wgmma-d128.json at 0\n",
	    "t.lesson:2: show pipeline: 'at' takes");
	parse_fails("title t\nshow pipeline wgmma-d128.json at 99999\n",
	    "t.lesson:2: show pipeline wgmma-d128.json: its first block has no "
	    "at 99999");
	parse_fails("title t\nshow pipeline model when 3\n", "t.lesson:2: show "
	    "pipeline model: then 'at N' or 'tile J'");
}
END_TEST

START_TEST(test_problem_parse)
{
	struct lesson *l;
	char path[64], text[256];
	FILE *f;

	l = parse_ok("title t\nscores 1 2 ; 3 -inf\nvalues 2 -1 4 8\nk 1 2 ; 3 4 ;\n"
	    "q 5 6 7\nv 1 2 3 ;\ntq 8\ncausal\ncausal off\norder fa1\n"
	    "bug no-rescale\ndtype bf16\nnew-problem\n");
	ck_assert_int_eq(l->cmds[1].rows, 2);
	ck_assert_int_eq(l->cmds[1].cols, 2);
	ck_assert(isinf(l->cmds[1].matrix[3]));
	/* one row without ';': a column for k and v, a row for q and scores */
	ck_assert_int_eq(l->cmds[2].rows, 4);
	ck_assert_int_eq(l->cmds[2].cols, 1);
	ck_assert_int_eq(l->cmds[3].rows, 2);
	ck_assert_int_eq(l->cmds[3].cols, 2);
	ck_assert_int_eq(l->cmds[4].rows, 1);
	ck_assert_int_eq(l->cmds[4].cols, 3);
	ck_assert_int_eq(l->cmds[5].rows, 1);	/* a trailing ';': a row */
	ck_assert_int_eq(l->cmds[5].cols, 3);
	ck_assert(l->cmds[6].dir->flags & LESSON_PROBLEM);
	lesson_free(l);

	/* A file is found from the lesson's folder. */
	snprintf(path, sizeof path, "/tmp/check_lesson_%ld", (long)getpid());
	snprintf(text, sizeof text, "%s/q.npy", path);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	f = fopen(text, "w");
	ck_assert(f != NULL);
	fclose(f);
	snprintf(text, sizeof text, "%s/x.lesson", path);
	l = lesson_parse_string(text, "title t\nq q.npy\n", NULL, 0);
	ck_assert(l != NULL);
	ck_assert(strstr(l->cmds[1].path, "check_lesson_") != NULL);
	ck_assert(strstr(l->cmds[1].path, "/q.npy") != NULL);
	lesson_free(l);
	snprintf(text, sizeof text, "%s/q.npy", path);
	unlink(text);
	rmdir(path);

	parse_fails("title t\ntq 0\n", "t.lesson:2: tq must be a positive integer, "
	    "not '0'");
	parse_fails("title t\ntq\n", "t.lesson:2: tq takes one value");
	parse_fails("title t\norder fa3\n", "t.lesson:2: order must be fa1 or fa2, "
	    "not 'fa3'");
	parse_fails("title t\nbug typo\n", "t.lesson:2: bug must be none");
	parse_fails("title t\ndtype int8\n", "t.lesson:2: dtype must be fp32");
	parse_fails("title t\nscale -1\n", "t.lesson:2: scale must be positive");
	parse_fails("title t\ncausal maybe\n", "t.lesson:2: causal takes nothing, "
	    "'on' or 'off'");
	parse_fails("title t\nscores 1 2 ; 3\n", "t.lesson:2: scores: row 2 has 1 "
	    "number but row 1 has 2");
	parse_fails("title t\nq 1 ; ; 2\n", "t.lesson:2: q: row 2 is empty");
	parse_fails("title t\nscores 1 x\n", "t.lesson:2: scores: 'x' is not a "
	    "finite number (or -inf, masked)");
	parse_fails("title t\nq 1 -inf\n", "t.lesson:2: q: '-inf' is not a finite "
	    "number");
	parse_fails("title t\nscores 1 inf\n", "t.lesson:2: scores: 'inf' is not");
	parse_fails("title t\nvalues\n", "t.lesson:2: values needs numbers or a "
	    ".npy file");
	parse_fails("title t\nq ;\n", "t.lesson:2: q: row 1 is empty");
	parse_fails("title t\nk /no/such/k.npy\n", "t.lesson:2: k: cannot read "
	    "/no/such/k.npy");
	parse_fails("title t\nnew-problem now\n", "t.lesson:2: new-problem takes "
	    "nothing");
}
END_TEST

START_TEST(test_files)
{
	char err[512];
	struct lesson *l;

	l = lesson_parse_file("/no/such/file.lesson", err, sizeof err);
	ck_assert_ptr_null(l);
	ck_assert(strstr(err, "/no/such/file.lesson: No such file") != NULL);
}
END_TEST

START_TEST(test_unflag)
{
	char m[] = "--scores needs --v (the values); '--tq' stays a--b";

	lesson_parser_unflag(m);
	ck_assert_str_eq(m, "scores needs v (the values); 'tq' stays a--b");
}
END_TEST

/* ---- running ---- */

START_TEST(test_run_seed)
{
	runs_clean(SEED
	    "expect m -inf\nexpect l 0\nexpect u 0\nexpect step -1\n"
	    "expect hbm 0\nexpect steps 2\n"
	    "phase\nexpect step 0\nexpect phase load\nexpect m -inf\n"
	    "phase\nexpect s 1 2\nphase\nexpect m 2\nexpect rowmax 2\n"
	    "phase\nexpect alpha 0\nphase\nexpect p 0.3678795 1\n"
	    "expect rowsum 1.367879\nexpect l 0\nphase\nexpect l 1.367879\n"
	    "expect u -0.2642411\nexpect u[0] -0.2642411\n"
	    "step\nexpect tile 0 1\nexpect phase finalize\nexpect o 6.924234\n"
	    "expect lse 1002.313\nexpect final o 6.924234\n"
	    "expect final lse 1002.313\nexpect hbm-read 32\nexpect hbm-write 8\n"
	    "expect flops 8\nexpect exps 4\nexpect rescale-exps 2\n"
	    "expect standard-flops 8\nexpect skipped 0\n"
	    "expect o 6.9 tol 0.1\nexpect o 7 rtol 0.02\n");
}
END_TEST

START_TEST(test_run_failures)
{
	char msg[512];
	int rc;

	run_fails(SEED "step\nexpect m 3\n", LESSON_FAILED,
	    "t.lesson:7: expected m 3 (tol 1e-06, rtol 1e-06) got 2 (row 0, at "
	    "step 0, phase update)");
	run_fails(SEED "expect hbm 1\n", LESSON_FAILED,
	    "t.lesson:6: expected hbm 1 got 0 (before the first step)");
	run_fails(SEED "goto end\nexpect tile 0 0\n", LESSON_FAILED,
	    "expected tile 0 0 got 0 1");
	run_fails(SEED "goto end\nexpect phase max\n", LESSON_FAILED,
	    "expected phase max got finalize");
	run_fails(SEED "goto step 0 phase max\nexpect alpha 0\n", LESSON_FAILED,
	    "t.lesson:7: expected alpha 0 (tol 1e-06, rtol 1e-06) got none: alpha "
	    "is known from phase rescale");
	run_fails(SEED "step\nexpect o 1\n", LESSON_FAILED, "got none: the "
	    "unnormalized convention keeps u; o is known after the row's "
	    "finalize phase");
	run_fails(SEED "step\nexpect lse 1\n", LESSON_FAILED, "lse is known after "
	    "the row's finalize phase");
	run_fails(SEED "convention normalized\nstep\nexpect u 1\n", LESSON_FAILED,
	    "the normalized convention keeps o, not u");
	run_fails(SEED "expect tile 0 0\n", LESSON_FAILED, "before the first step "
	    "there is no tile");
	run_fails(SEED "expect s 1 2\n", LESSON_FAILED, "s belongs to the current "
	    "tile");
	run_fails(SEED "goto step 0 phase load\nexpect s 1 2\n", LESSON_FAILED,
	    "s is known from phase scores");
	run_fails(SEED "step\nexpect u[3] 1\n", LESSON_FAILED,
	    "u has 1 entry, no [3]");
	run_fails(SEED "step\nexpect s 1 2 3\n", LESSON_FAILED, "expected s 1 2 3 "
	    "got 1 2 (2 values, not 3");

	/* Without STOP the run goes on and counts every failure. */
	rc = run_script(SEED "expect m 1\nexpect m 2\nexpect m -inf\n", 0, msg,
	    sizeof msg);
	ck_assert_int_eq(rc, LESSON_FAILED);
	ck_assert(strstr(msg, "t.lesson:6:") != NULL);
}
END_TEST

START_TEST(test_run_errors)
{
	run_fails(SEED "step 3\n", LESSON_ERROR, "t.lesson:6: step 3 goes past "
	    "the last step: the problem has 2 steps (0 to 1)");
	run_fails(SEED "goto step 2\n", LESSON_ERROR, "t.lesson:6: step 2 does not "
	    "exist: the problem has 2 steps (0 to 1)");
	run_fails(SEED "goto tile 0 2\n", LESSON_ERROR, "t.lesson:6: tile (0, 2) "
	    "does not exist");
	run_fails(SEED "focus row 1\n", LESSON_ERROR, "t.lesson:6: focus row 1 "
	    "does not exist: the problem has 1 rows");
	run_fails(SEED "phase -1\n", LESSON_ERROR, "t.lesson:6: phase -1 goes back "
	    "past the start");
	run_fails(SEED "goto end\nphase\n", LESSON_ERROR, "t.lesson:7: phase 1 "
	    "goes past the last phase");
	run_fails(SEED "step 2\nstep until max-rises\n", LESSON_ERROR,
	    "t.lesson:7: step until max-rises: no later step raises the max of "
	    "row 0");
	run_fails(SEED "label a\nbc 1\ngoto label a\n", LESSON_ERROR,
	    "t.lesson:8: label 'a' belongs to an earlier problem (the problem "
	    "changed at line 7)");
	run_fails("title t\nscores 1 2\nstep\n", LESSON_ERROR, "t.lesson:2: the "
	    "problem cannot be built: scores needs v (the values)");
	run_fails("title t\nq 1 2 3\nk 1 2 ; 3 4\nv 1 ; 2\nstep\n", LESSON_ERROR,
	    "t.lesson:4: the problem cannot be built: q has 3 columns but k has 2");
	run_fails("title t\ntq 4\nfocus row 3\ntq 2\nstep\n", LESSON_ERROR,
	    "t.lesson:5: focus row 3 does not exist in this problem (it has 2 "
	    "rows)");
	run_fails("title t\nbug forget-old-denominator\nconvention unnormalized\n"
	    "step\n", LESSON_ERROR, "belongs to the normalized convention");
	run_fails("title t\nbuilds-on no-such-lesson-anywhere\n", LESSON_ERROR,
	    "t.lesson:2: builds-on: no lesson named 'no-such-lesson-anywhere'");
}
END_TEST

START_TEST(test_run_moves)
{
	/* A half-done step counts as one; phases cross steps both ways. */
	runs_clean(SEED "goto step 0 phase max\nstep\nexpect step 0\n"
	    "expect phase update\nstep\nexpect step 1\nphase -1\n"
	    "expect phase update\nexpect step 1\nphase -6\nexpect step 0\n"
	    "expect phase update\nphase -6\nexpect step -1\nphase 13\n"
	    "expect phase finalize\ngoto start\nexpect step -1\n"
	    "step until row phase exp\nexpect step 0\nexpect phase exp\n"
	    "step until row-done\nexpect step 1\nexpect phase finalize\n"
	    "goto start\nstep until max-rises phase max\nexpect step 1\n"
	    "expect m 1002\nlabel rise\ngoto start\ngoto label rise\n"
	    "expect step 1\nexpect phase max\n");
	/* Options change the problem and start it again. */
	runs_clean(SEED "goto end\nbc 4\nexpect step -1\nexpect steps 1\n"
	    "step\nexpect o 6.924234\ncausal on\nexpect steps 1\ncausal off\n"
	    "new-problem\nexpect steps 16\nexpect skipped 0\ncausal\n"
	    "expect skipped 6\n");
}
END_TEST

/* A row's state read anywhere equals what stepping gave it last. */
struct last {
	int tq;
	float *m, *l;
	long *step;
};

static int
remember(const struct sim_view *v, void *ctx)
{
	struct last *x = ctx;
	int r;

	for (r = v->tile.r0; r < v->tile.r1; r++) {
		x->m[r] = v->m_new[r - v->tile.r0];
		x->l[r] = v->l_new[r - v->tile.r0];
		x->step[r] = v->step;
	}
	return 0;
}

START_TEST(test_rows_anywhere)
{
	static const char *orders[] = { "fa2", "fa1" };
	struct lesson_run *run;
	struct lesson_row row;
	struct lesson *l;
	struct last want;
	struct setup s;
	struct options o;
	char script[256], err[256];
	long k, upto;
	int i, r;

	for (i = 0; i < 2; i++) {
		snprintf(script, sizeof script, "title t\ntq 13\ntk 11\nd 3\nbr 4\n"
		    "bc 3\ncausal\ninput spike\norder %s\ngoto end\n", orders[i]);
		l = parse_ok(script);
		run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
		ck_assert_int_eq(lesson_run_all(run), LESSON_END);
		for (upto = 0; upto < sim_steps(run->setup.sim); upto++) {
			/* What each row held after steps 0 .. upto. */
			want.tq = 13;
			want.m = calloc(13, sizeof *want.m);
			want.l = calloc(13, sizeof *want.l);
			want.step = calloc(13, sizeof *want.step);
			for (r = 0; r < 13; r++) {
				want.m[r] = -INFINITY;
				want.step[r] = -1;
			}
			options_init(&o);
			o.spec.tq = 13;
			o.spec.tk = 11;
			o.spec.d = 3;
			o.spec.causal = 1;
			o.spec.input = INPUTS_SPIKE;
			o.spec.bc = 3;
			o.tiling.br = 4;
			o.tiling.bc = 3;
			o.tiling.order = i ? ORDER_FA1 : ORDER_FA2;
			ck_assert_msg(setup_open(&o, &s, err, sizeof err) == 0, "%s", err);
			for (k = 0; k <= upto; k++) {
				sim_seek(s.sim, k, SIM_PHASE_LAST);
				remember(sim_view(s.sim), &want);
			}
			ck_assert(lesson_run_seek(run, &l->cmds[1], upto,
			    SIM_PHASE_LAST) == 0);
			for (r = 0; r < 13; r++) {
				ck_assert_int_eq(lesson_run_row(run, r, &row), 0);
				ck_assert_msg(row.from_step == want.step[r],
				    "%s step %ld row %d: from %ld, not %ld", orders[i],
				    upto, r, row.from_step, want.step[r]);
				ck_assert_msg(row.m == want.m[r] || (isinf(row.m) &&
				    isinf(want.m[r])), "%s step %ld row %d: m %g, not %g",
				    orders[i], upto, r, row.m, want.m[r]);
				ck_assert_float_eq(row.l, want.l[r]);
			}
			setup_close(&s);
			free(want.m);
			free(want.l);
			free(want.step);
		}
		ck_assert_int_eq(lesson_run_row(run, 13, &row), -1);
		lesson_run_free(run);
		lesson_free(l);
	}
}
END_TEST

/* compare gpu: skipped with the reason without a GPU, never a failure
 * for that; with one, a report. */
struct seen {
	int reports, skips;
	char why[256];
};

static void
seen_compare(void *ctx, struct lesson_run *run,
    const struct gpucheck_report *rep, const char *skipped)
{
	struct seen *s = ctx;

	(void)run;
	if (rep != NULL)
		s->reports++;
	else {
		s->skips++;
		snprintf(s->why, sizeof s->why, "%s", skipped);
	}
}

START_TEST(test_compare_gpu)
{
	static const struct lesson_sink sink = { .compare = seen_compare };
	struct seen seen = { 0, 0, "" };
	struct lesson_run *run;
	struct lesson *l = parse_ok(SEED "compare gpu\nexpect m -inf\n");
	int rc;

	run = lesson_run_new(l, &sink, &seen, LESSON_RUN_STOP);
	rc = lesson_run_all(run);
	ck_assert_int_eq(seen.reports + seen.skips, 1);
	if (seen.skips)
		ck_assert_msg(rc == LESSON_END && run->failures == 0, "a skipped "
		    "comparison failed the lesson");
	if (seen.skips)
		ck_assert(seen.why[0] != '\0');
	lesson_run_free(run);

	/* A rehearsal does not start the GPU. */
	seen.reports = seen.skips = 0;
	run = lesson_run_new(l, &sink, &seen, LESSON_RUN_DRY);
	ck_assert_int_eq(lesson_run_all(run), LESSON_END);
	ck_assert_int_eq(seen.reports + seen.skips, 0);
	lesson_run_free(run);
	lesson_free(l);
}
END_TEST

/* ---- pauses, slides and the plain writer ---- */

static char *
slide_text(const struct lesson_slides *s)
{
	static char buf[4096];
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < s->nitems && used < sizeof buf; i++)
		used += (size_t)snprintf(buf + used, sizeof buf - used, "[%d]%s|",
		    s->items[i].kind, s->items[i].text ? s->items[i].text : "?");
	return buf;
}

/* A progress function that counts its calls and stops at the n-th
 * (0: never). */
struct stop_after {
	long calls, stop;
};

static int
stop_after(void *ctx, const char *what, long done, long total)
{
	struct stop_after *st = ctx;

	(void)what;
	(void)done;
	(void)total;
	return ++st->calls == st->stop;
}

/* The lesson's builds go through the caller's progress (the terminal
 * runner's progress screen, where q stops them): the rehearsal's and the
 * slides'; one it stops fails the open, nothing left built. */
START_TEST(test_slides_progress)
{
	struct stop_after st = { 0, 0 };
	struct fulltimeline_progress pr = { stop_after, &st };
	struct lesson_slides s;
	struct lesson *l;
	char err[512];

	/* the backward needs the forward run to its end first */
	l = parse_ok(SEED "backward\ngoto backward step 0\nsay one\npause\n"
	    "say two\n");
	ck_assert_int_eq(lesson_slides_open_progress(&s, l, &pr, err,
	    sizeof err), 0);
	ck_assert_int_gt(st.calls, 0);
	ck_assert_int_eq(s.run->progress == &pr, 1);
	lesson_slides_close(&s);
	/* stopped at its first call: the open fails, saying so */
	st.calls = 0;
	st.stop = 1;
	ck_assert_int_eq(lesson_slides_open_progress(&s, l, &pr, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "stopped while building") != NULL, "%s", err);
	ck_assert_int_eq(st.calls, 1);
	lesson_free(l);
}
END_TEST

START_TEST(test_slides)
{
	struct lesson_slides s;
	struct lesson *l;
	char err[512], first[4096], second[4096];
	long step2;

	l = parse_ok(SEED "say one\nnote secret\nstep\npause\nsay two\n"
	    "ask q?\nchoice a\nchoice b\nanswer b why\nstep\npause\nsay three\n");
	ck_assert_int_eq(lesson_slides_open(&s, l, err, sizeof err), 0);
	ck_assert_int_eq(s.index, 1);
	ck_assert_int_eq(s.count, 3);
	ck_assert(!s.at_end);
	snprintf(first, sizeof first, "%s", slide_text(&s));
	ck_assert(strstr(first, "one") != NULL);
	/* the notes are kept, as notes, for the presenter's own screen */
	ck_assert(strstr(first, "[1]secret") != NULL);
	ck_assert_int_eq(s.run->step, 0);
	ck_assert_int_eq(lesson_slides_back(&s), 1);	/* the first already */

	ck_assert_int_eq(lesson_slides_forward(&s), 0);
	ck_assert_int_eq(s.index, 2);
	snprintf(second, sizeof second, "%s", slide_text(&s));
	ck_assert(strstr(second, "two") != NULL);
	ck_assert(strstr(second, "one") == NULL);
	ck_assert_ptr_nonnull(lesson_slides_hidden(&s));
	ck_assert_int_eq(lesson_slides_reveal(&s), 1);
	ck_assert_ptr_null(lesson_slides_hidden(&s));
	ck_assert_int_eq(lesson_slides_reveal(&s), 0);
	step2 = s.run->step;
	ck_assert_int_eq(step2, 1);

	/* Back replays: the same slide, the same position. */
	ck_assert_int_eq(lesson_slides_back(&s), 0);
	ck_assert_int_eq(s.index, 1);
	ck_assert_str_eq(slide_text(&s), first);
	ck_assert_int_eq(s.run->step, 0);
	ck_assert_int_eq(lesson_slides_forward(&s), 0);
	ck_assert_str_eq(slide_text(&s), second);
	ck_assert_ptr_nonnull(lesson_slides_hidden(&s));	/* hidden again */

	ck_assert_int_eq(lesson_slides_forward(&s), 0);
	ck_assert_int_eq(s.index, 3);
	ck_assert(s.at_end);
	ck_assert(strstr(slide_text(&s), "three") != NULL);
	ck_assert_int_eq(lesson_slides_forward(&s), 1);
	ck_assert_int_eq(lesson_slides_go(&s, 2), 0);
	ck_assert_int_eq(s.index, 2);
	lesson_slides_close(&s);
	lesson_free(l);

	/* A lesson that cannot run shows nothing. */
	l = parse_ok(SEED "say hi\npause\nstep 5\n");
	ck_assert_int_eq(lesson_slides_open(&s, l, err, sizeof err), -1);
	ck_assert(strstr(err, "t.lesson:8: step 5 goes past") != NULL);
	lesson_free(l);
}
END_TEST

/* Reads what lesson_plain_write wrote (markdown: the handout's style). */
static int
write_doc(const char *script, int presenter, int markdown, int answers,
    char *out, size_t len, char *err)
{
	struct lesson_plain_opts o = { .markdown = markdown,
	    .presenter = presenter, .answers = answers };
	struct lesson *l = parse_ok(script);
	FILE *f = tmpfile();
	size_t n;
	int rc;

	ck_assert(f != NULL);
	rc = lesson_plain_write(l, f, &o, err, 512);
	rewind(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
	lesson_free(l);
	return rc;
}

static int
plain(const char *script, int presenter, char *out, size_t len, char *err)
{
	return write_doc(script, presenter, 0, 1, out, len, err);
}

/* show: the frame is the figure, drawn by the view's own code, until
 * show view; a figure a problem cannot have is an error of its line. */
START_TEST(test_show_plain)
{
	static char out[65536];
	char err[512];

	lessons_from_source();
	const char *fig, *back;

	ck_assert_int_eq(plain(SEED "say Roof.\nshow roofline\npause\n"
	    "say Back.\nshow view\nstep\npause\nsay Pipe.\nshow pipeline "
	    "wgmma-d128.json tile 3\npause\n", 0, out, sizeof out, err), 0);
	fig = strstr(out, "[slide 1 of 3] the figure: show roofline\n");
	ck_assert_msg(fig != NULL, "%s", out);
	/* the roofline's text: the H200's ridges, tensor and fp32 */
	ck_assert(strstr(fig, "the ridges (206, 14)") != NULL);
	ck_assert(strstr(fig, "FLOPs per HBM byte") != NULL);
	back = strstr(out, "[slide 2 of 3] step 1 of 2");
	ck_assert_msg(back != NULL && back > fig, "%s", out);
	ck_assert(strstr(back, "tiles   @ o\n") != NULL);
	ck_assert(strstr(back, "the ridges") == NULL ||
	    strstr(back, "the ridges") > strstr(out, "[slide 3 of 3]"));
	fig = strstr(out, "[slide 3 of 3] the figure: show pipeline");
	ck_assert_msg(fig != NULL, "%s", out);
	ck_assert(strstr(fig, "softmax, tile (3,3)") != NULL);

	/* a new problem: the view again */
	ck_assert_int_eq(plain(SEED "show roofline\npause\nbc 1\nstep\n"
	    "pause\n", 0, out, sizeof out, err), 0);
	ck_assert(strstr(out, "[slide 2 of 2] step 1 of 4") != NULL);

	ck_assert_int_eq(plain(SEED "show fp8\npause\n", 0, out, sizeof out,
	    err), -1);
	ck_assert_msg(strstr(err, ":6: show fp8: the problem is fp32, not fp8")
	    != NULL, "%s", err);
}
END_TEST

START_TEST(test_plain)
{
	static char out[65536];
	char err[512];

	ck_assert_int_eq(plain(SEED "say Hello there.\nnote psst\nstep\npause\n"
	    "ask Why?\nchoice because\nchoice why not\nanswer a That is why.\n"
	    "goto end\npause\ncompare gpu\n", 0, out, sizeof out, err), 0);
	ck_assert(strncmp(out, "t\n=\n", 4) == 0);
	ck_assert(strstr(out, "Hello there.") != NULL);
	ck_assert(strstr(out, "psst") == NULL);
	ck_assert(strstr(out, "problem:  scores Tq=1 Tk=4") != NULL);
	ck_assert(strstr(out, "[slide 1 of 3] step 1 of 2, after phase update\n"
	    "    tile (0, 0): rows 0-0, keys 0-1\n") != NULL);
	ck_assert(strstr(out, "tile (0, 1): rows 0-0, keys 2-3; finalizes its "
	    "rows") != NULL);
	ck_assert(strstr(out, "u -0.2642411 -> 9.471518") != NULL);
	ck_assert(strstr(out, "o 6.924234   lse 1002.313") != NULL);
	ck_assert(strstr(out, "tiles   # @\n") != NULL);
	ck_assert(strstr(out, "Q1. Why?") != NULL);
	ck_assert(strstr(out, "the GPU") != NULL);
	/* the answers come last */
	ck_assert(strstr(out, "Answers\n-------\nQ1. a) because -- That is why.")
	    != NULL);
	ck_assert(strstr(out, "That is why.") > strstr(out, "[slide 2 of 3]"));

	ck_assert_int_eq(plain(SEED "note psst\n", 1, out, sizeof out, err), 0);
	ck_assert(strstr(out, "[note] psst") != NULL);

	/* A failed expect is printed and gives 1; an error writes nothing. */
	ck_assert_int_eq(plain(SEED "expect m 5\nsay after\n", 0, out, sizeof out,
	    err), 1);
	ck_assert(strstr(out, "!! t.lesson:6: expected m 5") != NULL);
	ck_assert(strstr(out, "after") != NULL);
	ck_assert_int_eq(plain(SEED "say before\nstep 9\n", 0, out, sizeof out,
	    err), -1);
	ck_assert(strstr(err, "t.lesson:7: step 9") != NULL);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_view)
{
	struct lesson_lines ls = { 0 };
	struct lesson_run *run;
	struct lesson *l;
	int i, found = 0;

	/* Several rows: the focus row is marked; a row outside the tile is
	 * shown as its last step left it. */
	l = parse_ok("title t\ntq 6\ntk 4\nd 2\nbr 2\nbc 2\ncausal\n"
	    "focus row 0\ngoto tile 2 1\n");
	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
	ck_assert_int_eq(lesson_run_all(run), LESSON_END);
	lesson_view_state(run, &ls);
	ck_assert(!ls.oom);
	ck_assert_str_eq(ls.line[0], "step 3 of 3, after phase finalize");
	ck_assert_str_eq(ls.line[1], "tile (2, 1): rows 4-5, keys 2-3; "
	    "finalizes its rows");
	ck_assert_str_eq(ls.line[2], "tiles   / /");
	ck_assert_str_eq(ls.line[3], "        # /");
	ck_assert_str_eq(ls.line[4], "        # @");
	ck_assert_str_eq(ls.line[5], "        (@ this step, # done, o to come, "
	    "/ skipped)");
	for (i = 0; i < ls.n; i++)
		if (strncmp(ls.line[i], "row 0 (not reached yet)", 23) == 0)
			found = 1;
	ck_assert_msg(found, "row 0 is not shown");
	lesson_lines_free(&ls);

	/* Wrapping keeps words whole and the width. */
	lesson_lines_wrap(&ls, "aaa bbb ccc ddd eee fff ggg hhh iii jjj", 20,
	    "> ", "  ");
	ck_assert_int_eq(ls.n, 3);
	ck_assert_str_eq(ls.line[0], "> aaa bbb ccc ddd");
	ck_assert_str_eq(ls.line[1], "  eee fff ggg hhh");
	ck_assert_str_eq(ls.line[2], "  iii jjj");
	lesson_lines_free(&ls);
	lesson_run_free(run);
	lesson_free(l);
}
END_TEST

static void write_file(const char *path, const char *text);

/* ---- values: {...} in narration, keep, expressions ---- */

/* The narration a script shows, each text on its own line. */
struct said {
	char text[4096];
	int questions;
};

static void
said_text(void *ctx, struct lesson_run *run, enum lesson_text_kind kind,
    const char *text)
{
	struct said *sd = ctx;
	size_t n = strlen(sd->text);

	(void)run;
	snprintf(sd->text + n, sizeof sd->text - n, "%s%s\n",
	    kind == LESSON_NOTE ? "note: " : "", text);
}

static void
said_ask(void *ctx, struct lesson_run *run, const struct lesson_question *q,
    const char *text, int number)
{
	struct said *sd = ctx;
	size_t n = strlen(sd->text);

	(void)run;
	(void)q;
	sd->questions++;
	snprintf(sd->text + n, sizeof sd->text - n, "Q%d %s\n", number, text);
}

static const struct lesson_sink said_sink = {
	.text = said_text,
	.ask = said_ask,
};

/* Runs script (stopping at failures) and returns what it said; rc gets
 * the runner's result, msg its error or first failure. */
static const char *
say_run(const char *script, int *rc, char *msg, size_t len)
{
	static struct said sd;
	struct lesson_run *run;
	struct lesson *l = parse_ok(script);

	memset(&sd, 0, sizeof sd);
	run = lesson_run_new(l, &said_sink, &sd, LESSON_RUN_STOP);
	ck_assert(run != NULL);
	*rc = lesson_run_all(run);
	snprintf(msg, len, "%s", *rc == LESSON_ERROR ? run->err : run->failure);
	lesson_run_free(run);
	lesson_free(l);
	return sd.text;
}

START_TEST(test_fills)
{
	char msg[512];
	const char *t;
	int rc;

	/* The simulator's value, shown as the script wrote it. */
	t = say_run(SEED "step\nsay m is {m 2}, l {l 1.367879}, u {u}.\n"
	    "step\nphase -2\nsay a = {alpha 0}, p = {p 0.37 1}\n"
	    "phase 2\nsay o {o 6.92}, {error 8e-8} off; {hbm-read 32} B\n",
	    &rc, msg, sizeof msg);
	ck_assert_msg(rc == LESSON_END, "%s", msg);
	ck_assert_str_eq(t, "m is 2, l 1.367879, u -0.2642411.\n"
	    "a = 0, p = [0.37 1]\no 6.92, 8e-8 off; 32 B\n");

	/* A fill holds to the digits it is written with: 6.92 is not 6.93. */
	say_run(SEED "goto end\nsay {o 6.93}\n", &rc, msg, sizeof msg);
	ck_assert_int_eq(rc, LESSON_FAILED);
	ck_assert(strstr(msg, "t.lesson:7: in the narration, expected o 6.93 "
	    "(to the digits written) got 6.924234") != NULL);
	/* A quote of more digits than %.7g shows: the two values printed
	 * with the quote's own decimals, so that they differ on the page
	 * (they read "6.924234 got 6.924234" once). */
	say_run(SEED "goto end\nsay {o 6.924234314520019}\n", &rc, msg,
	    sizeof msg);
	ck_assert_int_eq(rc, LESSON_FAILED);
	ck_assert_msg(strstr(msg, "expected o 6.924234314520019 (to the digits "
	    "written) got 6.92423") != NULL, "%s", msg);
	ck_assert_msg(strstr(msg, "got 6.924234 ") == NULL, "%s", msg);
	/* Where even the quote's decimals print alike (a tolerance let a
	 * difference past them): %.17g. */
	say_run(SEED "goto end\nsay {o 6.924234 tol 1e-9 rtol 0}\n", &rc, msg,
	    sizeof msg);
	ck_assert_int_eq(rc, LESSON_FAILED);
	ck_assert_msg(strstr(msg, "expected o 6.92423400000000") != NULL, "%s",
	    msg);
	ck_assert_msg(strstr(msg, "got 6.924234 ") == NULL, "%s", msg);
	/* Each entry to its own digits: the 1 of [0.36 1] does not make
	 * 0.36 hold to 0.5. */
	say_run(SEED "step\nsay {p 0.36 1}\n", &rc, msg, sizeof msg);
	ck_assert_int_eq(rc, LESSON_FAILED);
	/* ... unless it says how near: */
	say_run(SEED "goto end\nsay {o 6.93 tol 0.01}\n", &rc, msg, sizeof msg);
	ck_assert_msg(rc == LESSON_END, "%s", msg);
	/* A value that is not known here is an error, not a blank. */
	say_run(SEED "say {alpha}\n", &rc, msg, sizeof msg);
	ck_assert_int_eq(rc, LESSON_ERROR);
	ck_assert(strstr(msg, "t.lesson:6: in the narration, alpha is known "
	    "from phase rescale") != NULL);

	/* keep, and values of two terms. */
	t = say_run(SEED "goto end\nkeep o2 o\nbc 1\ngoto end\n"
	    "say {o / o2 1.000} {o - o2 0.0000} {steps * steps 16} "
	    "{hbm / standard-hbm}\nexpect o2 6.924234\nexpect flops + exps 12\n",
	    &rc, msg, sizeof msg);
	ck_assert_msg(rc == LESSON_END, "%s", msg);
	ck_assert_str_eq(t, "1.000 0.0000 16 0.5882353\n");
	/* e^(-inf + inf): a value may be NaN, and say so. */
	t = say_run("title t\nscores -inf -inf\nvalues 1 2\ncausal\nstep\n"
	    "say {alpha-naive nan} {alpha 1} {alpha-exp2 0}\nexpect alpha-naive nan\n",
	    &rc, msg, sizeof msg);
	ck_assert_msg(rc == LESSON_END, "%s", msg);
	ck_assert_str_eq(t, "nan 1 0\n");

	/* Parse errors name the line and the fault. */
	parse_fails("title t\nsay {m 2\n", "t.lesson:2: say: a '{' with no '}'");
	parse_fails("title t\nsay a } b\n", "t.lesson:2: say: a '}' with no '{'");
	parse_fails("title t\nsay {mm}\n", "t.lesson:2: say: unknown quantity "
	    "'mm' (did you mean 'm'?)");
	parse_fails("title t\nsay {}\n", "t.lesson:2: say: {} is not a value");
	parse_fails("title t\nsay {m {l}}\n", "t.lesson:2: say: a '{' inside");
	parse_fails("title t\nsay {phase / m}\n", "joins numbers, not a phase");
	parse_fails("title t\nkeep m l\n", "t.lesson:2: keep: 'm' is a quantity");
	parse_fails("title t\nkeep a l\nkeep a m\n", "t.lesson:3: keep: 'a' is "
	    "already kept at line 2");
	parse_fails("title t\nkeep a\n", "t.lesson:2: keep takes a name and a "
	    "value");
	parse_fails("title t\nkeep a.b m\n", "kept names hold letters");
	parse_fails("title t\nexpect later 1\nkeep later m\n", "t.lesson:2: "
	    "expect: unknown quantity 'later'");
	parse_fails("title t\nkeep a m\nexpect final a 1\n", "'a' is a kept "
	    "number");
	/* A vector in a two-term value is refused when it runs. */
	run_fails(SEED "values 1 2 ; 3 4 ; 5 6 ; 7 8\nstep\nsay {u * l}\n",
	    LESSON_ERROR, "'*' joins single numbers, and u has 2 entries");
	run_fails(SEED "values 1 2 ; 3 4 ; 5 6 ; 7 8\nstep\nkeep x u\n",
	    LESSON_ERROR, "keep takes one number: u has 2 entries");
}
END_TEST

/* ---- questions: reveal one at a time, number questions ---- */

START_TEST(test_number_questions)
{
	struct lesson *l;
	const struct lesson_question *q;
	char msg[512];
	int rc;

	l = parse_ok("title t\nask How much?\nnumber 1002 tol 0.5\nanswer The "
	    "max.\nask And this?\nnumber 1.37\nanswer x\nask r?\nnumber 200 rtol "
	    "0.1\nanswer y\n");
	q = &l->questions[0];
	ck_assert(q->numeric);
	ck_assert_double_eq(q->number, 1002);
	ck_assert_double_eq(q->tol, 0.5);
	ck_assert_str_eq(q->number_text, "1002");
	/* no tolerance: half a unit in the last digit written */
	ck_assert_double_eq_tol(l->questions[1].tol, 0.005, 1e-12);
	ck_assert_double_eq_tol(l->questions[2].tol, 20, 1e-9);
	lesson_free(l);

	parse_fails("title t\nask a?\nchoice x\nnumber 1\n", "t.lesson:4: number "
	    "follows an 'ask' line");
	parse_fails("title t\nask a?\nnumber x\n", "t.lesson:3: number takes the "
	    "answer");
	parse_fails("title t\nask a?\nnumber 1 tol 0\n", "with X above 0");
	parse_fails("title t\nask a?\nnumber 1 by 2\n", "'tol X' or 'rtol X'");
	parse_fails("title t\nask a?\nnumber 2\nchoice y\n", "t.lesson:4: choice "
	    "follows");

	/* The answer must be computed after the question... */
	say_run(SEED "ask m at the end?\nnumber 1002\nanswer max\npause\n"
	    "goto end\nexpect m 1002\n", &rc, msg, sizeof msg);
	ck_assert_msg(rc == LESSON_END, "%s", msg);
	say_run(SEED "ask m at the end?\nnumber 1002\nanswer max\npause\n"
	    "goto end\nsay m is {m}\n", &rc, msg, sizeof msg);
	ck_assert_msg(rc == LESSON_END, "%s", msg);
	/* ... else the lesson fails at the question's line (a planted
	 * fault: the answer 1003 is never what the simulator computes). */
	say_run(SEED "ask m at the end?\nnumber 1003\nanswer max\npause\n"
	    "goto end\nexpect m 1002\n", &rc, msg, sizeof msg);
	ck_assert_int_eq(rc, LESSON_FAILED);
	ck_assert(strstr(msg, "t.lesson:6: the answer of Q1 (1003) is never "
	    "computed") != NULL);
	/* A check before the question does not count. */
	say_run(SEED "goto end\nexpect m 1002\nask m?\nnumber 1002\nanswer x\n",
	    &rc, msg, sizeof msg);
	ck_assert_int_eq(rc, LESSON_FAILED);
	ck_assert(strstr(msg, "the answer of Q1 (1002) is never") != NULL);
}
END_TEST

START_TEST(test_reveal_one_at_a_time)
{
	struct lesson_slides s;
	struct lesson *l;
	struct lesson_item *it;
	char err[512];

	/* Two questions on one slide (which --check refuses, but the runner
	 * must still show one answer per key). */
	l = parse_ok(SEED "ask one?\nchoice a\nchoice b\nanswer a x\n"
	    "ask two?\nanswer y\npause\nsay {m} after\n");
	ck_assert_int_eq(lesson_slides_open(&s, l, err, sizeof err), 0);
	it = lesson_slides_hidden(&s);
	ck_assert_ptr_nonnull(it);
	ck_assert_str_eq(it->text, "one?");
	ck_assert_int_eq(lesson_slides_reveal(&s), 1);
	it = lesson_slides_hidden(&s);
	ck_assert_ptr_nonnull(it);
	ck_assert_str_eq(it->text, "two?");
	ck_assert_int_eq(lesson_slides_reveal(&s), 1);
	ck_assert_ptr_null(lesson_slides_hidden(&s));
	ck_assert_int_eq(lesson_slides_reveal(&s), 0);
	ck_assert_int_eq(s.count, 2);
	ck_assert_int_eq(lesson_slides_forward(&s), 0);
	ck_assert(strstr(s.items[0].text, "-inf after") != NULL);
	lesson_slides_close(&s);
	lesson_free(l);
}
END_TEST

/* ---- the rules of a lesson, and what a slide gives away ---- */

/* lesson_check on a script: its result, and the message. */
static int
check_script(const char *script, char *msg, size_t len)
{
	struct lesson *l = parse_ok(script);
	int rc = lesson_check(l, msg, len);

	lesson_free(l);
	return rc;
}

static void
check_fails(const char *script, const char *want)
{
	char msg[512] = "";

	ck_assert_msg(check_script(script, msg, sizeof msg) == 1, "holds, but "
	    "should fail with '%s':\n%s", want, script);
	ck_assert_msg(strstr(msg, want) != NULL, "message '%s' lacks '%s'", msg,
	    want);
}

/* A question whose slide shows the state before the step that answers
 * it, and whose answer is computed after. */
#define GOOD_Q SEED "step\npause\nask What is m after the second tile?\n" \
	"number 1002 tol 0.5\nanswer The largest score.\npause\nstep\n" \
	"say m = {m 1002}.\n"

START_TEST(test_lint)
{
	char msg[512], word[64];

	ck_assert_int_eq(check_script(GOOD_Q, msg, sizeof msg), 0);

	/* The lesson language never reaches a student. */
	ck_assert_ptr_nonnull(lesson_lint_language("we expect m to rise", word,
	    sizeof word));
	ck_assert_str_eq(word, "expect");
	ck_assert_ptr_null(lesson_lint_language("as expected, m rises", word,
	    sizeof word));
	ck_assert_ptr_nonnull(lesson_lint_language("then `bug none` again", word,
	    sizeof word));
	ck_assert_str_eq(word, "bug");
	ck_assert_ptr_null(lesson_lint_language("`flashstep run` checks it",
	    word, sizeof word));
	ck_assert_ptr_nonnull(lesson_lint_language("set focus key 3 first",
	    word, sizeof word));
	ck_assert_str_eq(word, "focus key");
	ck_assert_ptr_nonnull(lesson_lint_language("then `splits 4` merges",
	    word, sizeof word));
	ck_assert_str_eq(word, "splits");
	check_fails(SEED "say The goto end runs it through.\n",
	    "t.lesson:6: 'goto' is the lesson language");
	check_fails(SEED "ask Why does compare gpu pass?\nanswer so\n",
	    "t.lesson:6: 'compare gpu' is the lesson language");
	check_fails(SEED "ask q?\nchoice use `step until row`\nchoice b\nanswer "
	    "b\n", "t.lesson:7: 'step until' is the lesson language");
	/* (notes are the presenter's: they may) */
	ck_assert_int_eq(check_script(SEED "note then goto end\n", msg,
	    sizeof msg), 0);

	/* A question ends its slide: nothing may move on or say more. */
	check_fails(SEED "ask m?\nnumber 2\nanswer x\nstep\nexpect m 2\n",
	    "t.lesson:9: 'step' after the question at line 6, before the next "
	    "pause");
	check_fails(SEED "ask m?\nanswer x\nsay the answer is 2\npause\n",
	    "t.lesson:8: 'say' after the question at line 6, before the next "
	    "pause: the slide would say more under the question");
	check_fails(SEED "ask m?\nanswer x\ncausal\npause\n", "'causal' after "
	    "the question");
	ck_assert_int_eq(check_script(SEED "ask m?\nanswer x\nexpect m -inf\n"
	    "note psst\nfocus row 0\npause\nstep\n", msg, sizeof msg), 0);

	/* Multiple choice: two choices at least, letters balanced, the right
	 * one not always the longest. */
	check_fails(SEED "ask q?\nchoice only\nanswer a\n", "t.lesson:6: one "
	    "choice is no choice");
	check_fails(SEED "ask q1?\nchoice no\nchoice yes it is\nanswer b\npause\n"
	    "ask q2?\nchoice no\nchoice yes it is\nanswer b\npause\n",
	    "t.lesson:11: 'b' is the right letter in 2 of the lesson's 2 "
	    "multiple-choice questions");
	check_fails(SEED "ask q1?\nchoice no\nchoice yes it is\nanswer b\npause\n"
	    "ask q2?\nchoice yes it is\nchoice no\nanswer a\npause\n",
	    "t.lesson:11: the right choice is the longest in every");
	ck_assert_int_eq(check_script(SEED "ask q1?\nchoice no\nchoice yes it "
	    "is\nanswer b\npause\nask q2?\nchoice no\nchoice yes it is\n"
	    "answer a\npause\nask q3?\nchoice x\nchoice y\nchoice z\nanswer c\n"
	    "pause\n", msg, sizeof msg), 0);
}
END_TEST

START_TEST(test_answer_visible)
{
	/* Planted: the question's slide already stands after the step that
	 * answers it, so the view shows m = 1002. */
	check_fails(SEED "step 2\nask What is m after the second tile?\n"
	    "number 1002 tol 0.5\nanswer The largest score.\npause\n"
	    "expect m 1002\n", "t.lesson:7: Q1's answer (1002) is on its own "
	    "slide, in the view");
	/* Planted: the narration above the question gives it. */
	check_fails(SEED "step\nsay Soon l will be 1.367879 again.\n"
	    "ask What is l after the second tile?\nnumber 1.367879\n"
	    "answer The same.\npause\nstep\nexpect l 1.367879\n",
	    "Q1's answer (1.367879) is on its own slide, in the narration");
	/* A number only the right choice holds is a giveaway too... */
	check_fails(SEED "step\nsay Watch 6.924234 appear.\npause\nsay x\n"
	    "ask Which o?\nchoice o = 6.924234\nchoice o = 3.5, about half\n"
	    "answer a\npause\ngoto end\nask Again: which o?\nchoice o = 3.5, "
	    "about half\nchoice o = 6.924234\nanswer b\npause\n",
	    "Q2's answer (6.924234) is on its own slide, in the view");
	/* ... but not one the question states, or a wrong choice holds. */
	{
		char msg[512];
		ck_assert_int_eq(check_script(SEED "goto end\nask o = 6.924234: "
		    "exact?\nchoice yes, 6.924234\nchoice no\nanswer a\npause\n",
		    msg, sizeof msg), 0);
		ck_assert_int_eq(check_script(GOOD_Q, msg, sizeof msg), 0);
	}
}
END_TEST

/* ---- builds-on, odd bytes, files that are not lessons ---- */

START_TEST(test_builds_on_cycles)
{
	char dir[64], a[128], b[128], c[128], err[512];
	struct lesson_run *run;
	struct lesson *l;

	snprintf(dir, sizeof dir, "/tmp/check_lesson_c%ld", (long)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(a, sizeof a, "%s/a1-self.lesson", dir);
	write_file(a, "title s\nbuilds-on a1-self\n");
	snprintf(b, sizeof b, "%s/b1-one.lesson", dir);
	write_file(b, "title one\nbuilds-on b2-two\n");
	snprintf(c, sizeof c, "%s/b2-two.lesson", dir);
	write_file(c, "title two\nbuilds-on b1-one # back\n");

	l = lesson_parse_file(a, err, sizeof err);
	ck_assert_msg(l != NULL, "%s", err);
	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
	ck_assert_int_eq(lesson_run_all(run), LESSON_ERROR);
	ck_assert_msg(strstr(run->err, "a1-self.lesson:2: builds-on a1-self names "
	    "this lesson itself") != NULL, "%s", run->err);
	lesson_run_free(run);
	lesson_free(l);

	l = lesson_parse_file(b, err, sizeof err);
	ck_assert_msg(l != NULL, "%s", err);
	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
	ck_assert_int_eq(lesson_run_all(run), LESSON_ERROR);
	ck_assert_msg(strstr(run->err, "b1-one.lesson:2: builds-on: a cycle: "
	    "b2-two builds on b1-one, which is this lesson") != NULL, "%s",
	    run->err);
	lesson_run_free(run);
	lesson_free(l);

	unlink(a);
	unlink(b);
	unlink(c);
	rmdir(dir);
}
END_TEST

START_TEST(test_odd_bytes)
{
	struct lesson *l;
	char err[512];

	/* A byte-order mark at the start is the editor's: accepted. */
	l = parse_ok("\xef\xbb\xbftitle t\nsay hi\n");
	ck_assert_str_eq(l->title, "t");
	lesson_free(l);
	/* Anywhere else it is named, not shown as an invisible character. */
	parse_fails("title t\n\xef\xbb\xbfsay hi\n", "t.lesson:2: a UTF-8 "
	    "byte-order mark (U+FEFF, invisible) stands before 'say'");
	parse_fails("title t\nsa\xe2\x80\x8by hi\n", "t.lesson:2: unknown "
	    "directive 'sa\\xe2\\x80\\x8by' (it holds bytes that are not "
	    "printable ASCII");

	/* Files that are not lessons are named for what they are, and a
	 * device is never read. */
	ck_assert_ptr_null(lesson_parse_file("/tmp", err, sizeof err));
	ck_assert_str_eq(err, "/tmp: a directory, not a lesson file");
	ck_assert_ptr_null(lesson_parse_file("/dev/zero", err, sizeof err));
	ck_assert_str_eq(err, "/dev/zero: not a regular file (a device, FIFO or "
	    "socket), not a lesson");
	ck_assert_ptr_null(lesson_path_find("/tmp", NULL, err, sizeof err));
	ck_assert_str_eq(err, "/tmp: a directory, not a lesson file");
	ck_assert_ptr_null(lesson_path_find("/dev/zero", NULL, err, sizeof err));
	ck_assert_str_eq(err, "/dev/zero: not a regular file (a device, FIFO or "
	    "socket), not a lesson");
}
END_TEST

/* Control characters never reach a terminal: each is named by line. */
START_TEST(test_control_bytes)
{
	struct lesson *l;
	char *clean;

	parse_fails("title T\x1b[2J\nsay hi\n", "t.lesson:1: column 8 holds the "
	    "control character ESC (\\x1b)");
	parse_fails("title t\nsay \x07\x1b]0;pwned\x07\n", "t.lesson:2: column 5 "
	    "holds the control character BEL (\\x07)");
	parse_fails("title t\nsay a\xc2\x9b" "2J\n", "t.lesson:2: column 6 holds "
	    "the control character U+009B (\\xc2\\x9b)");
	parse_fails("title t\nsay del\x7f\n", "t.lesson:2: column 8 holds the "
	    "control character DEL (\\x7f)");
	parse_fails("title t\nsay caf\xe9\n", "t.lesson:2: column 8 holds the "
	    "byte \\xe9, which is not UTF-8");
	parse_fails("title t\nsay over\xc0\xaflong\n", "which is not UTF-8");
	parse_fails("title t\n# a comment\rhides this\n", "t.lesson:2: column 12 "
	    "holds the control character CR (\\x0d)");
	/* Text the course uses, tabs, and CR LF line ends stay fine. */
	l = parse_ok("title t \xce\xb1 \xe2\x84\x93\r\nsay\ta\tb \xe2\x88\x98\r\n");
	ck_assert_str_eq(l->title, "t \xce\xb1 \xe2\x84\x93");
	lesson_free(l);
	clean = lesson_escape_text("T\x1b[2J \xce\xb1\xc2\x9b");
	ck_assert_str_eq(clean, "T\\x1b[2J \xce\xb1\\xc2\\x9b");
	free(clean);
}
END_TEST

/* 300,000 labels parse in linear time: a scan of every earlier line per
 * label took minutes (80,000 labels: 16 s). */
START_TEST(test_many_labels)
{
	enum { N = 300000 };
	struct lesson *l;
	size_t len = 0;
	char *text = malloc((size_t)N * 24 + 64);
	int i;

	ck_assert(text != NULL);
	len += (size_t)sprintf(text, "title t\n");
	for (i = 0; i < N; i++)
		len += (size_t)sprintf(text + len, "label l%d\n", i);
	len += (size_t)sprintf(text + len, "goto label l0\ngoto label l%d\n",
	    N - 1);
	l = parse_ok(text);
	ck_assert_int_eq(l->nlabels, N);
	ck_assert_int_eq(l->cmds[l->ncmds - 1].ref, N - 1);
	ck_assert_int_eq(l->cmds[l->ncmds - 2].ref, 0);
	lesson_free(l);
	sprintf(text + len, "label l%d\n", N / 2);
	parse_fails(text, "label 'l150000' is already at line 150002");
	free(text);
}
END_TEST

/* ---- the score rules' quantities (mask_rule.h) ---- */

/* s-scaled is x before the cap, cap-slope 1 - tanh^2(x / C), each
 * against libm's tanh here; alibi-bias -slope |r + Tk - Tq - c| with
 * Tq != Tk, s - s-scaled the bias; keys-seen counts a window's keys,
 * 0 for a row the band misses. */
START_TEST(test_mask_quantities)
{
	char script[1024];
	double t0 = tanh(90.0 / 30.0), t1 = tanh(-5.0 / 30.0);

	snprintf(script, sizeof script, "title t\nscores 2 40 90 -5 ; 100 200 60 "
	    "10\nvalues 1 2 3 4\nbr 2\nbc 2\nsoftcap 30\ngoto tile 0 1 phase "
	    "scores\nexpect s-scaled 90 -5\nexpect s %.9g %.9g rtol 1e-6\n"
	    "expect cap-slope %.9g %.9g rtol 1e-5\nexpect alibi-bias 0 0\n",
	    30.0 * t0, 30.0 * t1, 1.0 - t0 * t0, 1.0 - t1 * t1);
	runs_clean(script);
	run_fails("title t\nscores 2 40 90 -5 ; 100 200 60 10\nvalues 1 2 3 4\n"
	    "br 2\nbc 2\nsoftcap 30\ngoto tile 0 1 phase scores\n"
	    "expect cap-slope 1 1\n", LESSON_FAILED, "expected cap-slope 1 1");
	/* Without a cap the slope is 1, and hidden keys have none. */
	runs_clean("title t\ntq 4\ntk 4\nd 2\nbr 2\nbc 2\ncausal\n"
	    "goto tile 0 0 phase scores\nexpect cap-slope 1 0\n"
	    "expect s-scaled[1] -inf\n");
	/* ALiBi, bottom-right: row 6 of 8 against 6 keys has its diagonal
	 * at key 4. */
	runs_clean("title t\ntq 8\ntk 6\nd 2\nbr 4\nbc 3\ninput normal\n"
	    "alibi 0.5\nfocus row 6\ngoto tile 1 0 phase scores\n"
	    "expect alibi-bias -2 -1.5 -1\nexpect s[0] - s-scaled[0] -2 "
	    "tol 1e-6\nexpect s[2] - s-scaled[2] -1 tol 1e-6\n"
	    "expect keys-seen 6\nwindow 1,0\nexpect keys-seen 2\nfocus row 0\n"
	    "expect keys-seen 0\nwindow -1,0\nfocus row 6\nexpect keys-seen 5\n");
	run_fails("title t\ntq 8\ntk 6\nd 2\nbr 4\nbc 3\nalibi 0.5\n"
	    "focus row 6\ngoto tile 1 0 phase scores\n"
	    "expect alibi-bias -3 -2.5 -2\n", LESSON_FAILED,
	    "expected alibi-bias -3 -2.5 -2");
}
END_TEST

/* ---- the paged KV cache's quantities (paged.h) ---- */

/* A 1-D int32 .npy of n entries at path. */
static void
write_int32_npy(const char *path, const int *v, int n)
{
	char hdr[128];
	FILE *f;
	int len, i;

	len = snprintf(hdr, sizeof hdr, "{'descr': '<i4', 'fortran_order': "
	    "False, 'shape': (%d,), }", n);
	while ((10 + len + 1) % 64 != 0)
		hdr[len++] = ' ';
	hdr[len++] = '\n';
	f = fopen(path, "wb");
	ck_assert(f != NULL);
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc(len & 0xff, f);
	fputc(len >> 8, f);
	fwrite(hdr, 1, (size_t)len, f);
	for (i = 0; i < n; i++) {
		unsigned char b[4] = { v[i] & 0xff, (v[i] >> 8) & 0xff,
		    (v[i] >> 16) & 0xff, (v[i] >> 24) & 0xff };

		fwrite(b, 1, 4, f);
	}
	ck_assert_int_eq(fclose(f), 0);
}

/* One row against 32 keys in tiles of 8, its pages from a table file:
 * a tile's physical pages are the table's entries for its logical
 * pages, one run each; pages that do not divide the tile make every
 * tile span two; the slack is the last page's empty slots; and the
 * counters are those of contiguous K and V. */
START_TEST(test_paged_quantities)
{
	static const int table[] = { 6, 2, 7, 0, 3, 5, 1, 4 };
	char path[64], script[2048];
	const char *prob = "title t\ntq 1\ntk 32\nd 2\nbr 1\nbc 8\n"
	    "input normal\n";

	snprintf(path, sizeof path, "/tmp/check_lesson_table_%ld.npy",
	    (long)getpid());
	write_int32_npy(path, table, 8);
	snprintf(script, sizeof script, "%sgoto end\nkeep flat hbm\n"
	    "expect page-runs 4\nexpect spanning-tiles 0\ngoto tile 0 1\n"
	    "expect tile-runs 1\nblock-table %s\npage-size 8\ngoto tile 0 1\n"
	    "expect pages 4\nexpect page-slack 0\nexpect tile-pages 2\n"
	    "expect tile-runs 1\npage-size 4\ngoto tile 0 1\n"
	    "expect tile-pages 7 0\nexpect tile-runs 2\ngoto end\n"
	    "expect page-runs 8\nexpect spanning-tiles 4\n"
	    "expect hbm - flat 0\npage-size 6\ngoto tile 0 1\n"
	    "expect tile-pages 2 7\ngoto end\nexpect pages 6\n"
	    "expect page-slack 4\nexpect page-runs 8\nexpect spanning-tiles 4\n"
	    "tk 30\npage-size 8\ngoto end\nexpect pages 4\nexpect page-slack 2\n"
	    "expect page-runs 4\n", prob, path);
	runs_clean(script);
	/* The backward reads its tile's pages too. */
	snprintf(script, sizeof script, "%sblock-table %s\npage-size 4\n"
	    "backward\ngoto backward tile 0 3\nexpect tile-pages 1 4\n"
	    "expect tile-runs 2\n", prob, path);
	runs_clean(script);
	unlink(path);
	run_fails("title t\ntq 1\ntk 8\nd 2\ngoto end\nexpect pages 2\n",
	    LESSON_FAILED, "pages: K and V are not paged");
	run_fails("title t\ntq 1\ntk 8\nd 2\npage-size 4\nexpect tile-pages 0\n",
	    LESSON_FAILED, "tile-pages: before the first step there is no tile");
}
END_TEST

/* ---- the fast kernel's arithmetic, the mask's tiles ---- */

START_TEST(test_fast_quantities)
{
	char msg[512];

	/* m is scale times the raw max, exactly; exp2 agrees with exp to a
	 * bit or two; lse converts back with ln 2. */
	run_fails(SEED "expect scale 2\n", LESSON_FAILED, "expected scale 2");
	runs_clean("title t\nq 1 0 ; 0 1 ; 1 1 ; 2 0\n"
	    "k 1 0 ; 0 1 ; 1 1 ; -1 0 ; 2 1 ; 0 -1\nv 1 0 ; 0 1 ; 1 1 ; 2 0 ; "
	    "0 2 ; 1 -1\nbr 2\nbc 2\nfocus row 3\ngoto step 5 phase exp\n"
	    "expect scale 0.7071068\nexpect scale-log2e 1.020139\n"
	    "expect s-raw 4 0\nexpect m-raw 4\nexpect m / m-raw 0.7071068\n"
	    "expect p-exp2 1 0.05910575\nexpect p-exp2[1] - p[1] 0 tol 1e-8\n"
	    "expect alpha-exp2 0.2431167\nexpect alpha-naive 0.2431167\n"
	    "goto end\nexpect lse-exp2 - lse 0 tol 1e-6\n");
	/* An empty row: FlashAttention-2's alpha 0 and lse +inf. */
	runs_clean("title t\ntq 6\ntk 4\nd 2\nbr 3\nbc 2\ncausal\n"
	    "goto step 0 phase rescale\nexpect alpha 1\nexpect alpha-exp2 0\n"
	    "expect alpha-naive nan\nexpect m-raw -inf\ngoto end\n"
	    "expect lse -inf\nexpect lse-exp2 inf\n");
	run_fails(SEED "step\nexpect lse-exp2 1\n", LESSON_FAILED, "lse-exp2 is "
	    "known after the row's finalize");

	/* The causal prefill of 11-causal-kv: 1 to 4 tiles per row block,
	 * 4 of the 10 cut by the mask; a KV cache evens the row blocks. */
	runs_clean("title t\ntq 256\ntk 256\nd 8\nbr 64\nbc 64\ncausal\n"
	    "expect steps 10\nexpect cut-tiles 4\nexpect row-tiles 1\n"
	    "focus row 255\nexpect row-tiles 4\nfocus row 0\ncausal off\n"
	    "expect cut-tiles 0\n");
	runs_clean("title t\ntq 64\ntk 256\nd 8\nbr 16\nbc 16\ncausal\n"
	    "expect row-tiles 13\nfocus row 63\nexpect row-tiles 16\n"
	    "expect cut-tiles 4\n");

	/* error: against the double reference, from the row's finalize. */
	run_fails(SEED "step\nexpect error 0\n", LESSON_FAILED, "error is known "
	    "after the row's finalize");
	runs_clean(SEED "goto end\nexpect error 0 tol 1e-6\nexpect final error 0 "
	    "tol 1e-6\n");
	run_fails(SEED "bug no-rescale\ngoto end\nexpect error 0 tol 1e-3\n",
	    LESSON_FAILED, "expected error 0");
	(void)msg;
}
END_TEST



/* ladder: skipped with the reason without a GPU, never a failure for
 * that unless a GPU is required; with one, every rung that ran agrees
 * with the lowest. */
struct ladder_seen {
	int tables, skips;
	char why[256];
};

static void
seen_ladder(void *ctx, struct lesson_run *run,
    const struct gpu_ladder_rung *rungs, const char *device,
    const char *skipped)
{
	struct ladder_seen *s = ctx;

	(void)run;
	(void)device;
	if (rungs != NULL)
		s->tables++;
	else {
		s->skips++;
		snprintf(s->why, sizeof s->why, "%s", skipped);
	}
}

START_TEST(test_ladder)
{
	static const struct lesson_sink sink = { .ladder = seen_ladder };
	struct ladder_seen seen = { 0, 0, "" };
	struct lesson_lines ls = { 0 };
	struct gpu_ladder_rung rungs[GPU_LADDER_RUNGS];
	struct lesson_run *run;
	struct lesson *l;
	const char *was = getenv("FLASHSTEP_REQUIRE_GPU");
	char *saved = was != NULL ? strdup(was) : NULL;
	int rc, i;

	parse_fails("title t\nladder now\n", "ladder takes nothing after it");
	l = parse_ok("title t\ntq 64\nd 64\nheads 2\ndtype fp16\nladder\n");
	unsetenv("FLASHSTEP_REQUIRE_GPU");
	run = lesson_run_new(l, &sink, &seen, LESSON_RUN_STOP);
	rc = lesson_run_all(run);
	ck_assert_int_eq(seen.tables + seen.skips, 1);
	ck_assert_msg(rc == LESSON_END && run->failures == 0, "the ladder "
	    "failed the lesson: %s", run->failure);
	if (seen.skips)
		ck_assert(seen.why[0] != '\0');
	lesson_run_free(run);

	/* A rehearsal does not start the GPU. */
	seen.tables = seen.skips = 0;
	run = lesson_run_new(l, &sink, &seen, LESSON_RUN_DRY);
	ck_assert_int_eq(lesson_run_all(run), LESSON_END);
	ck_assert_int_eq(seen.tables + seen.skips, 0);
	lesson_run_free(run);

	/* A GPU required and none there: a failure, as compare gpu's. */
	setenv("FLASHSTEP_REQUIRE_GPU", "1", 1);
	seen.tables = seen.skips = 0;
	run = lesson_run_new(l, &sink, &seen, LESSON_RUN_STOP);
	rc = lesson_run_all(run);
	if (gpu_available(NULL, 0, NULL, 0) != GPU_READY)
		ck_assert_msg(rc == LESSON_FAILED && strstr(run->failure,
		    "expected the ladder to run got: ") != NULL, "%s",
		    run->failure);
	lesson_run_free(run);
	if (saved != NULL)
		setenv("FLASHSTEP_REQUIRE_GPU", saved, 1);
	else
		unsetenv("FLASHSTEP_REQUIRE_GPU");
	free(saved);
	lesson_free(l);

	/* The table: a row per rung, skipped ones with their reason. */
	memset(rungs, 0, sizeof rungs);
	for (i = 0; i < GPU_LADDER_RUNGS; i++) {
		rungs[i].kernel = gpu_kernel_find((const char *[]){ "naive",
		    "teaching", "fast", "wgmma" }[i]);
		ck_assert(rungs[i].kernel != NULL);
		rungs[i].change = "what it changes";
		rungs[i].below = i - 1;
	}
	rungs[0].ran = rungs[1].ran = 1;
	rungs[0].ms = 2;
	rungs[1].ms = 0.5;
	rungs[1].speedup = 4;
	rungs[1].tiling.br = rungs[1].tiling.bc = 64;
	snprintf(rungs[2].why, sizeof rungs[2].why, "not this GPU");
	lesson_view_ladder(rungs, "a GPU", NULL, &ls);
	ck_assert_int_eq(ls.n, 2 + GPU_LADDER_RUNGS + GPU_LADDER_RUNGS);
	ck_assert_msg(strstr(ls.line[0], "on a GPU") != NULL, "%s", ls.line[0]);
	ck_assert_msg(strstr(ls.line[3], "4.00x") != NULL, "%s", ls.line[3]);
	ck_assert_msg(strstr(ls.line[4], "skipped: not this GPU") != NULL, "%s",
	    ls.line[4]);
	lesson_lines_clear(&ls);
	lesson_view_ladder(NULL, NULL, "no GPU here", &ls);
	ck_assert_int_eq(ls.n, 1);
	ck_assert_str_eq(ls.line[0], "the kernel ladder was skipped: no GPU here");
	lesson_lines_free(&ls);
}
END_TEST

/* ---- the backward pass and split-KV ---- */

START_TEST(test_timeline_options)
{
	struct lesson *l;

	/* The backward and split options are directives, values checked on
	 * their line; the options that write files are not. */
	l = parse_ok("title t\nbackward\ngrad-bug no-d\nsplits 4\nmerge-order "
	    "tree\npartials olse\nmerge-bug last-max\nheads 4\nkv-heads 2\n"
	    "pack-gqa on\nbackward off\ngrad-output 1 2 ; 3 4\n");
	ck_assert_int_eq(l->ncmds, 12);
	ck_assert_str_eq(l->cmds[11].option->name, "grad-output");
	ck_assert_int_eq(l->cmds[11].rows, 2);
	lesson_free(l);
	parse_fails("title t\ngrad-q dq.npy\n", "unknown directive 'grad-q'");
	parse_fails("title t\nsplits 0\n", "t.lesson:2: splits must be an "
	    "integer from 1 to 65536, not '0'");
	parse_fails("title t\nmerge-order zigzag\n", "merge-order must be ltr, "
	    "tree or reverse");
	parse_fails("title t\ngrad-bug lost\n", "grad-bug must be none, no-d");
	parse_fails("title t\nbackward maybe\n", "backward takes nothing, 'on' "
	    "or 'off'");
	parse_fails("title t\nsplitz 2\n", "did you mean 'splits'?");

	/* What options need of each other is checked when the problem is
	 * built, at the last line that changed it. */
	run_fails("title t\nmerge-order tree\nstep\n", LESSON_ERROR,
	    "t.lesson:2: the problem cannot be built: merge-order applies to "
	    "split runs (give splits 2 or more)");
	run_fails("title t\nbackward\nheads 2\nstep\n", LESSON_ERROR,
	    "t.lesson:3: the problem cannot be built: backward runs one head: "
	    "the backward of grouped heads is not modelled (drop heads)");
	run_fails("title t\ngrad-bug no-d\nstep\n", LESSON_ERROR,
	    "grad-bug needs backward");
	run_fails("title t\ntq 2\ndv 2\ngrad-output 1 2 ; 3 4\nstep\n",
	    LESSON_ERROR, "grad-output needs backward");
	/* Order does not matter; off takes a flag back; the latest wins. */
	run_fails("title t\ngrad-bug no-d\nbackward\nexpect backward-steps 16\n"
	    "backward off\nstep\n", LESSON_ERROR, "t.lesson:5: the problem "
	    "cannot be built: grad-bug needs backward");
	runs_clean("title t\nbackward\nexpect backward-steps 16\n"
	    "backward off\nexpect steps 16\nsplits 2\nmerge-order tree\n"
	    "splits 3\nexpect combine-steps 8\nexpect merges 2\n"
	    "merge-order ltr\nexpect merges 3\n");
	/* heads before kv-heads or after: G divides H either way. */
	runs_clean("title t\nkv-heads 2\nheads 4\ntq 4\ntk 8\nbr 8\n"
	    "expect steps 8\ngoto end\nkeep apart kv-read\npack-gqa\n"
	    "expect steps 4\ngoto end\nexpect kv-read / apart 0.5\n");
	/* An inline dO is the backward's, a row per query. */
	runs_clean("title t\nscores 1 2 ; 3 4\nvalues 1 0 ; 0 1\nbr 1\nbc 2\n"
	    "backward\ngrad-output 0 1 ; 1 0\n"
	    "goto backward tile 0 0 phase dS\nexpect D 0.7310586\n"
	    "expect dS -0.1966119 0.1966119\n");
}
END_TEST

START_TEST(test_timeline_moves)
{
	char msg[512];

	/* 8 x 8 in tiles of 4: 4 forward steps, then 4 backward ones. */
#define BWD "title t\ntq 8\ntk 8\nd 4\nbr 4\nbc 4\nbackward\n"
	runs_clean(BWD "expect steps 8\nexpect forward-steps 4\n"
	    "expect backward-steps 4\ngoto forward end\nexpect step 3\n"
	    "expect phase finalize\nphase\nexpect step 4\nexpect phase load\n"
	    "phase -1\nexpect step 3\nexpect phase finalize\nstep\n"
	    "expect step 4\nexpect phase dK\nstep\nexpect step 5\n"
	    "expect phase write\ngoto end\nexpect step 7\nexpect phase write\n"
	    "goto backward start\nexpect step 4\nexpect phase load\n"
	    "goto backward step 1 phase dS\nexpect step 5\nexpect tile 1 0\n"
	    "goto backward tile 0 1 phase dQ\nexpect step 6\nexpect phase dQ\n"
	    "goto step 6 phase P\nexpect phase P\nlabel here\ngoto start\n"
	    "goto label here\nexpect step 6\nexpect phase P\n"
	    "goto start\nfocus row 5\nstep until row-done\nexpect step 3\n"
	    "step until row\nexpect step 5\nexpect tile 1 0\n"
	    "step until row-done phase dQ\nexpect step 7\nexpect phase dQ\n");
	/* A phase of another segment, a segment the problem lacks. */
	run_fails(BWD "goto step 2 phase dS\n", LESSON_ERROR, "t.lesson:8: step 2 "
	    "is a step of the forward, which has no phase dS (its phases: load, "
	    "scores, max, rescale, exp, update, finalize)");
	run_fails(BWD "goto backward step 4\n", LESSON_ERROR, "the backward has 4 "
	    "steps (0 to 3), no step 4");
	run_fails(BWD "goto combine end\n", LESSON_ERROR, "the problem has no "
	    "combine: give it splits 2 or more");
	run_fails(BWD "goto step 8\n", LESSON_ERROR, "step 8 does not exist: the "
	    "problem has 8 steps (0 to 7: the forward 0-3, the backward 4-7)");
	parse_fails("title t\ngoto combine tile 0 0\n", "the combine merges "
	    "partials, it has no tiles");
	parse_fails("title t\ngoto step 1 phase dX\n", "unknown phase 'dX'");
	parse_fails("title t\nfocus col 1\n", "focus takes 'row R' or 'key C'");
	run_fails(BWD "focus key 8\n", LESSON_ERROR, "focus key 8 does not "
	    "exist: the problem has 8 keys (0 to 7)");
	/* 16 keys in 4 ranges of 2 tiles, merged left to right: 4 merges. */
	runs_clean("title t\ntq 4\ntk 16\nd 4\nbr 4\nbc 2\nsplits 4\n"
	    "expect steps 12\ngoto combine step 0 phase max\nexpect step 8\n"
	    "expect merge 0\nphase 2\nexpect phase update\nphase\n"
	    "expect step 9\nexpect phase load\nstep until row-done\n"
	    "expect step 11\nexpect phase finalize\ngoto end\nexpect step 11\n");
	run_fails("title t\ntk 16\nbc 2\nsplits 4\ngoto combine step 1 phase "
	    "scores\n", LESSON_ERROR, "is a step of the combine, which has no "
	    "phase scores (its phases: load, max, weights, update, finalize)");
	(void)msg;
#undef BWD
}
END_TEST

/* Where each quantity is known, and where it is not. */
START_TEST(test_timeline_quantities)
{
	run_fails("title t\nbackward\nstep\nexpect dS 0\n", LESSON_FAILED,
	    "dS is known in the backward; the lesson stands in the forward");
	run_fails("title t\nbackward\nstep\nexpect D 0\n", LESSON_FAILED,
	    "D is known in the backward; the lesson stands in the forward");
	run_fails("title t\nstep\nexpect dQ 0\n", LESSON_FAILED,
	    "the problem has no backward pass (give it backward)");
	run_fails("title t\nstep\nexpect partial-m 0\n", LESSON_FAILED,
	    "partial-m is known in the combine");
	run_fails("title t\nstep\nexpect split-diff 0\n", LESSON_FAILED,
	    "the problem is not split (give it splits 2 or more)");
	run_fails("title t\nbc 2\nsplits 2\ngoto combine step 0\n"
	    "expect s 0\n", LESSON_FAILED, "s is known in the forward and the "
	    "backward; the lesson stands in the combine");
	run_fails("title t\nbc 2\nsplits 2\ngoto combine step 0 phase load\n"
	    "expect w-a 0\n", LESSON_FAILED, "w-a is known from phase weights "
	    "of a merge");
	run_fails("title t\nbc 2\nsplits 2\ngoto combine step 0\nfocus row 5\n"
	    "expect m-a 0\n", LESSON_FAILED, "belongs to the current merge, "
	    "whose row block (rows 0-3) does not hold row 5");
	run_fails("title t\nbackward\ngoto backward step 0 phase dV\n"
	    "expect dQ-error 0\n", LESSON_FAILED, "dQ-error is known once every "
	    "tile that adds to row 0 is done");
	run_fails("title t\nbackward\ngoto backward step 0 phase P\n"
	    "expect dP 0\n", LESSON_FAILED, "dP is known from phase dP of a "
	    "backward step");
	/* Before the backward every gradient is 0; the forward's counters
	 * hold their whole run past it; the backward's start from the D
	 * pass. */
	runs_clean("title t\nbackward\nexpect dQ 0 0 0 0\nexpect bwd-hbm 0\n"
	    "goto forward end\nkeep fwd hbm\nkeep fwd-flops flops\n"
	    "expect dK-norm 0\ngoto end\nexpect hbm - fwd 0\n"
	    "expect bwd-flops / fwd-flops 2.5\nexpect final dQ-error 0 tol 1e-6\n"
	    "expect dQ-error 0 tol 1e-6\nexpect dK-error 0 tol 1e-6\n"
	    "expect dV-error 0 tol 1e-6\nexpect D - final D 0\n"
	    "expect lse - final lse 0 tol 0\nexpect o[1] - final o[1] 0 tol 0\n");
	/* A split run's backward: forward, combine, backward; past the
	 * combine a row's output is the merged one, and its m is one per
	 * range. */
	runs_clean("title t\ntq 8\ntk 8\nd 4\nbr 4\nbc 2\nsplits 2\nbackward\n"
	    "expect steps 20\nexpect combine-steps 4\nexpect backward-steps 8\n"
	    "goto combine end\nexpect step 11\nphase\nexpect step 12\n"
	    "expect phase load\ngoto end\nexpect error 0 tol 1e-6\n"
	    "expect lse - final lse 0 tol 0\nexpect dQ-error 0 tol 1e-6\n"
	    "expect partial-m[1] - partial-m[0] 1.922407\n");
	run_fails("title t\ntq 8\ntk 8\nd 4\nbr 4\nbc 2\nsplits 2\nbackward\n"
	    "goto end\nexpect m 1\n", LESSON_FAILED, "a split run's forward "
	    "leaves a row one m per key range: read partial-m");
}
END_TEST

/* dQ, dK and dV read anywhere equal what a run from the start had summed
 * there: each row's value after the latest step that changed it. */
START_TEST(test_grads_anywhere)
{
	struct lesson_run *run;
	struct lesson_grad g;
	struct lesson *l;
	struct backward *b;
	struct backward_input in;
	const struct backward_view *v;
	const struct problem *p;
	float *dq, *dk, *dv;	/* (steps + 1) snapshots of all rows */
	char err[256];
	long k, nb, first;
	int ph, r, c, x, nph;

	l = parse_ok("title t\ntq 9\ntk 7\nd 3\ndv 2\nbr 4\nbc 3\ncausal\n"
	    "input spike\nbackward\ngoto end\n");
	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
	ck_assert_int_eq(lesson_run_all(run), LESSON_END);
	p = &run->setup.problem;
	in.o = run->bwd.o;
	in.lse = run->bwd.lse;
	in.m = run->bwd.m;
	in.dout = run->bwd.dout;
	b = backward_new(p, &run->opts.tiling, &in, BWD_BUG_NONE, err, sizeof err);
	ck_assert_msg(b != NULL, "%s", err);
	nb = backward_steps(b);
	first = lesson_run_first(run, TIMELINE_BACKWARD);
	dq = calloc((size_t)(nb + 1) * p->tq * p->d, sizeof *dq);
	dk = calloc((size_t)(nb + 1) * p->tk * p->d, sizeof *dk);
	dv = calloc((size_t)(nb + 1) * p->tk * p->dv, sizeof *dv);
	ck_assert(dq != NULL && dk != NULL && dv != NULL);
	/* snapshot k + 1 holds every row after step k, in order */
	for (k = 0; k < nb; k++) {
		memcpy(dq + (k + 1) * p->tq * p->d, dq + k * p->tq * p->d,
		    (size_t)p->tq * p->d * sizeof *dq);
		memcpy(dk + (k + 1) * p->tk * p->d, dk + k * p->tk * p->d,
		    (size_t)p->tk * p->d * sizeof *dk);
		memcpy(dv + (k + 1) * p->tk * p->dv, dv + k * p->tk * p->dv,
		    (size_t)p->tk * p->dv * sizeof *dv);
		backward_seek(b, k, BWD_PHASE_LAST);
		v = backward_view(b);
		for (r = v->tile.r0; r < v->tile.r1; r++)
			memcpy(dq + ((k + 1) * p->tq + r) * p->d, v->dq_new +
			    (size_t)(r - v->tile.r0) * p->d, (size_t)p->d * sizeof *dq);
		for (c = v->tile.c0; c < v->tile.c1; c++) {
			memcpy(dk + ((k + 1) * p->tk + c) * p->d, v->dk_new +
			    (size_t)(c - v->tile.c0) * p->d, (size_t)p->d * sizeof *dk);
			memcpy(dv + ((k + 1) * p->tk + c) * p->dv, v->dv_new +
			    (size_t)(c - v->tile.c0) * p->dv, (size_t)p->dv * sizeof *dv);
		}
	}
	for (k = 0; k < nb; k++) {
		nph = backward_step_phases(b, k);
		backward_seek(b, k, BWD_PHASE_LAST);
		v = backward_view(b);
		for (ph = 0; ph < nph; ph++) {
			ck_assert(lesson_run_seek(run, &l->cmds[0], first + k, ph) == 0);
			for (r = 0; r < p->tq; r++) {
				int now = ph >= BWD_PHASE_DQ && r >= v->tile.r0 &&
				    r < v->tile.r1;
				const float *want = dq + ((k + now) * p->tq + r) * p->d;
				ck_assert_int_eq(lesson_run_grad(run, LESSON_DQ, r, 0, &g), 0);
				ck_assert_int_eq(g.n, p->d);
				for (x = 0; x < p->d; x++)
					ck_assert_msg(g.x[x] == want[x], "step %ld phase %d "
					    "row %d dQ[%d]: %g, not %g", k, ph, r, x, g.x[x],
					    want[x]);
			}
			for (c = 0; c < p->tk; c++) {
				int in_tile = c >= v->tile.c0 && c < v->tile.c1;
				const float *wk = dk + ((k + (in_tile && ph >=
				    BWD_PHASE_DK)) * p->tk + c) * p->d;
				const float *wv = dv + ((k + (in_tile && ph >=
				    BWD_PHASE_DV)) * p->tk + c) * p->dv;
				ck_assert_int_eq(lesson_run_grad(run, LESSON_DK, c, 0, &g), 0);
				for (x = 0; x < p->d; x++)
					ck_assert_msg(g.x[x] == wk[x], "step %ld phase %d "
					    "key %d dK[%d]: %g, not %g", k, ph, c, x, g.x[x],
					    wk[x]);
				ck_assert_int_eq(lesson_run_grad(run, LESSON_DV, c, 0, &g), 0);
				for (x = 0; x < p->dv; x++)
					ck_assert_msg(g.x[x] == wv[x], "step %ld phase %d "
					    "key %d dV[%d]: %g, not %g", k, ph, c, x, g.x[x],
					    wv[x]);
			}
		}
	}
	/* At the end every row is whole, and final is the same. */
	for (r = 0; r < p->tq; r++) {
		ck_assert_int_eq(lesson_run_grad(run, LESSON_DQ, r, 0, &g), 0);
		ck_assert_int_eq(g.done, 1);
		for (x = 0; x < p->d; x++)
			ck_assert(g.x[x] == dq[(nb * p->tq + r) * p->d + x]);
		ck_assert_int_eq(lesson_run_grad(run, LESSON_DQ, r, 1, &g), 0);
		for (x = 0; x < p->d; x++)
			ck_assert(g.x[x] == dq[(nb * p->tq + r) * p->d + x]);
	}
	ck_assert_int_eq(lesson_run_grad(run, LESSON_DQ, p->tq, 0, &g), -1);
	backward_free(b);
	free(dq);
	free(dk);
	free(dv);
	lesson_run_free(run);
	lesson_free(l);
}
END_TEST

/* The backward's story in numbers: P from lse sums to 1 over a row, D is
 * the sum of P o dP, and each bug shows where it matters and hides where
 * the doc says. */
START_TEST(test_backward_quantities)
{
	/* Two key blocks: rowsum and pdp-sum of each, kept and added. */
	runs_clean("title t\ntq 8\ntk 8\nd 4\nbr 4\nbc 4\nbackward\nfocus row 2\n"
	    "goto backward tile 0 0 phase dS\nkeep p0 rowsum\nkeep d0 pdp-sum\n"
	    "goto backward tile 0 1 phase dS\nexpect rowsum + p0 1 tol 1e-6\n"
	    "keep pdp pdp-sum + d0\nexpect pdp - D 0 tol 1e-6\n"
	    "expect p[0] 0.1 tol 0.1\n");
	/* no-d: dQ wrong where D != 0, bit for bit right where D = 0 (a
	 * query that scores every key alike, against values whose second
	 * column sums to 0, and dO = (0, 1)). */
#define NOD "title t\nq 0 0 ; 1 0\nk 1 0 ; 0 1 ; 1 1 ; -1 0\n" \
	"v 1 1 ; 2 -1 ; 3 1 ; 4 -1\nbr 1\nbc 2\nbackward\n" \
	"grad-output 0 1 ; 1 1\n"
	runs_clean(NOD "goto end\nexpect D 0 tol 0\nexpect dQ-error 0 tol 1e-6\n"
	    "grad-bug no-d\ngoto end\nexpect D 0 tol 0\n"
	    "expect dQ-error 0 tol 1e-6\nfocus row 1\nexpect dQ-error 0.1 "
	    "tol 10\n");
	run_fails(NOD "grad-bug no-d\nfocus row 1\ngoto end\n"
	    "expect dQ-error 0 tol 1e-3\n", LESSON_FAILED, "expected dQ-error 0");
	/* dq-overwrite: only the last key block counts; one block hides it. */
	run_fails("title t\ntq 8\ntk 8\nd 4\nbr 4\nbc 4\nbackward\n"
	    "grad-bug dq-overwrite\ngoto end\nexpect dQ-error 0 tol 1e-4\n",
	    LESSON_FAILED, "expected dQ-error 0");
	runs_clean("title t\ntq 8\ntk 8\nd 4\nbr 4\nbc 8\nbackward\n"
	    "grad-bug dq-overwrite\ngoto end\nexpect dQ-error 0 tol 1e-6\n");
#undef NOD
	/* The counters: 2.5x the forward's FLOPs, standard's backward stores
	 * T x T thrice; bwd-hbm grows as T^2 / Bc, standard's as T^2. */
	runs_clean("title t\ntq 64\ntk 64\nd 8\nbr 16\nbc 16\nbackward\n"
	    "goto end\nexpect bwd-flops / flops 2.5\n"
	    "expect standard-bwd-stored 49152\nexpect bwd-stored 2560\n"
	    "keep b64 bwd-hbm\nkeep s64 standard-bwd-hbm\ntq 128\ntk 128\n"
	    "goto end\nexpect bwd-hbm / b64 3.6 tol 0.5\n"
	    "expect standard-bwd-hbm / s64 3.8 tol 0.3\n");
}
END_TEST

/* The combine: each merge's operands are what the plan says they are,
 * the merged rows are the run's output, the partials are what the
 * forward's ranges ended in, and splitting moves O by rounding alone. */
START_TEST(test_combine_quantities)
{
	struct lesson_run *run;
	struct lesson *l;
	const struct combine_view *v;
	const struct sim_partials *pt;
	const struct sim_view *sv;
	const struct lesson_quantity *q;
	double out[64], prev_m[8];
	char err[256];
	long k, nc, first, f;
	int n, r, x, s;

	l = parse_ok("title t\ntq 6\ntk 20\nd 3\nbr 4\nbc 3\ncausal\n"
	    "input spike\nsplits 3\nfocus row 5\ngoto end\n");
	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
	ck_assert_int_eq(lesson_run_all(run), LESSON_END);
	first = lesson_run_first(run, TIMELINE_COMBINE);
	nc = combine_steps(run->bwd.comb);
	ck_assert_int_eq(nc, 2 * 3);
	/* ltr: the first operand of merge n + 1 is merge n's result */
	q = lesson_quantity_find("m-a");
	for (k = 0; k < nc; k++) {
		ck_assert(lesson_run_seek(run, &l->cmds[0], first + k, -1) == 0);
		v = lesson_run_combine_view(run);
		for (r = v->r0; r < v->r1; r++) {
			run->focus = r;
			ck_assert_int_eq(lesson_quantity_read(run, q, 0, out, 64, &n,
			    err, sizeof err), 0);
			if (v->merge > 0)
				ck_assert_msg(out[0] == prev_m[r - v->r0] || (isinf(out[0])
				    && isinf(prev_m[r - v->r0])), "merge %ld row %d", k, r);
			prev_m[r - v->r0] = v->m[r - v->r0];
			if (v->last) {
				const float *o = run->bwd.o + (size_t)r * v->dv;
				for (x = 0; x < v->dv; x++)
					ck_assert(v->o[(size_t)(r - v->r0) * v->dv + x] == o[x]);
			}
		}
	}
	/* each partial is the forward's state at its range's last tile */
	pt = sim_partials(run->setup.sim);
	for (f = 0; f < sim_steps(run->setup.sim); f++) {
		ck_assert(lesson_run_seek(run, &l->cmds[0], f, -1) == 0);
		sv = lesson_run_view(run);
		if (!sv->tile.last_in_split)
			continue;
		s = sv->tile.split;
		for (r = sv->tile.r0; r < sv->tile.r1; r++) {
			ck_assert(pt->m[(size_t)r * 3 + s] == sv->m_new[r - sv->tile.r0]);
			ck_assert(pt->l[(size_t)r * 3 + s] == sv->l_new[r - sv->tile.r0]);
		}
	}
	lesson_run_free(run);
	lesson_free(l);

	/* The merged output is exact, and within the bound of the unsplit. */
	runs_clean("title t\ntq 8\ntk 64\nd 8\nbr 8\nbc 4\nsplits 5\n"
	    "goto end\nexpect error 0 tol 1e-6\nexpect split-diff 0 tol 1e-6\n"
	    "keep bound split-bound\nexpect split-diff - bound -1 tol 1\n"
	    "expect final partial-m[0] 0.5 tol 10\n");
	/* A merge bug moves O beyond what rounding allows. */
	run_fails("title t\ntq 8\ntk 64\nd 8\nbr 8\nbc 4\nsplits 5\n"
	    "merge-order reverse\nmerge-bug no-rescale-one\ngoto end\n"
	    "keep bound split-bound\n"
	    "expect split-diff - bound -1 tol 1\n", LESSON_FAILED,
	    "expected split-diff - bound -1");
	/* ltr and tree give the same bits up to 3 partials. */
	runs_clean("title t\ntq 8\ntk 48\nd 8\nbr 8\nbc 4\nsplits 3\n"
	    "merge-order tree\ngoto end\n"
	    "keep t3 final o[0]\nmerge-order ltr\nexpect final o[0] - t3 0 tol 0\n");
	/* What splitting buys: runs and busy SMs at one row block. */
	runs_clean("title t\ntq 1\ntk 4096\nd 8\nbr 1\nbc 64\nexpect runs 1\n"
	    "expect sms 132\nexpect busy 0.7575758\nsplits 16\nexpect runs 16\n"
	    "expect waves 1\nexpect longest 4\nexpect span 4\n"
	    "expect busy 12.12121 tol 1e-4\n");
}
END_TEST

/* The frames of --plain show the backward's and the combine's numbers. */
START_TEST(test_timeline_frames)
{
	struct lesson_run *run;
	struct lesson_lines ls = { 0 };
	struct lesson *l;
	char *all;
	size_t len = 0;
	int i;

	l = parse_ok("title t\ntq 8\ntk 8\nd 4\nbr 4\nbc 4\nbackward\n"
	    "goto backward step 1 phase dS\n");
	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
	ck_assert_int_eq(lesson_run_all(run), LESSON_END);
	lesson_view_state(run, &ls);
	for (i = 0; i < ls.n; i++)
		len += strlen(ls.line[i]) + 1;
	all = calloc(len + 1, 1);
	for (i = 0; i < ls.n; i++) {
		strcat(all, ls.line[i]);
		strcat(all, "\n");
	}
	ck_assert_msg(strstr(all, "backward step 2 of 4 (step 6 of 8), after "
	    "phase dS\ntile (1, 0): rows 4-7, keys 0-3\n") != NULL, "%s", all);
	ck_assert_msg(strstr(all, "tiles   # o\n        @ o\n") != NULL, "%s", all);
	ck_assert_msg(strstr(all, "dP[4]") != NULL && strstr(all, "dS[4]") != NULL,
	    "%s", all);
	ck_assert_msg(strstr(all, "dQ[") == NULL && strstr(all, "(as backward "
	    "step 1 left it)") != NULL && strstr(all, "row 0: dQ [0 0 0 0]") ==
	    NULL, "%s", all);
	ck_assert_msg(strstr(all, " row 4  lse ") != NULL, "%s", all);
	ck_assert_msg(strstr(all, "backward so far: HBM read ") != NULL, "%s", all);
	free(all);
	lesson_lines_free(&ls);
	lesson_run_free(run);
	lesson_free(l);

	l = parse_ok("title t\ntq 4\ntk 16\nd 4\nbr 4\nbc 2\nsplits 4\n"
	    "goto combine step 1 phase weights\n");
	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
	ck_assert_int_eq(lesson_run_all(run), LESSON_END);
	lesson_view_state(run, &ls);
	ck_assert_str_eq(ls.line[0], "combine step 2 of 4 (step 10 of 12), after "
	    "phase weights");
	ck_assert_str_eq(ls.line[1], "merge 2 of 4 of row block 0 (rows 0-3): "
	    "slot 0 = slot 0 + partial 1");
	ck_assert(strncmp(ls.line[3], ">row 0  a: m ", 13) == 0);
	ck_assert(strstr(ls.line[5], "w_a ") != NULL);
	lesson_lines_free(&ls);
	lesson_run_free(run);
	lesson_free(l);
}
END_TEST

/* The keep bits a frame prints under P (forward) and before dP
 * (backward), row by row: bits[r][c] of a 4 x 4 tile at rows r0.. */
static void
frame_keep_bits(struct lesson_run *run, int bits[4][4])
{
	struct lesson_lines ls = { 0 };
	int i, r = 0, c;
	const char *at;

	lesson_view_state(run, &ls);
	for (i = 0; i < ls.n; i++) {
		if (strncmp(ls.line[i], "keep[", 5) != 0 &&
		    !(r > 0 && r < 4 && strncmp(ls.line[i], " [", 2) == 0))
			continue;
		at = ls.line[i] + 8;
		for (c = 0; c < 4; c++)
			bits[r][c] = (int)strtol(at, (char **)&at, 10);
		r++;
	}
	ck_assert_int_eq(r, 4);
	lesson_lines_free(&ls);
}

/* The keep bits of the first tile's frame after `goto WHERE`, on an 8 x 8
 * problem with dropout whose backward draws with the next offset, and
 * the forward's mask rule. */
static void
dropout_frame(const char *where, int bits[4][4], struct mask_rule *m)
{
	struct lesson_run *run;
	struct lesson *l;
	char text[256];

	snprintf(text, sizeof text, "title t\ntq 8\ntk 8\nd 4\nbr 4\nbc 4\n"
	    "dropout 0.5\ndropout-seed 3\nbackward\ngrad-bug dropout-offset\n"
	    "goto %s\n", where);
	l = parse_ok(text);
	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
	ck_assert_int_eq(lesson_run_all(run), LESSON_END);
	frame_keep_bits(run, bits);
	*m = problem_mask(&run->setup.problem, 0);
	lesson_run_free(run);
	lesson_free(l);
}

START_TEST(test_dropout_frames)
{
	struct mask_rule m;
	int fwd[4][4], bwd[4][4], r, c, differ = 0;

	dropout_frame("forward step 0 phase update", fwd, &m);
	for (r = 0; r < 4; r++)
		for (c = 0; c < 4; c++)
			ck_assert_int_eq(fwd[r][c], mask_rule_keep(m, r, c));

	/* The backward's frame shows the bits it drew: with the offset bug,
	 * not the forward's. */
	dropout_frame("backward step 0 phase dP", bwd, &m);
	for (r = 0; r < 4; r++)
		for (c = 0; c < 4; c++) {
			ck_assert_int_eq(bwd[r][c], mask_rule_keep_at(m,
			    m.drop_offset + 1, r, c));
			differ += bwd[r][c] != fwd[r][c];
		}
	ck_assert_int_gt(differ, 0);
}
END_TEST

/* ---- the presenter's notes, elsewhere ---- */

/* A page of two notes, slide 2 of 5, 65 s into the lesson. */
static int
show_page(struct lesson_notes *nt, int slide, int n, char *err, size_t len)
{
	static const char *notes[2] = { "first note", "second" };
	struct lesson_notes_page pg = { .title = "T", .slide = slide,
	    .slides = 5, .next = "The next slide's words.", .notes = notes,
	    .n = n, .lesson_s = 65, .slide_s = 0, .prev_s = 12 };

	return lesson_notes_show(nt, &pg, err, len);
}

static void
read_back(const char *path, char *text, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert(f != NULL);
	n = fread(text, 1, len - 1, f);
	text[n] = '\0';
	fclose(f);
}

START_TEST(test_notes)
{
	struct lesson_notes *nt;
	char dir[64], path[128], link_path[128], text[4096], err[512];
	struct stat st;
	mode_t mask;
	int fds[2];

	snprintf(dir, sizeof dir, "/tmp/check_lesson_n%ld", (long)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof path, "%s/notes.txt", dir);

	/* A file: written whole at each slide, its mode kept; beside the
	 * notes, the next slide's words and the time. */
	write_file(path, "old");
	ck_assert_int_eq(chmod(path, 0640), 0);
	nt = lesson_notes_open(path, err, sizeof err);
	ck_assert_msg(nt != NULL, "%s", err);
	ck_assert_int_eq(show_page(nt, 2, 2, err, sizeof err), 0);
	lesson_notes_close(nt);
	read_back(path, text, sizeof text);
	ck_assert_str_eq(text, "T\nslide 2 of 5: speaker notes\nnext: The next "
	    "slide's words.\ntime: 1:05 in the lesson when this slide began (the "
	    "slide before took 0:12)\n\nfirst note\n\nsecond\n\n");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0640);
	unlink(path);

	/* A new file honours the umask (it was 0644 whatever the umask). */
	mask = umask(077);
	nt = lesson_notes_open(path, err, sizeof err);
	ck_assert_msg(nt != NULL, "%s", err);
	ck_assert_int_eq(show_page(nt, 1, 0, err, sizeof err), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	/* and the next slide keeps what the first one made */
	ck_assert_int_eq(chmod(path, 0604), 0);
	ck_assert_int_eq(show_page(nt, 2, 0, err, sizeof err), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0604);
	lesson_notes_close(nt);
	umask(mask);

	/* Replacing another's file keeps its owner, where we may set it
	 * (as root): a new file renamed over it was ours. */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(path, 65534, 65534), 0);
		nt = lesson_notes_open(path, err, sizeof err);
		ck_assert_msg(nt != NULL, "%s", err);
		ck_assert_int_eq(show_page(nt, 1, 0, err, sizeof err), 0);
		lesson_notes_close(nt);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_int_eq(st.st_uid, 65534);
		ck_assert_int_eq(st.st_gid, 65534);
		ck_assert_int_eq(st.st_mode & 0777, 0604);
	}

	/* A link: what it points to is replaced, the link stays a link. */
	snprintf(link_path, sizeof link_path, "%s/link", dir);
	ck_assert_int_eq(symlink(path, link_path), 0);
	nt = lesson_notes_open(link_path, err, sizeof err);
	ck_assert_msg(nt != NULL, "%s", err);
	ck_assert_int_eq(show_page(nt, 3, 0, err, sizeof err), 0);
	lesson_notes_close(nt);
	ck_assert_int_eq(lstat(link_path, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	read_back(path, text, sizeof text);
	ck_assert(strstr(text, "slide 3 of 5") != NULL);
	ck_assert(strstr(text, "(no notes for this slide)") != NULL);
	unlink(link_path);

	/* A reader that goes away stops the notes, once, and nothing else:
	 * the write fails with EPIPE (the runner ignores SIGPIPE). */
	snprintf(link_path, sizeof link_path, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(link_path, 0600), 0);
	fds[0] = open(link_path, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(fds[0], 0);
	nt = lesson_notes_open(link_path, err, sizeof err);
	ck_assert_msg(nt != NULL, "%s", err);
	ck_assert_int_eq(show_page(nt, 1, 2, err, sizeof err), 0);
	close(fds[0]);
	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(show_page(nt, 2, 2, err, sizeof err), 1);
	ck_assert_msg(strstr(err, "fifo: notes reader gone; the lesson goes on "
	    "without notes") != NULL, "%s", err);
	ck_assert(lesson_notes_stopped(nt));
	err[0] = '\0';
	ck_assert_int_eq(show_page(nt, 3, 2, err, sizeof err), 0);
	ck_assert_int_eq(lesson_notes_tick(nt, 70, 5, err, sizeof err), 0);
	ck_assert_str_eq(err, "");
	signal(SIGPIPE, SIG_DFL);
	lesson_notes_close(nt);
	unlink(link_path);
	/* A file that cannot be replaced stops them too. */
	nt = lesson_notes_open(path, err, sizeof err);
	ck_assert_msg(nt != NULL, "%s", err);
	ck_assert_int_eq(chmod(dir, 0500), 0);
	if (access(dir, W_OK) != 0) {	/* root writes anyway */
		ck_assert_int_eq(show_page(nt, 1, 0, err, sizeof err), 1);
		ck_assert_msg(strstr(err, "the lesson goes on without notes") !=
		    NULL, "%s", err);
	}
	ck_assert_int_eq(chmod(dir, 0700), 0);
	lesson_notes_close(nt);

	/* What cannot take notes is refused, and left as it was. */
	ck_assert_ptr_null(lesson_notes_open(dir, err, sizeof err));
	ck_assert(strstr(err, ": a directory; --notes-to takes a terminal") !=
	    NULL);
	snprintf(link_path, sizeof link_path, "%s/link", dir);
	ck_assert_int_eq(symlink("/nonexistent/x", link_path), 0);
	ck_assert_ptr_null(lesson_notes_open(link_path, err, sizeof err));
	ck_assert(strstr(err, "a symbolic link to nothing") != NULL);
	ck_assert_int_eq(lstat(link_path, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	unlink(link_path);
	snprintf(link_path, sizeof link_path, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(link_path, 0600), 0);
	ck_assert_ptr_null(lesson_notes_open(link_path, err, sizeof err));
	ck_assert(strstr(err, "no one reads this FIFO yet") != NULL);
	ck_assert_int_eq(lstat(link_path, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	unlink(link_path);
	ck_assert_ptr_null(lesson_notes_open("/dev/null", err, sizeof err));
	ck_assert(strstr(err, "/dev/null: a device that is not a terminal") !=
	    NULL);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* The presenter's heading of a slide: its first sentence, {...} as "…",
 * cut at a word. */
START_TEST(test_slide_heading)
{
	struct lesson *l = parse_ok(SEED "say The max is {m 2}. More text.\n"
	    "pause\nstep\nsay A rather long sentence that goes on and on past "
	    "the width\npause\npause\nask Which one?\nchoice a\nchoice b\n"
	    "answer a\n");
	char buf[160];

	ck_assert_int_eq(lesson_slides_heading(l, 1, 60, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "The max is \xe2\x80\xa6.");
	ck_assert_int_eq(lesson_slides_heading(l, 2, 30, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "A rather long sentence that\xe2\x80\xa6");
	ck_assert_int_eq(lesson_slides_heading(l, 3, 60, buf, sizeof buf), -1);
	ck_assert_int_eq(lesson_slides_heading(l, 4, 60, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "Which one?");
	ck_assert_int_eq(lesson_slides_heading(l, 5, 60, buf, sizeof buf), -1);
	lesson_free(l);
}
END_TEST

/* ---- the handout ---- */

START_TEST(test_handout)
{
	static char out[65536];
	char err[512];
	const char *answers;

	ck_assert_int_eq(write_doc(SEED "say A *star* and a_b.\nnote psst\nstep\n"
	    "pause\nask Which *one*?\nchoice the first\nchoice the second\n"
	    "answer b Because it is.\npause\nask How much?\nnumber 1002\n"
	    "answer The max.\npause\ngoto end\nexpect m 1002\npause\n", 0, 1, 1,
	    out, sizeof out, err), 0);
	ck_assert(strncmp(out, "# t\n", 4) == 0);
	ck_assert(strstr(out, "A \\*star\\* and a\\_b.") != NULL);
	ck_assert(strstr(out, "psst") == NULL);
	/* frames as code blocks, one per slide's end */
	ck_assert(strstr(out, "```text\n[slide 1 of 4] step 1 of 2, after phase "
	    "update\ntile (0, 0)") != NULL);
	ck_assert(strstr(out, "[slide 4 of 4]") != NULL);
	ck_assert(strstr(out, "**Q1.** Which \\*one\\*?\n\n- a) the first\n"
	    "- b) the second\n") != NULL);
	ck_assert(strstr(out, "**Q2.** How much?\n\nYour answer: ____") != NULL);
	/* the answers, after everything else */
	answers = strstr(out, "## Answers\n");
	ck_assert_ptr_nonnull(answers);
	ck_assert(strstr(out, "Because it is.") > answers);
	ck_assert(strstr(out, "The max.") > answers);
	ck_assert(strstr(answers, "**Q1.** b) the second -- Because it is.") !=
	    NULL);
	ck_assert(strstr(answers, "**Q2.** 1002 (answers within 0.5 count) -- "
	    "The max.") != NULL);

	/* A worksheet: no answers at all. */
	ck_assert_int_eq(write_doc(SEED "step\npause\nask Which?\nchoice x\n"
	    "choice y\nanswer b Because.\npause\n", 1, 1, 0, out, sizeof out, err),
	    0);
	ck_assert(strstr(out, "Answers") == NULL);
	ck_assert(strstr(out, "Because.") == NULL);
	ck_assert(strstr(out, "the answer is at the end") == NULL);
}
END_TEST

/* ---- finding lessons ---- */

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert(f != NULL);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_path)
{
	struct lesson_entry *list;
	char dir[64], dir2[64], p[128], err[512], *found;
	int n, i;

	snprintf(dir, sizeof dir, "/tmp/check_lesson_a%ld", (long)getpid());
	snprintf(dir2, sizeof dir2, "/tmp/check_lesson_b%ld", (long)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(mkdir(dir2, 0700), 0);
	snprintf(p, sizeof p, "%s/80-alpha.lesson", dir);
	write_file(p, "# x\ntitle  Alpha lesson \nsay a\n");
	snprintf(p, sizeof p, "%s/81-beta.lesson", dir);
	write_file(p, "title Beta\n");
	snprintf(p, sizeof p, "%s/80-alpha.lesson", dir2);
	write_file(p, "title Hidden\n");
	snprintf(p, sizeof p, "%s/82-gamma.lesson", dir2);
	write_file(p, "title Gamma\n");
	snprintf(p, sizeof p, "%s:%s", dir, dir2);
	setenv("FLASHSTEP_LESSONS", p, 1);

	found = lesson_path_find("81-beta", NULL, err, sizeof err);
	ck_assert_msg(found != NULL, "%s", err);
	ck_assert(strstr(found, "/81-beta.lesson") != NULL);
	free(found);
	found = lesson_path_find("82", NULL, err, sizeof err);	/* a prefix */
	ck_assert_msg(found != NULL, "%s", err);
	ck_assert(strstr(found, "82-gamma.lesson") != NULL);
	free(found);
	found = lesson_path_find("8", NULL, err, sizeof err);
	ck_assert_ptr_null(found);
	ck_assert(strstr(err, "lesson name '8' is ambiguous") != NULL);
	found = lesson_path_find("nothing-like-it", NULL, err, sizeof err);
	ck_assert_ptr_null(found);
	ck_assert(strstr(err, "no lesson named 'nothing-like-it' (looked in ")
	    != NULL);
	ck_assert(strstr(err, dir) != NULL);
	found = lesson_path_find("./no/such.lesson", NULL, err, sizeof err);
	ck_assert_ptr_null(found);
	ck_assert(strstr(err, "no such lesson file") != NULL);

	ck_assert_int_eq(lesson_path_list(&list, &n, err, sizeof err), 0);
	/* Sorted by name, the first folder's 80-alpha hiding the second's;
	 * the installed and source lessons may follow. */
	for (i = 0; i < n && strcmp(list[i].name, "80-alpha") != 0; i++)
		;
	ck_assert_int_le(i + 3, n);
	ck_assert_str_eq(list[i].title, "Alpha lesson");
	ck_assert_str_eq(list[i + 1].name, "81-beta");
	ck_assert_str_eq(list[i + 2].name, "82-gamma");
	ck_assert_str_eq(list[i + 2].title, "Gamma");
	for (i = 1; i < n; i++)
		ck_assert(strcmp(list[i - 1].name, list[i].name) < 0);
	lesson_path_list_free(list, n);

	unsetenv("FLASHSTEP_LESSONS");
	snprintf(p, sizeof p, "%s/80-alpha.lesson", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/81-beta.lesson", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/80-alpha.lesson", dir2);
	unlink(p);
	snprintf(p, sizeof p, "%s/82-gamma.lesson", dir2);
	unlink(p);
	rmdir(dir);
	rmdir(dir2);
}
END_TEST

/* name with man's "\-" for each '-'. */
static void
man_escape(const char *name, char *out, size_t len)
{
	size_t j = 0;

	for (; *name != '\0' && j + 3 < len; name++) {
		if (*name == '-')
			out[j++] = '\\';
		out[j++] = *name;
	}
	out[j] = '\0';
}

/* The man page documents every directive and every quantity. */
START_TEST(test_man_page)
{
	const struct lesson_directive *d;
	const struct lesson_quantity *q;
	char path[1024], *text, name[64], want[80], *script;
	const char *top = getenv("top_srcdir"), *ex, *end, *p;
	FILE *f;
	long n;
	int i;

	snprintf(path, sizeof path, "%s/doc/flashstep-lesson.5", top ? top :
	    LESSONS_SRCDIR "/..");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	text = calloc(1, 1 << 17);
	ck_assert(text != NULL);
	n = (long)fread(text, 1, (1 << 17) - 1, f);
	fclose(f);
	ck_assert_int_gt(n, 1000);
	for (i = 0; (d = lesson_directive_at(i)) != NULL; i++) {
		man_escape(d->name, name, sizeof name);
		ck_assert_msg(strstr(text, name) != NULL, "the man page lacks "
		    "directive '%s'", d->name);
	}
	/* Each quantity as a bold word of the QUANTITIES list. */
	for (q = lesson_quantities(); q->name != NULL; q++) {
		man_escape(q->name, name, sizeof name);
		snprintf(want, sizeof want, "\n.B %s\n", name);
		if (strstr(text, want) != NULL)
			continue;
		snprintf(want, sizeof want, "\n.BR %s ", name);
		if (strstr(text, want) != NULL)
			continue;
		snprintf(want, sizeof want, "\" %s \"", name);
		if (strstr(text, want) != NULL)
			continue;
		snprintf(want, sizeof want, "\" %s\n", name);
		ck_assert_msg(strstr(text, want) != NULL, "the man page lacks "
		    "quantity '%s'", q->name);
	}
	/* Each example script holds: its lines between .nf and .fi after
	 * .SH EXAMPLE, with \- read as -. */
	for (ex = strstr(text, "\n.SH EXAMPLE\n"), i = 0; ex != NULL &&
	    (ex = strstr(ex, "\n.nf\n")) != NULL; i++) {
		ex += 5;
		end = strstr(ex, "\n.fi\n");
		ck_assert(end != NULL);
		script = calloc((size_t)(end - ex) + 2, 1);
		ck_assert(script != NULL);
		for (n = 0, p = ex; p < end; p++)
			if (!(p[0] == '\\' && p[1] == '-'))
				script[n++] = *p;
		script[n] = '\n';
		runs_clean(script);
		free(script);
	}
	ck_assert_int_ge(i, 3);
	free(text);
}
END_TEST

/* ---- what --check proves of what a slide shows ---- */

/* A quoted value is what the view shows where its slide ends. */
START_TEST(test_check_quotes_shown)
{
	char msg[512];

	/* planted: the slide quotes step 1's m, then moves to step 2 */
	check_fails(SEED "step\nsay m is {m 2}.\nstep\npause\n",
	    "t.lesson:7: {m} quotes 2, but the slide moves on before its pause");
	/* the same slide ended where it quotes holds */
	ck_assert_int_eq(check_script(SEED "step\nsay m is {m 2}.\npause\nstep\n"
	    "pause\n", msg, sizeof msg), 0);
	/* a value that does not change as the slide moves on is still shown */
	ck_assert_int_eq(check_script(SEED "step\nsay {steps 2} steps.\nstep\n"
	    "pause\n", msg, sizeof msg), 0);
	/* a kept value is a number remembered for a comparison */
	ck_assert_msg(check_script(SEED "goto end\nkeep h2 hbm\nbc 1\ngoto end\n"
	    "say {hbm / h2} as many bytes as the {h2} before.\npause\n", msg,
	    sizeof msg) == 0, "%s", msg);
	/* planted: row 0's output quoted, then the frame shows row 1 alone */
	check_fails("title t\nscores 1 2 ; 3 4\nvalues 1 ; 2\nbr 1\nbc 2\n"
	    "goto end\nfocus row 0\nsay o = {o}.\nfocus row 1\npause\n",
	    "{o} quotes row 0, but where the slide ends the view shows row 1");
	/* planted: a problem changed after the last build, never shown */
	check_fails(SEED "step\nsay m = {m 2}.\nbc 1\n",
	    "t.lesson:8: the problem changed here, but the slide ends before");
}
END_TEST

/* A question's own words, and numbers read as tokens with their units. */
START_TEST(test_check_answer_tokens)
{
	char msg[512];

	/* planted: the ask itself holds its answer */
	check_fails(SEED "step\npause\nask m rises to 1002 at the next tile. "
	    "What is m then?\nnumber 1002 tol 0.5\nanswer x\npause\nstep\n"
	    "expect m 1002\n", "Q1's answer (1002) is on its own slide");
	/* "4 FLOPs" does not answer "how many times" ... */
	ck_assert_int_eq(check_script(SEED "step\nsay It did 4 FLOPs.\npause\n"
	    "say The next tile does 4 FLOPs more.\nask How many times the "
	    "first tile's FLOPs are done after both?\nnumber 2\nanswer x\npause\n"
	    "step\nexpect flops / flops 1\nexpect steps 2\n", msg, sizeof msg), 0);
	/* ... but "4 times" does (planted, on the question's slide) */
	check_fails(SEED "step\npause\nsay Four tiles of this size are 4 times "
	    "the work.\nask How many times the work of one tile?\nnumber 4\n"
	    "answer x\npause\nexpect steps * steps 4\n",
	    "Q1's answer (4) is on its own slide");
	/* the 16 of fp16 or 16x16, the 2 of 2^-11, are no numbers of their own */
	ck_assert_int_eq(check_script(SEED "step\npause\nsay fp16 and a 16x16 "
	    "grid, 2^-11.\nask How many keys has the row?\nnumber 16\nanswer x\n"
	    "pause\ntk 16\nnew-problem\nscores 1 2 3 4 5 6 7 8 9 10 11 12 13 14 "
	    "15 16\nvalues 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\nbc 4\nbr 1\n"
	    "goto end\nexpect steps * steps 16\n", msg, sizeof msg), 0);
	msg[0] = '\0';
}
END_TEST

/* A worksheet holds no value that answers one of its questions. */
START_TEST(test_check_worksheet)
{
	char out[16384], err[512];

	/* planted: slide 1 tells what slide 2 asks */
	check_fails(SEED "step\nstep\nsay The max ends at 1002.\npause\ngoto "
	    "start\nask What is m after both tiles?\nnumber 1002 tol 0.5\n"
	    "answer x\npause\ngoto end\nexpect m 1002\n",
	    "Q1's answer (1002) is in the worksheet before the question");
	/* told after the question, it is withheld from the worksheet only */
	ck_assert_int_eq(write_doc(GOOD_Q, 0, 0, 0, out, sizeof out, err), 0);
	ck_assert_msg(strstr(out, "m = ....") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "1002.") == NULL || strstr(out, "1002.") <
	    strstr(out, "Q1."), "%s", out);
	ck_assert_int_eq(write_doc(GOOD_Q, 0, 0, 1, out, sizeof out, err), 0);
	ck_assert_msg(strstr(out, "m = 1002.") != NULL, "%s", out);
}
END_TEST

/* Ask before telling; length and position of the right choice. */
START_TEST(test_check_course_rules)
{
	const struct lesson *ls[2];
	struct lesson *a, *b;
	char err[512];

	/* planted: the narration says the right choice before it is asked */
	check_fails(SEED "say Only the tile with the largest score counts.\n"
	    "pause\nask What counts?\nchoice every tile, rescaled\nchoice only "
	    "the tile with the largest score\nanswer b\npause\n",
	    "the right choice's 'tile largest score' was said at line 6");
	/* planted: the right choice is the longest in both of two lessons'
	 * questions, and always b */
	a = parse_ok("title a\nask q?\nchoice no\nchoice yes, and at length\n"
	    "choice maybe\nanswer b\n");
	b = parse_ok("title b\nask q?\nchoice no\nchoice yes, and at length\n"
	    "choice maybe\nanswer b\n");
	ls[0] = a;
	ls[1] = b;
	ck_assert_int_eq(lesson_lint_course(ls, 2, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "the right choice is the longest in 2 of the "
	    "2") != NULL, "%s", err);
	lesson_free(b);
	/* same lengths, the right letter still b both times */
	b = parse_ok("title b\nask q?\nchoice no, a long one\nchoice yes\n"
	    "choice maybe\nanswer b\n");
	ls[1] = b;
	ck_assert_int_eq(lesson_lint_course(ls, 2, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "'b' is the right letter in 2 of the 2 "
	    "questions of 3 choices") != NULL, "%s", err);
	lesson_free(b);
	b = parse_ok("title b\nask q?\nchoice no, a long one\nchoice yes\n"
	    "choice maybe\nanswer c\n");
	ls[1] = b;
	ck_assert_int_eq(lesson_lint_course(ls, 2, err, sizeof err), 0);
	lesson_free(a);
	lesson_free(b);
}
END_TEST

/* --check of a folder, or several lessons: each said, then the course. */
START_TEST(test_check_folder)
{
	char dir[64], p[128], *names[2], *text = NULL;
	size_t size = 0;
	FILE *f;

	snprintf(dir, sizeof dir, "/tmp/check_lesson_f%ld", (long)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(p, sizeof p, "%s/01-good.lesson", dir);
	write_file(p, SEED "step\nsay m = {m 2}.\npause\n");
	snprintf(p, sizeof p, "%s/02-bad.lesson", dir);
	write_file(p, SEED "step\nsay m = {m 3}.\npause\n");
	names[0] = dir;
	f = open_memstream(&text, &size);
	ck_assert(f != NULL);
	ck_assert_int_eq(lesson_check_all(names, 1, f), 1);
	fclose(f);
	ck_assert_msg(strstr(text, "02-bad.lesson:7: in the narration, expected "
	    "m 3") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "01-good") == NULL, "%s", text);
	free(text);
	/* the good one alone, by file, holds; a name that is none is -1 */
	snprintf(p, sizeof p, "%s/01-good.lesson", dir);
	names[0] = p;
	names[1] = "/nonexistent/99-none.lesson";
	f = open_memstream(&text, &size);
	ck_assert_int_eq(lesson_check_all(names, 1, f), 0);
	ck_assert_int_eq(lesson_check_all(names, 2, f), -1);
	fclose(f);
	free(text);
	/* planted: two lessons that hold alone, but not as a course */
	snprintf(p, sizeof p, "%s/02-bad.lesson", dir);
	write_file(p, SEED "ask q?\nchoice no\nchoice yes, and at length\n"
	    "choice maybe\nanswer b\n");
	snprintf(p, sizeof p, "%s/01-good.lesson", dir);
	write_file(p, SEED "ask q?\nchoice no\nchoice yes, and at length\n"
	    "choice maybe\nanswer b\n");
	names[0] = dir;
	f = open_memstream(&text, &size);
	ck_assert_int_eq(lesson_check_all(names, 1, f), 1);
	fclose(f);
	ck_assert_msg(strstr(text, "the course (2 lessons): the right choice is "
	    "the longest in 2") != NULL, "%s", text);
	free(text);
	unlink(p);
	snprintf(p, sizeof p, "%s/02-bad.lesson", dir);
	unlink(p);
	rmdir(dir);
}
END_TEST

/* Several heads: the frame names the one it shows. */
START_TEST(test_check_heads_named)
{
	struct lesson *l = parse_ok("title t\ntq 4\ntk 4\nd 2\nbr 2\nbc 2\n"
	    "heads 4\nkv-heads 2\nfocus row 13\ngoto end\npause\n");
	struct lesson_run *run = lesson_run_new(l, NULL, NULL, 0);
	struct lesson_lines ls = { 0 };
	char why[200];
	int i, found = 0;

	ck_assert(run != NULL);
	ck_assert_int_eq(lesson_run_next(run), LESSON_PAUSED);
	ck_assert_int_eq(lesson_view_source(run, why, sizeof why),
	    LESSON_VIEW_FRAME);
	ck_assert_msg(strstr(why, "head 3 of 4 (kv head 1 of 2)") != NULL, "%s",
	    why);
	lesson_view_state(run, &ls);
	for (i = 0; i < ls.n; i++)
		found |= strstr(ls.line[i], "head 3 of 4 (kv head 1 of 2), the head's "
		    "row 1 of 4 (focus row 13)") != NULL;
	ck_assert(found);
	lesson_lines_free(&ls);
	lesson_run_free(run);
	lesson_free(l);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("lesson");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_line_errors);
	tcase_add_test(tc, test_distance);
	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_title_builds_on);
	tcase_add_test(tc, test_narration);
	tcase_add_test(tc, test_questions);
	tcase_add_test(tc, test_moves);
	tcase_add_test(tc, test_goto_label);
	tcase_add_test(tc, test_expect_parse);
	tcase_add_test(tc, test_compare_parse);
	tcase_add_test(tc, test_show_parse);
	tcase_add_test(tc, test_show_plain);
	tcase_add_test(tc, test_problem_parse);
	tcase_add_test(tc, test_files);
	tcase_add_test(tc, test_unflag);
	tcase_add_test(tc, test_control_bytes);
	suite_add_tcase(s, tc);

	/* Inputs large enough that a quadratic or worse parser misses the
	 * deadline: the machine's wait, not check's 4 s. */
	tc = tcase_create("scale");
	tcase_set_timeout(tc, getenv("FLASHSTEP_TEST_WAIT") != NULL ?
	    atof(getenv("FLASHSTEP_TEST_WAIT")) : 120);
	tcase_add_test(tc, test_many_labels);
	suite_add_tcase(s, tc);

	tc = tcase_create("run");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_run_seed);
	tcase_add_test(tc, test_run_failures);
	tcase_add_test(tc, test_run_errors);
	tcase_add_test(tc, test_run_moves);
	tcase_add_test(tc, test_rows_anywhere);
	tcase_add_test(tc, test_compare_gpu);
	tcase_add_test(tc, test_slides);
	tcase_add_test(tc, test_plain);
	tcase_add_test(tc, test_view);
	tcase_add_test(tc, test_fills);
	tcase_add_test(tc, test_number_questions);
	tcase_add_test(tc, test_reveal_one_at_a_time);
	tcase_add_test(tc, test_lint);
	tcase_add_test(tc, test_answer_visible);
	tcase_add_test(tc, test_builds_on_cycles);
	tcase_add_test(tc, test_odd_bytes);
	tcase_add_test(tc, test_fast_quantities);
	tcase_add_test(tc, test_mask_quantities);
	tcase_add_test(tc, test_paged_quantities);
	tcase_add_test(tc, test_notes);
	tcase_add_test(tc, test_slide_heading);
	tcase_add_test(tc, test_handout);
	tcase_add_test(tc, test_path);
	tcase_add_test(tc, test_man_page);
	tcase_add_test(tc, test_timeline_options);
	tcase_add_test(tc, test_timeline_moves);
	tcase_add_test(tc, test_timeline_quantities);
	tcase_add_test(tc, test_grads_anywhere);
	tcase_add_test(tc, test_backward_quantities);
	tcase_add_test(tc, test_combine_quantities);
	tcase_add_test(tc, test_timeline_frames);
	tcase_add_test(tc, test_dropout_frames);
	tcase_add_test(tc, test_ladder);
	tcase_add_test(tc, test_check_quotes_shown);
	tcase_add_test(tc, test_slides_progress);
	tcase_add_test(tc, test_check_answer_tokens);
	tcase_add_test(tc, test_check_worksheet);
	tcase_add_test(tc, test_check_course_rules);
	tcase_add_test(tc, test_check_folder);
	tcase_add_test(tc, test_check_heads_named);
	suite_add_tcase(s, tc);
	return s;
}
