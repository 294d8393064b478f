/*
 * ui_form.h - the `e` form: edit the problem's sizes, tiles, seed and
 * inputs, the window, softcap, ALiBi, the page size and a packed batch's
 * lengths, and turn the backward and split-KV on or off, checked by the
 * command line's own rules.
 */
#ifndef FLASHSTEP_UI_FORM_H
#define FLASHSTEP_UI_FORM_H

#include "ui_int.h"

/* The fields of the form (UI_FORM_FIELDS in all) that are not a number:
 * the inputs, the backward (on or off), the splits (1: none), the
 * window ("L,R", blank: none; -1,0 is causal), the softcap (blank:
 * none), ALiBi's slope (the view shows one head; blank: none) and the
 * page size (0 or blank: K/V not paged). */
#define UI_FORM_INPUT 7
#define UI_FORM_BACKWARD 8
#define UI_FORM_SPLITS 9
#define UI_FORM_WINDOW 10
#define UI_FORM_SOFTCAP 11
#define UI_FORM_ALIBI 12
/* The page size of a paged K/V cache (0: not paged, model/paged.h). */
#define UI_FORM_PAGE_SIZE 13
#define UI_FORM_SEQLENS 14	/* "A,B,.." or "Q/K" lengths; blank: not packed */

/* Opens the form with the current values. */
void ui_form_open(struct ui *ui);

/* A key while the form is open.  Returns UI_* flags. */
int ui_form_key(struct ui *ui, const struct ui_key *k);

/* Draws the form over r. */
void ui_form_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r);

#endif
