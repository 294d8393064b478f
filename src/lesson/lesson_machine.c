/*
 * lesson_machine.c - the machine's quantities (see lesson_machine.h).
 */
#include "config.h"

#include "lesson_machine.h"
#include "lesson_path.h"
#include "app/pipeline_json.h"
#include "model/pipeline.h"
#include "model/pipeline_fit.h"
#include "model/roofline.h"
#include "model/sim.h"
#include "model/traffic.h"
#include "model/util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	static const int variant[] = { PIPELINE_AS_IS, PIPELINE_ONE_STAGE,
	    PIPELINE_MORE_STAGE, PIPELINE_NO_PINGPONG, PIPELINE_NO_OVERLAP };
	const struct problem *p = &rq->run->setup.problem;
	struct pipeline_config cfg, v;
	struct pipeline_costs k;
	struct pipeline_run r;
	double span;

	if (pipeline_config_default(&cfg, p->d, p->tq, p->tk, p->causal,
	    rq->err, rq->errlen) != 0)
		return -1;
	/* `flashstep pipeline --model`'s default: two blocks. */
	cfg.ctas = 2;
	pipeline_variant(variant[rq->rd->from], &cfg, &v);
	pipeline_costs_nominal(&v, &k);
	if (pipeline_model(&v, &k, &r, rq->err, rq->errlen) != 0)
		return -1;
	span = pipeline_span(&r);
	pipeline_run_free(&r);
	return lesson_machine_one(rq, span);
}

/*
 * The shipped recording of the lesson's head (d, Tq, Tk, the mask) with
 * ping-pong on or off, from the recordings folder beside a lessons
 * folder (the source tree's doc/recordings, an install's recordings).
 * Returns 0 with *ev (malloc'd), or -1 with err naming what is missing.
 */
static int
lesson_machine_find(struct lesson_read *rq, int pingpong,
    struct pipeline_event **ev, size_t *nev, struct pipeline_json_meta *m)
{
	static const char *const beside[] = { "../doc/recordings",
	    "../recordings" };
	const struct problem *p = &rq->run->setup.problem;
	const char *dirs[16];
	char dir[4096], path[4400], err[512];
	int n, i, b;

	n = lesson_path_folders(dirs, 16);
	for (i = 0; i < n; i++)
		for (b = 0; b < 2; b++) {
			struct dirent *de;
			DIR *d;

			snprintf(dir, sizeof dir, "%s/%s", dirs[i], beside[b]);
			if ((d = opendir(dir)) == NULL)
				continue;
			while ((de = readdir(d)) != NULL) {
				const size_t len = strlen(de->d_name);
				const struct pipeline_config *c = &m->cfg;

				/* the wgmma kernel's (wgmma-*.json) */
				if (len < 6 || strcmp(de->d_name + len - 5,
				    ".json") != 0 || strncmp(de->d_name,
				    "wgmma-", 6) != 0)
					continue;
				snprintf(path, sizeof path, "%s/%s", dir,
				    de->d_name);
				if (pipeline_json_read(path, ev, nev, m, err,
				    sizeof err) != 0)
					continue;
				if (strncmp(m->source, "recording", 9) == 0 &&
				    c->d == p->d && c->tq == p->tq &&
				    c->tk == p->tk && c->causal == p->causal &&
				    (c->pingpong && c->overlap) == pingpong) {
					closedir(d);
					return 0;
				}
				free(*ev);
			}
			closedir(d);
		}
	return util_error(rq->err, rq->errlen, "%s: no recording of d = %d, "
	    "Tq = %d, Tk = %d%s, ping-pong %s beside the lessons", rq->q->name,
	    p->d, p->tq, p->tk, p->causal ? ", causal" : "",
	    pingpong ? "on" : "off");
}

int
lesson_machine_recording(struct lesson_read *rq)
{
	const int from = rq->rd->from;
	/* which recording: the no-ping-pong one for its own figures */
	const int pp = !(from == LESSON_REC_TILE_NOPP ||
	    from == LESSON_REC_BLOCK_NOPP || from == LESSON_REC_OVERLAP_NOPP);
	struct pipeline_json_meta m;
	struct pipeline_event *ev;
	struct pipeline_figures rec, fed;
	struct pipeline_config c;
	struct pipeline_costs k;
	size_t nev;
	int rc = -1;

	if (lesson_machine_find(rq, pp, &ev, &nev, &m) != 0)
		return -1;
	if (pipeline_figures(ev, nev, m.cfg.consumers, &rec, rq->err,
	    rq->errlen) != 0)
		goto done;
	switch (from) {
	case LESSON_REC_TILE:
	case LESSON_REC_TILE_NOPP:
		rc = lesson_machine_one(rq, rec.tile_median);
		goto done;
	case LESSON_REC_BLOCK:
	case LESSON_REC_BLOCK_NOPP:
		rc = lesson_machine_one(rq, rec.block_median);
		goto done;
	case LESSON_REC_OVERLAP:
	case LESSON_REC_OVERLAP_NOPP:
		rc = lesson_machine_one(rq, 100 * rec.softmax_overlap);
		goto done;
	}
	if (pipeline_fit_costs(ev, nev, &m.cfg, &k, rq->err, rq->errlen) != 0)
		goto done;
	if (from == LESSON_REC_SOFTMAX) {
		rc = lesson_machine_one(rq, k.softmax);
		goto done;
	}
	pipeline_variant(from == LESSON_FIT_TILE_1STAGE ? PIPELINE_ONE_STAGE :
	    from == LESSON_FIT_TILE_NOPP ? PIPELINE_NO_PINGPONG :
	    from == LESSON_FIT_TILE_NOOV ? PIPELINE_NO_OVERLAP : PIPELINE_AS_IS,
	    &m.cfg, &c);
	if (pipeline_fit_model(&c, &k, rec.ncta, &fed, rq->err,
	    rq->errlen) != 0)
		goto done;
	rc = lesson_machine_one(rq, from == LESSON_FIT_BLOCK ?
	    fed.block_median : fed.tile_median);
done:
	free(ev);
	return rc;
}
