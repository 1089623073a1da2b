#!/usr/bin/env python3
# Regenerates tests/data/setitem_goldens.txt: Tensor.__setitem__ programs run by the reference (tinygrad a9069c17,
# DEV=CPU): basic indices into realized tensors (view assign), unrealized tensors (replaced by _getitem(indices, v)),
# tensor indices (advanced setitem), += through a view, and the errors. For each program: the final values of the
# tensor (and of a second tensor where the program has one), or the error message. test_setitem.cpp runs the same
# programs with tg::Tensor::setitem on CPU and INTERP.
# cd <tinygrad checkout> && PYTHONPATH=. python3 <repo>/tests/parity/gen_setitem_goldens.py > <repo>/tests/data/setitem_goldens.txt
import os
os.environ.setdefault("DEV", "CPU")
from tinygrad import Tensor, dtypes

def data(*shape, dtype=dtypes.float32, realize=True):
  n = 1
  for s in shape: n *= s
  t = Tensor([i + 1 for i in range(n)], dtype=dtype).reshape(*shape)
  return t.realize() if realize else t

def fmt(t): return f"{t.dtype.name} {' '.join(str(s) for s in t.shape)} : {' '.join(f'{v:.9g}' if isinstance(v, float) else str(int(v)) for v in t.flatten().tolist())}"

def p_realized_row():
  t = data(3, 4); t[1] = 5.0; return [t]
def p_realized_slice_tensor():
  t = data(3, 4); t[:, 1:3] = Tensor([[10., 11.], [12., 13.], [14., 15.]]); return [t]
def p_realized_step_flip_broadcast():
  t = data(4, 4); t[::2, ::-1] = Tensor([-1., -2., -3., -4.]); return [t]
def p_realized_int_scalar():
  t = data(3, 4, dtype=dtypes.int32); t[0, 2] = 7; return [t]
def p_realized_negative_index():
  t = data(3, 4); t[-1, -2] = 3.5; return [t]
def p_realized_step3():
  t = data(7); t[1::3] = Tensor([10., 20.]); return [t]
def p_realized_ellipsis():
  t = data(2, 3, 2); t[..., 1] = Tensor([[0.5, 1.5, 2.5]]); return [t]
def p_realized_view_seen_by_other():
  t = data(2, 3); u = t.reshape(3, 2); t[0, 1:] = Tensor([8., 9.]); return [t, u]
def p_unrealized_float():
  t = data(3, 4) * 2; t[1:, 0] = Tensor([-1., -2.]); return [t]
def p_unrealized_int_basic():
  t = data(3, 4, dtype=dtypes.int32) * 3; t[2] = -1; return [t]
def p_unrealized_float_step():
  t = data(5, realize=False) + 0.5; t[::-2] = 0.0; return [t]
def p_advanced_rows():
  t = data(4, 3); t[Tensor([0, 2])] = Tensor([[7., 8., 9.], [4., 5., 6.]]); return [t]
def p_advanced_with_slice():
  t = data(4, 3); t[Tensor([1, 3]), 1:] = 9.0; return [t]
def p_advanced_two_tensors():
  t = data(3, 3); t[Tensor([0, 2]), Tensor([1, 0])] = Tensor([50., 60.]); return [t]
def p_advanced_duplicates_last_wins():
  t = data(3, 2); t[Tensor([1, 1])] = Tensor([[1., 2.], [3., 4.]]); return [t]
def p_advanced_unrealized_float():
  t = data(4, 2) - 1; t[Tensor([2, 0])] = Tensor([100., 200.]).reshape(2, 1); return [t]
def p_advanced_int_realized():
  t = data(2, 4, dtype=dtypes.int32); t[:, Tensor([3, -4])] = 0; return [t]
def p_advanced_nonconsecutive():
  t = data(2, 3, 4); t[Tensor([0, 1]), :, Tensor([2, 3])] = Tensor([[-1., -2., -3.], [-4., -5., -6.]]); return [t]
def p_advanced_permuted():
  t = data(2, 3, 2, 2); t[:, Tensor([0, 2]), :, Tensor([1, 0])] = data(2, 2, 2, realize=False) * -1; return [t]
def p_advanced_broadcast_index():
  t = data(3, 4); t[Tensor([[0], [2]]), Tensor([1, 3])] = 0.5; return [t]
def p_none_index_unrealized():
  t = data(2, 3) + 0; t[None, 1, ::2] = Tensor([7., 8.]); return [t]
def p_iadd_view():
  t = data(4, 2); t[1:3] += 1; return [t]
def p_isub_view_unrealized():
  t = data(3, 2) * 1; t[0] -= 10; return [t]
def p_inplace_ops():
  t = data(3); u = t; t += 1; t *= 2; t -= Tensor([1., 1., 1.]); t /= 4; return [t, u]
def p_err_weak():
  t = Tensor(2.0); t[None] = 1.0; return [t]
def p_err_dtype():
  t = data(3); t[0] = Tensor([1], dtype=dtypes.int32).reshape(()); return [t]
def p_err_other_uses():
  t = data(3) * 2; u = t + 1; t[0] = 5.0; return [t, u]

PROGRAMS = [(k[2:], v) for k, v in list(globals().items()) if k.startswith("p_")]
for name, fn in PROGRAMS:
  print(f"case {name}")
  try:
    for t in fn(): print(f"vals {fmt(t)}")
  except Exception as e:
    print(f"error {type(e).__name__}: {e}")
