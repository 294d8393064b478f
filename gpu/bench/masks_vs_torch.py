#!/usr/bin/env python3
"""masks_vs_torch.py - the tensor-core forwards under a sliding window,
softcap and ALiBi, against torch: accuracy by flash-attention's rule,
then speed beside FlexAttention.

The kernels are called through their general entries
(fast_attention_masked in gpu/fast.h, wgmma_attention_masked in
gpu/wgmma.h: struct tc_mask, flash-attention's window_size, softcap and
alibi_slopes conventions) with torch tensors' device pointers:

  nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -shared \\
      -Xcompiler -fPIC -I . -I src -I gpu gpu/fast.cu -o libfast.so
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -shared \\
      -Xcompiler -fPIC -I . -I src -I gpu gpu/wgmma.cu -o libwgmma.so
  python3 gpu/bench/masks_vs_torch.py --fast ./libfast.so \\
      --wgmma ./libwgmma.so [--no-accuracy] [--no-speed]

Accuracy.  Each case is held to flash-attention's own rule (its
test_flash_attn_output):

    max|ours - ref| <= 2 max|torch - ref| + atol

where ref is attention in float64 on the same 16-bit inputs, the
window, cap and bias applied in float64, and torch the same attention
written in torch ops in the kernels' dtype (the scores, tanh, bias,
softmax and P V each in fp16 or bf16), atol the floor of one rounding at
O's scale (bwd_vs_torch.py's).  lse is held to LSE_TOL of float64's.
Cases: a random grid (B, H, Tq, Tk, d, the rules drawn) and
flash-attention's seqlen pairs, each rule alone and all together, fp16
and bf16, d = 64 and 128.  Rows that see no key must give O = 0 and
lse = -inf.  A planted fault (the window's left edge one key wider than
asked) must break the rule, so the check is shown able to fail.

Speed (fp16, B T = 32768, H = 16, d = 128 and 64, T = 8192 and 16384):
full attention, sliding windows (1024, 0) and (4096, 0) and a softcap
of 50 (Gemma 2's), ours and FlexAttention (torch.compile'd
flex_attention with a block mask for the window, a score_mod for the
cap), CUDA-event medians.  TFLOP/s counts 4 d per visible score; "vs
flex" is FlexAttention's time over ours (above 1: ours is the faster).
"per tile" is the time per visible Br x Bc tile over full attention's
(for wgmma a window runs the persistent grid; "(1 item)" rows time the
default variant's grid, a block an item, beside it):
for a window the target is at most 1.10 at T >= 8192 (the kernel skips
the tiles the window hides, and pays the mask only on those that cross
an edge).
"""
import argparse
import ctypes
import math
import sys

import torch

from benchlib import DTYPES, dtype_code, flash_rule, time_each, torch_setup

# flash-attention's test_flash_attn_output seqlen pairs (Tq, Tk).
FA_PAIRS = [(113, 203), (128, 217), (113, 211), (108, 256), (256, 512),
            (512, 256), (1024, 1024), (1023, 1024), (1024, 1023),
            (2048, 2048)]


class TcMask(ctypes.Structure):
    """struct tc_mask (gpu/fast.h), field for field."""
    _fields_ = [("left", ctypes.c_int), ("right", ctypes.c_int),
                ("softcap", ctypes.c_float), ("alibi", ctypes.c_void_p)]


