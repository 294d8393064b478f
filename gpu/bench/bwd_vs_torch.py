#!/usr/bin/env python3
"""bwd_vs_torch.py - the teaching backward kernel against torch autograd.

Runs our float32 backward (libteachbwd.so, built from gpu/teach_bwd.cu,
called through ctypes with host arrays) and torch autograd on the same
inputs, and holds ours to flash-attention's own rule, gradient by
gradient:

    max|ours - ref| <= 2 max|torch - ref| + atol

where ref is torch autograd in float64 and torch is torch autograd in
float32, our kernel's precision (TF32 off), on the GPU.  atol = 2
max|fl32(ref + 0.3) - 0.3 - ref| is the floor flash-attention's later
tests add: about one float32 rounding at the gradients' scale, so that a
torch error that happens to be near 0 cannot fail a correct kernel.  Our
kernel gets O and lse from torch's float32 forward and recomputes D from
them, as FlashAttention 2 gets them from its own forward.

  nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -fmad=false \\
      -shared -Xcompiler -fPIC -I src -I gpu gpu/teach_bwd.cu \\
      -o libteachbwd.so
  python3 gpu/bench/bwd_vs_torch.py --lib ./libteachbwd.so

With --fast LIB it runs the tensor-core backward (gpu/fast_bwd.cu, fp16
and bf16, device pointers) instead: flash-attention's rule against
float64 autograd (at most 2x torch autograd's error in the same dtype)
on a random grid and on flash-attention's seqlen pairs, grouped heads
included, then its TFLOP/s (dQ atomic and ordered) beside torch's flash
and cuDNN backward at B T = 32768, H = 16:

  nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -shared \\
      -Xcompiler -fPIC -I . -I src -I gpu gpu/fast_bwd.cu gpu/timing.cu \\
      -o libfastbwd.so
  python3 gpu/bench/bwd_vs_torch.py --fast ./libfastbwd.so

Every shape runs with both dQ modes (atomic, as FlashAttention 2, and
ordered).  Besides the rule it checks that rows that see no key get dQ
rows of exactly 0 and nothing is NaN; that the ordered dQ gives the same
bits twice (the atomic one's differing entries are reported); that the
trace agrees with the final gradients (dK, dV at each key block's last
step, the ordered dQ at each row block's last); and that a planted fault
(the kernel run with the backward bug no-scale, dQ and dK without the
factor scale) breaks the rule, so the check can see a fault.  It prints one table and a
verdict, and exits 1 when anything failed.

The rules (fast_attention_bwd_masked, struct tc_mask: flash-attention's
window_size, softcap and alibi_slopes) are held to the same rule: a
window of both edges, left only, right only and one that leaves rows
with no key (their dQ exactly 0), a softcap, ALiBi, and all together,
against float64 autograd of attention with the rules written in torch
ops (cap C tanh(x / C) before the max, the bias -slope |r + Tk - Tq - c|
after it), torch's own error that autograd in the dtype; O and lse from
the float64 forward.  The kernel given the problem without its cap must
break the rule (a planted fault: the cap's backward left out too).
"""
import argparse
import ctypes
import math
import sys

# enum backward_bug (src/model/backward.h): the fault planted through
# the bug-mode channel, as the GPU tests plant theirs.
BWD_BUG_NO_SCALE = 3
DQ_MODES = {"atomic": 0, "ordered": 1}


class Job(ctypes.Structure):
    """struct teach_bwd_job (gpu/teach_bwd.h), field for field."""
    _fields_ = [
        ("n", ctypes.c_int), ("tq", ctypes.c_int), ("tk", ctypes.c_int),
        ("d", ctypes.c_int), ("dv", ctypes.c_int),
        ("scale", ctypes.c_float),
        ("causal", ctypes.c_int), ("dtype", ctypes.c_int),
        ("bug", ctypes.c_int),
        ("q", ctypes.c_void_p), ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p), ("s", ctypes.c_void_p),
        ("o", ctypes.c_void_p), ("lse", ctypes.c_void_p),
        ("dout", ctypes.c_void_p), ("m", ctypes.c_void_p),
        ("br", ctypes.c_int), ("bc", ctypes.c_int),
        ("dq_mode", ctypes.c_int), ("repeat", ctypes.c_int),
        ("grad_q", ctypes.c_void_p), ("grad_k", ctypes.c_void_p),
        ("grad_v", ctypes.c_void_p), ("grad_s", ctypes.c_void_p),
        ("dsum", ctypes.c_void_p),
        ("trace_dk", ctypes.c_void_p), ("trace_dv", ctypes.c_void_p),
        ("trace_dq", ctypes.c_void_p),
        ("nsteps", ctypes.c_long), ("ms", ctypes.c_double),
    ]


