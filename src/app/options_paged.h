/*
 * options_paged.h - the problem options of a paged KV cache
 * (--page-size, --block-table) and their setters for options.c's table.
 * What they mean is model/paged.h's.
 */
#ifndef FLASHSTEP_OPTIONS_PAGED_H
#define FLASHSTEP_OPTIONS_PAGED_H

#include <stddef.h>

/* Setters for the problem table; ctx is a struct options. */
int options_set_page_size(void *ctx, const char *v, char *err, size_t errlen);
int options_set_block_table(void *ctx, const char *v, char *err,
    size_t errlen);

/* The most keys a page may hold. */
#define OPTIONS_MAX_PAGE_SIZE (1L << 20)

#endif
