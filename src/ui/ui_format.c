/*
 * ui_format.c - names and numbers as the panes print them: phase names,
 * numbers fitted to a column width, label widths.
 */
#include "config.h"

#include "ui_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *ui_phase_names[SIM_PHASES] = {
	[SIM_PHASE_LOAD] = "load",
	[SIM_PHASE_SCORES] = "scores",
	[SIM_PHASE_MAX] = "max",
	[SIM_PHASE_RESCALE] = "rescale",
	[SIM_PHASE_EXP] = "exp",
	[SIM_PHASE_UPDATE] = "update",
	[SIM_PHASE_FINALIZE] = "finalize",
};

const char *
ui_phase_name(int phase)
{
	return phase >= 0 && phase < SIM_PHASES ? ui_phase_names[phase] : "?";
}

const char *
ui_num(const struct ui *ui, float x, int width, char *buf, size_t len)
{
	return ui_num_prec(ui, x, width, 5, buf, len);
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
