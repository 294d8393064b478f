/*
 * ui_form.h - the `e` form: edit the problem's sizes, tiles, seed and
 * inputs, checked by the command line's own rules.
 */
#ifndef FLASHSTEP_UI_FORM_H
#define FLASHSTEP_UI_FORM_H

#include "ui_int.h"

/* Opens the form with the current values. */
void ui_form_open(struct ui *ui);

/* A key while the form is open.  Returns UI_* flags. */
int ui_form_key(struct ui *ui, const struct ui_key *k);

/* Draws the form over r. */
void ui_form_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r);

/* Validates and applies the form's values (as Enter does).  Returns 0,
 * or -1 with form.error set and nothing changed. */
int ui_form_apply(struct ui *ui);

#endif
