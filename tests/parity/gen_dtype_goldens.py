#!/usr/bin/env python3
# Regenerates tests/data/dtype_goldens.txt: the reference's dtype promotion lattice and value tables.
# For every dtype of dtypes.all + (weakint, weakfloat): repr, priority, bitsize, itemsize, min, max, sum_acc_dtype,
# least_upper_float, strong_dtype, weak_dtype; for every ordered pair: least_upper_dtype, can_lossless_cast and DType <;
# truncate[dtype](v) and dtype.const(v) for a few values per dtype.
# Run from a checkout of tinygrad:  cd <tinygrad> && python3 <this file> > <repo>/tests/data/dtype_goldens.txt
# Line formats (dtypes by their dtypes.<attr> name, values encoded like uop_codec.enc_arg: i<int> f<hex bits> T F I):
#   dtype <name> <repr> <priority> <bitsize> <itemsize> <min> <max> <sum_acc_dtype> <least_upper_float> <strong> <weak>
#   pair <a> <b> <least_upper_dtype(a, b)> <can_lossless_cast(a, b) T/F> <a < b T/F>
#   truncate <dtype> <value> <truncate[dtype](value)>
#   const <dtype> <value> <dtype.const(value)>
import sys, os, math
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from uop_codec import enc_arg, dtype_attr
from tinygrad.dtype import dtypes, least_upper_dtype, least_upper_float, can_lossless_cast, sum_acc_dtype, truncate, \
  strong_dtype, weak_dtype, Invalid

ALL = list(dtypes.all) + [dtypes.weakint, dtypes.weakfloat]
assert dtypes.bool in ALL
n = dtype_attr

FLOAT_VALUES = [0.0, -0.0, 1.0, 1.5, -3.2, 3.1, 0.1, 1e-8, 1e-40, 448.0, 449.0, 57344.0, 60000.0, -60000.0,
                30000.0, -30000.0, 65504.0, 65519.0, 65520.0, 3.4028235e38, 1e39, -1e39, 16777217.0, math.inf,
                -math.inf, math.nan, 1, -7, 2**24+1, True]
INT_VALUES = [0, 1, -1, 7, 127, 128, 255, 256, -128, -129, 300, 32767, 32768, 65535, 65536, -32769, 2**31-1, 2**31,
              -2**31, -2**31-1, 2**32-1, 2**32+3, 2**63-1, 2**63, -2**63, -2**63-1, 2**64-1, 2**64+5, True, False]
BOOL_VALUES = [0, 1, 2, -1, 0.0, -0.0, 0.5, math.nan, True, False]
CONST_VALUES = [0, 1, -1, 3, 300, -129, 2**33+1, 2.0, 2.5, -2.5, 1e-8, 65520.0, True, False]

def values_for(d):
  if dtypes.is_float(d): return FLOAT_VALUES
  if dtypes.is_int(d): return INT_VALUES
  return BOOL_VALUES

print(f"# dtype goldens from tinygrad dtype.py: {len(ALL)} dtypes, {len(ALL)**2} pairs")
for d in ALL:
  print(f"dtype {n(d)} {d!r} {d.priority} {d.bitsize} {d.itemsize} {enc_arg(d.min)} {enc_arg(d.max)} "
        f"{n(sum_acc_dtype(d))} {n(least_upper_float(d))} {n(strong_dtype(d))} {n(weak_dtype(d))}")
for a in ALL:
  for b in ALL:
    print(f"pair {n(a)} {n(b)} {n(least_upper_dtype(a, b))} {enc_arg(can_lossless_cast(a, b))} {enc_arg(a < b)}")
for d in ALL:
  if d not in truncate: continue
  for v in values_for(d): print(f"truncate {n(d)} {enc_arg(v)} {enc_arg(truncate[d](v))}")
for d in ALL:
  for v in CONST_VALUES + [Invalid]: print(f"const {n(d)} {enc_arg(v)} {enc_arg(d.const(v))}")
