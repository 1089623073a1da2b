#!/usr/bin/env python3
# Regenerates tests/data/tlsf_goldens.txt: random alloc/free sequences run on the reference's TLSFAllocator
# (runtime/support/memory.py), the allocator memory_plan_rewrite suballocates arenas with.
#   cd <tinygrad a9069c17> && python3 <repo>/tests/parity/gen_tlsf_goldens.py <repo>/tests/data/tlsf_goldens.txt
# Format: "seq <size> <base> <block_size> <lv2_cnt>" starts a sequence; then "a <req_size> <align> <offset|E>" (E: the
# reference raised MemoryError) and "f <offset>".
import os, sys, random
sys.path.insert(0, os.getcwd())
from tinygrad.runtime.support.memory import TLSFAllocator

out = open(sys.argv[1] if len(sys.argv) > 1 else "tlsf_goldens.txt", "w")
out.write("# written by tests/parity/gen_tlsf_goldens.py from tinygrad a9069c17 runtime/support/memory.py\n")
rng = random.Random(1337)
configs = [(1 << 20, 0, 256, 32), (1 << 16, 0, 16, 16), (100000, 4096, 256, 32), (1 << 24, 0, 256, 32), (5000, 0, 16, 8)]
for size, base, bs, lv2 in configs:
  for _ in range(8):
    a = TLSFAllocator(size, base=base, block_size=bs, lv2_cnt=lv2)
    out.write(f"seq {size} {base} {bs} {lv2}\n")
    live = []
    for _ in range(200):
      if live and rng.random() < 0.45:
        off = live.pop(rng.randrange(len(live)))
        a.free(off)
        out.write(f"f {off}\n")
      else:
        req = rng.choice([rng.randint(1, 64), rng.randint(1, 4096), rng.randint(1, size // 8), rng.randint(1, size // 3)])
        align = rng.choice([1, 1, 1, 16, 256, 4096])
        try:
          off = a.alloc(req, align)
          live.append(off)
          out.write(f"a {req} {align} {off}\n")
        except MemoryError:
          out.write(f"a {req} {align} E\n")
print("ok")
