/*
 * decode_ranges.c - how a call of the decoding kernel (decode.cu) is cut
 * up, as plain C: the rows a block holds, the row chunks, the key ranges
 * (decode_pick_splits, decode_range_keys; decode_takes_ring, whether the default takes the
 * ring for them, and decode_ring_splits, the ring's ranges) and the
 * workspace they need.  Host arithmetic only, kept out of the .cu file
 * so that it builds, and check_gpu_table tests it, on machines without
 * CUDA too.  It needs no config.h, so it builds with decode.cu alone
 * into the library the gpu/bench scripts load.
 */
#include "decode.h"

int
decode_block_rows(int rows)
{
	int n = 1;

	while (n < rows && n < DECODE_MAX_ROWS)
		n *= 2;
	return n;
}

int
decode_chunks(int heads, int kv_heads, int tq)
{
	int rows = heads / kv_heads * tq, br = decode_block_rows(rows);

	return (rows + br - 1) / br;
}

int
decode_pick_splits(int batch, int heads, int kv_heads, int tq, int tk,
    int sms, int per_sm)
{
	long groups = (long)batch * kv_heads * decode_chunks(heads, kv_heads, tq);
	long slots = (long)sms * (per_sm > 0 ? per_sm : 1);
	long most = (tk + DECODE_MIN_KEYS - 1) / DECODE_MIN_KEYS;
	long s;

	if (groups >= slots || groups > DECODE_TICKETS)
		return 1;
	s = slots / groups;
	if (s > most)
		s = most;
	if (s > DECODE_MAX_SPLITS)
		s = DECODE_MAX_SPLITS;
	return s < 1 ? 1 : (int)s;
}

/*
 * A range's first key a multiple of DECODE_PAGE_MULTIPLE: the kernels
 * read keys in groups of 8 or 16 from a multiple of 8 or 16 on, so no
 * group crosses a page of a paged cache and one look-up of the table
 * serves the group.  Contiguous ranges are rounded alike (once they
 * hold DECODE_PAGE_MULTIPLE keys), so a paged run and a contiguous one
 * of the same keys cut them the same way and give the same bits.
 */
int
decode_range_keys(int tk, int splits, int paged)
{
	const int m = DECODE_PAGE_MULTIPLE;
	int keys;

	if (splits < 1)
		splits = 1;
	keys = (int)(((long)tk + splits - 1) / splits);
	if (paged || keys >= m)
		keys = (int)(((long)keys + m - 1) / m * m);
	return keys < 1 ? 1 : keys;
}

int
decode_takes_ring(int br, int keys)
{
	return keys >= (br == 1 ? DECODE_RING_KEYS : DECODE_RING_PACKED_KEYS);
}

int
decode_ring_splits(int tk, int splits)
{
	int cut = (int)(((long)tk + DECODE_RING_RANGE - 1) / DECODE_RING_RANGE);

	if (cut > DECODE_MAX_SPLITS)
		cut = DECODE_MAX_SPLITS;
	return cut > splits ? cut : splits;
}

/*
 * The workspace: DECODE_TICKETS counters first, at the same place for
 * every call (each call leaves the ones it used at 0, so calls of any
 * shape can share one workspace), then the partials.
 */
size_t
decode_workspace_bytes(int batch, int heads, int kv_heads, int tq, int tk,
    int splits)
{
	size_t groups = (size_t)batch * kv_heads * decode_chunks(heads, kv_heads, tq);
	size_t rows = (size_t)decode_block_rows(heads / kv_heads * tq);
	size_t most = (size_t)(tk + DECODE_MIN_KEYS - 1) / DECODE_MIN_KEYS;

	if (splits <= 0)
		splits = (int)(most < DECODE_MAX_SPLITS ? most : DECODE_MAX_SPLITS);
	return DECODE_TICKETS * sizeof(unsigned) +
	    groups * (size_t)splits * rows * (DECODE_D + 2) * sizeof(float);
}
