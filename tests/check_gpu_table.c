/*
 * check_gpu_table.c - the kernel table (gpu/kernel.c) and the rules of
 * the GPU half that need no GPU, so they run on every machine: names
 * find their entries, every entry keeps the table's rules and has its
 * paragraph in doc/flashstep.1, each entry refuses what it does not take with the
 * one message that names it, the fast kernel's tilings, --list-kernels'
 * lines, the closeness rule's numbers, the skip rule of the GPU tests
 * (gpu_may_skip, FLASHSTEP_REQUIRE_GPU), and how the decoding kernel
 * cuts a call into blocks, key ranges and workspace (decode_ranges.c).
 */
#include "config.h"

#include "testutil.h"
#include "gpu/gpu.h"
#include "gpu/decode.h"
#include "gpu/gpucheck.h"
#include "gpu/gpucheck_split.h"
#include "cmd/gpucmd.h"
#include "model/combine.h"
#include "model/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct gpu_kernel *
kernel(const char *name)
{
	const struct gpu_kernel *k = gpu_kernel_find(name);

	ck_assert_msg(k != NULL, "no kernel %s", name);
	return k;
}

static void
build(struct problem_spec *spec, struct problem *p)
{
	char err[256];

	ck_assert_msg(problem_build(spec, p, err, sizeof err) == 0, "%s", err);
}

START_TEST(test_find)
{
	char names[512];
	size_t at = 0;
	int i;

	names[0] = '\0';
	for (i = 0; gpu_kernels[i] != NULL; i++) {
		ck_assert(gpu_kernel_find(gpu_kernels[i]->name) == gpu_kernels[i]);
		at += (size_t)snprintf(names + at, sizeof names - at, "%s%s",
		    i > 0 ? ", " : "", gpu_kernels[i]->name);
	}
	ck_assert_str_eq(gpu_kernel_names(), names);
	ck_assert(gpu_kernel_find("slow") == NULL);
	ck_assert(gpu_kernel_find("") == NULL);
	/* Every kernel takes bug mode none and a tiling the simulator has. */
	for (i = 0; gpu_kernels[i] != NULL; i++) {
		ck_assert(gpu_kernels[i]->bugs & (1u << BUG_NONE));
		ck_assert(gpu_kernels[i]->orders & (1u << ORDER_FA2));
		/* (A kernel for one architecture lacks its code where nvcc
		 * could not target it.) */
		ck_assert(gpu_kernels[i]->launch != NULL || !gpu_built() ||
		    gpu_kernels[i]->cc != 0);
		ck_assert(!(gpu_kernels[i]->caps & GPU_CAP_TRACE) ||
		    gpu_kernels[i]->trace != NULL ||
		    gpu_kernels[i]->launch == NULL);
	}
}
END_TEST

/*
 * What every entry must say, whatever kernel it is: so a new entry is
 * held to the table's rules without a line here.  Each has a name of
 * its own and a one-line summary, takes some dtype, loop order and
 * convention, describes itself in every --list-kernels line, has the
 * functions its caps promise, and its bench flags are consistent: the
 * fa1 row's kernel takes any tiling and the fa1 order, the decode
 * row's kernel takes grouped heads, one kernel each.
 */
START_TEST(test_every_entry)
{
	const struct gpu_kernel *k;
	char line[512];
	int i, j, what, fa1 = 0, decode = 0, bench = 0;

	for (i = 0; gpu_kernels[i] != NULL; i++) {
		k = gpu_kernels[i];
		ck_assert_msg(k->name != NULL && k->name[0] != '\0' &&
		    strlen(k->name) < 16 && strcspn(k->name, " ,") ==
		    strlen(k->name), "entry %d's name", i);
		ck_assert_msg(strcmp(k->name, "fa1") != 0, "fa1 is bench's row");
		for (j = 0; j < i; j++)
			ck_assert_msg(strcmp(gpu_kernels[j]->name, k->name) != 0,
			    "two entries named %s", k->name);
		ck_assert_msg(k->summary != NULL && k->summary[0] != '\0' &&
		    strchr(k->summary, '\n') == NULL, "%s's summary", k->name);
		ck_assert_msg(k->dtypes != 0 && k->orders != 0 &&
		    k->conventions != 0, "%s takes nothing", k->name);
		for (what = 0; gpu_kernel_describe(k, what, line, sizeof line) ==
		    0; what++)
			ck_assert_msg(strlen(line) > 13 && strchr(line, '\n') ==
			    NULL, "%s's line %d: '%s'", k->name, what, line);
		ck_assert_int_eq(what, 12);
		/* Its own tilings need the functions that pick and list them
		 * (where the build has its code). */
		if (!(k->caps & (GPU_CAP_ANY_TILING | GPU_CAP_NO_TILES)))
			ck_assert_msg(k->launch == NULL || (k->tiling != NULL &&
			    k->tilings != NULL && k->dims != NULL), "%s's tilings",
			    k->name);
		ck_assert_msg(k->backward == NULL || k->launch == NULL ||
		    k->backward->launch != NULL, "%s's backward", k->name);
		ck_assert_msg(k->split == NULL || k->launch == NULL ||
		    k->split->launch != NULL, "%s's split run", k->name);
		ck_assert(k->bench_repeat >= 0);
		if (k->bench & GPU_BENCH_FA1) {
			fa1++;
			ck_assert_msg((k->caps & GPU_CAP_ANY_TILING) &&
			    (k->orders & (1u << ORDER_FA1)), "%s: the fa1 row "
			    "needs any tiling in the fa1 order", k->name);
		}
		if (k->bench & GPU_BENCH_DECODE) {
			decode++;
			ck_assert_msg(k->caps & GPU_CAP_HEADS, "%s: --decode's "
			    "shapes are grouped heads", k->name);
		}
		bench += (k->bench & GPU_BENCH_DEFAULT) != 0;
	}
	ck_assert_int_eq(fa1, 1);
	ck_assert_int_eq(decode, 1);
	ck_assert_int_gt(bench, 0);
}
END_TEST

