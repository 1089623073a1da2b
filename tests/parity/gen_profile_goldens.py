#!/usr/bin/env python3
# The reference's profile of 3 training steps of beautiful_mnist (the script of gen_mnist_goldens.py with a
# profile_marker("train @ i") before each step, as examples/beautiful_mnist.cpp sets them), read back with the
# reference's own `python -m tinygrad.viz.cli -t -1 --json`: every kernel's name and run count, over the whole run and
# between the markers "train @ 1" and "train @ 2". test_profile_trace checks `tinyviz-cli profile -t -1` against it.
# The reference times CPU kernels only on its HCQ2 path (HCQ2=1); there the JIT's kernels run in graphs, whose entries
# are the kernel lane's events, and "CPU Graph" holds one "batched N" span per graph run.
# cd <tinygrad checkout> && PYTHONPATH=. python3 <repo>/tests/parity/gen_profile_goldens.py > profile_goldens.txt
import os, subprocess, sys, tempfile, json, re
if os.environ.get("GEN_PROFILE_CHILD"):
  sys.argv = [sys.argv[0]]
  src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_mnist_goldens.py")).read()
  src = src.replace("  GlobalCounters.reset()\n", "  GlobalCounters.reset()\n  profile_marker(f'train @ {i}')\n")
  exec(compile("from tinygrad.helpers import profile_marker\n" + src, "gen_mnist_goldens.py", "exec"))
  sys.exit(0)
tmp = tempfile.mkdtemp()
env = dict(os.environ, GEN_PROFILE_CHILD="1", PROFILE="1", HCQ2="1", DEV="CPU", STEPS="3", TMPDIR=tmp)
subprocess.run([sys.executable, os.path.abspath(__file__)], env=env, check=True, stdout=subprocess.DEVNULL)
prof = [os.path.join(tmp, f) for f in os.listdir(tmp) if f.startswith("profile.pkl")][0]
ansi = re.compile(r"\x1b\[[0-9;]*m")
def top(*extra):
  out = subprocess.run([sys.executable, "-m", "tinygrad.viz.cli", "--profile-path", prof, "--rewrites-path",
                        os.path.join(tmp, "none.pkl"), "-t", "-1", "--json", *extra], check=True, capture_output=True,
                       text=True, env=dict(os.environ, TMPDIR=tmp)).stdout
  rows = [json.loads(l) for l in out.splitlines() if l.strip()]
  return sorted((ansi.sub("", r["name"]).split(None, 1)[0], ansi.sub("", r["name"]).split(None, 1)[1].strip(), r["count"])
                for r in rows)
print("# the reference's viz.cli -t -1 over PROFILE=1 HCQ2=1 DEV=CPU beautiful_mnist, 3 steps: lane, kernel, runs")
for dev, name, n in top(): print(f"all\t{dev}\t{name}\t{n}")
for dev, name, n in top("--interval", "train @ 1", "train @ 2"): print(f"interval\t{dev}\t{name}\t{n}")
