/*
 * pipeline.c - the wgmma kernel's forward pipeline as a discrete-event
 * schedule (pipeline.h says what is modelled and why).
 *
 * How a block is run:
 *
 *   pipeline_program    each role's steps, in the kernel's order, as a
 *        |              list of ops (wait, arrive, copy, issue, compute)
 *   block_run           time moves from event to event: at each instant
 *        |              every role takes the ops it can (a wait that is
 *        |              satisfied, an arrival, an issue); then the
 *        |              earliest of the next things to happen (a role's
 *        |              issue done, a wgmma instruction done, a copy
 *        |              landed, a softmax done) sets the next instant
 *        v
 *   the events          each op's span, appended as it ends
 *
 * A deadlock (no role can move and nothing is pending) is a bug of the
 * model and is reported as one.
 */
#include "config.h"

#include "model/pipeline.h"
#include "model/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Times within this many clocks are one instant (sums of doubles). */
#define PIPELINE_EPS 1e-6

enum op_type {
	OP_WAIT_BAR,	/* until barrier bar of slot has `need` phases done */
	OP_ARRIVE,	/* one arrival on barrier bar of slot */
	OP_COPY,	/* TMA copy of `bytes` into slot; lands on its FULL */
	OP_TURN_WAIT,	/* bar.sync on turn barrier `arg` */
	OP_TURN_PASS,	/* bar.arrive on turn barrier `arg` */
	OP_ISSUE,	/* issue a GEMM of `arg` wgmma instructions */
	OP_WAIT_GEMM,	/* wgmma.wait_group `arg` */
	OP_COMPUTE,	/* `work` clocks on the shared softmax pipes */
};

/* The mbarriers of a block (wgmma.cu's enum wgmma_barrier). */
enum bar_kind { BAR_FULL_Q, BAR_EMPTY_Q, BAR_FULL_K, BAR_EMPTY_K,
	BAR_FULL_V, BAR_EMPTY_V, BAR_N };

struct op {
	enum op_type type;
	int kind;		/* the event it leaves (enum pipeline_kind) */
	int bar, slot, need;	/* OP_WAIT_BAR, OP_ARRIVE, OP_COPY */
	int arg;
	int j, round;
	double work;		/* OP_COMPUTE clocks alone; OP_COPY bytes */
};

struct program {
	struct op *op;
	int n, cap;
};

/* One wgmma instruction waiting for or on the tensor core. */
struct instr {
	double key;		/* when it entered the queue */
	int gemm;		/* index into block.gemm */
};

struct gemm {
	int wg, kind, j, stage, round;
	int left;		/* instructions not yet done */
	double begin;		/* the first one's start (-1: not yet) */
};

struct role {
	struct program prog;
	int pc;
	int started;		/* the op at pc is under way */
	double op_begin;	/* when it started (or began to wait) */
	double busy_until;	/* an issue's end */
	double ready_at;	/* no new step before (costs.stamp after the
				 * last; costs.prologue for the producer) */
	int job;		/* index of its softmax-pipe job, -1 none */
	int outstanding;	/* consumer: GEMMs issued, not done */
	int wg;			/* consumer index, -1 for the producer */
};

struct landing {
	double at;
	int bar, slot;
};

struct block {
	const struct pipeline_config *cfg;
	const struct pipeline_costs *costs;
	struct pipeline_run *run;
	int cta, i, nt;
	struct role role[1 + PIPELINE_MAX_CONSUMERS];
	int nrole;
	int done[BAR_N][PIPELINE_MAX_STAGES];	/* completed phases */
	int arrived[BAR_N][PIPELINE_MAX_STAGES];	/* this phase's arrivals */
	int tokens[PIPELINE_MAX_CONSUMERS];	/* turn barriers' passes */
	/* the tensor core: a queue per warpgroup (in order), one running */
	struct instr *queue[PIPELINE_MAX_CONSUMERS];
	int qhead[PIPELINE_MAX_CONSUMERS], qn[PIPELINE_MAX_CONSUMERS],
	    qcap[PIPELINE_MAX_CONSUMERS];
	int tc_wg;		/* whose instruction runs, -1 idle */
	double tc_until;
	struct gemm *gemm;
	int ngemm, gcap;
	/* the copy engine */
	double link_free;
	struct landing *land;
	int nland, lcap;
	/* the softmax pipes: remaining work per role, shared equally */
	double job_left[1 + PIPELINE_MAX_CONSUMERS];
	int job_on[1 + PIPELINE_MAX_CONSUMERS];
};

static const char *const pipeline_kind_names[PIPELINE_NKINDS] = {
	[PIPELINE_COPY_Q] = "copy Q",
	[PIPELINE_COPY_K] = "copy K",
	[PIPELINE_COPY_V] = "copy V",
	[PIPELINE_WAIT_EMPTY_Q] = "wait empty Q",
	[PIPELINE_WAIT_EMPTY_K] = "wait empty K",
	[PIPELINE_WAIT_EMPTY_V] = "wait empty V",
	[PIPELINE_WAIT_FULL_Q] = "wait full Q",
	[PIPELINE_WAIT_FULL_K] = "wait full K",
	[PIPELINE_WAIT_FULL_V] = "wait full V",
	[PIPELINE_WAIT_TURN] = "wait turn",
	[PIPELINE_ISSUE_QK] = "issue QK",
	[PIPELINE_ISSUE_PV] = "issue PV",
	[PIPELINE_WAIT_QK] = "wait QK",
	[PIPELINE_WAIT_PV] = "wait PV",
	[PIPELINE_SOFTMAX] = "softmax",
	[PIPELINE_RESCALE] = "rescale",
	[PIPELINE_EPILOGUE] = "epilogue",
	[PIPELINE_RELEASE_Q] = "release Q",
	[PIPELINE_RELEASE_K] = "release K",
	[PIPELINE_RELEASE_V] = "release V",
	[PIPELINE_PASS_TURN] = "pass turn",
	[PIPELINE_GEMM_QK] = "QK",
	[PIPELINE_GEMM_PV] = "PV",
	[PIPELINE_XFER] = "xfer",
	[PIPELINE_BARRIER] = "barrier",
};

const char *
pipeline_kind_name(int kind)
{
	if (kind < 0 || kind >= PIPELINE_NKINDS)
		return "?";
	return pipeline_kind_names[kind];
}

