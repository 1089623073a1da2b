#!/usr/bin/env python3
# Regenerates tests/data/cpu_bench_kernels.txt: big kernels the reference lowers for its CPU device with the LLVM
# renderer and its default optimizations (the hand-coded heuristic: THREAD over NUM_CPU_THREADS cores, UPCAST, ...),
# for tests/bench/bench_cpu.cpp (GB/s of an elementwise add, GFLOPS of a matmul) and the THREAD tests of the CPU
# backend. The reference's own time per kernel (its CPUProgram runs the core_id chunks one after the other) is written
# as a comment.
#
# Run from a checkout of tinygrad a9069c17 (libLLVM-16 must be installed; NUM_CPU_THREADS is the chunk count):
#   cd <tinygrad> && DEV=CPU:LLVM NUM_CPU_THREADS=2 python3 <repo>/tests/parity/gen_cpu_bench_kernels.py \
#     > <repo>/tests/data/cpu_bench_kernels.txt
#
# File format (one record per kernel):
#   kernel <label> <function_name>
#   info global=.. local=.. vars=.. globals=.. outs=.. ins=..   the PROGRAM's ProgramInfo
#   global <g0> <g1> <g2>
#   vals <v...>      Variable values in ProgramInfo.vars order ('-' = core_id, filled by the launcher)
#   est ops=.. lds=.. mem=..   the reference's Estimates of the kernel (FLOPs, bytes loaded+stored, distinct bytes)
#   buf <dtype attr> <count>   one per global buffer, in ProgramInfo.globals order
#   source <n>       + n lines: the LLVM IR
import os, sys, array
os.environ.setdefault("DEV", "CPU:LLVM")
os.environ.setdefault("PARALLEL", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from uop_codec import dtype_attr
from tinygrad import Tensor, Device, dtypes
from tinygrad.uop.ops import Ops, PatternMatcher, UPat
import tinygrad.engine.realize as R

records: list[dict] = []
label = ["?"]

orig_to_program = R.to_program
def to_program(ast, ren):
  prg = orig_to_program(ast, ren)
  assert prg.src[2].op is Ops.SOURCE
  records.append({"label": label[0], "prg": prg})
  return prg
R.to_program = to_program

orig_exec = R.exec_kernel
def exec_kernel(ctx, call, ast):
  rec = next((r for r in records if r["prg"] is ast and "bufs" not in r), None)
  ret = orig_exec(ctx, call, ast)
  if rec is not None:
    resolved = R.resolve_params(call, ctx.input_uops)
    bufs = [resolved[i].buffer.ensure_allocated() for i in ast.arg.globals]
    rec["bufs"] = [(dtype_attr(b.dtype), b.size) for b in bufs]
    rec["vals"] = ast.arg.vals(ctx.var_vals)
    # the reference's time for this kernel: its CPUProgram, best of 5, on written memory (Tensor.empty leaves the
    # pages untouched: reading them would read the zero page); 0.5 keeps the matmul away from denormals
    for b in bufs: b.allocator._copyin(b._buf, memoryview(array.array(b.dtype.fmt, [b.dtype.const(0.5)]) * b.size).cast("B"))
    rt = R.get_runtime(bufs[0].device, ast)
    gs, ls = ast.arg.launch_dims(ctx.var_vals)
    rec["ref_s"] = min(rt(*[b._buf for b in bufs], global_size=gs, local_size=ls, vals=rec["vals"], wait=True) for _ in range(5))
  return ret
R.pm_exec = PatternMatcher([(UPat(Ops.CALL, src=(UPat(Ops.PROGRAM, name="ast"),), name="call", allow_any_len=True), exec_kernel)]) + R.pm_exec

N_ADD, N_MM = 1 << 24, 1024
programs = [
  ("add_16M", lambda: Tensor.empty(N_ADD) + Tensor.empty(N_ADD)),
  ("matmul_1024", lambda: Tensor.empty(N_MM, N_MM) @ Tensor.empty(N_MM, N_MM)),
]

Device[Device.DEFAULT]
for name, fn in programs:
  label[0] = name
  fn().realize()

print(f"# kernels from tinygrad a9069c17, DEV={os.environ['DEV']} NUM_CPU_THREADS={os.environ.get('NUM_CPU_THREADS', '(default)')}, "
      f"default optimizations")
for r in records:
  if "bufs" not in r: continue
  prg, info = r["prg"], r["prg"].arg
  est = prg.src[0].arg.estimates
  def dims(d): return "None" if d is None else ",".join(str(x) for x in d)
  def ints(v): return ",".join(str(x) for x in v) or "-"
  print(f"# reference time {r['ref_s']*1e3:.2f} ms ({est.ops/r['ref_s']*1e-9:.2f} GFLOPS, {est.mem/r['ref_s']*1e-9:.2f} GB/s distinct memory)")
  print(f"kernel {r['label']} {info.function_name}")
  print(f"info global={dims(info.global_size)} local={dims(info.local_size)} vars={','.join(v.expr for v in info.vars) or '-'} "
        f"globals={ints(info.globals)} outs={ints(info.outs)} ins={ints(info.ins)}")
  print("global " + " ".join(str(x) for x in info.global_size))
  print("vals" + "".join(" -" if v is None else f" {v}" for v in r["vals"]))
  print(f"est ops={est.ops} lds={est.lds} mem={est.mem}")
  for dt, n in r["bufs"]: print(f"buf {dt} {n}")
  src = prg.src[2].arg.split("\n")
  print(f"source {len(src)}")
  print("\n".join(src))
