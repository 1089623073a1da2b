#!/usr/bin/env python3
# Times the reference (tinygrad a9069c17) on tests/data/index_corpus.txt, the corpus bench_symbolic runs.
# cd <tinygrad checkout> && PYTHONPATH=. python3 <repo>/tests/bench/bench_reference_symbolic.py [PASSES]
# Prints seconds per pass (pass 1 is cold: functools caches empty), attempts per pass and ns per attempt.
import sys, os, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parity"))
sys.path.insert(0, os.getcwd())
from uop_codec import dec_graph
from tinygrad.uop.ops import graph_rewrite
from tinygrad.uop.symbolic import symbolic, sym
import tinygrad.uop.ops as ops_mod

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "index_corpus.txt")
cases = []
with open(path) as f:
  lines = f.read().split("\n")
i = 0
while i < len(lines):
  if lines[i].startswith("expr "):
    _, pm, nin, nout = lines[i].split(" ")
    nin, nout = int(nin), int(nout)
    cases.append((symbolic if pm == "symbolic" else sym, dec_graph(lines[i+1:i+1+nin])))
    i += 1 + nin + nout
  else: i += 1
passes = int(sys.argv[1]) if len(sys.argv) > 1 else 3
times = []
for p in range(passes):
  t0 = time.perf_counter()
  for pm, x in cases: graph_rewrite(x, pm)
  times.append(time.perf_counter() - t0)
# attempts per pass: a pass with the tracked matcher's counters (TRACK_MATCH_STATS=1 must be set at import)
attempts = None
if ops_mod.TRACK_MATCH_STATS.value:
  ops_mod.match_stats.clear()
  for pm, x in cases: graph_rewrite(x, pm)
  attempts = sum(v[1] for v in ops_mod.match_stats.values())
print(f"reference: {len(cases)} exprs, seconds per pass: " + ", ".join(f"{t:.3f}" for t in times))
if attempts: print(f"reference: {attempts} attempts per pass, warm pass {min(times[1:] or times)*1e9/attempts:.0f} ns/attempt")
