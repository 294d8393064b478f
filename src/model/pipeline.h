/*
 * pipeline.h - the wgmma kernel's forward pipeline (gpu/wgmma.cu) as a
 * discrete-event schedule of one block: who waits for whom, and when.
 *
 * Letters as in wgmma.cu: Br = 64 C query rows a block (C consumer
 * warpgroups), Bc keys a tile, d the head width, STAGES slots in the
 * ring of K and V tiles, nt the key tiles a work item visits.
 *
 * Roles (one row each in the output): the producer (one thread of
 * warpgroup 0: every TMA copy), consumers 0 .. C-1 (each its 64 rows of
 * the block), and the machine's shared units, the tensor core and the
 * copy engine, whose rows show what ran on them when.
 *
 * What the model does, step by step as the kernel's code does it
 * (wgmma_producer, wgmma_consumer_overlap, wgmma_consumer_plain):
 *   producer:  wait EMPTY_Q; copy Q; for each tile j: wait EMPTY_K[s],
 *              copy K_j to s; wait EMPTY_V[s], copy V_j to s.
 *   consumer (overlap): wait FULL_Q; wait FULL_K; [turn] issue S_0
 *              [pass]; wait S_0; release K; softmax_0; for j >= 1: wait
 *              FULL_K; [turn] issue S_j; rescale; wait FULL_V; issue
 *              P_{j-1} V_{j-1} [pass]; wait S_j; release K; softmax_j;
 *              wait P V; release V; then the last P V in its own turn;
 *              the epilogue; release Q.
 *   consumer (plain, --no-overlap): S, softmax, rescale, P V one after
 *              the other, each waited for (the kernel's SCHED 0).  The
 *              kernel's ping-pong needs the overlap (a static_assert),
 *              so no overlap means no ping-pong here too.
 * Barriers are counted in completed phases: the n-th use of slot s is
 * its round r = n / STAGES; a consumer's wait on FULL[s] passes once r +
 * 1 phases completed, the producer's wait on EMPTY[s] once r did (the
 * kernel's parity waits say the same while nobody runs two phases
 * ahead, which the ring itself guarantees).
 *
 * The shared units (how the machine is modelled, and why):
 *   tensor core  one per multiprocessor.  A GEMM is d/16 (S) or Bc/16
 *              (P V) wgmma instructions; each enters a queue at its
 *              issue time (evenly over the GEMM's issue) and the unit runs them one
 *              at a time in that order.  Two warpgroups issuing at once
 *              interleave instruction by instruction, so both GEMMs
 *              finish late: what ping-pong exists to avoid.
 *   softmax    the exp unit and the FP32 pipes, shared by equal parts
 *              among the warpgroups using them at one moment (each
 *              alone runs at the full rate: its four warps sit on the
 *              four sub-partitions).
 *   copy engine  the block's copies share the multiprocessor's link to
 *              L2 in issue order; a copy lands copy_latency after its
 *              last byte left.
 * Durations are in clocks; pipeline_costs_nominal derives them from the
 * H200's datasheet figures (see there).
 *
 * The model never prints; errors go to err as everywhere (util.h).
 */
#ifndef FLASHSTEP_PIPELINE_H
#define FLASHSTEP_PIPELINE_H

#include <stddef.h>

#define PIPELINE_MAX_CONSUMERS 4
#define PIPELINE_MAX_STAGES 8

/* Rows of the output: the producer, the consumers, the shared units. */
enum pipeline_role {
	PIPELINE_PRODUCER,
	PIPELINE_CONSUMER,	/* + c for consumer c */
	PIPELINE_TENSOR = PIPELINE_CONSUMER + PIPELINE_MAX_CONSUMERS,
	PIPELINE_COPY,
	PIPELINE_NROLES
};

