#!/usr/bin/env python3
# Regenerates tests/data/codegen_unit_asts.txt: the kernel ASTs of the reference's codegen unit tests that build
# their kernels with Tensor (test/null/test_linearizer_rewrite.py, test/backend/test_linearizer.py): the AST the
# scheduler hands to codegen, the opts the test applies, and the reference's lowered SINK and linear program. The
# assertions of each test are transcribed in tests/unit/test_codegen.cpp.
# Run from a checkout of tinygrad a9069c17:
#   cd <tinygrad> && python3 <repo>/tests/parity/gen_codegen_unit_asts.py > <repo>/tests/data/codegen_unit_asts.txt
# Format: "case <name> <renderer: clang|local>", node pool lines "+ <node>" (uop_codec encoding, indices into the
# case's pool), "ast @i", "sink @i" (full_rewrite_to_sink), "program @i" (LINEAR after line_rewrite).
import os, sys
os.environ["DEV"] = "CPU"
os.environ["NUM_CPU_THREADS"] = "8"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from dataclasses import replace
from uop_codec import enc_arg, dtype_attr
from tinygrad import Tensor, Device, dtypes
from tinygrad.helpers import Context
from tinygrad.uop.ops import UOp, Ops, KernelInfo
import tinygrad.codegen as C
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.renderer.cstyle import ClangRenderer

clang_ren = Device["CPU"].renderer
class LocalClangRenderer(ClangRenderer):
  has_local = True
  has_threads = False
  global_max = (0x8FFFFFFF,) * 3
local_ren = LocalClangRenderer(clang_ren.target)

def last_ast(t) -> UOp: return t.schedule_linear().src[-1].src[0]
def with_opts(ast, opts): return ast if opts is None else ast.replace(arg=replace(ast.arg, opts_to_apply=tuple(opts)))

cases = []
def case(name, ast, opts=None, ren="clang"): cases.append((name, with_opts(ast, opts), ren))

# test/null/test_linearizer_rewrite.py
with Context(SPLIT_REDUCEOP=0):
  t = Tensor.ones((64,64)).contiguous().realize()
  case("rewrite_reduction", last_ast((t*2).sum(axis=1)).replace(arg=KernelInfo(opts_to_apply=(Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UNROLL, 0, 4)))))
  case("rewrite_arange", last_ast(Tensor.arange(32).clone()).replace(arg=KernelInfo(opts_to_apply=(Opt(OptOps.UPCAST, 0, 4),))))
ast4 = last_ast(Tensor.arange(4).clone())
case("kernel_info_no_opts", ast4.replace(arg=KernelInfo(opts_to_apply=())))
case("kernel_info_custom_name", ast4.replace(arg=KernelInfo(name="custom")))

# test/backend/test_linearizer.py
a2 = Tensor.randn(2).realize()
case("two_nested_range", last_ast(a2.reshape(2, 1).expand(2, 3).sum()), [])
case("three_nested_range", last_ast(a2.reshape(2, 1).expand(2, 3).expand(2, 2, 3).sum()), [])
case("two_nested_range_alt_indexing", last_ast(Tensor([2, 2]).realize().reshape(2, 1).pad(((1, 1), (1, 1)), value=2).sum()), [])
a41, b11 = Tensor.randn(4, 1).realize(), Tensor.randn(1, 1).realize()
case("range_outer_op_before_phi", last_ast((a41 + b11[0]).sum() + b11[0]), [])
case("range_outer_op_before_phi_nested_range", last_ast((a2.reshape(2, 1).expand(2, 3) + b11[0]).sum() + b11[0]), [])
a4 = Tensor.randn(4).realize()
case("load_dedup", last_ast(a4[:-1] + a4[1:]), [Opt(op=OptOps.UPCAST, axis=0, arg=0)])
x13, w12 = Tensor.randn((1,1,3)).realize(), Tensor.randn((1,1,2)).realize()
case("reduce_upcast", last_ast(Tensor.conv2d(x13, w12, padding=1).relu()),
     [Opt(op=OptOps.UPCAST, axis=0, arg=0), Opt(op=OptOps.UNROLL, axis=0, arg=0)])
case("upcast_with_locals", last_ast((Tensor.rand(1,128).realize() @ Tensor.rand(128, 128).realize()).relu()),
     [Opt(op=OptOps.GROUP, axis=0, arg=8), Opt(op=OptOps.LOCAL, axis=0, arg=4), Opt(op=OptOps.UPCAST, axis=0, arg=4)], ren="local")
a1, b1 = Tensor.randn(1).realize(), Tensor.randn(1).realize()
case("zero_fold", last_ast(Tensor.stack(a1, b1)), [Opt(op=OptOps.UPCAST, axis=0, arg=0)])
for tdt in (dtypes.bool, dtypes.int16, dtypes.float16, dtypes.bfloat16):
  case(f"sum_acc_dtype_{tdt.name}", last_ast(Tensor([1, 2, 3], dtype=tdt).sum()), [])
