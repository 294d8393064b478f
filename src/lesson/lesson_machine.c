/*
 * lesson_machine.c - the machine's quantities (see lesson_machine.h).
 */
#include "config.h"

#include "lesson_machine.h"
#include "model/pipeline.h"
#include "model/roofline.h"
#include "model/sim.h"
#include "model/traffic.h"
#include "model/util.h"

static int
lesson_machine_one(struct lesson_read *rq, double x)
{
	rq->out[0] = x;
	rq->n = 1;
	return 0;
}

int
lesson_machine_roof(struct lesson_read *rq)
{
	const struct roofline_machine *m = &roofline_h200;
	struct lesson_run *run = rq->run;
	struct traffic t;
	double in;

	switch (rq->rd->from) {
	case 0:
		return lesson_machine_one(rq, roofline_ridge(m->tensor, m->hbm));
	case 1:
		return lesson_machine_one(rq, m->tensor / 1e12);
	case 2:
		return lesson_machine_one(rq, m->hbm / 1e12);
	}
	/* The whole forward's counts, wherever the lesson stands. */
	traffic_upto(sim_traffic(run->setup.sim), sim_steps(run->setup.sim) - 1,
	    &t);
	if (t.hbm_read + t.hbm_write == 0)
		return util_error(rq->err, rq->errlen, "%s: the problem "
		    "moves no bytes", rq->q->name);
	in = (double)t.flops / (double)(t.hbm_read + t.hbm_write);
	if (rq->rd->from == 3)
		return lesson_machine_one(rq, in);
	return lesson_machine_one(rq, roofline_roof(m->tensor, m->hbm, in) / 1e12);
}

int
lesson_machine_pipeline(struct lesson_read *rq)
{
	const struct problem *p = &rq->run->setup.problem;
	struct pipeline_config cfg;
	struct pipeline_costs k;
	struct pipeline_run r;
	double span;

	if (pipeline_config_default(&cfg, p->d, p->tq, p->tk, p->causal,
	    rq->err, rq->errlen) != 0)
		return -1;
	/* `flashstep pipeline --model`'s default: two blocks. */
	cfg.ctas = 2;
	switch (rq->rd->from) {
	case 1:
		cfg.stages = 1;
		break;
	case 2:
		cfg.stages++;
		break;
	case 3:
		cfg.pingpong = 0;
		break;
	case 4:
		cfg.pingpong = cfg.overlap = 0;
		break;
	}
	pipeline_costs_nominal(&cfg, &k);
	if (pipeline_model(&cfg, &k, &r, rq->err, rq->errlen) != 0)
		return -1;
	span = pipeline_span(&r);
	pipeline_run_free(&r);
	return lesson_machine_one(rq, span);
}
