/* options_fp8.c - --fp8-block, --hadamard, --fp8-bug (see options_fp8.h). */
#include "config.h"

#include "options_fp8.h"
#include "options.h"
#include "model/fp8.h"
#include "model/util.h"

#include <stdio.h>
#include <string.h>

static const char *
fp8_bug_word(int i)
{
	return fp8_bug_mode((enum fp8_bug)i)->word;
}

int
options_set_fp8_block(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;
	long x;

	if (options_int("fp8-block", v, 1, 1L << 30, &x, err, errlen) != 0)
		return -1;
	o->spec.fp8.block = (int)x;
	return 0;
}

int
options_set_hadamard(void *ctx, const char *v, char *err, size_t errlen)
{
	(void)v;
	(void)err;
	(void)errlen;
	((struct options *)ctx)->spec.fp8.hadamard = 1;
	return 0;
}

int
options_set_fp8_bug(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;
	char words[200];

	if (fp8_bug_parse(v, &o->spec.fp8.bug) != 0)
		return util_error(err, errlen, "--fp8-bug must be %s, not '%s'",
		    options_words(words, sizeof words, fp8_bug_word, FP8_BUGS,
		    ", ", " or "), v);
	return 0;
}

void
options_fp8_bug_more(char *buf, size_t len)
{
	size_t at;
	int b;

	options_words(buf, len, fp8_bug_word, FP8_BUGS, "|", NULL);
	for (b = 0; b < FP8_BUGS; b++) {
		at = strlen(buf);
		snprintf(buf + at, len - at, "\n%s: %s", fp8_bug_mode(
		    (enum fp8_bug)b)->word, fp8_bug_mode((enum fp8_bug)b)->what);
	}
}

int
options_fp8_check(const struct options *o, char *err, size_t errlen)
{
	static const char *const need_fp8[] = { "fp8-block", "hadamard",
	    "fp8-bug" };
	const struct fp8_spec *f = &o->spec.fp8;
	size_t i;

	if (o->spec.dtype != DTYPE_FP8) {
		for (i = 0; i < sizeof need_fp8 / sizeof *need_fp8; i++)
			if (options_given(o, need_fp8[i]))
				return util_error(err, errlen, "--%s applies to "
				    "--dtype fp8 (it shapes the e4m3 quantization "
				    "of Q, K and V)", need_fp8[i]);
		return 0;
	}
	if (fp8_bug_mode(f->bug)->needs_hadamard && !f->hadamard)
		return util_error(err, errlen, "--fp8-bug %s needs --hadamard "
		    "(it is a mistake in the rotation)", fp8_bug_mode(f->bug)->word);
	if (f->bug == FP8_BUG_WHOLE_TENSOR && options_given(o, "fp8-block"))
		return util_error(err, errlen, "--fp8-bug whole-tensor gives each "
		    "tensor one scale; --fp8-block %d asks for blocks: give one "
		    "of them", f->block);
	if (o->backward)
		return util_error(err, errlen, "--dtype fp8 runs the forward "
		    "only: the backward of FP8 attention is not modelled (drop "
		    "--backward)");
	if (options_given(o, "scores"))
		return util_error(err, errlen, "--dtype fp8 quantizes Q, K and V; "
		    "a scores problem (--scores) has no Q or K");
	return 0;
}
