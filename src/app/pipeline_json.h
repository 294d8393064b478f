/*
 * pipeline_json.h - a pipeline's events (model/pipeline.h) as a Chrome
 * trace-event file, the JSON that Perfetto (ui.perfetto.dev) and
 * chrome://tracing open, and back.
 *
 * The file: {"traceEvents": [...], "displayTimeUnit": "ns",
 * "otherData": {...}}.  One process (pid) per block, named "block B (row
 * block i)" (", SM n" added when the recording knows the multiprocessor);
 * one thread (tid) per role (the producer, each consumer, the tensor
 * core, the copy engine; or, for the mma.sync kernel, each warp), named
 * by "M" metadata events; every
 * event a complete event (ph "X", ts and dur in microseconds) named by
 * its kind and tile ("QK (3,5)"), with args kind, wg, i, j, stage, round
 * and the exact begin and end in clocks.  otherData says where the
 * events came from (the model or a recording: machine, commit), the
 * configuration and the clock.
 *
 * pipeline_json_read reads back what pipeline_json_write wrote (one
 * event a line, in that order of keys) and refuses anything else by
 * line: it is not a general JSON parser.
 */
#ifndef FLASHSTEP_PIPELINE_JSON_H
#define FLASHSTEP_PIPELINE_JSON_H

#include <stddef.h>

#include "model/pipeline.h"

/* Blocks whose multiprocessor a trace can name. */
#define PIPELINE_JSON_MAX_SM 132

struct pipeline_json_meta {
	char source[256];	/* "model", or "recording: machine, commit" */
	struct pipeline_config cfg;
	double clock_ghz;	/* clocks to time (ts in microseconds) */
	/* The kernel: "" or "wgmma" (its roles: producer, consumers, the
	 * shared units; otherData then names none), or "fast", the
	 * mma.sync kernel, whose roles are warps 0 .. cfg.consumers - 1
	 * (model/pipeline_warps.h). */
	char kernel[16];
	/* The multiprocessor each block ran on (a recording that knows it;
	 * in the process names as "SM n"), for blocks below
	 * PIPELINE_JSON_MAX_SM. */
	int have_sm;
	int sm[PIPELINE_JSON_MAX_SM];
};

/* Whether the trace's roles are warps (a kernel without a producer). */
int pipeline_json_warps(const struct pipeline_json_meta *meta);

/* Role r's name in such a trace: "warp 2", or the model's role names. */
const char *pipeline_json_role_name(const struct pipeline_json_meta *meta,
    int role, char *buf, size_t len);

/*
 * Writes the events to path whole or not at all (outfile.h).  Returns
 * 0, or -1 with err set and path untouched.
 */
int pipeline_json_write(const char *path, const struct pipeline_event *ev,
    size_t nev, const struct pipeline_json_meta *meta, char *err,
    size_t errlen);

/*
 * The same text into a malloc'd string (*out, *len), for tests and the
 * writer.  Returns 0, or -1 with err set (out of memory).
 */
int pipeline_json_format(const struct pipeline_event *ev, size_t nev,
    const struct pipeline_json_meta *meta, char **out, size_t *len,
    char *err, size_t errlen);

/*
 * Reads a file pipeline_json_write wrote: *ev (malloc'd, *nev of them)
 * and meta.  Returns 0, or -1 with err naming the file and the line at
 * fault.
 */
int pipeline_json_read(const char *path, struct pipeline_event **ev,
    size_t *nev, struct pipeline_json_meta *meta, char *err, size_t errlen);

#endif
