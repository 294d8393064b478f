/*
 * roofline.h - arithmetic intensity against a machine's roofs.
 *
 * A kernel that does F FLOPs and moves B bytes between HBM and the chip
 * has intensity I = F / B (FLOPs a byte).  On a machine of peak P FLOP/s
 * and bandwidth W bytes/s it can go no faster than min(P, I W): the roof
 * at I.  The two meet at the ridge point I = P / W; left of it a kernel
 * is bound by bandwidth, right of it by compute.
 *
 * The bytes come from traffic.c, counted two ways for a tiled kernel:
 *
 *   tile bytes  what the kernel's tiles ask of memory: every row block
 *               reads all of K and V again (fa2), so I ~ 2 Br / e for a
 *               long Tk, flat in T.  These repeats hit L2 when K and V
 *               of a head fit there, so they are not all HBM bytes.
 *   HBM bytes   each tensor once (Q, K, V read, O and lse written): the
 *               same counter over one tile a head.  I ~ T / e for
 *               Tq = Tk = T, growing with T: the floor on HBM traffic,
 *               which is what the L2 leaves when it holds K and V.
 *
 * Standard attention (the naive kernel) writes S and P, Tq x Tk each, to
 * HBM and reads them back; at the sizes measured they are gigabytes, far
 * past L2, so its two counts are the same.  Decoding (Tq = 1) reads each
 * key and value once either way: I = 2 (H / G) / e a query row, flat in
 * Tk, whatever the tiling.
 */
#ifndef FLASHSTEP_ROOFLINE_H
#define FLASHSTEP_ROOFLINE_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

/* A machine's roofs, in FLOP/s and bytes/s. */
struct roofline_machine {
	const char *name;
	double tensor;		/* dense fp16/bf16 tensor-core FLOP/s */
	double fp32;		/* float32 FMA on the CUDA cores, FLOP/s */
	double hbm;		/* HBM bandwidth, bytes/s (datasheet) */
	double copy;		/* a device-to-device copy's measured rate */
};

/* The H200 SXM: 989 TFLOP/s dense fp16/bf16 tensor, 67 TFLOP/s fp32,
 * 4.8 TB/s HBM3e (NVIDIA's H200 datasheet); its copy moved 4.3 TB/s
 * (bytes read and written) on the lent machines. */
extern const struct roofline_machine roofline_h200;

/* The ridge point: peak / bandwidth, FLOPs a byte. */
double roofline_ridge(double peak, double bw);

/* The roof at intensity: min(peak, intensity bw). */
double roofline_roof(double peak, double bw, double intensity);

/* 1 when intensity is at or right of the ridge (bound by compute), 0
 * when left of it (bound by bandwidth). */
int roofline_compute_bound(double peak, double bw, double intensity);

enum roofline_pass {
	ROOFLINE_TILED,		/* a tiled forward (fa2 order) */
	ROOFLINE_TILED_BWD,	/* FlashAttention 2's backward (key-outer) */
	ROOFLINE_STANDARD,	/* standard attention, S and P in HBM */
	ROOFLINE_STANDARD_BWD,	/* its backward, from the stored P */
};

/* A benchmark's shape: batch x heads problems of Tq x Tk, d = dv. */
struct roofline_shape {
	enum roofline_pass pass;
	int batch, heads, kv_heads;	/* kv_heads 0: = heads */
	int tq, tk, d;
	enum dtype dtype;	/* what Q, K, V and O are stored in */
	int br, bc;		/* the kernel's tiles (tiled passes); 0: unknown,
				 * counted as one tile a head */
	int pack_gqa;		/* a K/V group's query rows in one row block */
};

struct roofline_count {
	uint64_t flops;		/* matmul FLOPs (traffic.c's count) */
	uint64_t tile_bytes;	/* HBM or L2: what the tiles read and write */
	uint64_t hbm_bytes;	/* each tensor once */
};

/* Counts a shape.  Returns 0, or -1 with err set (a bad shape, no
 * memory); out is then zero. */
int roofline_count(const struct roofline_shape *s, struct roofline_count *out,
    char *err, size_t errlen);

#endif
