/*
 * fast_record.cu - the recording build of the mma.sync kernel: fast.cu
 * with FAST_RECORD, so that lane 0 of each warp writes its steps as
 * events (fast_record.h).  Its own object and its own kernels: the timed
 * kernel (fast.o) is never the recording one.  The variants: each d's
 * default, the tiling the timed build runs by default.  Below the
 * kernel: fast_record (fast_record.h), which runs it and the timed one.
 */
#define FAST_RECORD 1
#define FAST_VARIANTS							\
	FAST_VARIANT(64, 128, 64, 4, false, 1),				\
	FAST_VARIANT(128, 128, 32, 4, false, 1),
#include "fast.cu"
#include "rec_fill.cuh"

/* Events a warp writes for a block of tc key tiles: 11 a tile (a wait,
 * two releases, a barrier, two copies, S, softmax, a wait, a barrier,
 * P V) and a few around them. */
static int
fast_rec_cap(int tc)
{
	return 11 * tc + 8;
}

#define FAST_REC_CHECK(x) do {						\
	if ((e = (x)) != cudaSuccess) {					\
		call = #x;						\
		goto launch_fail;					\
	}								\
} while (0)

extern "C" void
fast_record_free(struct fast_rec_run *run)
{
	free(run->ev);
	free(run->n);
	free(run->sm);
	memset(run, 0, sizeof *run);
}

