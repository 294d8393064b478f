/* options.c - shared option parsing (see options.h). */
#include "config.h"

#include "options.h"
#include "helpwrap.h"
#include "options_fp8.h"
#include "options_paged.h"
#include "model/mask.h"
#include "model/util.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int
options_int(const char *name, const char *value, long min, long max, long *out,
    char *err, size_t errlen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (*value == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
		/* An integer past the top (or past long) is told the limit:
		 * "must be a positive integer" would be wrong of 2147483648. */
		int over = *value != '\0' && *end == '\0' && (v > max ||
		    (errno == ERANGE && v == LONG_MAX));

		if (min == 1 && max == INT_MAX && over)
			return util_error(err, errlen, "--%s must be at most %ld, "
			    "not '%s'", name, max, value);
		if (min == 1 && max == INT_MAX)
			return util_error(err, errlen, "--%s must be a positive "
			    "integer, not '%s'", name, value);
		return util_error(err, errlen, "--%s must be an integer from %ld "
		    "to %ld, not '%s'", name, min, max, value);
	}
	*out = v;
	return 0;
}

int
options_double(const char *name, const char *value, double *out, char *err,
    size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	/* A number out of double's range is a number: say which end. */
	if (*value != '\0' && *end == '\0' && errno == ERANGE) {
		if (v == 0.0)
			return util_error(err, errlen, "--%s is out of range: '%s' "
			    "underflows to 0 (smallest %g)", name, value,
			    DBL_TRUE_MIN);
		if (!isfinite(v))
			return util_error(err, errlen, "--%s is out of range: '%s' "
			    "overflows (largest %g)", name, value, DBL_MAX);
		errno = 0;	/* a subnormal double: held, if not exactly */
	}
	if (*value == '\0' || *end != '\0' || errno != 0 || !isfinite(v))
		return util_error(err, errlen, "--%s must be a number, not '%s'",
		    name, value);
	*out = v;
	return 0;
}

const char *
options_words(char *buf, size_t len, const char *(*word)(int), int n,
    const char *sep, const char *last)
{
	size_t at = 0;
	int i, w;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < n && at < len; i++) {
		w = snprintf(buf + at, len - at, "%s%s", i == 0 ? "" :
		    i == n - 1 && last != NULL ? last : sep, word(i));
		if (w < 0)
			break;
		at += (size_t)w;
	}
	return buf;
}

/* The names of the tables the options read, for options_words. */
static const char *
bug_word(int i)
{
	return online_bug_name((enum online_bug)i);
}

static const char *
convention_word(int i)
{
	return online_convention_name((enum online_convention)i);
}

static const char *
merge_bug_word(int i)
{
	return combine_bug_name((enum merge_bug)i);
}

static const char *
grad_bug_word(int i)
{
	return backward_bug_name((enum backward_bug)i);
}

/* "--NAME must be a, b or c, not 'v'" for a table of n words. */
static int
not_one_of(char *err, size_t errlen, const char *name,
    const char *(*word)(int), int n, const char *v)
{
	char words[400];

	return util_error(err, errlen, "--%s must be %s, not '%s'", name,
	    options_words(words, sizeof words, word, n, ", ", " or "), v);
}

/* --bug's help: the words, then what each mode breaks, from the table
 * (online_rule.h). */
static void
bug_more(char *buf, size_t len)
{
	const struct online_bug_mode *m;
	size_t at;
	int b;

	options_words(buf, len, bug_word, ONLINE_BUGS, "|", NULL);
	for (b = 0; b < ONLINE_BUGS; b++) {
		m = online_bug_mode((enum online_bug)b);
		at = strlen(buf);
		snprintf(buf + at, len - at, "\n%s: %s%s%s%s", m->name, m->breaks,
		    m->needs == ONLINE_ANY_CONVENTION ? "" : " (",
		    m->needs == ONLINE_ANY_CONVENTION ? "" :
		    online_convention_name((enum online_convention)m->needs),
		    m->needs == ONLINE_ANY_CONVENTION ? "" : " only)");
	}
}

static void
convention_more(char *buf, size_t len)
{
	size_t at;

	options_words(buf, len, convention_word, ONLINE_CONVENTIONS, "|", NULL);
	at = strlen(buf);
	snprintf(buf + at, len - at, " (default %s)",
	    online_convention_name(CONV_UNNORMALIZED));
}