const char *
pipeline_role_name(int role, char *buf, size_t len)
{
	if (role == PIPELINE_PRODUCER)
		snprintf(buf, len, "producer");
	else if (role >= PIPELINE_CONSUMER && role < PIPELINE_TENSOR)
		snprintf(buf, len, "consumer %d", role - PIPELINE_CONSUMER);
	else if (role == PIPELINE_TENSOR)
		snprintf(buf, len, "tensor core");
	else if (role == PIPELINE_COPY)
		snprintf(buf, len, "copy engine");
	else
		snprintf(buf, len, "?");
	return buf;
}

int
pipeline_config_default(struct pipeline_config *cfg, int d, int tq, int tk,
    int causal, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof *cfg);
	if (d != 64 && d != 128)
		return util_error(err, errlen, "the wgmma kernel is built for "
		    "d = 64 or 128, not %d", d);
	if (tq < 1 || tk < 1)
		return util_error(err, errlen, "Tq and Tk must be at least 1");
	cfg->d = d;
	cfg->bc = 128;
	cfg->consumers = d == 128 ? 2 : 3;
	cfg->br = 64 * cfg->consumers;
	cfg->stages = d == 128 ? 2 : 4;
	cfg->pingpong = 1;
	cfg->overlap = 1;
	cfg->tq = tq;
	cfg->tk = tk;
	cfg->causal = causal != 0;
	cfg->ctas = 1;
	return 0;
}

void
pipeline_costs_nominal(const struct pipeline_config *cfg,
    struct pipeline_costs *c)
{
	/* Per multiprocessor and clock: 989e12 / (132 * 1.83e9) = 4096
	 * flops of dense fp16 wgmma, 16 exps (MUFU), 128 FP32 results. */
	const double tensor = 4096, mufu = 16, fp32 = 128;
	const double scores = 64.0 * cfg->bc;	/* one warpgroup's tile */
	/* The HBM's 4.8 TB/s shared by 132 SMs at 1.83 GHz: 19.9 B/clk. */
	const double hbm = 4.8e12 / 132 / 1.83e9;

	memset(c, 0, sizeof *c);
	c->clock_ghz = 1.83;
	c->qk_instr = 2.0 * 64 * cfg->bc * 16 / tensor;
	c->pv_instr = 2.0 * 64 * cfg->d * 16 / tensor;
	/* 8 clocks an instruction (assumed) */
	c->issue_qk = 8.0 * (cfg->d / 16);
	c->issue_pv = 8.0 * (cfg->bc / 16);
	/* An exp per score; max, the scaled subtract (an fma), the sum and
	 * half a pack on the FP32 pipes, counted one after the other. */
	c->softmax = scores / mufu + 3.5 * scores / fp32;
	c->mask = 2 * scores / fp32;
	c->rescale = 64.0 * cfg->d / fp32;
	/* 64 rows of O in 16 bits to HBM at this SM's share, plus the
	 * divide and the packs. */
	c->epilogue = 64.0 * cfg->d * 2 / hbm + 2 * 64.0 * cfg->d / fp32;
	c->copy_bytes_per_clk = 64;
	c->copy_latency = 800;
	c->compute_lanes = 1;
}

void
pipeline_item(const struct pipeline_config *cfg, int t, int *i, int *nt)
{
	const int tr = (cfg->tq + cfg->br - 1) / cfg->br;
	int kend = cfg->tk, row0, rend;

	*i = tr - 1 - t % tr;
	row0 = *i * cfg->br;
	if (cfg->causal) {
		/* bottom-right aligned, as wgmma_tile */
		rend = row0 + cfg->br < cfg->tq ? row0 + cfg->br : cfg->tq;
		kend = rend + cfg->tk - cfg->tq;
		if (kend > cfg->tk)
			kend = cfg->tk;
	}
	*nt = kend > 0 ? (kend + cfg->bc - 1) / cfg->bc : 0;
}

/* ------------------------------------------------------------------ */

static int
program_add(struct program *p, struct op o, char *err, size_t errlen)
{
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 64;
		struct op *n = realloc(p->op, (size_t)cap * sizeof *n);

		if (n == NULL)
			return util_error(err, errlen, "out of memory (the "
			    "pipeline's program)");
		p->op = n;
		p->cap = cap;
	}
	p->op[p->n++] = o;
	return 0;
}

/* Shorthands that build one op each. */
static struct op
op_wait(int kind, int bar, int slot, int need, int j, int round)
{
	struct op o = { OP_WAIT_BAR, kind, bar, slot, need, 0, j, round, 0 };
	return o;
}

static struct op
op_arrive(int kind, int bar, int slot, int j, int round)
{
	struct op o = { OP_ARRIVE, kind, bar, slot, 0, 0, j, round, 0 };
	return o;
}

static struct op
op_simple(enum op_type type, int kind, int arg, int slot, int j, int round,
    double work)
{
	struct op o = { type, kind, -1, slot, 0, arg, j, round, work };
	return o;
}

/*
 * The producer (wgmma_producer): Q once, then K_j and V_j into slot
 * n % STAGES, each after that slot's previous use was released.
 */
static int
program_producer(const struct block *b, struct program *p, char *err,
    size_t errlen)
{
	const struct pipeline_config *c = b->cfg;
	const double qbytes = 2.0 * c->br * c->d, tbytes = 2.0 * c->bc * c->d;
	int j, rc = 0;

	if (b->nt == 0)
		return 0;
	rc |= program_add(p, op_wait(PIPELINE_WAIT_EMPTY_Q, BAR_EMPTY_Q, 0, 0,
	    -1, 0), err, errlen);
	rc |= program_add(p, op_simple(OP_COPY, PIPELINE_COPY_Q, BAR_FULL_Q, 0,
	    -1, 0, qbytes), err, errlen);
	for (j = 0; j < b->nt && rc == 0; j++) {
		const int s = j % c->stages, r = j / c->stages;

		rc |= program_add(p, op_wait(PIPELINE_WAIT_EMPTY_K,
		    BAR_EMPTY_K, s, r, j, r), err, errlen);
		rc |= program_add(p, op_simple(OP_COPY, PIPELINE_COPY_K,
		    BAR_FULL_K, s, j, r, tbytes), err, errlen);
		rc |= program_add(p, op_wait(PIPELINE_WAIT_EMPTY_V,
		    BAR_EMPTY_V, s, r, j, r), err, errlen);
		rc |= program_add(p, op_simple(OP_COPY, PIPELINE_COPY_V,
		    BAR_FULL_V, s, j, r, tbytes), err, errlen);
	}
	return rc;
}

