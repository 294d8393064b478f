/*
 * ui_form.c - the `e` form: edit the problem's sizes, tiles, seed,
 * inputs, window, softcap, ALiBi slope, page size and a packed batch's
 * lengths, and turn the backward and split-KV on or off.  The values are
 * checked by the command line's own code: the form becomes "--tq=..."
 * arguments for options_parse, then the problem, sim and timeline are
 * rebuilt (ui_configure) keeping the position.
 * Any of them failing leaves everything as it was and shows its one-line
 * message in the form.
 */
#include "config.h"

#include "ui_form.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *label;	/* as shown */
	const char *option;	/* the command line's --name */
	const char *hint;
} ui_form_fields[UI_FORM_FIELDS] = {
	{ "Tq", "tq", "query rows" },
	{ "Tk", "tk", "keys (blank: Tq)" },
	{ "d", "d", "width of Q and K" },
	{ "dv", "dv", "width of V (blank: d)" },
	{ "Br", "br", "query rows per tile" },
	{ "Bc", "bc", "keys per tile" },
	{ "seed", "seed", "seed of the generated inputs" },
	{ "input", "input", "normal uniform ramp spike, or files" },
	{ "bwd", "backward", "backward pass: on or off" },
	{ "splits", "splits", "key ranges per row block (1: none)" },
	{ "window", "window", "L,R (-1: unbounded; -1,0: causal)" },
	{ "cap", "softcap", "softcap C: s -> C tanh(s/C)" },
	{ "alibi", "alibi", "slope: bias -slope |r+Tk-Tq-c|" },
	{ "pages", "page-size", "keys a page of K/V (0: not paged)" },
	{ "seqlens", "seqlens", "packed: A,B,.. or Q/K lengths" },
};

/* The seqlens field of o: "A,B" (Q and K alike), "A,B/C,D" (Q's, then
 * K's), "" when not packed. */
static void
ui_form_seqlens_text(const struct options *o, char *buf, size_t len)
{
	const char *q = o->spec.seqlens_q, *k = o->spec.seqlens_k;

	buf[0] = '\0';
	if (q != NULL && k != NULL && strcmp(q, k) == 0)
		snprintf(buf, len, "%s", q);
	else if (q != NULL && k != NULL)
		snprintf(buf, len, "%s/%s", q, k);
}

/*
 * The seqlens field as options: "--seqlens=A,B", or for "Q/K"
 * "--seqlens-q=Q" and "--seqlens-k=K", so the command line's parser
 * judges the lengths.  Returns the arguments added (into arg, two of
 * 64 bytes), or -1 with f->error set.
 */
static int
ui_form_seqlens_args(struct ui_form *f, char arg[2][64])
{
	const char *v = f->value[UI_FORM_SEQLENS], *slash = strchr(v, '/');

	if (slash == NULL) {
		snprintf(arg[0], 64, "--seqlens=%s", v);
		return 1;
	}
	if (strchr(slash + 1, '/') != NULL) {
		snprintf(f->error, sizeof f->error, "seqlens: A,B,.. for Q and K "
		    "alike, or Q's lengths/K's lengths, not '%s'", v);
		return -1;
	}
	snprintf(arg[0], 64, "--seqlens-q=%.*s", (int)(slash - v), v);
	snprintf(arg[1], 64, "--seqlens-k=%s", slash + 1);
	return 2;
}

/* Did the options name input files (or inline matrices)? */
static int
ui_form_has_files(const struct options *o)
{
	const struct problem_spec *s = &o->spec;

	return s->q.path != NULL || s->s.path != NULL || s->q.data != NULL ||
	    s->s.data != NULL;
}

