#!/usr/bin/env python3
# Regenerates tests/data/gradient_goldens.txt: gradient graphs the reference's compute_gradient (mixin/gradient.py)
# builds through UOp.gradient on PARAM leaves, encoded with uop_codec.py. tests/parity/test_gradient_goldens.cpp builds
# the same forward graphs with the C++ API (a table by case name) and must get exactly these graphs, or a tg::Error
# where the reference raised.
# Run from a checkout of tinygrad a9069c17:  cd <tinygrad> && DEV=CPU python3 <this file> > <repo>/tests/data/gradient_goldens.txt
import sys, os, math
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from uop_codec import enc_graph
from tinygrad import dtypes
from tinygrad.uop.ops import UOp

def P(slot, dt, *shape): return UOp.param(slot, dt, shape)
def X(): return P(0, dtypes.float32, 2, 3)
def Y(): return P(1, dtypes.float32, 2, 3)
def W(): return P(2, dtypes.float32, 3, 4)
def V(): return P(3, dtypes.float32, 3)
def S(): return P(4, dtypes.float32)
def H(): return P(5, dtypes.float16, 2, 3)
def IMG(): return P(6, dtypes.float32, 1, 2, 5, 5)
def K(): return P(7, dtypes.float32, 3, 2, 3, 3)

cases = {}
def case(name, fn): cases[name] = fn

