#!/usr/bin/env python3
# The reference's beautiful_mnist (examples/beautiful_mnist.py of tinygrad a9069c17) on Debian's Fashion-MNIST files,
# with Tensor.manual_seed(SEED) first (default 1337): prints the loss of every training step, then the test accuracy
# when EVAL=1. Goldens for tinygrad-cpp's two CPU renderers, which compute what the reference's do, to every printed digit:
#   mnist_goldens_clang.txt     DEV=CPU, the reference's default: C compiled by clang (our DEV=CPU, the CLANG renderer)
#   mnist_goldens.txt           DEV=CPU:LLVM, the reference's LLVM IR backend (our DEV=CPU:LLVM), on an AVX-512 host
#   mnist_goldens_avx2.txt      the same on a host without AVX-512 (AMD EPYC Zen 3): its LLVM IR lets LLVM use the
#                               host's reciprocal estimates, so the last digits depend on the instruction set
# The two differ by 2e-5 at step 0 and ~7e-3 by step 5 (clang fuses a*b+c where the C source has it in one expression,
# and the C renderer's flattened sums add left to right). The same with STEPS=70 EVAL=1:
#   mnist_goldens_clang_70.txt  test accuracy 81.18%
#   mnist_goldens_llvm_70.txt   test accuracy 80.13%
# cd <tinygrad checkout> && DEV=CPU STEPS=10 PYTHONPATH=. python3 <repo>/tests/parity/gen_mnist_goldens.py > mnist_goldens_clang.txt
import gzip, os, time
os.environ.setdefault("DEV", "CPU")
from typing import Callable
from tinygrad import Tensor, TinyJit, nn, GlobalCounters, function, Context
from tinygrad.helpers import getenv

D = getenv("FASHION_MNIST_PATH", "/usr/share/datasets/fashion-mnist")
def load(name, skip):
  return Tensor(gzip.open(os.path.join(D, name)).read()[skip:])
X_train = load("train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
Y_train = load("train-labels-idx1-ubyte.gz", 8)
X_test = load("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
Y_test = load("t10k-labels-idx1-ubyte.gz", 8)

class Model:
  def __init__(self):
    self.layers: list[Callable[[Tensor], Tensor]] = [
      nn.Conv2d(1, 32, 5), Tensor.relu,
      nn.Conv2d(32, 32, 5), Tensor.relu,
      nn.BatchNorm(32), Tensor.max_pool2d,
      nn.Conv2d(32, 64, 3), Tensor.relu,
      nn.Conv2d(64, 64, 3), Tensor.relu,
      nn.BatchNorm(64), Tensor.max_pool2d,
      lambda x: x.flatten(1), nn.Linear(576, 10)]

  @function
  def __call__(self, x:Tensor) -> Tensor: return x.sequential(self.layers)

  @TinyJit
  @Context(TRAINING=1)
  def train_step(self, X_train:Tensor, Y_train:Tensor) -> Tensor:
    opt.zero_grad()
    samples = Tensor.randint(getenv("BS", 512), high=X_train.shape[0])
    loss = self(X_train[samples]).sparse_categorical_crossentropy(Y_train[samples]).backward()
    return loss.realize(*opt.schedule_step())

  @TinyJit
  def get_test_acc(self, X_test:Tensor, Y_test:Tensor) -> Tensor: return (self(X_test).argmax(axis=1) == Y_test).mean()*100

Tensor.manual_seed(getenv("SEED", 1337))
model = Model()
opt = nn.optim.Adam(nn.state.get_parameters(model))
print(f"# beautiful_mnist, Fashion-MNIST, seed {getenv('SEED', 1337)}, BS {getenv('BS', 512)}")
for i in range(getenv("STEPS", 10)):
  GlobalCounters.reset()
  st = time.perf_counter()
  loss = model.train_step(X_train, Y_train)
  print(f"step {i} loss {loss.item():.6f} time {time.perf_counter()-st:.2f} s", flush=True)
if getenv("EVAL", 0): print(f"test_accuracy {model.get_test_acc(X_test, Y_test).item():.4f}")
