/*
 * paged.c - the page table and the pool of a paged KV cache (paged.h).
 */
#include "config.h"

#include "paged.h"
#include "inputs.h"
#include "npy.h"
#include "schedule.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* The seed's table: a Fisher-Yates shuffle of 0 .. n-1, on a stream of
 * its own (the inputs' numbers stay as they are). */
static void
shuffled(int *table, int n, uint64_t seed)
{
	struct inputs_rng rng;
	int b, x, tmp;

	inputs_rng_seed(&rng, seed ^ 0x7061676564206b76ULL);
	for (b = 0; b < n; b++)
		table[b] = b;
	for (b = n - 1; b > 0; b--) {
		x = (int)(inputs_rng_next(&rng) % (uint64_t)(b + 1));
		tmp = table[b];
		table[b] = table[x];
		table[x] = tmp;
	}
}

/* The file's table, checked: long enough, in the pool, no repeats. */
static int
from_file(const char *path, int pages, struct paged_cache *pc, char *err,
    size_t errlen)
{
	long *raw, n, b;
	unsigned char *seen = NULL;
	int rc = -1;

	if (npy_read_index(path, &raw, &n, err, errlen) != 0)
		return -1;
	if (n < pages) {
		util_error(err, errlen, "%s: %ld pages, but --tk needs %d "
		    "(ceil(Tk / page size))", path, n, pages);
		goto done;
	}
	if (n > 1L << 24) {
		util_error(err, errlen, "%s: %ld pages, more than a pool of "
		    "%ld", path, n, 1L << 24);
		goto done;
	}
	seen = calloc((size_t)n, 1);
	pc->table = calloc((size_t)pages, sizeof *pc->table);
	if (seen == NULL || pc->table == NULL) {
		util_error(err, errlen, "%s: out of memory", path);
		goto done;
	}
	for (b = 0; b < pages; b++) {
		if (raw[b] < 0 || raw[b] >= n) {
			util_error(err, errlen, "%s: entry %ld is page %ld, outside "
			    "the pool of %ld pages (0 to %ld)", path, b, raw[b], n,
			    n - 1);
			goto done;
		}
		if (seen[raw[b]]) {
			util_error(err, errlen, "%s: entry %ld repeats page %ld (one "
			    "sequence's pages must be distinct)", path, b, raw[b]);
			goto done;
		}
		seen[raw[b]] = 1;
		pc->table[b] = (int)raw[b];
	}
	pc->pool = (int)n;
	rc = 0;
done:
	if (rc != 0) {
		free(pc->table);
		pc->table = NULL;
	}
	free(seen);
	free(raw);
	return rc;
}

int
paged_table(int page_size, int tk, const char *path, uint64_t seed,
    struct paged_cache *pc, char *err, size_t errlen)
{
	memset(pc, 0, sizeof *pc);
	if (page_size < 1)
		return util_error(err, errlen, "--page-size must be at least 1, "
		    "not %d", page_size);
	pc->page_size = page_size;
	pc->pages = (int)(((long)tk + page_size - 1) / page_size);
	if (path != NULL)
		return from_file(path, pc->pages, pc, err, errlen);
	pc->table = util_calloc((size_t)pc->pages, sizeof *pc->table,
	    "page table", err, errlen);
	if (pc->table == NULL)
		return -1;
	pc->pool = pc->pages;
	shuffled(pc->table, pc->pages, seed);
	return 0;
}

int
paged_fill(struct paged_cache *pc, const float *kt, const float *v,
    int kv_heads, int tk, int d, int dv, char *err, size_t errlen)
{
	size_t slots = paged_slots(pc), g, c, x;

	pc->kt = util_calloc((size_t)kv_heads * slots, (size_t)d * sizeof(float),
	    "K pool", err, errlen);
	pc->v = util_calloc((size_t)kv_heads * slots, (size_t)dv * sizeof(float),
	    "V pool", err, errlen);
	if (pc->kt == NULL || pc->v == NULL)
		return -1;
	for (g = 0; g < (size_t)kv_heads; g++)
		for (c = 0; c < (size_t)tk; c++) {
			size_t at = (size_t)paged_slot(pc, (long)c);
			if (kt != NULL)
				for (x = 0; x < (size_t)d; x++)
					pc->kt[g * slots * d + x * slots + at] =
					    kt[g * tk * d + x * tk + c];
			memcpy(pc->v + (g * slots + at) * dv, v + (g * tk + c) * dv,
			    (size_t)dv * sizeof(float));
		}
	return 0;
}

int
paged_packed(int page_size, int nseq, const int *cu, uint64_t seed,
    const float *kt, const float *v, int kv_heads, int tk, int d, int dv,
    struct paged_cache *pc, int **page0, char *err, size_t errlen)
{
	size_t slots, g, c, x;
	long total = 0;
	int b, *at;

	memset(pc, 0, sizeof *pc);
	*page0 = NULL;
	if (page_size < 1)
		return util_error(err, errlen, "--page-size must be at least 1, "
		    "not %d", page_size);
	at = util_calloc((size_t)nseq + 1, sizeof *at, "page offsets", err,
	    errlen);
	if (at == NULL)
		return -1;
	for (b = 0; b < nseq; b++) {
		total += ((long)cu[b + 1] - cu[b] + page_size - 1) / page_size;
		at[b + 1] = (int)total;
	}
	pc->page_size = page_size;
	pc->pages = pc->pool = (int)total;
	pc->table = util_calloc((size_t)total, sizeof *pc->table, "page table",
	    err, errlen);
	slots = paged_slots(pc);
	pc->kt = pc->table != NULL ? util_calloc((size_t)kv_heads * slots,
	    (size_t)d * sizeof(float), "K pool", err, errlen) : NULL;
	pc->v = pc->kt != NULL ? util_calloc((size_t)kv_heads * slots,
	    (size_t)dv * sizeof(float), "V pool", err, errlen) : NULL;
	if (pc->v == NULL) {
		paged_free(pc);
		free(at);
		return -1;
	}
	shuffled(pc->table, pc->pages, seed);
	/* Sequence b's key c: its own table's page, K^T's (d, Tk_b) block. */
	for (g = 0; g < (size_t)kv_heads; g++)
		for (b = 0; b < nseq; b++) {
			const size_t k0 = (size_t)cu[b], n = (size_t)(cu[b + 1] - cu[b]);
			const float *ktb = kt + (g * tk + k0) * d;

			for (c = 0; c < n; c++) {
				const size_t slot = (size_t)pc->table[at[b] + c /
				    (size_t)page_size] * page_size + c % page_size;

				for (x = 0; x < (size_t)d; x++)
					pc->kt[g * slots * d + x * slots + slot] =
					    ktb[x * n + c];
				memcpy(pc->v + (g * slots + slot) * dv, v + (g * tk + k0 +
				    c) * dv, (size_t)dv * sizeof(float));
			}
		}
	*page0 = at;
	return 0;
}

void
paged_free(struct paged_cache *pc)
{
	free(pc->table);
	free(pc->kt);
	free(pc->v);
	memset(pc, 0, sizeof *pc);
}

void
paged_count(const struct paged_cache *pc, const struct schedule *s,
    struct paged_reads *out)
{
	struct schedule_tile t;
	long k, c, end, n;

	memset(out, 0, sizeof *out);
	for (k = 0; k < s->nsteps; k++) {
		schedule_tile(s, k, &t);
		n = paged_runs(pc, t.c0, t.c1);
		out->tiles++;
		out->runs += n;
		out->spanning += n > 1;
		/* Each run ends at its page's end or the tile's. */
		for (c = t.c0; c < t.c1; c = end) {
			end = pc->page_size > 0 ? (c / pc->page_size + 1) *
			    pc->page_size : t.c1;
			if (end > t.c1)
				end = t.c1;
			if (end - c > out->longest)
				out->longest = end - c;
		}
	}
}
