/*
 * problem.h - one attention problem: shapes, inputs, scale, mask.
 *
 * Letters as in the FlashAttention papers:
 *   Tq  query rows            Tk  keys
 *   d   width of Q and K      dv  width of V (and of the output O)
 * Q is (Tq, d), K is (Tk, d), V is (Tk, dv), row-major float32, and
 *   O = softmax(scale * Q K^T + mask) V,   scale = 1/sqrt(d) by default.
 *
 * A "scores" problem gives S (Tq, Tk) and V directly, with scale 1 and
 * d = 0: that is how the seed's scalar example is written (S = [1 2 1001
 * 1002], V = [2 -1 4 8]^T).  There an entry of -inf means "masked".
 *
 * The masks and score modifiers are mask_rule.h's table: the causal
 * mask (aligned bottom-right, as in FlashAttention 2.1 and later: query
 * r sees key c when c <= r + Tk - Tq) is the window (-1, 0); a window
 * (L, R) hides keys outside [r + Tk - Tq - L, r + Tk - Tq + R]; softcap
 * bends the scaled score to C tanh(s / C); ALiBi adds -slope |r + Tk -
 * Tq - c| with a slope per query head; dropout zeroes entries of P
 * drawn from a seed and scales the rest by 1 / (1 - p).  Rows that see
 * no key output 0 with lse = -inf.
 *
 * Grouped heads: H query heads share G K/V heads (G divides H; G = H is
 * multi-head attention, G = 1 multi-query).  Query head h reads K/V head
 * h / (H/G).  Q is then (H Tq, d) and K, V are (G Tk, d), (G Tk, dv),
 * head after head; O is (H Tq, dv) and lse (H Tq).  Tq and Tk stay the
 * sizes of one head; a mask position is a row within its head.
 *
 * A packed batch (--seqlens, flash-attention's varlen: cu_seqlens) lays
 * nseq sequences end to end in one Q (sum Tq_b, d), K and V (sum Tk_b):
 * tq and tk are the totals, cu_q and cu_k the nseq + 1 offsets.  With
 * grouped heads each head is packed so, head after head: Q (H sum Tq_b,
 * d), K and V (G sum Tk_b, d), O and lse as Q.  It is a
 * layout, not a mask: each sequence is its own problem (problem_seq, a
 * view of the shared storage) with its own Tq_b and Tk_b, so the masks
 * align bottom-right within it and no tile crosses a boundary.  The
 * packed problem itself is never run whole (schedule_init_split and
 * reference_attention refuse it): varlen.h runs it sequence by sequence.
 */
#ifndef FLASHSTEP_PROBLEM_H
#define FLASHSTEP_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "fp8.h"
#include "inputs.h"
#include "mask_rule.h"
#include "paged.h"
#include "tile_rule.h"

/* One input matrix: an .npy file, or numbers given inline (lessons). */
struct problem_source {
	const char *path;	/* file to read, or NULL */
	const float *data;	/* rows x cols inline values, or NULL */
	int rows, cols;
};

/* What the user asked for.  A size of 0 means "default, or from files". */
struct problem_spec {
	int tq, tk, d, dv;
	double scale;		/* used when scale_set */
	int scale_set;
	int causal;		/* --causal: the window (-1, 0) */
	int window_set;		/* --window L,R given */
	int window_left, window_right;	/* -1: unbounded on that side */
	double softcap;		/* --softcap C (used when softcap_set) */
	int softcap_set;
	double alibi;		/* --alibi SLOPE, every head's (alibi_set) */
	int alibi_set;
	const char *alibi_slopes;	/* --alibi-slopes "a,b,...": one per
				 * query head (problem_slopes reads it), or NULL */
	double dropout;		/* --dropout P, 0 <= P < 1 (used when dropout_set) */
	int dropout_set;
	uint64_t dropout_seed;	/* --dropout-seed N: the generator's key */
	uint64_t dropout_offset;	/* --dropout-offset K: its counter's last
				 * word (FlashAttention's philox offset) */
	enum dtype dtype;
	enum inputs_kind input;
	uint64_t seed;
	int br, bc;		/* tile sizes, for the memory check (and bc so
				 * that `spike` lands in a late tile) */
	int fa1;		/* loop order fa1, for the memory check */
	unsigned memory_parts;	/* what the caller will hold besides the
				 * inputs (memory.h's MEMORY_*; default
				 * MEMORY_SIM), counted before anything
				 * large is read or allocated */
	int memory_splits;	/* split-KV ranges, for MEMORY_SPLIT */
	int memory_merge_tree;	/* their combine merges as a tree */
	int heads, kv_heads;	/* H and G; 0 means 1 */
	struct fp8_spec fp8;	/* --dtype fp8's blocks, rotation, bug mode */
	struct problem_source q, k, v, s;
	struct problem_source dout;	/* the backward's dO (problem_grad_output) */
	const char *seqlens_q, *seqlens_k;	/* --seqlens(-q/-k) "A,B,..":
				 * a packed batch (problem_seqlens reads
				 * them), or NULL */
	int page_size;		/* --page-size P: K/V in pages of P keys (0: not) */
	const char *block_table;	/* --block-table FILE.npy, or NULL: the
				 * seed's shuffled table (paged.h) */
};

