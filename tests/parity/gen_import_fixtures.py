#!/usr/bin/env python3
# The reference's own VIZ pickles for `tinyviz-cli import-tinygrad`'s tests (tests/viz/import.cmake), with what they
# hold counted here with the reference's classes, independently of the importer:
#   tests/data/tinygrad_small.rewrites.pkl, tinygrad_small.profile.pkl: VIZ=-1 DEV=CPU of a small program (two kernels,
#     a marker, a user range, and a broadcast error caught, which the trace holds as a REWRITE_ERROR match)
#   tests/data/tinygrad_hcq2.profile.pkl: PROFILE=1 HCQ2=1 DEV=CPU of the same program (HCQ2 times the CPU kernels: a
#     graph of kernel runs and two device clocks); imported with tinygrad_small.rewrites.pkl
#   tests/data/tinygrad_import_counts.txt: "fixture key value" lines: contexts, steps, matches, rule errors, UOps
#     (distinct by the port's arg encoding, as tests/parity/uop_codec.py writes it; `uops_hashconsed` is the reference's
#     own count, which also tells apart CallInfos differing only in `aux`, a field the encoding leaves out), programs,
#     and the profile's events by kind
# Run from the reference checkout (tinygrad a9069c17):
#   cd <tinygrad> && PYTHONPATH=. python3 <repo>/tests/parity/gen_import_fixtures.py <repo>/tests/data
#   ... gen_import_fixtures.py --hello DIR: the pickles of a Python twin of examples/hello_tensor.cpp (VIZ=-1), to
#   import and compare with a VIZ=-1 run of hello_tensor (`tinyviz-cli diff`)
#   ... gen_import_fixtures.py --damaged DIR: tinygrad_deep_arg.rewrites.pkl and tinygrad_wide_arg.rewrites.pkl, the
#   small trace with one arg nested too deep and one with too many parts (the importer's limits)
#   ... gen_import_fixtures.py --mnist DIR: the same for the first training step of examples/beautiful_mnist.cpp (its
#   twin below), to compare with VIZ=-1 beautiful_mnist --steps 1
import os, sys, subprocess, tempfile, shutil, pickle, getpass

def hello():
  from tinygrad import Tensor
  from tinygrad.helpers import profile_marker, cpu_profile
  def show(name, t): print(f"{name:<10} {t.tolist()}")
  profile_marker("first graphs")
  with cpu_profile("first graphs", "USER"):
    a = Tensor([1, 2, 3, 4, 5, 6], dtype="float32").reshape(2, 3)
    b = Tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    c = (a.matmul(b) + 1).relu()
    show("a@b+1", c)
    show("softmax", c.softmax())
    show("sum(0)", a.sum(0))
    print("mean      ", a.mean().item())
    profile_marker("random", "orange")
    Tensor.manual_seed(42)
    show("rand", Tensor.rand(5))
    x = Tensor.zeros(3)
    x.assign(Tensor([7.0, 8.0, 9.0]))
    show("assigned", x.realize())
    try: (a + Tensor.ones(4)).realize()
    except Exception as e: print("error     ", e)