enum pipeline_kind {
	PIPELINE_COPY_Q,	/* producer: issued .. landed (its FULL done) */
	PIPELINE_COPY_K,
	PIPELINE_COPY_V,
	PIPELINE_WAIT_EMPTY_Q,	/* producer: waits for a free slot */
	PIPELINE_WAIT_EMPTY_K,
	PIPELINE_WAIT_EMPTY_V,
	PIPELINE_WAIT_FULL_Q,	/* consumer: waits for a landed tile */
	PIPELINE_WAIT_FULL_K,
	PIPELINE_WAIT_FULL_V,
	PIPELINE_WAIT_TURN,	/* consumer: the ping-pong barrier (bar.sync) */
	PIPELINE_ISSUE_QK,	/* consumer: issues S = Q K_j^T */
	PIPELINE_ISSUE_PV,	/* consumer: issues O += P V_j */
	PIPELINE_WAIT_QK,	/* consumer: wgmma.wait_group until S_j is in */
	PIPELINE_WAIT_PV,	/* until P V_j is in O */
	PIPELINE_SOFTMAX,	/* mask, max, exp, sum of tile j */
	PIPELINE_RESCALE,	/* O *= alpha */
	PIPELINE_EPILOGUE,	/* O / l out to global memory */
	PIPELINE_RELEASE_Q,	/* consumer's arrive on EMPTY (an instant) */
	PIPELINE_RELEASE_K,
	PIPELINE_RELEASE_V,
	PIPELINE_PASS_TURN,	/* bar.arrive on the next consumer's turn */
	PIPELINE_GEMM_QK,	/* tensor core: S_j of consumer `wg` ran */
	PIPELINE_GEMM_PV,
	PIPELINE_XFER,		/* copy engine: a tile's bytes moved */
	PIPELINE_BARRIER,	/* a warp's __syncthreads (the mma.sync
				 * kernel's recording: pipeline_warps.h) */
	PIPELINE_NKINDS
};

/* One span (begin == end: an instant) of one role. */
struct pipeline_event {
	int cta;		/* the block (a multiprocessor) */
	int role;		/* enum pipeline_role */
	int kind;		/* enum pipeline_kind */
	int wg;			/* the consumer it is for (-1: none) */
	int i, j;		/* tile: row block i, key tile j (-1: none) */
	int stage;		/* slot of the ring (Q's slot for Q), -1 none */
	int round;		/* the slot's use count: uses / STAGES */
	double begin, end;	/* clocks from the block's start */
};

/* How long things take, in clocks of one multiprocessor. */
struct pipeline_costs {
	double clock_ghz;	/* to turn clocks into time */
	double qk_instr;	/* one wgmma m64nBck16 of S = Q K^T */
	double pv_instr;	/* one wgmma m64ndk16 of O += P V */
	double issue_qk;	/* issuing S's d/16 instructions, all of them */
	double issue_pv;	/* issuing P V's Bc/16 */
	double softmax;		/* a tile's softmax, one warpgroup alone */
	double mask;		/* added when the tile needs the mask */
	double rescale;		/* O *= alpha, one warpgroup */
	double epilogue;	/* O / l to global memory, one warpgroup */
	double copy_bytes_per_clk;	/* the multiprocessor's L2 link */
	double copy_latency;	/* issue to land, besides the bytes */
	/* What a recording adds (all 0 in the nominal costs; see
	 * pipeline_fit.h): */
	double stamp[PIPELINE_NKINDS];	/* a role's pause after a step of
				 * each kind (the recording thread writing
				 * its event, and what runs unstamped) */
	double poll;		/* the least a wait on an mbarrier takes,
				 * its phase complete or not */
	double prologue;	/* clocks before the producer's first step */
	int compute_lanes;	/* warpgroups whose softmax, rescale and
				 * epilogue run at full rate together: 1
				 * (nominal) shares the pipes among them */
};

struct pipeline_config {
	int d, br, bc;		/* head width, rows and keys a tile */
	int consumers;		/* C: Br = 64 C */
	int stages;
	int pingpong, overlap;	/* as the kernel: pingpong needs overlap */
	int tq, tk, causal;	/* the problem of one head */
	int ctas;		/* blocks to model (work items, in launch order) */
};

