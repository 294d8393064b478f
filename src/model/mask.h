/*
 * mask.h - the host's side of mask_rule.h's tables: each entry's name
 * and lines (for --help, the man page's list and the view), the mask bug
 * modes' words, and a problem's rules described in one line.
 */
#ifndef FLASHSTEP_MASK_H
#define FLASHSTEP_MASK_H

#include <stddef.h>

#include "mask_rule.h"

/* One entry of MASK_TABLE, as its row says. */
struct mask_entry_row {
	enum mask_entry id;
	const char *name;
	int kind;		/* MASK_HIDES or MASK_BENDS */
	const char *options;	/* the options that set it */
	const char *does;
	const char *skips;	/* the tiles it lets the schedule skip */
	const char *backward;
};

/* The row of entry e (0 .. MASK_ENTRIES - 1: asserted). */
const struct mask_entry_row *mask_entry_row(enum mask_entry e);

const char *mask_bug_name(enum mask_bug b);
const char *mask_bug_breaks(enum mask_bug b);
/* The entry a bug needs to show (an enum mask_entry), or -1. */
int mask_bug_needs(enum mask_bug b);
/* 0 with *out set, or -1 (*out untouched) for a word no row has. */
int mask_bug_parse(const char *name, enum mask_bug *out);

/*
 * Is bug b meaningful for rules m?  softcap-after-max needs a cap,
 * window-off-by-one a window with a left edge (L >= 0; causal has none).
 * Returns 0, or -1 with one line in err saying what to add.
 */
int mask_bug_check(enum mask_bug b, struct mask_rule m, char *err,
    size_t errlen);

/*
 * The rules in a few words, for the status line and trace headers:
 * "none", "causal", "window (8, 0)", joined by ", " with "softcap 30"
 * and "alibi" (alibi_heads > 0: ALiBi's slopes are on) and "dropout 0.1
 * (seed N, offset K)".  Returns buf.
 */
const char *mask_describe(struct mask_rule m, int alibi_on, char *buf,
    size_t len);

#endif
