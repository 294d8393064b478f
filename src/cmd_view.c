/* cmd_view.c - placeholder until the ncurses view lands: runs `run`. */
#include "config.h"

#include "cmd.h"

int
cmd_view(int argc, char **argv)
{
	return cmd_run(argc, argv);
}
