/*
 * cmd_pipeline_fit.h - `flashstep pipeline --model --durations FILE`
 * (the model fed with a recording's durations beside the recording) and
 * `flashstep pipeline --what-if FILE` (what one stage, one more, no
 * ping-pong or no overlap would cost with them, beside any recording of
 * that variant in FILE's folder).  model/pipeline_fit.h has the rules.
 */
#ifndef FLASHSTEP_CMD_PIPELINE_FIT_H
#define FLASHSTEP_CMD_PIPELINE_FIT_H

/* Prints the fed model against the recording in path, block by block;
 * writes the fed model's trace to output (may be NULL).  CMD_OK when
 * every block and steady key tile is within the margins (pipeline_fit.h),
 * CMD_FAILED when one is not, CMD_USAGE on a file it cannot read. */
int pipeline_fit_run(const char *path, const char *output);

/* Prints the what-if table of the recording in path.  CMD_OK, or
 * CMD_USAGE on a file it cannot read. */
int pipeline_what_if_run(const char *path);

#endif