/* doc/flashstep.1 with every run of white space one space. */
static char *
manpage(void)
{
	const char *top = getenv("top_srcdir");
	char path[1024], *text, *w;
	const char *r;
	FILE *f;
	long n;

	snprintf(path, sizeof path, "%s/doc/flashstep.1", top != NULL ? top :
	    ".");
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert(fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0);
	rewind(f);
	text = malloc((size_t)n + 1);
	ck_assert(text != NULL && fread(text, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	text[n] = '\0';
	for (r = w = text; *r != '\0'; r++)
		if (*r != ' ' && *r != '\t' && *r != '\n')
			*w++ = *r;
		else if (w > text && w[-1] != ' ')
			*w++ = ' ';
	*w = '\0';
	return text;
}

/* "naive, teaching, fast and wgmma": the names of the kernels with a
 * bench flag in flags (and with bwd a backward pass), as prose. */
static void
prose_names(unsigned flags, int bwd, char *buf, size_t len)
{
	const char *names[32];
	size_t at = 0;
	int i, n = 0;

	for (i = 0; gpu_kernels[i] != NULL && n < 32; i++)
		if ((gpu_kernels[i]->bench & flags) && (!bwd ||
		    gpu_kernels[i]->backward != NULL))
			names[n++] = gpu_kernels[i]->name;
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i == 0 ? "" :
		    i == n - 1 ? " and " : ", ", names[i]);
}

/*
 * The manual follows the table: the gpu command's entry has a paragraph
 * for each kernel of the table (".BR name :") and for no other, and
 * bench --gpu's defaults (all, --backward, --decode) are the kernels the
 * table's bench flags name.  Adding a kernel fails here until the page
 * says what it is.
 */
START_TEST(test_manpage)
{
	char *man = manpage(), *gpu, *end, *at, want[512], words[256];
	int i, n = 0;

	gpu = strstr(man, ".TP .B gpu Runs the problem");
	ck_assert_msg(gpu != NULL, "flashstep.1 has no entry for gpu");
	end = strstr(gpu + 4, ".TP ");
	ck_assert(end != NULL);
	*end = '\0';
	for (i = 0; gpu_kernels[i] != NULL; i++) {
		snprintf(want, sizeof want, ".BR %s :", gpu_kernels[i]->name);
		ck_assert_msg(strstr(gpu, want) != NULL, "flashstep.1's gpu entry "
		    "says nothing of kernel %s ('%s')", gpu_kernels[i]->name,
		    want);
	}
	for (at = gpu; (at = strstr(at, ".BR ")) != NULL; at += 4) {
		char name[32];

		if (sscanf(at, ".BR %31[a-z0-9_-] :", name) != 1 ||
		    strstr(at, " :") != at + 4 + strlen(name))
			continue;
		ck_assert_msg(gpu_kernel_find(name) != NULL, "flashstep.1's gpu "
		    "entry describes kernel %s, which the table lacks", name);
		n++;
	}
	for (i = 0; gpu_kernels[i] != NULL; i++)
		;
	ck_assert_int_eq(n, i);
	*end = '.';

	prose_names(GPU_BENCH_DEFAULT, 0, words, sizeof words);
	snprintf(want, sizeof want, ".B \\-\\-gpu times the kernels of the "
	    "table (by default %s),", words);
	ck_assert_msg(strstr(man, want) != NULL, "flashstep.1 lacks '%s'", want);
	prose_names(GPU_BENCH_DEFAULT, 1, words, sizeof words);
	snprintf(want, sizeof want, "of each kernel with one (the %s kernel%s)",
	    words, strstr(words, " and ") != NULL ? "s" : "");
	ck_assert_msg(strstr(man, want) != NULL, "flashstep.1 lacks '%s'", want);
	prose_names(GPU_BENCH_DECODE, 0, words, sizeof words);
	snprintf(want, sizeof want, ".B \\-\\-gpu \\-\\-decode times the %s "
	    "kernel on decoding shapes", words);
	ck_assert_msg(strstr(man, want) != NULL, "flashstep.1 lacks '%s'", want);
	free(man);
}
END_TEST

/* How many entries have GPU_CAP_VARLEN. */
static int
with_cap_count(void)
{
	int i, n = 0;

	for (i = 0; gpu_kernels[i] != NULL; i++)
		n += (gpu_kernels[i]->caps & GPU_CAP_VARLEN) != 0;
	return n;
}

/* A packed batch (--seqlens): an entry without GPU_CAP_VARLEN refuses it
 * by name before any GPU is probed (so also in a build whose kernels
 * are absent), with the one message that lists the entries with the
 * cap, exactly those; an entry with it lets it through (what it refuses
 * then is something else); and every backward refuses it. */
START_TEST(test_no_varlen_kernel)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512], want[512], list[256], name[64];
	const char *at;
	int i, with = 0, without = 0, listed;
	size_t len;

	problem_spec_init(&spec);
	spec.seqlens_q = spec.seqlens_k = "40,24";
	spec.d = spec.dv = 64;
	spec.br = spec.bc = 64;
	spec.input = INPUTS_NORMAL;
	build(&spec, &p);
	ck_assert_int_eq(p.nseq, 2);
	for (i = 0; gpu_kernels[i] != NULL; i++) {
		if (gpu_kernels[i]->caps & GPU_CAP_VARLEN) {
			with++;
			ck_assert_int_eq(gpu_varlen_check(gpu_kernels[i], "",
			    want, sizeof want), 0);
			if (gpu_kernel_check(gpu_kernels[i], &p, &t, &rule, 0, err,
			    sizeof err) != 0)
				ck_assert_msg(strstr(err, "--seqlens") == NULL,
				    "%s: %s", gpu_kernels[i]->name, err);
		} else {
			without++;
			ck_assert_int_eq(gpu_kernel_check(gpu_kernels[i], &p, &t,
			    &rule, 0, err, sizeof err), -1);
			ck_assert_int_eq(gpu_varlen_check(gpu_kernels[i], "", want,
			    sizeof want), -1);
			ck_assert_str_eq(err, want);
			/* the list: "(a packed batch; kernels that do: A, B)" */
			at = strstr(err, "kernels that do: ");
			ck_assert_ptr_nonnull(at);
			at += strlen("kernels that do: ");
			len = strcspn(at, ")");
			ck_assert_uint_lt(len, sizeof list);
			memcpy(list, at, len);
			list[len] = '\0';
			for (listed = 0, at = list; *at != '\0'; listed++) {
				len = strcspn(at, ",");
				ck_assert_uint_lt(len, sizeof name);
				memcpy(name, at, len);
				name[len] = '\0';
				ck_assert_msg(gpu_kernel_find(name) != NULL &&
				    (gpu_kernel_find(name)->caps & GPU_CAP_VARLEN),
				    "'%s' listed as taking --seqlens", name);
				at += len;
				at += strspn(at, ", ");
			}
			ck_assert_int_eq(listed, with_cap_count());
		}
		ck_assert_int_eq(gpu_backward_check(gpu_kernels[i], &p, 0, err,
		    sizeof err), -1);
		ck_assert_int_eq(gpu_varlen_check(gpu_kernels[i], " backward",
		    want, sizeof want), -1);
		ck_assert_str_eq(err, want);
		ck_assert_ptr_nonnull(strstr(err, "--seqlens backward"));
	}
	/* the wgmma forward takes one; the decode kernel does not (yet) */
	ck_assert_int_gt(with, 0);
	ck_assert_int_gt(without, 0);
	ck_assert(gpu_kernel_find("wgmma")->caps & GPU_CAP_VARLEN);
	problem_free(&p);
}
END_TEST

/* What the model takes with a packed batch but no kernel's glue lays out
 * is refused by every entry that takes one, by name: dropout (its
 * counter counts heads per sequence) and a paged cache (a table a
 * sequence). */
START_TEST(test_varlen_pairs_refused)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512];
	int i, pass, tried = 0;

	for (pass = 0; pass < 2; pass++) {
		problem_spec_init(&spec);
		spec.seqlens_q = spec.seqlens_k = "40,24";
		spec.d = spec.dv = 128;
		spec.input = INPUTS_NORMAL;
		spec.dtype = DTYPE_FP16;
		if (pass == 0) {
			spec.dropout_set = 1;
			spec.dropout = 0.1;
		} else
			spec.page_size = 16;
		build(&spec, &p);
		for (i = 0; gpu_kernels[i] != NULL; i++) {
			if (!(gpu_kernels[i]->caps & GPU_CAP_VARLEN))
				continue;
			ck_assert_int_eq(gpu_kernel_check(gpu_kernels[i], &p, &t,
			    &rule, 0, err, sizeof err), -1);
			ck_assert_msg(strstr(err, pass == 0 ? "does not take "
			    "--dropout with --seqlens" : "does not take --page-size "
			    "with --seqlens") != NULL, "%s: %s", gpu_kernels[i]->name,
			    err);
			tried++;
		}
		problem_free(&p);
	}
	ck_assert_int_ge(tried, 2);
}
END_TEST

/* What each entry does not take is refused from the entry, naming what
 * was asked and what it takes. */
/* fp8 is wgmma's alone, at its fp8_d: every other entry of the table
 * refuses it by name, with the one message, before any GPU is needed;
 * wgmma refuses another d, and takes d = 128 (at its 128 x 128 tiles). */
