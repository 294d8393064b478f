"""benchlib.py - what the torch comparisons in gpu/bench share.

vs_torch.py (the forward kernels), decode_vs_torch.py and
decode_profile.py (the decoding kernel) and bwd_vs_torch.py (the
teaching backward) import it from their own folder:

- torch_setup(): TF32 off (every reference is plain float32) and the
  device line each script prints first;
- reference(): O and lse in float32 from the same 16-bit inputs,
  grouped heads, the causal mask aligned bottom-right as the kernels
  align it, rows that see no key at O = 0 and lse = -inf;
- rel_err(), lse_err() and TOL, LSE_TOL: how an output is held to it;
- time_each(), time_queued(), time_rounds(): CUDA-event timings;
- sdpa(): torch's scaled_dot_product_attention with one backend;
- Decode: the ctypes door to gpu/decode.h's decode_attention (and to
  the variants' build in the repository's dev/cuda/decode/, where one
  is given).
"""
import ctypes
import math

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel

# rel L2 of O that a correct kernel stays under: fp16 rounds P and O to
# 11 significant bits (2^-11 = 4.9e-4 each), bf16 to 8 (3.9e-3).
TOL = {torch.float16: 2e-3, torch.bfloat16: 1.2e-2}
LSE_TOL = 2e-3
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def dtype_code(dt):
    """The kernels' dtype argument: 0 fp16, 1 bf16."""
    return {torch.float16: 0, torch.bfloat16: 1}[dt]


