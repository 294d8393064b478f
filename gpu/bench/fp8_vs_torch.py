#!/usr/bin/env python3
"""fp8_vs_torch.py - the FP8 (e4m3) wgmma kernel beside fp16 and torch.

Runs the FP8 path of the Hopper forward kernel (wgmma_attention_fp8,
wgmma_fp8_v_layout: gpu/wgmma.h), our fp16 wgmma kernel and torch's SDPA
(cuDNN and flash backends) in one process on an H200 or H100:

  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -shared \\
      -Xcompiler -fPIC -I src -I gpu gpu/wgmma.cu -o libwgmma.so
  python3 gpu/bench/fp8_vs_torch.py --wgmma ./libwgmma.so [--reps N] \\
      [--no-speed] [--no-accuracy] [--fault] [--hadamard]

Q, K, V are quantized in torch as src/model/fp8.c does (blocks of 128
rows in a head, scale = amax / 448, a zero block scale 1).  Accuracy,
d = 128, ragged shapes, N(0,1) inputs and N(0,1) with N(0,100) outliers
at p = 0.001 (FA3 section 4.3): the kernel's O against a float32
reference on the dequantized inputs (err_kernel) within twice a torch
emulation's (err_emul) plus 1e-4, lse within LSE_TOL plus what FP8's
tensor cores lose adding S (lse_tol); err_total is the
whole FP8 error, against the fp16 inputs.  --hadamard adds the outlier
cases with Q and K rotated.  --fault plants V^T's layout skipped (must
be caught) and v_scale[tile 0] x 1.01 (shown only).  Speed: B*T = 32768,
H = 16, d = 128; TFLOP/s counts 4*B*H*T*T*d, halved for causal.  Exit 0
when every case passed and, with --fault, the layout fault was caught.
"""
import argparse
import ctypes
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend

from benchlib import (LSE_TOL, reference, rel_err, lse_err, sdpa, time_each,
                      torch_setup)

BC = 128            # WGMMA_FP8_BC: keys a tile, rows a quantization block
E4M3_MAX = 448.0    # the largest e4m3fn magnitude (fp8_rule.h)
FLOOR = 1e-4        # err_kernel's allowance where err_emul is ~0
SHAPES = [(1, 1, 1, 1), (1, 2, 17, 33), (2, 3, 100, 37), (1, 2, 129, 257),
          (1, 1, 300, 300), (2, 1, 70, 300), (1, 1, 200, 130),
          (1, 4, 1000, 999), (1, 1, 77, 4097), (2, 2, 4097, 300)]
FAULT_SHAPE = (1, 2, 129, 257)
TARGET_X = 1.5      # first target: FP8 1.5x our fp16 wgmma at T >= 4096
GOAL_TF = 1100.0    # the goal, TFLOP/s


class TcMask(ctypes.Structure):
    """struct tc_mask (gpu/fast.h), field for field."""
    _fields_ = [("left", ctypes.c_int), ("right", ctypes.c_int),
                ("softcap", ctypes.c_float), ("alibi", ctypes.c_void_p)]


def tc_mask(causal):
    """tc_mask_causal: (-1, 0) causal, (-1, -1) none."""
    return TcMask(-1, 0 if causal else -1, 0.0, None)