int
pipeline_tile_masked(const struct pipeline_config *c, int i, int wg, int j)
{
	const int row0 = i * c->br;

	return (j + 1) * c->bc > c->tk || (c->causal &&
	    (j + 1) * c->bc - 1 > row0 + 64 * wg + c->tk - c->tq);
}

/* S_j's softmax, with the mask's cost where the tile needs it. */
static double
block_softmax_cost(const struct block *b, int wg, int j)
{
	return b->costs->softmax + (pipeline_tile_masked(b->cfg, b->i, wg, j) ?
	    b->costs->mask : 0);
}

/*
 * A consumer, as wgmma_consumer_overlap (SCHED 2: the rescale between
 * the two issues) or wgmma_consumer_plain, then the epilogue.
 */
static int
program_consumer(const struct block *b, int wg, struct program *p,
    char *err, size_t errlen)
{
	const struct pipeline_config *c = b->cfg;
	const int pp = c->pingpong && c->overlap && c->consumers > 1;
	const int me = wg, next = (wg + 1) % c->consumers;
	const int nqk = c->d / 16, npv = c->bc / 16;
	const int nt = b->nt;
	int j, rc = 0;

#define ADD(o) (rc |= program_add(p, (o), err, errlen))
#define SLOT(x) ((x) % c->stages)
#define ROUND(x) ((x) / c->stages)
	if (pp && wg == c->consumers - 1)
		ADD(op_simple(OP_TURN_PASS, PIPELINE_PASS_TURN, 0, -1, -1, 0,
		    0));		/* consumer 0 goes first */
	if (nt == 0) {
		ADD(op_simple(OP_COMPUTE, PIPELINE_EPILOGUE, 0, -1, -1, 0,
		    b->costs->epilogue));
		goto end;
	}
	ADD(op_wait(PIPELINE_WAIT_FULL_Q, BAR_FULL_Q, 0, 1, -1, 0));
	if (!c->overlap) {
		for (j = 0; j < nt; j++) {
			const int s = SLOT(j), r = ROUND(j);

			ADD(op_wait(PIPELINE_WAIT_FULL_K, BAR_FULL_K, s, r + 1,
			    j, r));
			ADD(op_simple(OP_ISSUE, PIPELINE_ISSUE_QK, nqk, s, j, r,
			    0));
			ADD(op_simple(OP_WAIT_GEMM, PIPELINE_WAIT_QK, 0, s, j,
			    r, 0));
			ADD(op_arrive(PIPELINE_RELEASE_K, BAR_EMPTY_K, s, j, r));
			ADD(op_simple(OP_COMPUTE, PIPELINE_SOFTMAX, 0, s, j, r,
			    block_softmax_cost(b, wg, j)));
			ADD(op_simple(OP_COMPUTE, PIPELINE_RESCALE, 0, s, j, r,
			    b->costs->rescale));
			ADD(op_wait(PIPELINE_WAIT_FULL_V, BAR_FULL_V, s, r + 1,
			    j, r));
			ADD(op_simple(OP_ISSUE, PIPELINE_ISSUE_PV, npv, s, j, r,
			    0));
			ADD(op_simple(OP_WAIT_GEMM, PIPELINE_WAIT_PV, 0, s, j,
			    r, 0));
			ADD(op_arrive(PIPELINE_RELEASE_V, BAR_EMPTY_V, s, j, r));
		}
		goto epilogue;
	}
	/* Tile 0: S alone. */
	ADD(op_wait(PIPELINE_WAIT_FULL_K, BAR_FULL_K, 0, 1, 0, 0));
	if (pp)
		ADD(op_simple(OP_TURN_WAIT, PIPELINE_WAIT_TURN, me, -1, 0, 0, 0));
	ADD(op_simple(OP_ISSUE, PIPELINE_ISSUE_QK, nqk, 0, 0, 0, 0));
	if (pp)
		ADD(op_simple(OP_TURN_PASS, PIPELINE_PASS_TURN, next, -1, 0, 0,
		    0));
	ADD(op_simple(OP_WAIT_GEMM, PIPELINE_WAIT_QK, 0, 0, 0, 0, 0));
	ADD(op_arrive(PIPELINE_RELEASE_K, BAR_EMPTY_K, 0, 0, 0));
	ADD(op_simple(OP_COMPUTE, PIPELINE_SOFTMAX, 0, 0, 0, 0,
	    block_softmax_cost(b, wg, 0)));
	for (j = 1; j < nt; j++) {
		const int sk = SLOT(j), rk = ROUND(j);
		const int sv = SLOT(j - 1), rv = ROUND(j - 1);

		ADD(op_wait(PIPELINE_WAIT_FULL_K, BAR_FULL_K, sk, rk + 1, j,
		    rk));
		if (pp)
			ADD(op_simple(OP_TURN_WAIT, PIPELINE_WAIT_TURN, me, -1,
			    j, 0, 0));
		ADD(op_simple(OP_ISSUE, PIPELINE_ISSUE_QK, nqk, sk, j, rk, 0));
		ADD(op_simple(OP_COMPUTE, PIPELINE_RESCALE, 0, sv, j - 1, rv,
		    b->costs->rescale));
		ADD(op_wait(PIPELINE_WAIT_FULL_V, BAR_FULL_V, sv, rv + 1, j - 1,
		    rv));
		ADD(op_simple(OP_ISSUE, PIPELINE_ISSUE_PV, npv, sv, j - 1, rv,
		    0));
		if (pp)
			ADD(op_simple(OP_TURN_PASS, PIPELINE_PASS_TURN, next, -1,
			    j, 0, 0));
		ADD(op_simple(OP_WAIT_GEMM, PIPELINE_WAIT_QK, 1, sk, j, rk, 0));
		ADD(op_arrive(PIPELINE_RELEASE_K, BAR_EMPTY_K, sk, j, rk));
		ADD(op_simple(OP_COMPUTE, PIPELINE_SOFTMAX, 0, sk, j, rk,
		    block_softmax_cost(b, wg, j)));
		ADD(op_simple(OP_WAIT_GEMM, PIPELINE_WAIT_PV, 0, sv, j - 1, rv,
		    0));
		ADD(op_arrive(PIPELINE_RELEASE_V, BAR_EMPTY_V, sv, j - 1, rv));
	}
	{
		const int sv = SLOT(nt - 1), rv = ROUND(nt - 1);

		ADD(op_wait(PIPELINE_WAIT_FULL_V, BAR_FULL_V, sv, rv + 1,
		    nt - 1, rv));
		if (pp)
			ADD(op_simple(OP_TURN_WAIT, PIPELINE_WAIT_TURN, me, -1,
			    nt, 0, 0));
		ADD(op_simple(OP_COMPUTE, PIPELINE_RESCALE, 0, sv, nt - 1, rv,
		    b->costs->rescale));
		ADD(op_simple(OP_ISSUE, PIPELINE_ISSUE_PV, npv, sv, nt - 1, rv,
		    0));
		if (pp)
			ADD(op_simple(OP_TURN_PASS, PIPELINE_PASS_TURN, next, -1,
			    nt, 0, 0));
		ADD(op_simple(OP_WAIT_GEMM, PIPELINE_WAIT_PV, 0, sv, nt - 1, rv,
		    0));
		ADD(op_arrive(PIPELINE_RELEASE_V, BAR_EMPTY_V, sv, nt - 1, rv));
	}
epilogue:
	ADD(op_simple(OP_COMPUTE, PIPELINE_EPILOGUE, 0, 0, -1, 0,
	    b->costs->epilogue));
	ADD(op_arrive(PIPELINE_RELEASE_Q, BAR_EMPTY_Q, 0, -1, 0));
end:
	if (pp && wg == 0)
		ADD(op_simple(OP_TURN_WAIT, PIPELINE_WAIT_TURN, me, -1, nt + 1,
		    0, 0));		/* takes back the last pass */
#undef ADD
#undef SLOT
#undef ROUND
	return rc;
}