static void
merge_bug_more(char *buf, size_t len)
{
	options_words(buf, len, merge_bug_word, MERGE_BUGS, "|", NULL);
}

static const char *mask_bug_word(int i);

/* --mask-bug's help: the words, then what each breaks (mask_rule.h). */
static void
mask_bug_more(char *buf, size_t len)
{
	size_t at;
	int b;

	options_words(buf, len, mask_bug_word, MASK_BUGS, "|", NULL);
	for (b = 0; b < MASK_BUGS; b++) {
		at = strlen(buf);
		snprintf(buf + at, len - at, "\n%s: %s", mask_bug_name((enum mask_bug)b),
		    mask_bug_breaks((enum mask_bug)b));
	}
}

static void
grad_bug_more(char *buf, size_t len)
{
	options_words(buf, len, grad_bug_word, BACKWARD_BUGS, "|", NULL);
}

int
options_set_flag(void *ctx, const char *value, char *err, size_t errlen)
{
	(void)value;
	(void)err;
	(void)errlen;
	*(int *)ctx = 1;
	return 0;
}

/* The shared options: each setter gets the struct options. */

static int
set_size(int *dst, const char *name, const char *v, char *err, size_t errlen)
{
	long x;

	if (options_int(name, v, 1, INT_MAX, &x, err, errlen) != 0)
		return -1;
	*dst = (int)x;
	return 0;
}

#define SIZE_SETTER(fn, field, name)					\
static int								\
fn(void *ctx, const char *v, char *err, size_t errlen)			\
{									\
	struct options *o = ctx;					\
	return set_size(&o->field, name, v, err, errlen);		\
}
SIZE_SETTER(set_tq, spec.tq, "tq")
SIZE_SETTER(set_tk, spec.tk, "tk")
SIZE_SETTER(set_d, spec.d, "d")
SIZE_SETTER(set_dv, spec.dv, "dv")

/* The tile sizes go to the spec too: its memory check counts a tile. */
static int
set_br(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (set_size(&o->tiling.br, "br", v, err, errlen) != 0)
		return -1;
	o->spec.br = o->tiling.br;
	return 0;
}

static int
set_bc(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (set_size(&o->tiling.bc, "bc", v, err, errlen) != 0)
		return -1;
	o->spec.bc = o->tiling.bc;
	return 0;
}

static int
set_order(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (schedule_order_parse(v, &o->tiling.order) != 0)
		return util_error(err, errlen, "--order must be fa1 or fa2, not '%s'", v);
	o->spec.fa1 = o->tiling.order == ORDER_FA1;
	return 0;
}

static int
set_causal(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct options *)ctx)->spec.causal, v, err, errlen);
}

/* --window L,R: two integers from -1 (unbounded) up, one comma. */
static int
set_window(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;
	const char *comma = strchr(v, ',');
	char left[32];
	long l, r;
	size_t n;

	n = comma != NULL ? (size_t)(comma - v) : 0;
	if (comma == NULL || n == 0 || n >= sizeof left || strchr(comma + 1, ','))
		return util_error(err, errlen, "--window must be L,R (two numbers "
		    "of keys, -1 for unbounded, e.g. 8,0), not '%s'", v);
	memcpy(left, v, n);
	left[n] = '\0';
	if (options_int("window", left, -1, INT_MAX, &l, err, errlen) != 0 ||
	    options_int("window", comma + 1, -1, INT_MAX, &r, err, errlen) != 0)
		return util_error(err, errlen, "--window must be L,R with each "
		    "side -1 (unbounded) or a number of keys >= 0, not '%s'", v);
	o->spec.window_set = 1;
	o->spec.window_left = (int)l;
	o->spec.window_right = (int)r;
	return 0;
}

static int
set_softcap(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (options_double("softcap", v, &o->spec.softcap, err, errlen) != 0)
		return -1;
	if (!(o->spec.softcap > 0) || o->spec.softcap > FLT_MAX ||
	    (float)o->spec.softcap == 0.0f)
		return util_error(err, errlen, "--softcap must be a positive number "
		    "within float32's range (%g to %g), not '%s'",
		    (double)FLT_TRUE_MIN, (double)FLT_MAX, v);
	o->spec.softcap_set = 1;
	return 0;
}

