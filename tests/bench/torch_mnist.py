#!/usr/bin/python3
"""beautiful_mnist's training step in PyTorch: the model, batch, optimizer and thread count of
examples/beautiful_mnist.cpp, for `make bench`'s side-by-side pair (scripts/bench.sh runs it alternating with ours).

  /usr/bin/python3 tests/bench/torch_mnist.py --steps 8 [--threads 2] [--bs 512]

Prints one line per step in beautiful_mnist's format ("step N  loss L  T s"), so the same awk reads both. Needs
Debian's python3-torch (scripts/install-deps.sh installs it for `make bench` only) and dataset-fashion-mnist.
"""
import argparse, gzip, os, sys, time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DATA = os.environ.get("FASHION_MNIST_PATH", "/usr/share/datasets/fashion-mnist")


def idx(name, offset):
  with gzip.open(os.path.join(DATA, name), "rb") as f:
    return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


class Model(nn.Module):
  # the reference's beautiful_mnist: conv 5x5 x2, batchnorm, maxpool, conv 3x3 x2, batchnorm, maxpool, linear
  def __init__(self):
    super().__init__()
    self.c1, self.c2 = nn.Conv2d(1, 32, 5), nn.Conv2d(32, 32, 5)
    self.b1 = nn.BatchNorm2d(32)
    self.c3, self.c4 = nn.Conv2d(32, 64, 3), nn.Conv2d(64, 64, 3)
    self.b2 = nn.BatchNorm2d(64)
    self.l = nn.Linear(576, 10)

  def forward(self, x):
    x = F.max_pool2d(self.b1(F.relu(self.c2(F.relu(self.c1(x))))), 2)
    x = F.max_pool2d(self.b2(F.relu(self.c4(F.relu(self.c3(x))))), 2)
    return self.l(x.flatten(1))


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--steps", type=int, default=8)
  ap.add_argument("--bs", type=int, default=512)
  ap.add_argument("--threads", type=int, default=os.cpu_count())
  ap.add_argument("--seed", type=int, default=1337)
  a = ap.parse_args()
  torch.set_num_threads(a.threads)
  torch.manual_seed(a.seed)
  X = torch.from_numpy(idx("train-images-idx3-ubyte.gz", 16).astype(np.float32).reshape(-1, 1, 28, 28))
  Y = torch.from_numpy(idx("train-labels-idx1-ubyte.gz", 8).astype(np.int64))
  model = Model()
  opt = torch.optim.Adam(model.parameters())  # lr 0.001, as nn.optim.Adam's default
  print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, mkldnn {torch.backends.mkldnn.is_available()}")
  for i in range(a.steps):
    st = time.perf_counter()
    samples = torch.randint(0, X.shape[0], (a.bs,))
    opt.zero_grad()
    loss = F.cross_entropy(model(X[samples]), Y[samples])
    loss.backward()
    opt.step()
    l = loss.item()
    print(f"step {i:3d}  loss {l:9.6f}  {time.perf_counter() - st:7.3f} s", flush=True)


if __name__ == "__main__":
  sys.exit(main())