struct pipeline_run {
	struct pipeline_config cfg;
	struct pipeline_costs costs;
	struct pipeline_event *ev;	/* in the order they ended, per block */
	size_t nev, cap;
	double *cta_end;	/* clocks each block took */
	int *cta_i, *cta_nt;	/* its row block and the tiles it visits */
	int ncta;
};

/*
 * The kernel's configuration for head width d (64 or 128; its default
 * variants: d = 128: C = 2, Bc = 128, 2 stages; d = 64: C = 3, 4
 * stages), ping-pong and overlap on, for a (tq, tk) head.  Returns 0, or
 * -1 with err naming what the kernel does not build.
 */
int pipeline_config_default(struct pipeline_config *cfg, int d, int tq,
    int tk, int causal, char *err, size_t errlen);

/*
 * Durations from nominal H200 figures for cfg (nothing of a recording:
 * stamp, poll and prologue 0, compute_lanes 1): the tensor core's 4096
 * flops a clock (989 TFLOP/s dense fp16 / 132 SMs / 1.83 GHz), the exp
 * unit's 16 and the FP32 pipes' 128 results a clock, and an L2 link of
 * 64 bytes a clock with a copy latency of 800 clocks (assumed: neither is
 * on a datasheet; a recording replaces them).
 */
void pipeline_costs_nominal(const struct pipeline_config *cfg,
    struct pipeline_costs *costs);

/* Work item t's row block (from the last, as wgmma_tile) and tiles. */
void pipeline_item(const struct pipeline_config *cfg, int t, int *i, int *nt);

/* Does consumer wg's tile j of row block i need the mask (past Tk, or
 * across the causal diagonal)?  The kernel's test (wgmma_score_tile). */
int pipeline_tile_masked(const struct pipeline_config *cfg, int i, int wg,
    int j);

/*
 * Runs the schedule of cfg.ctas blocks (each alone on its
 * multiprocessor) into run (pipeline_run_free releases it).  Returns 0,
 * or -1 with err set (bad configuration, out of memory, or a deadlock,
 * which would be a bug of the model) and run empty.
 */
int pipeline_model(const struct pipeline_config *cfg,
    const struct pipeline_costs *costs, struct pipeline_run *run,
    char *err, size_t errlen);

void pipeline_run_free(struct pipeline_run *run);

/* qsort's order of pointers to events: block, row (role), begin, end. */
int pipeline_event_row_cmp(const void *pa, const void *pb);

/*
 * Checks the dependencies every schedule of this kernel must keep, on
 * events from the model or from a recording:
 *   - a consumer's wait on FULL of a slot's round r ends no earlier than
 *     the producer's copy of that round landed;
 *   - a slot's refill (the copy of round r, its begin: for a recording
 *     its issue) comes after every consumer released round r - 1, and
 *     after every wait for the GEMM that read round r - 1 (S for K, P V
 *     for V) ended, which catches a release made before the read was
 *     done;
 *   - under ping-pong, consumer c's k-th turn is taken no earlier than
 *     the k-th pass (PASS_TURN) of the consumer before it (for consumer
 *     0: the last one, whose first pass lets it go first), so the turns
 *     go round 0, 1, .., C-1, 0, ...  A turn is taken where the
 *     consumer's next step after its WAIT_TURN begins, not where the
 *     wait's own stamp ends: in a recording the clock read right after
 *     bar.sync does not wait for the barrier (doc/recordings/README.md).
 * Returns the number of violations (0: all hold); the first is described
 * in why.  pingpong and consumers say what to expect.
 */
int pipeline_check(const struct pipeline_event *ev, size_t nev,
    int consumers, int pingpong, char *why, size_t whylen);

/* The clocks the slowest block took: the time of the modelled run. */
double pipeline_span(const struct pipeline_run *run);

/* Each slot's share of the run during which it held a landed tile not
 * yet released by all consumers (K and V together, 0..1), into occ
 * (cfg.stages entries). */
void pipeline_occupancy(const struct pipeline_run *run, double *occ);

const char *pipeline_kind_name(int kind);
const char *pipeline_role_name(int role, char *buf, size_t len);

#endif