class Wgmma8:
    """ctypes door to gpu/wgmma.h: the fp16 entry (as vs_torch.py's
    Wgmma) and the FP8 ones.  Every call is on torch's current stream."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        vp, i, f = ctypes.c_void_p, ctypes.c_int, ctypes.c_float
        tail = [vp, ctypes.c_char_p, ctypes.c_size_t]    # stream, err
        self.lib.wgmma_attention_fwd_variant.argtypes = (
            [vp] * 5 + [i] * 7 + [f, i] + tail)
        self.lib.wgmma_fp8_vt_bytes.argtypes = [i] * 3
        self.lib.wgmma_fp8_vt_bytes.restype = ctypes.c_size_t
        self.lib.wgmma_fp8_v_layout.argtypes = [vp] * 2 + [i] * 3 + tail
        self.lib.wgmma_attention_fp8.argtypes = (
            [vp] * 8 + [i] * 5 + [ctypes.POINTER(TcMask), f, i, vp] + tail)
        for fn in ("wgmma_attention_fwd_variant", "wgmma_fp8_v_layout",
                   "wgmma_attention_fp8"):
            getattr(self.lib, fn).restype = ctypes.c_int
        self.err = ctypes.create_string_buffer(256)
        self.masks = {c: tc_mask(c) for c in (False, True)}
        self.variant = -1       # the FP8 calls' (--fp8-variant)

    def _tail(self):
        return (torch.cuda.current_stream().cuda_stream, self.err,
                len(self.err))

    def _check(self, rc):
        if rc != 0:
            raise RuntimeError(self.err.value.decode())

    def fp16(self, q, k, v, o, lse, causal, variant=-1):
        b, h, tq, d = q.shape
        self._check(self.lib.wgmma_attention_fwd_variant(
            q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
            lse.data_ptr(), b, h, tq, k.shape[2], d, 0, int(causal), 0.0,
            variant, *self._tail()))

    def vt_bytes(self, bh, tk, d):
        return self.lib.wgmma_fp8_vt_bytes(bh, tk, d)

    def v_layout(self, v8, vt):
        """V codes (B, H, Tk, d) uint8 -> vt, V^T in the kernel's order."""
        b, h, tk, d = v8.shape
        self._check(self.lib.wgmma_fp8_v_layout(
            v8.data_ptr(), vt.data_ptr(), b * h, tk, d, *self._tail()))

    def fp8(self, x, o, lse, causal):
        """x: prepare()'s codes and scales; O fp16, lse float32."""
        b, h, tq, d = x["q8"].shape
        self._check(self.lib.wgmma_attention_fp8(
            x["q8"].data_ptr(), x["k8"].data_ptr(), x["vt"].data_ptr(),
            x["qs"].data_ptr(), x["ks"].data_ptr(), x["vs"].data_ptr(),
            o.data_ptr(), lse.data_ptr(), b, h, tq, x["k8"].shape[2], d,
            ctypes.byref(self.masks[bool(causal)]), 0.0, self.variant, None,
            *self._tail()))


def quantize(x):
    """Block quantization of x (B, H, T, d), fp8.c's: (codes as uint8,
    block scales (B, H, ceil(T/128)) float32, dequantized float32)."""
    b, h, t, d = x.shape
    nb = -(-t // BC)
    xf = x.float()
    # zero rows past T do not move a short last block's amax
    amax = F.pad(xf.abs(), (0, 0, 0, nb * BC - t)).view(
        b, h, nb, BC, d).amax(dim=(3, 4))
    scale = torch.where(amax > 0, amax / E4M3_MAX, torch.ones_like(amax))
    rows = per_row(scale, t).unsqueeze(-1)
    # |x / scale| <= 448 up to a rounding; the clamp is satfinite's
    f8 = (xf / rows).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return (f8.view(torch.uint8).contiguous(), scale.contiguous(),
            f8.float() * rows)


def per_row(scale, t):
    """Block scales (B, H, nb) -> one a row (B, H, t)."""
    return scale.repeat_interleave(BC, dim=2)[:, :, :t].contiguous()


def hadamard(d, seed):
    """M = diag(s) H_d / sqrt(d), float64: H_d Sylvester's, s +-1 from a
    generator of its own (the same M whatever the inputs)."""
    hm = torch.ones(1, 1, dtype=torch.float64)
    while hm.shape[0] < d:
        hm = torch.cat([torch.cat([hm, hm], 1), torch.cat([hm, -hm], 1)])
    g = torch.Generator().manual_seed(seed)
    s = torch.randint(0, 2, (d,), generator=g).double() * 2 - 1
    return s[:, None] * hm / math.sqrt(d)


def prepare(wg, q, k, v, rot=None):
    """Codes, scales, V^T and dequantized values of fp16 Q, K, V; rot
    (M, or None) multiplies Q and K along d first, in float64 as fp8.c."""
    if rot is not None:
        m = rot.to(q.device)
        q, k = (x.double().matmul(m).float() for x in (q, k))
    q8, qs, qd = quantize(q)
    k8, ks, kd = quantize(k)
    v8, vs, vd = quantize(v)
    b, h, tk, d = v8.shape
    vt = torch.empty(wg.vt_bytes(b * h, tk, d), dtype=torch.uint8,
                     device=v.device)
    wg.v_layout(v8, vt)
    # K and V blocks are the kernel's key tiles: their scales as they are
    return dict(q8=q8, k8=k8, v8=v8, vt=vt, qs=per_row(qs, q.shape[2]),
                ks=ks, vs=vs, qd=qd, kd=kd, vd=vd)


def emulate(q, k, v, causal):
    """The kernel's arithmetic in torch on dequantized Q, K, V: S and a
    full-row p = exp(s - max) in float32, l = sum p, P rounded to e4m3,
    O = P V / l written as fp16 (the kernel's O is fp16: without that
    rounding a one-key row would hold the kernel to 0 error)."""
    tq, tk = q.shape[2], k.shape[2]
    s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[3]))
    if causal:
        r = torch.arange(tq, device=q.device)[:, None]
        c = torch.arange(tk, device=q.device)[None, :]
        s.masked_fill_(c > r + tk - tq, float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)  # empty rows
    p = torch.exp(s - m)
    l = p.sum(dim=-1, keepdim=True)
    pr = p.to(torch.float8_e4m3fn).float()
    o = torch.matmul(pr, v) / torch.where(l > 0, l, torch.ones_like(l))
    return o.half()