/* ------------------------------------------------------------------ */

static int
block_emit(struct block *b, int role, int kind, int wg, int j, int stage,
    int round, double begin, double end, char *err, size_t errlen)
{
	struct pipeline_run *run = b->run;
	struct pipeline_event *e;

	if (run->nev == run->cap) {
		size_t cap = run->cap ? 2 * run->cap : 256;
		struct pipeline_event *n = realloc(run->ev, cap * sizeof *n);

		if (n == NULL)
			return util_error(err, errlen, "out of memory (the "
			    "pipeline's events)");
		run->ev = n;
		run->cap = cap;
	}
	e = &run->ev[run->nev++];
	e->cta = b->cta;
	e->role = role;
	e->kind = kind;
	e->wg = wg;
	e->i = b->i;
	e->j = j;
	e->stage = stage;
	e->round = round;
	e->begin = begin;
	e->end = end;
	return 0;
}

static int
role_row(const struct role *r)
{
	return r->wg < 0 ? PIPELINE_PRODUCER : PIPELINE_CONSUMER + r->wg;
}

/* Is the barrier of a waiting op satisfied now? */
static int
block_ready(const struct block *b, const struct role *r, const struct op *o,
    double t)
{
	switch (o->type) {
	case OP_WAIT_BAR:
		return b->done[o->bar][o->slot] >= o->need &&
		    t + PIPELINE_EPS >= r->op_begin + b->costs->poll;
	case OP_TURN_WAIT:
		return b->tokens[o->arg] > 0;
	case OP_WAIT_GEMM:
		return r->outstanding <= o->arg;
	default:
		return 1;
	}
}

static int
block_arrive(struct block *b, int bar, int slot)
{
	/* FULL barriers take the producer's one arrival with the bytes (a
	 * landing); EMPTY ones one arrival from each consumer. */
	const int need = bar == BAR_EMPTY_Q || bar == BAR_EMPTY_K ||
	    bar == BAR_EMPTY_V ? b->cfg->consumers : 1;

	if (++b->arrived[bar][slot] == need) {
		b->arrived[bar][slot] = 0;
		b->done[bar][slot]++;
		return 1;
	}
	return 0;
}

