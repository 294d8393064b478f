#!/usr/bin/env python3
"""varlen_vs_torch.py - the wgmma forward on a packed batch (flash-
attention's varlen: cu_seqlens), in one launch, against torch: accuracy
by flash-attention's rule, then speed beside torch's SDPA run sequence
by sequence (and flash_attn_varlen_func where flash_attn imports).

The kernel is called through wgmma_attention_varlen (gpu/wgmma.h) with
torch tensors' device pointers, Q (H, total_q, d), K, V (H, total_k, d)
head-major, cu_seqlens int32 on the device:

  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -shared \\
      -Xcompiler -fPIC -I . -I src -I gpu gpu/wgmma.cu -o libwgmma.so
  python3 gpu/bench/varlen_vs_torch.py --wgmma ./libwgmma.so \\
      [--no-accuracy] [--no-speed]

Accuracy.  Each random packed batch (1 to 9 sequences, lengths from 1 to
700 drawn apart for Q and K, so Tq_b != Tk_b and most are off the
tile; H from 1 to 4; no mask, causal, or a window) is held to
flash-attention's rule (its test_flash_attn_varlen_output):

    max|ours - ref| <= 2 max|torch - ref| + atol

ref being each sequence's attention in float64 on the same 16-bit
inputs (the mask aligned bottom-right within the sequence), torch the
same per-sequence attention in the kernel's dtype, atol one rounding at
O's scale; lse within LSE_TOL of float64's.  Rows that see no key must
give O = 0, lse = -inf.  Every row of O and lse starts as NaN, so a row
the kernel did not store fails, and a row stored past a sequence's end
(over the next one's) fails it too.  A planted fault (every boundary of
cu_seqlens_k told one key late: a sequence reads the next one's first
key) must break the rule.

Speed (fp16, B T = 32768 tokens, H = 16, d = 128, mixed lengths drawn
from 256 to 8192, causal and not): the packed launch beside torch's
SDPA (its flash backend) called once a sequence on views of the same
packed tensors (torch has no varlen SDPA; padding to the longest would
time work that is thrown away), CUDA-event medians; flash_attn's
flash_attn_varlen_func on the same batch in its own (total, H, d)
layout when flash_attn is importable.  TFLOP/s counts 4 d per visible
score.
"""
import argparse
import ctypes
import math
import sys

import torch
from torch.nn.attention import SDPBackend

from benchlib import dtype_code, flash_rule, sdpa, time_each, torch_setup


class TcMask(ctypes.Structure):
    """struct tc_mask (gpu/fast.h), field for field."""
    _fields_ = [("left", ctypes.c_int), ("right", ctypes.c_int),
                ("softcap", ctypes.c_float), ("alibi", ctypes.c_void_p)]


class Varlen:
    """ctypes door to wgmma_attention_varlen, the timed kernel (no
    trace), its default variant."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.fn = self.lib.wgmma_attention_varlen
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = ([ctypes.c_void_p] * 5 + [ctypes.c_int] * 2 +
                            [ctypes.c_void_p] * 2 + [ctypes.c_int] * 6 +
                            [ctypes.POINTER(TcMask), ctypes.c_float,
                             ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_char_p, ctypes.c_size_t])
        self.err = ctypes.create_string_buffer(256)

    def __call__(self, q, k, v, o, lse, cu_q, cu_k, max_q, max_k, window):
        h, tq, d = q.shape
        tk = k.shape[1]
        m = TcMask(window[0], window[1], 0.0, None)
        rc = self.fn(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                     lse.data_ptr(), cu_q.numel() - 1, h, cu_q.data_ptr(),
                     cu_k.data_ptr(), tq, tk, max_q, max_k, d,
                     dtype_code(q.dtype), ctypes.byref(m), 0.0, -1, None,
                     torch.cuda.current_stream().cuda_stream, self.err,
                     len(self.err))
        if rc != 0:
            raise RuntimeError(self.err.value.decode())


def visible(tq, tk, window, device):
    """(Tq, Tk) bool: row r sees key c (the window aligned bottom-right
    within the sequence; (-1, -1) sees everything, (-1, 0) is causal)."""
    r = torch.arange(tq, device=device)[:, None]
    c = torch.arange(tk, device=device)[None, :]
    diag = r + (tk - tq)
    ok = torch.ones(tq, tk, dtype=torch.bool, device=device)
    if window[0] >= 0:
        ok &= c >= diag - window[0]
    if window[1] >= 0:
        ok &= c <= diag + window[1]
    return ok


def attention(q, k, v, window, dtype):
    """One sequence, (H, T, d): O and lse in dtype's arithmetic; rows
    that see no key O = 0, lse = -inf."""
    tq, tk, d = q.shape[1], k.shape[1], q.shape[2]
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
    s = s.masked_fill(~visible(tq, tk, window, q.device), float("-inf"))
    lse = torch.logsumexp(s.double() if dtype == torch.float64 else
                          s.float(), dim=-1)
    p = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
    return torch.matmul(p, v), lse


def packed(fn, q, k, v, cu_q, cu_k):
    """fn on each sequence's views, the results packed as Q is."""
    outs, lses = [], []
    for b in range(len(cu_q) - 1):
        o, lse = fn(q[:, cu_q[b]:cu_q[b + 1]], k[:, cu_k[b]:cu_k[b + 1]],
                    v[:, cu_k[b]:cu_k[b + 1]])
        outs.append(o)
        lses.append(lse)
    return torch.cat(outs, dim=1), torch.cat(lses, dim=1)


