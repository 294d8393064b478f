#!/usr/bin/env python3
"""vs_torch.py - the fast kernel against torch's SDPA, side by side.

Runs our kernel (libfast.so, built from gpu/fast.cu, called through
ctypes with torch tensors' device pointers) and torch's
scaled_dot_product_attention with the flash (FA2) and cuDNN backends on the
same inputs in the same process, checks every output against a float32
torch reference, and prints one table with the ratios.

  nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -shared \\
      -Xcompiler -fPIC -I src -I gpu gpu/fast.cu -o libfast.so
  python3 gpu/bench/vs_torch.py --lib ./libfast.so [--variants all]

With --wgmma-lib (libwgmma.so, built from gpu/wgmma.cu for
sm_90a) the Hopper kernel runs too, checked the same way, as its own
columns (--wgmma-variants picks its variants as --variants does ours):

  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -shared \\
      -Xcompiler -fPIC -I src -I gpu gpu/wgmma.cu -o libwgmma.so

Shapes (those of flashstep bench --gpu): B*T = 32768, H = 16, T in {1024, 4096, 16384},
d in {64, 128}, fp16 and bf16, causal and not.  TFLOP/s counts
4*B*H*Tq*Tk*d flops, halved for causal.  Times are CUDA-event medians of
--reps runs after warm-up; each tensor is 64-128 MB, over the 60 MB L2, so
no input rotation is needed.  Output errors are ||O - ref|| / ||ref||
over the whole tensor, the reference in float32 (TF32 off) on the same
16-bit inputs; lse is checked as max |lse - ref|.
"""
import argparse
import ctypes
import sys

import torch
from torch.nn.attention import SDPBackend

from benchlib import (LSE_TOL, TOL, DTYPES, dtype_code, reference, rel_err,
                      lse_err, sdpa, time_each, torch_setup)


class Fast:
    """ctypes door to fast_attention_fwd (gpu/fast.h)."""

    class Config(ctypes.Structure):
        _fields_ = [("d", ctypes.c_int), ("br", ctypes.c_int),
                    ("bc", ctypes.c_int), ("warps", ctypes.c_int),
                    ("q_in_regs", ctypes.c_int)]

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        f = self.lib.fast_attention_fwd
        f.restype = ctypes.c_int
        f.argtypes = ([ctypes.c_void_p] * 4 + [ctypes.c_void_p] +
                      [ctypes.c_int] * 7 + [ctypes.c_float, ctypes.c_int,
                                            ctypes.c_void_p, ctypes.c_char_p,
                                            ctypes.c_size_t])
        self.lib.fast_attention_variant.restype = ctypes.c_int
        self.lib.fast_attention_variant.argtypes = [
            ctypes.c_int, ctypes.c_int, ctypes.POINTER(Fast.Config)]
        self.err = ctypes.create_string_buffer(256)

    @staticmethod
    def name(c):
        return "%dx%d/%dw%s" % (c.br, c.bc, c.warps,
                                "/qreg" if c.q_in_regs else "")

    def variants(self, d):
        out, i = [], 0
        c = Fast.Config()
        while self.lib.fast_attention_variant(d, i, ctypes.byref(c)) == 0:
            out.append((i, Fast.name(c)))
            i += 1
        return out

    def default(self, d):
        c = Fast.Config()
        self.lib.fast_attention_variant(d, -1, ctypes.byref(c))
        return Fast.name(c)

    def __call__(self, q, k, v, o, lse, causal, variant=-1):
        b, h, tq, d = q.shape
        tk = k.shape[2]
        dt = dtype_code(q.dtype)
        rc = self.lib.fast_attention_fwd(
            q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
            lse.data_ptr(), b, h, tq, tk, d, dt, int(causal), 0.0, variant,
            torch.cuda.current_stream().cuda_stream, self.err,
            len(self.err))
        if rc != 0:
            raise RuntimeError(self.err.value.decode())


