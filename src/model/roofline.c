/*
 * roofline.c - arithmetic intensity and the roofs (see roofline.h).
 */
#include "config.h"

#include "roofline.h"
#include "problem.h"
#include "schedule.h"
#include "traffic.h"
#include "util.h"

#include <string.h>

const struct roofline_machine roofline_h200 = {
	.name = "NVIDIA H200 SXM",
	.tensor = 989e12,
	.fp32 = 67e12,
	.hbm = 4.8e12,
	.copy = 4.3e12,
};

double
roofline_ridge(double peak, double bw)
{
	return bw > 0 ? peak / bw : 0;
}

double
roofline_roof(double peak, double bw, double intensity)
{
	double mem = intensity * bw;

	return mem < peak ? mem : peak;
}

int
roofline_compute_bound(double peak, double bw, double intensity)
{
	return intensity >= roofline_ridge(peak, bw);
}

/* traffic.c over the tiling br x bc: the forward's or the backward's
 * totals for one batch entry. */
static int
roofline_tiles(const struct problem *p, enum roofline_pass pass, int br,
    int bc, int pack, struct traffic *out, char *err, size_t errlen)
{
	struct tiling t = { br, bc, pass == ROOFLINE_TILED_BWD ? ORDER_FA1 : ORDER_FA2 };
	struct split_plan sp = { 1, MERGE_MLU, pack };
	struct schedule s;
	struct traffic_table tt;
	int rc;

	if (schedule_init_split(&s, p, &t, &sp, err, errlen) != 0)
		return -1;
	rc = pass == ROOFLINE_TILED_BWD ?
	    traffic_backward_init(&tt, p, &s, err, errlen) :
	    traffic_init(&tt, p, &s, err, errlen);
	if (rc == 0) {
		*out = tt.total;
		traffic_free(&tt);
	}
	schedule_free(&s);
	return rc;
}

int
roofline_count(const struct roofline_shape *s, struct roofline_count *out,
    char *err, size_t errlen)
{
	struct problem p;
	struct traffic tile, once;
	int g = s->kv_heads > 0 ? s->kv_heads : s->heads;
	uint64_t b = (uint64_t)s->batch, per;

	memset(out, 0, sizeof *out);
	if (s->batch < 1 || s->heads < 1 || g < 1 || s->heads % g != 0 ||
	    s->tq < 1 || s->tk < 1 || s->d < 1)
		return util_error(err, errlen, "roofline: bad shape (batch %d, "
		    "heads %d on %d, %d x %d, d = %d)", s->batch, s->heads, g,
		    s->tq, s->tk, s->d);
	memset(&p, 0, sizeof p);
	p.tq = s->tq;
	p.tk = s->tk;
	p.d = p.dv = s->d;
	p.dtype = s->dtype;
	p.heads = s->heads;
	p.kv_heads = g;
	switch (s->pass) {
	case ROOFLINE_STANDARD:
	case ROOFLINE_STANDARD_BWD:
		/* S and P (B H Tq Tk) are far past L2: every byte is HBM's. */
		if (s->pass == ROOFLINE_STANDARD)
			traffic_standard(&p, &tile);
		else {
			/* traffic_standard_backward counts one head. */
			p.heads = p.kv_heads = 1;
			traffic_standard_backward(&p, &tile);
			b *= (uint64_t)s->heads;
		}
		once = tile;
		break;
	case ROOFLINE_TILED_BWD:
		/* The backward's counters are one head's: heads x batch. */
		if (g != s->heads)
			return util_error(err, errlen, "roofline: the backward "
			    "is counted without grouped heads");
		p.heads = p.kv_heads = 1;
		b *= (uint64_t)s->heads;
		/* fall through */
	case ROOFLINE_TILED:
		if (s->br < 0 || s->bc < 0)
			return util_error(err, errlen, "roofline: bad tiles "
			    "%d x %d", s->br, s->bc);
		/* Each tensor once: one tile holds a whole segment (a head,
		 * or a packed group's rows) and all its keys. */
		per = (uint64_t)s->tq * (uint64_t)(s->heads / g);
		if (roofline_tiles(&p, s->pass, (int)per, s->tk, s->pack_gqa,
		    &once, err, errlen) != 0)
			return -1;
		/* Tiles 0: a kernel whose tiling is not ours to count. */
		tile = once;
		if (s->br > 0 && s->bc > 0 && roofline_tiles(&p, s->pass,
		    s->br, s->bc, s->pack_gqa, &tile, err, errlen) != 0)
			return -1;
		break;
	default:
		return util_error(err, errlen, "roofline: unknown pass");
	}
	out->flops = b * tile.flops;
	out->tile_bytes = b * (tile.hbm_read + tile.hbm_write);
	out->hbm_bytes = b * (once.hbm_read + once.hbm_write);
	return 0;
}
