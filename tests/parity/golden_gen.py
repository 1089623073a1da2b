# What the golden generators in this folder (gen_*.py) share. They run inside a checkout of the reference (tinygrad
# a9069c17, the current directory) and import this module after setting the environment the reference reads at import.
#   out_path            where a generator writes (its first argument, else tests/data/<file>)
#   err_text            the one-line "<Type>: <message>" a golden records for an exception
#   canon, by_name, print_matchers   the structure of a matcher's UPats, as the C++ pattern tests compare it
#   NodePool, write_pooled, write_block   the pooled formats ("+ <node>" lines, "@i" references), counted blocks
#   stub_numpy, run_unittests, context_vars, TestCounter   running the reference's unittest modules
#   StepRecorder        every tracked graph_rewrite (and rewrite_group-like function) with the graph it returned
#   fl/it/nz, kernel_programs, run_programs   the seeded tensor programs gen_kernel_goldens.py and
#                       gen_codegen_goldens.py lower, and the loop that realizes them
#   info_line, run_lines, capture_first_runs, emulate   what those two record of a kernel and of its first run
#   fmt_value, flat     the text of .tolist() values
import math, os, random, struct, sys, types, unittest
sys.path.insert(0, os.getcwd())
from uop_codec import enc_arg, enc_node, dtype_attr
from tinygrad.uop.ops import UPat

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))

def out_path(name: str) -> str:
  return sys.argv[1] if len(sys.argv) > 1 else os.path.join(DATA, name)

def err_text(e: Exception, width: int) -> str:
  msg = str(e).strip()
  return f"{type(e).__name__}: {msg.splitlines()[0][:width] if msg else ''}"

def canon(p: UPat) -> str:
  if p.is_any: return "any(" + ",".join(canon(x) for x in p.src[0]) + ")"
  ops = "*" if p.op is None else "|".join(sorted(o.name for o in p.op))
  dt = "*" if p.match_dtype is None else "|".join(sorted(dtype_attr(d) for d in p.match_dtype))
  arg = "*" if p.arg is None else enc_arg(p.arg)
  tag = "*" if p.match_tag is None else "|".join(sorted(str(t) for t in p.match_tag))
  src = p._in_src
  if src is None: s = "-"
  elif isinstance(src, UPat): s = "R(" + canon(src) + ")"
  elif isinstance(src, list): s = "L(" + ",".join(canon(x) for x in src) + ")"
  else: s = "T(" + ",".join(canon(x) for x in src) + ")"
  return f"P[{ops};{dt};{arg};{p.name or ''};{tag};{'strict' if p.strict_length else 'any'};{s}]"

def by_name(module, names: str) -> dict:
  """{name: module.name} for the space-separated names, in their order"""
  return {n: getattr(module, n) for n in names.split()}

def print_matchers(header, matchers: dict):
  """the pattern goldens: a header line (None: none), then per matcher "matcher <name> <n>" and its rules' canon"""
  if header is not None: print(header)
  for name, pm in matchers.items():
    print(f"matcher {name} {len(pm.patterns)}")
    for p, _ in pm.patterns: print(canon(p))

class NodePool:
  """ref(root) writes a line "+ <node>" (uop_codec's encoding, sources as pool indices) for every node of root's graph
  not in the pool yet, and returns "@<pool index of root>"; clear() starts the next record's pool"""
  def __init__(self, write_line):
    self.write_line, self.index = write_line, {}
  def clear(self): self.index.clear()
  def ref(self, root) -> str:
    for u in root.toposort():
      if u in self.index: continue
      self.write_line(f"+ {enc_node(u, self.index)}")
      self.index[u] = len(self.index)
    return f"@{self.index[root]}"

def write_pooled(path: str, header: list, records: list, write_record):
  """a pooled golden file: the header lines, then per record a fresh node pool and write_record(w, ref, i, record),
  where w(line) writes one line and ref(root) writes root's new nodes and returns "@<its pool index>"."""
  with open(path, "w") as f:
    def w(line: str): f.write(line + "\n")
    for line in header: w(line)
    pool = NodePool(w)
    for i, r in enumerate(records):
      pool.clear()
      write_record(w, pool.ref, i, r)

def write_block(w, key: str, lines: list):
  """a counted block: "<key> <n>" and the n lines"""
  w(f"{key} {len(lines)}")
  for line in lines: w(line)

