#!/usr/bin/env python3
"""decode_vs_torch.py - the decoding kernel against torch's SDPA, side by side.

Runs our decode kernel (libdecode.so, built from gpu/decode.cu and its
launch arithmetic gpu/decode_ranges.c, called through ctypes with torch
tensors' device pointers) and torch's scaled_dot_product_attention with
each backend that runs (flash, cuDNN, memory-efficient, math) on the
same decode shapes in the same process, checks every output against a
float32 reference, and prints one table.

  nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -shared \\
      -Xcompiler -fPIC -Isrc -Igpu gpu/decode.cu gpu/decode_ranges.c \\
      -o libdecode.so
  python3 gpu/bench/decode_vs_torch.py --lib ./libdecode.so

With the variants' library (make -C dev/cuda/decode, in the repository
and not the tarball: the ways of feeding the loop that the product's
kernel was measured against) as --lib, every variant is timed and
checked too, and one more table gives them all.

Shapes: batch 1 and 8, 32 query heads on 32 and on 8 K/V
heads (enable_gqa), Tk in 4096, 32768, 131072, d = 128, fp16 and bf16,
one query row.  Bandwidth counts the bytes of K and V read once,
2 B G Tk d 2, against the H200's 4.8 TB/s.

Timing: each call between two CUDA events, queued behind a sleep kernel
so the GPU runs the calls back to back, not at the pace Python issues
them (a decode call takes microseconds, Python's call overhead is about
as long); three warm-up calls first.  Each call reads another copy of K
and V, cycling through up to 16 copies that together exceed 256 MB, four
times the H200's 60 MB L2: no call finds its K and V in L2 from the calls
before.  torch runs under the same scheme.

Order: what ran just before a measurement changes it.  After a long
heavy run (torch's unfused math path spends 0.4 to 1.7 s on one of the
large shapes) the calls of the next tenth of a second or so ran up to
12 % slower on the H200: one kernel timed twice in a row took 0.144,
then 0.128 ms.  A fixed order favours whoever is timed last.  So a
shape's contenders (our variants, torch's fused backends) are timed in
--rounds rounds of --reps calls, each round starting one contender
further on, and each contender's figure is the median of all its
calls; the unfused math path, only a reference point, is timed in a
pass of its own after every shape.

Correctness: ||O - ref|| / ||ref|| over the whole tensor with the
reference in float32 from the same 16-bit inputs (TF32 off), against
2e-3 (fp16) and 1.2e-2 (bf16): O is rounded to 11 and 8 bits.  lse as
max |lse - ref| <= 2e-3.  Small ragged shapes (Tq > 1, causal, rows that
see no key, more packed rows than a block holds, every split count) are
checked too.

--paged times the paged decode (decode_attention_kv: K and V in a pool
of pages of 16, 64 and 256 keys, flash_attn_with_kvcache's layout
(pages, page_size, G, d), through a shuffled block table) beside the
contiguous call on the same keys: TB/s of both and the paged/contiguous
time (the aim: within 1.10), and checks that the paged O and lse are the
contiguous ones' bits.
"""
import argparse
import json
import sys

import torch
from torch.nn.attention import SDPBackend

from benchlib import (LSE_TOL, TOL, DTYPES, Decode, median, reference,
                      rel_err, lse_err, sdpa, time_queued, time_rounds,
                      torch_setup)

PEAK = 4.8e12
L2_DEFEAT = 256 << 20
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("math", SDPBackend.MATH)]


