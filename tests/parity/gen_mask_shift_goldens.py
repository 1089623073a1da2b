#!/usr/bin/env python3
# Regenerates tests/data/mask_shift_goldens.txt: the reference's sym on (x & mask) // c and (x & mask) >> k, for
# masks that do and do not cover the bits below c (c - 1, (1 << k) - 1), with x = Variable("x", -64, 64). The
# reference folds them to x // c and x >> k only when mask | (c - 1) == -1 (symbolic.py); its own tests do not reach
# these rules.
# Run from a checkout of tinygrad a9069c17:
#   cd <tinygrad> && PYTHONPATH=. python3 <repo>/tests/parity/gen_mask_shift_goldens.py > <repo>/tests/data/mask_shift_goldens.txt
from tinygrad.uop.ops import UOp, graph_rewrite
from tinygrad.uop.symbolic import sym

x = UOp.variable("x", -64, 64)
print("# (x & mask) // c and (x & mask) >> k after graph_rewrite(sym), x in [-64, 64]: op mask c|k render")
for mask in [-1, -2, -3, -4, -5, -8, -9, -16, 3, 7]:
  for c in [1, 2, 3, 4, 6, 8]:
    print("floordiv", mask, c, graph_rewrite((x & mask) // c, sym).render(simplify=False))
  for k in [0, 1, 2, 3]:
    print("shr", mask, k, graph_rewrite((x & mask) >> k, sym).render(simplify=False))
