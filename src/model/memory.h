/*
 * memory.h - what a command will allocate, summed before it allocates.
 *
 * A problem's size is the user's to choose, so every command checks,
 * before it reads or allocates anything large, that the sum of what it
 * is about to hold fits: no more than half of this machine's memory, and
 * no more than is available now.  The estimate is the real sum of the
 * buffers each part allocates (the parts mirror sim_new, sim_run,
 * reference.c and heatmap.c; tests/check_memory.c measures peak RSS
 * against it), not a rule of thumb.
 */
#ifndef FLASHSTEP_MEMORY_H
#define FLASHSTEP_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* The parts a command holds beside its inputs (Q, K, K^T, V; or S, V),
 * which are always counted. */
#define MEMORY_SIM		0x01	/* sim_new: tiles, one row block's state,
					 * schedule, traffic table */
#define MEMORY_CHECKPOINTS	0x02	/* checkpoints that seeking fills (the
					 * view, the seek benchmark) */
#define MEMORY_RUN		0x04	/* sim_run keeping O and lse: O, lse, m
					 * and l for every row */
#define MEMORY_REFERENCE	0x08	/* reference_attention: O and lse in
					 * double, one row of S and P in double */
#define MEMORY_NAIVE		0x10	/* reference_naive_f32: all of S, and O */
#define MEMORY_HEATMAP		0x20	/* heatmap_init's pooled picture of S */
#define MEMORY_SPLIT		0x40	/* split-KV (splits > 1): the sim's
					 * partials for every (row, range), the
					 * combine, and O, lse, m the forward
					 * leaves for it */
#define MEMORY_BACKWARD		0x80	/* the backward: O, lse, m, dO, the
					 * backward's copies, tiles and
					 * checkpoints, and the caller's dQ,
					 * dK, dV (and dS when asked or a
					 * scores problem) */
#define MEMORY_GRAD_S		0x100	/* dS (Tq, Tk) asked for (--grad-scores) */
#define MEMORY_CORRECT_SIM	0x200	/* a bug-free twin of the sim beside it,
					 * with its own checkpoints (the view
					 * under --bug) */
#define MEMORY_CORRECT_BWD	0x400	/* the same for the backward (the view
					 * under --grad-bug) */

/* What `run` holds; `trace` holds MEMORY_SIM | MEMORY_RUN.  With
 * MEMORY_REFERENCE, `run` also holds the double gradients beside a
 * backward, and beside a split run an unsplit run of its own (its sim,
 * O and lse in float and double, two more traffic tables): counted with
 * MEMORY_BACKWARD and MEMORY_SPLIT. */
#define MEMORY_FOR_RUN	(MEMORY_SIM | MEMORY_RUN | MEMORY_REFERENCE)

struct memory_job {
	int tq, tk, d, dv;	/* of one head */
	int heads, kv_heads;	/* H and G (0 means 1) */
	int splits;		/* key ranges a row block (MEMORY_SPLIT) */
	int merge_tree;		/* the combine merges as a tree (a slot
				 * per merge), not left to right (one) */
	int scores_mode;	/* S (Tq, Tk) given: no Q, K */
	int fp8;		/* --dtype fp8: the inputs as given kept too,
				 * the rotated Q and K, the codes (fp8.h) */
	int br, bc;		/* tile sizes asked for (clamped as the sim does) */
	int fa1;		/* loop order fa1: outer loop over key blocks */
	int page_size;		/* --page-size: K and V also in a pool of
				 * ceil(Tk / P) pages (model/paged.h) */
	unsigned parts;		/* MEMORY_* */
};

/* Bytes the job allocates at its peak. */
uint64_t memory_estimate(const struct memory_job *job);

/* The most a job may take here: half the physical memory, or what is
 * available now, or the process's own limit (RLIMIT_AS, RLIMIT_DATA, its
 * cgroup's memory.max), whichever is least; UINT64_MAX when none is
 * known. */
uint64_t memory_limit(void);

/* Returns 0 when the job fits the limit, or -1 with "problem too large:
 * Tq=.. Tk=.. would need X of memory ..." in err. */
int memory_check(const struct memory_job *job, char *err, size_t errlen);

#endif