class Kernel:
    """ctypes door to teach_bwd (gpu/teach_bwd.h)."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.teach_bwd.restype = ctypes.c_int
        self.lib.teach_bwd.argtypes = [ctypes.POINTER(Job), ctypes.c_char_p,
                                       ctypes.c_size_t]
        self.lib.teach_bwd_steps.restype = ctypes.c_long
        self.lib.teach_bwd_steps.argtypes = [ctypes.c_int] * 5
        self.lib.teach_bwd_step.restype = ctypes.c_long
        self.lib.teach_bwd_step.argtypes = [ctypes.c_int] * 7
        self.err = ctypes.create_string_buffer(512)

    def steps(self, tq, tk, br, bc, causal):
        return self.lib.teach_bwd_steps(tq, tk, br, bc, int(causal))

    def step(self, tq, tk, br, bc, causal, i, j):
        """The step of tile (i, j), or -1 when the mask skips it."""
        return self.lib.teach_bwd_step(tq, tk, br, bc, int(causal), i, j)

    def __call__(self, torch, q, k, v, o, lse, dout, scale, causal, br, bc,
                 dq_mode, bug=0, trace=False, repeat=0):
        """Gradients (and the trace) as CPU float32 tensors."""
        n, tq, d = q.shape
        tk, dv = v.shape[1], v.shape[2]
        ins = [x.detach().to("cpu", torch.float32).contiguous()
               for x in (q, k, v, o, lse, dout)]
        out = {"dq": torch.full((n, tq, d), float("nan")),
               "dk": torch.full((n, tk, d), float("nan")),
               "dv": torch.full((n, tk, dv), float("nan"))}
        nsteps = self.steps(tq, tk, br, bc, causal)
        if trace:
            brc, bcc = min(br, tq), min(bc, tk)
            out["tr_dk"] = torch.full((n, nsteps, bcc, d), float("nan"))
            out["tr_dv"] = torch.full((n, nsteps, bcc, dv), float("nan"))
            out["tr_dq"] = torch.full((n, nsteps, brc, d), float("nan"))
        job = Job(n=n, tq=tq, tk=tk, d=d, dv=dv, scale=scale,
                  causal=int(causal), dtype=0, bug=bug,
                  q=ins[0].data_ptr(), k=ins[1].data_ptr(),
                  v=ins[2].data_ptr(), s=None, o=ins[3].data_ptr(),
                  lse=ins[4].data_ptr(), dout=ins[5].data_ptr(), m=None,
                  br=br, bc=bc, dq_mode=dq_mode, repeat=repeat, grad_q=out["dq"].data_ptr(),
                  grad_k=out["dk"].data_ptr(), grad_v=out["dv"].data_ptr(),
                  grad_s=None, dsum=None,
                  trace_dk=out["tr_dk"].data_ptr() if trace else None,
                  trace_dv=out["tr_dv"].data_ptr() if trace else None,
                  trace_dq=out["tr_dq"].data_ptr() if trace else None)
        if self.lib.teach_bwd(ctypes.byref(job), self.err, len(self.err)):
            raise RuntimeError(self.err.value.decode())
        out["ms"] = job.ms
        return out


def attention(torch, q, k, v, causal, scale):
    """O and lse, bottom-right causal; a row that sees no key gets O = 0
    and lse = -inf, and gradients 0 (no NaN on the way)."""
    tq, tk = q.shape[1], k.shape[1]
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if causal:
        r = torch.arange(tq, device=q.device)[:, None]
        c = torch.arange(tk, device=q.device)[None, :]
        hidden = c > r + (tk - tq)
        s = s.masked_fill(hidden, float("-inf"))
        seen = (~hidden).any(-1)[None, :, None]
        lse = torch.logsumexp(s, -1)
        p = torch.softmax(torch.where(seen, s, torch.zeros_like(s)), -1)
        p = torch.where(seen, p, torch.zeros_like(p))
    else:
        lse = torch.logsumexp(s, -1)
        p = torch.softmax(s, -1)
    return torch.matmul(p, v), lse


def grads(torch, q, k, v, dout, causal, scale, dtype):
    """torch autograd in dtype on the GPU: (dq, dk, dv), O, lse."""
    xs = [x.to("cuda", dtype).requires_grad_() for x in (q, k, v)]
    o, lse = attention(torch, *xs, causal, scale)
    g = torch.autograd.grad(o, xs, dout.to("cuda", dtype))
    return [x.detach() for x in g], o.detach(), lse.detach()


def maxabs(torch, x, ref):
    x = x.to(ref.device, torch.float64)
    if not torch.isfinite(x).all():
        return float("inf")
    return (x - ref).abs().max().item() if ref.numel() else 0.0


def rounding_floor(torch, ref):
    """2 max|fl32(ref + 0.3) - 0.3 - ref|: one float32 rounding at 0.3."""
    r = ref.float()
    return 2 * ((r + 0.3) - 0.3 - r).abs().max().item() if r.numel() else 0.0


# ---- the tensor-core backward (gpu/fast_bwd.cu, --fast LIB) ----

FAST_BWD_ORDERED = 0x1          # gpu/fast_bwd.h
FAST_BWD_NO_SCALE = 0x4

# flash-attention's test_flash_attn_output seqlen pairs (Tq, Tk).
FA_PAIRS = [(113, 203), (128, 217), (113, 211), (108, 256), (256, 512),
            (512, 256), (1024, 1024), (1023, 1024), (1024, 1023),
            (2048, 2048)]


class TcMask(ctypes.Structure):
    """fast.h's struct tc_mask."""
    _fields_ = [("left", ctypes.c_int), ("right", ctypes.c_int),
                ("softcap", ctypes.c_float), ("alibi", ctypes.c_void_p)]


