/*
 * ui_keys.h - the view's keys: one table that both dispatches them and
 * writes the help screen (which scrolls), and the `g` prompt.
 */
#ifndef FLASHSTEP_UI_KEYS_H
#define FLASHSTEP_UI_KEYS_H

#include "ui_int.h"

struct ui_keydef {
	const char *keys;	/* as shown: "space n Right" */
	const char *help;
	int (*fn)(struct ui *ui, const struct ui_key *k);
	int codes[6];		/* key codes that trigger it, 0-ended */
};
extern const struct ui_keydef ui_keydefs[];

/* The key's help as the help screen shows it: its help, and for keys
 * that cycle through a table (b: the bug modes) the table's names after
 * it.  Returns buf. */
const char *ui_keys_help_of(const struct ui_keydef *d, char *buf, size_t len);

/* Runs the key's entry of the table.  Returns UI_* flags, 0 when no
 * entry has the key. */
int ui_keys_dispatch(struct ui *ui, const struct ui_key *k);

/* The help screen (`?`) over r; its keys: arrows, PgUp, PgDn, Space,
 * Home, End scroll when it does not fit, any other closes it. */
void ui_keys_draw_help(struct ui *ui, struct ui_grid *g, struct ui_rect r);
int ui_keys_help_key(struct ui *ui, const struct ui_key *k);

/* The `g` prompt: drawn in the status line, and its keys. */
void ui_keys_draw_prompt(struct ui *ui, struct ui_grid *g, struct ui_rect r);
int ui_keys_prompt_key(struct ui *ui, const struct ui_key *k);

#endif
