/* cmd_lesson.c - placeholder until the lesson runner lands. */
#include "config.h"

#include "cmd.h"

#include <stdio.h>

int
cmd_lesson(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("flashstep lesson: not implemented yet\n", stderr);
	return CMD_USAGE;
}
