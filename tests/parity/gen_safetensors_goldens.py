#!/usr/bin/env python3
# Headers the reference's nn.state.safe_save writes (tinygrad a9069c17), for test_safetensors.
# cd <tinygrad checkout> && PYTHONPATH=. python3 <repo>/tests/parity/gen_safetensors_goldens.py > safetensors_goldens.txt
# Each case: "case NAME", "tensor NAME DTYPE SHAPE..." lines (values are arange in the dtype), "meta KEY VALUE" lines,
# and "file HEX" with the whole file the reference wrote.
import os, tempfile
os.environ.setdefault("DEV", "CPU")
from tinygrad import Tensor, dtypes
from tinygrad.nn.state import safe_save

CASES = [
  ("one_f32", [("w", "float32", (3,))], None),
  ("mixed", [("weight", "float32", (2, 3)), ("bias", "float16", (3,)), ("steps", "int64", ()), ("mask", "bool", (5,)),
             ("ids", "uint8", (7,))], None),
  ("metadata", [("a", "int32", (4,))], {"format": "pt", "note": "quote\" backslash\\ tab\t"}),
  ("unicode_name", [("gewicht_\u00e4\u00f6\u00fc_\u4e2d", "float32", (1,))], {"k\u00e9y": "v\u00e4lue \U0001f600"}),
  ("metadata_order", [("b", "int16", (2,)), ("a", "int8", (3,))], {"zeta": "1", "alpha": "2"}),
]

for name, tensors, meta in CASES:
  state = {}
  for tn, dt, shape in tensors:
    n = 1
    for s in shape: n *= s
    d = getattr(dtypes, dt)
    t = Tensor.arange(n).cast(d).reshape(shape) if dt != "bool" else (Tensor.arange(n) % 2 == 0).reshape(shape)
    state[tn] = t.contiguous().realize()
  fn = os.path.join(tempfile.mkdtemp(), "t.safetensors")
  safe_save(state, fn, metadata=meta)
  data = open(fn, "rb").read()
  print(f"case {name}")
  for tn, dt, shape in tensors: print(f"tensor {tn.encode('unicode_escape').decode()} {dt} " + " ".join(map(str, shape)))
  for k, v in (meta or {}).items(): print(f"meta {k.encode('unicode_escape').decode()} {v.encode('unicode_escape').decode()}")
  print(f"file {data.hex()}")
