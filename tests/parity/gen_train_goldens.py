#!/usr/bin/env python3
# Regenerates tests/data/train_goldens.txt: dropout under TRAINING=1 in the reference (tinygrad a9069c17, DEV=CPU),
# its gradient through backward(), and that dropout is the identity without TRAINING. gradcheck.cpp's Train tests run
# the same programs with tg::Tensor::train() and must get the same values (dropout masks come from the same threefry
# random bits, so they are equal exactly).
# cd <tinygrad checkout> && PYTHONPATH=. python3 <repo>/tests/parity/gen_train_goldens.py > <repo>/tests/data/train_goldens.txt
import os
os.environ.setdefault("DEV", "CPU")
from tinygrad import Tensor, dtypes, Context

def vals(t): return " ".join(f"{v:.9g}" for v in t.flatten().tolist())

def x(*shape, dtype=dtypes.float32):
  n = 1
  for s in shape: n *= s
  return Tensor([(i + 1) / n for i in range(n)], dtype=dtype).reshape(*shape)

CASES = [("p0.5_4x4_seed42", 42, 0.5, (4, 4), dtypes.float32), ("p0.2_3x5_seed7", 7, 0.2, (3, 5), dtypes.float32),
         ("p0.7_2x3x2_seed1337", 1337, 0.7, (2, 3, 2), dtypes.float32), ("p0.5_4x3_seed3_f64", 3, 0.5, (4, 3), dtypes.float64)]
for name, seed, p, shape, dt in CASES:
  Tensor.manual_seed(seed)
  a = x(*shape, dtype=dt).realize()
  with Context(TRAINING=1):
    y = a.dropout(p)
    (y * y).sum().backward()
  print(f"dropout {name} {seed} {p} {dt.name} {' '.join(str(s) for s in shape)}")
  print(f"y {vals(y)}")
  print(f"grad {vals(a.grad)}")
# two dropouts in one training step draw different masks
Tensor.manual_seed(5)
a = x(2, 4).realize()
with Context(TRAINING=1): y1, y2 = a.dropout(0.5), a.dropout(0.5)
print("dropout_twice 5 0.5 float 2 4")
print(f"y {vals(y1.cat(y2))}")
