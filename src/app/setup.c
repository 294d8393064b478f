/* setup.c - problem and sim from options, and the output files. */
#include "config.h"

#include "setup.h"
#include "model/mask.h"
#include "model/memory.h"
#include "model/npy.h"
#include "npyout.h"
#include "outfile.h"
#include "model/util.h"

#include <string.h>

/*
 * The output paths, checked as the writer will take them (outfile.h)
 * before any work, so that a bad --output stops the command before it
 * prints results it then cannot save.  The write itself can still fail
 * later (a full disk); nothing is left changed then.
 */
static int
setup_add_outputs(const struct options *o, struct outfile_set *set,
    int *io, int *il, char *err, size_t errlen)
{
	outfile_init(set);
	*io = *il = -1;
	if (o->output != NULL &&
	    (*io = outfile_add(set, o->output, err, errlen)) < 0)
		return -1;
	if (o->lse != NULL && (*il = outfile_add(set, o->lse, err, errlen)) < 0) {
		outfile_abort(set);
		return -1;
	}
	return 0;
}

int
setup_check_outputs(const struct options *o, char *err, size_t errlen)
{
	const char *grads[] = { o->grad_q, o->grad_k, o->grad_v, o->grad_s };
	struct outfile_set set;
	int io, il, i;

	if (setup_add_outputs(o, &set, &io, &il, err, errlen) != 0)
		return -1;
	/* The gradients too, in the same set: no two outputs share a file. */
	for (i = 0; i < 4; i++)
		if (grads[i] != NULL && outfile_add(&set, grads[i], err, errlen) < 0) {
			outfile_abort(&set);
			return -1;
		}
	outfile_abort(&set);
	return 0;
}

void
setup_memory_spec(const struct options *o, struct problem_spec *spec)
{
	if (o->split.splits > 1) {
		spec->memory_parts |= MEMORY_SPLIT;
		spec->memory_splits = o->split.splits;
		spec->memory_merge_tree = o->combine.order == COMBINE_TREE;
	}
	if (o->backward)
		spec->memory_parts |= MEMORY_BACKWARD;
	if (o->grad_s != NULL)
		spec->memory_parts |= MEMORY_GRAD_S;
	/* The view runs a bug-free twin beside a bug mode (ui.c's
	 * correct runs); it is the one that keeps checkpoints. */
	if ((spec->memory_parts & MEMORY_CHECKPOINTS) && o->rule.bug != BUG_NONE)
		spec->memory_parts |= MEMORY_CORRECT_SIM;
	if ((spec->memory_parts & MEMORY_CHECKPOINTS) && o->backward &&
	    o->grad_bug != BWD_BUG_NONE)
		spec->memory_parts |= MEMORY_CORRECT_BWD;
}

int
setup_open(const struct options *o, struct setup *s, char *err, size_t errlen)
{
	struct problem_spec spec = o->spec;

	memset(s, 0, sizeof *s);
	if (setup_check_outputs(o, err, errlen) != 0)
		return -1;
	setup_memory_spec(o, &spec);
	if (problem_build(&spec, &s->problem, err, errlen) != 0)
		return -1;
	s->sim = sim_new_split(&s->problem, &o->tiling, &o->split, &o->rule,
	    err, errlen);
	if (s->sim == NULL) {
		problem_free(&s->problem);
		return -1;
	}
	return 0;
}

void
setup_close(struct setup *s)
{
	sim_free(s->sim);
	problem_free(&s->problem);
	memset(s, 0, sizeof *s);
}

void
setup_describe(FILE *f, const struct sim *sim)
{
	const struct problem *p = sim_problem(sim);
	const struct schedule *s = sim_schedule(sim);
	const struct online_rule *r = sim_rule(sim);

	if (p->scores_mode)
		fprintf(f, "problem:  scores Tq=%d Tk=%d dv=%d scale=1 causal=%s "
		    "dtype=%s (%s)\n", p->tq, p->tk, p->dv, p->causal ? "yes" : "no",
		    dtype_name(p->dtype), p->source);
	else
		fprintf(f, "problem:  Tq=%d Tk=%d d=%d dv=%d scale=%.6g causal=%s "
		    "dtype=%s (%s)\n", p->tq, p->tk, p->d, p->dv, (double)p->scale,
		    p->causal ? "yes" : "no", dtype_name(p->dtype), p->source);
	fprintf(f, "tiling:   order=%s Br=%d Bc=%d: Tr=%d x Tc=%d tiles, "
	    "%ld steps, %ld skipped by the mask\n", schedule_order_name(s->order),
	    s->br, s->bc, s->tr, s->tc, s->nsteps, (long)s->tr * s->tc - s->nsteps);
	fprintf(f, "update:   convention=%s bug=%s\n",
	    online_convention_name(r->convention), online_bug_name(r->bug));
	if (problem_beyond_causal(p) || r->mask_bug != MASK_BUG_NONE) {
		char what[128];

		fprintf(f, "mask:     %s", mask_describe(problem_mask(p, 0), p->alibi != NULL,
		    what, sizeof what));
		if (p->alibi != NULL)
			fprintf(f, " (slope %g%s)", (double)p->alibi[0],
			    s->heads > 1 ? " for head 0" : "");
		fprintf(f, ", mask-bug=%s\n", mask_bug_name(r->mask_bug));
	}
	if (s->heads > 1)
		fprintf(f, "heads:    H=%d query heads share G=%d K/V heads (%d "
		    "each)%s\n", s->heads, s->kv_heads, s->group, s->pack ?
		    ", each group's rows packed into its row blocks" : "");
	if (s->splits > 1)
		fprintf(f, "split:    %d key ranges per row block, partials as %s\n",
		    s->splits, s->partials == MERGE_MLU ? "(m, l, u)" : "(o, lse)");
}

int
setup_write_outputs(const struct options *o, const struct problem *p,
    const float *out, const float *lse, char *err, size_t errlen)
{
	struct outfile_set set;
	long shape[2] = { problem_rows(p), p->dv };
	int io, il;

	if (o->output == NULL && o->lse == NULL)
		return 0;
	if (setup_add_outputs(o, &set, &io, &il, err, errlen) != 0 ||
	    outfile_begin(&set, err, errlen) != 0)
		return -1;
	if ((io >= 0 && npy_write_to(&set, io, out, 2, shape, err, errlen) != 0) ||
	    (il >= 0 && npy_write_to(&set, il, lse, 1, shape, err, errlen) != 0)) {
		outfile_abort(&set);
		return -1;
	}
	return outfile_commit(&set, err, errlen);
}

void
setup_print_matrix(const char *name, const float *x, int rows, int cols)
{
	int r, c, rmax = rows < 4 ? rows : 4, cmax = cols < 6 ? cols : 6;

	printf("%s (%d x %d)%s:\n", name, rows, cols,
	    rows > rmax || cols > cmax ? ", first rows and columns" : "");
	for (r = 0; r < rmax; r++) {
		printf("  [%4d]", r);
		for (c = 0; c < cmax; c++)
			printf(" %11.6g", (double)x[(size_t)r * cols + c]);
		printf("%s\n", cols > cmax ? " ..." : "");
	}
}