# each fn returns (output, [targets]) or (output, [targets], upstream gradient)
case("add", lambda: ((x:=X()) + (y:=Y()), [x, y], Y().const_like(1.0)))
case("sum_add", lambda: (((x:=X()) + (y:=Y())).sum(), [x, y]))
case("sub_mul", lambda: (((x:=X()) - (y:=Y()) * x).sum(), [x, y]))
case("div", lambda: (((x:=X()) / (y:=Y())).sum(), [x, y]))
case("reciprocal", lambda: ((x:=X()).reciprocal().sum(), [x]))
case("exp_log", lambda: ((x:=X()).exp().log().sum(), [x]))
case("exp2_log2", lambda: ((x:=X()).exp2().log2().sum(), [x]))
case("sin_cos_tan", lambda: (((x:=X()).sin() + x.cos() + x.tan()).sum(), [x]))
case("sqrt_rsqrt", lambda: (((x:=X()).sqrt() + x.rsqrt()).sum(), [x]))
case("pow_var", lambda: (((x:=X()) ** (y:=Y())).sum(), [x, y]))
case("pow_const", lambda: (((x:=X()) ** 3).sum(), [x]))
case("pow_half", lambda: (((x:=X()) ** 0.5).sum(), [x]))
case("rpow", lambda: ((2 ** (x:=X())).sum(), [x]))
case("maximum", lambda: ((x:=X()).maximum(y:=Y()).sum(), [x, y]))
case("minimum", lambda: ((x:=X()).minimum(y:=Y()).sum(), [x, y]))
case("relu", lambda: ((x:=X()).relu().sum(), [x]))
case("sigmoid", lambda: ((x:=X()).sigmoid().sum(), [x]))
case("tanh", lambda: ((x:=X()).tanh().sum(), [x]))
case("gelu", lambda: ((x:=X()).gelu().sum(), [x]))
case("silu", lambda: ((x:=X()).silu().sum(), [x]))
case("leaky_relu", lambda: ((x:=X()).leaky_relu(0.1).sum(), [x]))
case("abs", lambda: ((x:=X()).abs().sum(), [x]))
case("trunc_floor", lambda: (((x:=X()).trunc() + x.floor()).sum(), [x]))
case("where", lambda: (((x:=X()) > 0).where(x, (y:=Y()) * 2).sum(), [x, y]))
case("cmp_no_grad", lambda: (((x:=X()) < (y:=Y())).float().sum() + x.sum(), [x, y]))
case("sum_axis", lambda: ((x:=X()).sum(axis=1), [x], P(9, dtypes.float32, 2)))
case("sum_keepdim", lambda: (((x:=X()).sum(axis=0, keepdim=True) * x).sum(), [x]))
case("max_reduce", lambda: ((x:=X()).max(axis=1).sum(), [x]))
case("max_all", lambda: ((x:=X()).max(), [x]))
case("min_reduce", lambda: ((x:=X()).min(axis=0).sum(), [x]))
case("prod", lambda: ((x:=X()).prod(axis=1).sum(), [x]))
case("prod_all", lambda: ((x:=X()).prod(), [x]))
case("mean_var_std", lambda: (((x:=X()).mean() + x.var() + x.std(axis=1).sum()), [x]))
case("matmul", lambda: ((x:=X()).matmul(w:=W()).sum(), [x, w]))
case("matmul_relu_sum", lambda: ((x:=X()).matmul(w:=W()).relu().sum(), [x, w]))
case("dot_vec", lambda: ((x:=X()).dot(v:=V()).sum(), [x, v]))
case("broadcast_vec", lambda: (((x:=X()) * (v:=V())).sum(), [x, v]))
case("broadcast_scalar", lambda: (((x:=X()) * (s:=S())).sum(), [x, s]))
case("reshape_permute", lambda: (((x:=X()).reshape(3, 2).permute(1, 0) * (y:=Y())).sum(), [x, y]))
case("expand", lambda: (((v:=V()).reshape(1, 3).expand(2, 3) * (x:=X())).sum(), [v, x]))
case("flip", lambda: (((x:=X()).flip(1) * (y:=Y())).sum(), [x, y]))
case("pad", lambda: ((x:=X()).pad(((1, 0), (0, 2))).exp().sum(), [x]))
case("shrink", lambda: ((x:=X()).shrink(((0, 1), (1, 3))).exp().sum(), [x]))
case("getitem", lambda: (((x:=X())[1, 1:] * 3).sum(), [x]))
case("cat", lambda: ((x:=X()).cat(y:=Y(), dim=1).exp().sum(), [x, y]))
case("stack", lambda: (UOp.stack(x:=X(), y:=Y()).exp().sum(), [x, y]))
case("cast_half", lambda: ((x:=X()).cast(dtypes.float16).cast(dtypes.float32).sum(), [x]))
case("half_input", lambda: ((h:=H()).float().sum(), [h]))
case("contiguous", lambda: ((x:=X()).contiguous().exp().sum(), [x]))
case("contiguous_backward", lambda: ((x:=X()).contiguous_backward().exp().sum(), [x]))
case("detach", lambda: (((x:=X()) * x.detach()).sum(), [x]))
case("softmax", lambda: ((x:=X()).softmax().mul(y:=Y()).sum(), [x, y]))
case("log_softmax", lambda: ((x:=X()).log_softmax(axis=0).sum(), [x]))
case("logsumexp", lambda: ((x:=X()).logsumexp(axis=1).sum(), [x]))
case("layernorm", lambda: ((x:=X()).layernorm().mul(y:=Y()).sum(), [x, y]))
case("cross_entropy", lambda: ((x:=X()).sparse_categorical_crossentropy(UOp.arange(2).cast(dtypes.int32)), [x]))
case("conv2d", lambda: ((img:=IMG()).conv2d(k:=K(), padding=1).relu().sum(), [img, k]))
case("max_pool2d", lambda: ((img:=IMG()).max_pool2d().sum(), [img]))
case("avg_pool2d", lambda: ((img:=IMG()).avg_pool2d(stride=1).sum(), [img]))
case("unused_target", lambda: ((x:=X()).sum(), [x, Y()]))
case("two_paths", lambda: (((x:=X()).exp() * x.sin() + x).sum(), [x]))
case("err_int", lambda: ((i:=P(8, dtypes.int32, 2, 3)).sum(), [i]))
case("err_not_scalar", lambda: ((x:=X()) * 2, [x]))

