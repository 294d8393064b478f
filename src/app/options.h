/*
 * options.h - the command line options that commands share.
 *
 * Every command that runs a problem accepts the problem options (sizes,
 * tiles, order, mask, inputs, update rule, dtype); commands add their own
 * through a table of options_entry.  Both `--name value` and
 * `--name=value` work.  A bad value stops parsing with one line in err
 * naming the option and what is wrong; callers then exit 2.
 */
#ifndef FLASHSTEP_OPTIONS_H
#define FLASHSTEP_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "model/backward.h"
#include "model/combine.h"
#include "model/online.h"
#include "model/problem.h"
#include "model/schedule.h"

/* Which shared groups a command accepts. */
#define OPT_PROBLEM	0x1	/* --tq ... --dtype */
#define OPT_OUTFILES	0x2	/* --output, --lse */
#define OPT_BACKWARD	0x4	/* --backward, --grad-* */
#define OPT_SPLIT	0x8	/* --splits ... --pack-gqa: split-KV, grouped heads */

/* A command's own option.  set() gets the value (NULL for a flag). */
struct options_entry {
	const char *name;	/* without the leading "--" */
	const char *metavar;	/* NULL: a flag that takes no value */
	const char *help;
	int (*set)(void *ctx, const char *value, char *err, size_t errlen);
};

struct options {
	struct problem_spec spec;
	struct tiling tiling;
	struct online_rule rule;
	int convention_set;
	struct split_plan split;	/* --splits, --partials, --pack-gqa */
	struct combine_rule combine;	/* --merge-order, --merge-bug */
	const char *output;	/* --output O.npy */
	const char *lse;	/* --lse L.npy */
	int backward;		/* --backward (dO is spec.dout) */
	enum backward_bug grad_bug;	/* --grad-bug */
	const char *grad_q, *grad_k, *grad_v, *grad_s;	/* --grad-q ... */
	int help;		/* -h / --help was given */
	int nargs;		/* positional arguments, in order */
	char **args;
	int ngiven;		/* the options given on the command line, */
	const char **given;	/* by name, in order (options_given) */
};

/* Defaults: the built-in example (see problem.h), fa2, unnormalized. */
void options_init(struct options *o);

/*
 * Parses argv[first..argc).  extra (may be NULL, ends with a zeroed
 * entry) holds the command's own options, given ctx.  Returns 0, or -1
 * with err set.  o->args points into argv (o->args and o->given are
 * malloc'd: free them with options_free).
 */
int options_parse(int argc, char **argv, int first, unsigned groups,
    const struct options_entry *extra, void *ctx, struct options *o,
    char *err, size_t errlen);
void options_free(struct options *o);

/* Was --name given on the command line that options_parse read?  (A
 * default and a value given equal to it are told apart this way.) */
int options_given(const struct options *o, const char *name);

/* Prints the options of the groups and of extra, one per line. */
void options_usage(FILE *f, unsigned groups, const struct options_entry *extra);

/* Strict parsers for command tables: the whole string must be a number
 * in range; otherwise -1 and "--name must be ..., not 'value'". */
int options_int(const char *name, const char *value, long min, long max,
    long *out, char *err, size_t errlen);
int options_double(const char *name, const char *value, double *out,
    char *err, size_t errlen);

/*
 * Writes word(0) .. word(n - 1) into buf (len bytes, cut there), joined
 * by sep and the last two by last: "a, b or c", "a|b|c".  Returns buf.
 * For help and error messages made from a table of names.
 */
const char *options_words(char *buf, size_t len, const char *(*word)(int),
    int n, const char *sep, const char *last);

/* Ready-made setters for a ctx that is an int flag / a long / a string. */
int options_set_flag(void *ctx, const char *value, char *err, size_t errlen);

/* The entries of one shared group (OPT_PROBLEM, OPT_OUTFILES,
 * OPT_BACKWARD or OPT_SPLIT; NULL for another value; each ends with a
 * zeroed entry), for readers of the same options in another syntax:
 * lesson scripts name them without the "--" and suggest the nearest name
 * for a misspelt one.  Their set() takes a struct options. */
const struct options_entry *options_group_entries(unsigned group);

#endif
