/*
 * variants.cu - the fast kernel (gpu/fast.cu) with every tiling kept
 * for measuring, for the lab: gpu/fast.cu itself, built with this table
 * in place of the product's (which holds only the variants a user can
 * pick: one per Br x Bc).  Added here: d = 128, 128 x 64 with 8 warps of
 * one m16 tile each and Q in registers (MT = 1), which the 4-warp
 * 128 x 64 shadows in the product (a tiling runs its first variant).
 * Build: see README in this folder.
 */
/* FAST_VARIANT(D, BR, BC, WARPS, Q_IN_REGS, MIN_BLOCKS) */
#define FAST_VARIANTS							\
	FAST_VARIANT(64, 128, 64, 4, false, 1),		/* default */	\
	FAST_VARIANT(64, 128, 128, 4, false, 1),	/* FA2's */	\
	FAST_VARIANT(64, 64, 64, 4, true, 2),				\
	FAST_VARIANT(128, 128, 32, 4, false, 1),	/* default */	\
	FAST_VARIANT(128, 128, 64, 4, false, 1),	/* FA2's */	\
	FAST_VARIANT(128, 128, 64, 8, true, 1),
#include "../../../gpu/fast.cu"
