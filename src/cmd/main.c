/*
 * main.c - flashstep: step through FlashAttention, tile by tile.
 *
 * Only main() and the choice of command live here; each command is a
 * function in its own file (cmd.h) so tests can call it.
 */
#include "config.h"

#include "cmd.h"
#include "app/helpwrap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "view", cmd_view, "step through the tiles in the terminal (the default)" },
	{ "run", cmd_run, "run the problem, check it, print the counters" },
	{ "trace", cmd_trace, "print every step as text, CSV or JSONL" },
	{ "lesson", cmd_lesson, "run a lesson script, or list the lessons" },
	{ "gpu", cmd_gpu, "run the problem on the GPU" },
	{ "compare", cmd_compare, "compare the GPU kernel with the simulator, step by step" },
	{ "bench", cmd_bench, "time the simulator (--cpu) or the kernels (--gpu)" },
	{ "pipeline", cmd_pipeline, "model the Hopper kernel's pipeline (a Chrome trace)" },
};

static void
usage(FILE *f)
{
	static const char more[] = "'flashstep COMMAND --help' lists a "
	    "command's options; man flashstep has them all.";
	size_t i;

	fputs("usage: flashstep [command] [options]\n"
	    "\n"
	    "Steps through FlashAttention: exact softmax attention computed tile by\n"
	    "tile with a running max m, a denominator l and a numerator u per row.\n"
	    "With no command it opens the step-through view on a built-in example.\n"
	    "\n"
	    "commands:\n", f);
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		help_wrap(f, commands[i].summary, strlen(commands[i].summary),
		    fprintf(f, "  %-9s ", commands[i].name), 12);
	fputc('\n', f);
	help_wrap(f, more, strlen(more), 0, 0);
}

/*
 * Every command's report goes to stdout through its buffer: a write that
 * failed (a full disk, /dev/full, a closed terminal) shows only here, in
 * the last flush and close.  A report that was lost is an error; a
 * command that already failed has said why (a lost report is often the
 * reason), so its status and its one line stand.
 */
static int
main_finish(const char *prefix, int rc)
{
	int e = 0;

	if (fflush(stdout) != 0)
		e = errno;
	else if (ferror(stdout))
		e = EIO;
	if (fclose(stdout) != 0 && e == 0)
		e = errno;
	if (e == 0 || rc != CMD_OK)
		return rc;
	fprintf(stderr, "%s: writing standard output failed: %s\n", prefix,
	    strerror(e));
	return CMD_USAGE;
}

int
main(int argc, char **argv)
{
	char prefix[64];
	size_t i;

	if (argc < 2)
		return main_finish("flashstep view", cmd_view(argc, argv));
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return main_finish("flashstep", CMD_OK);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("%s\n", PACKAGE_STRING);
		return main_finish("flashstep", CMD_OK);
	}
	/* `flashstep --tq 64 ...` opens the view on that problem. */
	if (argv[1][0] == '-')
		return main_finish("flashstep view", cmd_view(argc, argv));
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			snprintf(prefix, sizeof prefix, "flashstep %s",
			    commands[i].name);
			return main_finish(prefix, commands[i].fn(argc - 1, argv + 1));
		}
	fprintf(stderr, "flashstep: unknown command '%s' (see flashstep --help)\n",
	    argv[1]);
	return CMD_USAGE;
}