def cu_of(lens):
    cu = [0]
    for n in lens:
        cu.append(cu[-1] + n)
    return cu


def one_case(kern, h, lq, lk, d, dt, window, plant=False):
    """(ok, ours error, torch error, lse error, what) of one batch."""
    cu_q, cu_k = cu_of(lq), cu_of(lk)
    q = torch.randn(h, cu_q[-1], d, device="cuda").to(dt)
    k = torch.randn(h, cu_k[-1], d, device="cuda").to(dt)
    v = torch.randn(h, cu_k[-1], d, device="cuda").to(dt)
    ref, ref_lse = packed(lambda a, b, c: attention(a, b, c, window,
                                                    torch.float64),
                          q, k, v, cu_q, cu_k)
    same, _ = packed(lambda a, b, c: attention(a, b, c, window, dt),
                     q, k, v, cu_q, cu_k)
    o = torch.full_like(q, float("nan"))
    lse = torch.full((h, cu_q[-1]), float("nan"), device="cuda")
    # the plant: every inner boundary of cu_seqlens_k one key late, so
    # each sequence but the last reads the next one's first key
    told_k = ([c + (1 if 0 < i < len(cu_k) - 1 else 0)
               for i, c in enumerate(cu_k)] if plant else cu_k)
    dq = torch.tensor(cu_q, dtype=torch.int32, device="cuda")
    dk = torch.tensor(told_k, dtype=torch.int32, device="cuda")
    kern(q, k, v, o, lse, dq, dk, max(lq),
         max(told_k[i + 1] - told_k[i] for i in range(len(lk))), window)
    torch.cuda.synchronize()
    ok, err, terr, lerr = flash_rule(o, lse, same, ref, ref_lse)
    what = "%s H%d d%d window (%d,%d) seqlens_q %s seqlens_k %s" % (
        str(dt)[6:], h, d, window[0], window[1],
        ",".join(map(str, lq)), ",".join(map(str, lk)))
    return ok, err, terr, lerr, what


