/*
 * gpucmd.h - what the GPU commands (cmd_gpu.c, cmd_compare.c,
 * cmd_bench_gpu.c) share: the options they have in common, the device
 * check and its exit status, the rule of gpu's check against the
 * double reference (--check), and the problems: B batch entries of H
 * query heads on G K/V heads drawn from one spec (--batch, and the
 * model's --heads, --kv-heads), run whole by a kernel that takes grouped
 * heads and by the split-KV runs, or one head a problem by the others.
 */
#ifndef FLASHSTEP_GPUCMD_H
#define FLASHSTEP_GPUCMD_H

#include <stddef.h>
#include <stdio.h>

#include "gpu/gpu.h"
#include "app/options.h"

/*
 * How much of the kernel's results `flashstep gpu` holds against the
 * double reference (--check).  The reference is plain attention in
 * double on the CPU, B H Tq Tk (d + dv) multiply-adds: at T = 4096,
 * d = 128, 16 heads, batch 8 that is minutes, so past a size the
 * default checks a sample of every head's rows.
 */
enum gpucmd_check {
	GPUCMD_CHECK_AUTO,	/* full up to GPUCMD_CHECK_FULL_MAX, else sampled */
	GPUCMD_CHECK_FULL,	/* every row of every head */
	GPUCMD_CHECK_SAMPLED,	/* GPUCMD_CHECK_ROWS rows of every head */
	GPUCMD_CHECK_NONE,	/* none: the output and the time only */
};

/* The sampled check's rows a head, evenly spaced from the first to the
 * last (every row of a head with fewer). */
#define GPUCMD_CHECK_ROWS 32
/* --check auto checks in full up to this many multiply-adds (2^30: a
 * second or two on one core, less on the reference's threads). */
#define GPUCMD_CHECK_FULL_MAX (1LL << 30)

/* "auto", "full", "sampled", "none" */
const char *gpucmd_check_name(enum gpucmd_check c);

/* The multiply-adds of the full double reference of n problems. */
long long gpucmd_check_work(const struct problem *ps, int n);

/* What mode checks of the n problems ps: auto made full or sampled by
 * gpucmd_check_work; sampled stays sampled even where it is every row. */
enum gpucmd_check gpucmd_check_resolve(enum gpucmd_check mode,
    const struct problem *ps, int n);

/* The rows a head of tq rows the sampled check takes, in rows (room for
 * GPUCMD_CHECK_ROWS): evenly spaced, the first and the last among them,
 * ascending; returns how many (tq when tq <= GPUCMD_CHECK_ROWS). */
int gpucmd_check_rows(int tq, int *rows);

/*
 * The options every GPU command has.  A command's own argument struct
 * starts with one of these, so the setters below take that struct's
 * pointer as their ctx.
 */
struct gpucmd_args {
	const struct gpu_kernel *kernel;	/* --kernel (default teaching) */
	long heads;		/* bench's --heads (gpu and compare take the
				 * model's: options.spec.heads) */
	long batch;		/* --batch */
	long repeat;		/* --repeat: timed runs after a warm-up */
	enum gpu_dq_mode dq;	/* --dq, with --backward */
	enum gpucmd_check check;	/* --check */
};

void gpucmd_args_init(struct gpucmd_args *a, long repeat);

/* Setters of the shared options, for the commands' option tables. */
int gpucmd_set_kernel(void *ctx, const char *v, char *err, size_t errlen);
int gpucmd_set_heads(void *ctx, const char *v, char *err, size_t errlen);
int gpucmd_set_batch(void *ctx, const char *v, char *err, size_t errlen);
int gpucmd_set_repeat(void *ctx, const char *v, char *err, size_t errlen);
int gpucmd_set_dq(void *ctx, const char *v, char *err, size_t errlen);
int gpucmd_set_check(void *ctx, const char *v, char *err, size_t errlen);

/*
 * The device's name in dev and 0, or the reason there is none printed in
 * one line as "flashstep NAME: ..." and the exit status that goes with
 * it (3 built without CUDA, 4 no usable driver, 5 no device).
 */
