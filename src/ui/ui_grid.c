/*
 * ui_grid.c - the in-memory screen: a grid of cells, each a character and
 * a role.  Panes write here; ui_term.c copies the grid to the terminal,
 * and tests read it back as text.  No curses.
 *
 * Every character is taken to be one column wide: the view writes only
 * ASCII and the one-column symbols of ui_glyphs().
 */
#include "config.h"

#include "ui_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
ui_grid_resize(struct ui_grid *g, int w, int h, char *err, size_t errlen)
{
	struct ui_cell *cells;
	size_t n;

	if (w < 1)
		w = 1;
	if (h < 1)
		h = 1;
	n = (size_t)w * (size_t)h;
	if (g->cells == NULL || g->w != w || g->h != h) {
		cells = util_calloc(n, sizeof *cells, "screen", err, errlen);
		if (cells == NULL)
			return -1;
		free(g->cells);
		g->cells = cells;
		g->w = w;
		g->h = h;
	}
	ui_grid_unclip(g);
	ui_grid_clear(g, g->clip, UI_ROLE_NORMAL);
	return 0;
}

void
ui_grid_clip(struct ui_grid *g, struct ui_rect r)
{
	int x1 = r.x + r.w, y1 = r.y + r.h;

	if (r.x < 0)
		r.x = 0;
	if (r.y < 0)
		r.y = 0;
	if (x1 > g->w)
		x1 = g->w;
	if (y1 > g->h)
		y1 = g->h;
	r.w = x1 > r.x ? x1 - r.x : 0;
	r.h = y1 > r.y ? y1 - r.y : 0;
	g->clip = r;
}

void
ui_grid_unclip(struct ui_grid *g)
{
	g->clip = (struct ui_rect){ 0, 0, g->w, g->h };
}

/* Is (x, y) inside the clip? */
static int
ui_grid_inside(const struct ui_grid *g, int x, int y)
{
	return x >= g->clip.x && x < g->clip.x + g->clip.w &&
	    y >= g->clip.y && y < g->clip.y + g->clip.h;
}

void
ui_grid_mods(struct ui_grid *g, int x, int y, int mods)
{
	if (ui_grid_inside(g, x, y))
		g->cells[(size_t)y * g->w + x].mods = (unsigned char)mods;
}

void
ui_grid_blit(struct ui_grid *dst, int x, int y, const struct ui_grid *src,
    int sy, int h)
{
	int r, c;

	for (r = 0; r < h && sy + r < src->h; r++) {
		if (sy + r < 0)
			continue;
		for (c = 0; c < src->w; c++)
			if (ui_grid_inside(dst, x + c, y + r))
				dst->cells[(size_t)(y + r) * dst->w + x + c] =
				    src->cells[(size_t)(sy + r) * src->w + c];
	}
}

void
ui_grid_free(struct ui_grid *g)
{
	free(g->cells);
	memset(g, 0, sizeof *g);
}

void
ui_grid_clear(struct ui_grid *g, struct ui_rect r, int role)
{
	int x, y, x1 = r.x + r.w, y1 = r.y + r.h;
	struct ui_cell *c;

	if (r.x < g->clip.x)
		r.x = g->clip.x;
	if (r.y < g->clip.y)
		r.y = g->clip.y;
	if (x1 > g->clip.x + g->clip.w)
		x1 = g->clip.x + g->clip.w;
	if (y1 > g->clip.y + g->clip.h)
		y1 = g->clip.y + g->clip.h;
	for (y = r.y; y < y1; y++)
		for (x = r.x; x < x1; x++) {
			c = &g->cells[(size_t)y * g->w + x];
			c->ch = ' ';
			c->role = (unsigned char)role;
			c->mods = 0;
		}
}

/* Decodes one UTF-8 character at s; sets *len to the bytes it used.
 * Malformed input decodes as '?' of one byte, so the caller moves on. */
static uint32_t
ui_grid_decode(const unsigned char *s, int *len)
{
	uint32_t c;
	int n, i;

	if (s[0] < 0x80) {
		*len = 1;
		return s[0];
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		c = s[0] & 0x07;
	} else {
		*len = 1;
		return '?';
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*len = 1;
			return '?';
		}
		c = (c << 6) | (s[i] & 0x3f);
	}
	*len = n;
	/* Overlong forms, surrogates and values past Unicode are malformed. */
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
	    (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff)) {
		*len = 1;
		return '?';
	}
	return c;
}

int
ui_grid_width(const char *utf8)
{
	const unsigned char *s = (const unsigned char *)utf8;
	int w = 0, len;

	while (*s != '\0') {
		ui_grid_decode(s, &len);
		s += len;
		w++;
	}
	return w;
}

int
ui_grid_text(struct ui_grid *g, int x, int y, int maxw, int role,
    const char *utf8)
{
	const unsigned char *s = (const unsigned char *)utf8;
	struct ui_cell *c;
	uint32_t ch;
	int n = 0, len;

	if (maxw < 0)
		maxw = g->clip.x + g->clip.w - x;
	while (*s != '\0' && n < maxw) {
		ch = ui_grid_decode(s, &len);
		s += len;
		if (ch < 0x20 || ch == 0x7f || (ch >= 0x80 && ch < 0xa0))
			ch = ' ';
		if (ui_grid_inside(g, x + n, y)) {
			c = &g->cells[(size_t)y * g->w + x + n];
			c->ch = ch;
			c->role = (unsigned char)role;
			c->mods = 0;
		}
		n++;
	}
	return n;
}