static int
set_alibi(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (options_double("alibi", v, &o->spec.alibi, err, errlen) != 0)
		return -1;
	if (!(o->spec.alibi >= 0 && o->spec.alibi <= 1e6))
		return util_error(err, errlen, "--alibi must be a slope from 0 to "
		    "1e6, not '%s'", v);
	o->spec.alibi_set = 1;
	return 0;
}

static int
set_dropout(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (options_double("dropout", v, &o->spec.dropout, err, errlen) != 0)
		return -1;
	if (!(o->spec.dropout >= 0 && o->spec.dropout < 1 &&
	    (float)o->spec.dropout < 1.0f))
		return util_error(err, errlen, "--dropout must be a probability "
		    "from 0 to below 1, not '%s'", v);
	o->spec.dropout_set = 1;
	return 0;
}

/* A non-negative integer of digits only, below limit + 1 (strtoull
 * alone skips blanks and takes "-1" as 2^64 - 1). */
static int
read_count(const char *name, const char *v, unsigned long long limit,
    uint64_t *out, char *err, size_t errlen)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (!isdigit((unsigned char)*v) || *end != '\0' || errno != 0 ||
	    x > limit)
		return util_error(err, errlen, "--%s must be an integer from 0 to "
		    "%llu, not '%s'", name, limit, v);
	*out = x;
	return 0;
}

static int
set_dropout_seed(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	return read_count("dropout-seed", v, UINT64_MAX, &o->spec.dropout_seed,
	    err, errlen);
}

static int
set_dropout_offset(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	return read_count("dropout-offset", v, UINT32_MAX,
	    &o->spec.dropout_offset, err, errlen);
}

/* A packed batch's lengths: their form here, the rest (counts that
 * agree, what a packed batch does not take) in problem_build. */
static int
set_seqlens_one(const char *name, const char *v, const char **out, char *err,
    size_t errlen)
{
	int n;

	if (problem_seqlens(v, name, NULL, 0, &n, err, errlen) != 0)
		return -1;
	*out = v;
	return 0;
}

static int
set_seqlens(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (options_given(o, "seqlens-q") || options_given(o, "seqlens-k"))
		return util_error(err, errlen, "--seqlens gives the lengths of Q "
		    "and K both: not with --seqlens-q or --seqlens-k");
	if (set_seqlens_one("seqlens", v, &o->spec.seqlens_q, err, errlen) != 0)
		return -1;
	o->spec.seqlens_k = v;
	return 0;
}

static int
set_seqlens_q(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (options_given(o, "seqlens"))
		return util_error(err, errlen, "--seqlens-q: --seqlens already "
		    "gives the lengths of Q and K");
	return set_seqlens_one("seqlens-q", v, &o->spec.seqlens_q, err, errlen);
}

static int
set_seqlens_k(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (options_given(o, "seqlens"))
		return util_error(err, errlen, "--seqlens-k: --seqlens already "
		    "gives the lengths of Q and K");
	return set_seqlens_one("seqlens-k", v, &o->spec.seqlens_k, err, errlen);
}

/* The list is read again by problem_build, against --heads. */
static int
set_alibi_slopes(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;
	int n;

	if (problem_slopes(v, NULL, 0, &n, err, errlen) != 0)
		return -1;
	o->spec.alibi_slopes = v;
	return 0;
}

static int
set_scale(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (options_double("scale", v, &o->spec.scale, err, errlen) != 0)
		return -1;
	if (o->spec.scale <= 0)
		return util_error(err, errlen, "--scale must be positive, not '%s'", v);
	/* The simulator scales in float32: a scale it cannot hold would
	 * become inf (every score inf) or 0. */
	if (o->spec.scale > FLT_MAX || (float)o->spec.scale == 0.0f)
		return util_error(err, errlen, "--scale must be within float32's "
		    "range (%g to %g), not '%s'", (double)FLT_TRUE_MIN,
		    (double)FLT_MAX, v);
	o->spec.scale_set = 1;
	return 0;
}

