/*
 * paged.h - a paged KV cache: K and V in fixed-size pages of a pool, a
 * page table (flash_attn_with_kvcache's block_table, vLLM's layout)
 * mapping each logical page of the Tk keys to a physical page.
 *
 * Logical key c lives in logical page c / P at offset c % P; the page
 * table sends logical page b to physical page table[b], so the key sits
 * at pool slot table[b] P + c % P.  The pool holds `pool` pages (the
 * table's length; the last logical page may be ragged, its tail slots
 * zero), every K/V head laid out alike: K transposed (d, pool P) as the
 * simulator's K^T, V (pool P, dv).  Within one sequence a page appears
 * once: a repeat would make two logical pages one, which is a bug, so a
 * table with one is refused (FlashAttention shares pages only between
 * sequences).
 *
 * A tile may span pages: flashstep takes any P >= 1, where
 * FlashAttention's paged path needs P a multiple of 256 (so that none
 * of its key tiles spans two).  A tile of keys [c0, c1) reads K and V
 * in paged_runs() contiguous runs, one per page it touches.
 */
#ifndef FLASHSTEP_PAGED_H
#define FLASHSTEP_PAGED_H

#include <stddef.h>
#include <stdint.h>

struct paged_cache {
	int page_size;		/* P keys a page; 0: K and V are not paged */
	int pages;		/* logical pages: ceil(Tk / P) */
	int pool;		/* physical pages in the pool (>= pages) */
	int *table;		/* pages entries: logical page -> physical */
	float *kt;		/* the pool's K^T, head after head */
	float *v;		/* the pool's V, head after head */
};

/* The pool slot of logical key c (c itself when not paged). */
static inline long
paged_slot(const struct paged_cache *pc, long c)
{
	if (pc->page_size <= 0)
		return c;
	return (long)pc->table[c / pc->page_size] * pc->page_size +
	    c % pc->page_size;
}

/* Pool slots of one K/V head. */
static inline size_t
paged_slots(const struct paged_cache *pc)
{
	return (size_t)pc->pool * (size_t)pc->page_size;
}

/* The physical page of logical key c. */
static inline int
paged_page(const struct paged_cache *pc, long c)
{
	return pc->table[c / pc->page_size];
}

/* Contiguous runs a read of keys [c0, c1) takes: one per page touched
 * (1 when not paged: the keys are one run). */
static inline long
paged_runs(const struct paged_cache *pc, long c0, long c1)
{
	if (c1 <= c0)
		return 0;
	if (pc->page_size <= 0)
		return 1;
	return (c1 - 1) / pc->page_size - c0 / pc->page_size + 1;
}

/*
 * The page table: the file's entries when path is not NULL (int32 or
 * int64, 1-D, at least ceil(tk / page_size) entries, the first of them
 * distinct physical pages in [0, length)), else a shuffled permutation
 * of ceil(tk / page_size) pages drawn from seed.  Returns 0 with
 * pc->table, pages and pool set, or -1 with one line in err naming
 * --page-size or the file and what is wrong.
 */
int paged_table(int page_size, int tk, const char *path, uint64_t seed,
    struct paged_cache *pc, char *err, size_t errlen);

/*
 * A packed batch's cache (the sequences' offsets cu, nseq + 1 of them):
 * one pool, sequence b's ceil(Tk_b / P) pages at entries page0[b] ..
 * page0[b + 1] - 1 of one table, a shuffled permutation of the pool's
 * pages drawn from seed, so that no two sequences share a page.  page0
 * (nseq + 1 ints) is allocated and set.  The pool is filled from the
 * packed K^T ((d, Tk_b) a sequence, problem_build's) and V (sum Tk_b,
 * dv) of kv_heads heads.  Returns 0, or -1 with err set.
 */
int paged_packed(int page_size, int nseq, const int *cu, uint64_t seed,
    const float *kt, const float *v, int kv_heads, int tk, int d, int dv,
    struct paged_cache *pc, int **page0, char *err, size_t errlen);

/*
 * Fills the pool from the logical K^T (d, tk) and V (tk, dv) of
 * kv_heads heads, each key at its slot.  Returns 0, or -1 with err set.
 */
int paged_fill(struct paged_cache *pc, const float *kt, const float *v,
    int kv_heads, int tk, int d, int dv, char *err, size_t errlen);

void paged_free(struct paged_cache *pc);

struct schedule;

/* What paging does to a run's K/V reads: the HBM bytes are the same,
 * but each tile's keys come in runs, one per page touched. */
struct paged_reads {
	long tiles;		/* tiles read (each reads its K_j and V_j once) */
	long runs;		/* contiguous runs of keys over all of them */
	long longest;		/* keys in the longest run */
	long spanning;		/* tiles whose keys span two pages or more */
};

/* Counts the runs of schedule s's tiles over pc (when not paged, a run
 * a tile). */
void paged_count(const struct paged_cache *pc, const struct schedule *s,
    struct paged_reads *out);

#endif
