/* helpwrap.c - help text wrapped to HELP_WIDTH columns (helpwrap.h). */
#include "config.h"

#include "helpwrap.h"

#include <stdio.h>

int
help_columns(const char *text, size_t len)
{
	int n = 0;
	size_t i;

	/* A UTF-8 continuation byte (10xxxxxx) adds no column. */
	for (i = 0; i < len; i++)
		if (((unsigned char)text[i] & 0xc0) != 0x80)
			n++;
	return n;
}

static int
is_space(char c)
{
	return c == ' ' || c == '\n' || c == '\t';
}

/*
 * The pieces a line may break between: words, and the names of a list
 * "a|b|c" after each '|' (a table's names joined with no space, as
 * options_words writes them, may be wider than a line).
 */
void
help_wrap(FILE *f, const char *text, size_t len, int col, int indent)
{
	size_t at = 0, end;
	int w, spaced, first = 1;

	for (;;) {
		spaced = 0;
		while (at < len && is_space(text[at])) {
			at++;
			spaced = 1;
		}
		if (at == len)
			break;
		for (end = at; end < len && !is_space(text[end]); end++)
			if (text[end] == '|' && end + 1 < len &&
			    !is_space(text[end + 1])) {
				end++;
				break;
			}
		w = help_columns(text + at, end - at);
		/* A piece that does not fit starts the next line, unless the
		 * line holds nothing yet (it would not fit there either). */
		if (!first && col + spaced + w > HELP_WIDTH && col > indent) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (!first && spaced) {
			fputc(' ', f);
			col++;
		}
		fwrite(text + at, 1, end - at, f);
		col += w;
		first = 0;
		at = end;
	}
	fputc('\n', f);
}
