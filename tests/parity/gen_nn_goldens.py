#!/usr/bin/env python3
# Regenerates tests/data/nn_goldens.txt: the reference's nn layers (tinygrad a9069c17, DEV=CPU) created right after
# Tensor.manual_seed(1337), with their parameters (float32 bits, or an FNV-1a hash of the bytes for big ones) and the
# output of a forward pass on a deterministic input; BatchNorm also under TRAINING=1 with the running statistics after.
# test_nn_goldens.cpp builds the same layers with tg::nn and must get the same parameter bits and outputs (1e-5).
# cd <tinygrad checkout> && PYTHONPATH=. python3 <repo>/tests/parity/gen_nn_goldens.py > <repo>/tests/data/nn_goldens.txt
import os, struct, math
os.environ.setdefault("DEV", "CPU")
from tinygrad import Tensor, nn, dtypes, Context

def inp(*shape):
  n = math.prod(shape)
  return (Tensor.arange(n).float().reshape(*shape) / n - 0.5).sin() * 2

def fnv(b: bytes) -> int:
  h = 0xcbf29ce484222325
  for x in b: h = ((h ^ x) * 0x100000001b3) & 0xffffffffffffffff
  return h

def dump(name, t):
  vals = t.flatten().tolist()
  if t.dtype == dtypes.float32:
    raw = struct.pack(f"<{len(vals)}f", *vals)
    if len(vals) <= 64: print(f"param {name} {' '.join(raw[i:i+4][::-1].hex() for i in range(0, len(raw), 4))}")
    else: print(f"phash {name} {len(vals)} {fnv(raw):016x} {sum(vals):.9g}")
  else: print(f"param {name} " + " ".join(str(v) for v in vals))

def out(name, t): print(f"out {name} {' '.join(f'{v:.9g}' for v in t.flatten().tolist())}")

CASES = [
  ("linear", lambda: nn.Linear(5, 3), lambda m: m(inp(2, 5))),
  ("linear_nobias", lambda: nn.Linear(4, 2, bias=False), lambda m: m(inp(3, 4))),
  ("conv2d", lambda: nn.Conv2d(2, 4, 3, padding=1), lambda m: m(inp(1, 2, 5, 5))),
  ("conv2d_stride_groups", lambda: nn.Conv2d(4, 4, 3, stride=2, groups=2, bias=False), lambda m: m(inp(1, 4, 6, 6))),
  ("conv2d_same", lambda: nn.Conv2d(2, 3, (3, 5), padding='same'), lambda m: m(inp(1, 2, 6, 7))),
  ("conv1d", lambda: nn.Conv1d(2, 3, 3), lambda m: m(inp(2, 2, 7))),
  ("conv_transpose2d", lambda: nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1), lambda m: m(inp(1, 2, 4, 4))),
  ("batchnorm", lambda: nn.BatchNorm(3), lambda m: m(inp(2, 3, 4, 4))),
  ("groupnorm", lambda: nn.GroupNorm(2, 4), lambda m: m(inp(2, 4, 3, 3))),
  ("instancenorm", lambda: nn.InstanceNorm(3), lambda m: m(inp(2, 3, 4, 4))),
  ("layernorm", lambda: nn.LayerNorm(6), lambda m: m(inp(2, 3, 6))),
  ("layernorm_2d_shape", lambda: nn.LayerNorm((3, 6)), lambda m: m(inp(2, 3, 6))),
  ("layernorm2d", lambda: nn.LayerNorm2d(3), lambda m: m(inp(1, 3, 4, 4))),
  ("rmsnorm", lambda: nn.RMSNorm(6), lambda m: m(inp(2, 6))),
  ("embedding", lambda: nn.Embedding(10, 4), lambda m: m((Tensor.arange(6).reshape(2, 3) * 7) % 10)),
  ("lstmcell", lambda: nn.LSTMCell(3, 5), lambda m: m(inp(2, 3), m(inp(2, 3)))[0]),
]

def params(m):
  return {k: v for k, v in nn.state.get_state_dict(m).items()}

for name, make, fwd in CASES:
  Tensor.manual_seed(1337)
  m = make()
  print(f"case {name}")
  for k, v in params(m).items(): dump(k, v)
  out("y", fwd(m))

# BatchNorm in training mode: batch statistics and the running statistics after one step
Tensor.manual_seed(1337)
bn = nn.BatchNorm(3)
print("case batchnorm_train")
with Context(TRAINING=1):
  y = bn(inp(2, 3, 4, 4)).realize()
out("y", y)
for k in ("running_mean", "running_var", "num_batches_tracked"): out(k, getattr(bn, k))

# safe_save of a seeded Linear: the whole file
import tempfile
from tinygrad.nn.state import safe_save, get_state_dict
Tensor.manual_seed(1337)
fn = os.path.join(tempfile.mkdtemp(), "linear.safetensors")
safe_save(get_state_dict(nn.Linear(5, 3)), fn)
print("case linear_safetensors")
print(f"file x {open(fn, 'rb').read().hex()}")

# the beautiful_mnist model's initial weights (examples/beautiful_mnist.py), seed 1337
Tensor.manual_seed(1337)
layers = [nn.Conv2d(1, 32, 5), nn.Conv2d(32, 32, 5), nn.BatchNorm(32), nn.Conv2d(32, 64, 3), nn.Conv2d(64, 64, 3),
          nn.BatchNorm(64), nn.Linear(576, 10)]
print("case beautiful_mnist_init")
for i, l in enumerate(layers):
  for k, v in params(l).items(): dump(f"{i}.{k}", v)