static int
set_seed(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(v, &end, 10);
	/* strtoull skips blanks and takes "-1" as 2^64 - 1: a seed is
	 * digits only. */
	if (!isdigit((unsigned char)*v) || *end != '\0' || errno != 0)
		return util_error(err, errlen, "--seed must be a non-negative "
		    "integer, not '%s'", v);
	o->spec.seed = x;
	return 0;
}

static int
set_input(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (inputs_kind_parse(v, &o->spec.input) != 0)
		return util_error(err, errlen, "--input must be normal, uniform, "
		    "ramp, spike or outliers, not '%s'", v);
	return 0;
}

static int
set_path(const char **dst, const char *name, const char *v, char *err,
    size_t errlen)
{
	if (*v == '\0')
		return util_error(err, errlen, "--%s needs a file name", name);
	*dst = v;
	return 0;
}

#define PATH_SETTER(fn, field, name)					\
static int								\
fn(void *ctx, const char *v, char *err, size_t errlen)			\
{									\
	struct options *o = ctx;					\
	return set_path(&o->field, name, v, err, errlen);		\
}
PATH_SETTER(set_q, spec.q.path, "q")
PATH_SETTER(set_k, spec.k.path, "k")
PATH_SETTER(set_v, spec.v.path, "v")
PATH_SETTER(set_scores, spec.s.path, "scores")
PATH_SETTER(set_output, output, "output")
PATH_SETTER(set_lse, lse, "lse")
PATH_SETTER(set_grad_output, spec.dout.path, "grad-output")
PATH_SETTER(set_grad_q, grad_q, "grad-q")
PATH_SETTER(set_grad_k, grad_k, "grad-k")
PATH_SETTER(set_grad_v, grad_v, "grad-v")
PATH_SETTER(set_grad_s, grad_s, "grad-scores")

static int
set_backward(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct options *)ctx)->backward, v, err, errlen);
}

static int
set_grad_bug(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (backward_bug_parse(v, &o->grad_bug) != 0)
		return not_one_of(err, errlen, "grad-bug", grad_bug_word,
		    BACKWARD_BUGS, v);
	return 0;
}

static int
set_convention(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (online_convention_parse(v, &o->rule.convention) != 0)
		return not_one_of(err, errlen, "convention", convention_word,
		    ONLINE_CONVENTIONS, v);
	o->convention_set = 1;
	return 0;
}

static int
set_bug(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (online_bug_parse(v, &o->rule.bug) != 0)
		return not_one_of(err, errlen, "bug", bug_word, ONLINE_BUGS, v);
	return 0;
}

static const char *
mask_bug_word(int i)
{
	return mask_bug_name((enum mask_bug)i);
}

static int
set_mask_bug(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (mask_bug_parse(v, &o->rule.mask_bug) != 0)
		return not_one_of(err, errlen, "mask-bug", mask_bug_word, MASK_BUGS,
		    v);
	return 0;
}

static int
set_dtype(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (dtype_parse(v, &o->spec.dtype) != 0)
		return util_error(err, errlen, "--dtype must be fp32, fp16, bf16 "
		    "or fp8, not '%s'", v);
	return 0;
}