class Masked:
    """ctypes door to fast_attention_masked or wgmma_attention_masked
    (one signature), the timed kernel (no trace), its default variant;
    tiles() gives the variant's Br and Bc."""

    def __init__(self, path, kind):
        self.lib = ctypes.CDLL(path)
        self.kind = kind
        self.fn = getattr(self.lib, kind + "_attention_masked")
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = ([ctypes.c_void_p] * 5 + [ctypes.c_int] * 6 +
                            [ctypes.POINTER(TcMask), ctypes.c_float,
                             ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_char_p, ctypes.c_size_t])
        self.err = ctypes.create_string_buffer(256)

    def tiles(self, d):
        # both configs start with d, br, bc
        cfg = (ctypes.c_int * 8)()
        getattr(self.lib, self.kind + "_attention_variant")(
            d, -1, ctypes.byref(cfg))
        return cfg[1], cfg[2]

    def __call__(self, q, k, v, o, lse, window, softcap, slopes, variant=-1):
        b, h, tq, d = q.shape
        tk = k.shape[2]
        m = TcMask(window[0], window[1], softcap,
                   slopes.data_ptr() if slopes is not None else None)
        rc = self.fn(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                     lse.data_ptr(), b, h, tq, tk, d, dtype_code(q.dtype),
                     ctypes.byref(m), 0.0, variant, None,
                     torch.cuda.current_stream().cuda_stream, self.err,
                     len(self.err))
        if rc != 0:
            raise RuntimeError(self.err.value.decode())


def visible(tq, tk, window, device):
    """(Tq, Tk) bool: row r sees key c (mask_rule.h's window, aligned
    bottom-right; (-1, -1) sees everything)."""
    r = torch.arange(tq, device=device)[:, None]
    c = torch.arange(tk, device=device)[None, :]
    diag = r + (tk - tq)
    ok = torch.ones(tq, tk, dtype=torch.bool, device=device)
    if window[0] >= 0:
        ok &= c >= diag - window[0]
    if window[1] >= 0:
        ok &= c <= diag + window[1]
    return ok


def attention(q, k, v, window, softcap, slopes, dtype):
    """O and lse in dtype's arithmetic (float64 for the reference): the
    scaled scores, the cap, ALiBi's -slope |r + Tk - Tq - c|, the
    window; rows that see no key O = 0, lse = -inf."""
    tq, tk, d = q.shape[2], k.shape[2], q.shape[3]
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
    if softcap > 0:
        s = torch.tanh(s / softcap) * softcap
    if slopes is not None:
        r = torch.arange(tq, device=q.device)[:, None]
        c = torch.arange(tk, device=q.device)[None, :]
        dist = (r + (tk - tq) - c).abs().to(dtype)
        s = s - slopes.to(dtype)[None, :, None, None] * dist
    s = s.masked_fill(~visible(tq, tk, window, q.device), float("-inf"))
    lse = torch.logsumexp(s.double() if dtype == torch.float64 else
                          s.float(), dim=-1)
    p = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
    return torch.matmul(p, v), lse


def one_case(kern, b, h, tq, tk, d, dt, window, softcap, alibi, plant=False):
    """(ok, ours error, torch error, lse error, what) of one case."""
    q = torch.randn(b, h, tq, d, device="cuda").to(dt)
    k = torch.randn(b, h, tk, d, device="cuda").to(dt)
    v = torch.randn(b, h, tk, d, device="cuda").to(dt)
    slopes = (torch.tensor([alibi * (i + 1) / h for i in range(h)],
                           device="cuda", dtype=torch.float32)
              if alibi > 0 else None)
    ref, ref_lse = attention(q, k, v, window, softcap, slopes, torch.float64)
    same, _ = attention(q, k, v, window, softcap, slopes, dt)
    o = torch.full_like(q, float("nan"))
    lse = torch.full((b, h, tq), float("nan"), device="cuda")
    asked = (window[0] + 1, window[1]) if plant else window
    kern(q, k, v, o, lse, asked, softcap, slopes)
    torch.cuda.synchronize()
    ok, err, terr, lerr = flash_rule(o, lse, same, ref, ref_lse)
    what = "%s %s B%d H%d Tq%d Tk%d d%d window (%d,%d) softcap %g alibi %g" % (
        kern.kind, str(dt)[6:], b, h, tq, tk, d, window[0], window[1],
        softcap, alibi)
    return ok, err, terr, lerr, what


