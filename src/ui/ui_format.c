/*
 * ui_format.c - numbers as the panes print them: fitted to a column
 * width, label widths.
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *
ui_num(const struct ui *ui, float x, int width, char *buf, size_t len)
{
	/* Five significant digits in the usual 7 columns; a wider column
	 * (a large terminal, a zoomed pane) shows more, up to 7: about what
	 * float32 holds. */
	int digits = width - 2 < 5 ? 5 : width - 2 > 7 ? 7 : width - 2;

	return ui_num_prec(ui, x, width, digits, buf, len);
}

int
ui_digits(int n)
{
	int d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

const char *
ui_num_prec(const struct ui *ui, float x, int width, int digits, char *buf,
    size_t len)
{
	char whole[64];
	int prec;

	if (isnan(x))
		snprintf(buf, len, "nan");
	else if (isinf(x))
		snprintf(buf, len, "%s", x < 0 ? ui->gl->ninf : "inf");
	else {
		/* digits significant digits, fewer until it fits. */
		for (prec = digits; prec >= 1; prec--) {
			snprintf(buf, len, "%.*g", prec, (double)x);
			if ((int)strlen(buf) <= width)
				break;
		}
		/* A whole part that fits is never cut to an exponent: 1002,
		 * not 1e+03 (the seed's scores). */
		if (strchr(buf, 'e') != NULL && fabs((double)x) >= 1.0 &&
		    snprintf(whole, sizeof whole, "%.0f", (double)x) <= width)
			snprintf(buf, len, "%s", whole);
	}
	return buf;
}
