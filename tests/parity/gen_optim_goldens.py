#!/usr/bin/env python3
# Regenerates tests/data/optim_goldens.txt: three steps of each optimizer of the reference (tinygrad a9069c17,
# DEV=CPU, TRAINING=1) on a small problem, loss = ((x @ w + b).relu() - y).square().mean() with w, b from
# Tensor.manual_seed(1337); after every step: the loss before the step and the values of w and b.
# test_optim_goldens.cpp runs the same with tg::nn optimizers (gradients from tg::gradient) and compares (1e-5).
# cd <tinygrad checkout> && PYTHONPATH=. python3 <repo>/tests/parity/gen_optim_goldens.py > <repo>/tests/data/optim_goldens.txt
import os, math
os.environ.setdefault("DEV", "CPU")
from tinygrad import Tensor, nn, Context

def inp(*shape):
  n = math.prod(shape)
  return (Tensor.arange(n).float().reshape(*shape) / n - 0.5).sin() * 2

CASES = [
  ("sgd", lambda ps: nn.optim.SGD(ps, lr=0.1)),
  ("sgd_momentum_nesterov_wd", lambda ps: nn.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
  ("sgd_classic_momentum", lambda ps: nn.optim.SGD(ps, lr=0.05, momentum=0.8, classic=True)),
  ("adam", lambda ps: nn.optim.Adam(ps, lr=0.01)),
  ("adamw", lambda ps: nn.optim.AdamW(ps, lr=0.01, weight_decay=0.1)),
  ("lamb", lambda ps: nn.optim.LAMB(ps, lr=0.01, weight_decay=0.05)),
  ("lars", lambda ps: nn.optim.LARS(ps, lr=0.1)),
  ("muon", lambda ps: nn.optim.Muon(ps, lr=0.02)),
]

x, y = inp(5, 3), inp(5, 4) * 0.5
for name, make in CASES:
  Tensor.manual_seed(1337)
  w, b = Tensor.uniform(3, 4, low=-1, high=1), Tensor.uniform(4, low=-0.5, high=0.5)
  with Context(TRAINING=1):
    opt = make([w, b])
    print(f"case {name}")
    for step in range(3):
      opt.zero_grad()
      loss = ((x.matmul(w) + b).relu() - y).square().mean()
      loss.backward()
      opt.step()
      print(f"step {step} {loss.item():.9g}")
      print("w " + " ".join(f"{v:.9g}" for v in w.flatten().tolist()))
      print("b " + " ".join(f"{v:.9g}" for v in b.flatten().tolist()))
