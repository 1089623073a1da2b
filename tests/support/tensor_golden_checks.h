// Checks shared by the tests that run tensor programs against tests/data/tensor_goldens*.txt (test_tensor_goldens on
// CPU and INTERP, test_cl_goldens on CL).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backends/interp/interp.h"
#include "lib/codegen/late/program.h"
#include "lib/tensor.h"
#include "lib/uop/kernel_info.h"
#include "tests/support/tensor_goldens.h"

namespace tg::test {

// a PROGRAM's linearized op sequence, as the goldens write it
inline std::string ops_of(const UOp& prg) {
  std::string r;
  for (const UOp& u : prg.src(1).src()) r += (r.empty() ? "" : " ") + std::string(op_name(u.op()));
  return r;
}

// the calls of a compiled LINEAR against the golden's kernels (the counts are equal): COPY where it copies, else a
// PROGRAM with its name and, when asked, its op sequence and its rendered source (the golden's sources, in order)
inline void expect_kernels(const UOp& compiled, const TensorGolden& g, bool check_ops = true,
                           bool check_sources = false) {
  size_t prg = 0;
  for (size_t i = 0; i < g.kernels.size() && i < compiled.nsrc(); i++) {
    const UOp& ast = compiled.src(i).src(0);
    if (g.kernels[i].first == "copy") {
      EXPECT_EQ(ast.op(), Ops::COPY) << g.name << " call " << i;
      continue;
    }
    ASSERT_EQ(ast.op(), Ops::PROGRAM) << g.name << " call " << i;
    EXPECT_EQ(ansistrip(ast.arg().as<ProgramInfo>()->name), g.kernels[i].first) << g.name;
    if (check_ops) {  // braces: gtest's EXPECT_ is an if/else
      EXPECT_EQ(ops_of(ast), g.kernels[i].second) << g.name << " kernel " << g.kernels[i].first;
    }
    if (!check_sources) continue;
    ASSERT_LT(prg, g.sources.size()) << g.name;
    EXPECT_EQ(ast.src(2).arg().as_str(), g.sources[prg]) << g.name << " kernel " << g.kernels[i].first;
    prg++;
  }
}

// compare the bytes of a buffer with the golden's python values: floats within rel_tol (relative, at least absolute
// for magnitudes below 1), NaN for NaN, everything else exactly
inline void expect_values(const std::vector<uint8_t>& bytes, DType dt, const TensorGoldenOut& o, const std::string& what,
                          double rel_tol = 1e-5) {
  size_t n = o.values.size();
  ASSERT_GE(bytes.size(), n * (size_t)dt.itemsize()) << what;
  for (size_t i = 0; i < n; i++) {
    PyConst v = interp::load_scalar(bytes.data() + i * (size_t)dt.itemsize(), dt);
    const std::string& g = o.values[i];
    if (dtypes::is_float(dt)) {
      uint64_t bits = std::stoull(g, nullptr, 16);
      double e;
      std::memcpy(&e, &bits, 8);
      double a = v.is_float() ? v.as_float() : (double)v.as_int();
      if (std::isnan(e))
        EXPECT_TRUE(std::isnan(a)) << what << " [" << i << "]";
      else
        EXPECT_NEAR(a, e, rel_tol * std::max(1.0, std::fabs(e))) << what << " [" << i << "]";
    } else if (dt == dtypes::bool_) {
      EXPECT_EQ(v.truthy() ? "1" : "0", g) << what << " [" << i << "]";
    } else {
      EXPECT_EQ(std::to_string((long long)v.as_int()), g) << what << " [" << i << "]";
    }
  }
}

// a realized tensor's values as bytes of its dtype
inline std::vector<uint8_t> tensor_bytes(const Tensor& t) {
  std::vector<PyConst> vals = t.tolist_flat();
  size_t isz = (size_t)t.dtype().itemsize();
  std::vector<uint8_t> bytes(vals.size() * isz);
  for (size_t j = 0; j < vals.size(); j++) store_host_scalar(bytes.data() + j * isz, t.dtype(), vals[j]);
  return bytes;
}

}  // namespace tg::test