def edge_cases(dec):
    """Small shapes: every path of the kernel against the reference."""
    shapes = [  # B, H, G, Tq, Tk, causal, splits
        (1, 1, 1, 1, 1, False, 0), (1, 1, 1, 1, 7, False, 3),
        (2, 4, 2, 3, 37, True, 0), (1, 8, 1, 5, 300, True, 0),
        (3, 6, 3, 1, 1000, False, 0), (1, 32, 8, 1, 129, False, 0),
        (2, 2, 2, 7, 5, True, 0), (2, 2, 2, 7, 5, True, 2),
        (1, 32, 8, 1, 5000, False, 1), (1, 32, 8, 1, 5000, False, 7),
        (1, 32, 8, 1, 70000, False, 256), (4, 16, 2, 2, 999, True, 0),
        (1, 12, 4, 2, 4096, False, 0), (2, 32, 32, 1, 3000, False, 0),
    ]
    fails, worst = 0, 0.0
    for dt in (torch.float16, torch.bfloat16):
        for (b, h, g, tq, tk, causal, splits) in shapes:
            for variant in dec.variants:
                q = torch.randn(b, h, tq, 128, dtype=dt, device="cuda")
                k = torch.randn(b, g, tk, 128, dtype=dt, device="cuda")
                v = torch.randn(b, g, tk, 128, dtype=dt, device="cuda")
                ro, rl = reference(q, k, v, causal)
                o = torch.full_like(q, float("nan"))
                lse = torch.full((b, h, tq), float("nan"), device="cuda")
                dec(q, k, v, o, lse, causal, splits, variant)
                torch.cuda.synchronize()
                e, le = rel_err(o, ro), lse_err(lse, rl)
                worst = max(worst, e / TOL[dt])
                if not (e <= TOL[dt] and le <= LSE_TOL):
                    fails += 1
                    print("EDGE FAIL %s B%d H%d G%d Tq%d Tk%d %s splits=%d "
                          "(ran %d) v%d: rel %.2e lse %.2e" %
                          (str(dt)[6:], b, h, g, tq, tk,
                           "causal" if causal else "full", splits,
                           dec.splits(), variant, e, le))
    print("edge shapes: %d failures, worst rel err %.2f of tolerance" %
          (fails, worst))
    return fails