static const struct options_entry problem_entries[] = {
	{ "tq", "N", "query rows Tq (default 16)", set_tq },
	{ "tk", "N", "keys Tk (default Tq)", set_tk },
	{ "d", "N", "width of Q and K (default 4)", set_d },
	{ "dv", "N", "width of V and O (default d)", set_dv },
	{ "seqlens", "A,B,..", "a packed batch: sequences of these lengths "
	    "(Q and K), end to end", set_seqlens },
	{ "seqlens-q", "A,B,..", "a packed batch's query lengths (with "
	    "--seqlens-k)", set_seqlens_q },
	{ "seqlens-k", "A,B,..", "a packed batch's key lengths, one per "
	    "query length", set_seqlens_k },
	{ "br", "N", "query rows per tile Br (default 4)", set_br },
	{ "bc", "N", "keys per tile Bc (default 4)", set_bc },
	{ "order", "fa1|fa2", "loop order (default fa2)", set_order },
	{ "causal", NULL, "causal mask, bottom-right (= --window -1,0)",
	    set_causal },
	{ "window", "L,R", "keys r+Tk-Tq-L .. r+Tk-Tq+R (-1: unbounded)",
	    set_window },
	{ "softcap", "C", "scores -> C tanh(s/C), before the max", set_softcap },
	{ "alibi", "SLOPE", "add -SLOPE |r+Tk-Tq-c| to the scores", set_alibi },
	{ "alibi-slopes", "A,B,..", "ALiBi, one slope per query head",
	    set_alibi_slopes },
	{ "dropout", "P", "drop each entry of P with probability P, the rest "
	    "scaled by 1/(1-P)", set_dropout },
	{ "dropout-seed", "N", "the dropout generator's key (default 0)",
	    set_dropout_seed },
	{ "dropout-offset", "K", "the dropout counter's offset word (default 0)",
	    set_dropout_offset },
	{ "page-size", "N", "K/V in a paged cache of N keys a page (any N >= 1; "
	    "a tile may span pages)", options_set_page_size },
	{ "block-table", "T.npy", "the page table: int32/int64, one physical "
	    "page a logical page (default: shuffled from --seed)",
	    options_set_block_table },
	{ "scale", "X", "score scale (default 1/sqrt(d))", set_scale },
	{ "seed", "N", "seed of the generated inputs (default 1)", set_seed },
	{ "input", "KIND", "normal|uniform|ramp|spike|outliers (default ramp)",
	    set_input },
	{ "q", "Q.npy", "queries (Tq, d) from a file; with --k and --v", set_q },
	{ "k", "K.npy", "keys (Tk, d) from a file", set_k },
	{ "v", "V.npy", "values (Tk, dv) from a file", set_v },
	{ "scores", "S.npy", "scores (Tq, Tk) given directly; with --v", set_scores },
	{ "convention", "NAME", "", set_convention },
	{ "bug", "NAME", "", set_bug },
	{ "mask-bug", "NAME", "", set_mask_bug },
	{ "dtype", "TYPE", "fp32|fp16|bf16|fp8: storage type emulated (default "
	    "fp32; fp8 is e4m3 with block scales)", set_dtype },
	{ "fp8-block", "N", "fp8: rows of Q, K, V sharing one scale (default "
	    "a tile's: Br for Q, Bc for K and V)", options_set_fp8_block },
	{ "hadamard", NULL, "fp8: rotate Q and K by one random Hadamard matrix "
	    "(d a power of two)", options_set_hadamard },
	{ "fp8-bug", "NAME", "", options_set_fp8_bug },
	{ NULL, NULL, NULL, NULL },
};

/* Split-KV and grouped heads (OPT_SPLIT). */

static int
set_splits(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;
	long x;

	if (options_int("splits", v, 1, 65536, &x, err, errlen) != 0)
		return -1;
	o->split.splits = (int)x;
	return 0;
}

static int
set_partials(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (combine_form_parse(v, &o->split.partials) != 0)
		return util_error(err, errlen, "--partials must be mlu or olse, "
		    "not '%s'", v);
	return 0;
}

static int
set_merge_order(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (combine_order_parse(v, &o->combine.order) != 0)
		return util_error(err, errlen, "--merge-order must be ltr, tree or "
		    "reverse, not '%s'", v);
	return 0;
}

static int
set_merge_bug(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (combine_bug_parse(v, &o->combine.bug) != 0)
		return not_one_of(err, errlen, "merge-bug", merge_bug_word,
		    MERGE_BUGS, v);
	return 0;
}

static int
set_heads(void *ctx, const char *v, char *err, size_t errlen)
{
	return set_size(&((struct options *)ctx)->spec.heads, "heads", v, err,
	    errlen);
}

static int
set_kv_heads(void *ctx, const char *v, char *err, size_t errlen)
{
	return set_size(&((struct options *)ctx)->spec.kv_heads, "kv-heads", v,
	    err, errlen);
}

static int
set_pack_gqa(void *ctx, const char *v, char *err, size_t errlen)
{
	return options_set_flag(&((struct options *)ctx)->split.pack_gqa, v,
	    err, errlen);
}