def torch_setup():
    """TF32 off for matmuls and cuDNN; returns the device line."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    props = torch.cuda.get_device_properties(0)
    return "device: %s, %d SMs, torch %s" % (
        props.name, props.multi_processor_count, torch.__version__)


def reference(q, k, v, causal, chunk_bytes=4 << 30):
    """O and lse in float32 of Q (B, H, Tq, d) against K, V (B, G, Tk, d),
    G dividing H (query head h reads K/V head h / (H/G)), the causal mask
    bottom-right (row r sees key c when c <= r + Tk - Tq).  The H/G heads
    of a group are one matrix of rows, cut so that no score matrix is
    over chunk_bytes."""
    b, h, tq, d = q.shape
    g, tk = k.shape[1], k.shape[2]
    grp = h // g
    scale = 1.0 / math.sqrt(d)
    o = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    lse = torch.empty((b, h, tq), dtype=torch.float32, device=q.device)
    rows = grp * tq
    per = max(1, chunk_bytes // (tk * 4))
    c = torch.arange(tk, device=q.device)
    for bi in range(b):
        for gi in range(g):
            # rows of a group: (hh, pos), hh major
            qq = q[bi, gi * grp:(gi + 1) * grp].float().reshape(rows, d)
            kk = k[bi, gi].float()
            vv = v[bi, gi].float()
            oo = o[bi, gi * grp:(gi + 1) * grp].view(rows, d)
            ll = lse[bi, gi * grp:(gi + 1) * grp].view(rows)
            for r0 in range(0, rows, per):
                r1 = min(rows, r0 + per)
                s = torch.matmul(qq[r0:r1], kk.transpose(0, 1)) * scale
                if causal:
                    pos = torch.arange(r0, r1, device=q.device) % tq
                    s.masked_fill_(c[None, :] > pos[:, None] + (tk - tq),
                                   float("-inf"))
                m = torch.logsumexp(s, dim=-1)
                p = torch.nan_to_num(torch.exp(s - m[:, None]), nan=0.0)
                oo[r0:r1] = torch.matmul(p, vv)
                ll[r0:r1] = m
                del s, p
    return o, lse


def rel_err(out, ref):
    """||out - ref|| / ||ref||, inf when out has a NaN or inf."""
    out = out.float()
    if not torch.isfinite(out).all():
        return float("inf")
    return (torch.linalg.vector_norm(out - ref) /
            torch.linalg.vector_norm(ref).clamp_min(1e-30)).item()


def lse_err(out, ref):
    """max |out - ref|, where a -inf row of ref must be -inf in out."""
    same_inf = torch.isinf(ref) & (out == ref)
    diff = torch.where(same_inf, torch.zeros_like(ref), (out - ref).abs())
    if torch.isnan(diff).any():
        return float("inf")
    return diff.max().item()


def rounding_floor(ref):
    """One rounding at ref's scale (flash-attention's later atol)."""
    return 2 * (ref + 0.3 - 0.3 - ref).abs().max().item()


def flash_rule(o, lse, same, ref, ref_lse):
    """flash-attention's rule for a forward: (ok, error of o, error of
    same (torch's kernel in o's dtype), lse error).  ok: o within twice
    torch's error plus one rounding, lse within LSE_TOL relative, and
    rows that see no key (ref_lse -inf) with lse -inf and O 0."""
    err = (o.double() - ref).abs().max().item()
    terr = (same.double() - ref).abs().max().item()
    empty = torch.isinf(ref_lse)
    lse_ok = bool((torch.isinf(lse[empty]) & (lse[empty] < 0)).all())
    ld = (lse.double() - ref_lse).abs()[~empty]
    lerr = (ld / ref_lse[~empty].abs().clamp_min(1.0)).max().item() \
        if ld.numel() > 0 else 0.0
    ok = (math.isfinite(err) and err <= 2 * terr + rounding_floor(ref) and
          lerr <= LSE_TOL and lse_ok and
          bool((o[empty.unsqueeze(-1).expand_as(o)] == 0).all()))
    return ok, err, terr, lerr


def median(ts):
    ts = sorted(ts)
    return ts[len(ts) // 2]


def time_each(fn, reps):
    """Median GPU time (ms) of reps calls of fn(), each between its own
    two events, after three warm-up calls: for calls long enough that
    Python's overhead between them does not matter."""
    for _ in range(3):
        fn()
    ev = [(torch.cuda.Event(enable_timing=True),
           torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for e0, e1 in ev:
        e0.record()
        fn()
        e1.record()
    torch.cuda.synchronize()
    return median([e0.elapsed_time(e1) for e0, e1 in ev])


def time_queued(fn, copies, reps):
    """GPU times (ms) of reps calls of fn(copy), copy cycling through
    copies, queued behind a sleep kernel so the GPU runs them back to
    back, not at the pace Python issues them; three warm-up calls."""
    for i in range(3):
        fn(copies[i % len(copies)])
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
    torch.cuda._sleep(40_000_000)       # about 20 ms: the queue fills
    for i in range(reps):
        ev[i].record()
        fn(copies[i % len(copies)])
    ev[reps].record()
    torch.cuda.synchronize()
    return [ev[i].elapsed_time(ev[i + 1]) for i in range(reps)]


def time_rounds(calls, copies, reps, rounds):
    """calls: name -> fn(copy).  Round r times them all (time_queued),
    starting at the r-th; each name's median over all its calls."""
    names = list(calls)
    samples = {n: [] for n in names}
    for r in range(rounds):
        for i in range(len(names)):
            n = names[(r + i) % len(names)]
            samples[n] += time_queued(calls[n], copies, reps)
    return {n: median(samples[n]) for n in names}


def sdpa(backend, q, k, v, causal=False, gqa=False):
    """torch's SDPA with this backend alone."""
    with sdpa_kernel([backend]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                              enable_gqa=gqa)


class DecodeResult(ctypes.Structure):
    """struct decode_result (gpu/decode.h), field for field."""
    _fields_ = [("splits", ctypes.c_int), ("ring", ctypes.c_int)]


class Decode:
    """ctypes door to decode_attention (gpu/decode.h), from a library
    built of gpu/decode.cu and gpu/decode_ranges.c; or, where the library
    is dev/cuda/decode's libdecode_variants.so, to
    decode_variant_attention, which also takes a variant (0 the product's
    choice; self.variants lists them)."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        head = [ctypes.c_void_p] * 5 + [ctypes.c_int] * 8 + [ctypes.c_float]
        tail = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                ctypes.POINTER(DecodeResult), ctypes.c_char_p,
                ctypes.c_size_t]
        try:
            self.fn = self.lib.decode_variant_attention
            self.fn.argtypes = head + [ctypes.c_int] * 2 + tail
            self.variants = tuple(range(10))
        except AttributeError:
            self.fn = self.lib.decode_attention
            self.fn.argtypes = head + [ctypes.c_int] + tail
            self.variants = (0,)
        self.fn.restype = ctypes.c_int
        self.lib.decode_workspace_bytes.restype = ctypes.c_size_t
        self.lib.decode_workspace_bytes.argtypes = [ctypes.c_int] * 6
        self.err = ctypes.create_string_buffer(256)
        self.res = DecodeResult()
        self.ws = None

    def workspace(self, b, h, g, tq, tk, splits):
        n = self.lib.decode_workspace_bytes(b, h, g, tq, tk, splits)
        if self.ws is None or self.ws.numel() < n:
            self.ws = torch.zeros(n, dtype=torch.uint8, device="cuda")
        return self.ws

    def __call__(self, q, k, v, o, lse, causal=False, splits=0, variant=0):
        b, h, tq, d = q.shape
        g, tk = k.shape[1], k.shape[2]
        if variant not in self.variants:
            raise ValueError("variant %d: this library has %s (the variants "
                             "are dev/cuda/decode's build)" %
                             (variant, ",".join(map(str, self.variants))))
        ws = self.workspace(b, h, g, tq, tk, splits)
        args = [q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                lse.data_ptr() if lse is not None else None, b, h, g, tq, tk,
                d, dtype_code(q.dtype), int(causal), 0.0, splits]
        if len(self.variants) > 1:
            args.append(variant)
        rc = self.fn(*args, ws.data_ptr(), ws.numel(),
                     torch.cuda.current_stream().cuda_stream,
                     ctypes.byref(self.res), self.err, len(self.err))
        if rc != 0:
            raise RuntimeError(self.err.value.decode())

    def splits(self):
        """The key ranges the last call ran."""
        return self.res.splits

    def paged(self, q, kpool, vpool, table, tk, o, lse, causal=False,
              splits=0, seqlens=None):
        """decode_attention_kv: K and V a pool (pages, page_size, G, d),
        table (B, max_pages) int32, seqlens (B) int32 or None."""
        if not hasattr(self, "fn_kv"):
            self.fn_kv = self.lib.decode_attention_kv
            self.fn_kv.argtypes = (
                [ctypes.c_void_p] * 5 + [ctypes.c_int] * 8 +
                [ctypes.c_float, ctypes.c_int, ctypes.c_void_p,
                 ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                 ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                 ctypes.POINTER(DecodeResult), ctypes.c_char_p,
                 ctypes.c_size_t])
            self.fn_kv.restype = ctypes.c_int
        b, h, tq, d = q.shape
        g, ps = kpool.shape[2], kpool.shape[1]
        ws = self.workspace(b, h, g, tq, tk, splits)
        rc = self.fn_kv(q.data_ptr(), kpool.data_ptr(), vpool.data_ptr(),
                        o.data_ptr(),
                        lse.data_ptr() if lse is not None else None, b, h, g,
                        tq, tk, d, dtype_code(q.dtype), int(causal), 0.0,
                        splits,
                        seqlens.data_ptr() if seqlens is not None else None,
                        table.data_ptr(), ps, table.shape[1], ws.data_ptr(),
                        ws.numel(), torch.cuda.current_stream().cuda_stream,
                        ctypes.byref(self.res), self.err, len(self.err))
        if rc != 0:
            raise RuntimeError(self.err.value.decode())