static int
block_grow(void **p, int *cap, int n, size_t size)
{
	void *q;
	int c;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 64;
	if ((q = realloc(*p, (size_t)c * size)) == NULL)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/*
 * Takes the ops role r can take at time t.  Returns 1 if it moved (which
 * may let another role move), 0 if not, -1 on error.
 */
static int
block_step_role(struct block *b, struct role *r, double t, char *err,
    size_t errlen)
{
	const struct pipeline_costs *k = b->costs;
	const int row = role_row(r);
	int moved = 0;

	while (r->pc < r->prog.n) {
		const struct op *o = &r->prog.op[r->pc];

		if (r->started) {
			/* an issue or a compute: done once its time is up */
			if (r->job >= 0 || r->busy_until > t + PIPELINE_EPS)
				return moved;
			if (block_emit(b, row, o->kind, r->wg, o->j, o->slot,
			    o->round, r->op_begin, o->type == OP_ISSUE ?
			    r->busy_until : t, err, errlen) != 0)
				return -1;
			r->started = 0;
			r->op_begin = -1;
			r->pc++;
			r->ready_at = t + k->stamp[o->kind];
			moved = 1;
			continue;
		}
		/* a new step waits out the pause after the last one */
		if (r->op_begin < 0 && r->ready_at > t + PIPELINE_EPS)
			return moved;
		switch (o->type) {
		case OP_WAIT_BAR:
		case OP_TURN_WAIT:
		case OP_WAIT_GEMM:
			if (r->op_begin < 0)
				r->op_begin = t;
			if (!block_ready(b, r, o, t))
				return moved;
			if (o->type == OP_TURN_WAIT)
				b->tokens[o->arg]--;
			if (block_emit(b, row, o->kind, r->wg, o->j,
			    o->type == OP_TURN_WAIT ? -1 : o->slot, o->round,
			    r->op_begin, t, err, errlen) != 0)
				return -1;
			break;
		case OP_ARRIVE:
			block_arrive(b, o->bar, o->slot);
			if (block_emit(b, row, o->kind, r->wg, o->j, o->slot,
			    o->round, t, t, err, errlen) != 0)
				return -1;
			break;
		case OP_TURN_PASS:
			b->tokens[o->arg]++;
			if (block_emit(b, row, o->kind, r->wg, o->j, -1, 0, t, t,
			    err, errlen) != 0)
				return -1;
			break;
		case OP_COPY: {
			const double start = t > b->link_free ? t : b->link_free;
			const double land = start + o->work /
			    k->copy_bytes_per_clk + k->copy_latency;

			b->link_free = start + o->work / k->copy_bytes_per_clk;
			if (block_grow((void **)&b->land, &b->lcap, b->nland,
			    sizeof *b->land) != 0)
				return util_error(err, errlen, "out of memory");
			b->land[b->nland].at = land;
			b->land[b->nland].bar = o->arg;
			b->land[b->nland].slot = o->slot;
			b->nland++;
			if (block_emit(b, PIPELINE_PRODUCER, o->kind, -1, o->j,
			    o->slot, o->round, t, land, err, errlen) != 0 ||
			    block_emit(b, PIPELINE_COPY, PIPELINE_XFER, -1, o->j,
			    o->slot, o->round, start, b->link_free, err,
			    errlen) != 0)
				return -1;
			break;
		}
		case OP_ISSUE: {
			const int wg = r->wg;
			const double issue = o->kind == PIPELINE_ISSUE_QK ?
			    k->issue_qk : k->issue_pv;
			int x;

			if (block_grow((void **)&b->gemm, &b->gcap, b->ngemm,
			    sizeof *b->gemm) != 0)
				return util_error(err, errlen, "out of memory");
			b->gemm[b->ngemm].wg = wg;
			b->gemm[b->ngemm].kind = o->kind == PIPELINE_ISSUE_QK ?
			    PIPELINE_GEMM_QK : PIPELINE_GEMM_PV;
			b->gemm[b->ngemm].j = o->j;
			b->gemm[b->ngemm].stage = o->slot;
			b->gemm[b->ngemm].round = o->round;
			b->gemm[b->ngemm].left = o->arg;
			b->gemm[b->ngemm].begin = -1;
			for (x = 0; x < o->arg; x++) {
				if (block_grow((void **)&b->queue[wg],
				    &b->qcap[wg], b->qn[wg],
				    sizeof *b->queue[wg]) != 0)
					return util_error(err, errlen,
					    "out of memory");
				/* each instruction joins the queue once issued */
				b->queue[wg][b->qn[wg]].key = t + (x + 1) *
				    issue / o->arg;
				b->queue[wg][b->qn[wg]].gemm = b->ngemm;
				b->qn[wg]++;
			}
			b->ngemm++;
			r->outstanding++;
			r->started = 1;
			r->op_begin = t;
			r->busy_until = t + issue;
			moved = 1;
			continue;
		}
		case OP_COMPUTE:
			r->started = 1;
			r->op_begin = t;
			r->job = 1;
			b->job_on[r - b->role] = 1;
			b->job_left[r - b->role] = o->work;
			moved = 1;
			continue;
		}
		r->op_begin = -1;
		r->pc++;
		r->ready_at = t + k->stamp[o->kind];
		moved = 1;
	}
	return moved;
}

/* The instruction the idle tensor core takes at t: the earliest queued
 * (ties to the lower warpgroup), or -1. */
static int
block_tc_pick(const struct block *b, double t, double *next_key)
{
	int wg, best = -1;
	double key = INFINITY;

	for (wg = 0; wg < b->cfg->consumers; wg++) {
		if (b->qhead[wg] == b->qn[wg])
			continue;
		if (b->queue[wg][b->qhead[wg]].key < key) {
			key = b->queue[wg][b->qhead[wg]].key;
			best = wg;
		}
	}
	*next_key = key;
	return key <= t + PIPELINE_EPS ? best : -1;
}

static int
block_run(struct block *b, char *err, size_t errlen)
{
	const struct pipeline_costs *k = b->costs;
	double t = 0;
	int x, nr = b->nrole;

	for (;;) {
		int moved, wg, njobs, all_done = 1;
		double next = INFINITY, key, share;

		/* every role as far as it goes at t */
		do {
			moved = 0;
			for (x = 0; x < nr; x++) {
				const int m = block_step_role(b, &b->role[x], t,
				    err, errlen);
				if (m < 0)
					return -1;
				moved |= m;
			}
		} while (moved);
		/* the tensor core takes its next instruction */
		if (b->tc_wg < 0 && (wg = block_tc_pick(b, t, &key)) >= 0) {
			struct instr *in = &b->queue[wg][b->qhead[wg]];
			struct gemm *g = &b->gemm[in->gemm];

			if (g->begin < 0)
				g->begin = t;
			b->tc_wg = wg;
			b->tc_until = t + (g->kind == PIPELINE_GEMM_QK ?
			    k->qk_instr : k->pv_instr);
		}

		for (x = 0; x < nr; x++)
			if (b->role[x].pc < b->role[x].prog.n)
				all_done = 0;
		if (all_done)
			break;

		/* the next instant */
		njobs = 0;
		for (x = 0; x < nr; x++)
			njobs += b->job_on[x];
		share = njobs > k->compute_lanes ? (double)njobs /
		    k->compute_lanes : 1;
		for (x = 0; x < nr; x++) {
			const struct role *r = &b->role[x];
			const struct op *o = r->pc < r->prog.n ?
			    &r->prog.op[r->pc] : NULL;

			if (r->started && r->job < 0 && r->busy_until > t)
				next = fmin(next, r->busy_until);
			if (b->job_on[x])
				next = fmin(next, t + b->job_left[x] * share);
			if (o != NULL && !r->started && r->op_begin < 0 &&
			    r->ready_at > t)
				next = fmin(next, r->ready_at);
			if (o != NULL && o->type == OP_WAIT_BAR &&
			    r->op_begin >= 0 && r->op_begin + k->poll > t)
				next = fmin(next, r->op_begin + k->poll);
		}
		if (b->tc_wg >= 0)
			next = fmin(next, b->tc_until);
		else {
			block_tc_pick(b, t, &key);
			if (key > t)
				next = fmin(next, key);
		}
		for (x = 0; x < b->nland; x++)
			next = fmin(next, b->land[x].at);
		if (!(next < INFINITY))
			return util_error(err, errlen, "the pipeline model "
			    "deadlocked in block %d at clock %.0f (a bug of the "
			    "model)", b->cta, t);
		if (next < t)
			next = t;

		/* move to it: the shared pipes' work, then what completes */
		for (x = 0; x < nr; x++)
			if (b->job_on[x])
				b->job_left[x] -= (next - t) / share;
		t = next;
		for (x = 0; x < nr; x++)
			if (b->job_on[x] && b->job_left[x] <= PIPELINE_EPS) {
				b->job_on[x] = 0;
				b->role[x].job = -1;
			}
		if (b->tc_wg >= 0 && b->tc_until <= t + PIPELINE_EPS) {
			wg = b->tc_wg;
			struct instr *in = &b->queue[wg][b->qhead[wg]++];
			struct gemm *g = &b->gemm[in->gemm];

			b->tc_wg = -1;
			if (--g->left == 0) {
				b->role[1 + g->wg].outstanding--;
				if (block_emit(b, PIPELINE_TENSOR, g->kind, g->wg,
				    g->j, g->stage, g->round, g->begin, t, err,
				    errlen) != 0)
					return -1;
			}
		}
		for (x = 0; x < b->nland; x++)
			if (b->land[x].at <= t + PIPELINE_EPS) {
				block_arrive(b, b->land[x].bar, b->land[x].slot);
				b->land[x--] = b->land[--b->nland];
			}
	}
	b->run->cta_end[b->cta] = t;
	return 0;
}

static void
block_free(struct block *b)
{
	int x;

	for (x = 0; x < b->nrole; x++)
		free(b->role[x].prog.op);
	for (x = 0; x < PIPELINE_MAX_CONSUMERS; x++)
		free(b->queue[x]);
	free(b->gemm);
	free(b->land);
}

static int
event_cmp(const void *pa, const void *pb)
{
	const struct pipeline_event *a = pa, *b = pb;

	if (a->cta != b->cta)
		return a->cta < b->cta ? -1 : 1;
	if (a->begin != b->begin)
		return a->begin < b->begin ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->role - b->role;
}

int
pipeline_model(const struct pipeline_config *cfg,
    const struct pipeline_costs *costs, struct pipeline_run *run,
    char *err, size_t errlen)
{
	int cta, x;

	memset(run, 0, sizeof *run);
	if (cfg->consumers < 1 || cfg->consumers > PIPELINE_MAX_CONSUMERS)
		return util_error(err, errlen, "the model takes 1 to %d "
		    "consumers, not %d", PIPELINE_MAX_CONSUMERS,
		    cfg->consumers);
	if (cfg->stages < 1 || cfg->stages > PIPELINE_MAX_STAGES)
		return util_error(err, errlen, "--stages must be 1 to %d, not "
		    "%d", PIPELINE_MAX_STAGES, cfg->stages);
	if (cfg->ctas < 1 || cfg->ctas > 1024)
		return util_error(err, errlen, "--ctas must be 1 to 1024, not "
		    "%d", cfg->ctas);
	if (cfg->br != 64 * cfg->consumers || cfg->bc < 16 || cfg->d < 16 ||
	    cfg->tq < 1 || cfg->tk < 1)
		return util_error(err, errlen, "the pipeline's shape is not "
		    "one the kernel builds");
	if ((long)cfg->tk / cfg->bc > 10000)
		return util_error(err, errlen, "Tk = %d is too many key tiles "
		    "for the pipeline model (at most 10000)", cfg->tk);
	if (!(costs->issue_qk > 0) || !(costs->issue_pv > 0) ||
	    !(costs->copy_bytes_per_clk > 0) || costs->compute_lanes < 1 ||
	    costs->poll < 0 || costs->prologue < 0 ||
	    costs->qk_instr < 0 || costs->pv_instr < 0 || costs->softmax < 0 ||
	    costs->copy_latency < 0 || costs->rescale < 0 ||
	    costs->epilogue < 0 || costs->mask < 0)
		return util_error(err, errlen, "the pipeline's durations must "
		    "be positive");
	for (x = 0; x < PIPELINE_NKINDS; x++)
		if (!(costs->stamp[x] >= 0))
			return util_error(err, errlen, "the pipeline's durations "
			    "must be positive");
	run->cfg = *cfg;
	run->costs = *costs;
	run->ncta = cfg->ctas;
	run->cta_end = calloc((size_t)cfg->ctas, sizeof *run->cta_end);
	run->cta_i = calloc((size_t)cfg->ctas, sizeof *run->cta_i);
	run->cta_nt = calloc((size_t)cfg->ctas, sizeof *run->cta_nt);
	if (run->cta_end == NULL || run->cta_i == NULL || run->cta_nt == NULL) {
		pipeline_run_free(run);
		return util_error(err, errlen, "out of memory (the pipeline)");
	}
	for (cta = 0; cta < cfg->ctas; cta++) {
		struct block b;
		int rc = 0;

		memset(&b, 0, sizeof b);
		b.cfg = &run->cfg;
		b.costs = &run->costs;
		b.run = run;
		b.cta = cta;
		b.tc_wg = -1;
		pipeline_item(cfg, cta, &b.i, &b.nt);
		run->cta_i[cta] = b.i;
		run->cta_nt[cta] = b.nt;
		b.nrole = 1 + cfg->consumers;
		for (x = 0; x < b.nrole; x++) {
			b.role[x].wg = x - 1;
			b.role[x].job = -1;
			b.role[x].op_begin = -1;
		}
		b.role[0].ready_at = costs->prologue;
		rc = program_producer(&b, &b.role[0].prog, err, errlen);
		for (x = 1; x < b.nrole && rc == 0; x++)
			rc = program_consumer(&b, x - 1, &b.role[x].prog, err,
			    errlen);
		if (rc == 0)
			rc = block_run(&b, err, errlen);
		block_free(&b);
		if (rc != 0) {
			pipeline_run_free(run);
			return -1;
		}
	}
	qsort(run->ev, run->nev, sizeof *run->ev, event_cmp);
	return 0;
}

void
pipeline_run_free(struct pipeline_run *run)
{
	free(run->ev);
	free(run->cta_end);
	free(run->cta_i);
	free(run->cta_nt);
	memset(run, 0, sizeof *run);
}

double
pipeline_span(const struct pipeline_run *run)
{
	double s = 0;
	int x;

	for (x = 0; x < run->ncta; x++)
		if (run->cta_end[x] > s)
			s = run->cta_end[x];
	return s;
}

void
pipeline_occupancy(const struct pipeline_run *run, double *occ)
{
	const int ns = run->cfg.stages;
	const double span = pipeline_span(run);
	double *last;
	size_t a, at, n;
	int s, nround = 1;

	for (s = 0; s < ns; s++)
		occ[s] = 0;
	if (!(span > 0))
		return;
	for (a = 0; a < run->nev; a++)
		if (run->ev[a].round + 1 > nround)
			nround = run->ev[a].round + 1;
	/* the last release of each (block, K or V, slot, round), then each
	 * landing's time to it */
	n = (size_t)run->ncta * 2 * ns * nround;
	if ((last = calloc(n, sizeof *last)) == NULL)
		return;		/* out of memory: shown as empty */
#define OCC_AT(e, t) ((((size_t)(e)->cta * 2 + (t)) * ns + (e)->stage) *	\
	nround + (e)->round)
	for (a = 0; a < run->nev; a++) {
		const struct pipeline_event *e = &run->ev[a];

		if ((e->kind != PIPELINE_RELEASE_K &&
		    e->kind != PIPELINE_RELEASE_V) || e->stage < 0 ||
		    e->stage >= ns || e->cta >= run->ncta)
			continue;
		at = OCC_AT(e, e->kind == PIPELINE_RELEASE_V);
		if (e->end > last[at])
			last[at] = e->end;
	}
	for (a = 0; a < run->nev; a++) {
		const struct pipeline_event *c = &run->ev[a];

		if (c->role != PIPELINE_PRODUCER || (c->kind != PIPELINE_COPY_K &&
		    c->kind != PIPELINE_COPY_V) || c->stage < 0 ||
		    c->stage >= ns || c->cta >= run->ncta)
			continue;
		at = OCC_AT(c, c->kind == PIPELINE_COPY_V);
		if (last[at] > c->end)
			occ[c->stage] += (last[at] - c->end) /
			    (2.0 * span * run->ncta);
	}
#undef OCC_AT
	free(last);
}