class Wgmma:
    """ctypes door to wgmma_attention_fwd_variant (gpu/wgmma.h)."""

    class Config(ctypes.Structure):
        _fields_ = [("d", ctypes.c_int), ("br", ctypes.c_int),
                    ("bc", ctypes.c_int), ("stages", ctypes.c_int),
                    ("consumers", ctypes.c_int), ("pingpong", ctypes.c_int),
                    ("overlap", ctypes.c_int), ("persistent", ctypes.c_int)]

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        f = self.lib.wgmma_attention_fwd_variant
        f.restype = ctypes.c_int
        f.argtypes = ([ctypes.c_void_p] * 4 + [ctypes.c_void_p] +
                      [ctypes.c_int] * 7 + [ctypes.c_float, ctypes.c_int,
                                            ctypes.c_void_p, ctypes.c_char_p,
                                            ctypes.c_size_t])
        self.lib.wgmma_attention_variant.restype = ctypes.c_int
        self.lib.wgmma_attention_variant.argtypes = [
            ctypes.c_int, ctypes.c_int, ctypes.POINTER(Wgmma.Config)]
        self.err = ctypes.create_string_buffer(256)

    @staticmethod
    def name(c):
        return "%dx%d/s%d/%s%s%s" % (c.br, c.bc, c.stages,
                                     "pp" if c.pingpong else "--",
                                     ["--", "ov", "ov2"][c.overlap],
                                     "/persist" if c.persistent else "")

    def variants(self, d):
        out, i = [], 0
        c = Wgmma.Config()
        while self.lib.wgmma_attention_variant(d, i, ctypes.byref(c)) == 0:
            out.append((i, Wgmma.name(c)))
            i += 1
        return out

    def default(self, d):
        c = Wgmma.Config()
        self.lib.wgmma_attention_variant(d, -1, ctypes.byref(c))
        return Wgmma.name(c)

    def __call__(self, q, k, v, o, lse, causal, variant=-1):
        b, h, tq, d = q.shape
        tk = k.shape[2]
        dt = dtype_code(q.dtype)
        rc = self.lib.wgmma_attention_fwd_variant(
            q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
            lse.data_ptr(), b, h, tq, tk, d, dt, int(causal), 0.0, variant,
            torch.cuda.current_stream().cuda_stream, self.err,
            len(self.err))
        if rc != 0:
            raise RuntimeError(self.err.value.decode())


def pick(kernel, sel):
    """{d: [(index, name)]} for "default", "all" or "0,2"."""
    if sel == "default":
        return {d: [(-1, kernel.default(d))] for d in (64, 128)}
    allv = {d: kernel.variants(d) for d in (64, 128)}
    if sel == "all":
        return allv
    idx = [int(x) for x in sel.split(",")]
    return {d: [x for x in allv[d] if x[0] in idx] for d in allv}


def ragged(fast, variants, label="fast"):
    """Small shapes with Tq != Tk, tails, causal rows that see nothing."""
    shapes = [(1, 1, 1, 1), (1, 2, 17, 33), (2, 3, 100, 37), (1, 2, 129, 257),
              (1, 1, 300, 300), (2, 1, 70, 300), (1, 2, 255, 255),
              (1, 1, 200, 130), (1, 4, 1000, 999), (1, 1, 77, 4097),
              (1, 2, 1000, 63), (2, 2, 4097, 300)]
    worst, fails = 0.0, 0
    for dt in (torch.float16, torch.bfloat16):
        for d in (64, 128):
            for (b, h, tq, tk) in shapes:
                for causal in (False, True):
                    q = torch.randn(b, h, tq, d, dtype=dt, device="cuda")
                    k = torch.randn(b, h, tk, d, dtype=dt, device="cuda")
                    v = torch.randn(b, h, tk, d, dtype=dt, device="cuda")
                    ro, rl = reference(q, k, v, causal)
                    for vi, name in variants[d]:
                        o = torch.full_like(q, float("nan"))
                        lse = torch.full((b, h, tq), float("nan"),
                                         device="cuda")
                        fast(q, k, v, o, lse, causal, vi)
                        torch.cuda.synchronize()
                        e, le = rel_err(o, ro), lse_err(lse, rl)
                        ok = e <= TOL[dt] and le <= LSE_TOL
                        worst = max(worst, e / TOL[dt])
                        if not ok:
                            fails += 1
                            print("RAGGED FAIL %s %s d%d B%d H%d Tq%d Tk%d "
                                  "%s v%d %s: rel %.2e lse %.2e" %
                                  (label, str(dt)[6:], d, b, h, tq, tk,
                                   "causal" if causal else "full", vi, name,
                                   e, le))
    print("ragged shapes (%s): %d failures, worst rel err %.2f of tolerance" %
          (label, fails, worst))
    return fails


