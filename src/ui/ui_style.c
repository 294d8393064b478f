/*
 * ui_style.c - what the locale and the environment decide: UTF-8 box,
 * shade and Greek characters or their ASCII stand-ins, and colour or
 * not (NO_COLOR).
 */
#include "config.h"

#include "ui_int.h"

#include <langinfo.h>
#include <locale.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
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
	.masked = " ", .skipped = "\u2571", .unknown = "?", .never = "\u2573",
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
	.masked = " ", .skipped = "/", .unknown = "?", .never = "x",
};

/* The glyphs ui_style_ascii spells, in the order it tries them: the
 * multiplication dot before the heatmap's lowest shade (both "·"). */
static const size_t ui_style_glyph_fields[] = {
	offsetof(struct ui_glyphs, arrow), offsetof(struct ui_glyphs, up),
	offsetof(struct ui_glyphs, down), offsetof(struct ui_glyphs, alpha),
	offsetof(struct ui_glyphs, ell), offsetof(struct ui_glyphs, sum),
	offsetof(struct ui_glyphs, dot), offsetof(struct ui_glyphs, prime),
	offsetof(struct ui_glyphs, transp), offsetof(struct ui_glyphs, times),
	offsetof(struct ui_glyphs, circ), offsetof(struct ui_glyphs, ninf),
	offsetof(struct ui_glyphs, ellipsis), offsetof(struct ui_glyphs, vline),
	offsetof(struct ui_glyphs, hline), offsetof(struct ui_glyphs, corner[0]),
	offsetof(struct ui_glyphs, corner[1]),
	offsetof(struct ui_glyphs, corner[2]),
	offsetof(struct ui_glyphs, corner[3]), offsetof(struct ui_glyphs, focus),
	offsetof(struct ui_glyphs, colmark), offsetof(struct ui_glyphs, heat[1]),
	offsetof(struct ui_glyphs, heat[2]), offsetof(struct ui_glyphs, heat[3]),
	offsetof(struct ui_glyphs, heat[4]), offsetof(struct ui_glyphs, skipped),
};

/* Characters of prose that no pane draws, spelt as the panes would. */
static const struct {
	const char *utf8, *ascii;
} ui_style_prose[] = {
	{ "\u221e", "inf" }, { "\u2264", "<=" }, { "\u2265", ">=" },
	{ "\u2260", "!=" }, { "\u2248", "~=" }, { "\u2212", "-" },
	{ "\u00b2", "^2" }, { "\u221a", "sqrt" }, { "\u2013", "-" },
	{ "\u2014", "--" }, { "\u2018", "'" }, { "\u2019", "'" },
	{ "\u201c", "\"" }, { "\u201d", "\"" }, { "\u00b1", "+-" },
	/* a combining tilde (m\u0303, the tile's own max): after its letter */
	{ "\u0303", "~" },
};

static const char *
ui_style_glyph(const struct ui_glyphs *g, size_t i)
{
	return *(const char *const *)(const void *)((const char *)g +
	    ui_style_glyph_fields[i]);
}

/* The ASCII spelling of the character at s (its byte length into *n), or
 * NULL when neither table has it. */
static const char *
ui_style_spell(const char *s, size_t *n)
{
	const char *u;
	size_t i;

	for (i = 0; i < sizeof ui_style_glyph_fields /
	    sizeof ui_style_glyph_fields[0]; i++) {
		u = ui_style_glyph(&ui_glyphs_utf8, i);
		*n = strlen(u);
		if (*n > 0 && (unsigned char)u[0] >= 0x80 && strncmp(s, u, *n) == 0)
			return ui_style_glyph(&ui_glyphs_ascii, i);
	}
	for (i = 0; i < sizeof ui_style_prose / sizeof ui_style_prose[0]; i++) {
		*n = strlen(ui_style_prose[i].utf8);
		if (strncmp(s, ui_style_prose[i].utf8, *n) == 0)
			return ui_style_prose[i].ascii;
	}
	return NULL;
}

/* s spelt in ASCII into out (NULL: only measured); returns its length. */
static size_t
ui_style_ascii_into(const char *s, char *out)
{
	const char *p, *sp;
	size_t n, k, len = 0;

	for (p = s; *p != '\0'; p += n) {
		n = 1;
		if ((unsigned char)*p < 0x80)
			sp = NULL;
		else if ((sp = ui_style_spell(p, &n)) == NULL) {
			/* an unknown character: its lead and continuation bytes */
			sp = "?";
			for (n = 1; (p[n] & 0xc0) == 0x80; n++)
				;
		}
		k = sp != NULL ? strlen(sp) : 1;
		if (out != NULL)
			memcpy(out + len, sp != NULL ? sp : p, k);
		len += k;
	}
	if (out != NULL)
		out[len] = '\0';
	return len;
}

char *
ui_style_ascii(const char *s)
{
	char *out = malloc(ui_style_ascii_into(s, NULL) + 1);

	if (out != NULL)
		ui_style_ascii_into(s, out);
	return out;
}

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
