/* check_options.c - option parsing: values, errors, command tables. */
#include "config.h"

#include "testutil.h"
#include "app/options.h"
#include "app/helpwrap.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
parse(struct options *o, char *err, int n, ...)
{
	char *argv[32];
	va_list ap;
	int i, rc;

	argv[0] = "cmd";
	va_start(ap, n);
	for (i = 0; i < n; i++)
		argv[i + 1] = va_arg(ap, char *);
	va_end(ap);
	options_init(o);
	rc = options_parse(n + 1, argv, 1, OPT_PROBLEM | OPT_OUTFILES, NULL, NULL,
	    o, err, 256);
	options_free(o);
	return rc;
}

START_TEST(test_values)
{
	struct options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, 9, "--tq", "33", "--tk=47", "--order",
	    "fa1", "--causal", "--bug", "no-rescale", "--dtype=bf16"), 0);
	ck_assert_int_eq(o.spec.tq, 33);
	ck_assert_int_eq(o.spec.tk, 47);
	ck_assert_int_eq(o.tiling.order, ORDER_FA1);
	ck_assert(o.spec.causal);
	ck_assert_int_eq(o.rule.bug, BUG_NO_RESCALE);
	ck_assert_int_eq(o.spec.dtype, DTYPE_BF16);

	/* forget-old-denominator picks the normalized convention... */
	ck_assert_int_eq(parse(&o, err, 2, "--bug", "forget-old-denominator"), 0);
	ck_assert_int_eq(o.rule.convention, CONV_NORMALIZED);
	/* ...unless the user asked for the other one. */
	ck_assert_int_eq(parse(&o, err, 4, "--convention", "unnormalized", "--bug",
	    "forget-old-denominator"), 0);
	ck_assert_int_eq(o.rule.convention, CONV_UNNORMALIZED);
	ck_assert_int_eq(parse(&o, err, 2, "--seed", "18446744073709551615"), 0);
	ck_assert(o.spec.seed == 18446744073709551615ULL);
	ck_assert_int_eq(parse(&o, err, 1, "--help"), 0);
	ck_assert(o.help);
}
END_TEST

static const struct {
	const char *opt, *value, *word;
} bad[] = {
	{ "--tq", "0", "--tq must be a positive integer, not '0'" },
	{ "--tk", "-3", "--tk must be a positive integer" },
	{ "--d", "abc", "--d must be a positive integer, not 'abc'" },
	{ "--dv", "3.5", "--dv must be" },
	{ "--br", "99999999999", "--br must be" },
	{ "--bc", "", "--bc must be" },
	{ "--order", "fa3", "--order must be fa1 or fa2, not 'fa3'" },
	{ "--input", "gaussian", "--input must be" },
	{ "--convention", "both", "--convention must be" },
	{ "--bug", "typo", "--bug must be" },
	{ "--dtype", "fp4", "--dtype must be fp32, fp16, bf16 or fp8" },
	{ "--fp8-bug", "typo", "--fp8-bug must be none, whole-tensor or "
	    "rotate-q-only, not 'typo'" },
	{ "--fp8-block", "0", "--fp8-block must be" },
	{ "--hadamard=1", "1", "--hadamard takes no value" },
	{ "--scale", "-1", "--scale must be positive" },
	{ "--scale", "nan", "--scale must be a number" },
	{ "--seed", "-1", "--seed must be" },
	{ "--frobnicate", "1", "unknown option '--frobnicate'" },
	{ "-x", "1", "unknown option '-x'" },
	{ "--causal=yes", "1", "--causal takes no value" },
	/* A number past the top is told the top, not "positive". */
	{ "--tq", "2147483648", "--tq must be at most 2147483647" },
	{ "--tk", "99999999999999999999999", "--tk must be at most 2147483647" },
	/* A number out of double's range is said to be one. */
	{ "--scale", "1e-400", "--scale is out of range: '1e-400' underflows" },
	{ "--scale", "-1e999", "--scale is out of range: '-1e999' overflows" },
};

START_TEST(test_bad)
{
	struct options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, 2, bad[_i].opt, bad[_i].value), -1);
	ck_assert_msg(strstr(err, bad[_i].word) != NULL, "'%s' lacks '%s'", err,
	    bad[_i].word);
	ck_assert(strchr(err, '\n') == NULL);
}
END_TEST

START_TEST(test_missing_value)
{
	struct options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, 1, "--tq"), -1);
	ck_assert_msg(strstr(err, "--tq needs a value"), "%s", err);
}
END_TEST

/* A value option given twice is refused by name (one value would be
 * dropped); a flag twice is the flag once. */