class FastBwd:
    """ctypes door to fast_attention_bwd (gpu/fast_bwd.h), device
    pointers in, on torch's current stream."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        f = self.lib.fast_attention_bwd
        f.restype = ctypes.c_int
        f.argtypes = ([ctypes.c_void_p] * 10 + [ctypes.c_int] * 8 +
                      [ctypes.c_float, ctypes.c_int, ctypes.c_void_p,
                       ctypes.c_char_p, ctypes.c_size_t])
        f = self.lib.fast_attention_bwd_masked
        f.restype = ctypes.c_int
        f.argtypes = ([ctypes.c_void_p] * 10 + [ctypes.c_int] * 7 +
                      [ctypes.POINTER(TcMask), ctypes.c_float, ctypes.c_int,
                       ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t])
        self.lib.fast_bwd_workspace_bytes.restype = ctypes.c_size_t
        self.lib.fast_bwd_workspace_bytes.argtypes = [ctypes.c_int] * 4
        self.err = ctypes.create_string_buffer(512)
        self.ws = None

    def __call__(self, torch, q, k, v, o, lse, dout, dq, dk, dv, causal,
                 flags=0):
        b, h, tq, d = q.shape
        g, tk = k.shape[1], k.shape[2]
        n = self.lib.fast_bwd_workspace_bytes(b, h, tq, d)
        if self.ws is None or self.ws.numel() < n:
            self.ws = torch.empty(n, dtype=torch.uint8, device="cuda")
        dt = 1 if q.dtype == torch.bfloat16 else 0
        rc = self.lib.fast_attention_bwd(
            q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
            dout.data_ptr(), lse.data_ptr(), dq.data_ptr(), dk.data_ptr(),
            dv.data_ptr(), self.ws.data_ptr(), b, h, g, tq, tk, d, dt,
            int(causal), 0.0, flags, torch.cuda.current_stream().cuda_stream,
            self.err, len(self.err))
        if rc:
            raise RuntimeError(self.err.value.decode())

    def masked(self, torch, q, k, v, o, lse, dout, dq, dk, dv, left, right,
               softcap, slopes, flags=0):
        """fast_attention_bwd_masked; slopes a float32 CUDA tensor (H) or
        None."""
        b, h, tq, d = q.shape
        g, tk = k.shape[1], k.shape[2]
        n = self.lib.fast_bwd_workspace_bytes(b, h, tq, d)
        if self.ws is None or self.ws.numel() < n:
            self.ws = torch.empty(n, dtype=torch.uint8, device="cuda")
        dt = 1 if q.dtype == torch.bfloat16 else 0
        m = TcMask(left, right, softcap,
                   slopes.data_ptr() if slopes is not None else None)
        rc = self.lib.fast_attention_bwd_masked(
            q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
            dout.data_ptr(), lse.data_ptr(), dq.data_ptr(), dk.data_ptr(),
            dv.data_ptr(), self.ws.data_ptr(), b, h, g, tq, tk, d, dt,
            ctypes.byref(m), 0.0, flags,
            torch.cuda.current_stream().cuda_stream, self.err, len(self.err))
        if rc:
            raise RuntimeError(self.err.value.decode())


def ruled_attention(torch, q, k, v, left, right, softcap, slopes):
    """O and lse of Q (B, H, Tq, d), K, V (B, G, Tk, d) under the rules
    (mask_rule.h's order: cap, then bias, then the window), in q's dtype;
    a row that sees no key gets O = 0, lse = -inf and no NaN."""
    b, h, tq, d = q.shape
    grp, tk = h // k.shape[1], k.shape[2]
    kk = k.repeat_interleave(grp, 1)
    vv = v.repeat_interleave(grp, 1)
    s = torch.matmul(q, kk.transpose(-1, -2)) / math.sqrt(d)
    if softcap > 0:
        s = softcap * torch.tanh(s / softcap)
    r = torch.arange(tq, device=q.device)[:, None]
    c = torch.arange(tk, device=q.device)[None, :]
    diag = r + (tk - tq)
    if slopes is not None:
        dist = (diag - c).abs().to(s.dtype)
        s = s - slopes.to(s.dtype)[None, :, None, None] * dist
    hidden = torch.zeros(tq, tk, dtype=torch.bool, device=q.device)
    if left >= 0:
        hidden |= c < diag - left
    if right >= 0:
        hidden |= c > diag + right
    s = s.masked_fill(hidden, float("-inf"))
    seen = (~hidden).any(-1)[:, None]
    lse = torch.logsumexp(s, -1)
    p = torch.softmax(torch.where(seen, s, torch.zeros_like(s)), -1)
    p = torch.where(seen, p, torch.zeros_like(p))
    return torch.matmul(p, vv), lse


def ruled_grads(torch, q, k, v, dout, rules, dtype):
    """Autograd of ruled_attention in dtype on the GPU: (dq, dk, dv), and
    O, lse of that forward."""
    xs = [x.to("cuda", dtype).requires_grad_() for x in (q, k, v)]
    left, right, cap, slopes = rules
    o, lse = ruled_attention(torch, *xs, left, right, cap, slopes)
    g = torch.autograd.grad(o, xs, dout.to("cuda", dtype))
    return [x.detach() for x in g], o.detach(), lse.detach()


def fast_rules_accuracy(torch, kern, gen, check, dtypes):
    """The rules through fast_attention_bwd_masked, held to
    flash-attention's rule against float64 autograd (module comment)."""
    cases = [((100, 20, 0.0, False), 300, 257), ((64, -1, 0.0, False), 200,
             333), ((-1, 40, 0.0, False), 129, 300), ((10, 0, 0.0, False),
             300, 140), ((-1, -1, 2.0, False), 213, 190), ((-1, -1, 0.0, True),
             190, 213), ((50, 10, 1.5, True), 256, 300)]
    worst = 0.0
    for n, ((left, right, cap, alibi), tq, tk) in enumerate(cases):
        for d in (64, 128):
            for dt in dtypes:
                b, h, g = (2, 4, 2) if (n + d) % 2 else (1, 3, 1)
                slopes = (torch.tensor([0.3 / 2 ** i for i in range(h)],
                                       device="cuda") if alibi else None)
                rules = (left, right, cap, slopes)
                q = torch.randn(b, h, tq, d, generator=gen).to(dt)
                k = torch.randn(b, g, tk, d, generator=gen).to(dt)
                v = torch.randn(b, g, tk, d, generator=gen).to(dt)
                do = torch.randn(b, h, tq, d, generator=gen).to(dt)
                ref, o64, lse64 = ruled_grads(torch, q, k, v, do, rules,
                                              torch.float64)
                pt = ruled_grads(torch, q, k, v, do, rules, dt)[0]
                qc, kc, vc, dc = (x.cuda() for x in (q, k, v, do))
                o, lse = o64.to(dt).contiguous(), lse64.float().contiguous()
                out = [torch.empty_like(x) for x in (qc, kc, vc)]
                kern.masked(torch, qc, kc, vc, o, lse, dc, *out, left, right,
                            cap, slopes)
                name = "rules (%d, %d) cap %g alibi %d Tq%d Tk%d d%d %s H%d/%d" % (
                    left, right, cap, alibi, tq, tk, d,
                    str(dt).split(".")[-1], h, g)
                for gi, gname in enumerate(("dq", "dk", "dv")):
                    check(not torch.isnan(out[gi]).any(), "%s %s: NaN" %
                          (name, gname))
                    e = maxabs(torch, out[gi], ref[gi])
                    ep = maxabs(torch, pt[gi], ref[gi])
                    atol = rounding_floor(torch, ref[gi])
                    check(e <= 2 * ep + atol, "%s %s: %.3g > 2 x %.3g + %.2g"
                          % (name, gname, e, ep, atol))
                    worst = max(worst, e / (ep + atol))
                empty = torch.isinf(lse[0, 0])
                if empty.any():
                    check(torch.equal(out[0][:, :, empty].float(),
                                      torch.zeros_like(out[0][:, :, empty],
                                                       dtype=torch.float32)),
                          "%s: rows that see no key have dQ != 0" % name)
                if cap > 0:
                    # the planted fault: the kernel told no cap
                    bad = [torch.empty_like(x) for x in (qc, kc, vc)]
                    kern.masked(torch, qc, kc, vc, o, lse, dc, *bad, left,
                                right, 0.0, slopes)
                    e = maxabs(torch, bad[1], ref[1])
                    bound = 2 * maxabs(torch, pt[1], ref[1]) + \
                        rounding_floor(torch, ref[1])
                    check(e > bound, "%s: the kernel without the cap passed "
                          "the rule (dK %.3g <= %.3g)" % (name, e, bound))
    print("accuracy (rules): done, worst ours / torch %.3g" % worst)
    sys.stdout.flush()


def grouped_grads(torch, q, k, v, dout, causal, dtype):
    """Autograd of plain attention in dtype on the GPU, Q (B, H, Tq, d),
    K, V (B, G, Tk, d): (dq, dk, dv).  K/V heads repeated for their
    group, so dK and dV are summed over it; bottom-right causal."""
    xs = [x.to("cuda", dtype).requires_grad_() for x in (q, k, v)]
    b, h, tq, d = q.shape
    grp, tk = h // k.shape[1], k.shape[2]
    kk = xs[1].repeat_interleave(grp, 1).reshape(b * h, tk, d)
    vv = xs[2].repeat_interleave(grp, 1).reshape(b * h, tk, d)
    o, _ = attention(torch, xs[0].reshape(b * h, tq, d), kk, vv, causal,
                     1.0 / math.sqrt(d))
    o = o.reshape(b, h, tq, d)
    return [x.detach() for x in torch.autograd.grad(o, xs,
                                                    dout.to("cuda", dtype))]


def fast_accuracy(torch, kern, gen, check, dtypes):
    """flash-attention's rule on a random grid and its seqlen pairs: our
    error against float64 autograd at most 2x torch's autograd in the
    same dtype (+ one float32 rounding); rows that see no key get dQ = 0;
    the ordered dQ the same bits twice; and the planted fault caught."""
    from benchlib import reference
    rng = torch.Generator().manual_seed(1234)
    grid = [(int(torch.randint(1, 700, (1,), generator=rng)),
             int(torch.randint(1, 700, (1,), generator=rng)))
            for _ in range(6)]
    worst = 0.0
    n = 0
    for pairs, label in ((grid, "random"), (FA_PAIRS, "fa-pairs")):
        for (tq, tk) in pairs:
            for d in (64, 128):
                for causal in (False, True):
                    for dt in dtypes:
                        b, h, g = (2, 4, 2) if n % 2 else (1, 3, 3)
                        n += 1
                        q = torch.randn(b, h, tq, d, generator=gen).to(dt)
                        k = torch.randn(b, g, tk, d, generator=gen).to(dt)
                        v = torch.randn(b, g, tk, d, generator=gen).to(dt)
                        do = torch.randn(b, h, tq, d, generator=gen).to(dt)
                        ref = grouped_grads(torch, q, k, v, do, causal,
                                            torch.float64)
                        pt = grouped_grads(torch, q, k, v, do, causal, dt)
                        qc, kc, vc, dc = (x.cuda() for x in (q, k, v, do))
                        o32, lse = reference(qc, kc, vc, causal)
                        o = o32.to(dt)
                        out = [torch.empty_like(x) for x in (qc, kc, vc)]
                        kern(torch, qc, kc, vc, o, lse, dc, *out, causal)
                        name = "%s Tq%d Tk%d d%d %s %s H%d/%d" % (
                            label, tq, tk, d, "causal" if causal else "full",
                            str(dt).split(".")[-1], h, g)
                        for gi, gname in enumerate(("dq", "dk", "dv")):
                            e = maxabs(torch, out[gi], ref[gi])
                            ep = maxabs(torch, pt[gi], ref[gi])
                            atol = rounding_floor(torch, ref[gi])
                            check(e <= 2 * ep + atol, "%s %s: %.3g > 2 x "
                                  "%.3g + %.2g" % (name, gname, e, ep, atol))
                            worst = max(worst, e / (ep + atol))
                        if causal and tq > tk:
                            check(torch.equal(out[0][:, :, :tq - tk].float(),
                                              torch.zeros(b, h, tq - tk, d,
                                                          device="cuda")),
                                  "%s: rows that see no key have dQ != 0"
                                  % name)
                        if n % 7 == 0:
                            a = [torch.empty_like(x) for x in (qc, kc, vc)]
                            c2 = [torch.empty_like(x) for x in (qc, kc, vc)]
                            kern(torch, qc, kc, vc, o, lse, dc, *a, causal,
                                 FAST_BWD_ORDERED)
                            kern(torch, qc, kc, vc, o, lse, dc, *c2, causal,
                                 FAST_BWD_ORDERED)
                            check(torch.equal(a[0], c2[0]), "%s: ordered dQ "
                                  "differs between runs" % name)
                            e = maxabs(torch, a[0], ref[0])
                            ep = maxabs(torch, pt[0], ref[0])
                            check(e <= 2 * ep + rounding_floor(torch, ref[0]),
                                  "%s ordered dq: %.3g > 2 x %.3g" %
                                  (name, e, ep))
        print("accuracy (%s): done, worst ours / torch %.3g" % (label, worst))
        sys.stdout.flush()
    # The planted fault through the flags: dK without the scale.
    dt = dtypes[0]
    q = torch.randn(1, 2, 256, 64, generator=gen).to(dt)
    k = torch.randn(1, 2, 256, 64, generator=gen).to(dt)
    v = torch.randn(1, 2, 256, 64, generator=gen).to(dt)
    do = torch.randn(1, 2, 256, 64, generator=gen).to(dt)
    ref = grouped_grads(torch, q, k, v, do, False, torch.float64)
    pt = grouped_grads(torch, q, k, v, do, False, dt)
    qc, kc, vc, dc = (x.cuda() for x in (q, k, v, do))
    o32, lse = reference(qc, kc, vc, False)
    out = [torch.empty_like(x) for x in (qc, kc, vc)]
    kern(torch, qc, kc, vc, o32.to(dt), lse, dc, *out, False,
         FAST_BWD_NO_SCALE)
    e = maxabs(torch, out[1], ref[1])
    bound = 2 * maxabs(torch, pt[1], ref[1]) + rounding_floor(torch, ref[1])
    check(e > bound, "the planted fault passed the rule (dK %.3g <= %.3g)"
          % (e, bound))
    print("planted fault (no-scale): dK error %.3g against the rule's %.3g"
          % (e, bound))


def fast_speed(torch, kern, args, dtypes):
    """TFLOP/s of ours (atomic and ordered dQ), torch's flash and cuDNN
    backward: B T = 32768, H = 16, backward flops 2.5 x the forward's 4 B
    H T^2 d (halved for causal); each the median of CUDA-event timings of
    the backward alone (the forward ran once before)."""
    from benchlib import time_each
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    backends = [("flash", SDPBackend.FLASH_ATTENTION),
                ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    print("\n| dtype | d | T | mask | ours | ours ordered | flash | cudnn "
          "| ours/flash | ours/cudnn | ordered cost |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for dt in dtypes:
        for d in args.dims:
            for t in args.sizes:
                for causal in (False, True):
                    b, h = max(1, 32768 // t), 16
                    q = torch.randn(b, h, t, d, device="cuda", dtype=dt)
                    k = torch.randn(b, h, t, d, device="cuda", dtype=dt)
                    v = torch.randn(b, h, t, d, device="cuda", dtype=dt)
                    do = torch.randn(b, h, t, d, device="cuda", dtype=dt)
                    flops = 2.5 * 4.0 * b * h * t * t * d * (
                        0.5 if causal else 1.0)
                    tf = {}
                    for name, be in backends:
                        try:
                            xs = [x.clone().requires_grad_()
                                  for x in (q, k, v)]
                            with sdpa_kernel([be]):
                                o = F.scaled_dot_product_attention(
                                    *xs, is_causal=causal)
                            ms = time_each(lambda: torch.autograd.grad(
                                o, xs, do, retain_graph=True), args.reps)
                            tf[name] = flops / (ms * 1e-3) / 1e12
                            del o, xs
                        except RuntimeError as e:
                            print("%s: %s" % (name, str(e).split("\n")[0]))
                            tf[name] = float("nan")
                    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                        xs = [x.clone().requires_grad_() for x in (q, k, v)]
                        o, lse = torch.ops.aten._scaled_dot_product_flash_attention(
                            *xs, 0.0, causal, False)[:2]
                    o = o.detach().contiguous()
                    lse = lse.detach().float().contiguous()
                    out = [torch.empty_like(x) for x in (q, k, v)]
                    for mode, fl in (("ours", 0),
                                     ("ordered", FAST_BWD_ORDERED)):
                        ms = time_each(lambda: kern(
                            torch, q, k, v, o, lse, do, *out, causal,
                            fl | args.flags), args.reps)
                        tf[mode] = flops / (ms * 1e-3) / 1e12
                    print("| %s | %d | %d | %s | %.1f | %.1f | %.1f | %.1f | "
                          "%.2f | %.2f | %.2fx |" % (
                              str(dt).split(".")[-1], d, t,
                              "causal" if causal else "full", tf["ours"],
                              tf["ordered"], tf["flash"], tf["cudnn"],
                              tf["ours"] / tf["flash"],
                              tf["ours"] / tf["cudnn"],
                              tf["ours"] / tf["ordered"]))
                    sys.stdout.flush()
                    del q, k, v, do, o, lse, out
                    torch.cuda.empty_cache()


def main_fast(args):
    import torch
    from benchlib import torch_setup
    print(torch_setup())
    kern = FastBwd(args.fast)
    gen = torch.Generator().manual_seed(args.seed)
    dtypes = [{"fp16": torch.float16, "bf16": torch.bfloat16}[x]
              for x in args.dtypes]
    fails, checks = [], [0]

    def check(ok, what):
        checks[0] += 1
        if not ok:
            fails.append(what)
            print("FAIL: " + what)
        return ok

    if not args.no_accuracy:
        fast_accuracy(torch, kern, gen, check, dtypes)
        fast_rules_accuracy(torch, kern, gen, check, dtypes)
    if not args.no_speed:
        fast_speed(torch, kern, args, dtypes)
    if fails:
        print("verdict: FAIL, %d of %d checks" % (len(fails), checks[0]))
        return 1
    print("verdict: PASS, all %d checks" % checks[0])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="./libteachbwd.so")
    ap.add_argument("--fast", metavar="LIB", help="the tensor-core backward "
                    "(libfastbwd.so of gpu/fast_bwd.cu and gpu/timing.cu) "
                    "instead of the teaching one")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dtypes", nargs="+", default=["fp16", "bf16"])
    ap.add_argument("--dims", nargs="+", type=int, default=[64, 128])
    ap.add_argument("--sizes", nargs="+", type=int,
                    default=[1024, 4096, 16384])
    ap.add_argument("--no-accuracy", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--flags", type=lambda x: int(x, 0), default=0,
                    help="more fast_bwd.h flags for ours (0x10: Bc = 64)")
    args = ap.parse_args()
    if args.fast:
        return main_fast(args)

    import torch
    from benchlib import torch_setup
    device = torch_setup()
    kern = Kernel(args.lib)
    gen = torch.Generator().manual_seed(args.seed)
    print(device)

    # n (= B*H), Tq, Tk, d, dv, causal, Br, Bc: ragged tiles, Tq != Tk,
    # dv != d, rows that see no key (causal, Tq > Tk), d = 128.
    shapes = [(1, 1, 1, 16, 16, False, 64, 64),
              (2, 17, 33, 16, 16, False, 64, 64),
              (2, 17, 33, 16, 16, True, 8, 4),
              (3, 100, 37, 64, 64, True, 64, 64),
              (2, 128, 128, 64, 64, False, 64, 64),
              (2, 128, 128, 64, 64, True, 64, 64),
              (1, 257, 129, 64, 32, True, 64, 64),
              (4, 1000, 999, 32, 48, True, 64, 32),
              (2, 1024, 1024, 64, 64, False, 64, 64),
              (2, 1024, 1024, 64, 64, True, 64, 64),
              (1, 512, 512, 128, 128, True, 32, 32)]
    rows, fails, checks = [], [], 0

    def check(ok, what):
        nonlocal checks
        checks += 1
        if not ok:
            fails.append(what)
            print("FAIL: " + what)
        return ok

    for (n, tq, tk, d, dv, causal, br, bc) in shapes:
        name = "n%d Tq%d Tk%d d%d dv%d %s %dx%d" % (
            n, tq, tk, d, dv, "causal" if causal else "full", br, bc)
        scale = 1.0 / math.sqrt(d)
        q = torch.randn(n, tq, d, generator=gen)
        k = torch.randn(n, tk, d, generator=gen)
        v = torch.randn(n, tk, dv, generator=gen)
        dout = torch.randn(n, tq, dv, generator=gen)
        ref, _, _ = grads(torch, q, k, v, dout, causal, scale, torch.float64)
        pt, o32, lse32 = grads(torch, q, k, v, dout, causal, scale,
                               torch.float32)
        empty = tq - tk if causal and tq > tk else 0   # rows that see no key
        bits = {}
        for mode in ("atomic", "ordered"):
            ours = kern(torch, q, k, v, o32, lse32, dout, scale, causal, br,
                        bc, DQ_MODES[mode], repeat=args.reps)
            bits[mode] = ours["dq"]
            errs = []
            for gi, gname in enumerate(("dq", "dk", "dv")):
                e_ours = maxabs(torch, ours[gname], ref[gi])
                e_pt = maxabs(torch, pt[gi], ref[gi])
                atol = rounding_floor(torch, ref[gi])
                ok = check(e_ours <= 2 * e_pt + atol,
                           "%s %s %s: %.3g > 2 x %.3g + %.2g" %
                           (name, mode, gname, e_ours, e_pt, atol))
                errs.append((e_ours, e_pt, atol, ok))
            if empty:
                check(torch.equal(ours["dq"][:, :empty],
                                  torch.zeros(n, empty, d)),
                      "%s %s: rows that see no key have dQ != 0" %
                      (name, mode))
            rows.append((name, mode, errs, ours["ms"]))
            again = kern(torch, q, k, v, o32, lse32, dout, scale, causal,
                         br, bc, DQ_MODES[mode])
            differ = (again["dq"] != ours["dq"]).sum().item()
            if mode == "ordered":
                check(differ == 0, "%s: ordered dQ differs between runs in "
                      "%d entries" % (name, differ))
            else:
                print("%s: atomic dQ, a second run differs in %d of %d "
                      "entries" % (name, differ, ours["dq"].numel()))
        sys.stdout.flush()

    # The trace against the final gradients, on a small ragged causal
    # problem, ordered.
    n, tq, tk, d, dv, br, bc = 2, 37, 29, 8, 6, 8, 4
    scale = 1.0 / math.sqrt(d)
    q, k = torch.randn(n, tq, d, generator=gen), torch.randn(n, tk, d,
                                                             generator=gen)
    v, dout = torch.randn(n, tk, dv, generator=gen), torch.randn(
        n, tq, dv, generator=gen)
    _, o32, lse32 = grads(torch, q, k, v, dout, True, scale, torch.float32)
    t = kern(torch, q, k, v, o32, lse32, dout, scale, True, br, bc,
             DQ_MODES["ordered"], trace=True)
    br_, bc_ = min(br, tq), min(bc, tk)
    tr, tc = -(-tq // br_), -(-tk // bc_)
    ok = True
    for j in range(tc):          # key block j ends at row block Tr - 1
        last = kern.step(tq, tk, br, bc, True, tr - 1, j)
        c0, c1 = j * bc_, min((j + 1) * bc_, tk)
        ok &= torch.equal(t["tr_dk"][:, last, :c1 - c0], t["dk"][:, c0:c1])
        ok &= torch.equal(t["tr_dv"][:, last, :c1 - c0], t["dv"][:, c0:c1])
    for i in range(tr):          # row block i ends at its last visible j
        seen = [j for j in range(tc) if kern.step(tq, tk, br, bc, True, i, j)
                >= 0]
        if not seen:
            continue
        last = kern.step(tq, tk, br, bc, True, i, seen[-1])
        r0, r1 = i * br_, min((i + 1) * br_, tq)
        ok &= torch.equal(t["tr_dq"][:, last, :r1 - r0], t["dq"][:, r0:r1])
    check(ok, "the trace disagrees with the final gradients")

    # The planted fault must break the rule for dK.
    n, tq, tk, d, dv = 1, 128, 128, 64, 64
    q, k = torch.randn(n, tq, d, generator=gen), torch.randn(n, tk, d,
                                                             generator=gen)
    v, dout = torch.randn(n, tk, dv, generator=gen), torch.randn(
        n, tq, dv, generator=gen)
    ref, _, _ = grads(torch, q, k, v, dout, False, 0.125, torch.float64)
    pt, o32, lse32 = grads(torch, q, k, v, dout, False, 0.125, torch.float32)
    bad = kern(torch, q, k, v, o32, lse32, dout, 0.125, False, 64, 64,
               DQ_MODES["ordered"], bug=BWD_BUG_NO_SCALE)
    e_bad = maxabs(torch, bad["dk"], ref[1])
    bound = 2 * maxabs(torch, pt[1], ref[1]) + rounding_floor(torch, ref[1])
    check(e_bad > bound, "the planted fault passed the rule (dK %.3g <= %.3g):"
          " the check cannot see a fault" % (e_bad, bound))
    print("planted fault: dK error %.3g against the rule's %.3g (caught: %s)"
          % (e_bad, bound, "yes" if e_bad > bound else "NO"))

    print("\n| shape | dQ | ours ms | dQ ours / torch32 | dK ours / torch32 "
          "| dV ours / torch32 |")
    print("|---|---|---|---|---|---|")
    for (name, mode, errs, ms) in rows:
        cells = ["%.2g / %.2g%s" % (e, p, "" if ok else " FAIL")
                 for (e, p, a, ok) in errs]
        print("| %s | %s | %.3f | %s |" % (name, mode, ms, " | ".join(cells)))
    print("\nerrors are max |x - float64 autograd|; rule: ours <= 2 torch32 "
          "+ one float32 rounding")
    if fails:
        print("verdict: FAIL, %d of %d checks" % (len(fails), checks))
        return 1
    print("verdict: PASS, all %d checks" % checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