struct problem {
	int tq, tk, d, dv;
	float scale;
	int causal;		/* the causal mask (--causal, or --window -1,0):
				 * what a kernel that knows only it reads, and
				 * the window problem_mask gives when set */
	struct mask_rule mask;	/* any other window, the cap and dropout
				 * (mask.slope is 0: ALiBi's slopes are per
				 * head, in alibi; mask.drop_head is 0);
				 * read it through problem_mask */
	int head0;		/* the query head of this problem's first head:
				 * 0, or h for problem_head's head h (dropout's
				 * counter counts heads from it) */
	int kv_head0;		/* and its K/V head: problem_head's h / (H / G)
				 * (p->fp8's codes hold every head's rows) */
	int seq_owned;		/* problem_seq_all gathered q, k, kt and v
				 * into arrays of this problem's own, which
				 * problem_seq_free frees */
	int seq_heads;		/* a packed batch's H, kept by problem_head:
				 * sequence b's head h counts as b H + h in
				 * dropout's counter (problem_seq), as
				 * FlashAttention counts (batch, head) */
	float *alibi;		/* H slopes, one per query head, or NULL */
	enum dtype dtype;
	int scores_mode;	/* S given directly; q, k, kt are NULL */
	float *q, *k, *v, *s;	/* already rounded to dtype (fp8: dequantized) */
	struct fp8_data *fp8;	/* fp8's codes, scales and inputs as given;
				 * NULL for the other dtypes */
	float *kt;		/* K transposed (d, Tk) per K/V head: the simulator's loops */
	char source[96];	/* where the inputs came from, for display */
	int heads, kv_heads;	/* H query heads sharing G K/V heads (1, 1) */
	int nseq;		/* sequences of a packed batch; 0: not packed */
	int *cu_q, *cu_k;	/* nseq + 1 row offsets (cu_seqlens), or NULL */
	int *seq_page0;		/* a paged packed batch: sequence b's pages
				 * are entries seq_page0[b] .. [b + 1] - 1 of
				 * paged.table (paged_packed), or NULL */
	struct paged_cache paged;	/* --page-size: K and V also in a pool
				 * of pages, which the simulator reads them
				 * from (paged.h); page_size 0 when not */
};

/* The built-in example: Tq = Tk = 16, d = 4, Br = Bc = 4, ramp, seed 1. */
#define PROBLEM_DEFAULT_T 16
#define PROBLEM_DEFAULT_D 4
#define PROBLEM_DEFAULT_TILE 4

/*
 * Reads a list of ALiBi slopes "a,b,..." (numbers from 0 to 1e6, comma
 * separated, nothing else): *n gets the count, and out (when not NULL)
 * the first max of them.  Returns 0, or -1 with one line in err naming
 * --alibi-slopes and the slope at fault.
 */
int problem_slopes(const char *text, float *out, int max, int *n, char *err,
    size_t errlen);

/* A spec with every field at its default. */
void problem_spec_init(struct problem_spec *spec);

/*
 * Builds a problem: reads the files' headers, checks the shapes and that
 * the inputs and spec->memory_parts fit in memory (memory.h), then reads
 * the files or generates the inputs and checks that they are finite and
 * that no score or running sum leaves float32's range.  Returns 0, or -1
 * with one line in err naming the input at fault; out is then empty.
 */
int problem_build(const struct problem_spec *spec, struct problem *out,
    char *err, size_t errlen);

void problem_free(struct problem *p);