def accuracy(kern):
    import numpy as np
    rng = np.random.default_rng(3131)
    fails = checks = passed = 0
    worst = 0.0
    windows = [(-1, -1), (-1, 0), (64, 16)]
    for n in range(30):
        nseq = int(rng.integers(1, 10))
        lq = [int(x) for x in rng.integers(1, 700, nseq)]
        lk = [int(x) for x in rng.integers(1, 700, nseq)]
        if n % 5 == 0:
            lq[0] = lk[0] = 1       # a length-1 sequence
        h = int(rng.integers(1, 5))
        for dt in (torch.float16, torch.bfloat16):
            for d in (64, 128):
                torch.manual_seed(n)
                ok, e, t, le, what = one_case(kern, h, lq, lk, d, dt,
                                              windows[(n + d // 64) % 3])
                checks += 1
                passed += ok
                worst = max(worst, e / max(2 * t, 1e-30))
                if not ok:
                    fails += 1
                    print("FAIL %s: ours %.3g, torch %s %.3g, lse %.3g" %
                          (what, e, str(dt)[6:], t, le))
    torch.manual_seed(1)
    ok, e, t, _, what = one_case(kern, 2, [300, 200, 90], [250, 260, 100],
                                 64, torch.float16, (-1, -1), plant=True)
    print("planted fault (each sequence one key into the next): ours %.3g "
          "against the rule's %.3g: %s" % (e, 2 * t, "caught" if not ok
                                           else "NOT CAUGHT"))
    if ok:
        fails += 1
    print("accuracy: %d of %d batches passed; worst ours / (2 torch) %.3f" %
          (passed, checks, worst))
    return fails


def mixed_lengths(total, lo, hi, rng):
    """Lengths from lo to hi adding up to total exactly (the last one
    what is left)."""
    lens, left = [], total
    while left > 0:
        lens.append(min(left, int(rng.integers(lo, hi + 1))))
        left -= lens[-1]
    return lens


def speed(kern, reps):
    import numpy as np
    try:
        from flash_attn import flash_attn_varlen_func
    except ImportError:
        flash_attn_varlen_func = None
    rng = np.random.default_rng(77)
    h, d, total = 16, 128, 32768
    lens = mixed_lengths(total, 256, 8192, rng)
    cu = cu_of(lens)
    print("speed: fp16, %d tokens in %d sequences (%s), H = %d, d = %d" % (
        total, len(lens), ",".join(map(str, lens)), h, d))
    dt = torch.float16
    q = torch.randn(h, total, d, device="cuda", dtype=dt)
    k = torch.randn(h, total, d, device="cuda", dtype=dt)
    v = torch.randn(h, total, d, device="cuda", dtype=dt)
    o = torch.empty_like(q)
    lse = torch.empty(h, total, device="cuda")
    dcu = torch.tensor(cu, dtype=torch.int32, device="cuda")
    qs = q.unsqueeze(0)
    ks = k.unsqueeze(0)
    vs = v.unsqueeze(0)
    if flash_attn_varlen_func is not None:
        qf = q.transpose(0, 1).contiguous()     # (total, H, d)
        kf = k.transpose(0, 1).contiguous()
        vf = v.transpose(0, 1).contiguous()
    print("%-7s %10s %10s %10s %10s %8s" % ("mask", "ours ms", "TFLOP/s",
                                          "sdpa/seq", "flash_attn",
                                          "vs sdpa"))
    for causal in (False, True):
        window = (-1, 0) if causal else (-1, -1)
        seen = sum(n * (n + 1) // 2 if causal else n * n for n in lens)
        flops = 4.0 * d * seen * h

        def ours():
            kern(q, k, v, o, lse, dcu, dcu, max(lens), max(lens), window)

        def per_seq():
            for b in range(len(lens)):
                sdpa(SDPBackend.FLASH_ATTENTION,
                     qs[:, :, cu[b]:cu[b + 1]], ks[:, :, cu[b]:cu[b + 1]],
                     vs[:, :, cu[b]:cu[b + 1]], causal=causal)

        t_ours = time_each(ours, reps)
        t_sdpa = time_each(per_seq, reps)
        t_fa = float("nan")
        if flash_attn_varlen_func is not None:
            t_fa = time_each(lambda: flash_attn_varlen_func(
                qf, kf, vf, dcu, dcu, max(lens), max(lens), causal=causal),
                reps)
        print("%-7s %10.3f %10.1f %10.3f %10.3f %8.2f" % (
            "causal" if causal else "none", t_ours, flops / t_ours / 1e9,
            t_sdpa, t_fa, t_sdpa / t_ours))
    if flash_attn_varlen_func is None:
        print("(flash_attn not importable: its column is nan)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wgmma", required=True, help="libwgmma.so")
    ap.add_argument("--no-accuracy", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    print(torch_setup())
    kern = Varlen(a.wgmma)
    fails = 0 if a.no_accuracy else accuracy(kern)
    if not a.no_speed:
        speed(kern, a.reps)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