def measure(kernel, vlist, label, q, k, v, ro, rl, causal, dt, reps, tf,
            vrows, key):
    """Every variant in vlist: checked against the reference, timed.
    Returns (fails, best (ms, name, rel, lse, ok)); vrows gets a row each."""
    b, h, t, d = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((b, h, t), device="cuda")
    best, fails = None, 0
    for vi, name in vlist:
        o.fill_(float("nan"))
        lse.fill_(float("nan"))
        kernel(q, k, v, o, lse, causal, vi)
        torch.cuda.synchronize()
        e, le = rel_err(o, ro), lse_err(lse, rl)
        ms = time_each(lambda: kernel(q, k, v, o, lse, causal, vi), reps)
        ok = e <= TOL[dt] and le <= LSE_TOL
        fails += not ok
        vrows.append(key + (label, name, ms, tf(ms), e, le, ok))
        if best is None or ms < best[0]:
            best = (ms, name, e, le, ok)
    return fails, best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="./libfast.so")
    ap.add_argument("--variants", default="default",
                    help="default, all, or indices like 0,2")
    ap.add_argument("--wgmma-lib", default=None,
                    help="libwgmma.so: the Hopper kernel as more columns")
    ap.add_argument("--wgmma-variants", default="default",
                    help="default, all, or indices like 0,2")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--dtypes", default="fp16,bf16")
    ap.add_argument("--T", default="1024,4096,16384")
    ap.add_argument("--d", default="64,128")
    ap.add_argument("--no-ragged", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()

    device = torch_setup()
    fast = Fast(args.lib)
    variants = pick(fast, args.variants)
    wg = Wgmma(args.wgmma_lib) if args.wgmma_lib else None
    wvariants = pick(wg, args.wgmma_variants) if wg else None
    print(device)
    for d in (64, 128):
        print("d=%d fast variants: %s" % (d, ", ".join(
            "v%d=%s" % x for x in variants[d])))
        if wg:
            print("d=%d wgmma variants: %s" % (d, ", ".join(
                "v%d=%s" % x for x in wvariants[d])))
    sys.stdout.flush()

    fails = 0
    if not args.no_ragged:
        fails += ragged(fast, variants, "fast")
        if wg:
            fails += ragged(wg, wvariants, "wgmma")
    dts = DTYPES
    rows, vrows = [], []
    for dname in args.dtypes.split(","):
        dt = dts[dname]
        for d in [int(x) for x in args.d.split(",")]:
            for t in [int(x) for x in args.T.split(",")]:
                for causal in (False, True):
                    b, h = 32768 // t, 16
                    flops = 4.0 * b * h * t * t * d / (2 if causal else 1)
                    tf = (lambda f: lambda ms: f / (ms * 1e-3) / 1e12)(flops)
                    q = torch.randn(b, h, t, d, dtype=dt, device="cuda")
                    k = torch.randn(b, h, t, d, dtype=dt, device="cuda")
                    v = torch.randn(b, h, t, d, dtype=dt, device="cuda")
                    ro, rl = reference(q, k, v, causal)
                    key = (dname, d, t, causal)
                    f1, best = measure(fast, variants[d], "fast", q, k, v,
                                       ro, rl, causal, dt, args.reps, tf,
                                       vrows, key)
                    fails += f1
                    wbest = None
                    if wg:
                        f2, wbest = measure(wg, wvariants[d], "wgmma", q, k,
                                            v, ro, rl, causal, dt, args.reps,
                                            tf, vrows, key)
                        fails += f2
                    fa = cu = None
                    fe = float("nan")
                    if not args.no_torch:
                        for bk in (SDPBackend.FLASH_ATTENTION,
                                   SDPBackend.CUDNN_ATTENTION):
                            try:
                                out = sdpa(bk, q, k, v, causal)
                                err = rel_err(out, ro)
                                ms = time_each(lambda: sdpa(bk, q, k, v,
                                                            causal),
                                               args.reps)
                            except RuntimeError as x:
                                print("%s failed: %s" % (bk, str(x)[:100]))
                                continue
                            if bk == SDPBackend.FLASH_ATTENTION:
                                fa, fe = ms, err
                            else:
                                cu = ms
                            del out
                    rows.append((dname, d, t, causal, best, wbest, fa, fe,
                                 cu, tf))
                    print("%s d%d T%d %s: fast %.3f ms (%s) rel %.1e lse "
                          "%.1e%s | wgmma %s | FA2 %s | cuDNN %s" %
                          (dname, d, t, "causal" if causal else "full",
                           best[0], best[1], best[2], best[3],
                           "" if best[4] else " FAIL",
                           "%.3f ms (%s) rel %.1e lse %.1e%s" %
                           (wbest[0], wbest[1], wbest[2], wbest[3],
                            "" if wbest[4] else " FAIL") if wbest else "-",
                           "%.3f ms" % fa if fa else "-",
                           "%.3f ms" % cu if cu else "-"))
                    sys.stdout.flush()
                    del q, k, v, ro, rl
                    torch.cuda.empty_cache()

    if len(vrows) > len(rows) * (2 if wg else 1):
        print("\nvariants (TFLOP/s):")
        print("| dtype | d | T | causal | kernel | variant | ms | TFLOP/s "
              "| rel err |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in vrows:
            print("| %s | %d | %d | %s | %s | %s | %.3f | %.1f | %.1e%s |" %
                  (r[0], r[1], r[2], "yes" if r[3] else "no", r[4], r[5],
                   r[6], r[7], r[8], "" if r[10] else " FAIL"))

    def ratio(a, b):
        return "%.2f" % (a / b) if a and b else "-"

    print("\n| dtype | d | T | causal | fast TFLOP/s | wgmma ms | wgmma "
          "TFLOP/s | FA2 TFLOP/s | cuDNN TFLOP/s | wgmma/FA2 | wgmma/cuDNN "
          "| fast/FA2 | rel err fast | rel err wgmma | rel err FA2 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (dname, d, t, causal, best, wbest, fa, fe, cu, tf) in rows:
        ours = tf(best[0])
        wt = tf(wbest[0]) if wbest else None
        fat = tf(fa) if fa else None
        cut = tf(cu) if cu else None
        print("| %s | %d | %d | %s | %.1f | %s | %s | %s | %s | %s | %s | %s "
              "| %.1e%s | %s | %.1e |" %
              (dname, d, t, "yes" if causal else "no", ours,
               "%.3f" % wbest[0] if wbest else "-",
               "%.1f" % wt if wt else "-",
               "%.1f" % fat if fat else "-",
               "%.1f" % cut if cut else "-",
               ratio(wt, fat), ratio(wt, cut), ratio(ours, fat),
               best[2], "" if best[4] else " FAIL",
               ("%.1e%s" % (wbest[2], "" if wbest[4] else " FAIL"))
               if wbest else "-", fe))
    print("\ncorrectness: %s" % ("all passed" if fails == 0 else
                                 "%d FAILED" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