def make_input(kind, shape):
    """fp16 N(0,1), or with N(0,100) outliers at probability 0.001."""
    x = torch.randn(shape, device="cuda")
    if kind == "outliers":
        hit = torch.rand(shape, device="cuda") < 1e-3
        x += torch.randn(shape, device="cuda") * 10.0 * hit
    return x.half()


def lse_tol(qd, kd):
    """lse's allowance: LSE_TOL, plus twice what Hopper's FP8 tensor
    cores may lose adding a score's products (an S entry within 2^-13
    S1, S1 = scale max |q_r| max |k_c|: gpu/gpucheck.h's
    gpucheck_fp8_delta, which says why 2^-13); the emulation sums S
    exactly, so its lse has no such term."""
    s1 = (qd.float().norm(dim=-1).max() * kd.float().norm(dim=-1).max() /
          math.sqrt(qd.shape[-1])).item()
    return LSE_TOL + 2 * (2.0 ** -13 + 4 * 2.0 ** -24) * s1


def judge(wg, x, orig, causal):
    """Runs the kernel on x: (ok, err_kernel, err_emul, lse err,
    err_total); orig the fp16 inputs as given (err_total's reference)."""
    b, h, tq, d = x["q8"].shape
    o = torch.full((b, h, tq, d), float("nan"), dtype=torch.float16,
                   device="cuda")
    lse = torch.full((b, h, tq), float("nan"), device="cuda")
    wg.fp8(x, o, lse, causal)
    torch.cuda.synchronize()
    ro, rl = reference(x["qd"], x["kd"], x["vd"], causal)
    ek = rel_err(o, ro)
    ee = rel_err(emulate(x["qd"], x["kd"], x["vd"], causal), ro)
    le = lse_err(lse, rl)
    et = rel_err(o, reference(*orig, causal)[0])
    ok = ek <= 2 * ee + FLOOR and le <= lse_tol(x["qd"], x["kd"])
    return ok, ek, ee, le, et


