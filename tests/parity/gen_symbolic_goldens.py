#!/usr/bin/env python3
# Regenerates tests/data/symbolic_goldens.txt from the reference's test/null/test_uop_symbolic.py.
# Every helper_test_variable(v, n, m, s) call of the reference's suite is recorded: the input graph exactly as the
# reference built it, the graph after graph_rewrite(v, sym+pm_cast_weak), vmin, vmax, and render(simplify=False).
# Run from a checkout of tinygrad a9069c17:  cd <tinygrad> && python3 <this file> > <repo>/tests/data/symbolic_goldens.txt
import sys, types, unittest, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
# z3 is not installed: the suite only uses it for an optional equivalence check
z3 = types.ModuleType("z3"); z3.Solver = object; z3.unsat = None; sys.modules["z3"] = z3
validate = types.ModuleType("tinygrad.uop.validate"); validate.uops_to_z3 = None; validate.validate_index_with_z3 = None
sys.modules["tinygrad.uop.validate"] = validate
from uop_codec import enc_graph, enc_arg
from tinygrad.uop.ops import graph_rewrite
from tinygrad.uop.symbolic import sym
from tinygrad.uop.weak import pm_cast_weak
import test.null.test_uop_symbolic as T

records = []
current = {"name": None, "n": 0}
def helper_test_variable(self, v, n, m, s, test_z3=True):
  out = graph_rewrite(v, sym+pm_cast_weak, name="simplify symbolic uop")
  name = self.id().split(".", 3)[-1]
  if current["name"] != name: current["name"], current["n"] = name, 0
  current["n"] += 1
  records.append((name, current["n"], enc_graph(v), enc_graph(out), enc_arg(out.vmin), enc_arg(out.vmax),
                  out.render(simplify=False), s, enc_arg(n), enc_arg(m)))
  T.check_uop_against_string(self, out, s)
  self.assertEqual(out.vmin, n)
  self.assertEqual(out.vmax, m)
T.TestSymbolic.helper_test_variable = helper_test_variable
T.TestSymbolic.check_equal_z3 = lambda self, a, b: None

suite = unittest.defaultTestLoader.loadTestsFromTestCase(T.TestSymbolic)
result = unittest.TextTestRunner(stream=open(os.devnull, "w"), verbosity=0).run(suite)
print(f"# goldens from tinygrad test/null/test_uop_symbolic.py TestSymbolic: {len(records)} cases, "
      f"{result.testsRun} tests, {len(result.failures)} failures, {len(result.errors)} errors, {len(result.skipped)} skipped")
for name, k, gin, gout, vmin, vmax, rend, s, n, m in records:
  print(f"case {name} {k}")
  print(f"expect_vmin {n}"); print(f"expect_vmax {m}")
  print(f"expect_str {s}")
  print(f"render {rend}")
  print(f"vmin {vmin}"); print(f"vmax {vmax}")
  print(f"in {len(gin)}"); print("\n".join(gin))
  print(f"out {len(gout)}"); print("\n".join(gout))
for f, e in result.failures + result.errors: print("# FAIL", f.id(), e.strip().splitlines()[-1], file=sys.stderr)
