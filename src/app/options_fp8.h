/*
 * options_fp8.h - the problem options of --dtype fp8 (--fp8-block,
 * --hadamard, --fp8-bug), their setters for options.c's table, and the
 * refusal of what they cannot mean.
 */
#ifndef FLASHSTEP_OPTIONS_FP8_H
#define FLASHSTEP_OPTIONS_FP8_H

#include <stddef.h>

struct options;

/* Setters for the problem table; ctx is a struct options. */
int options_set_fp8_block(void *ctx, const char *v, char *err, size_t errlen);
int options_set_hadamard(void *ctx, const char *v, char *err, size_t errlen);
int options_set_fp8_bug(void *ctx, const char *v, char *err, size_t errlen);

/* --fp8-bug's generated help: the words, then what each does. */
void options_fp8_bug_more(char *buf, size_t len);

/* After parsing: an fp8 option without --dtype fp8, a bug mode that
 * needs --hadamard without it, whole-tensor with --fp8-block, and fp8
 * with --backward or --scores are refused.  0, or -1 with err set. */
int options_fp8_check(const struct options *o, char *err, size_t errlen);

#endif