int gpucmd_device(const char *name, char *dev, size_t devlen);

/*
 * What a command runs: B batch entries of H query heads on G K/V heads
 * (entry b draws its inputs from seed + b), and the problems the kernel
 * is handed: the entries themselves, or, for a kernel that takes one
 * head a problem, their B H heads apart (problem_head: views that
 * borrow the entries' arrays, head h of entry b at b H + h).
 */
struct gpucmd_set {
	struct problem *entries;	/* owned */
	int batch;
	struct problem *ps;		/* the entries, or their heads apart */
	int n;
	int apart;			/* ps are heads apart */
};

void gpucmd_set_free(struct gpucmd_set *set);

/*
 * For --backward: --dq only with it, the gradient files only where the
 * command writes them (files: 1) and for one problem, the kernel's
 * backward able to take the problem.  0, or -1 with err.
 */
int gpucmd_backward_args(const struct options *o, const struct gpucmd_args *a,
    const struct problem *ps, int n, int files, char *err, size_t errlen);

/* dO of each of n problems, one after another in *out (malloc'd): the
 * --grad-output file for every one, or N(0, 1) from problem b's seed. */
int gpucmd_grad_outputs(const struct options *o, const struct problem *ps,
    int n, float **out, char *err, size_t errlen);

/*
 * The problems, with the kernel's tiling picked before (when --d is
 * given) and after they are built (d read from the files); run whole
 * when the kernel takes grouped heads (GPU_CAP_HEADS) or the run splits
 * its keys (--splits: the split-KV run takes them whole, or refuses),
 * else one head a problem (and then --pack-gqa, which packs a group's
 * heads into one row block, is refused).  0, or -1 with err.
 */
int gpucmd_setup(struct options *o, const struct gpucmd_args *a,
    struct gpucmd_set *set, char *err, size_t errlen);

/* "heads:" and "batch:" lines, when there are several of either. */
void gpucmd_print_set(const struct options *o, const struct gpucmd_set *set);

/* Problem i of set->ps in words: "problem 2 (seed 3)", or "batch entry
 * 1 (seed 2), head 3" for heads apart. */
void gpucmd_label(const struct options *o, const struct gpucmd_set *set,
    int i, char *buf, size_t len);

/*
 * A packed batch (--seqlens) as the commands run it on a kernel that
 * takes one (GPU_CAP_VARLEN): its sequences' own simulators (problem_seq:
 * each refuses what the simulator does not take, and describes it), and
 * the number of each one's first step in the batch's, which runs on from
 * one sequence to the next (gpu_run's numbering, varlen.h's timeline).
 */
struct gpucmd_packed {
	int nseq;
	struct problem *seqs;		/* views of the entry's arrays */
	struct sim **sims;
	long *step0;			/* nseq + 1: step0[nseq] is the total */
};

/* The packed batch p under o's tiling and rule: 0, or -1 with err
 * (--splits refused: no split-KV run takes a packed batch). */
int gpucmd_packed_new(const struct options *o, const struct problem *p,
    struct gpucmd_packed *pk, char *err, size_t errlen);
void gpucmd_packed_free(struct gpucmd_packed *pk);

/* The simulator that gpu and compare step beside the kernel: p's own
 * (split-KV as o says) into *sim, or for a packed batch each sequence's
 * into *pk, *sim NULL.  It refuses what no kernel takes (tiles, rules,
 * splits).  0, or -1 with err. */
int gpucmd_sims_new(const struct options *o, const struct problem *p,
    struct gpucmd_packed *pk, struct sim **sim, char *err, size_t errlen);

/* Sequence 0's setup lines, then one line a sequence: its lengths and
 * its steps in the batch. */
void gpucmd_packed_describe(FILE *f, const struct gpucmd_packed *pk);

/* The sequence that holds the batch's step k, and k within it. */
int gpucmd_packed_seq(const struct gpucmd_packed *pk, long k, long *local);

#endif