def mnist():
  # examples/beautiful_mnist.cpp's first training step (STEPS, default 1), as the reference runs it: tinygrad's
  # examples/beautiful_mnist.py with the C++ example's two differences, so the two programs build the same graphs: the
  # model's __call__ is a plain method (the script makes it a @function), and the four data tensors are made first and
  # the training pair realized before the seed is set (the C++ example loads the dataset up front)
  import gzip
  from typing import Callable
  from tinygrad import Tensor, TinyJit, nn, Context
  from tinygrad.helpers import getenv, profile_marker, cpu_profile
  d = getenv("FASHION_MNIST_PATH", "/usr/share/datasets/fashion-mnist")
  def load(name, skip): return Tensor(gzip.open(os.path.join(d, name)).read()[skip:])
  X_train, Y_train = load("train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28), load("train-labels-idx1-ubyte.gz", 8)
  X_test, Y_test = load("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28), load("t10k-labels-idx1-ubyte.gz", 8)
  X_train.realize(Y_train)
  class Model:
    def __init__(self):
      self.layers: list[Callable[[Tensor], Tensor]] = [
        nn.Conv2d(1, 32, 5), Tensor.relu, nn.Conv2d(32, 32, 5), Tensor.relu, nn.BatchNorm(32), Tensor.max_pool2d,
        nn.Conv2d(32, 64, 3), Tensor.relu, nn.Conv2d(64, 64, 3), Tensor.relu, nn.BatchNorm(64), Tensor.max_pool2d,
        lambda x: x.flatten(1), nn.Linear(576, 10)]
    def __call__(self, x:Tensor) -> Tensor: return x.sequential(self.layers)
  Tensor.manual_seed(1337)
  model = Model()
  opt = nn.optim.Adam(nn.state.get_parameters(model))
  @TinyJit
  @Context(TRAINING=1)
  def train_step(X:Tensor, Y:Tensor) -> Tensor:
    samples = Tensor.randint(512, high=X.shape[0])
    opt.zero_grad()
    loss = model(X[samples]).sparse_categorical_crossentropy(Y[samples]).backward()
    return loss.realize(*opt.schedule_step())
  for i in range(getenv("STEPS", 1)):
    profile_marker(f"train @ {i}")
    with cpu_profile(f"train step {i}", "USER"): print(f"step {i} loss {train_step(X_train, Y_train).item():.6f}")

def small():
  from tinygrad import Tensor
  from tinygrad.helpers import profile_marker, cpu_profile
  profile_marker("start")
  with cpu_profile("small", "USER"):
    a = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
    print(((a * 2 + 1).sum()).item())
    try: (a + Tensor.ones(3)).realize()
    except Exception as e: print("error", e)

if (child := os.environ.get("GEN_IMPORT_CHILD")):
  {"hello": hello, "small": small, "mnist": mnist}[child]()
  sys.exit(0)

def record(kind: str, env: dict) -> tuple[str, str, str]:
  tmp = tempfile.mkdtemp()
  full = dict(os.environ, GEN_IMPORT_CHILD=kind, DEV="CPU", TMPDIR=tmp, PARALLEL="0", **env)
  subprocess.run([sys.executable, os.path.abspath(__file__)], env=full, check=True, stdout=subprocess.DEVNULL)
  user = getpass.getuser()
  return tmp, os.path.join(tmp, f"rewrites.pkl.{user}"), os.path.join(tmp, f"profile.pkl.{user}")

def rewrite_counts(rewrites: str) -> dict:
  from tinygrad.uop.ops import UOp, Ops
  sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
  from uop_codec import enc_arg, dtype_attr
  with open(rewrites, "rb") as f: trace = pickle.load(f)
  out = {"contexts": len(trace.keys), "steps": sum(len(r) for r in trace.rewrites),
         "matches": sum(len(s.matches) for r in trace.rewrites for s in r),
         "rule_errors": sum(1 for r in trace.rewrites for s in r for m in s.matches
                            if trace.uop_fields[m[1]][0] is Ops.REWRITE_ERROR),
         "uop_records": len(trace.uop_fields)}
  # the distinct UOps: rebuilt as serve.py's _reconstruct does (sources first), hash-consed by the reference
  built: dict[int, UOp] = {}
  for num in sorted(trace.uop_fields):
    op, dtype, src, arg, *rest = trace.uop_fields[num]
    built[num] = UOp(op, dtype, tuple(built[s] for s in src), arg, *rest[:1])
  out["uops_hashconsed"] = len({id(u): u for u in built.values()})
  def enc(a):
    try: return enc_arg(a)
    except TypeError: return repr(a)  # ProgramInfo, bytes: their repr, which tells them apart as well
  key: dict[int, int] = {}
  keys: dict[tuple, int] = {}
  for num in sorted(trace.uop_fields):
    op, dtype, src, arg, tag = trace.uop_fields[num][:5]
    k = (op.name, dtype_attr(dtype), enc(arg), enc(tag), tuple(key[s] for s in src))
    key[num] = keys.setdefault(k, len(keys))
  out["uops"] = len(keys)
  out["programs"] = sum(1 for r in trace.rewrites for s in r if s.name == "View Program")
  return out

def profile_counts(profile: str) -> dict:
  from tinygrad.helpers import ProfileRangeEvent, ProfilePointEvent
  from tinygrad.device import ProfileDeviceEvent, ProfileProgramEvent, ProfileGraphEvent
  with open(profile, "rb") as f: events = pickle.load(f)
  kinds = {"ranges": 0, "markers": 0, "alloc": 0, "free": 0, "exec": 0, "devices": 0, "program_events": 0, "graphs": 0}
  for e in events:
    if isinstance(e, ProfileRangeEvent): kinds["ranges"] += 1
    elif isinstance(e, ProfilePointEvent) and e.name in ("alloc", "free", "exec"): kinds[e.name] += 1
    elif isinstance(e, ProfilePointEvent) and e.name == "marker": kinds["markers"] += 1
    elif isinstance(e, ProfileDeviceEvent): kinds["devices"] += 1
    elif isinstance(e, ProfileProgramEvent): kinds["program_events"] += 1
    elif isinstance(e, ProfileGraphEvent): kinds["graphs"] += 1
  kinds["devices"] = len({e.device for e in events if isinstance(e, ProfileDeviceEvent)})  # the last clock of each counts
  kinds["user_ranges"] = sum(1 for e in events if isinstance(e, ProfileRangeEvent) and e.device == "USER")
  kinds["tiny_ranges"] = sum(1 for e in events if isinstance(e, ProfileRangeEvent) and e.device == "TINY")
  kinds["graph_entries"] = sum(len(e.ents) for e in events if isinstance(e, ProfileGraphEvent))
  # kernel and copy runs: the ranges on device lanes, the graphs' entries, and the exec points of devices that have
  # neither (DEV=CPU without HCQ2 times no kernel: an exec is all there is of a run)
  device_ranges = [e for e in events if isinstance(e, ProfileRangeEvent) and e.device not in ("TINY", "USER", "GC")]
  timed = {e.device for e in device_ranges if ":COPY" not in e.device}
  timed |= {x.device for e in events if isinstance(e, ProfileGraphEvent) for x in e.ents}
  kinds["device_ranges"] = len(device_ranges)
  kinds["exec_untimed"] = sum(1 for e in events if isinstance(e, ProfilePointEvent) and e.name == "exec" and e.device not in timed)
  return {f"profile_{k}": v for k, v in kinds.items()}

def damaged(src: str, dest: str):
  # the small trace with one UOp's arg replaced: nested 100 tuples deep (past the importer's 64 levels), and a tuple
  # of 1,100 references to one tuple of 1,000 ints (1.1 million parts in a small file: the pickle's memo shares them)
  with open(src, "rb") as f: trace = pickle.load(f)
  num = max(trace.uop_fields)
  def with_arg(arg):
    fields = list(trace.uop_fields[num]); fields[3] = arg
    trace.uop_fields[num] = tuple(fields)
    return pickle.dumps(trace)
  deep = (1,)
  for _ in range(100): deep = (deep,)
  row = tuple(range(1000))
  for name, arg in (("deep_arg", deep), ("wide_arg", (row,) * 1100)):
    with open(os.path.join(dest, f"tinygrad_{name}.rewrites.pkl"), "wb") as f: f.write(with_arg(arg))

if __name__ == "__main__":
  if sys.argv[1:2] == ["--damaged"]:  # --damaged DIR: from DIR/tinygrad_small.rewrites.pkl
    damaged(os.path.join(sys.argv[2], "tinygrad_small.rewrites.pkl"), sys.argv[2])
    sys.exit(0)
  if sys.argv[1:2] in (["--hello"], ["--mnist"]):
    kind = sys.argv[1][2:]
    tmp, rw, prof = record(kind, {"VIZ": "-1"})
    for src, name in ((rw, f"tinygrad_{kind}.rewrites.pkl"), (prof, f"tinygrad_{kind}.profile.pkl")): shutil.copy(src, os.path.join(sys.argv[2], name))
    shutil.rmtree(tmp)
    sys.exit(0)
  dest = sys.argv[1] if len(sys.argv) > 1 else "."
  lines = ["# fixture key value: counted by tests/parity/gen_import_fixtures.py with the reference's classes"]
  tmp, rw, prof = record("small", {"VIZ": "-1"})
  shutil.copy(rw, os.path.join(dest, "tinygrad_small.rewrites.pkl"))
  shutil.copy(prof, os.path.join(dest, "tinygrad_small.profile.pkl"))
  lines += [f"tinygrad_small {k} {v}" for k, v in {**rewrite_counts(rw), **profile_counts(prof)}.items()]
  shutil.rmtree(tmp)
  tmp, _, prof = record("small", {"PROFILE": "1", "HCQ2": "1"})
  shutil.copy(prof, os.path.join(dest, "tinygrad_hcq2.profile.pkl"))
  lines += [f"tinygrad_hcq2 {k} {v}" for k, v in profile_counts(prof).items()]
  shutil.rmtree(tmp)
  with open(os.path.join(dest, "tinygrad_import_counts.txt"), "w") as f: f.write("\n".join(lines) + "\n")
