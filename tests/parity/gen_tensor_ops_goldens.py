# Forward cases in the style of the reference's test/backend/test_ops.py, with the reference's values, for
# tests/parity/test_tensor_ops.cpp (which builds each case with the C++ Tensor API from the same spec string).
# Run inside a checkout of tinygrad a9069c17:
#   cd <tinygrad> && PYTHONPATH=.:<repo>/tests/parity DEV=CPU python3 <repo>/tests/parity/gen_tensor_ops_goldens.py \
#     > <repo>/tests/data/tensor_ops_goldens.txt
#   cd <tinygrad> && PYTHONPATH=.:<repo>/tests/parity DEV=CL python3 <repo>/tests/parity/gen_tensor_ops_goldens.py \
#     > <repo>/tests/data/tensor_ops_goldens_cl.txt      (on PoCL, for the CL device)
# A case is "<op>;<args>;<inputs>": inputs are '/'-separated "<kind><shape>" with kind f (floats in [-1.25, 1.25]), n (nonzero int32),
# p (positive floats), u (floats in (-1, 1)), i (int32), b (bool) and shape like 3x4 ('s' for a 0-d tensor); the
# k-th input gets the k-th data pattern. args are '&'-separated key=value. Output lines:
#   case <spec>
#   out <dtype> <shape> <values: ints, 1/0, or 16 hex digits of the double, or ub>   |   error <message>
# "ub" stands where the value is undefined behaviour on the CPU device (a float cast to an integer type that cannot
# hold it: C's conversion and LLVM's fptosi/fptoui give poison there, and x86 machines differ); tests skip it.
import struct, sys, math
from tinygrad import Tensor, dtypes
from golden_gen import fmt_value, flat

def prod(s):
  r = 1
  for x in s: r *= x
  return r

def make_input(spec, k):
  kind, shp = spec[0], spec[1:]
  shape = () if shp == "s" else tuple(int(x) for x in shp.split("x"))
  n = prod(shape)
  base = [((i * 7 + k * 5) % 11 - 5) * 0.25 for i in range(n)]
  if kind == "f": vals, dt = base, dtypes.float32
  elif kind == "p": vals, dt = [abs(v) + 0.5 for v in base], dtypes.float32
  elif kind == "u": vals, dt = [v * 0.7 for v in base], dtypes.float32
  elif kind == "i": vals, dt = [(i * 7 + k * 5) % 11 - 5 for i in range(n)], dtypes.int32
  elif kind == "b": vals, dt = [v > 0 for v in base], dtypes.bool
  elif kind == "n": vals, dt = [((i * 7 + k * 5) % 11 - 5) or 3 for i in range(n)], dtypes.int32
  else: raise ValueError(kind)
  return Tensor(vals, dtype=dt).reshape(shape)

def ints(s): return tuple(int(x) for x in s.split("x")) if s else ()
def axis(a): return None if a is None else (int(a) if "x" not in a else ints(a))
def num(s): return float(s) if "." in s or "e" in s else int(s)

UNARY = ["neg", "relu", "sigmoid", "tanh", "exp", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tan", "abs", "sign",
         "ceil", "floor", "round", "trunc", "square", "reciprocal", "exp2", "erf", "gelu", "quick_gelu", "swish", "silu",
         "mish", "softplus", "softsign", "relu6", "hardswish", "hardsigmoid", "elu", "celu", "selu", "leaky_relu",
         "logsigmoid", "sinh", "cosh", "asinh", "acosh", "atanh", "asin", "acos", "atan", "isnan", "isinf",
         "isfinite", "logical_not", "bitwise_not", "hardtanh", "log10"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "eq", "ne", "lt", "gt", "le", "ge", "mod",
          "floordiv", "bitwise_and", "bitwise_or", "bitwise_xor", "lshift", "rshift"]