# ***** the reference's unittest modules *****
def stub_numpy():
  """numpy is not installed: test/helpers.py imports it at module level; this stub lets such files load (tests that
  really use numpy error out)"""
  class _NumpyStub(types.ModuleType):
    def __getattr__(self, name):
      if name.startswith("__"): raise AttributeError(name)
      raise ImportError(f"numpy is not installed (numpy.{name})")
  sys.modules.setdefault("numpy", _NumpyStub("numpy"))

def run_unittests(module, on_start):
  """runs every test of module quietly; on_start(test id) before each"""
  class Result(unittest.TextTestResult):
    def startTest(self, test):
      on_start(test.id())
      super().startTest(test)
  suite = unittest.defaultTestLoader.loadTestsFromModule(module)
  return unittest.TextTestRunner(resultclass=Result, verbosity=0, stream=open(os.devnull, "w")).run(suite)

def context_vars(names) -> str:
  """the ContextVars among names with their values now: "A=1 B=0" (sorted)"""
  from tinygrad.helpers import ContextVar
  return " ".join(f"{k}={v.value}" for k, v in sorted(ContextVar._cache.items()) if k in names)

class TestCounter:
  """the current test's id and how many records it made: next() numbers the test's next record from 0"""
  def __init__(self): self.test, self.counts = "?", {}
  def next(self) -> int:
    n = self.counts[self.test] = self.counts.get(self.test, -1) + 1
    return n

# ***** the graph_rewrite step recorder *****
class StepRecorder:
  """Wraps graph_rewrite at its root (the cell of the function rewrite_group decorates, so every module's reference to
  it is seen). While on, every tracked call (TRACK_MATCH_STATS>=2; "process UPat"/"compile UPat" are not) appends
  "<depth> <flags> <name>" to steps (flags: b bottom_up, w walk, '-' none; depth as the reference's tracker counts it)
  and a call [depth, name, input graph or None, returned graph or None] to calls; the input is kept where
  keep_input(depth), the returned graph when the call returns."""
  def __init__(self, keep_input=lambda depth: False):
    import tinygrad.uop.ops as O
    self.O, self.keep_input = O, keep_input
    gr = O.graph_rewrite
    self.cell = gr.__closure__[gr.__code__.co_freevars.index("func")]
    self.orig = self.cell.cell_contents
    self.start(0)
    self.on = False
    self.cell.cell_contents = self._graph_rewrite
  def start(self, depth: int):
    self.on, self.depth, self.steps, self.calls = True, depth, [], []
  def step(self, name, fn, *args, flags="-", sink=None):
    """runs fn(*args) as one step named name (a rewrite_group(new_ctx=False) function is one to the tracker)"""
    if not self.on: return fn(*args)
    call = [self.depth, name, sink if self.keep_input(self.depth) else None, None]
    self.steps.append(f"{self.depth} {flags} {name}")
    self.calls.append(call)
    self.depth += 1
    try:
      call[3] = fn(*args)
      return call[3]
    finally: self.depth -= 1
  def _graph_rewrite(self, sink, pm, *args, **kwargs):
    name = kwargs.get("name") or "graph_rewrite"
    if not self.on or self.O.TRACK_MATCH_STATS.value < 2 or name in ("process UPat", "compile UPat"):
      return self.orig(sink, pm, *args, **kwargs)
    flags = ("b" if kwargs.get("bottom_up") else "") + ("w" if kwargs.get("walk") else "")
    return self.step(name, lambda: self.orig(sink, pm, *args, **kwargs), flags=flags or "-", sink=sink)

# ***** the seeded tensor programs of the kernel generators *****
rng = random.Random(1337)
def fl(*shape, lo=-2.0, hi=2.0, dtype=None):
  from tinygrad import Tensor, dtypes
  n = math.prod(shape)
  return Tensor([rng.uniform(lo, hi) for _ in range(n)], dtype=dtypes.float32 if dtype is None else dtype).reshape(*shape)