/* ------------------------------------------------------------------ */

/* Index of (cta, tensor 0..2 = Q K V, stage, round) in the check's maps. */
struct check_map {
	int ncta, nstage, nround;
	double *land;		/* the copy's landing, NAN if none */
	double *copy_begin;
	double *release;	/* the latest release */
	int *nrelease;
	double *read;		/* the latest end of a wait for the GEMM
				 * that read it (S for K, P V for V) */
};

static size_t
check_at(const struct check_map *m, int cta, int tensor, int stage, int round)
{
	return (((size_t)cta * 3 + tensor) * m->nstage + stage) * m->nround +
	    round;
}

static int
check_tensor(int kind)
{
	switch (kind) {
	case PIPELINE_COPY_Q: case PIPELINE_WAIT_FULL_Q:
	case PIPELINE_WAIT_EMPTY_Q: case PIPELINE_RELEASE_Q:
		return 0;
	case PIPELINE_COPY_K: case PIPELINE_WAIT_FULL_K:
	case PIPELINE_WAIT_EMPTY_K: case PIPELINE_RELEASE_K:
		return 1;
	case PIPELINE_COPY_V: case PIPELINE_WAIT_FULL_V:
	case PIPELINE_WAIT_EMPTY_V: case PIPELINE_RELEASE_V:
		return 2;
	default:
		return -1;
	}
}