void
ui_form_open(struct ui *ui)
{
	const struct problem *p = UI_PROBLEM(ui);
	struct ui_form *f = &ui->form;

	memset(f, 0, sizeof *f);
	f->open = 1;
	/* A packed batch's Tq and Tk are its lengths' sums: blank. */
	if (ui->vl.nseq == 0) {
		snprintf(f->value[0], sizeof f->value[0], "%d", p->tq);
		snprintf(f->value[1], sizeof f->value[1], "%d", p->tk);
	}
	ui_form_seqlens_text(&ui->opts, f->value[UI_FORM_SEQLENS],
	    sizeof f->value[0]);
	if (!p->scores_mode)
		snprintf(f->value[2], sizeof f->value[2], "%d", p->d);
	snprintf(f->value[3], sizeof f->value[3], "%d", p->dv);
	snprintf(f->value[4], sizeof f->value[4], "%d", ui->opts.tiling.br);
	snprintf(f->value[5], sizeof f->value[5], "%d", ui->opts.tiling.bc);
	snprintf(f->value[6], sizeof f->value[6], "%llu",
	    (unsigned long long)ui->opts.spec.seed);
	snprintf(f->value[UI_FORM_INPUT], sizeof f->value[0], "%s",
	    ui_form_has_files(&ui->opts) ? "files" :
	    inputs_kind_name(ui->opts.spec.input));
	snprintf(f->value[UI_FORM_BACKWARD], sizeof f->value[0], "%s",
	    ui->opts.backward ? "on" : "off");
	snprintf(f->value[UI_FORM_SPLITS], sizeof f->value[0], "%d",
	    ui->opts.split.splits > 1 ? ui->opts.split.splits : 1);
	if (mask_rule_hides(problem_mask(p, 0)))
		snprintf(f->value[UI_FORM_WINDOW], sizeof f->value[0], "%d,%d",
		    problem_mask(p, 0).left, problem_mask(p, 0).right);
	if (mask_rule_has(p->mask, MASK_SOFTCAP))
		snprintf(f->value[UI_FORM_SOFTCAP], sizeof f->value[0], "%g",
		    (double)p->mask.softcap);
	/* The view shows one head: its slope (--alibi or --alibi-slopes). */
	if (p->alibi != NULL)
		snprintf(f->value[UI_FORM_ALIBI], sizeof f->value[0], "%g",
		    (double)p->alibi[0]);
	snprintf(f->value[UI_FORM_PAGE_SIZE], sizeof f->value[0], "%d",
	    ui->opts.spec.page_size);
}

/*
 * The page table after the form: --block-table's file is read again with
 * the new Tk while the page size stays; a new page size (or none) drops
 * it, so the table is shuffled from the seed as without --block-table
 * (the file's pages were cut to the old size).  Returns what became of
 * the file, for the message ("" when nothing).
 */
static const char *
ui_form_block_table(const struct options *was, struct options *o)
{
	if (was->spec.block_table == NULL ||
	    o->spec.page_size == was->spec.page_size)
		return "";
	o->spec.block_table = NULL;
	return o->spec.page_size > 0 ? "; the page table is now shuffled from "
	    "the seed" : "; K/V no longer paged";
}

/* Validates and applies the form's values (as Enter does).  Returns 0,
 * or -1 with form.error set and nothing changed. */