START_TEST(test_repeated)
{
	struct options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, 4, "--output", "a.npy", "--output",
	    "b.npy"), -1);
	ck_assert_msg(strstr(err, "--output is given twice") != NULL, "%s", err);
	ck_assert_int_eq(parse(&o, err, 2, "--tq=4", "--tq=4"), -1);
	ck_assert_msg(strstr(err, "--tq is given twice") != NULL, "%s", err);
	ck_assert_int_eq(parse(&o, err, 2, "--causal", "--causal"), 0);
	ck_assert(o.spec.causal);
	/* A struct options parsed before (the view's edit form copies one)
	 * starts counting afresh. */
	ck_assert_int_eq(parse(&o, err, 2, "--tq", "4"), 0);
	options_init(&o);
	o.ngiven = 3;
	{
		char *argv[] = { "cmd", "--tq", "5", NULL };
		ck_assert_int_eq(options_parse(3, argv, 1, OPT_PROBLEM, NULL, NULL,
		    &o, err, sizeof err), 0);
		ck_assert_int_eq(o.ngiven, 1);
		options_free(&o);
	}
}
END_TEST

/* --kv-heads alone makes as many query heads: the refusal of the
 * backward names it, not the --heads that was never given. */
START_TEST(test_backward_heads)
{
	struct options o;
	char err[256], *argv[] = { "cmd", "--kv-heads", "2", "--backward", NULL };

	options_init(&o);
	ck_assert_int_eq(options_parse(4, argv, 1, OPT_PROBLEM | OPT_BACKWARD |
	    OPT_SPLIT, NULL, NULL, &o, err, sizeof err), -1);
	options_free(&o);
	ck_assert_msg(strstr(err, "--kv-heads 2 makes 2 query heads") != NULL &&
	    strstr(err, "drop --heads") == NULL, "%s", err);
}
END_TEST

static int
set_level(void *ctx, const char *v, char *err, size_t errlen)
{
	long x;

	if (options_int("level", v, 1, 9, &x, err, errlen) != 0)
		return -1;
	*(int *)ctx = (int)x;
	return 0;
}

START_TEST(test_extra_table)
{
	static const struct options_entry extra[] = {
		{ "level", "N", "a level", set_level },
		{ NULL, NULL, NULL, NULL },
	};
	char *argv[] = { "cmd", "--level", "7", "file", "--", "--tq" };
	struct options o;
	char err[256];
	int level = 0;

	options_init(&o);
	ck_assert_int_eq(options_parse(6, argv, 1, 0, extra, &level, &o, err,
	    sizeof err), 0);
	ck_assert_int_eq(level, 7);
	ck_assert_int_eq(o.nargs, 2);
	ck_assert_str_eq(o.args[0], "file");
	ck_assert_str_eq(o.args[1], "--tq");
	options_free(&o);
	/* Problem options are refused when the group is not accepted. */
	argv[1] = "--tq";
	options_init(&o);
	ck_assert_int_eq(options_parse(3, argv, 1, 0, extra, &level, &o, err,
	    sizeof err), -1);
	options_free(&o);
	argv[1] = "--level";
	argv[2] = "10";
	options_init(&o);
	ck_assert_int_eq(options_parse(3, argv, 1, 0, extra, &level, &o, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "from 1 to 9"), "%s", err);
	options_free(&o);
}
END_TEST

/* What the inputs make meaningless is refused, and numbers outside what
 * float32 or a seed can be. */
START_TEST(test_unused_and_ranges)
{
	struct options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, 5, "--scores", "s.npy", "--v", "v.npy",
	    "--d=3"), -1);
	ck_assert_msg(strstr(err, "--d does not apply"), "%s", err);
	ck_assert_int_eq(parse(&o, err, 8, "--q", "q", "--k", "k", "--v", "v",
	    "--seed", "2"), -1);
	ck_assert_msg(strstr(err, "--seed does not apply"), "%s", err);
	ck_assert_int_eq(parse(&o, err, 4, "--scores", "s", "--input", "normal"), -1);
	ck_assert_msg(strstr(err, "--input does not apply"), "%s", err);
	ck_assert_int_eq(parse(&o, err, 4, "--d", "3", "--seed", "2"), 0);
	ck_assert_int_eq(parse(&o, err, 2, "--scale", "1e39"), -1);
	ck_assert_msg(strstr(err, "float32's range"), "%s", err);
	ck_assert_int_eq(parse(&o, err, 2, "--scale", "1e-46"), -1);
	ck_assert_int_eq(parse(&o, err, 2, "--scale", "3e38"), 0);
	ck_assert_int_eq(parse(&o, err, 2, "--seed", " -1"), -1);
	ck_assert_int_eq(parse(&o, err, 2, "--seed", "+1"), -1);
	ck_assert_int_eq(parse(&o, err, 2, "--seed", "18446744073709551615"), 0);
	ck_assert_int_eq(parse(&o, err, 2, "--br", "7"), 0);
	ck_assert_int_eq(o.spec.br, 7);
	ck_assert_int_eq(parse(&o, err, 2, "--order", "fa1"), 0);
	ck_assert(o.spec.fa1);
}
END_TEST

