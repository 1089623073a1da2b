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
  raise TypeError(f"cannot encode arg {a!r} of type {type(a)}")

def enc_graph(root: UOp) -> list[str]:
  topo = list(root.toposort())
  idx = {u: i for i, u in enumerate(topo)}
  return [f"{u.op.name} {dtype_attr(u.dtype)} {enc_arg(u.arg)} {enc_arg(u.tag)} {','.join(str(idx[s]) for s in u.src)}" for u in topo]