static int
ui_form_apply(struct ui *ui)
{
	struct ui_form *f = &ui->form;
	struct options o = ui->opts;
	char args[UI_FORM_FIELDS][64], *argv[UI_FORM_FIELDS + 2];
	char seqargs[2][64];
	const char *input = f->value[UI_FORM_INPUT];
	enum mask_bug dropped;
	struct mask_rule m;
	const char *table;
	int argc = 0, i, rc;

	/* Blank fields mean the defaults, as when the option is left out. */
	o.spec.tq = o.spec.tk = o.spec.d = o.spec.dv = o.spec.bc = 0;
	o.spec.seed = 1;
	o.tiling.br = o.tiling.bc = PROBLEM_DEFAULT_TILE;
	o.backward = 0;
	o.split.splits = 0;
	o.spec.causal = o.spec.window_set = 0;
	o.spec.softcap_set = o.spec.alibi_set = 0;
	o.spec.alibi_slopes = NULL;
	o.spec.page_size = 0;
	o.spec.seqlens_q = o.spec.seqlens_k = NULL;
	o.args = NULL;
	o.nargs = 0;
	argv[argc++] = "edit";
	for (i = 0; i < UI_FORM_FIELDS; i++) {
		if (f->value[i][0] == '\0')
			continue;
		if (i == UI_FORM_BACKWARD) {
			/* a flag: named when on */
			if (strcmp(f->value[i], "on") == 0)
				argv[argc++] = "--backward";
			else if (strcmp(f->value[i], "off") != 0) {
				snprintf(f->error, sizeof f->error, "bwd: on or off, "
				    "not '%s'", f->value[i]);
				return -1;
			}
			continue;
		}
		/* 0 is the form's "not paged": the option itself takes 1 up. */
		if (i == UI_FORM_PAGE_SIZE && strcmp(f->value[i], "0") == 0)
			continue;
		if (i == UI_FORM_SEQLENS) {
			int na = ui_form_seqlens_args(f, seqargs), a;

			if (na < 0)
				return -1;
			for (a = 0; a < na; a++)
				argv[argc++] = seqargs[a];
			continue;
		}
		if (i == UI_FORM_INPUT && strcmp(input, "files") == 0) {
			if (!ui_form_has_files(&ui->opts)) {
				snprintf(f->error, sizeof f->error, "input: 'files' needs "
				    "--q, --k, --v or --scores, --v on the command line");
				return -1;
			}
			continue;
		}
		if (i == UI_FORM_INPUT) {
			/* A kind of generated input replaces the files. */
			memset(&o.spec.q, 0, sizeof o.spec.q);
			memset(&o.spec.k, 0, sizeof o.spec.k);
			memset(&o.spec.v, 0, sizeof o.spec.v);
			memset(&o.spec.s, 0, sizeof o.spec.s);
		}
		snprintf(args[i], sizeof args[i], "--%s=%s", ui_form_fields[i].option,
		    f->value[i]);
		argv[argc++] = args[i];
	}
	rc = options_parse(argc, argv, 1, OPT_PROBLEM | OPT_BACKWARD | OPT_SPLIT,
	    NULL, NULL, &o, f->error, sizeof f->error);
	options_free(&o);
	if (rc != 0)
		return -1;
	table = ui_form_block_table(&ui->opts, &o);
	/* The lengths' text is this function's: the view keeps a copy for
	 * as long as the options point to it. */
	if ((o.spec.seqlens_q != NULL && (o.spec.seqlens_q =
	    ui_varlen_keep_text(ui, o.spec.seqlens_q)) == NULL) ||
	    (o.spec.seqlens_k != NULL && (o.spec.seqlens_k =
	    ui_varlen_keep_text(ui, o.spec.seqlens_k)) == NULL)) {
		snprintf(f->error, sizeof f->error, "seqlens: out of memory");
		return -1;
	}
	if (o.spec.window_set && o.spec.window_left > 0)
		ui->mask_width = o.spec.window_left;
	/* A mask bug the new rules cannot show goes, said so below. */
	m = mask_rule_none();
	if (o.spec.window_set)
		m = mask_rule_window(m, o.spec.window_left, o.spec.window_right);
	if (o.spec.softcap_set)
		m.softcap = (float)o.spec.softcap;
	dropped = mask_bug_check(o.rule.mask_bug, m, f->error,
	    sizeof f->error) != 0 ? o.rule.mask_bug : MASK_BUG_NONE;
	f->error[0] = '\0';
	if (dropped != MASK_BUG_NONE)
		o.rule.mask_bug = MASK_BUG_NONE;
	if (ui_configure(ui, &o, f->error, sizeof f->error) != 0)
		return -1;
	f->open = 0;
	ui_message(ui, UI_ROLE_MESSAGE, "problem rebuilt: %ld steps%s%s%s%s",
	    timeline_steps(ui->line.tl), table, dropped != MASK_BUG_NONE ?
	    " (mask bug " : "", dropped != MASK_BUG_NONE ?
	    mask_bug_name(dropped) : "", dropped != MASK_BUG_NONE ?
	    " dropped: the new rules cannot show it)" : "");
	return 0;
}

