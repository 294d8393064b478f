/*
 * ui_pipe.c - W in the view: the wgmma pipeline model run on the
 * problem's head (its d, Tq, Tk and mask; the kernel's own tiling, as
 * `flashstep pipeline --model` runs it), shown in the pipeline viewer
 * (ui_pipeline.c) over the whole view until q or Esc.  The model needs
 * d = 64 or 128; on any other problem W says so and nothing opens.
 */
#include "config.h"

#include "ui_int.h"
#include "ui_pipeline.h"
#include "app/pipeline_json.h"
#include "model/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ui_pipe {
	struct pipeline_run run;
	struct pipeline_json_meta meta;
	struct ui_pipeline view;
};

void
ui_pipe_close(struct ui *ui)
{
	if (ui->pipe == NULL)
		return;
	pipeline_run_free(&ui->pipe->run);
	free(ui->pipe);
	ui->pipe = NULL;
}

int
ui_pipe_open(struct ui *ui)
{
	const struct problem *p = UI_PROBLEM(ui);
	struct pipeline_config cfg;
	struct pipeline_costs k;
	struct ui_pipe *v;
	char err[200];

	ui_pipe_close(ui);
	if (pipeline_config_default(&cfg, p->d, p->tq, p->tk, p->causal, err,
	    sizeof err) != 0) {
		ui_message(ui, UI_ROLE_MESSAGE, "W: %s", err);
		return UI_HANDLED;
	}
	cfg.ctas = 2;		/* as `pipeline --model`: two blocks */
	if ((v = calloc(1, sizeof *v)) == NULL) {
		ui_message(ui, UI_ROLE_MESSAGE, "W: out of memory");
		return UI_HANDLED;
	}
	pipeline_costs_nominal(&cfg, &k);
	if (pipeline_model(&cfg, &k, &v->run, err, sizeof err) != 0) {
		free(v);
		ui_message(ui, UI_ROLE_MESSAGE, "W: %s", err);
		return UI_HANDLED;
	}
	snprintf(v->meta.source, sizeof v->meta.source, "model of this "
	    "head, Tq %d, Tk %d%s (q: the view)", p->tq, p->tk,
	    p->causal ? ", causal" : "");
	v->meta.cfg = cfg;
	v->meta.clock_ghz = k.clock_ghz;
	ui_pipeline_init(&v->view, v->run.ev, v->run.nev, &v->meta);
	ui->pipe = v;
	return UI_HANDLED;
}

int
ui_pipe_key(struct ui *ui, const struct ui_key *k)
{
	if (ui_pipeline_key(&ui->pipe->view, k->code) & UI_QUIT)
		ui_pipe_close(ui);
	return UI_HANDLED;
}

void
ui_pipe_draw(const struct ui *ui, struct ui_grid *g)
{
	ui_pipeline_draw(&ui->pipe->view, g);
}
