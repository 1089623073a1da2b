#!/usr/bin/env python3
# Times the reference (tinygrad a9069c17) on what bench_compile_stack runs: (a) the MLP 784-512-512-10 forward at
# batch 512, (b) a ResNet-style conv stack forward (batch 8, 3x32x32 -> conv 64 -> 2 residual blocks -> pool -> 10),
# (c) beautiful_mnist's first training step (weights' initialization, forward, backward, Adam; batch 512, seed 1337):
#   schedule  = Tensor.schedule_linear (transform_to_call + create_linear_with_vars), schedule cache off (SCACHE=0)
#   codegen   = full_rewrite_to_sink + linearize + render of every kernel (do_to_program without the compile)
#   compile   = LLVM compile of every kernel's source (DEV=CPU:LLVM: the same LLVM IR path as tinygrad-cpp)
# cd <tinygrad checkout> && PYTHONPATH=. python3 <repo>/tests/bench/bench_reference_compile_stack.py [PASSES]
import os, sys, time
os.environ["DEV"] = "CPU:LLVM"; os.environ["SCACHE"] = "0"
from tinygrad import Tensor, Device, dtypes, nn, Context
from tinygrad.uop.ops import Ops
import tinygrad.codegen as C

def mlp():
  x = Tensor.empty(512, 784)
  w1, b1, w2, b2, w3, b3 = Tensor.empty(784, 512), Tensor.empty(512), Tensor.empty(512, 512), Tensor.empty(512), Tensor.empty(512, 10), Tensor.empty(10)
  return x.linear(w1, b1).relu().linear(w2, b2).relu().linear(w3, b3).log_softmax()

def resnet():
  x = Tensor.empty(8, 3, 32, 32)
  w0 = Tensor.empty(64, 3, 3, 3)
  ws = [Tensor.empty(64, 64, 3, 3) for _ in range(4)]
  wf, bf = Tensor.empty(64, 10), Tensor.empty(10)
  h = x.conv2d(w0, padding=1).relu()
  for i in range(2): h = (h.conv2d(ws[2*i], padding=1).relu().conv2d(ws[2*i+1], padding=1) + h).relu()
  return h.avg_pool2d(kernel_size=(32, 32)).flatten(1).linear(wf, bf)

def mnist_train():
  # examples/beautiful_mnist.py's model and train step, the data as inputs (no TinyJit, no random batch)
  Tensor.manual_seed(1337)
  with Context(TRAINING=1):
    layers = [nn.Conv2d(1, 32, 5), Tensor.relu, nn.Conv2d(32, 32, 5), Tensor.relu, nn.BatchNorm(32), Tensor.max_pool2d,
              nn.Conv2d(32, 64, 3), Tensor.relu, nn.Conv2d(64, 64, 3), Tensor.relu, nn.BatchNorm(64), Tensor.max_pool2d,
              lambda x: x.flatten(1), nn.Linear(576, 10)]
    opt = nn.optim.Adam(nn.state.get_parameters(layers))
    x, y = Tensor.empty(512, 1, 28, 28), Tensor.empty(512, dtype=dtypes.int32)
    opt.zero_grad()
    loss = x.sequential(layers).sparse_categorical_crossentropy(y).backward()
    return [loss] + opt.schedule_step()

dev = Device["CPU"]
ren = dev.renderer
def to_program_no_compile(ast):
  sink = C.full_rewrite_to_sink(ast, ren, optimize=ast.tag is None)
  info = C.ProgramInfo.from_sink(sink, ren.target)
  return info, ren.render(C.line_rewrite(C.linearize(sink), C.pm_linearize_cleanups))

passes = int(sys.argv[1]) if len(sys.argv) > 1 else 3
only = os.environ.get("BENCH_MODEL")
for name, build in (("mlp", lambda: [mlp()]), ("resnet", lambda: [resnet()]), ("mnist_train", mnist_train)):
  if only and only != name: continue
  sched, cg, comp = [], [], []
  for _ in range(passes):
    outs = build()
    t0 = time.perf_counter(); linear = outs[0].schedule_linear(*outs[1:]); t1 = time.perf_counter()
    asts = [c.src[0] for c in linear.src if c.src[0].op is Ops.SINK]
    srcs = [to_program_no_compile(a)[1] for a in asts]; t2 = time.perf_counter()
    for s in srcs: dev.compiler.compile(s)
    t3 = time.perf_counter()
    sched.append(t1 - t0); cg.append(t2 - t1); comp.append(t3 - t2)
  print(f"reference {name}: {len(linear.src)} calls, {len(asts)} kernels | schedule ms " + ", ".join(f"{t*1e3:.1f}" for t in sched) +
        " | codegen ms " + ", ".join(f"{t*1e3:.1f}" for t in cg) + " | llvm compile ms " + ", ".join(f"{t*1e3:.1f}" for t in comp))
