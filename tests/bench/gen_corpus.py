#!/usr/bin/env python3
# Builds tests/data/index_corpus.txt: index expressions the reference simplifies while scheduling and compiling a
# training step (every graph_rewrite input of `symbolic` / `sym` whose graph is pure index math), deduplicated, plus a
# seeded random tail, each with the reference's result. The C++ benchmark (bench_symbolic) and the parity test read it;
# bench_reference_symbolic.py times the reference on the same file.
# Run from a checkout of tinygrad a9069c17:  cd <tinygrad> && python3 <repo>/tests/bench/gen_corpus.py > <repo>/tests/data/index_corpus.txt
import sys, os, random
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parity"))
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DEV", "CPU")
from uop_codec import enc_graph
from tinygrad import Tensor, nn, dtypes, Context
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, graph_rewrite
import tinygrad.uop.ops as ops_mod
from tinygrad.uop.symbolic import symbolic, sym

PURE = {Ops.CONST, Ops.PARAM, Ops.RANGE, Ops.SPECIAL, Ops.STACK, Ops.CAST, Ops.WHERE, Ops.ADD, Ops.MUL, Ops.FLOORDIV,
        Ops.FLOORMOD, Ops.CMPLT, Ops.CMPNE, Ops.AND, Ops.OR, Ops.XOR, Ops.MAX, Ops.SHL, Ops.SHR, Ops.CDIV, Ops.CMOD,
        Ops.BUFFER, Ops.NOOP}
seen, cases = set(), []
def capture(x: UOp, pmname: str):
  if len(cases) >= 12000 or x.key in seen: return
  topo = x.toposort()
  if len(topo) < 3 or any(u.op not in PURE for u in topo): return
  if any(u.op is Ops.BUFFER and not u.is_variable for u in topo): return
  seen.add(x.key); cases.append((pmname, x))

orig = ops_mod.graph_rewrite.__wrapped__ if hasattr(ops_mod.graph_rewrite, "__wrapped__") else None
real_rewrite = ops_mod.RewriteContext.unified_rewrite
def hooked(self, root):
  if self.pm is symbolic: capture(root, "symbolic")
  elif self.pm is sym: capture(root, "sym")
  return real_rewrite(self, root)
ops_mod.RewriteContext.unified_rewrite = hooked

# a training step of the MLP and of the beautiful_mnist CNN: schedule + codegen (no execution)
from tinygrad.codegen import full_rewrite_to_sink
from tinygrad.device import Device
for model_name in ("mlp", "cnn"):
  Tensor.manual_seed(0)
  if model_name == "mlp":
    layers = [nn.Linear(784, 512), Tensor.relu, nn.Linear(512, 512), Tensor.relu, nn.Linear(512, 10)]
    model = lambda x: x.flatten(1).sequential(layers)
    params = nn.state.get_parameters(layers)
  else:
    layers = [nn.Conv2d(1, 32, 5), Tensor.relu, nn.Conv2d(32, 32, 5), Tensor.relu, nn.BatchNorm(32), Tensor.max_pool2d,
              nn.Conv2d(32, 64, 3), Tensor.relu, nn.Conv2d(64, 64, 3), Tensor.relu, nn.BatchNorm(64), Tensor.max_pool2d,
              lambda x: x.flatten(1), nn.Linear(576, 10)]
    model = lambda x: x.sequential(layers)
    params = nn.state.get_parameters(layers)
  opt = nn.optim.Adam(params)
  X, Y = Tensor.empty(60000, 1, 28, 28, dtype=dtypes.uint8).realize(), Tensor.empty(60000, dtype=dtypes.uint8).realize()
  Tensor.realize(*nn.state.get_parameters(opt))
  with Context(TRAINING=1):
    opt.zero_grad()
    samples = Tensor.randint(128, high=X.shape[0])
    loss = model(X[samples]).sparse_categorical_crossentropy(Y[samples]).backward()
    linear, _ = Tensor.linear_with_vars(loss, *opt.schedule_step())
  ren = Device[Device.DEFAULT].renderer
  for a in {c.src[0].key: c.src[0] for c in linear.src if c.src[0].op is Ops.SINK}.values():
    full_rewrite_to_sink(a, ren, optimize=a.tag is None)
captured = len(cases)
ops_mod.RewriteContext.unified_rewrite = real_rewrite

# seeded random index expressions over ranges and variables fill the corpus to >= 12000
rng = random.Random(1337)
def rand_expr(depth, leaves):
  if depth == 0 or rng.random() < 0.25:
    return rng.choice(leaves) if rng.random() < 0.8 else UOp.const(rng.randint(-8, 64))
  a, b = rand_expr(depth-1, leaves), rand_expr(depth-1, leaves)
  c = rng.randint(1, 16)
  k = rng.randrange(9)
  if k == 0: return a + b
  if k == 1: return a * rng.randint(-4, 16)
  if k == 2: return a // c
  if k == 3: return a % c
  if k == 4: return a + rng.randint(-32, 32)
  if k == 5: return (a < c).where(a, b)
  if k == 6: return a.maximum(b)
  if k == 7: return (a*c + b) // c
  return (a + b*c) % (c*2)
while len(cases) < 12000:
  n = rng.randint(1, 4)
  leaves = [UOp.range(rng.choice([2, 3, 4, 8, 16, 32, 64, 128, 512]), i) for i in range(n)]
  leaves += [UOp.variable(f"v{i}", 0, rng.choice([3, 15, 255]), param=True) for i in range(rng.randint(0, 2))]
  x = rand_expr(rng.randint(2, 5), leaves)
  if x.key in seen or len(x.toposort()) < 3: continue
  seen.add(x.key); cases.append(("symbolic" if rng.random() < 0.5 else "sym", x))

print(f"# index corpus: {captured} expressions captured from the reference compiling an MLP and a CNN training step, "
      f"{len(cases)-captured} seeded random; each: matcher, input graph, the reference's output graph")
for pmname, x in cases:
  out = graph_rewrite(x, symbolic if pmname == "symbolic" else sym)
  gin, gout = enc_graph(x), enc_graph(out)
  print(f"expr {pmname} {len(gin)} {len(gout)}")
  print("\n".join(gin)); print("\n".join(gout))
