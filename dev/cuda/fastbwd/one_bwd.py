#!/usr/bin/env python3
"""one_bwd.py - two backward passes of one shape, for a profiler to pick
the second: torch's flash backward (FlashAttention 2) or ours
(libfastbwd.so), fp16, B = 32768 / T, H = 16, no mask unless --causal.

  ncu --kernel-name regex:'flash_bwd_dq_dk_dv|fast_bwd_kernel_p' \\
      --launch-skip 1 --launch-count 1 --set full -o rep \\
      python3 dev/cuda/fastbwd/one_bwd.py --which flash|ours [--lib L]
"""
import argparse
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "gpu", "bench"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--which", choices=["flash", "ours"], required=True)
    ap.add_argument("--lib", default="./libfastbwd.so")
    ap.add_argument("--t", type=int, default=4096)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--causal", action="store_true")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from bwd_vs_torch import FastBwd
    b, h = max(1, 32768 // a.t), 16
    q, k, v, do = (torch.randn(b, h, a.t, a.d, device="cuda",
                               dtype=torch.float16) for _ in range(4))
    xs = [x.clone().requires_grad_() for x in (q, k, v)]
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        o, lse = torch.ops.aten._scaled_dot_product_flash_attention(
            *xs, 0.0, a.causal, False)[:2]
    if a.which == "flash":
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            o2 = F.scaled_dot_product_attention(*xs, is_causal=a.causal)
        for _ in range(2):
            torch.autograd.grad(o2, xs, do, retain_graph=True)
    else:
        kern = FastBwd(a.lib)
        out = [torch.empty_like(x) for x in (q, k, v)]
        o, lse = o.detach().contiguous(), lse.detach().float().contiguous()
        for _ in range(2):
            kern(torch, q, k, v, o, lse, do, *out, a.causal)
    torch.cuda.synchronize()
    print("%s: two backward passes, T = %d, d = %d%s" % (
        a.which, a.t, a.d, ", causal" if a.causal else ""))


if __name__ == "__main__":
    main()