/*
 * The upstream gradient dO (Tq, dv) for the backward pass, torch's
 * grad_output: spec->dout when given (a file or inline values; its shape
 * must be O's, its entries finite), else N(0, 1) entries drawn from
 * spec->seed (a stream apart from the inputs').  Rounded to p's dtype.
 * Returns 0 with *out malloc'd, or -1 with one line in err naming the
 * input at fault (*out is then NULL).
 */
int problem_grad_output(const struct problem_spec *spec,
    const struct problem *p, float **out, char *err, size_t errlen);

/* Rows of Q, O and lse: H Tq. */
static inline int
problem_rows(const struct problem *p)
{
	return (p->heads > 0 ? p->heads : 1) * p->tq;
}

/* Does query r see key c under the mask?  (r is a position: a row
 * within its head.)  The same for every head. */
/* The rules of query head h (0 <= h < H): the window (causal: (-1,
 * 0)), the cap, the head's ALiBi slope (0 without ALiBi) and its
 * dropout counter. */
static inline struct mask_rule
problem_mask(const struct problem *p, int h)
{
	struct mask_rule m = p->mask;

	if (p->causal)
		m = mask_rule_window(m, MASK_UNBOUNDED, 0);
	m.slope = p->alibi != NULL ? p->alibi[h] : 0.0f;
	m.drop_head = (uint32_t)(p->head0 + h);
	return m;
}

static inline int
problem_visible(const struct problem *p, int r, int c)
{
	return mask_rule_visible(problem_mask(p, 0), r, c, p->tq, p->tk);
}

/* Does anything hide or bend scores beyond the causal mask (a kernel
 * that knows only causal refuses such a problem)? */
static inline int
problem_beyond_causal(const struct problem *p)
{
	return mask_rule_has(problem_mask(p, 0), MASK_WINDOW) ||
	    mask_rule_has(p->mask, MASK_SOFTCAP) || p->alibi != NULL ||
	    mask_rule_has(p->mask, MASK_DROPOUT);
}

/*
 * The single-head problem of query head h (0 <= h < H): its rows of Q
 * (or S), the K, K^T and V of its K/V head, its ALiBi slope, heads =
 * kv_heads = 1.  The arrays are borrowed from p: never problem_free() the result.
 */
void problem_head(const struct problem *p, int h, struct problem *out);

/*
 * Reads a list of sequence lengths "a,b,..." for option `name` (whole
 * numbers from 1 to INT_MAX, comma separated, nothing else): *n gets the
 * count and out (when not NULL) the first max of them.  Returns 0, or -1
 * with one line in err naming the option and the length at fault.
 */
int problem_seqlens(const char *text, const char *name, int *out, int max,
    int *n, char *err, size_t errlen);

/*
 * Sequence b (0 <= b < nseq) of packed batch p as a problem of its own:
 * its Tq_b rows of Q, Tk_b keys of K, K^T and V, nseq = 0, its heads
 * counted from b seq_heads in dropout's counter.  The arrays
 * are borrowed from p: never problem_free() the result.
 */
void problem_seq(const struct problem *p, int b, struct problem *out);

/*
 * Sequence b of packed batch p with all p's heads: problem_seq's problem
 * of H query heads on G K/V heads.  A packed batch of several heads lays
 * each head packed, head after head (Q (H sum Tq_b, d), K and V (G sum
 * Tk_b, d)), so a sequence's rows of two heads lie apart: with one head
 * *out is problem_seq's view, with several its rows are gathered into
 * arrays of out's own.  problem_seq_free(out) releases what it owns.
 * Returns 0, or -1 with err (out of memory).
 */
int problem_seq_all(const struct problem *p, int b, struct problem *out,
    char *err, size_t errlen);
void problem_seq_free(struct problem *out);

/* Row r0 of query head h of packed batch p (r0 a row of the sequence's
 * packed offsets, cu_q): where it lies in Q, O and lse, rows of width
 * d or dv. */
static inline size_t
problem_packed_row(const struct problem *p, int h, int r0)
{
	return (size_t)h * p->tq + (size_t)r0;
}

/* -1 with one line in err when p is a packed batch, which `what` does not
 * run whole (it runs sequence by sequence: varlen.h); else 0. */
int problem_refuse_packed(const struct problem *p, const char *what,
    char *err, size_t errlen);

#endif
