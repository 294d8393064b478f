/*
 * ui_style.c - what the locale and the environment decide: UTF-8 box,
 * shade and Greek characters or their ASCII stand-ins, and colour or
 * not (NO_COLOR).
 */
#include "config.h"

#include "ui_int.h"

#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <strings.h>

static const struct ui_glyphs ui_glyphs_utf8 = {
	.arrow = "\u2192", .up = "\u2191", .down = "\u2193", .alpha = "\u03b1", .ell = "\u2113",
	.sum = "\u03a3", .dot = "\u00b7", .imul = "", .prime = "\u2032",
	.transp = "\u1d40", .times = "\u00d7", .circ = "\u2218",
	.ninf = "-\u221e",
	.ellipsis = "\u2026", .vline = "\u2502", .hline = "\u2500",
	.corner = { "\u250c", "\u2510", "\u2514", "\u2518" },
	.focus = "\u25b6", .colmark = "\u25bc",
	.heat = { "\u00b7", "\u2591", "\u2592", "\u2593", "\u2588" },
	.masked = " ", .skipped = "\u2571", .unknown = "?",
};

/* ASCII stand-ins that no pane uses as a letter of its own: the merge's
 * operands are a and b and the output is o, so alpha is spelt out and
 * the entrywise product is (*), never "a" or "o". */
static const struct ui_glyphs ui_glyphs_ascii = {
	.arrow = "->", .up = "^", .down = "v", .alpha = "alpha", .ell = "l", .sum = "sum ", .dot = "*",
	.imul = "*", .prime = "'", .transp = "^T", .times = "x", .circ = " (*) ",
	.ninf = "-inf", .ellipsis = "...", .vline = "|", .hline = "-",
	.corner = { "+", "+", "+", "+" }, .focus = ">", .colmark = "v",
	.heat = { ".", ":", "+", "#", "@" },
	.masked = " ", .skipped = "/", .unknown = "?",
};

const struct ui_glyphs *
ui_glyphs(int unicode)
{
	return unicode ? &ui_glyphs_utf8 : &ui_glyphs_ascii;
}

void
ui_style_detect(struct ui_style *st)
{
	const char *nc = getenv("NO_COLOR");
	const char *cs;

	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	st->unicode = cs != NULL && (strcasecmp(cs, "UTF-8") == 0 ||
	    strcasecmp(cs, "utf8") == 0);
	/* no-color.org: present and not empty. */
	st->color = nc == NULL || *nc == '\0';
}
