// Comparing a kernel's output buffer with a golden one, shared by the interpreter, codegen and CPU backend tests.
#pragma once
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backends/interp/interp.h"

namespace tg {

// ints and bools exactly; floats like numpy's allclose with rtol = atol = tol by the dtype's precision (float32_tol
// for float32, 1e-6 by default), nan equal to nan. The compiled kernel may contract a*b+c to an FMA where the
// interpreter rounds every op, like the reference's PYTHON device does. Returns "" when equal, else what differs.
inline std::string compare_buffer(DType dt, const std::vector<uint8_t>& want, const std::vector<uint8_t>& got,
                                  double float32_tol = 1e-6) {
  if (want.size() != got.size())
    return "size differs: want " + std::to_string(want.size()) + " bytes, got " + std::to_string(got.size());
  const size_t sz = (size_t)dt.itemsize();
  double tol = dt == dtypes::float16    ? 2e-3
               : dt == dtypes::bfloat16 ? 1e-2
               : dt == dtypes::float64  ? 1e-12
                                        : float32_tol;
  for (size_t i = 0; i < want.size(); i += sz) {
    PyConst w = interp::load_scalar(want.data() + i, dt), g = interp::load_scalar(got.data() + i, dt);
    bool ok;
    if (dtypes::is_float(dt)) {
      double a = w.as_float(), b = g.as_float();
      ok = (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= tol + tol * std::fabs(a);
    } else {
      ok = std::memcmp(want.data() + i, got.data() + i, sz) == 0;
    }
    if (!ok) return "element " + std::to_string(i / sz) + ": want " + w.str() + ", got " + g.str();
  }
  return "";
}

}  // namespace tg