static const char *const check_tensor_name[3] = { "Q", "K", "V" };

/* Pointers to events, by block, row, begin and end (qsort). */
int
pipeline_event_row_cmp(const void *pa, const void *pb)
{
	const struct pipeline_event *a = *(const struct pipeline_event *const *)pa;
	const struct pipeline_event *b = *(const struct pipeline_event *const *)pb;

	if (a->cta != b->cta)
		return a->cta < b->cta ? -1 : 1;
	if (a->role != b->role)
		return a->role < b->role ? -1 : 1;
	if (a->begin != b->begin)
		return a->begin < b->begin ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* Records the first violation's text and counts them all. */
#define CHECK_FAIL(...) do {						\
	if (bad++ == 0)							\
		snprintf(why, whylen, __VA_ARGS__);			\
} while (0)

/*
 * Under ping-pong: consumer c's k-th turn is taken no earlier than the
 * k-th pass of the consumer before it (c - 1; for consumer 0 the last
 * consumer, whose first pass is the one that lets consumer 0 go first).
 * A turn is taken where the consumer's next step after its wait begins:
 * the clock read right after bar.sync does not wait for the barrier
 * (the recordings show it: doc/recordings/README.md), the next stamp
 * does.  The last turn of a row (consumer 0 taking back the last pass)
 * has no step after it: of it only its pass is checked.  Adds the violations to *bad; -1 when out of memory.
 */
static int
check_turns(const struct pipeline_event *ev, size_t nev, int ncta,
    int consumers, char *why, size_t whylen, int *badp)
{
	const struct pipeline_event **row = malloc((nev + 1) * sizeof *row);
	/* each consumer's passes in order: pass[c * stride + k] */
	const size_t stride = nev + 1;
	double *pass = malloc((size_t)consumers * stride * sizeof *pass);
	int *npass = calloc((size_t)consumers, sizeof *npass);
	size_t n = 0, x, y, at;
	int bad = *badp, cta, c, k;

	if (row == NULL || pass == NULL || npass == NULL) {
		free(row);
		free(pass);
		free(npass);
		return -1;
	}
	for (x = 0; x < nev; x++)
		if (ev[x].role >= PIPELINE_CONSUMER &&
		    ev[x].role < PIPELINE_CONSUMER + consumers)
			row[n++] = &ev[x];
	qsort(row, n, sizeof *row, pipeline_event_row_cmp);
	for (cta = 0; cta < ncta; cta++) {
		double *const p = pass;

		for (c = 0; c < consumers; c++)
			npass[c] = 0;
		for (x = 0; x < n; x++) {
			if (row[x]->cta != cta || row[x]->kind != PIPELINE_PASS_TURN)
				continue;
			c = row[x]->role - PIPELINE_CONSUMER;
			p[(size_t)c * stride + npass[c]++] = row[x]->begin;
		}
		for (c = 0; c < consumers; c++) {
			const int prev = (c + consumers - 1) % consumers;

			k = 0;
			for (x = 0; x < n; x++) {
				double taken = -INFINITY;

				if (row[x]->cta != cta || row[x]->role !=
				    PIPELINE_CONSUMER + c ||
				    row[x]->kind != PIPELINE_WAIT_TURN)
					continue;
				for (y = x + 1; y < n && row[y]->cta == cta &&
				    row[y]->role == row[x]->role; y++)
					if (row[y]->begin >= row[x]->end) {
						taken = row[y]->begin;
						break;
					}
				at = (size_t)prev * stride + k;
				if (k >= npass[prev]) {
					CHECK_FAIL("block %d: consumer %d took turn "
					    "%d with no pass to it from consumer "
					    "%d", cta, c, k, prev);
					break;
				}
				if (taken > -INFINITY && taken < p[at]) {
					CHECK_FAIL("block %d: consumer %d took turn "
					    "%d at %.0f, before consumer %d passed "
					    "it at %.0f", cta, c, k, taken, prev,
					    p[at]);
					break;
				}
				k++;
			}
		}
	}
	free(row);
	free(pass);
	free(npass);
	*badp = bad;
	return 0;
}