static const struct options_entry split_entries[] = {
	{ "splits", "N", "cut each row block's keys into N ranges (split-KV)",
	    set_splits },
	{ "partials", "FORM", "mlu|olse: ranges end in (m, l, u) or (o, lse) "
	    "(default mlu)", set_partials },
	{ "merge-order", "ORDER", "ltr|tree|reverse: how partials merge "
	    "(default ltr)", set_merge_order },
	{ "merge-bug", "NAME", "", set_merge_bug },
	{ "heads", "H", "query heads (default 1)", set_heads },
	{ "kv-heads", "G", "K/V heads, each shared by H/G query heads "
	    "(default H)", set_kv_heads },
	{ "pack-gqa", NULL, "pack a K/V head's query rows into one row block",
	    set_pack_gqa },
	{ NULL, NULL, NULL, NULL },
};

static const struct options_entry outfile_entries[] = {
	{ "output", "O.npy", "write the output O (Tq, dv)", set_output },
	{ "lse", "L.npy", "write the log-sum-exp (Tq)", set_lse },
	{ NULL, NULL, NULL, NULL },
};

/* Every one but --backward needs --backward (options_parse checks). */
static const struct options_entry backward_entries[] = {
	{ "backward", NULL, "run the backward pass too (FlashAttention 2)",
	    set_backward },
	{ "grad-output", "dO.npy", "the upstream gradient dO (Tq, dv) "
	    "(default: N(0,1) from --seed)", set_grad_output },
	{ "grad-bug", "NAME", "", set_grad_bug },
	{ "grad-q", "dQ.npy", "write dQ (Tq, d)", set_grad_q },
	{ "grad-k", "dK.npy", "write dK (Tk, d)", set_grad_k },
	{ "grad-v", "dV.npy", "write dV (Tk, dv)", set_grad_v },
	{ "grad-scores", "dS.npy", "write dS (Tq, Tk), the gradient of S",
	    set_grad_s },
	{ NULL, NULL, NULL, NULL },
};

const struct options_entry *
options_group_entries(unsigned group)
{
	switch (group) {
	case OPT_PROBLEM:
		return problem_entries;
	case OPT_OUTFILES:
		return outfile_entries;
	case OPT_BACKWARD:
		return backward_entries;
	case OPT_SPLIT:
		return split_entries;
	default:
		return NULL;
	}
}

void
options_init(struct options *o)
{
	memset(o, 0, sizeof *o);
	problem_spec_init(&o->spec);
	o->tiling.br = PROBLEM_DEFAULT_TILE;
	o->tiling.bc = PROBLEM_DEFAULT_TILE;
	o->tiling.order = ORDER_FA2;
	o->rule.convention = CONV_UNNORMALIZED;
	o->rule.bug = BUG_NONE;
}

void
options_free(struct options *o)
{
	free(o->args);
	free(o->given);
	o->args = NULL;
	o->given = NULL;
	o->nargs = 0;
	o->ngiven = 0;
}

int
options_given(const struct options *o, const char *name)
{
	int i;

	for (i = 0; i < o->ngiven; i++)
		if (strcmp(o->given[i], name) == 0)
			return 1;
	return 0;
}

/* An option that the inputs given make meaningless is refused, not
 * silently dropped (as --scale with --scores is, in problem_build). */
static int
options_check_unused(const struct options *o, char *err, size_t errlen)
{
	static const char *const generator[] = { "input", "seed" };
	const char *files = options_given(o, "scores") ? "--scores" :
	    options_given(o, "q") || options_given(o, "k") ? "--q/--k/--v" : NULL;
	size_t i;

	if (options_given(o, "scores") && options_given(o, "d"))
		return util_error(err, errlen, "--d does not apply to a scores "
		    "problem (S is given; there is no Q or K to have a width)");
	for (i = 0; files != NULL && i < sizeof generator / sizeof *generator; i++)
		if (options_given(o, generator[i]))
			return util_error(err, errlen, "--%s does not apply with %s "
			    "(it shapes generated inputs; these come from files)",
			    generator[i], files);
	return 0;
}

static const struct options_entry *
find(const struct options_entry *table, const char *name, size_t len)
{
	if (table == NULL)
		return NULL;
	for (; table->name != NULL; table++)
		if (strlen(table->name) == len && strncmp(table->name, name, len) == 0)
			return table;
	return NULL;
}

/* The split options that mean nothing without splits are refused, and
 * unweighted (a bug of normalized partials) picks olse unless mlu was
 * asked for. */
