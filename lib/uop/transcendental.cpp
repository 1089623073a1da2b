#include "lib/uop/transcendental.h"

#include <cmath>
#include <limits>

namespace tg {

UOp xpow(const UOp& base, const UOp& exponent) {
  // start with b ** e = exp2(e * log2(b))
  UOp ret = base.lt(UOp::const_(PyConst(0))).where(-base, base).log2().mul(exponent).exp2();
  // negative base: nan for non-integer exponent, negate for odd integer exponent. -inf is never nan
  UOp non_int = exponent.ne(exponent.cast(dtypes::int32).cast(exponent.dtype()));
  UOp is_odd = exponent.lt(UOp::const_(PyConst(0))).where(-exponent, exponent).cast(dtypes::int32).mod(UOp::const_(PyConst(2))).cast(dtypes::bool_);
  double inf = std::numeric_limits<double>::infinity();
  UOp neg_base = non_int.where(base.ne(UOp::const_(PyConst(-inf))).where(ret.const_like(PyConst(std::nan(""))), ret),
                               is_odd.where(-ret, ret));
  // x ** 0 = 1, including 0 ** 0 and inf ** 0
  return exponent.eq(UOp::const_(PyConst(0))).where(ret.const_like(PyConst(1)), base.lt(UOp::const_(PyConst(0))).where(neg_base, ret));
}

}  // namespace tg
