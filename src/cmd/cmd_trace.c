/* cmd_trace.c - `flashstep trace`: every step as text, CSV or JSONL. */
#include "config.h"

#include "cmd.h"
#include "model/memory.h"
#include "model/setup.h"
#include "model/trace.h"
#include "model/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char trace_usage[] =
    "usage: flashstep trace [--format text|csv|jsonl] [--with-tiles]\n"
    "                       [--with-acc] [options]\n"
    "\n"
    "Prints every step of the simulator: the tile, and for each of its rows\n"
    "m_old, m_new, alpha, l_old and l_new; then the output O and lse.  JSONL\n"
    "is the interface for scripts (see flashstep(1)); CSV has one line per\n"
    "row of each step and no output section (use --output).\n"
    "\n";

struct trace_args {
	const char *format;
	int with_tiles, with_acc;
};

static int
set_format(void *ctx, const char *v, char *err, size_t errlen)
{
	if (trace_format_find(v) == NULL)
		return util_error(err, errlen, "--format must be text, csv or "
		    "jsonl, not '%s'", v);
	((struct trace_args *)ctx)->format = v;
	return 0;
}

static int
set_tiles(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct trace_args *)ctx)->with_tiles, v, err, errlen);
}

static int
set_acc(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct trace_args *)ctx)->with_acc, v, err, errlen);
}

static const struct options_entry trace_entries[] = {
	{ "format", "FMT", "text|csv|jsonl (default text)", set_format },
	{ "with-tiles", NULL, "add each tile's S and P", set_tiles },
	{ "with-acc", NULL, "add the accumulator rows (u, or o)", set_acc },
	{ NULL, NULL, NULL, NULL },
};

int
cmd_trace(int argc, char **argv)
{
	struct trace_args a = { "text", 0, 0 };
	struct options o;
	struct setup s;
	struct trace t;
	const struct problem *p;
	float *out = NULL, *lse = NULL;
	char err[512];
	int rc = CMD_USAGE;

	options_init(&o);
	if (options_parse(argc, argv, 1, OPT_PROBLEM | OPT_OUTFILES, trace_entries,
	    &a, &o, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep trace: %s\n", err);
		options_free(&o);
		return CMD_USAGE;
	}
	if (o.help) {
		fputs(trace_usage, stdout);
		options_usage(stdout, OPT_PROBLEM | OPT_OUTFILES, trace_entries);
		options_free(&o);
		return CMD_OK;
	}
	if (o.nargs > 0) {
		fprintf(stderr, "flashstep trace: unexpected argument '%s'\n",
		    o.args[0]);
		options_free(&o);
		return CMD_USAGE;
	}
	o.spec.memory_parts = MEMORY_SIM | MEMORY_RUN;
	if (setup_open(&o, &s, err, sizeof err) != 0) {
		fprintf(stderr, "flashstep trace: %s\n", err);
		options_free(&o);
		return CMD_USAGE;
	}
	p = &s.problem;
	out = util_calloc((size_t)p->tq * p->dv, sizeof *out, "O", err, sizeof err);
	lse = util_calloc((size_t)p->tq, sizeof *lse, "lse", err, sizeof err);
	if (out == NULL || lse == NULL)
		goto fail;

	memset(&t, 0, sizeof t);
	t.f = stdout;
	t.format = trace_format_find(a.format);
	t.sim = s.sim;
	t.with_tiles = a.with_tiles;
	t.with_acc = a.with_acc;
	t.format->begin(&t);
	if (sim_run(s.sim, trace_step, &t, out, lse) != 0) {
		/* trace_step stops at the first write that failed: errno is
		 * still its reason.  Reported here, once: main() then finds
		 * stdout clean. */
		if (ferror(stdout)) {
			snprintf(err, sizeof err, "writing standard output failed: "
			    "%s", strerror(errno));
			fflush(stdout);
			clearerr(stdout);
		} else
			snprintf(err, sizeof err, "out of memory");
		goto fail;
	}
	/* A trace that stdout lost is reported by main(), after this. */
	t.format->end(&t, out, lse);
	if (setup_write_outputs(&o, p, out, lse, err, sizeof err) != 0)
		goto fail;
	rc = CMD_OK;
	goto done;
fail:
	fprintf(stderr, "flashstep trace: %s\n", err);
	rc = CMD_USAGE;
done:
	free(out);
	free(lse);
	setup_close(&s);
	options_free(&o);
	return rc;
}
