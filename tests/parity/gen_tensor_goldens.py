# Goldens for the C++ Tensor and realize engine (tests/parity/test_tensor_goldens.cpp), taken from the reference.
# Run inside a checkout of tinygrad a9069c17:
#   cd <tinygrad> && PYTHONPATH=.:<repo>/tests/parity DEV=CPU:LLVM python3 <repo>/tests/parity/gen_tensor_goldens.py \
#     > <repo>/tests/data/tensor_goldens.txt
#   cd <tinygrad> && PYTHONPATH=.:<repo>/tests/parity DEV=CPU python3 <repo>/tests/parity/gen_tensor_goldens.py \
#     > <repo>/tests/data/tensor_goldens_clang.txt
# and with DEV=PYTHON (the twin of INTERP) for the kernels of tests/data/tensor_goldens_python_kernels.txt (its header
# has the command).
# The C++ CPU device has both renderers: DEV=CPU (CLANG: the ClangRenderer's ops and clang's arithmetic) is checked
# against the second file, DEV=CPU:LLVM against the first. The schedules are the same; the kernels' op sequences
# differ (native NEG/SUB/SQRT), and so do a few values in their last bits.
# For each program (the same list is written with the C++ Tensor API in test_tensor_goldens.cpp):
#   callify  the CALL transform_to_call returns (BUFFER slots renumbered in toposort order)
#   linear   the LINEAR create_linear_with_vars returns, with var_vals
#   inputs   the bytes of every BUFFER of the LINEAR that holds data before the run (host data)
#   kernels  one line per CALL: kernel name (no colors) and its linearized op sequence ("copy" for COPY calls)
#   sources  with GOLDEN_SOURCES=1: one line per PROGRAM CALL, its rendered source with \ and newlines escaped
#            (written for DEV=CL: the OpenCL C the C++ OpenCLRenderer must reproduce, tests/data/tensor_goldens_cl.txt:
#              cd <tinygrad> && GOLDEN_SOURCES=1 PYTHONPATH=.:<repo>/tests/parity DEV=CL python3 \
#                <repo>/tests/parity/gen_tensor_goldens.py > <repo>/tests/data/tensor_goldens_cl.txt
#            with PoCL as the OpenCL device)
#   error    the reference raised (message); nothing follows
#   out      per output: index of its BUFFER in the LINEAR's toposort, dtype, shape and .tolist() values
import os
import re, struct, sys
from tinygrad import Tensor, dtypes
from tinygrad.uop.ops import UOp, Ops
from tinygrad.engine.realize import compile_linear, run_linear
import tinygrad.tensor as tensor_mod
import uop_codec
from golden_gen import fmt_value, flat

ANSI = re.compile(r"\x1b\[[0-9;]*m")

def renumber(lines):
  # BUFFER slots come from a global counter: number them by first appearance instead (Variables keep slot -1)
  m, out = {}, []
  for l in lines:
    if l.startswith("BUFFER "):
      mm = re.search(r"P\(i(-?\d+),", l)
      if mm and mm.group(1) != "-1":
        s = m.setdefault(mm.group(1), len(m))
        l = l[:mm.start()] + f"P(i{s}," + l[mm.end():]
    out.append(l)
  return out

def vals(n, k=0): return [((i * 7 + k * 3) % 11 - 5) * 0.25 for i in range(n)]
def ivals(n, k=0): return [(i * 7 + k * 3) % 11 - 5 for i in range(n)]
def prod(s):
  r = 1
  for x in s: r *= x
  return r
def F(*shape, k=0): return Tensor(vals(prod(shape), k)).reshape(shape)
def I(*shape, k=0): return Tensor(ivals(prod(shape), k), dtype=dtypes.int32).reshape(shape)

def sym_shrink():
  vi = UOp.variable("i", 1, 10).bind(3)
  return [(F(10).shrink(((0, vi),)) * 2).sum()]
def sym_sum():
  vi = UOp.variable("j", 1, 10).bind(5)
  return [F(10, 4).shrink(((0, vi), None)).sum(0)]
def seeded(seed, f):
  def g():
    Tensor.manual_seed(seed)
    return f()
  return g
def multi_shared():
  x = F(4, 4).exp()
  return [x.sum(0), x.sum(1)]
def multi_out():
  a = F(6)
  return [a * 2, a + 1]