/* The text options_usage prints for the groups and the table extra. */
static char *
usage_of(unsigned groups, const struct options_entry *extra)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	options_usage(f, groups, extra);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

/* text with every run of white space one space, and none after a '|',
 * in place: what --help says, wherever help_wrap broke its lines. */
static char *
squeezed(char *text)
{
	char *to = text, *at;

	for (at = text; *at != '\0'; at++)
		if (!isspace((unsigned char)*at))
			*to++ = *at;
		else if (to == text || (to[-1] != ' ' && to[-1] != '|'))
			*to++ = ' ';
	*to = '\0';
	return text;
}

/* The problem options' help, read as one line (see squeezed). */
static char *
usage_text(void)
{
	return squeezed(usage_of(OPT_PROBLEM, NULL));
}

/* The manual page, whole. */
static char *
manual_text(void)
{
	const char *top = getenv("top_srcdir");
	char path[1024], *doc;
	FILE *f;

	snprintf(path, sizeof path, "%s/doc/flashstep.1", top ? top : ".");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot read %s", path);
	doc = calloc(1, 1 << 17);
	ck_assert_ptr_nonnull(doc);
	ck_assert_int_gt((long)fread(doc, 1, (1 << 17) - 1, f), 100);
	fclose(f);
	return doc;
}

/*
 * Every row of the bug table (online_rule.h) is a --bug word that parses
 * to it and picks the convention it needs, is in the refusal of a bad
 * word, in --help with what it breaks, and in the manual page: options.c
 * names no mode itself.
 */
START_TEST(test_bug_table)
{
	const struct online_bug_mode *m;
	struct options o;
	char err[256], word[80], *help = usage_text(), *doc = manual_text();
	const char *at;
	size_t n;
	int b;

	ck_assert_int_eq(parse(&o, err, 2, "--bug", "no-such-bug"), -1);
	for (b = 0; b < ONLINE_BUGS; b++) {
		m = online_bug_mode((enum online_bug)b);
		ck_assert_msg(strstr(err, m->name) != NULL, "'%s' lacks %s", err,
		    m->name);
		ck_assert_int_eq(parse(&o, err, 2, "--bug", m->name), 0);
		ck_assert_int_eq((int)o.rule.bug, b);
		ck_assert_int_eq((int)o.rule.convention, m->needs ==
		    ONLINE_ANY_CONVENTION ? CONV_UNNORMALIZED : m->needs);
		/* "NAME: what it breaks", a line of its own before the
		 * wrapping. */
		snprintf(word, sizeof word, " %s: %s", m->name, m->breaks);
		ck_assert_msg(strstr(help, word) != NULL, "--help lacks '%s':\n%s",
		    word, help);
		/* roff spells '-' as '\-'. */
		for (at = m->name, n = 0; *at != '\0' && n + 2 < sizeof word; at++) {
			if (*at == '-')
				word[n++] = '\\';
			word[n++] = *at;
		}
		word[n] = '\0';
		ck_assert_msg(strstr(doc, word) != NULL, "flashstep.1 lacks %s",
		    word);
		ck_assert_int_eq(parse(&o, err, 2, "--bug", "no-such-bug"), -1);
	}
	free(help);
	free(doc);
}
END_TEST

/* --fp8-bug reads fp8.c's table: every row parses, its help line is in
 * --help, and flashstep.1 names it. */
START_TEST(test_fp8_bug_table)
{
	const struct fp8_bug_mode *m;
	struct options o;
	char err[256], word[160], *help = usage_text(), *doc = manual_text();
	const char *at;
	size_t n;
	int b;

	for (b = 0; b < FP8_BUGS; b++) {
		m = fp8_bug_mode((enum fp8_bug)b);
		ck_assert_msg(parse(&o, err, 5, "--dtype", "fp8", "--hadamard",
		    "--fp8-bug", m->word) == 0, "%s", err);
		ck_assert_int_eq((int)o.spec.fp8.bug, b);
		snprintf(word, sizeof word, " %s: %s", m->word, m->what);
		ck_assert_msg(strstr(help, word) != NULL, "--help lacks '%s'",
		    word);
		for (at = m->word, n = 0; *at != '\0' && n + 2 < sizeof word; at++) {
			if (*at == '-')
				word[n++] = '\\';
			word[n++] = *at;
		}
		word[n] = '\0';
		ck_assert_msg(strstr(doc, word) != NULL, "flashstep.1 lacks %s",
		    word);
	}
	free(help);
	free(doc);
}
END_TEST

