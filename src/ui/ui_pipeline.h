/*
 * ui_pipeline.h - the pipeline viewer (`flashstep pipeline --view
 * FILE`): a trace of the wgmma kernel's pipeline (model/pipeline.h,
 * from the model or a recording), one row per role, time to the right,
 * a cursor that steps event by event, the ring of stages at the
 * cursor's time, and the step of the algorithm the event computes.
 *
 * As the rest of src/ui: ui_pipeline_draw and ui_pipeline_key are plain
 * C over a cell grid (tests read the screen as text); ui_pipeline_run
 * is the loop that takes the terminal through ui_term_*.
 */
#ifndef FLASHSTEP_UI_PIPELINE_H
#define FLASHSTEP_UI_PIPELINE_H

#include <stddef.h>

#include "app/pipeline_json.h"
#include "model/pipeline.h"
#include "ui/ui.h"

struct ui_pipeline {
	const struct pipeline_event *ev;	/* by block, then by begin */
	size_t nev;
	const struct pipeline_json_meta *meta;
	int ncta;
	size_t cur;		/* the cursor: an event of the block shown */
	double zoom;		/* clocks a column; 0: the whole block */
};

/* The viewer on ev (sorted as the model and the trace files keep them:
 * by block, then by begin), the cursor on the first event. */
void ui_pipeline_init(struct ui_pipeline *v, const struct pipeline_event *ev,
    size_t nev, const struct pipeline_json_meta *meta);

/* Draws the whole screen into g (any size; 80 x 24 shows everything). */
void ui_pipeline_draw(const struct ui_pipeline *v, struct ui_grid *g);

/*
 * A key: n / p (or right / left) the next / previous event of the
 * block, N / P the next / previous of the same role, b / B the next /
 * previous block, + / - zoom in / out around the cursor, 0 the whole
 * block, Home / End, q (or Esc) quit.  Returns UI_HANDLED | UI_REDRAW,
 * UI_QUIT, or 0 for a key it does not know.
 */
int ui_pipeline_key(struct ui_pipeline *v, int code);

/* Runs the viewer in the terminal until q.  Returns 0, or -1 with err
 * set (no terminal, no memory). */
int ui_pipeline_run(const struct pipeline_event *ev, size_t nev,
    const struct pipeline_json_meta *meta, char *err, size_t errlen);

#endif
