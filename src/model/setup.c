/* setup.c - problem and sim from options, and the output files. */
#include "config.h"

#include "setup.h"
#include "npy.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Can path be written (its folder exists, is a folder, lets us create a
 * file; path itself is not a folder)?  Checked before any work, so that
 * a bad --output stops the command before it prints results it then
 * cannot save.  The write itself can still fail later (a full disk);
 * npy_write leaves nothing behind then.
 */
int
setup_check_writable(const char *path, char *err, size_t errlen)
{
	struct stat st;
	char *dir, *slash;
	const char *d;
	int rc = 0;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return util_error(err, errlen, "%s: is a directory", path);
	dir = strdup(path);
	if (dir == NULL)
		return util_error(err, errlen, "%s: out of memory", path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		d = ".";
	else if (slash == dir)
		d = "/";
	else {
		*slash = '\0';
		d = dir;
	}
	if (stat(d, &st) != 0)
		rc = util_error(err, errlen, "%s: %s", path, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rc = util_error(err, errlen, "%s: %s is not a directory", path, d);
	else if (access(d, W_OK | X_OK) != 0)
		rc = util_error(err, errlen, "%s: cannot write in %s: %s", path, d,
		    strerror(errno));
	free(dir);
	return rc;
}

int
setup_open(const struct options *o, struct setup *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	if ((o->output != NULL && setup_check_writable(o->output, err, errlen) != 0) ||
	    (o->lse != NULL && setup_check_writable(o->lse, err, errlen) != 0))
		return -1;
	if (problem_build(&o->spec, &s->problem, err, errlen) != 0)
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
	long shape[2] = { problem_rows(p), p->dv };

	if (o->output != NULL &&
	    npy_write(o->output, out, 2, shape, err, errlen) != 0)
		return -1;
	if (o->lse != NULL && npy_write(o->lse, lse, 1, shape, err, errlen) != 0)
		return -1;
	return 0;
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
