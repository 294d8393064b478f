/*
 * cmd_lesson.c - `flashstep lesson`: run a lesson script in the terminal,
 * print it (--plain), check it (--check), or list the lessons.
 */
#include "config.h"

#include "cmd.h"
#include "lesson/lesson.h"
#include "lesson/lesson_path.h"
#include "lesson/lesson_plain.h"
#include "lesson/lesson_run.h"
#include "lesson/lesson_tty.h"
#include "model/options.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char lesson_usage[] =
    "usage: flashstep lesson [NAME|FILE] [--plain | --check] [--presenter]\n"
    "\n"
    "Runs a lesson script (flashstep-lesson(5)): in the terminal, the\n"
    "narration beside the simulator's panes, space or Right to go on, Left\n"
    "to go back, a to reveal an answer, q to quit (the view's own keys look\n"
    "around until the next slide).  Without a name, lists the lessons and\n"
    "their titles.  NAME is a lesson's name or a unique start of it (01);\n"
    "FILE is a path to a .lesson file.\n"
    "\n";

struct lesson_args {
	int plain, check, presenter;
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

static const struct options_entry lesson_entries[] = {
	{ "plain", NULL, "print the whole lesson as text, with no waits",
	    set_plain },
	{ "check", NULL, "run silently; exit 1 at the first failed expect",
	    set_check },
	{ "presenter", NULL, "show the speaker notes too", set_presenter },
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
	struct lesson_run *run;
	int rc;

	run = lesson_run_new(l, NULL, NULL, LESSON_RUN_STOP);
	if (run == NULL) {
		fprintf(stderr, "flashstep lesson: out of memory\n");
		return CMD_USAGE;
	}
	rc = lesson_run_all(run);
	if (rc == LESSON_ERROR) {
		fprintf(stderr, "%s\n", run->err);
		rc = CMD_USAGE;
	} else if (rc == LESSON_FAILED || run->failures > 0) {
		fprintf(stderr, "%s\n", run->failure);
		rc = CMD_FAILED;
	} else
		rc = CMD_OK;
	lesson_run_free(run);
	return rc;
}

int
cmd_lesson(int argc, char **argv)
{
	struct lesson_args a = { 0, 0, 0 };
	struct lesson *l = NULL;
	struct options o;
	char err[600], *path = NULL;
	int rc = CMD_USAGE, sig;

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
	if (a.plain && a.check) {
		fprintf(stderr, "flashstep lesson: --plain and --check go one at a "
		    "time\n");
		goto done;
	}
	if (o.nargs > 1) {
		fprintf(stderr, "flashstep lesson: one lesson at a time ('%s' is "
		    "one too many)\n", o.args[1]);
		goto done;
	}
	if (o.nargs == 0) {
		if (a.plain || a.check) {
			fprintf(stderr, "flashstep lesson: --%s needs a lesson name\n",
			    a.plain ? "plain" : "check");
			goto done;
		}
		rc = list_lessons();
		goto done;
	}
	path = lesson_path_find(o.args[0], NULL, err, sizeof err);
	if (path == NULL) {
		fprintf(stderr, "flashstep lesson: %s\n", err);
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
	if (a.plain) {
		switch (lesson_plain_write(l, stdout, a.presenter, err, sizeof err)) {
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
		    "terminal (use --plain to print the lesson)\n");
		goto done;
	}
	if (lesson_tty_run(l, a.presenter, &sig, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep lesson: %s\n", err);
		goto done;
	}
	rc = CMD_OK;
	if (sig > 0) {
		/* SIGINT or SIGTERM: the terminal is back; die of it. */
		lesson_free(l);
		free(path);
		options_free(&o);
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
done:
	lesson_free(l);
	free(path);
	options_free(&o);
	return rc;
}
