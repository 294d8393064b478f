/*
 * helpwrap.h - help text wrapped to the terminal's 80 columns.
 *
 * Every --help prints its option tables through help_wrap: a long
 * description breaks at spaces, each line after the first indented by a
 * hanging indent, so no line of any command's help passes HELP_WIDTH
 * columns and a new option needs no hand-wrapped string.
 */
#ifndef FLASHSTEP_HELPWRAP_H
#define FLASHSTEP_HELPWRAP_H

#include <stddef.h>
#include <stdio.h>

/* The widest line --help prints: a terminal's usual width. */
#define HELP_WIDTH 80

/*
 * Writes text[0..len) (one paragraph: a newline in it counts as a space)
 * to f, the cursor already at column col, breaking at spaces so that no
 * line passes HELP_WIDTH; each further line starts with indent spaces.
 * A word too long for a line of its own is written whole.  Ends with a
 * newline.  Columns are counted in characters (UTF-8), not bytes.
 */
void help_wrap(FILE *f, const char *text, size_t len, int col, int indent);

/* The columns text[0..len) takes: its UTF-8 characters. */
int help_columns(const char *text, size_t len);

#endif