int
pipeline_check(const struct pipeline_event *ev, size_t nev, int consumers,
    int pingpong, char *why, size_t whylen)
{
	struct check_map m = { 0, 0, 0, NULL, NULL, NULL, NULL, NULL };
	size_t x, n;
	int bad = 0;

	if (whylen > 0)
		why[0] = '\0';
	for (x = 0; x < nev; x++) {
		if (ev[x].cta < 0 || ev[x].stage < -1 || ev[x].round < 0) {
			CHECK_FAIL("event %zu has a negative block, stage or "
			    "round", x);
			return bad;
		}
		if (ev[x].cta + 1 > m.ncta)
			m.ncta = ev[x].cta + 1;
		if (ev[x].stage + 1 > m.nstage)
			m.nstage = ev[x].stage + 1;
		if (ev[x].round + 2 > m.nround)
			m.nround = ev[x].round + 2;
	}
	if (nev == 0 || m.nstage == 0)
		return 0;
	n = (size_t)m.ncta * 3 * m.nstage * m.nround;
	m.land = malloc(n * sizeof *m.land);
	m.copy_begin = malloc(n * sizeof *m.copy_begin);
	m.release = malloc(n * sizeof *m.release);
	m.nrelease = calloc(n, sizeof *m.nrelease);
	m.read = malloc(n * sizeof *m.read);
	if (m.land == NULL || m.copy_begin == NULL || m.release == NULL ||
	    m.nrelease == NULL || m.read == NULL) {
		CHECK_FAIL("out of memory checking %zu events", nev);
		goto done;
	}
	for (x = 0; x < n; x++)
		m.land[x] = m.copy_begin[x] = m.release[x] = m.read[x] = NAN;
	for (x = 0; x < nev; x++) {
		const struct pipeline_event *e = &ev[x];
		const int tn = check_tensor(e->kind);
		size_t at;

		if ((e->kind == PIPELINE_WAIT_QK || e->kind == PIPELINE_WAIT_PV) &&
		    e->stage >= 0) {
			at = check_at(&m, e->cta, e->kind == PIPELINE_WAIT_QK ?
			    1 : 2, e->stage, e->round);
			if (isnan(m.read[at]) || e->end > m.read[at])
				m.read[at] = e->end;
			continue;
		}
		if (tn < 0 || e->stage < 0)
			continue;
		at = check_at(&m, e->cta, tn, e->stage, e->round);
		if (e->kind == PIPELINE_COPY_Q || e->kind == PIPELINE_COPY_K ||
		    e->kind == PIPELINE_COPY_V) {
			if (!isnan(m.land[at]))
				CHECK_FAIL("block %d: %s copied into stage %d "
				    "twice in round %d", e->cta,
				    check_tensor_name[tn], e->stage, e->round);
			m.land[at] = e->end;
			m.copy_begin[at] = e->begin;
		} else if (e->kind == PIPELINE_RELEASE_Q ||
		    e->kind == PIPELINE_RELEASE_K ||
		    e->kind == PIPELINE_RELEASE_V) {
			if (isnan(m.release[at]) || e->end > m.release[at])
				m.release[at] = e->end;
			m.nrelease[at]++;
		}
	}
	for (x = 0; x < nev; x++) {
		const struct pipeline_event *e = &ev[x];
		const int tn = check_tensor(e->kind);
		size_t at, prev;

		if (tn < 0 || e->stage < 0)
			continue;
		at = check_at(&m, e->cta, tn, e->stage, e->round);
		if (e->kind == PIPELINE_WAIT_FULL_Q ||
		    e->kind == PIPELINE_WAIT_FULL_K ||
		    e->kind == PIPELINE_WAIT_FULL_V) {
			if (isnan(m.land[at]))
				CHECK_FAIL("block %d: consumer %d's wait for %s "
				    "in stage %d (round %d) passed with no copy "
				    "there", e->cta, e->wg, check_tensor_name[tn],
				    e->stage, e->round);
			else if (e->end < m.land[at])
				CHECK_FAIL("block %d: consumer %d's wait for %s "
				    "in stage %d (round %d) ended at %.0f, before "
				    "the copy landed at %.0f", e->cta, e->wg,
				    check_tensor_name[tn], e->stage, e->round,
				    e->end, m.land[at]);
		}
		if ((e->kind == PIPELINE_COPY_Q || e->kind == PIPELINE_COPY_K ||
		    e->kind == PIPELINE_COPY_V) && e->round > 0) {
			prev = check_at(&m, e->cta, tn, e->stage, e->round - 1);
			if (m.nrelease[prev] < consumers)
				CHECK_FAIL("block %d: %s refilled stage %d "
				    "(round %d) after %d of %d consumers released "
				    "it", e->cta, check_tensor_name[tn],
				    e->stage, e->round, m.nrelease[prev],
				    consumers);
			else if (e->begin < m.release[prev])
				CHECK_FAIL("block %d: %s refilled stage %d "
				    "(round %d) at %.0f, before its last release "
				    "at %.0f", e->cta, check_tensor_name[tn],
				    e->stage, e->round, e->begin,
				    m.release[prev]);
			else if (e->begin < m.read[prev])
				CHECK_FAIL("block %d: %s refilled stage %d "
				    "(round %d) at %.0f, before the GEMM reading "
				    "it was waited for at %.0f", e->cta,
				    check_tensor_name[tn], e->stage, e->round,
				    e->begin, m.read[prev]);
		}
	}
	/* the turns (pipeline.h: taken where the next step begins) */
	if (pingpong && consumers > 1 &&
	    check_turns(ev, nev, m.ncta, consumers, why, whylen, &bad) != 0)
		CHECK_FAIL("out of memory checking %zu events", nev);
done:
	free(m.land);
	free(m.copy_begin);
	free(m.release);
	free(m.nrelease);
	free(m.read);
	return bad;
}