START_TEST(test_no_fp8_kernel)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512], want[512];
	int i;

	problem_spec_init(&spec);
	spec.tq = spec.tk = 64;
	spec.d = spec.dv = 64;
	spec.br = spec.bc = 64;
	spec.input = INPUTS_NORMAL;
	spec.dtype = DTYPE_FP8;
	build(&spec, &p);
	for (i = 0; gpu_kernels[i] != NULL; i++) {
		if (gpu_built() && gpu_kernels[i]->launch == NULL)
			continue;	/* not in this build: says so instead */
		ck_assert_int_eq(gpu_kernel_check(gpu_kernels[i], &p, &t, &rule,
		    0, err, sizeof err), -1);
		if (gpu_kernels[i]->dtypes & (1u << DTYPE_FP8))
			snprintf(want, sizeof want, "kernel %s does not take "
			    "--dtype fp8 at d = 64 (it takes fp8 at d = %d alone;"
			    " flashstep gpu --list-kernels)", gpu_kernels[i]->name,
			    gpu_kernels[i]->fp8_d);
		else
			snprintf(want, sizeof want, GPU_NO_FP8_KERNEL,
			    gpu_kernels[i]->name);
		ck_assert_str_eq(err, want);
	}
	problem_free(&p);

	/* the one kernel that takes it, at its d */
	spec.d = spec.dv = 128;
	spec.br = spec.bc = 128;
	t.br = t.bc = 128;
	build(&spec, &p);
	for (i = 0; gpu_kernels[i] != NULL; i++)
		if ((gpu_kernels[i]->dtypes & (1u << DTYPE_FP8)) &&
		    (!gpu_built() || gpu_kernels[i]->launch != NULL))
			ck_assert_msg(gpu_kernel_check(gpu_kernels[i], &p, &t,
			    &rule, 0, err, sizeof err) == 0, "%s", err);
	problem_free(&p);
}
END_TEST

/* A paged cache (--page-size) is the simulator's, and the decode
 * kernel's (GPU_CAP_PAGED): every other kernel, every backward and
 * split-KV run refuse it by name, before anything asks whether the
 * kernel is built or a device is there; decode takes pages of a
 * multiple of 16 keys and refuses the rest by name. */
START_TEST(test_no_paged_kernel)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { .convention = CONV_UNNORMALIZED };
	struct split_plan sp = { .splits = 2 };
	struct combine_rule cr = { .order = COMBINE_LTR };
	char err[512], want[128];
	int i;

	problem_spec_init(&spec);
	spec.tq = spec.tk = 128;
	spec.d = spec.dv = 64;
	spec.br = spec.bc = 64;
	spec.input = INPUTS_NORMAL;
	spec.dtype = DTYPE_FP16;
	spec.page_size = 16;
	build(&spec, &p);
	for (i = 0; gpu_kernels[i] != NULL; i++) {
		snprintf(want, sizeof want, "kernel %s does not take --page-size "
		    "(it takes K and V contiguous", gpu_kernels[i]->name);
		ck_assert_int_eq(gpu_kernel_check(gpu_kernels[i], &p, &t, &rule,
		    0, err, sizeof err), -1);
		if (gpu_kernels[i]->caps & GPU_CAP_PAGED)
			ck_assert_msg(strstr(err, "--page-size") == NULL, "%s", err);
		else
			ck_assert_msg(strstr(err, want) == err, "%s", err);
		if (gpu_kernels[i]->backward != NULL) {
			ck_assert_int_eq(gpu_backward_check(gpu_kernels[i], &p, 0,
			    err, sizeof err), -1);
			ck_assert_msg(strstr(err, "does not take --page-size "
			    "backward") != NULL, "%s", err);
		}
		if (gpu_kernels[i]->split != NULL) {
			ck_assert_int_eq(gpu_split_check(gpu_kernels[i], &p, &t,
			    &rule, &sp, &cr, err, sizeof err), -1);
			ck_assert_msg(strstr(err, want) == err, "%s", err);
		}
	}
	problem_free(&p);
	/* The same problem unpaged is taken by the teaching kernel. */
	spec.page_size = 0;
	build(&spec, &p);
	/* (in a build without CUDA too: the check is the table's, not a
	 * device's) */
	ck_assert_msg(gpu_kernel_check(kernel("teaching"), &p, &t, &rule, 0,
	    err, sizeof err) == 0, "%s", err);
	problem_free(&p);
	/* The decode kernel takes a paged decoding problem, in pages of
	 * 16, 64 or 256 keys, and no page size that is not a multiple of
	 * 16. */
	ck_assert(kernel("decode")->caps & GPU_CAP_PAGED);
	spec.tq = 1;
	spec.tk = 1000;
	spec.d = spec.dv = 128;
	spec.heads = 8;
	spec.kv_heads = 2;
	for (i = 0; i < 5; i++) {
		static const int sizes[] = { 16, 64, 256, 24, 8 };

		spec.page_size = sizes[i];
		build(&spec, &p);
		if (i < 3)
			ck_assert_msg(gpu_kernel_check(kernel("decode"), &p, &t, &rule,
			    0, err, sizeof err) == 0, "page size %d: %s", sizes[i],
			    err);
		else {
			snprintf(want, sizeof want, "kernel decode does not take "
			    "--page-size %d: it takes pages of a multiple of 16",
			    sizes[i]);
			ck_assert_int_eq(gpu_kernel_check(kernel("decode"), &p, &t,
			    &rule, 0, err, sizeof err), -1);
			ck_assert_msg(strstr(err, want) == err, "%s", err);
		}
		problem_free(&p);
	}
}
END_TEST

START_TEST(test_refusals)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 128, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	static const float s[4] = { 1, 2, 1001, 1002 }, v[4] = { 2, -1, 4, 8 };
	char err[512];

	problem_spec_init(&spec);
	spec.tq = spec.tk = 40;
	spec.d = spec.dv = 64;
	spec.input = INPUTS_NORMAL;
	build(&spec, &p);
	/* fp32: the teaching and naive kernels take it, fast does not. */
	ck_assert_int_eq(gpu_kernel_check(kernel("teaching"), &p, &t, &rule,
	    GPU_TRACE, err, sizeof err), 0);
	ck_assert_int_eq(gpu_kernel_check(kernel("naive"), &p, &t, &rule, 0,
	    err, sizeof err), 0);
	ck_assert_int_eq(gpu_kernel_check(kernel("fast"), &p, &t, &rule, 0, err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "kernel fast does not take --dtype fp32 (it takes "
	    "fp16, bf16; flashstep gpu --list-kernels)");
	/* The naive kernel has no trace and no bug modes. */
	ck_assert_int_eq(gpu_kernel_check(kernel("naive"), &p, &t, &rule,
	    GPU_TRACE, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "kernel naive has no trace") != NULL &&
	    strstr(err, "teaching, fast") != NULL, "%s", err);
	rule.bug = BUG_NO_RESCALE;
	ck_assert_int_eq(gpu_kernel_check(kernel("naive"), &p, &t, &rule, 0,
	    err, sizeof err), -1);
	ck_assert_msg(strstr(err, "--bug no-rescale (it takes none;") != NULL,
	    "%s", err);
	ck_assert_int_eq(gpu_kernel_check(kernel("teaching"), &p, &t, &rule, 0,
	    err, sizeof err), 0);
	rule.bug = BUG_NONE;
	problem_free(&p);

	spec.dtype = DTYPE_FP16;
	spec.dv = 32;
	build(&spec, &p);
	ck_assert_int_eq(gpu_kernel_check(kernel("fast"), &p, &t, &rule, 0, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "does not take d = 64, dv = 32 (it takes "
	    "d = dv = 64, 128;") != NULL, "%s", err);
	problem_free(&p);

	/* Problems are built with a positive scale; the fast kernel's rule
	 * stands guard for one that is not. */
	spec.dv = 64;
	build(&spec, &p);
	p.scale = -1.0f;
	ck_assert_int_eq(gpu_kernel_check(kernel("fast"), &p, &t, &rule, 0, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "--scale -1 (it takes a positive scale") !=
	    NULL, "%s", err);
	ck_assert_int_eq(gpu_kernel_check(kernel("teaching"), &p, &t, &rule, 0,
	    err, sizeof err), 0);
	problem_free(&p);

	build(&spec, &p);
	t.order = ORDER_FA1;
	ck_assert_int_eq(gpu_kernel_check(kernel("fast"), &p, &t, &rule, 0, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "--order fa1 (it takes fa2;") != NULL, "%s",
	    err);
	t.order = ORDER_FA2;
	rule.convention = CONV_NORMALIZED;
	ck_assert_int_eq(gpu_kernel_check(kernel("fast"), &p, &t, &rule, 0, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "--convention normalized (it takes "
	    "unnormalized;") != NULL, "%s", err);
	rule.convention = CONV_UNNORMALIZED;
	/* The tensor-core kernels' trace builds run no-rescale, no other
	 * bug mode. */
	rule.bug = BUG_NO_RESCALE;
	ck_assert_int_eq(gpu_kernel_check(kernel("fast"), &p, &t, &rule,
	    GPU_TRACE, err, sizeof err), kernel("fast")->launch ? 0 : -1);
	if (!kernel("fast")->launch)	/* built without CUDA */
		ck_assert_msg(strstr(err, "built without CUDA") != NULL, "%s",
		    err);
	ck_assert_uint_eq(kernel("wgmma")->bugs, kernel("fast")->bugs);
	rule.bug = BUG_NUMERATOR_ONLY;
	ck_assert_int_eq(gpu_kernel_check(kernel("fast"), &p, &t, &rule, 0, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "--bug numerator-only (it takes none, "
	    "no-rescale;") != NULL, "%s", err);
	rule.bug = BUG_NONE;
	problem_free(&p);

	tu_scores_problem(s, 1, 4, v, 1, &p);
	ck_assert_int_eq(gpu_kernel_check(kernel("fast"), &p, &t, &rule, 0, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "does not take a scores problem") != NULL,
	    "%s", err);
	ck_assert_int_eq(gpu_kernel_check(kernel("teaching"), &p, &t, &rule,
	    GPU_TRACE, err, sizeof err), 0);
	problem_free(&p);
}
END_TEST

