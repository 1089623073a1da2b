#!/usr/bin/env python3
# The side-by-side compile-stack numbers, in pairs: each round times the reference (bench_reference_compile_stack.py and
# bench_reference_lower.py with PARALLEL=0 and 2) and then ours (bench_compile_stack with PARALLEL=1 and 2) on one
# model, so that both sides of a ratio run minutes, not an hour, apart on a shared machine, whose speed drifts.
# The rows, each the best warm schedule plus the best warm codegen of its side, both timed in the same loop (and for
# ours also the median warm pass, whose ratio to the reference's best pass is the conservative one):
#   every kernel, one thread   reference: schedule + to_program of every kernel; ours: the same
#   the engines, one worker    reference: lower_and_compile with PARALLEL=0;     ours: distinct kernels on 1 thread
#   the engines, both cores    reference: lower_and_compile with PARALLEL=2;     ours: distinct kernels on 2 threads
# cd <tinygrad checkout at a9069c17> && python3 <repo>/tests/bench/pair_compile_stack.py [--rounds N] [--model M]
#   [--ours build-pgo/tests/bench_compile_stack]   (M: mlp, resnet, mnist_train or all; build-pgo: make bench's build)
import argparse, os, re, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--model", default="all")
ap.add_argument("--ours", default=os.path.join(HERE, "..", "..", "build-pgo", "tests", "bench_compile_stack"))
ap.add_argument("--ref-passes", type=int, default=4)
# ours as the reference's loop runs it by default: the one-thread passes end with the LLVM compiles (both sides), the
# engines' passes with their compile caches (the reference's disk cache, our compile_cached). --fresh: our engine
# passes compile again every pass (BENCH_FRESH_COMPILE=1, a first run's pipeline; the reference's do not, so only
# ours start with the caches LLVM leaves). --warm: back-to-back passes without compiles (BENCH_NO_COMPILE=1)
ap.add_argument("--warm", action="store_true")
ap.add_argument("--fresh", action="store_true")
args = ap.parse_args()
if not os.path.exists("tinygrad/tensor.py"): sys.exit("run this from a tinygrad checkout (cd <tinygrad> && python3 ...)")
if not os.access(args.ours, os.X_OK): sys.exit(f"{args.ours}: not built (make bench builds it, or --ours <bench_compile_stack>)")

def run(cmd, env):
  e = dict(os.environ); e.update(env)
  p = subprocess.run(cmd, env=e, capture_output=True, text=True)
  if p.returncode != 0: sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
  return p.stdout

def grab(pattern, text, what):
  m = re.search(pattern, text)
  if not m: sys.exit(f"no {what} in:\n{text}")
  return m

def warm(values):  # the best pass after the first (cold) one
  v = [float(x) for x in values.split(",")]
  return min(v[1:] or v)

ROWS = ("every kernel, one thread", "the engines, one worker", "the engines, both cores")
models = ("mlp", "resnet", "mnist_train") if args.model == "all" else (args.model,)
ratios = {(m, r): [] for m in models for r in ROWS}
med_ratios = {(m, r): [] for m in models for r in ROWS}  # the reference's best against our median pass
py = sys.executable
for rnd in range(args.rounds):
  for model in models:
    env = {"PYTHONPATH": ".", "BENCH_MODEL": model}
    out = run([py, os.path.join(HERE, "bench_reference_compile_stack.py"), str(args.ref_passes)], env)
    m = grab(r"schedule ms ([\d., ]+) \| codegen ms ([\d., ]+)", out, "reference schedule/codegen times")
    rsched = warm(m.group(1))
    ref = [rsched + warm(m.group(2))]
    for p in (0, 2):
      out = run([py, os.path.join(HERE, "bench_reference_lower.py"), str(args.ref_passes)], dict(env, PARALLEL=str(p)))
      lsched = float(grab(r"schedule \(schedule_linear, before each pass\) warm ([\d.]+) ms", out, "reference schedule time").group(1))
      ref.append(lsched + float(grab(r"\| warm ([\d.]+) ms", out, "reference lower_and_compile time").group(1)))
    ours, ours_med = [], []
    for p in (1, 2):
      env_ours = {"PARALLEL": str(p), "BENCH_MODEL": model}
      if args.warm: env_ours["BENCH_NO_COMPILE"] = "1"
      if args.fresh: env_ours["BENCH_FRESH_COMPILE"] = "1"
      out = run([args.ours, "3"], env_ours)
      w = re.findall(r"warm: schedule \+ codegen ([\d.]+) ms.*\| median pass ([\d.]+) ms", out)
      if len(w) != 2: sys.exit(f"unexpected output of {args.ours}:\n{out}")
      for i in ((0, 1) if p == 1 else (1,)):
        ours.append(float(w[i][0])), ours_med.append(float(w[i][1]))
    cells = []
    for row, r, o, om in zip(ROWS, ref, ours, ours_med):
      ratios[(model, row)].append(r / o)
      med_ratios[(model, row)].append(r / om)
      cells.append(f"{r:.1f}/{o:.1f} ms {r / o:.1f}x (our median pass {om:.1f} ms {r / om:.1f}x)")
    print(f"{time.strftime('%H:%M:%S')} round {rnd + 1} {model}: " + " | ".join(cells), flush=True)

print("\nreference / ours, per row: the lowest and the median ratio over the rounds; then the same with our median pass")
for model in models:
  for row in ROWS:
    v, vm = ratios[(model, row)], med_ratios[(model, row)]
    print(f"  {model:12s} {row:26s} min {min(v):6.1f}x  median {statistics.median(v):6.1f}x | our median pass: "
          f"min {min(vm):6.1f}x  median {statistics.median(vm):6.1f}x  ({len(v)} rounds)")