PROGRAMS = [
  ("add_scalar", lambda: [F(4) + 1]),
  ("ew_chain", lambda: [((F(3, 4) * 2 - F(3, 4, k=1)).relu() / 3)]),
  ("ew_exp_log", lambda: [(F(2, 5).exp() + 1).log()]),
  ("sqrt_abs", lambda: [F(4, 4).abs().sqrt()]),
  ("sigmoid", lambda: [F(3, 3).sigmoid()]),
  ("tanh", lambda: [F(8).tanh()]),
  ("where", lambda: [(F(4, 4) > 0).where(F(4, 4), F(4, 4, k=1))]),
  ("cmp_eq", lambda: [F(6) == F(6, k=2)]),
  ("neg", lambda: [-F(5)]),
  ("pow", lambda: [F(4).abs().pow(1.5)]),
  ("maximum", lambda: [F(3, 4).maximum(F(3, 4, k=1))]),
  ("sin", lambda: [F(7).sin()]),
  ("bcast_row", lambda: [F(3, 4) + F(4, k=1)]),
  ("bcast_col", lambda: [F(3, 1) * F(1, 4, k=1)]),
  ("bcast_3d", lambda: [F(2, 1, 3) - F(4, 1, k=1)]),
  ("sum_all", lambda: [F(4, 5).sum()]),
  ("sum_ax0", lambda: [F(4, 5).sum(0)]),
  ("sum_ax1", lambda: [F(4, 5).sum(1)]),
  ("sum_3d_ax0", lambda: [F(2, 3, 4).sum(0)]),
  ("sum_3d_ax1", lambda: [F(2, 3, 4).sum(1)]),
  ("sum_3d_ax2_keep", lambda: [F(2, 3, 4).sum(2, keepdim=True)]),
  ("sum_3d_ax02", lambda: [F(2, 3, 4).sum((0, 2))]),
  ("max_ax0", lambda: [F(4, 5).max(0)]),
  ("min_ax1", lambda: [F(4, 5).min(1)]),
  ("mean", lambda: [F(3, 6).mean()]),
  ("var", lambda: [F(3, 6).var(1)]),
  ("prod", lambda: [F(2, 3).prod(1)]),
  ("argmax", lambda: [F(4, 5).argmax(1)]),
  ("matmul_sq", lambda: [F(4, 4) @ F(4, 4, k=1)]),
  ("matmul_odd", lambda: [F(3, 5) @ F(5, 7, k=1)]),
  ("matmul_vec", lambda: [F(5) @ F(5, 3, k=1)]),
  ("matmul_batch", lambda: [F(2, 3, 4) @ F(2, 4, 5, k=1)]),
  ("matmul_17", lambda: [F(17, 13) @ F(13, 9, k=1)]),
  ("dot_sum", lambda: [(F(4, 4) @ F(4, 4, k=1)).sum()]),
  ("pad", lambda: [F(3, 3).pad(((1, 1), (2, 0)))]),
  ("pad_value", lambda: [F(2, 3).pad(((0, 1), (1, 1)), value=-1.0)]),
  ("shrink", lambda: [F(5, 5).shrink(((1, 4), (0, 2)))]),
  ("flip", lambda: [F(3, 4).flip(0)]),
  ("flip_both", lambda: [F(3, 4).flip((0, 1))]),
  ("permute", lambda: [F(2, 3, 4).permute(2, 0, 1)]),
  ("transpose_add", lambda: [F(3, 4).T + F(4, 3, k=1)]),
  ("reshape", lambda: [F(12).reshape(3, 4) * 2]),
  ("expand", lambda: [F(1, 4).expand(3, 4) + 1]),
  ("slice_step", lambda: [F(6, 6)[1:5:2, ::3]]),
  ("getitem_int", lambda: [F(4, 5)[2]]),
  ("getitem_neg", lambda: [F(4, 5)[:, -1]]),
  ("getitem_none", lambda: [F(4)[None, :, None]]),
  ("tensor_index", lambda: [F(5, 3)[Tensor([0, 2, 4, 1], dtype=dtypes.int32)]]),
  ("gather", lambda: [F(3, 4).gather(1, Tensor([0, 1, 2, 3, 1, 1], dtype=dtypes.int32).reshape(3, 2))]),
  ("softmax", lambda: [F(3, 5).softmax()]),
  ("log_softmax", lambda: [F(3, 5).log_softmax(0)]),
  ("cat", lambda: [F(2, 3).cat(F(1, 3, k=1), dim=0)]),
  ("cat_dim1", lambda: [F(2, 3).cat(F(2, 2, k=1), dim=1)]),
  ("stack", lambda: [Tensor.stack(F(3), F(3, k=1), F(3, k=2))]),
  ("cast_f2i", lambda: [F(6).cast(dtypes.int32)]),
  ("cast_i2f", lambda: [I(6).cast(dtypes.float32) / 2]),
  ("cast_f2h", lambda: [F(6).cast(dtypes.half)]),
  ("half_math", lambda: [F(6).half() * 3]),
  ("cast_bool", lambda: [F(6).cast(dtypes.bool)]),
  ("cast_u8", lambda: [I(6).cast(dtypes.uint8)]),
  ("int_arith", lambda: [I(8) * 3 + I(8, k=1)]),
  ("int_floordiv", lambda: [I(8) // 3]),
  ("int_mod", lambda: [I(8) % 3]),
  ("bitwise", lambda: [(I(8) & 6) | 1]),
  ("shift", lambda: [I(8).abs() << 2]),
  ("double", lambda: [F(4).cast(dtypes.float64) * 1.5]),
  ("int64", lambda: [I(4).cast(dtypes.int64) * 1000000]),
  ("arange", lambda: [Tensor.arange(10)]),
  ("arange_float", lambda: [Tensor.arange(0, 2, 0.25)]),
  ("eye", lambda: [Tensor.eye(4)]),
  ("linspace", lambda: [Tensor.linspace(0, 1, 5)]),
  ("ones_zeros", lambda: [Tensor.ones(3, 3) + Tensor.zeros(3, 3)]),
  ("full", lambda: [Tensor.full((2, 3), 7.0)]),
  ("rand", seeded(42, lambda: [Tensor.rand(5)])),
  ("randn", seeded(1, lambda: [Tensor.randn(2, 3)])),
  ("randint", seeded(3, lambda: [Tensor.randint(8, low=0, high=10)])),
  ("uniform", seeded(5, lambda: [Tensor.uniform(4, low=-1, high=1)])),
  ("multi_out", multi_out),
  ("multi_shared", multi_shared),
  ("sym_shrink", sym_shrink),
  ("sym_sum", sym_sum),
  ("cumsum", lambda: [F(6).cumsum()]),
  ("contiguous_chain", lambda: [(F(4, 4).contiguous() + 1).contiguous() * 2]),
  ("conv2d", lambda: [F(1, 1, 5, 5).conv2d(F(2, 1, 3, 3, k=1))]),
  ("max_pool2d", lambda: [F(1, 1, 4, 4).max_pool2d()]),
  ("layernorm", lambda: [F(2, 6).layernorm()]),
  ("triu", lambda: [F(4, 4).triu(1)]),
  ("clip", lambda: [F(8).clip(-0.5, 0.5)]),
  ("square_mean", lambda: [(F(3, 3) ** 2).mean(1)]),
  ("one_hot", lambda: [Tensor([0, 2, 1], dtype=dtypes.int32).one_hot(4)]),
]


def run(name, fn):
  print(f"case {name}")
  captured = []
  orig = tensor_mod.transform_to_call
  def spy(big_sink):
    ret = orig(big_sink)
    captured.append(ret[0])
    return ret
  tensor_mod.transform_to_call = spy
  try:
    outs = [t.contiguous() for t in fn()]
    linear, var_vals = Tensor.linear_with_vars(*outs)
  except Exception as e:
    print("error " + str(e).split("\n")[0])
    return
  finally:
    tensor_mod.transform_to_call = orig
  call = captured[-1]
  lines = renumber(uop_codec.enc_graph(call))
  print(f"callify {len(lines)}"); print("\n".join(lines))
  lines = renumber(uop_codec.enc_graph(linear))
  print(f"linear {len(lines)}"); print("\n".join(lines))
  print("varvals " + " ".join(f"{k}={v}" for k, v in sorted(var_vals.items())))
  topo = list(linear.toposort())
  inputs = [(i, u) for i, u in enumerate(topo) if u.op is Ops.BUFFER and u.is_realized]
  print(f"inputs {len(inputs)}")
  for i, u in inputs: print(i, bytes(u.buffer.as_memoryview()).hex())
  compiled = compile_linear(linear)
  print(f"kernels {len(compiled.src)}")
  for c in compiled.src:
    ast = c.src[0]
    if ast.op is Ops.PROGRAM: print(ANSI.sub("", ast.arg.name) + "|" + " ".join(u.op.name for u in ast.src[1].src))
    else: print("copy|" + ast.op.name)
  if os.environ.get("GOLDEN_SOURCES") == "1":
    progs = [c.src[0] for c in compiled.src if c.src[0].op is Ops.PROGRAM]
    print(f"sources {len(progs)}")
    for p in progs: print(p.src[2].arg.replace("\\", "\\\\").replace("\n", "\\n"))
  run_linear(linear, var_vals)
  print(f"outs {len(outs)}")
  for t in outs:
    base = t.uop.base
    idx = topo.index(base) if base in topo else -1
    v = t.tolist()
    vs = list(flat(v)) if isinstance(v, list) else [v]
    print(f"out {idx} {uop_codec.dtype_attr(t.dtype)} {','.join(str(s) for s in t.shape)} " + " ".join(fmt_value(x) for x in vs))

if __name__ == "__main__":
  print(f"# goldens for the C++ Tensor/realize engine: tests/parity/gen_tensor_goldens.py (DEV={os.environ.get('DEV', 'CPU')})")
  only = sys.argv[1:]
  for name, fn in PROGRAMS:
    if only and name not in only: continue
    run(name, fn)