def rules_of(kind, rng, tq, tk):
    """(window, softcap, alibi) of rule kind: window, softcap, alibi, all."""
    window, softcap, alibi = (-1, -1), 0.0, 0.0
    if kind in ("window", "all"):
        window = (int(rng.integers(0, max(1, tk))) if rng.random() < 0.8
                  else -1, int(rng.integers(0, max(1, tk // 2)))
                  if rng.random() < 0.7 else -1)
        if window == (-1, -1):
            window = (int(rng.integers(0, max(1, tk))), 0)
    if kind in ("softcap", "all"):
        softcap = float(rng.choice([5.0, 20.0, 50.0]))
    if kind in ("alibi", "all"):
        alibi = float(rng.choice([0.05, 0.25, 1.0]))
    return window, softcap, alibi


def accuracy(kerns):
    import numpy as np
    rng = np.random.default_rng(2828)
    fails = checks = passed = 0
    worst = 0.0
    kinds = ("window", "softcap", "alibi", "all")
    shapes = []
    for _ in range(24):     # the random grid
        shapes.append((int(rng.integers(1, 3)), int(rng.integers(1, 5)),
                       int(rng.integers(1, 700)), int(rng.integers(1, 700))))
    shapes += [(1, 2, tq, tk) for tq, tk in FA_PAIRS]
    for kern in kerns:
        for n, (b, h, tq, tk) in enumerate(shapes):
            for dt in (torch.float16, torch.bfloat16):
                for d in (64, 128):
                    kind = kinds[(n + d // 64) % 4]
                    w, c, a = rules_of(kind, rng, tq, tk)
                    torch.manual_seed(n)
                    ok, e, t, le, what = one_case(kern, b, h, tq, tk, d, dt,
                                                  w, c, a)
                    checks += 1
                    passed += ok
                    worst = max(worst, e / max(2 * t, 1e-30))
                    if not ok:
                        fails += 1
                        print("FAIL %s: ours %.3g, torch %s %.3g, lse %.3g" %
                              (what, e, str(dt)[6:], t, le))
        # the planted fault: the window one key wider on the left
        torch.manual_seed(1)
        ok, e, t, _, what = one_case(kern, 1, 2, 300, 300, 64, torch.float16,
                                     (20, 0), 0.0, 0.0, plant=True)
        print("planted fault (%s kernel, left edge one key wider): ours %.3g "
              "against the rule's %.3g: %s" % (kern.kind, e, 2 * t,
                                              "caught" if not ok else
                                              "NOT CAUGHT"))
        if ok:
            fails += 1
    print("accuracy: %d of %d cases passed; worst ours / (2 torch) %.3f" %
          (passed, checks, worst))
    return fails


def visible_count(tq, tk, window):
    """Scores the rows see between them (the window's band, clipped)."""
    diag = torch.arange(tq, dtype=torch.int64) + (tk - tq)
    lo = (diag - window[0]).clamp_min(0) if window[0] >= 0 else \
        torch.zeros_like(diag)
    hi = (diag + window[1]).clamp_max(tk - 1) if window[1] >= 0 else \
        torch.full_like(diag, tk - 1)
    return (hi - lo + 1).clamp_min(0).sum().item()


def tiles_visible(tq, tk, br, bc, window):
    """Br x Bc tiles the kernels visit (tc_mask.cuh's tc_rule_tiles)."""
    n = 0
    for r0 in range(0, tq, br):
        last = min(r0 + br, tq) - 1
        lo = 0 if window[0] < 0 else r0 + tk - tq - window[0]
        hi = tk - 1 if window[1] < 0 else last + tk - tq + window[1]
        lo, hi = max(lo, 0), min(hi, tk - 1)
        if lo <= hi:
            n += hi // bc - lo // bc + 1
    return n


def flex_fns(tq, tk, window, softcap):
    """The compiled flex_attention and its block mask / score_mod, or a
    reason it cannot run."""
    try:
        from torch.nn.attention.flex_attention import (create_block_mask,
                                                       flex_attention)
    except Exception as e:      # noqa: BLE001 - said, not hidden
        return None, "no flex_attention: %s" % e
    off = tk - tq
    mask = None
    if window != (-1, -1):
        left, right = window

        def mask_mod(b, h, q, kv):
            ok = kv <= q + off + right if right >= 0 else kv >= 0
            if left >= 0:
                ok = ok & (kv >= q + off - left)
            return ok
        mask = create_block_mask(mask_mod, None, None, tq, tk)
    score_mod = None
    if softcap > 0:
        def score_mod(score, b, h, q, kv):
            return torch.tanh(score / softcap) * softcap
    compiled = torch.compile(flex_attention)
    return (lambda q, k, v: compiled(q, k, v, score_mod=score_mod,
                                     block_mask=mask)), None


def speed(kerns, reps, sizes, dims):
    print("%-6s %4s %6s %-18s %9s %8s %9s %8s %9s" % (
        "kernel", "d", "T", "rule", "ms", "TFLOP/s", "per tile",
        "flex ms", "vs flex"))
    for d in dims:
        for t in sizes:
            b, h = max(1, 32768 // t), 16
            q = torch.randn(b, h, t, d, device="cuda", dtype=torch.float16)
            k = torch.randn_like(q)
            v = torch.randn_like(q)
            o = torch.empty_like(q)
            lse = torch.empty((b, h, t), device="cuda")
            rules = [("full", (-1, -1), 0.0),
                     ("window 1024,0", (1024, 0), 0.0),
                     ("window 4096,0", (4096, 0), 0.0),
                     ("softcap 50", (-1, -1), 50.0)]
            for kern in kerns:
                br, bc = kern.tiles(d)
                full_per_tile = None
                for name, w, c in rules:
                    ms = time_each(lambda: kern(q, k, v, o, lse, w, c, None),
                                 reps)
                    vis = visible_count(t, t, w)
                    tf = 4.0 * d * vis * b * h / ms / 1e9
                    ntiles = tiles_visible(t, t, br, bc, w)
                    per = ms / ntiles
                    if name == "full":
                        full_per_tile = per
                    flex, why = flex_fns(t, t, w, c)
                    fms = time_each(lambda: flex(q, k, v), reps) \
                        if flex is not None else float("nan")
                    print("%-6s %4d %6d %-18s %9.3f %8.1f %9.3f %8.3f %9.2f%s"
                          % (kern.kind, d, t, name, ms, tf,
                             per / full_per_tile, fms, fms / ms,
                             "" if why is None else "  (" + why + ")"))
                    if kern.kind == "wgmma" and w[0] >= 0:
                        # the window on the default variant as it is
                        # (one block an item), not its persistent twin
                        ms0 = time_each(lambda: kern(q, k, v, o, lse, w, c,
                                                   None, 0), reps)
                        print("%-6s %4d %6d %-18s %9.3f %8.1f %9.3f" % (
                            kern.kind, d, t, name + " (1 item)", ms0,
                            4.0 * d * vis * b * h / ms0 / 1e9,
                            ms0 / ntiles / full_per_tile))
            del q, k, v, o, lse
            torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fast", help="libfast.so (gpu/fast.cu)")
    ap.add_argument("--wgmma", help="libwgmma.so (gpu/wgmma.cu)")
    ap.add_argument("--no-accuracy", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--sizes", type=int, nargs="+", default=[8192, 16384])
    ap.add_argument("--dims", type=int, nargs="+", default=[128, 64])
    args = ap.parse_args()
    kerns = []
    if args.fast:
        kerns.append(Masked(args.fast, "fast"))
    if args.wgmma:
        kerns.append(Masked(args.wgmma, "wgmma"))
    if not kerns:
        ap.error("give --fast LIB, --wgmma LIB or both")
    torch.backends.cuda.matmul.allow_tf32 = False
    print(torch_setup())
    fails = 0
    if not args.no_accuracy:
        fails = accuracy(kerns)
    if not args.no_speed:
        speed(kerns, args.reps, args.sizes, args.dims)
    print("verdict: %s" % ("PASS" if fails == 0 else "FAIL (%d)" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
