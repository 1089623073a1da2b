#!/usr/bin/env python3
# Regenerates tests/data/function_goldens.txt: values the reference computes through tinygrad.function.function
# (forward outputs and gradients through the FUNCTION, realized on CPU). tests/parity/test_function.cpp builds the
# same programs with lib/function.h (call_function) and tg::gradient, realizes them and compares.
# Run from a checkout of tinygrad a9069c17:  cd <tinygrad> && DEV=CPU python3 <this file> > <repo>/tests/data/function_goldens.txt
import sys, os
sys.path.insert(0, os.getcwd())
from tinygrad import Tensor
from tinygrad.function import function

import math
from tinygrad import dtypes
INPUTS = []  # the inputs are printed too: the C++ side loads the same float32 values
def inp(*shape):
  n = 1
  for s in shape: n *= s
  t = Tensor([math.sin(i / n - 0.5) * 2 for i in range(n)], dtype=dtypes.float32).reshape(shape).contiguous().realize()
  INPUTS.append(t)
  return t

def F(name, body, **kw):
  body.__qualname__ = name
  return function(body, **kw)

def mlp(x, w, b): return (x @ w + b).relu()
def two_outs(a, b): return (a * b, (a + b).exp())
def square(x, w): return (x @ w).tanh()

def flat(t): 
  v = t.tolist()
  while v and isinstance(v[0], list): v = [y for x in v for y in x]
  return v

cases = {}
def case(name, fn): cases[name] = fn
def c_mlp(**kw):
  x, w, b = inp(2, 3), inp(3, 4), inp(4)
  out = F("mlp", mlp, **kw)(x, w, b)
  return [out, *out.sum().gradient(x, w, b)]
case("mlp", lambda: c_mlp())
case("mlp_precompile", lambda: c_mlp(precompile=True))
case("mlp_precompile_backward", lambda: c_mlp(precompile_backward=True))
def c_two():
  a, b = inp(2, 3), inp(2, 3)
  o0, o1 = F("two_outs", two_outs)(a, b)
  return [o0, o1, *(o0 * o1).sum().gradient(a, b)]
case("two_outputs", c_two)
def c_twice():
  x, w = inp(2, 3), inp(3, 3)
  f = F("square", square)
  out = f(f(x, w), w)
  return [out, *out.sum().gradient(x, w)]
case("twice", c_twice)

for name, fn in cases.items():
  INPUTS.clear()
  ts = fn()
  Tensor.realize(*ts)  # all at once: realizing the forward output alone first rewrites the graphs of the others
  print(f"case {name} {len(INPUTS)} {len(ts)}")
  for t in INPUTS: print("in " + " ".join(str(int(x)) for x in t.shape) + " : " + " ".join(repr(float(v)) for v in flat(t)))
  for t in ts: print("out " + " ".join(repr(float(v)) for v in flat(t)))