def accuracy(wg, rot):
    """Every case of SHAPES x causal x inputs (x rotation): the table,
    then the count.  Returns the failures."""
    print("\n| inputs | rot | B | H | Tq | Tk | causal | err_kernel | "
          "err_emul | ratio | lse err | err_total | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    passed, n, worst, total = 0, 0, (0.0, ""), {}
    for (b, h, tq, tk) in SHAPES:
        for causal in (False, True):
            for kind in ("normal", "outliers"):
                q = make_input(kind, (b, h, tq, 128))
                k, v = (make_input(kind, (b, h, tk, 128)) for _ in "kv")
                # the rotated run on the same inputs: err_total paired
                rots = [None] + ([rot] if rot is not None and
                                 kind == "outliers" else [])
                for m in rots:
                    x = prepare(wg, q, k, v, m)
                    ok, ek, ee, le, et = judge(wg, x, (q, k, v), causal)
                    ratio = ek / max(ee, FLOOR)
                    if ratio > worst[0]:
                        worst = (ratio, "%s%s B%d H%d Tq%d Tk%d %s" % (
                            kind, "+rot" if m is not None else "", b, h,
                            tq, tk, "causal" if causal else "full"))
                    total.setdefault((kind, m is not None), []).append(et)
                    passed += ok
                    n += 1
                    print("| %s | %s | %d | %d | %d | %d | %s | %.2e | "
                          "%.2e | %.2f | %.1e | %.2e | %s |" %
                          (kind, "yes" if m is not None else "no", b, h,
                           tq, tk, "yes" if causal else "no", ek, ee, ratio,
                           le, et, "ok" if ok else "FAIL"))
                    sys.stdout.flush()
    print("\naccuracy: %d of %d cases passed (err_kernel <= 2 err_emul + "
          "%.0e, lse within %.0e + 2 (2^-13 + 2^-22) S1)" %
          (passed, n, FLOOR, LSE_TOL))
    print("worst err_kernel / max(err_emul, %.0e): %.2f (%s)" %
          (FLOOR, worst[0], worst[1]))
    for (kind, r), errs in sorted(total.items()):
        print("mean err_total, %s%s: %.2e" % (
            kind, " rotated (--hadamard)" if r else "", sum(errs) /
            len(errs)))
    return n - passed


def planted_faults(wg):
    """V^T's layout skipped (raw V codes as vt: must fail the rule), and
    v_scale of tile 0 x 1.01, shown only: 1% on some keys is well inside
    twice FP8's own ~2% error.  True when the first was caught."""
    b, h, tq, tk = FAULT_SHAPE
    q = make_input("normal", (b, h, tq, 128))
    k, v = (make_input("normal", (b, h, tk, 128)) for _ in "kv")
    x = prepare(wg, q, k, v)
    # raw V bytes in a buffer of V^T's size: TMA reads all of it
    raw = torch.zeros_like(x["vt"])
    raw[:x["v8"].numel()] = x["v8"].reshape(-1)
    vs = x["vs"].clone()
    vs[:, :, 0] *= 1.01
    caught = None
    for name, bad in (("V layout skipped", dict(x, vt=raw)),
                      ("v_scale tile 0 x1.01 (shown only)",
                       dict(x, vs=vs))):
        ok, ek, ee, le, _ = judge(wg, bad, (q, k, v), False)
        print("fault %s: err_kernel %.2e err_emul %.2e lse %.1e -> %s" %
              (name, ek, ee, le, "planted fault caught" if not ok else
               "NOT caught"))
        caught = (not ok) if caught is None else caught
    return caught


def timed(name, fn, reps):
    """time_each's ms, or None where the call raises (SDPA backends)."""
    try:
        return time_each(fn, reps)
    except Exception as x:     # pylint: disable=broad-except
        print("  %s n/a: %s" % (name, str(x).split("\n")[0][:100]))
        return None


def speed(wg, reps):
    """The forward table's shapes: ms and TFLOP/s of each, the ratios."""
    rows = []
    for t in (1024, 4096, 16384):
        for causal in (False, True):
            b, h, d = 32768 // t, 16, 128
            flops = 4.0 * b * h * t * t * d / (2 if causal else 1)
            q, k, v = (torch.randn(b, h, t, d, dtype=torch.float16,
                                   device="cuda") for _ in "qkv")
            x = prepare(wg, q, k, v)
            o16, o8 = torch.empty_like(q), torch.empty_like(q)
            lse = torch.empty((b, h, t), device="cuda")
            wg.fp16(q, k, v, o16, lse, causal)
            wg.fp8(x, o8, lse, causal)
            # a sanity figure, not a check: FP8's whole error is ~5e-2
            rel = rel_err(o8, o16.float())
            calls = {
                "fp16": lambda: wg.fp16(q, k, v, o16, lse, causal),
                "fp8": lambda: wg.fp8(x, o8, lse, causal),
                "layout": lambda: wg.v_layout(x["v8"], x["vt"]),
                "cudnn": lambda: sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v,
                                      causal),
                "flash": lambda: sdpa(SDPBackend.FLASH_ATTENTION, q, k, v,
                                      causal)}
            ms = {n: timed(n, f, reps) for n, f in calls.items()}
            rows.append((t, causal, ms, flops, rel))
            print("T%d %s: %s" % (t, "causal" if causal else "full",
                                  ", ".join("%s %s" % (n, cell(m))
                                            for n, m in ms.items())))
            sys.stdout.flush()
            del q, k, v, x, o16, o8, lse, calls
            torch.cuda.empty_cache()
    print_speed(rows)


