/* cmd_parse.c - the options every command parses alike (cmd.h). */
#include "config.h"

#include "cmd.h"

#include <stdio.h>

int
cmd_parse(const char *name, const char *usage, int argc, char **argv,
    unsigned groups, const struct options_entry *entries, void *ctx,
    struct options *o)
{
	char err[512];

	options_init(o);
	if (options_parse(argc, argv, 1, groups, entries, ctx, o, err,
	    sizeof err) != 0) {
		fprintf(stderr, "flashstep %s: %s\n", name, err);
		return CMD_USAGE;
	}
	if (o->help) {
		fputs(usage, stdout);
		options_usage(stdout, groups, entries);
		return CMD_OK;
	}
	if (o->nargs > 0) {
		fprintf(stderr, "flashstep %s: unexpected argument '%s'\n", name,
		    o->args[0]);
		return CMD_USAGE;
	}
	return -1;
}
