/*
 * cmd_lesson.c - `flashstep lesson`: run a lesson script in the terminal,
 * print it (--plain), write its handout (--handout), check it (--check),
 * or list the lessons.
 */
#include "config.h"

#include "cmd.h"
#include "lesson/lesson.h"
#include "lesson/lesson_check.h"
#include "lesson/lesson_path.h"
#include "lesson/lesson_plain.h"
#include "lesson/lesson_tty.h"
#include "app/options.h"
#include "model/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char lesson_usage[] =
    "usage: flashstep lesson [NAME|FILE] [--notes-to PATH]\n"
    "       flashstep lesson NAME|FILE --plain | --handout [--no-answers]\n"
    "                        [--presenter]\n"
    "       flashstep lesson NAME|FILE|FOLDER... --check\n"
    "\n"
    "Runs a lesson script (flashstep-lesson(5)): in the terminal, the\n"
    "narration beside the simulator's panes; Space reads on (more text,\n"
    "then the next answer, then the next slide), Left goes back, j goes to\n"
    "a slide, = answers a number question, q quits (the view's own keys\n"
    "look around until the next slide).  The speaker notes never show on\n"
    "that screen: --notes-to sends them to another terminal or a file.\n"
    "Without a name, lists the lessons and their titles.  NAME is a\n"
    "lesson's name or a unique start of it (01); FILE is a path to a\n"
    ".lesson file.\n"
    "\n";

struct lesson_args {
	int plain, check, presenter, handout, no_answers;
	char *notes_to;
};

static int
set_plain(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct lesson_args *)ctx)->plain, v, err, errlen);
}

static int
set_check(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct lesson_args *)ctx)->check, v, err, errlen);
}

static int
set_presenter(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct lesson_args *)ctx)->presenter, v, err,
	    errlen);
}

static int
set_handout(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct lesson_args *)ctx)->handout, v, err,
	    errlen);
}

static int
set_no_answers(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct lesson_args *)ctx)->no_answers, v, err,
	    errlen);
}

static int
set_notes_to(void *ctx, const char *v, char *err, size_t errlen)
{
	struct lesson_args *a = ctx;

	if (*v == '\0')
		return util_error(err, errlen, "--notes-to needs a path (a "
		    "terminal such as /dev/pts/3, a FIFO or a file)");
	free(a->notes_to);
	a->notes_to = strdup(v);
	return a->notes_to == NULL ? util_error(err, errlen, "out of memory") : 0;
}

static const struct options_entry lesson_entries[] = {
	{ "plain", NULL, "print the whole lesson as text, with no waits",
	    set_plain },
	{ "handout", NULL, "write the lesson as a Markdown handout: frames as "
	    "code blocks, answers at the end", set_handout },
	{ "no-answers", NULL, "with --plain or --handout: leave the answers out "
	    "(a worksheet)", set_no_answers },
	{ "check", NULL, "run silently; exit 1 at the first failed check or "
	    "broken rule", set_check },
	{ "presenter", NULL, "with --plain or --handout: the speaker notes too",
	    set_presenter },
	{ "notes-to", "PATH", "the speaker notes of each slide, to a terminal "
	    "(/dev/pts/N), a FIFO or a file", set_notes_to },
	{ NULL, NULL, NULL, NULL },
};

