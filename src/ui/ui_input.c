/*
 * ui_input.c - where a key goes.  The view is in one of four modes, and
 * a key belongs to the mode that is open:
 *
 *   normal --e--> form   --Enter (valid) / Esc--> normal
 *   normal --?--> help   --a key that does not scroll--> normal
 *   normal --g--> prompt --Enter / Esc--> normal
 *
 * In normal mode a click goes to the pane under it, other keys to the
 * key table (ui_keys.c).  While the last frame did not show the view
 * (the terminal too small), keys wait: only q quits.
 */
#include "config.h"

#include "ui_int.h"
#include "ui_form.h"
#include "ui_keys.h"

/* Which pane a click landed in, and let it handle the click. */
static int
ui_input_click(struct ui *ui, const struct ui_key *k)
{
	const struct ui_pane *p;
	struct ui_rect r;
	int s;

	for (s = 0; s < UI_SLOTS; s++) {
		r = ui->slot[s];
		p = ui->slot_pane[s];
		if (p == NULL || p->handle_key == NULL || k->x < r.x ||
		    k->x >= r.x + r.w || k->y < r.y || k->y >= r.y + r.h)
			continue;
		return p->handle_key(ui, k, r);
	}
	return UI_HANDLED;
}

int
ui_handle_key(struct ui *ui, const struct ui_key *k)
{
	int flags;

	if (k->code == UI_KEY_RESIZE)
		return UI_HANDLED | UI_REDRAW;
	if (ui->unseen)
		return k->code == 'q' ? UI_HANDLED | UI_QUIT : UI_HANDLED;
	/* A message stays until the next key. */
	ui->msg[0] = '\0';
	if (ui->pipe != NULL)
		flags = ui_pipe_key(ui, k);
	else if (ui->fp8 != NULL)
		flags = ui_fp8_key(ui, k);
	else if (ui->roof)
		flags = ui_roof_key(ui, k);
	else if (ui->form.open)
		flags = ui_form_key(ui, k);
	else if (ui->help)
		flags = ui_keys_help_key(ui, k);
	else if (ui->prompt.open)
		flags = ui_keys_prompt_key(ui, k);
	else if (k->code == UI_KEY_MOUSE)
		flags = ui_input_click(ui, k);
	else
		flags = ui_keys_dispatch(ui, k);
	return flags | UI_REDRAW;
}