static int
split_check(struct options *o, char *err, size_t errlen)
{
	static const char *const need_splits[] = {
		"partials", "merge-order", "merge-bug",
	};
	size_t i;

	/* One of --heads and --kv-heads alone: as many of the other. */
	if (!options_given(o, "kv-heads"))
		o->spec.kv_heads = o->spec.heads;
	else if (!options_given(o, "heads"))
		o->spec.heads = o->spec.kv_heads;
	if (o->split.splits < 2)
		for (i = 0; i < sizeof need_splits / sizeof need_splits[0]; i++)
			if (options_given(o, need_splits[i]))
				return util_error(err, errlen, "--%s applies to "
				    "split runs (give --splits 2 or more)",
				    need_splits[i]);
	if (o->combine.bug == MERGE_BUG_UNWEIGHTED && !options_given(o, "partials"))
		o->split.partials = MERGE_OLSE;
	/* The backward of a split forward starts from the combine's O and
	 * lse (fulltimeline.h); that of grouped heads is not modelled. */
	if (o->backward && o->spec.heads > 1) {
		/* Name what made the heads: --kv-heads alone makes as many
		 * query heads (above), and "drop --heads" would name an option
		 * that is not there. */
		if (options_given(o, "heads"))
			return util_error(err, errlen, "--backward runs one head: "
			    "the backward of grouped heads is not modelled (drop "
			    "--heads%s)", options_given(o, "kv-heads") ?
			    " and --kv-heads" : "");
		return util_error(err, errlen, "--backward runs one head, and "
		    "--kv-heads %d makes %d query heads: the backward of grouped "
		    "heads is not modelled (drop --kv-heads)", o->spec.kv_heads,
		    o->spec.heads);
	}
	return 0;
}

int
options_parse(int argc, char **argv, int first, unsigned groups,
    const struct options_entry *extra, void *ctx, struct options *o,
    char *err, size_t errlen)
{
	const struct options_entry *e;
	const char *name, *eq, *value;
	void *target;
	size_t len;
	int i, needs;

	o->args = calloc((size_t)argc + 1, sizeof *o->args);
	o->given = calloc((size_t)argc + 1, sizeof *o->given);
	/* The counts go with the arrays (a copied struct options brings
	 * its own). */
	o->nargs = 0;
	o->ngiven = 0;
	if (o->args == NULL || o->given == NULL)
		return util_error(err, errlen, "out of memory");
	for (i = first; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			o->help = 1;
			continue;
		}
		if (strcmp(argv[i], "--") == 0) {
			while (++i < argc)
				o->args[o->nargs++] = argv[i];
			break;
		}
		if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '\0') {
			if (argv[i][0] == '-' && argv[i][1] != '\0')
				return util_error(err, errlen, "unknown option '%s' "
				    "(options are spelt --name)", argv[i]);
			o->args[o->nargs++] = argv[i];
			continue;
		}
		name = argv[i] + 2;
		eq = strchr(name, '=');
		len = eq != NULL ? (size_t)(eq - name) : strlen(name);
		target = ctx;
		e = find(extra, name, len);
		if (e == NULL && (groups & OPT_PROBLEM)) {
			e = find(problem_entries, name, len);
			target = o;
		}
		if (e == NULL && (groups & OPT_OUTFILES)) {
			e = find(outfile_entries, name, len);
			target = o;
		}
		if (e == NULL && (groups & OPT_BACKWARD)) {
			e = find(backward_entries, name, len);
			target = o;
		}
		if (e == NULL && (groups & OPT_SPLIT)) {
			e = find(split_entries, name, len);
			target = o;
		}
		if (e == NULL)
			return util_error(err, errlen, "unknown option '--%.*s' "
			    "(see --help)", (int)len, name);
		if (e->metavar == NULL) {
			if (eq != NULL)
				return util_error(err, errlen, "--%s takes no value",
				    e->name);
			value = NULL;
		} else if (eq != NULL)
			value = eq + 1;
		else if (i + 1 < argc)
			value = argv[++i];
		else
			return util_error(err, errlen, "--%s needs a value (%s)",
			    e->name, e->metavar);
		/* Given twice, one value would be dropped without a word
		 * (`--output a --output b` wrote only b): refused.  A flag
		 * given twice means what it means once. */
		if (value != NULL && options_given(o, e->name))
			return util_error(err, errlen, "--%s is given twice; give it "
			    "once", e->name);
		if (e->set(target, value, err, errlen) != 0)
			return -1;
		o->given[o->ngiven++] = e->name;
	}
	for (i = 0; i < o->ngiven && !o->backward; i++)
		if (strncmp(o->given[i], "grad-", 5) == 0)
			return util_error(err, errlen, "--%s needs --backward",
			    o->given[i]);
	if ((groups & OPT_PROBLEM) && (options_check_unused(o, err, errlen) != 0 ||
	    options_fp8_check(o, err, errlen) != 0))
		return -1;
	/* A bug of one convention (forget-old-denominator: of the
	 * normalized update) picks it unless the user chose the other on
	 * purpose. */
	needs = online_bug_mode(o->rule.bug)->needs;
	if ((groups & OPT_PROBLEM) && needs != ONLINE_ANY_CONVENTION &&
	    !o->convention_set)
		o->rule.convention = (enum online_convention)needs;
	return (groups & OPT_SPLIT) ? split_check(o, err, errlen) : 0;
}

