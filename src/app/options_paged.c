/*
 * options_paged.c - --page-size and --block-table (options_paged.h).
 * The table's file is read, and its entries checked, when the problem is
 * built (model/paged.c): only then is Tk known.
 */
#include "config.h"

#include "options_paged.h"
#include "options.h"
#include "model/util.h"

int
options_set_page_size(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;
	long x;

	if (options_int("page-size", v, 1, OPTIONS_MAX_PAGE_SIZE, &x, err,
	    errlen) != 0)
		return -1;
	o->spec.page_size = (int)x;
	return 0;
}

int
options_set_block_table(void *ctx, const char *v, char *err, size_t errlen)
{
	struct options *o = ctx;

	if (*v == '\0')
		return util_error(err, errlen, "--block-table needs a file name");
	o->spec.block_table = v;
	return 0;
}
