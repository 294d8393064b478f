/*
 * lesson_show.h - `show FIGURE`: the slide's frame becomes one of the
 * machine's figures instead of the algorithm's view, until `show view`
 * or a change of the problem:
 *
 *   show roofline                 the H200's roofline, the problem's
 *                                 head on it (ui_roofline_problem)
 *   show pipeline model [at N | tile J]
 *                                 the wgmma pipeline model's schedule
 *                                 of the problem's head (d 64 or 128)
 *   show pipeline FILE [at N | tile J]
 *                                 a recording (doc/recordings, found
 *                                 beside the lessons as the recordings'
 *                                 quantities find them), its first block
 *   show fp8 [q | k | v]          how --dtype fp8 stored the tensor's
 *                                 focus row (the view's 8 pane)
 *   show view                     the algorithm's view again
 *
 * `at N` puts the pipeline's cursor on event N of the block (from 1),
 * `tile J` on key tile J's first softmax (or its first event).  The
 * figures are drawn by the view's own code into a grid: the terminal
 * runner draws into the view's place, --plain and --handout into an
 * 80-column grid printed as text (lesson_show_lines), which --check
 * reads as what the slide shows.
 */
#ifndef FLASHSTEP_LESSON_SHOW_H
#define FLASHSTEP_LESSON_SHOW_H

#include "lesson_run.h"
#include "lesson_view.h"
#include "ui/ui.h"

/* The columns of the figure as --plain prints it. */
#define LESSON_SHOW_WIDTH 76

/* Does the run's frame show a figure (not the algorithm's view)? */
int lesson_show_active(const struct lesson_run *run);

/* The figure's rows a screen of width w would like (the whole figure). */
int lesson_show_want(const struct lesson_run *run);

/* Draws the figure into r of g (unicode: the terminal's glyphs).  A
 * figure that cannot be drawn here writes why into r instead. */
void lesson_show_draw(struct lesson_run *run, struct ui_grid *g,
    struct ui_rect r, int unicode);

/* The figure as lines of text, LESSON_SHOW_WIDTH wide: a line naming
 * it, then its rows, trailing blank rows left out. */
void lesson_show_lines(struct lesson_run *run, struct lesson_lines *out);

#endif