int
ui_form_key(struct ui *ui, const struct ui_key *k)
{
	struct ui_form *f = &ui->form;
	char *v = f->value[f->field];
	size_t n = strlen(v);

	switch (k->code) {
	case UI_KEY_ESC:
		f->open = 0;
		ui_message(ui, UI_ROLE_MESSAGE, "edit cancelled");
		break;
	case UI_KEY_ENTER:
		ui_form_apply(ui);
		break;
	case UI_KEY_TAB:
	case UI_KEY_DOWN:
		f->field = (f->field + 1) % UI_FORM_FIELDS;
		break;
	case UI_KEY_BTAB:
	case UI_KEY_UP:
		f->field = (f->field + UI_FORM_FIELDS - 1) % UI_FORM_FIELDS;
		break;
	case UI_KEY_BACKSPACE:
		if (n > 0)
			v[n - 1] = '\0';
		break;
	default:
		if (k->code >= 0x20 && k->code < 0x7f && n + 1 < sizeof f->value[0]) {
			v[n] = (char)k->code;
			v[n + 1] = '\0';
		}
		break;
	}
	return UI_HANDLED;
}

void
ui_form_draw(struct ui *ui, struct ui_grid *g, struct ui_rect r)
{
	struct ui_form *f = &ui->form;
	const char *table = ui->opts.spec.block_table;
	int w = r.w < 72 ? r.w : 72, h = UI_FORM_FIELDS + 8 + (table != NULL);
	int x, y, i;

	x = r.x + (r.w - w) / 2;
	y = r.y + (r.h - h) / 2;
	if (y < r.y)
		y = r.y;
	ui_grid_box(g, (struct ui_rect){ x, y, w, h }, UI_ROLE_LABEL, ui->gl);
	x++;
	y++;
	w -= 2;
	ui_grid_text(g, x + 1, y, w - 2, UI_ROLE_TITLE,
	    "edit the problem (the command line's rules apply)");
	for (i = 0; i < UI_FORM_FIELDS; i++) {
		ui_grid_text(g, x + 1, y + 2 + i, 1, UI_ROLE_FOCUS,
		    i == f->field ? ui->gl->focus : " ");
		ui_grid_text(g, x + 3, y + 2 + i, 6, UI_ROLE_LABEL,
		    ui_form_fields[i].label);
		ui_grid_clear(g, (struct ui_rect){ x + 10, y + 2 + i, 22, 1 },
		    UI_ROLE_INPUT);
		ui_grid_printf(g, x + 10, y + 2 + i, 22, UI_ROLE_INPUT, "%s%s",
		    f->value[i], i == f->field ? "_" : "");
		ui_grid_text(g, x + 34, y + 2 + i, w - 35, UI_ROLE_DIM,
		    ui_form_fields[i].hint);
	}
	ui_grid_printf(g, x + 1, y + 3 + UI_FORM_FIELDS, w - 2, UI_ROLE_LABEL,
	    "Enter applies %s Esc cancels %s Tab and arrows move %s blank: default",
	    ui->gl->dot, ui->gl->dot, ui->gl->dot);
	if (table != NULL)
		ui_grid_printf(g, x + 1, y + 4 + UI_FORM_FIELDS, w - 2, UI_ROLE_DIM,
		    "pages: a new size drops the table, shuffled from the seed "
		    "then: %s", table);
	if (f->error[0] != '\0')
		ui_grid_wrap(g, (struct ui_rect){ x + 1, y + 4 + UI_FORM_FIELDS +
		    (table != NULL), w - 2, 2 }, UI_ROLE_ERROR, f->error);
}
