/*
 * ui_loop.c - the event loop: draw, wait for a key (or for background
 * work and play), hand the key to the caller's hook and then the view,
 * redraw.  Keys that arrive together (a held key) are all handled before
 * the next frame, so holding a key never queues frames behind it.
 */
#include "config.h"

#include "ui_int.h"

/* Background work per turn of the loop, so keys stay quick meanwhile. */
#define UI_LOOP_IDLE_S 0.008
/* Keys handled at most before a frame is drawn anyway. */
#define UI_LOOP_BATCH 32

static void
ui_loop_frame(struct ui *ui, const struct ui_hooks *hooks, struct ui_grid *g)
{
	int w, h;

	if (hooks != NULL && hooks->frame != NULL) {
		/* A frame that leaves the view out hides it: ui_draw says
		 * otherwise when the caller draws it. */
		ui->unseen = 1;
		hooks->frame(ui, g, hooks->ctx);
	} else {
		ui_term_size(&w, &h);
		ui_draw(ui, g, (struct ui_rect){ 0, 0, w, h });
	}
	ui_term_present(g);
}

static int
ui_loop_key(struct ui *ui, const struct ui_hooks *hooks, const struct ui_key *k)
{
	int flags = 0;

	if (hooks != NULL && hooks->key != NULL)
		flags = hooks->key(ui, k, hooks->ctx);
	if (!(flags & UI_HANDLED))
		flags |= ui_handle_key(ui, k);
	if (k->code == UI_KEY_RESIZE)
		flags |= UI_REDRAW;
	return flags;
}

int
ui_loop(struct ui *ui, const struct ui_hooks *hooks, char *err, size_t errlen)
{
	struct ui_grid g = { 0 };
	struct ui_key k;
	int redraw = 1, flags, wait, r, n, w, h, rc = 0;

	for (;;) {
		if (redraw) {
			ui_term_size(&w, &h);
			if (ui_grid_resize(&g, w, h, err, errlen) != 0) {
				rc = -1;
				break;
			}
			ui_loop_frame(ui, hooks, &g);
			redraw = 0;
		}
		flags = ui_idle(ui, util_now() + UI_LOOP_IDLE_S, &wait);
		if (hooks != NULL && hooks->idle != NULL)
			flags |= hooks->idle(ui, &wait, hooks->ctx);
		if (flags & UI_QUIT)
			break;
		if (flags & UI_REDRAW)
			redraw = 1;
		r = ui_term_key(redraw ? 0 : wait, &k);
		n = 0;
		while (r == 1) {
			flags = ui_loop_key(ui, hooks, &k);
			if (flags & UI_QUIT)
				goto done;
			if (flags & UI_REDRAW)
				redraw = 1;
			if (++n >= UI_LOOP_BATCH)
				break;
			r = ui_term_key(0, &k);
		}
		if (r < 0) {
			rc = ui_term_signal();
			break;
		}
	}
done:
	ui_grid_free(&g);
	return rc;
}