int
ui_grid_fit(struct ui_grid *g, int x, int y, int w, int role,
    const char *utf8, const char *ellipsis)
{
	const unsigned char *s = (const unsigned char *)utf8;
	int ew = ui_grid_width(ellipsis), avail, col = 0, cut, space = -1, len;

	if (w <= 0)
		return 0;
	if (ui_grid_width(utf8) <= w || ew >= w)
		return ui_grid_text(g, x, y, w, role, utf8);
	avail = w - ew;
	/* The last word break within avail columns, when it keeps most of
	 * the line; else the cut falls inside a word, marked all the same. */
	while (*s != '\0' && col < avail) {
		if (*s == ' ')
			space = col;
		ui_grid_decode(s, &len);
		s += len;
		col++;
	}
	if (*s == ' ')
		space = col;
	cut = space >= avail * 2 / 3 ? space : avail;
	while (cut > 0 && utf8[0] != '\0') {
		/* no trailing blanks before the ellipsis */
		const unsigned char *t = (const unsigned char *)utf8;
		int c = 0, last = ' ';

		while (*t != '\0' && c < cut) {
			last = *t;
			ui_grid_decode(t, &len);
			t += len;
			c++;
		}
		if (last != ' ')
			break;
		cut--;
	}
	ui_grid_text(g, x, y, cut, role, utf8);
	ui_grid_text(g, x + cut, y, ew, UI_ROLE_DIM, ellipsis);
	return cut + ew;
}

int
ui_grid_right(struct ui_grid *g, int x, int y, int w, int role,
    const char *utf8)
{
	int n = ui_grid_width(utf8);

	if (n > w)
		n = w;
	ui_grid_text(g, x + w - n, y, n, role, utf8);
	return w;
}

int
ui_grid_printf(struct ui_grid *g, int x, int y, int maxw, int role,
    const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return ui_grid_text(g, x, y, maxw, role, buf);
}

int
ui_grid_wrap(struct ui_grid *g, struct ui_rect r, int role, const char *utf8)
{
	const char *s = utf8, *word, *end;
	char buf[1024];
	int line = 0, col = 0, ww, n;

	if (r.w < 1)
		return 0;
	while (*s != '\0') {
		if (*s == '\n') {
			line++;
			col = 0;
			s++;
			continue;
		}
		if (*s == ' ') {
			s++;
			continue;
		}
		word = s;
		while (*s != '\0' && *s != ' ' && *s != '\n')
			s++;
		end = s;
		n = (int)(end - word) < (int)sizeof buf - 1 ?
		    (int)(end - word) : (int)sizeof buf - 1;
		memcpy(buf, word, (size_t)n);
		buf[n] = '\0';
		ww = ui_grid_width(buf);
		if (col > 0 && col + 1 + ww > r.w) {
			line++;
			col = 0;
		} else if (col > 0)
			col++;
		if (line < r.h)
			ui_grid_text(g, r.x + col, r.y + line, r.w - col, role, buf);
		/* A word longer than the line is cut where the line ends. */
		col += ww < r.w ? ww : r.w;
	}
	return line + 1;
}

void
ui_grid_box(struct ui_grid *g, struct ui_rect r, int role,
    const struct ui_glyphs *gl)
{
	int x, y;

	ui_grid_clear(g, r, UI_ROLE_NORMAL);
	if (r.w < 2 || r.h < 2)
		return;
	for (x = r.x + 1; x < r.x + r.w - 1; x++) {
		ui_grid_text(g, x, r.y, 1, role, gl->hline);
		ui_grid_text(g, x, r.y + r.h - 1, 1, role, gl->hline);
	}
	for (y = r.y + 1; y < r.y + r.h - 1; y++) {
		ui_grid_text(g, r.x, y, 1, role, gl->vline);
		ui_grid_text(g, r.x + r.w - 1, y, 1, role, gl->vline);
	}
	ui_grid_text(g, r.x, r.y, 1, role, gl->corner[0]);
	ui_grid_text(g, r.x + r.w - 1, r.y, 1, role, gl->corner[1]);
	ui_grid_text(g, r.x, r.y + r.h - 1, 1, role, gl->corner[2]);
	ui_grid_text(g, r.x + r.w - 1, r.y + r.h - 1, 1, role, gl->corner[3]);
}

/* Appends code point c to buf as UTF-8; returns bytes written, or 0 when
 * it does not fit. */
static size_t
ui_grid_encode(uint32_t c, char *buf, size_t left)
{
	if (c < 0x80 && left > 1) {
		buf[0] = (char)c;
		return 1;
	}
	if (c < 0x800 && left > 2) {
		buf[0] = (char)(0xc0 | (c >> 6));
		buf[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000 && left > 3) {
		buf[0] = (char)(0xe0 | (c >> 12));
		buf[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		buf[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (c >= 0x10000 && left > 4) {
		buf[0] = (char)(0xf0 | (c >> 18));
		buf[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		buf[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		buf[3] = (char)(0x80 | (c & 0x3f));
		return 4;
	}
	return 0;
}

char *
ui_grid_line(const struct ui_grid *g, int y, char *buf, size_t len)
{
	size_t n = 0, used, keep = 0;
	int x;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (y < 0 || y >= g->h)
		return buf;
	for (x = 0; x < g->w; x++) {
		uint32_t c = g->cells[(size_t)y * g->w + x].ch;
		used = ui_grid_encode(c, buf + n, len - n);
		if (used == 0)
			break;
		n += used;
		if (c != ' ')
			keep = n;
	}
	buf[keep] = '\0';
	return buf;
}
