/*
 * decode.h - the decoding kernel (gpu/decode.cu, its launch arithmetic
 * in gpu/decode_ranges.c): attention of a few new query rows per head
 * against a long K/V cache, fp16 or bf16, d = 128, grouped heads,
 * split-KV, a cache length per batch entry and a paged cache
 * (decode_attention_kv).  A plain C entry point with device pointers,
 * for C host code, standalone drivers and Python (ctypes).
 *
 * Shapes (row-major, contiguous, on the device):
 *   Q  (B, H, Tq, d)   K, V  (B, G, Tk, d)   O  (B, H, Tq, d)   of dtype
 *   lse (B, H, Tq) float32, natural log (NULL: not written)
 * or, paged (flash_attn_with_kvcache's layout), K and V a pool
 *   (pages, page_size, G, d) and block_table (B, max_pages) int32:
 *   key c of entry b at slot c % page_size of page block_table[b][c /
 *   page_size].
 * With cache_seqlens (B) int32, entry b has its own Tk_b <= Tk keys
 * (keys Tk_b on are not read; a Tk_b of 0 gives O = 0, lse = -inf).
 * G divides H: query head h reads K/V head h / (H/G) (G = H multi-head,
 * G = 1 multi-query).  The H/G query heads of a group and their Tq rows
 * are packed into one thread block's rows (row (pos, hh) at pos H/G +
 * hh, as FlashAttention packs them for decoding), so K and V are read
 * once per group; more than DECODE_MAX_ROWS packed rows are cut into
 * chunks that each read K and V again.  causal aligns the mask
 * bottom-right: query position r sees key c when c <= r + Tk - Tq (Tk_b with
 * cache_seqlens).
 */
#ifndef FLASHSTEP_DECODE_H
#define FLASHSTEP_DECODE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum decode_dtype {
	DECODE_FP16 = 0,
	DECODE_BF16 = 1,
};

#define DECODE_D 128		/* the head width this kernel is built for */
#define DECODE_MAX_ROWS 8	/* packed rows one block holds */
#define DECODE_MAX_SPLITS 256
#define DECODE_MIN_KEYS 128	/* keys a range gets at least */
#define DECODE_TICKETS 4096	/* groups of rows a split run may have */
#define DECODE_RING_KEYS 32768	/* ranges this long take the ring: one row */
#define DECODE_RING_PACKED_KEYS 16384	/* and packed rows */
#define DECODE_RING_RANGE 16384	/* keys a range of the ring picks, at most */
#define DECODE_PAGE_MULTIPLE 16	/* a page size is a multiple of this */

/* Rows a block holds for a group of `rows` packed rows: the smallest
 * instantiation that takes them, DECODE_MAX_ROWS at most. */
int decode_block_rows(int rows);

/* The blocks of rows a group's H/G heads and Tq rows are cut into. */
int decode_chunks(int heads, int kv_heads, int tq);

/*
 * The key ranges a call with these sizes runs (what splits = 0 picks,
 * then decode_ring_splits for the ring): enough (row chunk, range)
 * blocks to fill every SM of device `sms` with `per_sm` resident blocks
 * in one wave, no more ranges than leave each at least DECODE_MIN_KEYS
 * keys, and 1 when the groups alone fill the GPU or are more than
 * DECODE_TICKETS.
 */
int decode_pick_splits(int batch, int heads, int kv_heads, int tq, int tk,
    int sms, int per_sm);

/* The keys of each range of a call of tk keys cut into `splits`
 * ranges: ceil(tk / splits), rounded up to a multiple of
 * DECODE_PAGE_MULTIPLE when paged or when it is that many or more (so
 * that a paged run cuts its keys as the contiguous one does). */
int decode_range_keys(int tk, int splits, int paged);

/* Whether a block of `br` rows streams ranges of `keys` keys through
 * the tensor cores' ring (decode.cu's decode_ring_kernel): from
 * DECODE_RING_KEYS keys with one row, from DECODE_RING_PACKED_KEYS with
 * more, where it measured faster on the H200 (doc/performance.md). */
int decode_takes_ring(int br, int keys);

/* The ranges the ring runs where splits = 0 picked `splits`: as many
 * more as leave none longer than DECODE_RING_RANGE keys (up to
 * DECODE_MAX_SPLITS): it streams faster so. */
int decode_ring_splits(int tk, int splits);

/* Bytes of workspace a call with these sizes needs for `splits` ranges
 * (0: the most any call with these sizes may pick). */
size_t decode_workspace_bytes(int batch, int heads, int kv_heads, int tq,
    int tk, int splits);

/* What a decode_attention call ran. */
struct decode_result {
	int splits;		/* key ranges */
	int ring;		/* 1: through the ring (decode_takes_ring) */
};

/*
 * O (and lse) for every (batch, head, row).  scale <= 0 means 1/sqrt(d).
 * splits = 0 picks them (decode_pick_splits on the current device, and
 * decode_ring_splits); 1 runs no combine; more are cut to
 * DECODE_MAX_SPLITS and to no empty range, each range's keys as
 * decode_range_keys gives them.  workspace: device memory of
 * workspace_bytes (at least decode_workspace_bytes), zero-filled before
 * its first use; the kernel leaves it ready for the next call (the split
 * counters back at 0), so calls of any shape on one stream may share
 * it.  The call is asynchronous on stream (a cudaStream_t; NULL the
 * default stream).  res (NULL: not wanted) gets what the call ran.
 * Returns 0, or -1 with one line in err (a bad size, too small a
 * workspace, a CUDA error at launch) and res zeroed.
 */
int decode_attention(const void *q, const void *k, const void *v, void *o,
    float *lse, int batch, int heads, int kv_heads, int tq, int tk, int d,
    int dtype, int causal, float scale, int splits, void *workspace,
    size_t workspace_bytes, void *stream, struct decode_result *res,
    char *err, size_t errlen);

/*
 * decode_attention with the cache's layout given:
 * - cache_seqlens (device, B int32, or NULL: every entry has Tk keys):
 *   entry b's keys are 0 .. Tk_b - 1 (a value is taken clamped to 0 ..
 *   Tk); Tk is then the most any entry has, and sizes the ranges.
 * - block_table (device, B x max_pages int32, or NULL: K and V
 *   contiguous as above, page_size and max_pages unused): K and V are
 *   the pool (pages, page_size, G, d); page_size must be a positive
 *   multiple of DECODE_PAGE_MULTIPLE (16, 64, 256 ...; others are
 *   refused), max_pages page_size at least Tk, and every entry of the
 *   table a page of the pool (not checked: it lives on the device).
 * A paged run gives the bits of the contiguous run of the same keys.
 */
int decode_attention_kv(const void *q, const void *k, const void *v,
    void *o, float *lse, int batch, int heads, int kv_heads, int tq, int tk,
    int d, int dtype, int causal, float scale, int splits,
    const int *cache_seqlens, const int *block_table, int page_size,
    int max_pages, void *workspace, size_t workspace_bytes, void *stream,
    struct decode_result *res, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
