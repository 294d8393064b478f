/*
 * decode.h - the decoding kernel (gpu/decode.cu, its launch arithmetic
 * in gpu/decode_ranges.c): attention of a few new query rows per head
 * against a long K/V cache, fp16 or bf16, d = 128, grouped heads,
 * split-KV.  A plain C entry point with device pointers, for C host
 * code, standalone drivers and Python (ctypes).
 *
 * Shapes (row-major, contiguous, on the device):
 *   Q  (B, H, Tq, d)   K, V  (B, G, Tk, d)   O  (B, H, Tq, d)   of dtype
 *   lse (B, H, Tq) float32, natural log (NULL: not written)
 * G divides H: query head h reads K/V head h / (H/G) (G = H multi-head,
 * G = 1 multi-query).  The H/G query heads of a group and their Tq rows
 * are packed into one thread block's rows (row (pos, hh) at pos H/G +
 * hh, as FlashAttention packs them for decoding), so K and V are read
 * once per group; more than DECODE_MAX_ROWS packed rows are cut into
 * chunks that each read K and V again.  causal aligns the mask
 * bottom-right: query position r sees key c when c <= r + Tk - Tq.
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

/* Whether the default streams a block of `br` rows through the ring
 * (variant 9) in ranges of `keys` keys: from DECODE_RING_KEYS keys with
 * one row, from DECODE_RING_PACKED_KEYS with more (gpu/bench/
 * DECODE_NOTES.md has the measurements). */
int decode_takes_ring(int br, int keys);

/* The ranges the ring (variant 9) runs where splits = 0 picked `splits`:
 * as many more as leave none longer than DECODE_RING_RANGE keys (up to
 * DECODE_MAX_SPLITS): it streams faster so (gpu/bench/DECODE_NOTES.md). */
int decode_ring_splits(int tk, int splits);

/* Bytes of workspace a call with these sizes needs for `splits` ranges
 * (0: the most any call with these sizes may pick). */
size_t decode_workspace_bytes(int batch, int heads, int kv_heads, int tq,
    int tk, int splits);

/*
 * O (and lse) for every (batch, head, row).  scale <= 0 means 1/sqrt(d).
 * splits = 0 picks them (decode_pick_splits on this device, and
 * decode_ring_splits); 1 runs no combine.  workspace: device memory of
 * workspace_bytes (at least decode_workspace_bytes), zero-filled before
 * its first use; the kernel leaves it ready for the next call (the split
 * counters back at 0), so calls of any shape on one stream may share
 * it.  variant: 0 the default, or one of the nine (for measurements): 1
 * loads to registers, 4 warps a block; 2 the same, 8 warps; 3 a
 * cp.async ring in shared memory, 4 warps; 4 the same, 8 warps; 5 loads
 * to registers and the scores and update on the tensor cores, 4 warps; 6
 * the same, 8 warps; 7 variant 6 with L2 asked for a block's first keys
 * as it starts; 8 variant 2 with the same head start; 9 the tensor
 * cores, 8 warps, fed by a cp.async ring.  The default is 9 where
 * decode_takes_ring says so, else 8 for one row a block and 7 for
 * more.
 * The call is asynchronous on stream (a cudaStream_t; NULL the default
 * stream).
 * Returns 0, or -1 with one line in err (a bad size, too small a
 * workspace, a CUDA error at launch).
 */
int decode_attention(const void *q, const void *k, const void *v, void *o,
    float *lse, int batch, int heads, int kv_heads, int tq, int tk, int d,
    int dtype, int causal, float scale, int splits, int variant,
    void *workspace, size_t workspace_bytes, void *stream, char *err,
    size_t errlen);

/* The splits the last decode_attention call on this thread ran with. */
int decode_last_splits(void);

#ifdef __cplusplus
}
#endif

#endif