/*
 * The masks and score modifiers (mask_rule.h): the teaching kernel takes
 * each, forward, backward and split-KV; the tensor-core forwards take the
 * window, the cap and ALiBi (not the mask bugs), and so does the fast
 * kernel's backward (gpu/fast_bwd.cu); every other kernel and backward
 * refuses each by its option's name.
 */
START_TEST(test_mask_refusals)
{
	static const char *const option[] = {
		"--window", "--softcap", "--alibi/--alibi-slopes", "--mask-bug",
	};
	static const unsigned cap[] = {
		GPU_CAP_WINDOW, GPU_CAP_SOFTCAP, GPU_CAP_ALIBI, GPU_CAP_MASK_BUGS,
	};
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 64, 64, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512], want[128];
	int k, i, taken = 0, taken_bwd = 0;

	for (k = 0; k < 4; k++) {
		problem_spec_init(&spec);
		spec.tq = spec.tk = 40;
		spec.d = spec.dv = 64;
		spec.dtype = DTYPE_FP16;
		spec.input = INPUTS_NORMAL;
		rule.mask_bug = MASK_BUG_NONE;
		/* the mask bug on a causal problem: what the table checks
		 * (the sim refuses it later, having no left edge) */
		spec.causal = k == 3;
		if (k == 0) {
			spec.window_set = 1;
			spec.window_left = 8;
			spec.window_right = 0;
		}
		if (k == 1) {
			spec.softcap_set = 1;
			spec.softcap = 20;
		}
		if (k == 2) {
			spec.alibi_set = 1;
			spec.alibi = 0.25;
		}
		if (k == 3)
			rule.mask_bug = MASK_BUG_WINDOW_EDGE;
		build(&spec, &p);
		ck_assert_msg(gpu_kernel_check(kernel("teaching"), &p, &t, &rule,
		    GPU_TRACE, err, sizeof err) == 0 || strstr(err, "built "
		    "without CUDA") != NULL, "%s", err);
		if (k < 3)
			ck_assert_msg(gpu_backward_check(kernel("teaching"), &p, 0,
			    err, sizeof err) == 0 || strstr(err, "built without CUDA")
			    != NULL, "%s", err);
		for (i = 0; gpu_kernels[i] != NULL; i++) {
			if (strcmp(gpu_kernels[i]->name, "teaching") == 0)
				continue;
			snprintf(want, sizeof want, "kernel %s does not take %s",
			    gpu_kernels[i]->name, option[k]);
			if (gpu_kernels[i]->caps & cap[k]) {
				/* taken (the tensor-core forwards: tc_mask.cuh):
				 * whatever else it refuses, not this */
				if (gpu_kernel_check(gpu_kernels[i], &p, &t, &rule,
				    0, err, sizeof err) != 0)
					ck_assert_msg(strstr(err, want) == NULL, "%s",
					    err);
				taken++;
			} else
				ck_assert_int_eq(gpu_kernel_check(gpu_kernels[i],
				    &p, &t, &rule, 0, err, sizeof err), -1);
			if (!(gpu_kernels[i]->caps & cap[k]) &&
			    strstr(err, "built without CUDA") == NULL &&
			    strstr(err, "does not take --dtype") == NULL &&
			    strstr(err, "does not take d = ") == NULL)
				ck_assert_msg(strstr(err, want) != NULL, "%s: '%s'",
				    want, err);
			snprintf(want, sizeof want, "does not take %s backward",
			    option[k]);
			if (gpu_kernels[i]->backward != NULL && k < 3 &&
			    (gpu_kernels[i]->backward->caps & cap[k])) {
				/* taken: whatever else it refuses, not this */
				if (gpu_backward_check(gpu_kernels[i], &p, 0, err,
				    sizeof err) != 0)
					ck_assert_msg(strstr(err, want) == NULL, "%s",
					    err);
				taken_bwd++;
			} else if (gpu_kernels[i]->backward != NULL && k < 3) {
				ck_assert_int_eq(gpu_backward_check(gpu_kernels[i], &p,
				    0, err, sizeof err), -1);
				if (strstr(err, "built without CUDA") == NULL)
					ck_assert_msg(strstr(err, want) != NULL, "%s",
					    err);
			}
		}
		problem_free(&p);
	}
	/* fast and wgmma take the window, the cap and ALiBi; fast's
	 * backward too */
	ck_assert_int_eq(taken, 6);
	ck_assert_int_eq(taken_bwd, 3);
	ck_assert(gpu_kernel_find("fast")->backward->caps & GPU_CAP_WINDOW);
}
END_TEST

/* The fast kernel's tilings (its variants, compiled in fast.cu), or the
 * stub's one answer. */