/* The help of the options whose values are a table's names: made from
 * the table (the bug modes' is online_rule.h's), so a new row shows in
 * --help with nothing written here.  Their entries' help is "". */
static const struct {
	int (*set)(void *ctx, const char *value, char *err, size_t errlen);
	void (*more)(char *buf, size_t len);
} generated_help[] = {
	{ set_convention, convention_more },
	{ set_bug, bug_more },
	{ set_merge_bug, merge_bug_more },
	{ set_grad_bug, grad_bug_more },
	{ options_set_fp8_bug, options_fp8_bug_more },
	{ set_mask_bug, mask_bug_more },
};

/* The columns of the option table: the name from NAME_COL, its help
 * from HELP_COL (wrapped lines too), and a generated help's further
 * lines ("NAME: what it breaks") from MORE_COL, their wrapped lines two
 * deeper. */
enum { NAME_COL = 2, HELP_COL = 25, MORE_COL = HELP_COL + 2 };

/* One option: its name and help, and the generated help's lines after
 * the first indented under it, all wrapped by help_wrap. */
static void
usage_table(FILE *f, const struct options_entry *e)
{
	char left[40], more[1200], first[1600];
	const char *at, *nl;
	size_t i;
	int col;

	for (; e->name != NULL; e++) {
		snprintf(left, sizeof left, "--%s%s%s", e->name,
		    e->metavar ? " " : "", e->metavar ? e->metavar : "");
		more[0] = '\0';
		for (i = 0; i < sizeof generated_help / sizeof generated_help[0];
		    i++)
			if (generated_help[i].set == e->set)
				generated_help[i].more(more, sizeof more);
		nl = strchr(more, '\n');
		snprintf(first, sizeof first, "%s%.*s", e->help,
		    nl != NULL ? (int)(nl - more) : (int)strlen(more), more);
		col = fprintf(f, "%*s%-*s ", NAME_COL, "", HELP_COL - NAME_COL - 1,
		    left);
		help_wrap(f, first, strlen(first), col, HELP_COL);
		for (at = nl; at != NULL; at = nl) {
			nl = strchr(at + 1, '\n');
			col = fprintf(f, "%*s", MORE_COL, "");
			help_wrap(f, at + 1, nl != NULL ? (size_t)(nl - at - 1) :
			    strlen(at + 1), col, MORE_COL + 2);
		}
	}
}

void
options_usage(FILE *f, unsigned groups, const struct options_entry *extra)
{
	if (extra != NULL && extra->name != NULL)
		usage_table(f, extra);
	if (groups & OPT_PROBLEM) {
		fputs("\nproblem options:\n", f);
		usage_table(f, problem_entries);
	}
	if (groups & OPT_OUTFILES)
		usage_table(f, outfile_entries);
	if (groups & OPT_BACKWARD) {
		fputs("\nbackward pass:\n", f);
		usage_table(f, backward_entries);
	}
	if (groups & OPT_SPLIT) {
		fputs("\nsplit-KV and grouped-head options:\n", f);
		usage_table(f, split_entries);
	}
	fputs("  -h, --help             this help\n", f);
}
