#!/usr/bin/env python3
"""ptx_same.py - do two PTX files hold the same kernels, instruction for
instruction?  For a change to gpu/decode.cu that should move code but not
change it (its kernels' template parameters, the host side):

  nvcc -ptx -arch=compute_90 -O3 -std=c++17 -Isrc -Igpu gpu/decode.cu -o new.ptx
  python3 dev/cuda/decode/ptx_same.py old.ptx new.ptx [OLD=NEW ...]

Each entry of new.ptx is compared with the entry of old.ptx of the same
demangled name (after the OLD=NEW renames, plain text substitutions of
the new name, e.g. "decode_kernel<0, 1, 8>=decode_kernel<0, 1, 8, false,
true>"), with basic-block labels and the mangled names of function-local
shared variables set aside: those follow a kernel's place in the file
and its mangled name.  Prints each entry that differs; exits 1 if any
does or has no counterpart.
"""
import re
import subprocess
import sys


def entries(path):
    txt = open(path).read()
    out = {}
    for m in re.finditer(r'^\.visible \.entry (\S+)\(.*?^\}', txt,
                         re.S | re.M):
        name = m.group(1)
        dem = subprocess.run(["c++filt", name], capture_output=True,
                             text=True).stdout.strip()
        body = m.group(0).replace(name, "KERNEL")
        body = re.sub(r"\$L__BB\d+_", "$L__BB_", body)
        out[dem] = re.sub(r"_ZZ\w+", "SHARED", body)
    return out


def main():
    old, new = entries(sys.argv[1]), entries(sys.argv[2])
    renames = [a.split("=", 1) for a in sys.argv[3:]]
    bad = 0
    for name, body in sorted(new.items()):
        key = name
        for a, b in renames:
            key = key.replace(a, b)
        if key not in old:
            print("no counterpart: %s (as %s)" % (name, key))
            bad += 1
        elif old[key] != body:
            print("differs: %s" % name)
            bad += 1
    print("%d of %d entries the same" % (len(new) - bad, len(new)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