START_TEST(test_tilings)
{
	struct tiling t = { 7, 9, ORDER_FA1 };
	char err[512];

	/* A kernel that takes any tiling leaves it as given. */
	ck_assert_int_eq(gpu_kernel_tiling(kernel("teaching"), 64, 0, 0, &t,
	    err, sizeof err), 0);
	ck_assert(t.br == 7 && t.bc == 9 && t.order == ORDER_FA1);
	ck_assert_int_eq(gpu_kernel_tiling(kernel("fast"), 96, 0, 0, &t, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "does not take d = 96 (it takes d = dv = 64, "
	    "128;") != NULL, "%s", err);
	if (!gpu_built()) {
		ck_assert_int_eq(gpu_kernel_tiling(kernel("fast"), 64, 0, 0, &t,
		    err, sizeof err), -1);
		ck_assert_str_eq(err, "built without CUDA support");
		return;
	}
	ck_assert_int_eq(gpu_kernel_tiling(kernel("fast"), 64, 0, 0, &t, err,
	    sizeof err), 0);
	ck_assert(t.br == 128 && t.bc == 64 && t.order == ORDER_FA2);
	ck_assert_int_eq(gpu_kernel_tiling(kernel("fast"), 128, 0, 0, &t, err,
	    sizeof err), 0);
	ck_assert(t.br == 128 && t.bc == 32);
	ck_assert_int_eq(gpu_kernel_tiling(kernel("fast"), 64, 64, 64, &t, err,
	    sizeof err), 0);
	ck_assert(t.br == 64 && t.bc == 64);
	ck_assert_int_eq(gpu_kernel_tiling(kernel("fast"), 128, 64, 64, &t, err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "kernel fast has no Br = 64, Bc = 64 tiling at "
	    "d = 128 (it has Br x Bc = 128x32 (default), 128x64)");
}
END_TEST

/* The wgmma kernel's tilings, or why this build has none. */
START_TEST(test_wgmma_tilings)
{
	const struct gpu_kernel *k = kernel("wgmma");
	struct tiling t;
	char err[512];

	ck_assert_int_eq(k->cc, 90);
	if (k->launch == NULL) {
		ck_assert_int_eq(gpu_kernel_tiling(k, 64, 0, 0, &t, err,
		    sizeof err), -1);
		ck_assert_str_eq(err, gpu_built() ? "kernel wgmma is not in this "
		    "build: its code is for sm_90a alone, which this build's "
		    "nvcc could not target (configure with CUDA 12 or newer)" :
		    "built without CUDA support");
		return;
	}
	ck_assert_int_eq(gpu_kernel_tiling(k, 64, 0, 0, &t, err, sizeof err),
	    0);
	ck_assert(t.br == 192 && t.bc == 128 && t.order == ORDER_FA2);
	ck_assert_int_eq(gpu_kernel_tiling(k, 64, 128, 128, &t, err,
	    sizeof err), 0);
	ck_assert(t.br == 128 && t.bc == 128);
	ck_assert_int_eq(gpu_kernel_tiling(k, 128, 0, 0, &t, err, sizeof err),
	    0);
	ck_assert(t.br == 128 && t.bc == 128);
	ck_assert_int_eq(gpu_kernel_tiling(k, 128, 192, 128, &t, err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "kernel wgmma has no Br = 192, Bc = 128 tiling "
	    "at d = 128 (it has Br x Bc = 128x128 (default))");
}
END_TEST

/* An entry whose code a CUDA build lacks (nvcc could not target its one
 * architecture) is refused from the entry, saying so, before any
 * device is asked; a build without CUDA says that instead, later. */
START_TEST(test_absent)
{
	struct gpu_kernel missing = *kernel("wgmma");
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 128, 128, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512], line[512];

	missing.tiling = NULL;
	missing.tilings = NULL;
	missing.launch = NULL;
	missing.trace = NULL;
	problem_spec_init(&spec);
	spec.tq = spec.tk = 40;
	spec.d = spec.dv = 64;
	spec.dtype = DTYPE_FP16;
	spec.input = INPUTS_NORMAL;
	build(&spec, &p);
	ck_assert_int_eq(gpu_kernel_tiling(&missing, 64, 0, 0, &t, err,
	    sizeof err), -1);
	if (gpu_built()) {
		ck_assert_str_eq(err, "kernel wgmma is not in this build: its "
		    "code is for sm_90a alone, which this build's nvcc could "
		    "not target (configure with CUDA 12 or newer)");
		ck_assert_int_eq(gpu_kernel_check(&missing, &p, &t, &rule, 0, err,
		    sizeof err), -1);
		ck_assert_msg(strstr(err, "not in this build") != NULL, "%s",
		    err);
	} else
		ck_assert_str_eq(err, "built without CUDA support");
	ck_assert_int_eq(gpu_kernel_describe(&missing, 4, line, sizeof line),
	    0);
	ck_assert_msg(strncmp(line, "tilings      its own (not known: ",
	    33) == 0, "%s", line);
	problem_free(&p);
}
END_TEST

/* --list-kernels: the same labelled lines for every kernel. */
START_TEST(test_describe)
{
	static const char *const labels[] = { "devices", "dtypes",
	    "head sizes", "inputs",
	    "tilings", "loop orders", "conventions", "bug modes", "trace",
	    "arithmetic", "backward", "split-KV" };
	char line[512];
	int i, what;

	for (i = 0; gpu_kernels[i] != NULL; i++) {
		for (what = 0; gpu_kernel_describe(gpu_kernels[i], what, line,
		    sizeof line) == 0; what++)
			ck_assert_msg(strncmp(line, labels[what],
			    strlen(labels[what])) == 0, "%s", line);
		ck_assert_int_eq(what, 12);
	}
	ck_assert_int_eq(gpu_kernel_describe(kernel("fast"), 11, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "split-KV     none");
	ck_assert_int_eq(gpu_kernel_describe(kernel("teaching"), 11, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "split-KV     the simulator's (--splits N): a "
	    "block per (row block, key range), partials mlu or olse, merged "
	    "ltr, tree or reverse; merge bug modes none, no-rescale-one, "
	    "unweighted, last-max; grouped heads, packed or not");
	ck_assert_int_eq(gpu_kernel_describe(kernel("decode"), 11, line,
	    sizeof line), 0);
	ck_assert_msg(strstr(line, "its own: key ranges enough to fill the "
	    "GPU") != NULL, "%s", line);
	ck_assert_int_eq(gpu_kernel_describe(kernel("decode"), 3, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "inputs       Q, K, V, a packed batch "
	    "(--seqlens), a paged K/V cache (--page-size); causal or not; a "
	    "positive scale; at most 64 query rows a head; H query heads on G "
	    "K/V heads as one problem, each group's rows packed");
	ck_assert_int_eq(gpu_kernel_describe(kernel("decode"), 10, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "backward     none");
	ck_assert_int_eq(gpu_kernel_describe(kernel("naive"), 10, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "backward     fp32, fp16, bf16; causal or not; "
	    "scores problems; bug modes none; no tiles: P, dP and dS (Tq x Tk) "
	    "whole in device memory, dQ one sum an entry (--dq atomic and "
	    "ordered alike); final gradients, no step trace (--backward)");
	ck_assert_int_eq(gpu_kernel_describe(kernel("fast"), 10, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "backward     fp16, bf16; causal or not, "
	    "windows, softcap, ALiBi; bug modes none, no-d, no-scale; dQ "
	    "atomic or ordered; its own tiles 64x128 (--backward)");
	ck_assert_int_eq(gpu_kernel_describe(kernel("teaching"), 10, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "backward     fp32, fp16, bf16; causal or not, "
	    "windows, softcap, ALiBi, dropout; scores problems; bug modes none, "
	    "no-d, max-not-lse, no-scale, dq-overwrite, dropout-offset; dQ "
	    "atomic or ordered (--backward)");
	ck_assert_int_eq(gpu_kernel_describe(kernel("fast"), 1, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "dtypes       fp16, bf16");
	ck_assert_int_eq(gpu_kernel_describe(kernel("wgmma"), 1, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "dtypes       fp16, bf16, fp8 (fp8 at d = 128)");
	ck_assert_int_eq(gpu_kernel_describe(kernel("fast"), 0, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "devices      any this build runs on");
	ck_assert_int_eq(gpu_kernel_describe(kernel("wgmma"), 0, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "devices      compute capability 9.0 only "
	    "(sm_90a machine code: H100, H200)");
	ck_assert_int_eq(gpu_kernel_describe(kernel("teaching"), 7, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "bug modes    none, numerator-only, "
	    "denominator-only, no-rescale, forget-old-denominator");
	ck_assert_int_eq(gpu_kernel_describe(kernel("fast"), 7, line,
	    sizeof line), 0);
	ck_assert_str_eq(line, "bug modes    none, no-rescale");
}
END_TEST

/* The decode entry refuses from the table what it does not take. */
START_TEST(test_decode_refusals)
{
	const struct gpu_kernel *k = kernel("decode");
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 64, 64, ORDER_FA1 };
	struct online_rule rule = { CONV_NORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct gpu_result res;
	char err[512];

	problem_spec_init(&spec);
	spec.tq = 1;
	spec.tk = 300;
	spec.d = spec.dv = 128;
	spec.heads = 8;
	spec.kv_heads = 2;
	spec.dtype = DTYPE_FP16;
	spec.input = INPUTS_NORMAL;
	spec.causal = 1;
	build(&spec, &p);
	/* Grouped heads whole, any loop order or convention (no tiles). */
	ck_assert_int_eq(gpu_kernel_check(k, &p, &t, &rule, 0, err,
	    sizeof err), 0);
	ck_assert_int_eq(gpu_kernel_check(k, &p, &t, &rule, GPU_TRACE, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "kernel decode has no trace") != NULL, "%s",
	    err);
	/* Others take one head a problem. */
	ck_assert_int_eq(gpu_kernel_check(kernel("teaching"), &p, &t, &rule, 0,
	    err, sizeof err), -1);
	ck_assert_str_eq(err, "kernel teaching does not take 8 query heads on 2 "
	    "K/V heads as one problem (it takes one head a problem: the "
	    "commands run the heads apart; flashstep gpu --list-kernels)");
	rule.bug = BUG_NO_RESCALE;
	ck_assert_int_eq(gpu_kernel_check(k, &p, &t, &rule, 0, err, sizeof err),
	    -1);
	ck_assert_msg(strstr(err, "--bug no-rescale (it takes none;") != NULL,
	    "%s", err);
	rule.bug = BUG_NONE;
	problem_free(&p);

	spec.tq = 65;
	build(&spec, &p);
	ck_assert_int_eq(gpu_kernel_check(k, &p, &t, &rule, 0, err, sizeof err),
	    -1);
	ck_assert_str_eq(err, "kernel decode does not take --tq 65 (it takes "
	    "at most 64 query rows a head; flashstep gpu --list-kernels)");
	problem_free(&p);

	spec.tq = 1;
	spec.d = spec.dv = 64;
	build(&spec, &p);
	ck_assert_int_eq(gpu_kernel_check(k, &p, &t, &rule, 0, err, sizeof err),
	    -1);
	ck_assert_msg(strstr(err, "does not take d = 64, dv = 64 (it takes "
	    "d = dv = 128;") != NULL, "%s", err);
	problem_free(&p);

	spec.d = spec.dv = 128;
	spec.dtype = DTYPE_FP32;
	build(&spec, &p);
	ck_assert_int_eq(gpu_kernel_check(k, &p, &t, &rule, 0, err, sizeof err),
	    -1);
	ck_assert_msg(strstr(err, "--dtype fp32 (it takes fp16, bf16;") != NULL,
	    "%s", err);
	problem_free(&p);

	/* A count of key ranges is for a kernel that picks its own, and
	 * refused before any device is looked for. */
	spec.dtype = DTYPE_FP16;
	spec.heads = spec.kv_heads = 1;
	build(&spec, &p);
	ck_assert_int_eq(gpu_run_ranges(kernel("teaching"), &p, 1, &t, &rule, 0,
	    4, 0, &res, err, sizeof err), -1);
	ck_assert_str_eq(err, "kernel teaching cannot be asked for 4 key "
	    "ranges: only a kernel that picks its own takes a count");
	ck_assert_int_eq(gpu_run_ranges(k, &p, 1, &t, &rule, 0, -1, 0, &res,
	    err, sizeof err), -1);
	ck_assert_str_eq(err, "-1 key ranges asked of kernel decode (0: its "
	    "own choice, or 1 or more)");
	problem_free(&p);
}
END_TEST

/* The split-KV run is the teaching entry's; the others refuse --splits
 * from the table, and the run refuses what it does not take. */
START_TEST(test_split_refusals)
{
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 8, 8, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct split_plan sp = { 4, MERGE_MLU, 1 };
	struct combine_rule cr = { COMBINE_TREE, MERGE_BUG_LAST_MAX };
	struct gpu_kernel plain = *kernel("teaching");
	struct gpu_split none = *kernel("teaching")->split;
	char err[512];

	problem_spec_init(&spec);
	spec.tq = 3;
	spec.tk = 90;
	spec.d = spec.dv = 16;
	spec.heads = 6;
	spec.kv_heads = 3;
	spec.input = INPUTS_NORMAL;
	build(&spec, &p);
	ck_assert_int_eq(gpu_split_check(kernel("teaching"), &p, &t, &rule, &sp,
	    &cr, err, sizeof err), 0);
	ck_assert_int_eq(gpu_split_check(kernel("fast"), &p, &t, &rule, &sp,
	    &cr, err, sizeof err), -1);
	ck_assert_str_eq(err, "kernel fast has no split-KV run (kernels with "
	    "one: teaching)");
	ck_assert_int_eq(gpu_split_check(kernel("decode"), &p, &t, &rule, &sp,
	    &cr, err, sizeof err), -1);
	ck_assert_str_eq(err, "kernel decode cuts its keys into ranges of its "
	    "own choosing; --splits asks for a split-KV run on the simulator's "
	    "schedule (kernels with one: teaching)");
	sp.splits = 1;
	ck_assert_int_eq(gpu_split_check(kernel("teaching"), &p, &t, &rule, &sp,
	    &cr, err, sizeof err), -1);
	ck_assert_str_eq(err, "a split-KV run takes --splits 2 or more, not 1");
	sp.splits = 4;
	/* What an entry's split run does not take: its merge bugs, grouped
	 * heads. */
	none.merge_bugs = 1u << MERGE_BUG_NONE;
	none.caps = 0;
	plain.split = &none;
	ck_assert_int_eq(gpu_split_check(&plain, &p, &t, &rule, &sp, &cr, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "does not take 6 query heads on 3 K/V heads "
	    "as one problem") != NULL, "%s", err);
	problem_free(&p);
	spec.heads = spec.kv_heads = 1;
	build(&spec, &p);
	ck_assert_int_eq(gpu_split_check(&plain, &p, &t, &rule, &sp, &cr, err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "kernel teaching does not take --merge-bug "
	    "last-max (it takes none; flashstep gpu --list-kernels)");
	problem_free(&p);
}
END_TEST

/* The split comparison's depth of a plan (gpucheck_split.h): ltr and
 * reverse N merges deep, tree log2 N. */
START_TEST(test_split_depth)
{
	static const int want[3][3] = {	/* N = 2, 5, 8 */
		[COMBINE_LTR] = { 2, 5, 8 },
		[COMBINE_TREE] = { 1, 3, 3 },
		[COMBINE_REVERSE] = { 2, 5, 8 },
	};
	static const int splits[3] = { 2, 5, 8 };
	struct problem_spec spec;
	struct problem p;
	struct tiling t = { 4, 4, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	struct split_plan sp = { 0, MERGE_MLU, 0 };
	struct combine_rule cr = { .order = COMBINE_LTR };
	struct combine *comb;
	struct sim *sim;
	char err[512];
	int o, n;

	problem_spec_init(&spec);
	spec.tq = 4;
	spec.tk = 32;
	build(&spec, &p);
	for (n = 0; n < 3; n++) {
		sp.splits = splits[n];
		sim = sim_new_split(&p, &t, &sp, &rule, err, sizeof err);
		ck_assert_msg(sim != NULL, "%s", err);
		for (o = 0; o < 3; o++) {
			cr.order = (enum combine_order)o;
			comb = combine_new(sim, &cr, err, sizeof err);
			ck_assert_msg(comb != NULL, "%s", err);
			ck_assert_int_eq(gpucheck_split_depth(comb), want[o][n]);
			combine_free(comb);
		}
		sim_free(sim);
	}
	problem_free(&p);
}
END_TEST

/* The closeness rule's numbers (gpucheck.h) and its one test. */
START_TEST(test_rule)
{
	struct gpucheck_tol tol;
	struct problem_spec spec;
	struct problem p;

	gpucheck_tol_set(&tol, DTYPE_FP32, 0.0, 2.0);
	ck_assert(tol.rtol == 1e-4 && tol.rtol_acc == 1e-4);
	ck_assert(gpucheck_atol_acc(&tol, 3.0) == 1e-4 * 2.0 * 3.0);
	ck_assert(gpucheck_close(&tol, 1.0 + 1.9e-4, 1.0));
	ck_assert(!gpucheck_close(&tol, 1.0 + 2.1e-4, 1.0));
	ck_assert(gpucheck_close(&tol, -INFINITY, -INFINITY));
	ck_assert(!gpucheck_close(&tol, NAN, NAN));
	gpucheck_tol_set(&tol, DTYPE_BF16, 1e-5, 1.0);
	ck_assert(tol.rtol == 1e-4 + 2e-5 && tol.rtol_acc == 0x1p-7 + 2e-5);
	ck_assert(gpucheck_tensor_delta(128, 16.0) ==
	    (9.0 * 128 / 8 + 8) * 0x1p-24 * 16.0 + 0x1p-20);

	/* delta from the kernel's arithmetic: 0 in the simulator's order. */
	problem_spec_init(&spec);
	spec.tq = spec.tk = 8;
	spec.d = spec.dv = 64;
	spec.dtype = DTYPE_FP16;
	spec.input = INPUTS_NORMAL;
	build(&spec, &p);
	gpucheck_tolerance(kernel("teaching"), &p, &tol);
	ck_assert(tol.delta == 0.0 && tol.vmax > 0.0);
	ck_assert(tol.rtol_acc == 0x1p-10);
	gpucheck_tolerance(kernel("fast"), &p, &tol);
	ck_assert(tol.delta > 0x1p-20 && tol.rtol == 1e-4 + 2.0 * tol.delta);
	problem_free(&p);
}
END_TEST

/*
 * flashstep gpu's --check rule (cmd/gpucmd.h): auto is full up to
 * GPUCMD_CHECK_FULL_MAX multiply-adds of the reference and sampled past
 * it; the sample is evenly spaced rows from the first to the last.
 */
START_TEST(test_check_rule)
{
	struct problem p[2];
	int rows[GPUCMD_CHECK_ROWS], n, i;

	memset(p, 0, sizeof p);
	/* 4096 x 4096 x (32 + 32) = 2^30 exactly */
	p[0].tq = p[0].tk = 4096;
	p[0].d = p[0].dv = 32;
	p[0].heads = 1;
	ck_assert(gpucmd_check_work(p, 1) == GPUCMD_CHECK_FULL_MAX);
	ck_assert(gpucmd_check_resolve(GPUCMD_CHECK_AUTO, p, 1) ==
	    GPUCMD_CHECK_FULL);
	p[1] = p[0];
	ck_assert(gpucmd_check_resolve(GPUCMD_CHECK_AUTO, p, 2) ==
	    GPUCMD_CHECK_SAMPLED);
	p[0].heads = 2;
	ck_assert(gpucmd_check_resolve(GPUCMD_CHECK_AUTO, p, 1) ==
	    GPUCMD_CHECK_SAMPLED);
	ck_assert(gpucmd_check_resolve(GPUCMD_CHECK_FULL, p, 2) ==
	    GPUCMD_CHECK_FULL);
	ck_assert(gpucmd_check_resolve(GPUCMD_CHECK_NONE, p, 2) ==
	    GPUCMD_CHECK_NONE);
	/* a scores problem: P V only */
	p[0].heads = 1;
	p[0].scores_mode = 1;
	ck_assert(gpucmd_check_work(p, 1) == 4096LL * 4096 * 32);
	/* T = 4096, d = 128, 16 heads, batch 8 is sampled */
	p[0].scores_mode = 0;
	p[0].d = p[0].dv = 128;
	p[0].heads = 16;
	ck_assert(gpucmd_check_work(p, 1) * 8 > GPUCMD_CHECK_FULL_MAX);

	n = gpucmd_check_rows(4096, rows);
	ck_assert_int_eq(n, GPUCMD_CHECK_ROWS);
	ck_assert_int_eq(rows[0], 0);
	ck_assert_int_eq(rows[n - 1], 4095);
	for (i = 1; i < n; i++)
		ck_assert(rows[i] > rows[i - 1] && rows[i] - rows[i - 1] <=
		    4095 / (n - 1) + 1);
	n = gpucmd_check_rows(GPUCMD_CHECK_ROWS + 1, rows);
	ck_assert_int_eq(rows[n - 1], GPUCMD_CHECK_ROWS);
	for (i = 1; i < n; i++)
		ck_assert(rows[i] > rows[i - 1]);
	n = gpucmd_check_rows(5, rows);
	ck_assert_int_eq(n, 5);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(rows[i], i);
	ck_assert_int_eq(gpucmd_check_rows(1, rows), 1);
	ck_assert_int_eq(rows[0], 0);
}
END_TEST

/* The GPU tests' skip rule. */
START_TEST(test_may_skip)
{
	unsetenv("FLASHSTEP_REQUIRE_GPU");
	ck_assert(!gpu_required());
	ck_assert(gpu_may_skip(GPU_NOT_BUILT));
	ck_assert(gpu_may_skip(GPU_NO_DRIVER));
	ck_assert(gpu_may_skip(GPU_NO_DEVICE));
	ck_assert(!gpu_may_skip(GPU_BAD_DRIVER));
	setenv("FLASHSTEP_REQUIRE_GPU", "0", 1);
	ck_assert(!gpu_required());
	ck_assert(gpu_may_skip(GPU_NO_DEVICE));
	setenv("FLASHSTEP_REQUIRE_GPU", "1", 1);
	ck_assert(gpu_required());
	ck_assert(!gpu_may_skip(GPU_NOT_BUILT));
	ck_assert(!gpu_may_skip(GPU_NO_DRIVER));
	ck_assert(!gpu_may_skip(GPU_NO_DEVICE));
	unsetenv("FLASHSTEP_REQUIRE_GPU");
}
END_TEST

/* gpu_run refuses before it needs a device: bad arguments first. */
START_TEST(test_run_refusals)
{
	struct problem_spec spec;
	struct problem p;
	struct gpu_result res;
	struct tiling t = { 8, 8, ORDER_FA2 };
	struct online_rule rule = { CONV_UNNORMALIZED, BUG_NONE, MASK_BUG_NONE };
	char err[512];

	problem_spec_init(&spec);
	spec.tq = spec.tk = 16;
	spec.d = spec.dv = 8;
	spec.input = INPUTS_NORMAL;
	build(&spec, &p);
	ck_assert_int_eq(gpu_run(kernel("teaching"), &p, 0, &t, &rule, 0, 0,
	    &res, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "one launch takes 1 to 65535") != NULL, "%s",
	    err);
	ck_assert_int_eq(gpu_run(kernel("fast"), &p, 1, &t, &rule, 0, 0, &res,
	    err, sizeof err), -1);
	ck_assert_msg(strstr(err, "kernel fast does not take") != NULL, "%s",
	    err);
	ck_assert(res.o == NULL);
	problem_free(&p);
}
END_TEST

/* How bench --gpu and the ladder hold one O against another: the largest
 * difference over the largest |reference|, or the difference itself
 * against an all-zero reference. */
START_TEST(test_result_diff)
{
	float o[4] = { 1.0f, -2.0f, 3.5f, 0.0f }, ref[4] = { 1.0f, -1.0f, 4.0f,
	    0.25f }, zero[4] = { 0 };
	struct gpu_result r, want;

	memset(&r, 0, sizeof r);
	memset(&want, 0, sizeof want);
	r.o = o;
	want.o = ref;
	ck_assert(fabs(gpu_result_diff(&r, &want, 4) - 1.0 / 4.0) < 1e-12);
	ck_assert(fabs(gpu_result_diff(&r, &want, 1)) == 0.0);
	want.o = zero;
	ck_assert(fabs(gpu_result_diff(&r, &want, 4) - 3.5) < 1e-12);
}
END_TEST

/*
 * The decoding kernel's cut: the key ranges that fill the SMs (H200: 132
 * SMs, one or two blocks each), where the default takes the ring, the
 * ring's ranges (none longer than DECODE_RING_RANGE, never fewer than
 * picked), rows a block and chunks, and the workspace for them.
 */
START_TEST(test_decode_ranges)
{
	static const int pick[][8] = {	/* B, H, G, Tq, Tk, SMs, a SM: ranges */
		{ 8, 32, 8, 1, 131072, 132, 1, 2 },
		{ 1, 32, 8, 1, 32768, 132, 1, 16 },
		{ 1, 32, 32, 1, 4096, 132, 2, 8 },
		{ 8, 32, 32, 1, 4096, 132, 2, 1 },	/* 256 groups, 264 slots */
		{ 9, 32, 32, 1, 1000, 132, 2, 1 },	/* the groups fill it */
		{ 1, 1, 1, 1, 300, 132, 1, 3 },		/* 128 keys a range at least */
		{ 1, 1, 1, 1, 1 << 20, 1000, 1, DECODE_MAX_SPLITS },
		{ 1, 8192, 8192, 1, 100000, 100000, 1, 1 },	/* past the tickets */
		{ 1, 32, 8, 16, 65536, 132, 1, 2 },	/* 64 rows: 8 chunks */
	};
	static const int ring[][3] = {	/* Tk, ranges picked: the ring's */
		{ 131072, 2, 8 }, { 131072, 1, 8 }, { 32768, 1, 2 },
		{ 40000, 1, 3 }, { 16384, 1, 1 }, { 16385, 1, 2 },
		{ 131072, 16, 16 }, { 300000, 4, 19 }, { 1 << 30, 1, 256 },
	};
	const int *c;
	int i, got;

	for (i = 0; i < (int)(sizeof pick / sizeof pick[0]); i++) {
		c = pick[i];
		got = decode_pick_splits(c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
		ck_assert_msg(got == c[7], "B=%d H=%d G=%d Tq=%d Tk=%d on %d SMs x "
		    "%d: %d ranges, not %d", c[0], c[1], c[2], c[3], c[4], c[5],
		    c[6], got, c[7]);
	}
	/* one row from 32768 keys, packed rows (2 to 8) from 16384 */
	ck_assert(!decode_takes_ring(1, 32767) && decode_takes_ring(1, 32768));
	ck_assert(!decode_takes_ring(2, 16383) && decode_takes_ring(2, 16384));
	ck_assert(!decode_takes_ring(8, 16383) && decode_takes_ring(8, 16384));
	ck_assert(!decode_takes_ring(4, 2048) && !decode_takes_ring(1, 16384));
	for (i = 0; i < (int)(sizeof ring / sizeof ring[0]); i++) {
		got = decode_ring_splits(ring[i][0], ring[i][1]);
		ck_assert_msg(got == ring[i][2], "Tk %d, %d ranges picked: the ring "
		    "ran %d, not %d", ring[i][0], ring[i][1], got, ring[i][2]);
	}
	/* A range's keys: ceil(Tk / ranges), a multiple of 16 when paged or
	 * 16 or more (so a paged run cuts its keys as the contiguous one);
	 * the ranges still cover Tk, none empty, and the ring's stay within
	 * DECODE_RING_RANGE. */
	{
		static const int keys[][4] = {	/* Tk, ranges, paged: keys */
			{ 7, 3, 0, 3 }, { 7, 3, 1, 16 }, { 300, 12, 0, 32 },
			{ 1000, 8, 0, 128 }, { 1000, 8, 1, 128 }, { 5000, 7, 0, 720 },
			{ 70000, 256, 0, 288 }, { 131072, 8, 1, 16384 },
			{ 33000, 1, 0, 33008 }, { 1, 1, 1, 16 }, { 15, 1, 0, 15 },
		};
		int tk, s, p, k;

		for (i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++) {
			got = decode_range_keys(keys[i][0], keys[i][1], keys[i][2]);
			ck_assert_msg(got == keys[i][3], "Tk %d in %d ranges%s: %d keys "
			    "a range, not %d", keys[i][0], keys[i][1], keys[i][2] ?
			    " paged" : "", got, keys[i][3]);
		}
		for (tk = 1; tk < 70000; tk += 997)
			for (s = 1; s <= DECODE_MAX_SPLITS; s += 17)
				for (p = 0; p < 2; p++) {
					k = decode_range_keys(tk, s, p);
					ck_assert((long)k * s >= tk);
					ck_assert(((tk + k - 1) / k - 1) * k < tk);
					if (p || k >= DECODE_PAGE_MULTIPLE)
						ck_assert(k % DECODE_PAGE_MULTIPLE == 0);
					if (decode_range_keys(tk, s, 0) >= DECODE_PAGE_MULTIPLE)
						ck_assert(k == decode_range_keys(tk, s, !p));
				}
		for (tk = 16385; tk < 1 << 22; tk = tk * 3 / 2)
			ck_assert(decode_range_keys(tk, decode_ring_splits(tk, 1), 0) <=
			    DECODE_RING_RANGE);
	}
	ck_assert_int_eq(decode_block_rows(1), 1);
	ck_assert_int_eq(decode_block_rows(3), 4);
	ck_assert_int_eq(decode_block_rows(64), DECODE_MAX_ROWS);
	ck_assert_int_eq(decode_chunks(32, 8, 1), 1);
	ck_assert_int_eq(decode_chunks(32, 8, 3), 2);	/* 12 rows: 8 + 4 */
	ck_assert_int_eq(decode_chunks(32, 8, 16), 8);
	/* counters, then (m, l, u) of every row a block holds in every range
	 * of every group; 0 ranges: the most a call may pick (here 256) */
	ck_assert_uint_eq(decode_workspace_bytes(8, 32, 8, 1, 131072, 8),
	    DECODE_TICKETS * sizeof(unsigned) + (size_t)64 * 8 * 4 *
	    (DECODE_D + 2) * sizeof(float));
	ck_assert_uint_eq(decode_workspace_bytes(2, 8, 2, 3, 40000, 0),
	    DECODE_TICKETS * sizeof(unsigned) + (size_t)2 * 2 * 2 *
	    DECODE_MAX_SPLITS * 8 * (DECODE_D + 2) * sizeof(float));
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("gpu_table");
	TCase *tc = tcase_create("kernel table");

	tcase_add_test(tc, test_find);
	tcase_add_test(tc, test_every_entry);
	tcase_add_test(tc, test_manpage);
	tcase_add_test(tc, test_mask_refusals);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_tilings);
	tcase_add_test(tc, test_wgmma_tilings);
	tcase_add_test(tc, test_absent);
	tcase_add_test(tc, test_describe);
	tcase_add_test(tc, test_decode_refusals);
	tcase_add_test(tc, test_split_refusals);
	tcase_add_test(tc, test_split_depth);
	tcase_add_test(tc, test_rule);
	tcase_add_test(tc, test_check_rule);
	tcase_add_test(tc, test_may_skip);
	tcase_add_test(tc, test_run_refusals);
	tcase_add_test(tc, test_result_diff);
	tcase_add_test(tc, test_decode_ranges);
	tcase_add_test(tc, test_no_fp8_kernel);
	tcase_add_test(tc, test_no_varlen_kernel);
	tcase_add_test(tc, test_varlen_pairs_refused);
	tcase_add_test(tc, test_no_paged_kernel);
	suite_add_tcase(s, tc);
	return s;
}