def cell(ms, flops=None):
    """ms, or TFLOP/s where flops is given; n/a where it did not run."""
    if not ms:
        return "n/a"
    return "%.1f" % (flops / (ms * 1e-3) / 1e12) if flops else "%.3f" % ms


def print_speed(rows):
    """The table, then the targets as facts beside it (no verdict)."""
    def x(a, b):
        return "%.2fx" % (a / b) if a and b else "n/a"

    print("\n| T | causal | fp16 wgmma ms | TFLOP/s | fp8 ms | TFLOP/s | "
          "layout ms | cuDNN ms | TFLOP/s | flash ms | TFLOP/s | "
          "fp16/fp8 | fp16/(fp8+layout) | cuDNN/fp8 | fp8 vs fp16 rel |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for t, causal, m, flops, rel in rows:
        both = m["fp8"] + m["layout"] if m["fp8"] and m["layout"] else None
        cells = [str(t), "yes" if causal else "no"]
        for n in ("fp16", "fp8", "layout", "cudnn", "flash"):
            # the layout moves bytes: its TFLOP/s would mean nothing
            cells += [cell(m[n])] + ([cell(m[n], flops)]
                                     if n != "layout" else [])
        cells += [x(m["fp16"], m["fp8"]), x(m["fp16"], both),
                  x(m["cudnn"], m["fp8"]), "%.1e" % rel]
        print("| " + " | ".join(cells) + " |")
    print("\nfirst target: FP8 at %.1fx our fp16 wgmma kernel (fp16/fp8) "
          "at T >= 4096; goal: %.0f TFLOP/s (1.1 PFLOP/s).  Ratios are "
          "speedups, time over time." % (TARGET_X, GOAL_TF))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wgmma", default="./libwgmma.so",
                    help="libwgmma.so, built from gpu/wgmma.cu for sm_90a")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-accuracy", action="store_true")
    ap.add_argument("--fault", action="store_true",
                    help="plant faults and show the accuracy rule fails them")
    ap.add_argument("--hadamard", action="store_true",
                    help="also the outlier cases with Q, K rotated")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fp8-variant", type=int, default=-1,
                    help="the FP8 kernel's variant (wgmma.h; -1 default)")
    args = ap.parse_args()

    print(torch_setup())
    sys.stdout.flush()
    wg = Wgmma8(args.wgmma)
    wg.variant = args.fp8_variant
    print("FP8 variant %d" % wg.variant)
    torch.manual_seed(args.seed)
    fails = 0
    if not args.no_accuracy:
        rot = hadamard(128, args.seed + 1) if args.hadamard else None
        fails += accuracy(wg, rot)
    if args.fault and not planted_faults(wg):
        print("the V layout fault was NOT caught")
        fails += 1
    if not args.no_speed:
        speed(wg, args.reps)
    print("\nresult: %s" % ("all passed" if fails == 0 else
                            "%d FAILED" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
