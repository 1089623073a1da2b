#!/usr/bin/env python3
# Regenerates tests/data/cl_barrier_goldens.txt: the OpenCL source the reference renders for reduces its hand-coded
# optimizer groups across a workgroup (GROUPTOP: partial sums in __local memory, a barrier, then one thread's sum),
# for tests/parity/test_cl_goldens.cpp. Run from a checkout of tinygrad a9069c17 with PoCL (or any OpenCL device):
#   cd <tinygrad> && PYTHONPATH=. python3 <repo>/tests/parity/gen_cl_barrier_goldens.py > <repo>/tests/data/cl_barrier_goldens.txt
# Format: "case <name>" (the program below), then per kernel "kernel <name without colours> <n>" and its n source lines.
import os, re
os.environ["DEV"] = "CL"
os.environ.setdefault("PARALLEL", "0")
from tinygrad import Tensor
import tinygrad.engine.realize as ER

got = []
orig = ER.to_program
def recording(ast, renderer):
  prg = orig(ast, renderer)
  got.append(prg)
  return prg
ER.to_program = recording

cases = {
  "sum1024": lambda x: x.sum(),                        # one output: a 16-wide workgroup, partial sums, a barrier
  "sum64x16": lambda x: x.reshape(64, 16).sum(axis=0),  # 16 outputs reduced over 64
}
print("# OpenCL sources of grouped reduces from tinygrad a9069c17 (DEV=CL, OpenCLRenderer); x[i] = i % 7 as float32")
for name, f in cases.items():
  x = Tensor([float(i % 7) for i in range(1024)]).realize()
  got.clear()
  f(x).realize()
  print(f"case {name}")
  for prg in got:
    src = next(s.arg for s in prg.src if s.op.name == "SOURCE").splitlines()
    kname = re.sub(r"\x1b\[[0-9;]*m", "", prg.arg.name)
    print(f"kernel {kname} {len(src)}")
    for line in src: print(line)
