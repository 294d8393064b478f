#!/usr/bin/env python3
"""decode_profile.py - one call of each contender on one decode shape, for a profiler.

Nsight Compute replays every kernel it is told to profile, so what it
needs is a program that launches each kernel once on real sizes, and
nothing more: this one runs the decode kernel (libdecode.so, as for
decode_vs_torch.py) in each variant given, then torch's flash backend,
on one shape.  For example, the L2 requests of the ring with cp.async
.cg against .ca (gpu/bench/DECODE_NOTES.md, "The session at 6949304"):

  ncu --clock-control none --kernel-name regex:"decode_|flash_fwd" \\
      --metrics gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,\\
lts__t_sectors_srcunit_tex_op_read.sum \\
      python3 gpu/bench/decode_profile.py --lib ./libdecode.so --variants 7,9

No timing and no check here: decode_vs_torch.py does both.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_vs_torch import Decode  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="./libdecode.so")
    ap.add_argument("--variants", default="0",
                    help="decode variants, one call each (decode.h)")
    ap.add_argument("--shape", default="8,32,8,131072",
                    help="batch, query heads, K/V heads, Tk (d = 128, Tq = 1)")
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "bf16"])
    args = ap.parse_args()

    b, h, g, tk = (int(x) for x in args.shape.split(","))
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    q = torch.randn(b, h, 1, 128, device="cuda", dtype=dt)
    k = torch.randn(b, g, tk, 128, device="cuda", dtype=dt)
    v = torch.randn(b, g, tk, 128, device="cuda", dtype=dt)
    o = torch.empty_like(q)
    lse = torch.empty(b, h, 1, device="cuda")
    dec = Decode(args.lib)
    for variant in (int(x) for x in args.variants.split(",")):
        dec(q, k, v, o, lse, variant=variant)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        F.scaled_dot_product_attention(q, k, v, enable_gqa=g != h)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
