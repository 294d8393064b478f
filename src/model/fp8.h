/*
 * fp8.h - Q, K and V in FP8 e4m3, as FlashAttention 3 feeds its FP8
 * kernel: block quantization and incoherent processing.
 *
 * e4m3 (fp8_rule.h) holds magnitudes up to 448 with 3 mantissa bits, so a
 * tensor is stored as codes and scales: x ~ scale * e4m3(x / scale).
 *
 *   block quantization   every N rows of a tensor (within a head) share
 *                        one scale, scale = amax / 448 over the block, so
 *                        the block's largest entry lands on 448 and one
 *                        large entry costs only its own block's range.
 *                        The default N is a tile's rows: Br for Q, Bc for
 *                        K and V, FlashAttention 3's blocks, which a
 *                        kernel applies per tile of S as the product of
 *                        a Q block's and a K block's scales, at no cost.
 *   incoherent           Q and K are multiplied along d by the same
 *   processing           random orthogonal M = diag(s) H / sqrt(d) (H the
 *                        Walsh-Hadamard matrix of order d, s a +-1 sign
 *                        per column drawn from the seed) before they are
 *                        quantized: (QM)(KM)^T = Q K^T since M M^T = I,
 *                        but an outlier is spread over all d entries of
 *                        its row.  d must be a power of two.
 *
 * The simulator then runs on the dequantized values (scale * code, in
 * float32), which is what an FP8 kernel's S is: the products of codes
 * summed in float32 and scaled by the two blocks' scales.  P becomes
 * e4m3 with no scale before P V (dtype_round(DTYPE_FP8)): FP8 wgmma takes
 * both operands in FP8, and P in [0, 1] needs none.  The inputs as given
 * are kept (fp8_exact), so the double reference stays unquantized and
 * unrotated: `run` shows the whole error FP8 makes.
 *
 * The bug modes are the usual mistakes, one row of fp8_bugs each.
 */
#ifndef FLASHSTEP_FP8_H
#define FLASHSTEP_FP8_H

#include <stddef.h>
#include <stdint.h>

struct problem;

enum fp8_bug {
	FP8_BUG_NONE,
	FP8_BUG_WHOLE_TENSOR,	/* one scale for each whole tensor */
	FP8_BUG_ROTATE_Q_ONLY,	/* --hadamard rotates Q, K is left as it is */
};
#define FP8_BUGS 3

struct fp8_bug_mode {
	const char *word;	/* --fp8-bug's word */
	const char *what;	/* what it does and what it breaks */
	int needs_hadamard;	/* only means something with --hadamard */
};

const struct fp8_bug_mode *fp8_bug_mode(enum fp8_bug b);
int fp8_bug_parse(const char *word, enum fp8_bug *out);

/* What the user asked for (problem_spec.fp8). */
struct fp8_spec {
	int block;		/* rows a scale covers; 0: Br for Q, Bc for K, V */
	int hadamard;		/* incoherent processing of Q and K */
	enum fp8_bug bug;
};

/* One quantized tensor, all its heads (rows = heads x head_rows). */
struct fp8_tensor {
	const char *name;	/* "Q", "K", "V" */
	int rows, cols, head_rows;
	int block;		/* rows one scale covers (within a head) */
	int blocks_per_head;	/* ceil(head_rows / block); whole tensor: 1 */
	int nblocks;
	int whole;		/* one scale for the tensor (FP8_BUG_WHOLE_TENSOR) */
	int rotated;		/* multiplied by M before quantizing */
	float *exact;		/* the input as given (rows x cols) */
	float *before;		/* what was quantized: exact, or exact M */
	unsigned char *code;	/* e4m3 codes */
	float *scale;		/* one per block */
};

struct fp8_data {
	struct fp8_spec spec;
	int d;
	signed char *signs;	/* the rotation's d signs; NULL without one */
	struct fp8_tensor q, k, v;
};

/*
 * Quantizes p's Q, K and V (p->q, p->k, p->v: the inputs as given, heads
 * and kv_heads set, not a scores problem) as spec says, with br and bc
 * the default blocks and seed the rotation's signs: p->q, p->k, p->v
 * become the dequantized values and p->fp8 the codes, the scales and the
 * inputs as given.  Returns 0, or -1 with one line in err (a d that is
 * not a power of two under --hadamard, out of memory).
 */
int fp8_quantize(struct problem *p, const struct fp8_spec *spec, int br,
    int bc, uint64_t seed, char *err, size_t errlen);

void fp8_free(struct fp8_data *f);

/* p with its inputs as given (not quantized, not rotated) in place of the
 * quantized ones, for the double reference; p itself when p is not fp8.
 * Borrows p's arrays; kt is NULL.  Never problem_free() it. */
void fp8_exact(const struct problem *p, struct problem *out);

/* The block of row r (a row over all heads) and its scale. */
int fp8_block_of(const struct fp8_tensor *t, int r);

/* The dequantized value of entry (r, c). */
float fp8_value(const struct fp8_tensor *t, int r, int c);

/* The quantization of one tensor, over all its entries. */
struct fp8_stats {
	double amax;		/* largest |entry| before quantizing */
	double max_err;		/* largest |dequantized - before| */
	double rms_err;		/* root mean square of it */
	double rms;		/* root mean square of the entries before */
	long zeros;		/* nonzero entries that became 0 */
	long subnormal;		/* entries stored as subnormal codes */
	double min_scale, max_scale;
};
void fp8_stats(const struct fp8_tensor *t, struct fp8_stats *s);

/* M = diag(s) H / sqrt(d) applied to the row x (length d, a power of
 * two) in place, in double. */
void fp8_rotate_row(const signed char *signs, int d, double *x);

/* Is d a power of two? */
int fp8_pow2(int d);

#endif