def timed_shapes(args, dts):
    """The timed shapes of --dtypes, --batch, --kv, --tk (32 query heads,
    d = 128, one query row): for each, its names, Q, and as many copies
    of K and V as take the calls past L2 (the first is the checked one),
    and the bytes of K and V a call reads."""
    h, d = 32, 128
    for dname in args.dtypes.split(","):
        dt = dts[dname]
        for b in [int(x) for x in args.batch.split(",")]:
            for g in [int(x) for x in args.kv.split(",")]:
                for tk in [int(x) for x in args.tk.split(",")]:
                    kv_bytes = 2 * b * g * tk * d * 2
                    ncopy = max(1, min(16, -(-L2_DEFEAT // kv_bytes)))
                    q = torch.randn(b, h, 1, d, dtype=dt, device="cuda")
                    copies = [(torch.randn(b, g, tk, d, dtype=dt,
                                           device="cuda"),
                               torch.randn(b, g, tk, d, dtype=dt,
                                           device="cuda"))
                              for _ in range(ncopy)]
                    yield dname, b, h, g, tk, kv_bytes, q, copies
                    del q, copies   # the caller has let go of its own
                    torch.cuda.empty_cache()


def sweep(dec, args, dts):
    """Our kernel alone: each variant at each key-range count, TB/s."""
    variants = [int(x) for x in args.variants.split(",")]
    counts = [int(x) for x in args.sweep.split(",")]
    print("sweep (TB/s; columns: key ranges asked, 0 the kernel's choice)")
    print("| dtype | B | G | Tk | variant | " +
          " | ".join(str(c) for c in counts) + " |")
    for dname, b, h, g, tk, kv_bytes, q, copies in timed_shapes(args, dts):
        o = torch.empty_like(q)
        lse = torch.empty((b, h, 1), device="cuda")
        for variant in variants:
            cells = []
            for c in counts:
                ms = median(time_queued(lambda kv: dec(q, kv[0], kv[1], o,
                                                       lse, False, c, variant),
                                        copies, args.reps))
                cells.append("%.2f (%d)" % (kv_bytes / (ms * 1e-3) / 1e12,
                                            dec.splits()))
            print("| %s | %d | %d | %d | v%d | %s |" % (
                dname, b, g, tk, variant, " | ".join(cells)))
            sys.stdout.flush()
        del q, copies, o, lse


def to_pool(k, ps, perm):
    """Contiguous (B, G, Tk, d) as a pool (B max_pages, ps, G, d) whose
    page i of entry b lies at perm[b max_pages + i], and its table."""
    b, g, tk, d = k.shape
    pages = -(-tk // ps)
    pad = torch.zeros(b, g, pages * ps, d, dtype=k.dtype, device=k.device)
    pad[:, :, :tk] = k
    pool = torch.empty(b * pages, ps, g, d, dtype=k.dtype, device=k.device)
    pool[perm] = pad.view(b, g, pages, ps, d).permute(0, 2, 3, 1, 4).reshape(
        b * pages, ps, g, d)
    return pool, perm.view(b, pages).to(torch.int32)


def paged(dec, args, dts):
    """--paged: the paged decode (pages of 16, 64, 256, a shuffled table)
    beside the contiguous one on the same keys, TB/s and paged/contiguous
    time, and the paged output checked equal to the contiguous output."""
    fails = 0
    print("| dtype | B | G | Tk | contiguous TB/s | page | paged TB/s | "
          "paged/contiguous time | same bits |")
    print("|---" * 9 + "|")
    for dname, b, h, g, tk, kv_bytes, q, copies in timed_shapes(args, dts):
        o = torch.empty_like(q)
        lse = torch.empty((b, h, 1), device="cuda")
        dec(q, copies[0][0], copies[0][1], o, lse)
        torch.cuda.synchronize()
        o_ref, lse_ref = o.clone(), lse.clone()
        for ps in (16, 64, 256):
            pages = -(-tk // ps)
            gen = torch.Generator(device="cuda").manual_seed(ps)
            perm = torch.randperm(b * pages, device="cuda", generator=gen)
            pools = []
            for k, v in copies:
                kp, table = to_pool(k, ps, perm)
                vp, _ = to_pool(v, ps, perm)
                pools.append((kp, vp))
            o.fill_(float("nan"))
            lse.fill_(float("nan"))
            dec.paged(q, pools[0][0], pools[0][1], table, tk, o, lse)
            torch.cuda.synchronize()
            same = torch.equal(o, o_ref) and torch.equal(lse, lse_ref)
            fails += not same
            idx = list(range(len(copies)))
            times = time_rounds({
                "contiguous": lambda i: dec(q, copies[i][0], copies[i][1],
                                            o, lse),
                "paged": lambda i: dec.paged(q, pools[i][0], pools[i][1],
                                             table, tk, o, lse)},
                idx, args.reps, args.rounds)
            c, p = times["contiguous"], times["paged"]
            print("| %s | %d | %d | %d | %.2f | %d | %.2f | %.3f%s | %s |" % (
                dname, b, g, tk, kv_bytes / (c * 1e-3) / 1e12, ps,
                kv_bytes / (p * 1e-3) / 1e12, p / c,
                "" if p / c <= 1.10 else " (over 1.10)",
                "yes" if same else "NO"))
            sys.stdout.flush()
            del pools, perm, table
            torch.cuda.empty_cache()
        del q, copies, o, lse, o_ref, lse_ref
    print("\npaged output: %s" % ("the contiguous output's bits" if fails == 0
                                  else "%d DIFFERED" % fails))
    return fails


def torch_call(q, gqa, backend):
    """fn(copy): torch's SDPA on that copy of K and V with one backend."""
    return lambda kv: sdpa(backend, q, kv[0], kv[1], gqa=gqa)


def time_math(rows, args, dts):
    """The unfused path, after every shape's rounds: its long runs slow
    the calls that follow them."""
    shapes = {(r["dtype"], r["B"], r["G"], r["Tk"]): r for r in rows}
    for dname, b, h, g, tk, kv_bytes, q, copies in timed_shapes(args, dts):
        r = shapes[(dname, b, g, tk)]
        if "rel" not in r.get("math", {}):
            continue
        ms = median(time_queued(torch_call(q, g != h, SDPBackend.MATH),
                                copies, args.reps))
        r["math"].update(ms=ms, tbs=kv_bytes / (ms * 1e-3) / 1e12)
        del q, copies


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="./libdecode.so")
    ap.add_argument("--reps", type=int, default=30,
                    help="calls a contender a round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dtypes", default="fp16,bf16")
    ap.add_argument("--tk", default="4096,32768,131072")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--kv", default="32,8")
    ap.add_argument("--json", default=None, help="write the rows here")
    ap.add_argument("--no-edge", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--sweep", default=None, metavar="N,N,...",
                    help="instead: time our kernel alone at these key-range "
                    "counts (0 its own choice), the --variants given")
    ap.add_argument("--variants", default=None,
                    help="the variants timed (0, the default, always; the "
                    "others need dev/cuda/decode's library; default: every "
                    "one the library has)")
    ap.add_argument("--paged", action="store_true",
                    help="instead: the paged decode (pages of 16, 64, 256) "
                    "beside the contiguous one (defaults: fp16, G 8, batch "
                    "1,2,4,8, Tk 32768,131072)")
    ap.add_argument("--backends", default=",".join(n for n, _ in BACKENDS),
                    help="torch's backends run (math's long runs take "
                    "seconds at the large shapes)")
    args = ap.parse_args()
    if args.paged:
        for name, value in (("dtypes", "fp16"), ("kv", "8"),
                            ("batch", "1,2,4,8"), ("tk", "32768,131072")):
            if getattr(args, name) == ap.get_default(name):
                setattr(args, name, value)
    BACKENDS[:] = [(n, b) for n, b in BACKENDS
                   if n in args.backends.split(",")]

    print(torch_setup())
    dec = Decode(args.lib)
    if args.variants is None:
        args.variants = ",".join(map(str, dec.variants))
    sys.stdout.flush()
    fails = 0 if args.no_edge else edge_cases(dec)
    sys.stdout.flush()

    dts = DTYPES
    if args.paged:
        return 1 if fails + paged(dec, args, dts) else 0
    if args.sweep:
        sweep(dec, args, dts)
        return 0
    variants = [int(x) for x in args.variants.split(",")]
    if variants[0] != 0:
        variants.insert(0, 0)           # the table's "ours" is the default
    rows = []
    for dname, b, h, g, tk, kv_bytes, q, copies in timed_shapes(args, dts):
        dt = q.dtype
        k, v = copies[0]
        ro, rl = reference(q, k, v, False)
        o = torch.empty_like(q)
        lse = torch.empty((b, h, 1), device="cuda")
        row = {"dtype": dname, "B": b, "H": h, "G": g, "Tk": tk,
               "kv_bytes": kv_bytes, "copies": len(copies)}
        calls = {}
        for variant in variants:
            o.fill_(float("nan"))
            lse.fill_(float("nan"))
            dec(q, k, v, o, lse, False, 0, variant)
            torch.cuda.synchronize()
            e, le = rel_err(o, ro), lse_err(lse, rl)
            ok = e <= TOL[dt] and le <= LSE_TOL
            fails += not ok
            row["v%d" % variant] = {"splits": dec.splits(), "rel": e,
                                    "lse": le, "ok": ok}
            calls["v%d" % variant] = (
                lambda kv, variant=variant: dec(q, kv[0], kv[1], o, lse,
                                                False, 0, variant))
        for name, bk in ([] if args.no_torch else BACKENDS):
            try:
                out = sdpa(bk, q, k, v, gqa=(g != h))
                torch.cuda.synchronize()
                row[name] = {"rel": rel_err(out, ro)}
                del out
            except (RuntimeError, torch.OutOfMemoryError) as x:
                row[name] = {"error": str(x).split("\n")[0][:90]}
                torch.cuda.empty_cache()
                continue
            if name != "math":      # timed in a pass of its own
                calls[name] = torch_call(q, g != h, bk)
        for name, ms in time_rounds(calls, copies, args.reps,
                                    args.rounds).items():
            row[name]["ms"] = ms
            row[name]["tbs"] = kv_bytes / (ms * 1e-3) / 1e12
        rows.append(row)
        v0 = row["v0"]
        print("%s B%d G%d Tk%d: ours %.4f ms %d splits %.2f TB/s "
              "rel %.1e%s | %s | %s" %
              (dname, b, g, tk, v0["ms"], v0["splits"], v0["tbs"],
               v0["rel"], "" if v0["ok"] else " FAIL",
               " ".join("v%d %.4f" % (x, row["v%d" % x]["ms"])
                        for x in variants[1:]),
               " ".join("%s %s" % (n, "%.4f" % row[n]["ms"]
                                   if "ms" in row[n] else "-")
                        for n, _ in BACKENDS if n in row)))
        sys.stdout.flush()
        del q, copies, k, v, ro, rl, o, lse

    if not args.no_torch:
        time_math(rows, args, dts)

    label = {"flash": "flash", "cudnn": "cuDNN", "efficient": "eff.",
             "math": "math"}
    names = [label[n] for n, _ in BACKENDS]
    print("\n| dtype | B | G | Tk | ours ms | splits | TB/s | % of 4.8 | " +
          "".join("%s ms | " % n for n in names) +
          "".join("%s/ours | " % n for n in names) + "rel err |")
    print("|---" * (9 + 2 * len(names)) + "|")
    for r in rows:
        v0 = r["v0"]
        cells = []
        ratios = []
        for n, _ in BACKENDS:
            t = r.get(n, {})
            cells.append("%.4f" % t["ms"] if "ms" in t else "-")
            ratios.append("%.3f" % (t["ms"] / v0["ms"]) if "ms" in t else "-")
        print("| %s | %d | %d | %d | %.4f | %d | %.2f | %.0f%% | %s | %s | "
              "%.1e%s |" % (r["dtype"], r["B"], r["G"], r["Tk"], v0["ms"],
                            v0["splits"], v0["tbs"],
                            100 * v0["tbs"] * 1e12 / PEAK,
                            " | ".join(cells), " | ".join(ratios), v0["rel"],
                            "" if v0["ok"] else " FAIL"))
    if len(variants) > 1:
        print("\nevery variant (TB/s; 1 registers 4 warps, 2 registers 8 "
              "warps, 3 staged 4 warps, 4 staged 8 warps, 5 tensor cores 4 "
              "warps, 6 tensor cores 8 warps, 7 that with the L2 head "
              "start, 8 variant 2 with it, 9 tensor cores fed by a ring):")
        print("| dtype | B | G | Tk | " +
              " | ".join("v%d" % x for x in variants) + " | splits v1.. |")
        print("|---|---|---|---|" + "---|" * (len(variants) + 1))
        for r in rows:
            print("| %s | %d | %d | %d | %s | %s |" % (
                r["dtype"], r["B"], r["G"], r["Tk"],
                " | ".join("%.2f%s" % (r["v%d" % x]["tbs"],
                                       "" if r["v%d" % x]["ok"] else " FAIL")
                           for x in variants),
                ",".join(str(r["v%d" % x]["splits"]) for x in variants[1:])))
    for n, _ in BACKENDS:
        errs = set(r[n]["error"] for r in rows if "error" in r.get(n, {}))
        for x in errs:
            print("%s did not run on some shapes: %s" % (n, x))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print("\ncorrectness: %s" % ("all passed" if fails == 0 else
                                 "%d FAILED" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