# gradients through FUNCTIONs built by the reference's tinygrad.function.function (Tensors wrap the UOps; the body
# works on the UOps). The arguments are PARAMs on a device, so they become the FUNCTION's inputs.
from tinygrad import Tensor
from tinygrad.function import function
def D(slot, *shape): return UOp.param(slot, dtypes.float32, shape, "CPU")
def F(name, body, **kw):
  def wrapper(*ts):
    r = body(*[t.uop for t in ts])
    return tuple(Tensor(x) for x in r) if isinstance(r, tuple) else Tensor(r)
  wrapper.__qualname__ = name
  f = function(wrapper, **kw)
  def call(*uops):
    r = f(*[Tensor(u) for u in uops])
    return tuple(t.uop for t in r) if isinstance(r, tuple) else r.uop
  return call
def mlp(x, w, b): return (x @ w + b).relu()
def two_outs(a, b): return (a * b, (a + b).exp())
def square(x, w): return (x @ w).tanh()
IB = lambda: UOp.new_buffer("CPU", 3, dtypes.float32, num=1000).reshape((3,))
def with_buf(x): return (x * IB()).sum(axis=1)
case("fn_mlp", lambda: (F("mlp", mlp)(x:=D(0, 2, 3), w:=D(1, 3, 4), b:=D(2, 4)).sum(), [x, w, b]))
case("fn_mlp_some_targets", lambda: (F("mlp", mlp)(x:=D(0, 2, 3), D(1, 3, 4), b:=D(2, 4)).sum(), [x, b]))
case("fn_two_outputs", lambda: ((lambda o: (o[0] * o[1]).sum())(F("two_outs", two_outs)(a:=D(0, 2, 3), b:=D(1, 2, 3))), [a, b]))
case("fn_unused_output", lambda: (F("two_outs", two_outs)(a:=D(0, 2, 3), b:=D(1, 2, 3))[1].sum(), [a, b]))
case("fn_twice", lambda: ((f:=F("square", square))(f(x:=D(0, 2, 3), w:=D(1, 3, 3)), w).sum(), [x, w]))
case("fn_same_arg_twice", lambda: (F("two_outs", two_outs)(a:=D(0, 2, 3), a)[0].sum(), [a]))
case("fn_precompile", lambda: (F("mlp", mlp, precompile=True)(x:=D(0, 2, 3), w:=D(1, 3, 4), b:=D(2, 4)).sum(), [x, w, b]))
case("fn_precompile_two_outputs", lambda: ((lambda o: (o[0] + o[1]).sum())(F("two_outs", two_outs, precompile=True)(a:=D(0, 2, 3), b:=D(1, 2, 3))), [a, b]))
case("fn_precompile_backward", lambda: (F("mlp", mlp, precompile_backward=True)(x:=D(0, 2, 3), w:=D(1, 3, 4), b:=D(2, 4)).sum(), [x, w, b]))
case("fn_implicit_buffer", lambda: (F("with_buf", with_buf, allow_implicit=True)(x:=D(0, 2, 3)).sum(), [x]))
case("fn_err_implicit", lambda: (F("with_buf", with_buf)(x:=D(0, 2, 3)).sum(), [x]))
def call_no_grad_fxn():
  x = D(0, 2, 3)
  return x.after(UOp.sink(x.store(x)).call(x)).sum(), [x]
case("fn_err_call_no_grad_fxn", call_no_grad_fxn)  # an opaque CALL needs a grad_fxn (not in C++'s CallInfo)

out = []
for name, fn in cases.items():
  try:
    r = fn()
    out_uop, targets = r[0], r[1]
    grads = out_uop.gradient(*targets, gradient=r[2] if len(r) > 2 else None)
    g = enc_graph(UOp.sink(*grads))
    out.append(f"case {name}\ngraph {len(g)}\n" + "\n".join(g))
  except Exception as e:
    out.append(f"case {name}\nerror {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
print(f"# gradients from tinygrad's compute_gradient: {len(cases)} cases, gen_gradient_goldens.py")
print("\n".join(out))
