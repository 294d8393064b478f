/*
 * fuzz_options.c - libFuzzer harness for the command line.
 *
 * The input is split at newlines into arguments and parsed as `run` and
 * `trace` parse them; a parse that succeeds and names no files builds the
 * problem (capped in size so the fuzzer explores the parser, not memory).
 * The cap is the product's own memory check, lowered far below the
 * fuzzer's RSS limit: sizes the harness cannot see before the build (a
 * packed batch's --seqlens add up to Tq and Tk) are refused by it, as a
 * user's would be.  Every failure must be one line of text.
 */
#include "config.h"

#include "app/options.h"
#include "model/sim.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* 64 MiB: every problem the size cap below lets through fits. */
	setenv("FLASHSTEP_MEMORY_LIMIT", "67108864", 1);
	return 0;
}

static int
set_flag(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(ctx, v, err, errlen);
}

static void
check_message(const char *err)
{
	if (err[0] == '\0' || strchr(err, '\n') != NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct options_entry extra[] = {
		{ "with-tiles", NULL, "flag", set_flag },
		{ NULL, NULL, NULL, NULL },
	};
	struct options o;
	struct problem p;
	struct sim *sim;
	char *buf, *argv[64], err[512];
	int argc = 1, flag = 0;
	size_t i;

	buf = malloc(size + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "run";
	argv[argc++] = buf;
	for (i = 0; i < size && argc < 63; i++) {
		if (buf[i] == '\n') {
			buf[i] = '\0';
			argv[argc++] = buf + i + 1;
		}
	}
	argv[argc] = NULL;

	options_init(&o);
	err[0] = '\0';
	if (options_parse(argc, argv, 1, OPT_PROBLEM | OPT_OUTFILES, extra, &flag,
	    &o, err, sizeof err) != 0)
		check_message(err);
	else if (o.spec.q.path == NULL && o.spec.k.path == NULL &&
	    o.spec.v.path == NULL && o.spec.s.path == NULL &&
	    o.spec.tq <= 64 && o.spec.tk <= 64 && o.spec.d <= 64 &&
	    o.spec.dv <= 64) {
		if (problem_build(&o.spec, &p, err, sizeof err) != 0)
			check_message(err);
		else {
			sim = sim_new(&p, &o.tiling, &o.rule, err, sizeof err);
			if (sim == NULL)
				check_message(err);
			else {
				sim_run(sim, NULL, NULL, NULL, NULL);
				sim_seek(sim, sim_steps(sim) / 2, SIM_PHASE_LAST);
				sim_free(sim);
			}
			problem_free(&p);
		}
	}
	options_free(&o);
	free(buf);
	return 0;
}
