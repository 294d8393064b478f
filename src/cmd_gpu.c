/* cmd_gpu.c - placeholder until the GPU commands land. */
#include "config.h"

#include "cmd.h"

#include <stdio.h>

static int
not_yet(const char *name)
{
	fprintf(stderr, "flashstep %s: built without CUDA support\n", name);
	return CMD_USAGE;
}

int
cmd_gpu(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return not_yet("gpu");
}

int
cmd_compare(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return not_yet("compare");
}

int
cmd_bench_gpu(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return not_yet("bench --gpu");
}