a88, b88 = Tensor.rand(8, 8).realize(), Tensor.rand(8, 8).realize()
case("arg_acc_dtype_sum_f16", last_ast(a88.sum(dtype=dtypes.float16)), [])
case("arg_acc_dtype_matmul_f16", last_ast(a88.matmul(b88, dtype=dtypes.float16)), [])
case("arg_acc_dtype_matmul", last_ast(a88.matmul(b88)), [])
x64, y64 = Tensor.empty(64, 64), Tensor.empty(64, 64)
case("simple_unroll_no_between_phi_dependencies", last_ast((x64@y64).relu()), [Opt(OptOps.UNROLL, 0, 4), Opt(OptOps.UPCAST, 0, 4)])
case("default_global_reversed", last_ast(Tensor.ones(5, 6, 7).contiguous().realize().shrink(((0, 4), (0, 5), (0, 6)))+1), [], ren="local")
a44 = Tensor.ones(4, 4).contiguous().realize()
a44.assign(a44.shrink(((1, 2), None)).pad(((1, 2), None)).bool().where(2, a44))
case("where_fold", last_ast(a44), [])
case("phi_simplification_arange_float", last_ast(Tensor.arange(5.5, (3.5*300), 3.5).clone()))
case("phi_simplification_arange_neg", last_ast(Tensor.arange(-1, -100, -5).clone()))
case("phi_simplification_arange_255", last_ast(Tensor.arange(255).clone()))
case("grouped_store_locals_and_globals", last_ast(x64@y64),
     [Opt(OptOps.LOCAL, 0, 4), Opt(OptOps.GROUPTOP, 0, 8), Opt(OptOps.UNROLL, 0, 4), Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UPCAST, 1, 2)], ren="local")
def single_kernel_softmax(x_in:Tensor) -> Tensor:
  # test/backend/test_softmax_fusion.py (that module imports numpy)
  x = x_in.reshape(-1, x_in.shape[-1])
  nr_dim, r_dim = x.shape
  inp = x.reshape(nr_dim, 1, 1, r_dim).expand(nr_dim, r_dim, 1, r_dim)
  imx = x.reshape(nr_dim, 1, r_dim, 1).expand(nr_dim, r_dim, r_dim, r_dim).max(axis=-2, keepdim=True)
  m = inp - imx.detach()
  e = m.exp()
  ss = e.sum(axis=-1, keepdim=True)
  inp = x.reshape(nr_dim, r_dim, 1, 1)
  imx = x.reshape(nr_dim, 1, r_dim, 1).expand(nr_dim, r_dim, r_dim, 1).max(axis=-2, keepdim=True)
  m = inp - imx.detach()
  e = m.exp()
  return e.div(ss).reshape(x_in.shape)
case("two_grouped_stores_local", last_ast(single_kernel_softmax(Tensor.rand(32, 32).realize())),
     [Opt(OptOps.GROUP, 1, 4), Opt(OptOps.GROUP, 2, 4)], ren="local")

# opts the goldens' programs do not reach: SWAP of two global axes, NOLOCALS (global dims named idx), GROUP + LOCAL
xt = Tensor.empty(16, 24)
case("swap_globals", last_ast((xt.T + 1).contiguous()), [Opt(OptOps.SWAP, 0, 1)], ren="local")
case("nolocals", last_ast((xt.T + 1).contiguous()), [Opt(OptOps.NOLOCALS), Opt(OptOps.UPCAST, 0, 4)], ren="local")
case("group_local", last_ast(Tensor.empty(32, 64).sum(1)), [Opt(OptOps.GROUP, 0, 8), Opt(OptOps.LOCAL, 0, 4)], ren="local")
case("thread_upcast_unroll", last_ast(Tensor.empty(32, 64).sum(1)), [Opt(OptOps.THREAD, 0, 4), Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UNROLL, 0, 4)])

print("# kernel ASTs of the reference's codegen unit tests (tests/parity/gen_codegen_unit_asts.py), tinygrad a9069c17")
for name, ast, ren in cases:
  r = clang_ren if ren == "clang" else local_ren
  sink = C.full_rewrite_to_sink(ast, r, optimize=ast.tag is None)
  lin = UOp(Ops.LINEAR, src=tuple(C.line_rewrite(C.linearize(sink), C.pm_linearize_cleanups)))
  print(f"case {name} {ren}")
  pool = {}
  def ref(root):
    for u in root.toposort():
      if u in pool: continue
      print(f"+ {u.op.name} {dtype_attr(u.dtype)} {enc_arg(u.arg)} {enc_arg(u.tag)} {','.join(str(pool[x]) for x in u.src)}")
      pool[u] = len(pool)
    return f"@{pool[root]}"
  print(f"ast {ref(ast)}")
  print(f"sink {ref(sink)}")
  print(f"program {ref(lin)}")