extern "C" int
fast_record(int d, int batch, int heads, int tq, int tk, int causal,
    int blocks, int reps, uint64_t seed, struct fast_rec_run *out,
    char *err, size_t errlen)
{
	const struct fast_variant *fv;
	struct fast_params p;
	uint16_t *q = NULL, *k = NULL, *v = NULL, *o = NULL;
	float *lse = NULL;
	struct wgmma_rec_event *rec = NULL;
	int *rec_n = NULL, *rec_sm = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	const char *call = "";
	cudaError_t e = cudaSuccess;
	size_t nq, nk, slots;
	int bh, grid, cap, r, rc;
	float ms;

	memset(out, 0, sizeof *out);
	(void)cudaGetLastError();	/* nobody's error but ours from here */
	if ((fv = fast_find(d, -1)) == NULL)
		return tc_args_no_variant("fast_record", -1, d, err, errlen);
	if (batch < 1 || heads < 1 || tq < 1 || tk < 1 || blocks < 1 ||
	    reps < 0) {
		snprintf(err, errlen, "fast_record: batch, heads, Tq, Tk and "
		    "the blocks must be at least 1");
		return -1;
	}
	bh = batch * heads;
	nq = (size_t)bh * tq * d;
	nk = (size_t)bh * tk * d;
	FAST_REC_CHECK(cudaMalloc(&q, nq * 2));
	FAST_REC_CHECK(cudaMalloc(&o, nq * 2));
	FAST_REC_CHECK(cudaMalloc(&k, nk * 2));
	FAST_REC_CHECK(cudaMalloc(&v, nk * 2));
	FAST_REC_CHECK(cudaMalloc(&lse, (size_t)bh * tq * sizeof *lse));
	rec_fill<<<256, 256>>>(q, nq, seed);
	rec_fill<<<256, 256>>>(k, nk, seed + 1);
	rec_fill<<<256, 256>>>(v, nk, seed + 2);
	FAST_REC_CHECK(cudaGetLastError());

	memset(&p, 0, sizeof p);
	p.q = q;
	p.k = k;
	p.v = v;
	p.o = o;
	p.lse = lse;
	p.tq = tq;
	p.tk = tk;
	{
		const struct tc_mask mask = tc_mask_causal(causal);

		if (tc_rule_make("fast_record", &mask, tc_args_scale(0.f, d),
		    &p.rule, &p.scale, err, errlen) != 0)
			goto fail;
	}
	p.scale_log2 = p.scale * 1.4426950408889634f;
	p.tc = (tk + fv->cfg.bc - 1) / fv->cfg.bc;
	grid = (tq + fv->cfg.br - 1) / fv->cfg.br * bh;
	cap = fast_rec_cap(p.tc);
	if (blocks > grid)
		blocks = grid;
	/* room for every block: the timing below records them all */
	slots = (size_t)(reps > 0 ? grid : blocks) * fv->cfg.warps;
	FAST_REC_CHECK(cudaMalloc(&rec, slots * cap * sizeof *rec));
	FAST_REC_CHECK(cudaMalloc(&rec_n, slots * sizeof *rec_n));
	FAST_REC_CHECK(cudaMalloc(&rec_sm, (size_t)grid * sizeof *rec_sm));
	FAST_REC_CHECK(cudaMemset(rec_n, 0, slots * sizeof *rec_n));
	p.rec = rec;
	p.rec_n = rec_n;
	p.rec_sm = rec_sm;
	p.rec_blocks = blocks;
	p.rec_cap = cap;
	FAST_REC_CHECK(fv->launch[0][FAST_FP16](&p, batch, heads, 0, &call));
	FAST_REC_CHECK(cudaDeviceSynchronize());

	out->d = d;
	out->br = fv->cfg.br;
	out->bc = fv->cfg.bc;
	out->warps = fv->cfg.warps;
	out->blocks = blocks;
	out->tr = (tq + fv->cfg.br - 1) / fv->cfg.br;
	out->cap = cap;
	out->ev = (struct wgmma_rec_event *)malloc((size_t)blocks *
	    fv->cfg.warps * cap * sizeof *out->ev);
	out->n = (int *)malloc((size_t)blocks * fv->cfg.warps *
	    sizeof *out->n);
	out->sm = (int *)malloc((size_t)blocks * sizeof *out->sm);
	if (out->ev == NULL || out->n == NULL || out->sm == NULL) {
		snprintf(err, errlen, "fast_record: out of memory");
		goto fail;
	}
	FAST_REC_CHECK(cudaMemcpy(out->ev, rec, (size_t)blocks * fv->cfg.warps *
	    cap * sizeof *rec, cudaMemcpyDeviceToHost));
	FAST_REC_CHECK(cudaMemcpy(out->n, rec_n, (size_t)blocks *
	    fv->cfg.warps * sizeof *rec_n, cudaMemcpyDeviceToHost));
	FAST_REC_CHECK(cudaMemcpy(out->sm, rec_sm, (size_t)blocks *
	    sizeof *rec_sm, cudaMemcpyDeviceToHost));

	out->timed_ms = out->record_ms = -1;
	if (reps > 0) {
		/* the same shape, every block recording, against the timed
		 * build (fast.o's fast_attention_fwd, d's default) */
		p.rec_blocks = grid;
		FAST_REC_CHECK(cudaEventCreate(&e0));
		FAST_REC_CHECK(cudaEventCreate(&e1));
		for (int pass = 0; pass < 2; pass++) {
			for (r = -1; r < reps; r++) {
				if (r == 0)
					FAST_REC_CHECK(cudaEventRecord(e0));
				if (pass == 1) {
					FAST_REC_CHECK(fv->launch[0][FAST_FP16](
					    &p, batch, heads, 0, &call));
				} else if (fast_attention_fwd(q, k, v, o, lse,
				    batch, heads, tq, tk, d, FAST_FP16, causal,
				    0.f, -1, NULL, err, errlen) != 0)
					goto fail;
			}
			FAST_REC_CHECK(cudaEventRecord(e1));
			FAST_REC_CHECK(cudaEventSynchronize(e1));
			FAST_REC_CHECK(cudaEventElapsedTime(&ms, e0, e1));
			if (pass == 0)
				out->timed_ms = ms / reps;
			else
				out->record_ms = ms / reps;
		}
	}
	rc = 0;
	goto done;
launch_fail:
	snprintf(err, errlen, "fast_record: %s failed: %s", call,
	    cudaGetErrorString(e));
fail:
	rc = -1;
done:
	/* (destroying a NULL event is an error that the next call's
	 * cudaGetLastError would report) */
	if (e0 != NULL)
		cudaEventDestroy(e0);
	if (e1 != NULL)
		cudaEventDestroy(e1);
	cudaFree(q);
	cudaFree(k);
	cudaFree(v);
	cudaFree(o);
	cudaFree(lse);
	cudaFree(rec);
	cudaFree(rec_n);
	cudaFree(rec_sm);
	if (rc != 0)
		fast_record_free(out);
	return rc;
}