static int
no_set(void *ctx, const char *value, char *err, size_t errlen)
{
	(void)ctx;
	(void)value;
	(void)err;
	(void)errlen;
	return 0;
}

/*
 * Every line of --help fits in a terminal's 80 columns, whatever the
 * tables hold: long help breaks at spaces (or after a '|' of a list of
 * names) onto lines indented under the help column, a name wider than
 * its column pushes its help along, and UTF-8 counts by characters.
 * Nothing is lost: each entry's help is in the text, read as one line.
 */
START_TEST(test_usage_fits)
{
	static const struct options_entry extra[] = {
		{ "long-help", NULL, "a help of many words, so many that no "
		    "line of a terminal holds them all, nor two lines, nor "
		    "even three: each break falls between two words and the "
		    "next line starts under the first word of the help, as "
		    "a reader expects it to", no_set },
		{ "a-rather-long-option-name", "VALUES", "pushes its help past "
		    "the column the others start in, and still wraps at the "
		    "edge", no_set },
		{ "words", "NAME", "one|of|a|list|of|names|joined|without|any|"
		    "space|between|them|that|is|wider|than|a|line|of|eighty|"
		    "columns|by|itself", no_set },
		{ "umlauts", NULL, "größer größer größer größer größer größer "
		    "größer größer größer größer größer größer größer größer "
		    "größer größer größer größer", no_set },
		{ NULL, NULL, NULL, NULL },
	};
	static const unsigned groups[] = { OPT_PROBLEM, OPT_OUTFILES,
	    OPT_BACKWARD, OPT_SPLIT };
	const struct options_entry *e;
	char *text = usage_of(OPT_PROBLEM | OPT_OUTFILES | OPT_BACKWARD |
	    OPT_SPLIT, extra), *line, *nl, want[1024];
	size_t g, lead;
	int cols, widest = 0, over80bytes = 0;

	for (line = text; *line != '\0'; line = nl + 1) {
		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		cols = help_columns(line, (size_t)(nl - line));
		ck_assert_msg(cols <= 80, "%d columns: '%.*s'", cols,
		    (int)(nl - line), line);
		widest = cols > widest ? cols : widest;
		over80bytes |= nl - line > 80;
		/* A line that is not an option's own starts under the help
		 * column (25). */
		lead = strspn(line, " ");
		if (lead > 0 && line[lead] != '-')
			ck_assert_msg(lead >= 25, "indented %zu: '%.*s'", lead,
			    (int)(nl - line), line);
	}
	/* The lines are filled, not cut short: the widest reaches the
	 * edge's neighbourhood, and a UTF-8 line passes 80 bytes. */
	ck_assert_int_ge(widest, 75);
	ck_assert_msg(over80bytes, "no UTF-8 line is over 80 bytes: "
	    "columns counted as bytes?");
	squeezed(text);
	for (e = extra; e->name != NULL; e++)
		ck_assert_msg(strstr(text, e->help) != NULL, "--help lost '%s'",
		    e->help);
	for (g = 0; g < sizeof groups / sizeof groups[0]; g++)
		for (e = options_group_entries(groups[g]); e->name != NULL; e++) {
			snprintf(want, sizeof want, "%s", e->help);
			ck_assert_msg(strstr(text, squeezed(want)) != NULL,
			    "--help lost '%s'", want);
		}
	free(text);
}
END_TEST

/* options_words joins a table's names. */
static const char *
test_word(int i)
{
	static const char *const w[] = { "a", "b", "c" };

	return w[i];
}

START_TEST(test_words)
{
	char buf[32];

	ck_assert_str_eq(options_words(buf, sizeof buf, test_word, 3, ", ",
	    " or "), "a, b or c");
	ck_assert_str_eq(options_words(buf, sizeof buf, test_word, 3, "|", NULL),
	    "a|b|c");
	ck_assert_str_eq(options_words(buf, sizeof buf, test_word, 1, ", ",
	    " or "), "a");
	ck_assert_str_eq(options_words(buf, 4, test_word, 3, ", ", " or "),
	    "a, ");
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_values);
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(tc, test_missing_value);
	tcase_add_test(tc, test_repeated);
	tcase_add_test(tc, test_backward_heads);
	tcase_add_test(tc, test_extra_table);
	tcase_add_test(tc, test_unused_and_ranges);
	tcase_add_test(tc, test_bug_table);
	tcase_add_test(tc, test_fp8_bug_table);
	tcase_add_test(tc, test_usage_fits);
	tcase_add_test(tc, test_words);
	suite_add_tcase(s, tc);
	return s;
}