static int
list_lessons(void)
{
	const char *folders[16];
	struct lesson_entry *list;
	char err[256];
	int n, i, nf, width = 0;

	if (lesson_path_list(&list, &n, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep lesson: %s\n", err);
		return CMD_USAGE;
	}
	if (n == 0) {
		nf = lesson_path_folders(folders, 16);
		fprintf(stderr, "flashstep lesson: no lessons found; looked in");
		for (i = 0; i < nf; i++)
			fprintf(stderr, "%s %s", i ? "," : "", folders[i]);
		fputc('\n', stderr);
		return CMD_USAGE;
	}
	for (i = 0; i < n; i++)
		if ((int)strlen(list[i].name) > width)
			width = (int)strlen(list[i].name);
	printf("Lessons (flashstep lesson NAME; --plain prints one):\n");
	for (i = 0; i < n; i++)
		printf("  %-*s  %s\n", width, list[i].name, list[i].title);
	lesson_path_list_free(list, n);
	return CMD_OK;
}

/* --check: silent; the first failure or error on stderr. */
static int
check(const struct lesson *l)
{
	char msg[600];

	switch (lesson_check(l, msg, sizeof msg)) {
	case 0:
		return CMD_OK;
	case 1:
		fprintf(stderr, "%s\n", msg);
		return CMD_FAILED;
	default:
		fprintf(stderr, "%s\n", msg);
		return CMD_USAGE;
	}
}

/* Refuses combinations that mean nothing; 0 or -1 (said on stderr). */
static int
modes_ok(const struct lesson_args *a, int named)
{
	const char *doc = a->plain ? "--plain" : a->handout ? "--handout" : NULL;

	if (a->plain + a->check + a->handout > 1) {
		fprintf(stderr, "flashstep lesson: --plain, --handout and --check go "
		    "one at a time\n");
		return -1;
	}
	if (!named && (doc != NULL || a->check)) {
		fprintf(stderr, "flashstep lesson: %s needs a lesson name\n",
		    doc != NULL ? doc : "--check");
		return -1;
	}
	if (a->no_answers && doc == NULL) {
		fprintf(stderr, "flashstep lesson: --no-answers goes with --plain or "
		    "--handout\n");
		return -1;
	}
	if (a->notes_to != NULL && (doc != NULL || a->check)) {
		fprintf(stderr, "flashstep lesson: --notes-to is for the terminal "
		    "runner; %s prints the notes with --presenter\n",
		    doc != NULL ? doc : "--check");
		return -1;
	}
	if (a->presenter && doc == NULL) {
		fprintf(stderr, "flashstep lesson: the speaker notes never show on "
		    "the projected screen: --notes-to PATH sends them to another "
		    "terminal (run tty there for its name) or a file\n");
		return -1;
	}
	return 0;
}

/* Does out name the file in, by any path (a link, another name)?  A
 * path that does not exist yet names no input. */
static int
same_file(const char *out, const char *in)
{
	struct stat so, si;

	return stat(out, &so) == 0 && stat(in, &si) == 0 &&
	    so.st_dev == si.st_dev && so.st_ino == si.st_ino;
}

int
cmd_lesson(int argc, char **argv)
{
	struct lesson_args a = { 0 };
	struct lesson_plain_opts po;
	struct lesson *l = NULL;
	struct options o;
	char err[600], *path = NULL;
	int rc = CMD_USAGE, sig, r;

	options_init(&o);
	if (options_parse(argc, argv, 1, 0, lesson_entries, &a, &o, err,
	    sizeof err) != 0) {
		fprintf(stderr, "flashstep lesson: %s\n", err);
		goto done;
	}
	if (o.help) {
		fputs(lesson_usage, stdout);
		options_usage(stdout, 0, lesson_entries);
		rc = CMD_OK;
		goto done;
	}
	/* --check takes several lessons, or a folder: a course at once. */
	if (a.check && modes_ok(&a, o.nargs > 0) == 0 && o.nargs > 0) {
		r = lesson_check_all(o.args, o.nargs, stderr);
		rc = r == 0 ? CMD_OK : r > 0 ? CMD_FAILED : CMD_USAGE;
		goto done;
	}
	if (o.nargs > 1) {
		fprintf(stderr, "flashstep lesson: one lesson at a time ('%s' is "
		    "one too many)\n", o.args[1]);
		goto done;
	}
	if (modes_ok(&a, o.nargs > 0) != 0)
		goto done;
	if (o.nargs == 0) {
		rc = list_lessons();
		goto done;
	}
	path = lesson_path_find(o.args[0], NULL, err, sizeof err);
	if (path == NULL) {
		fprintf(stderr, "flashstep lesson: %s\n", err);
		goto done;
	}
	/* The notes replace their file: never the lesson they come from. */
	if (a.notes_to != NULL && same_file(a.notes_to, path)) {
		fprintf(stderr, "flashstep lesson: --notes-to %s is the lesson %s "
		    "itself; the notes would replace it\n", a.notes_to, path);
		goto done;
	}
	l = lesson_parse_file(path, err, sizeof err);
	if (l == NULL) {
		fprintf(stderr, "%s\n", err);
		goto done;
	}
	if (a.check) {
		rc = check(l);
		goto done;
	}
	if (a.plain || a.handout) {
		po.markdown = a.handout;
		po.presenter = a.presenter;
		po.answers = !a.no_answers;
		switch (lesson_plain_write(l, stdout, &po, err, sizeof err)) {
		case 0:
			rc = CMD_OK;
			break;
		case 1:
			rc = CMD_FAILED;
			break;
		default:
			fprintf(stderr, "%s\n", err);
			break;
		}
		goto done;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "flashstep lesson: the interactive runner needs a "
		    "terminal (use --plain to print the lesson, --handout for "
		    "Markdown)\n");
		goto done;
	}
	if (lesson_tty_run(l, a.notes_to, &sig, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep lesson: %s\n", err);
		goto done;
	}
	rc = CMD_OK;
	if (sig > 0) {
		/* SIGINT or SIGTERM: the terminal is back; die of it. */
		lesson_free(l);
		free(path);
		free(a.notes_to);
		options_free(&o);
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
done:
	lesson_free(l);
	free(path);
	free(a.notes_to);
	options_free(&o);
	return rc;
}