def run_op(op, a, x):
  if op in UNARY: return getattr(x[0], op)()
  if op in BINARY:
    if op in ("lt", "gt", "le", "ge", "floordiv"): op = f"__{op}__"
    if "scalar" in a: return getattr(x[0], op)(num(a["scalar"]), **({"reverse": True} if a.get("rev") == "1" else {}))
    return getattr(x[0], op)(x[1])
  if op in ("sum", "max", "min", "mean", "prod", "any", "all", "logsumexp"):
    return getattr(x[0], op)(axis(a.get("axis")), keepdim=a.get("keepdim") == "1")
  if op in ("var", "std"): return getattr(x[0], op)(axis(a.get("axis")), keepdim=a.get("keepdim") == "1", correction=num(a.get("corr", "1")))
  if op in ("argmax", "argmin"): return getattr(x[0], op)(axis(a.get("axis")), keepdim=a.get("keepdim") == "1")
  if op in ("softmax", "log_softmax", "cumsum"): return getattr(x[0], op)(int(a.get("axis", "-1" if op != "cumsum" else "0")))
  if op == "where": return x[0].where(x[1], x[2])
  if op == "matmul": return x[0].matmul(x[1])
  if op == "reshape": return x[0].reshape(ints(a["shape"]))
  if op == "permute": return x[0].permute(ints(a["order"]))
  if op == "flip": return x[0].flip(ints(a["axis"]))
  if op == "expand": return x[0].expand(ints(a["shape"]))
  if op == "transpose": return x[0].transpose(int(a["d0"]), int(a["d1"]))
  if op == "squeeze": return x[0].squeeze(int(a["dim"]))
  if op == "unsqueeze": return x[0].unsqueeze(int(a["dim"]))
  if op == "flatten": return x[0].flatten(int(a.get("start", "0")))
  if op == "repeat": return x[0].repeat(ints(a["r"]))
  if op == "pad":
    p = ints(a["p"]); return x[0].pad(tuple((p[2*i], p[2*i+1]) for i in range(len(p)//2)), value=num(a.get("value", "0.0")))
  if op == "shrink":
    p = ints(a["p"]); return x[0].shrink(tuple((p[2*i], p[2*i+1]) for i in range(len(p)//2)))
  if op == "cat": return x[0].cat(*x[1:], dim=int(a.get("dim", "0")))
  if op == "stack": return Tensor.stack(*x, dim=int(a.get("dim", "0")))
  if op == "slice":
    s = [int(v) for v in a["s"].split("x")]
    return x[0][tuple(slice(s[3*i], s[3*i+1], s[3*i+2]) for i in range(len(s)//3))]
  if op == "index": return x[0][int(a["i"])]
  if op == "conv2d": return x[0].conv2d(x[1], x[2] if len(x) > 2 else None, stride=int(a.get("stride", "1")), padding=int(a.get("padding", "0")), groups=int(a.get("groups", "1")))
  if op == "max_pool2d": return x[0].max_pool2d(int(a.get("k", "2")))
  if op == "avg_pool2d": return x[0].avg_pool2d(int(a.get("k", "2")))
  if op == "layernorm": return x[0].layernorm()
  if op == "linear": return x[0].linear(x[1], x[2] if len(x) > 2 else None)
  if op == "gather": return x[0].gather(int(a["dim"]), x[1].abs() % int(a["mod"]))
  if op == "clip": return x[0].clip(num(a["lo"]), num(a["hi"]))
  if op == "cast": return x[0].cast(getattr(dtypes, a["dt"]))
  if op == "triu": return x[0].triu(int(a.get("d", "0")))
  if op == "tril": return x[0].tril(int(a.get("d", "0")))
  if op == "sparse_ce": return x[0].sparse_categorical_crossentropy(x[1].abs() % int(a["mod"]))
  if op == "lerp": return x[0].lerp(x[1], num(a["w"]))
  raise ValueError(op)

def cases():
  out = []
  for op in UNARY:
    kind = "p" if op in ("log", "log2", "log10", "sqrt", "rsqrt", "reciprocal", "acosh") else \
           "u" if op in ("atanh", "asin", "acos") else "b" if op == "logical_not" else "i" if op == "bitwise_not" else "f"
    for shp in ("45x65", "4", "s"): out.append(f"{op};;{kind}{shp}")
  for op in BINARY:
    kinds = ("i", "n") if op in ("mod", "floordiv") else ("i", "i") if op in ("bitwise_and", "bitwise_or", "bitwise_xor") else \
            ("i", "I") if op in ("lshift", "rshift") else ("p", "f") if op == "pow" else ("f", "f")
    for s0, s1 in (("45x65", "45x65"), ("45x65", "65"), ("4x1", "1x5"), ("s", "3")):
      k1 = "i" if kinds[1] == "I" else kinds[1]
      if kinds[1] == "I": continue  # shifts by tensors of negative amounts are undefined; scalar shifts below
      out.append(f"{op};;{kinds[0]}{s0}/{k1}{s1}")
  for op, sc, kind in (("add", "2", "f"), ("add", "1.5", "i"), ("sub", "3", "f"), ("mul", "-1.5", "f"), ("div", "2", "f"),
                       ("div", "3", "i"), ("pow", "2", "f"), ("pow", "0.5", "p"), ("pow", "3", "i"), ("maximum", "0.5", "f"),
                       ("lshift", "2", "i"), ("rshift", "1", "i"), ("mod", "3", "i"), ("floordiv", "2", "i"), ("lt", "0", "f")):
    out.append(f"{op};scalar={sc};{kind}3x4")
  for op, sc in (("sub", "1"), ("div", "1"), ("pow", "2")): out.append(f"{op};scalar={sc}&rev=1;p3x4")
  for op in ("sum", "max", "min", "mean", "prod", "logsumexp", "var", "std", "any", "all", "argmax", "argmin"):
    kind = "b" if op in ("any", "all") else "f"
    for ax in (None, "0", "1", "2", "0x2", "-1"):
      if op in ("argmax", "argmin") and ax is not None and "x" in ax: continue
      args = "" if ax is None else f"axis={ax}"
      out.append(f"{op};{args};{kind}3x4x5")
    out.append(f"{op};axis=1&keepdim=1;{kind}3x4x5")
  out += ["var;axis=1&corr=0;f3x4x5", "std;corr=0;f3x4x5", "sum;axis=0;f45x65", "sum;axis=1;f45x65", "max;;f45x65",
          "sum;;i3x4", "sum;axis=0;b3x4", "mean;;i3x4"]
  for op in ("softmax", "log_softmax"):
    for ax in ("-1", "0", "1"): out.append(f"{op};axis={ax};f3x4x5")
  out += ["cumsum;axis=0;f6", "cumsum;axis=1;f3x5", "cumsum;axis=0;i4x3"]
  out += ["where;;b4x5/f4x5/f4x5", "where;;b4x1/f1x5/fs"]
  for a, b in (("3x4", "4x5"), ("4", "4x5"), ("3x4", "4"), ("2x3x4", "2x4x5"), ("2x3x4", "4x5"), ("17x13", "13x9"),
               ("65", "65x45"), ("1x1", "1x1"), ("5x1", "1x5"), ("32x32", "32x32")):
    out.append(f"matmul;;f{a}/f{b}")
  out += ["matmul;;i3x4/i4x2"]
  out += ["reshape;shape=4x3;f3x4", "reshape;shape=2x6;f3x4", "reshape;shape=12;f3x4", "reshape;shape=1x3x1x4;f3x4",
          "permute;order=1x0;f3x4", "permute;order=2x0x1;f2x3x4", "permute;order=0x2x1;f2x3x4",
          "flip;axis=0;f3x4", "flip;axis=1;f3x4", "flip;axis=0x2;f2x3x4", "expand;shape=3x4;f1x4",
          "expand;shape=2x3x4;f3x1", "transpose;d0=0&d1=1;f3x4", "transpose;d0=0&d1=2;f2x3x4",
          "squeeze;dim=1;f3x1x4", "unsqueeze;dim=0;f3x4", "unsqueeze;dim=2;f3x4", "flatten;;f2x3x4",
          "flatten;start=1;f2x3x4", "repeat;r=2x3;f2x2", "repeat;r=1x2x1;f2x3",
          "pad;p=1x1x2x0;f3x3", "pad;p=0x0x1x1;f2x3", "pad;p=1x2x0x0&value=-2.5;f2x3", "pad;p=2x2;f4",
          "shrink;p=1x3x0x2;f4x4", "shrink;p=0x1x1x4;f3x5", "cat;dim=0;f2x3/f1x3", "cat;dim=1;f2x3/f2x2",
          "cat;dim=0;f2/f3/f1", "stack;dim=0;f3/f3", "stack;dim=1;f2x3/f2x3", "slice;s=1x5x2x0x6x3;f6x6",
          "slice;s=0x3x1;f5", "slice;s=-3x5x1x1x2x1;f6x4", "index;i=2;f4x5", "index;i=-1;f4x5"]
  out += ["conv2d;;f1x1x5x5/f2x1x3x3", "conv2d;padding=1;f1x2x4x4/f3x2x3x3/f3", "conv2d;stride=2;f2x1x6x6/f2x1x3x3",
          "conv2d;groups=2;f1x4x5x5/f4x2x3x3", "max_pool2d;;f1x1x4x4", "max_pool2d;k=3;f1x2x6x6", "avg_pool2d;;f1x1x4x4",
          "avg_pool2d;k=3;f1x2x6x6", "layernorm;;f2x6", "layernorm;;f3x4x5", "linear;;f3x4/f4x5", "linear;;f3x4/f4x5/f5",
          "gather;dim=1&mod=4;f3x4/i3x2", "gather;dim=0&mod=3;f3x4/i2x4", "clip;lo=-0.5&hi=0.5;f8", "clip;lo=0&hi=1;f3x3",
          "triu;;f4x4", "triu;d=1;f4x5", "tril;;f4x4", "tril;d=-1;f4x4", "sparse_ce;mod=5;f4x5/i4",
          "lerp;w=0.25;f3x4/f3x4"]
  for dt in ("int32", "int8", "uint8", "float16", "bool", "float64", "int64", "uint32"):
    out.append(f"cast;dt={dt};f3x4")
  out += ["cast;dt=float32;i3x4", "cast;dt=float32;b3x4", "cast;dt=int32;b3x4", "cast;dt=uint8;i3x4", "cast;dt=bfloat16;f3x4"]
  return out


def main():
  import uop_codec
  print("# forward op goldens (test_ops style), gen_tensor_ops_goldens.py, DEV=CPU")
  for spec in cases():
    op, args, inputs = spec.split(";")
    a = dict(kv.split("=") for kv in args.split("&")) if args else {}
    print(f"case {spec}")
    try:
      xs = [make_input(s, k) for k, s in enumerate(inputs.split("/"))]
      r = run_op(op, a, xs)
      if r.dtype in dtypes.weaks: r = r.cast(dtypes.weakint if False else {dtypes.weakint: dtypes.int32, dtypes.weakfloat: dtypes.float32}[r.dtype])
      v = r.tolist()
      vs = [fmt_value(x) for x in (list(flat(v)) if isinstance(v, list) else [v])]
      if op == "cast" and dtypes.is_int(r.dtype) and dtypes.is_float(xs[0].dtype):
        lo, hi = r.dtype.min, r.dtype.max
        ins = list(flat(xs[0].tolist()))
        vs = ["ub" if math.isnan(x) or not lo <= math.trunc(x) <= hi else s for x, s in zip(ins, vs)]
      print(f"out {uop_codec.dtype_attr(r.dtype)} {'x'.join(str(s) for s in r.shape) or 's'} " + " ".join(vs))
    except Exception as e:
      print("error " + type(e).__name__ + ": " + str(e).split("\n")[0])

if __name__ == "__main__": main()
