# Serializes tinygrad UOp graphs into the text format read by lib/uop/serialize.h (decode_graph).
# Used by the golden generators in this folder; runs inside a checkout of the reference (tinygrad a9069c17).
import struct
from tinygrad.uop import Ops
from tinygrad.uop.ops import UOp, AxisType, ParamArg
from tinygrad.dtype import DType, AddrSpace, InvalidType, INVERSE_DTYPES_DICT

def dtype_attr(d: DType) -> str:
  if d.name == "uint128": return "_uint128"
  if d.name == "uint256": return "_uint256"
  return INVERSE_DTYPES_DICT[d.name]

def enc_arg(a) -> str:
  if a is None: return "N"
  if isinstance(a, InvalidType): return "I"
  if isinstance(a, bool): return "T" if a else "F"
  if isinstance(a, int) and not isinstance(a, (Ops, AxisType, AddrSpace)): return f"i{a}"
  if isinstance(a, float): return "f" + struct.pack(">d", float(a)).hex()
  if isinstance(a, str): return f"s{len(a.encode())}:{a}"
  if isinstance(a, DType): return "d" + dtype_attr(a) + " "
  if isinstance(a, Ops): return "o" + a.name + " "
  if isinstance(a, AxisType): return "a" + a.name + " "
  if isinstance(a, AddrSpace): return "A" + a.name + " "
  if isinstance(a, tuple): return "(" + ",".join(enc_arg(x) for x in a) + ")"
  if isinstance(a, ParamArg):
    fields = (a.slot, a.dtype, a.vmin_vmax, a.multiple_of, a.name, a.addrspace, a.axis, a.device, a.volatile)
    return "P(" + ",".join(enc_arg(x) for x in fields) + ")"
  if type(a).__name__ == "KernelInfo":
    # an Opt is written as the tuple (op name, axis, arg); Estimates as (ops, lds, mem)
    def opts(x): return None if x is None else tuple((o.op.name, o.axis, o.arg) for o in x)
    est = None if a.estimates is None else (a.estimates.ops, a.estimates.lds, a.estimates.mem)
    fields = (a.name, a.axis_types, a.dont_use_locals, opts(a.applied_opts), opts(a.opts_to_apply), est, a.beam)
    return "K(" + ",".join(enc_arg(x) for x in fields) + ")"
  if type(a).__name__ == "CallInfo":  # grad_fxn and aux are not encoded
    return "C(" + ",".join(enc_arg(x) for x in (a.name, a.precompile, a.precompile_backward)) + ")"
  if type(a).__name__ == "BufferizeOpts":  # schedule/indexing.py (the arg of STAGE)
    return "B(" + ",".join(enc_arg(x) for x in (a.device, a.addrspace, a.removable)) + ")"
  raise TypeError(f"cannot encode arg {a!r} of type {type(a)}")

def enc_node(u: UOp, idx: dict) -> str:
  """one node: op, dtype, arg, tag and its sources as indices (idx: node -> index of the nodes written before)"""
  return f"{u.op.name} {dtype_attr(u.dtype)} {enc_arg(u.arg)} {enc_arg(u.tag)} {','.join(str(idx[s]) for s in u.src)}"

def enc_graph(root: UOp) -> list[str]:
  topo = list(root.toposort())
  idx = {u: i for i, u in enumerate(topo)}
  return [enc_node(u, idx) for u in topo]

def dec_arg(s: str, i: int = 0):
  """inverse of enc_arg: returns (value, next index)"""
  from tinygrad.dtype import dtypes, Invalid
  c = s[i]; i += 1
  if c == "N": return None, i
  if c == "I": return Invalid, i
  if c == "T": return True, i
  if c == "F": return False, i
  if c == "i":
    j = i + (1 if s[i] == "-" else 0)
    while j < len(s) and s[j].isdigit(): j += 1
    return int(s[i:j]), j
  if c == "f": return struct.unpack(">d", bytes.fromhex(s[i:i+16]))[0], i+16
  if c == "s":
    j = s.index(":", i); n = int(s[i:j])
    return s[j+1:j+1+n], j+1+n
  if c in "doaA":
    j = i
    while j < len(s) and (s[j].isalnum() or s[j] == "_"): j += 1
    w = s[i:j]; j += 1 if j < len(s) and s[j] == " " else 0
    if c == "d": return getattr(dtypes, w), j
    if c == "o": return Ops[w], j
    if c == "a": return AxisType[w], j
    return AddrSpace[w], j
  if c == "K":
    from tinygrad.uop.ops import KernelInfo
    from tinygrad.codegen.opt import Opt, OptOps
    from tinygrad.renderer import Estimates
    fields, i = dec_arg(s, i)  # the fields as a tuple
    def opts(x): return None if x is None else tuple(Opt(OptOps[o], ax, ar) for o, ax, ar in x)
    name, axis_types, dont_use_locals, applied, to_apply, est, beam = fields
    return KernelInfo(name, axis_types, dont_use_locals, opts(applied), opts(to_apply), None if est is None else Estimates(*est),
                      beam), i
  if c == "C":
    from tinygrad.uop.ops import CallInfo
    fields, i = dec_arg(s, i)
    return CallInfo(None, *fields), i
  if c == "B":
    from tinygrad.schedule.indexing import BufferizeOpts
    fields, i = dec_arg(s, i)
    return BufferizeOpts(*fields), i
  if c in "(P":
    if c == "P": i += 1
    items = []
    if s[i] == ")": return (tuple(items) if c == "(" else ParamArg(*items)), i+1
    while True:
      v, i = dec_arg(s, i); items.append(v)
      if s[i] == ",": i += 1
      elif s[i] == ")": return (tuple(items) if c == "(" else ParamArg(*items)), i+1
  raise ValueError(f"bad arg at {i}: {s!r}")

def dec_node(line: str, nodes: list, const_arg=None) -> UOp:
  """one encoded node line whose src indices refer to nodes (a pool the caller grows); const_arg(arg, dtype), when
  given, makes a CONST's arg (e.g. the ConstFloat that UOp.const makes)"""
  from tinygrad.dtype import dtypes
  op, dt, rest = line.split(" ", 2)
  arg, i = dec_arg(rest, 0)
  if i < len(rest) and rest[i] == " ": i += 1
  tag, i = dec_arg(rest, i)
  if i < len(rest) and rest[i] == " ": i += 1
  srcs = tuple(nodes[int(x)] for x in rest[i:].split(",") if x != "")
  dtype = getattr(dtypes, dt)
  if const_arg is not None and op == "CONST": arg = const_arg(arg, dtype)
  return UOp(Ops[op], dtype, srcs, arg, tag)

def pooled_records(path: str, start: str, const_arg=None):
  """the records of a pooled golden file (a line "+ <node>" appends a node to the pool, "@i" names one): yields
  (line, pool) for every other line; a line beginning with start begins a new pool"""
  pool: list = []
  for line in open(path):
    line = line.rstrip("\n")
    if line.startswith("+ "):
      pool.append(dec_node(line[2:], pool, const_arg))
      continue
    if line.startswith(start): pool = []
    yield line, pool

def dec_graph(lines: list[str]) -> UOp:
  nodes = []
  for line in lines: nodes.append(dec_node(line, nodes))
  return nodes[-1]