def it(*shape, lo=-20, hi=20, dtype=None, div=1):
  # div: the values drawn in [lo, hi] are divided (floor) by it, so a program's operands stay small enough that signed
  # arithmetic cannot overflow (undefined behaviour: LLVM's add nsw is poison there) while the draws stay the same
  from tinygrad import Tensor, dtypes
  n = math.prod(shape)
  return Tensor([rng.randint(lo, hi) // div for _ in range(n)], dtype=dtypes.int32 if dtype is None else dtype).reshape(*shape)
def nz(*shape, lo=1, hi=9, dtype=None):  # nonzero ints with random sign
  from tinygrad import Tensor, dtypes
  n = math.prod(shape)
  return Tensor([rng.randint(lo, hi) * rng.choice((-1, 1)) for _ in range(n)], dtype=dtypes.int32 if dtype is None else dtype).reshape(*shape)

def kernel_programs() -> list:
  """(name, program[, forced opts]): the tensor programs of gen_kernel_goldens.py (gen_codegen_goldens.py adds more);
  they draw their inputs from the one seeded rng, so their order is part of the goldens"""
  from tinygrad import Tensor, Variable, dtypes
  from tinygrad.codegen.opt import Opt, OptOps
  def p_symbolic():
    a = fl(3, 10)
    vi = Variable("i", 1, 10).bind(4)
    return (a[:, :vi] * 2 + 1)
  def p_symbolic_sum():
    a = fl(10, 4)
    vi = Variable("j", 1, 10).bind(7)
    return a[:vi].sum(0)
  return [
    ("add_f32", lambda: fl(4) + fl(4)),
    ("chain_f32", lambda: (fl(16) * fl(16) - fl(16)) * 0.5 + 3.0),
    ("div_f32", lambda: fl(8) / fl(8, lo=0.5, hi=3.0)),
    ("add_i32", lambda: it(12) * it(12) + 7),
    ("add_i8", lambda: it(8, lo=-128, hi=127, dtype=dtypes.int8, div=2) + it(8, lo=-128, hi=127, dtype=dtypes.int8, div=2)),
    ("mul_u8", lambda: it(8, lo=0, hi=255, dtype=dtypes.uint8) * it(8, lo=0, hi=255, dtype=dtypes.uint8)),
    ("sub_i16", lambda: it(6, lo=-30000, hi=30000, dtype=dtypes.int16, div=2) - it(6, lo=-30000, hi=30000, dtype=dtypes.int16, div=2)),
    ("add_u16", lambda: it(6, lo=0, hi=65535, dtype=dtypes.uint16) + 1000),
    ("mul_i64", lambda: it(5, lo=-10**9, hi=10**9, dtype=dtypes.int64) * 12345),
    ("add_u32", lambda: it(5, lo=0, hi=2**32-1, dtype=dtypes.uint32) + it(5, lo=0, hi=2**32-1, dtype=dtypes.uint32)),
    ("mul_u64", lambda: it(4, lo=0, hi=2**40, dtype=dtypes.uint64) * 3),
    ("add_f64", lambda: fl(6, dtype=dtypes.float64) * fl(6, dtype=dtypes.float64) + 1.0),
    ("add_f16", lambda: fl(8, dtype=dtypes.float16) + fl(8, dtype=dtypes.float16)),
    ("mul_bf16", lambda: fl(4, dtype=dtypes.bfloat16) * fl(4, dtype=dtypes.bfloat16)),
    ("bool_logic", lambda: (fl(8) < 0) & (fl(8) > -1) | (fl(8) == 0)),
    ("bcast_2d", lambda: fl(4, 1) + fl(1, 5)),
    ("bcast_scalar", lambda: fl(3, 4) * fl(1, 1)),
    ("sum_axis0", lambda: fl(4, 6).sum(0)),
    ("sum_axis1", lambda: fl(4, 6).sum(1)),
    ("sum_all", lambda: fl(5, 7).sum()),
    ("sum_3d_axis1", lambda: fl(2, 3, 4).sum(1)),
    ("max_axis0", lambda: fl(5, 3).max(0)),
    ("max_axis1", lambda: fl(5, 3).max(1)),
    ("prod_axis1", lambda: fl(3, 4, lo=0.5, hi=1.5).prod(1)),
    ("sum_i32", lambda: it(6, 5).sum(1)),
    ("mean", lambda: fl(4, 8).mean(1)),
    ("matmul_small", lambda: fl(3, 4) @ fl(4, 5)),
    ("matmul_8", lambda: fl(8, 8) @ fl(8, 8)),
    ("pad", lambda: fl(3, 3).pad(((1, 2), (0, 1)))),
    ("shrink", lambda: (fl(6, 6)[1:4, 2:5] + 1)),
    ("flip", lambda: fl(4, 3).flip(0) + fl(4, 3).flip(1)),
    ("permute", lambda: fl(2, 3, 4).permute(2, 0, 1).contiguous()),
    ("where", lambda: (fl(10) > 0).where(fl(10), fl(10) * -1)),
    ("cast_f2i", lambda: (fl(8, lo=-100, hi=100)).cast(dtypes.int32)),
    ("cast_i2f", lambda: it(8, lo=-1000, hi=1000).cast(dtypes.float32) * 0.25),
    ("cast_f2h", lambda: fl(8).cast(dtypes.float16)),
    ("cast_u8_f", lambda: it(8, lo=0, hi=255, dtype=dtypes.uint8).cast(dtypes.float32)),
    ("cast_b_i", lambda: (fl(8) > 0).cast(dtypes.int32) + 1),
    ("bitcast_f2i", lambda: fl(6).bitcast(dtypes.int32)),
    ("bitcast_i2f", lambda: it(6, lo=0, hi=2**30).bitcast(dtypes.float32)),
    ("idiv", lambda: it(12, lo=-50, hi=50) // nz(12)),
    ("imod", lambda: it(12, lo=-50, hi=50) % nz(12)),
    ("idiv_const", lambda: it(12, lo=-50, hi=50) // 7),
    ("shifts", lambda: (it(8, lo=0, hi=1000) << 3) + (it(8, lo=0, hi=1000) >> 2)),
    ("bitwise", lambda: (it(8) & it(8)) ^ (it(8) | 5)),
    ("exp", lambda: fl(8).exp()),
    ("log", lambda: fl(8, lo=0.1, hi=10).log()),
    ("sin", lambda: fl(8, lo=-6, hi=6).sin()),
    ("sqrt", lambda: fl(8, lo=0, hi=10).sqrt()),
    ("exp2_log2", lambda: fl(6).exp2() + fl(6, lo=0.5, hi=4).log2()),
    ("recip", lambda: fl(6, lo=0.5, hi=4).reciprocal()),
    ("relu_max", lambda: fl(10).relu() + fl(10).maximum(fl(10))),
    ("abs_neg", lambda: fl(8).abs() - (-fl(8))),
    ("trunc_floor", lambda: fl(8, lo=-5, hi=5).trunc() + fl(8, lo=-5, hi=5).floor() + fl(8, lo=-5, hi=5).ceil()),
    ("cmp_i32", lambda: (it(8) < it(8)).cast(dtypes.int32) + (it(8) == it(8)).cast(dtypes.int32)),
    ("argmax", lambda: fl(4, 6).argmax(1)),
    ("softmax", lambda: fl(3, 5).softmax(1)),
    ("arange", lambda: Tensor.arange(10) * 2),
    ("cumsum", lambda: fl(6).cumsum(0)),
    ("conv2d", lambda: fl(1, 2, 5, 5).conv2d(fl(3, 2, 3, 3))),
    ("double_sum", lambda: fl(6, dtype=dtypes.float64).sum()),
    ("half_sum", lambda: fl(8, dtype=dtypes.float16).sum()),
    ("symbolic", p_symbolic),
    ("symbolic_sum", p_symbolic_sum),
    ("pad", lambda: fl(3, 3).pad(((1, 2), (0, 1))).contiguous()),
    ("arange", lambda: (Tensor.arange(10) * 2).contiguous()),
    # opts the CPU heuristic only picks for big kernels: THREAD (core_id) on 2 threads, explicit UPCAST/UNROLL
    ("thread_add", lambda: fl(8) + fl(8), (Opt(OptOps.THREAD, 0, 2),)),
    ("thread_sum", lambda: fl(4, 6).sum(1), (Opt(OptOps.THREAD, 0, 2),)),
    ("upcast_unroll", lambda: fl(4, 8).sum(1), (Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UNROLL, 0, 4))),
    ("thread_symbolic", lambda: fl(4, 10)[:, :Variable("k", 1, 10).bind(6)] + 1, (Opt(OptOps.THREAD, 0, 2),)),
  ]

def run_programs(programs, kernels: list, begin) -> list:
  """realizes each program after begin(name, forced opts or None); a program that raises is left out (with the
  kernels it added) and named in the returned list"""
  import tinygrad.codegen as C
  skipped = []
  for name, fn, *opts in programs:
    begin(name, opts[0] if opts else None)
    n_before = len(kernels)
    C.to_program_cache.clear()  # keyed by the AST without the forced opts; every program lowers its own kernels
    try:
      t = fn().realize()
      if len(kernels) == n_before: t.tolist()  # a graph of consts is only computed when read
    except Exception as e:  # e.g. clang 14 has no __bf16 on x86: the program is left out
      del kernels[n_before:]
      skipped.append(f"{name} ({err_text(e, 80)})")
  return skipped

# ***** what the kernel generators record *****
def info_line(info) -> str:
  from tinygrad.uop.ops import UOp
  def dims(d): return "None" if d is None else ",".join(x.render() if isinstance(x, UOp) else str(x) for x in d)
  def ints(v): return ",".join(str(x) for x in v) or "-"
  return (f"info global={dims(info.global_size)} local={dims(info.local_size)} vars={','.join(v.expr for v in info.vars) or '-'} "
          f"globals={ints(info.globals)} outs={ints(info.outs)} ins={ints(info.ins)}")

def run_lines(run: dict) -> list:
  """the "vals" and "buf" lines of a kernel's first run"""
  return (["vals" + "".join(" -" if v is None else f" {v}" for v in run["vals"])] +
          [f"buf {dt} {n} {x or '-'} {y or '-'}" for dt, n, x, y in run["bufs"]])

def capture_first_runs(by_key: dict, on_run):
  """Wraps the exec_kernel rule of engine.realize.pm_exec: the first run of a kernel whose PROGRAM key is in by_key
  stores record["run"] = {"vals": Variable values in slot order (None = core_id), "bufs": [(dtype attr, count, hex
  before, hex after)] in PROGRAM.arg.globals order}, then calls on_run(record, bytes before, vals, var_vals)."""
  import tinygrad.engine.realize as R
  from tinygrad.uop.ops import Ops, PatternMatcher, UPat
  _first_runs.update(by_key=by_key, on_run=on_run, R=R, orig_exec=R.exec_kernel)
  R.pm_exec = PatternMatcher([(UPat(Ops.CALL, src=(UPat(Ops.PROGRAM, name="ast"),), name="call", allow_any_len=True), _exec_kernel)]) + R.pm_exec

# a rule's function may not be a closure (the reference compiles it with a snapshot of its module's globals)
_first_runs: dict = {}
def _exec_kernel(ctx, call, ast):
  st = _first_runs
  k = st["by_key"].get(ast.key)
  if k is None or "run" in k: return st["orig_exec"](ctx, call, ast)
  resolved = st["R"].resolve_params(call, ctx.input_uops)
  bufs = [resolved[i].buffer.ensure_allocated() for i in ast.arg.globals]
  before = [bytes(b.as_memoryview()) for b in bufs]
  ret = st["orig_exec"](ctx, call, ast)
  after = [bytes(b.as_memoryview()) for b in bufs]
  vals = ast.arg.vals(ctx.var_vals)
  k["run"] = {"vals": vals, "bufs": [(dtype_attr(b.dtype), b.size, x.hex(), y.hex()) for b, x, y in zip(bufs, before, after)]}
  st["on_run"](k, before, vals, ctx.var_vals)
  return ret

def emulate(uops, before, vals, global_size, local_size=(1, 1, 1)):
  """the reference's PYTHON device (runtime/ops_python.py PythonProgram) on a linear program and the run's inputs; a
  core_id kernel runs once per thread id like the CPU launcher. The buffers after the run (hex), or the error when it
  cannot run it (python_alu has no FDIV; python < 3.12 has no float16 memoryviews)"""
  from tinygrad.uop.ops import Ops
  from tinygrad.runtime.ops_python import PythonProgram
  prg = object.__new__(PythonProgram)
  prg.uops, prg.uop_to_index = uops, {u: i for i, u in enumerate(uops)}
  prg.loop_ends = {u.src[1]: i for i, u in enumerate(uops) if u.op == Ops.END}
  bufs = [memoryview(bytearray(x)) for x in before]
  try:
    if None in vals:
      for tid in range(global_size[0]): prg(*bufs, vals=tuple(tid if v is None else v for v in vals))
    else: prg(*bufs, global_size=global_size, local_size=local_size, vals=vals)
  except Exception as e: return err_text(e, 60)
  return [bytes(b).hex() for b in bufs]

# ***** values *****
def fmt_value(v) -> str:
  """an int, 1/0 for a bool, the 16 hex digits of a float's double"""
  if isinstance(v, bool): return "1" if v else "0"
  if isinstance(v, float): return struct.pack(">d", v).hex()
  return str(v)

def flat(x):
  if isinstance(x, list):
    for y in x: yield from flat(y)
  else: yield x
