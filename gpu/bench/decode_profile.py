#!/usr/bin/env python3
"""decode_profile.py - one call of each contender on one decode shape, for a profiler.

Nsight Compute replays every kernel it is told to profile, so what it
needs is a program that launches each kernel once on real sizes, and
nothing more: this one runs the decode kernel (libdecode.so, as for
decode_vs_torch.py) once, or with the variants' library of the
repository's dev/cuda/decode/ once in each variant given, then torch's
flash backend, on one shape.  For example, the L2 requests of the
tensor cores from registers (7) against the ring (9), as
dev/notes/DECODE_NOTES.md counts them for cp.async .cg against .ca:

  ncu --clock-control none --kernel-name regex:"decode_|flash_fwd" \\
      --metrics gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,\\
lts__t_sectors_srcunit_tex_op_read.sum \\
      python3 gpu/bench/decode_profile.py \\
          --lib dev/cuda/decode/libdecode_variants.so --variants 7,9

No timing and no check here: decode_vs_torch.py does both.
"""
import argparse
import sys

import torch
from torch.nn.attention import SDPBackend

from benchlib import DTYPES, Decode, sdpa


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="./libdecode.so")
    ap.add_argument("--variants", default="0",
                    help="decode variants, one call each (0 the product's; "
                    "the others need the variants' library)")
    ap.add_argument("--shape", default="8,32,8,131072",
                    help="batch, query heads, K/V heads, Tk (d = 128, Tq = 1)")
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "bf16"])
    args = ap.parse_args()

    b, h, g, tk = (int(x) for x in args.shape.split(","))
    dt = DTYPES[args.dtype]
    q = torch.randn(b, h, 1, 128, device="cuda", dtype=dt)
    k = torch.randn(b, g, tk, 128, device="cuda", dtype=dt)
    v = torch.randn(b, g, tk, 128, device="cuda", dtype=dt)
    o = torch.empty_like(q)
    lse = torch.empty(b, h, 1, device="cuda")
    dec = Decode(args.lib)
    for variant in (int(x) for x in args.variants.split(",")):
        dec(q, k, v, o, lse, variant=variant)
    sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, gqa=g != h)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
