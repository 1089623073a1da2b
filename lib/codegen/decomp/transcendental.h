// Port of tinygrad/codegen/decomp/transcendental.py: polynomial approximations of EXP2/LOG2/SIN (1 ULP, from SLEEF and
// the papers cited there), pow through exp2/log2, and the bit helpers the dtype decompositions share.
#pragma once
#include <utility>

#include "lib/uop/rewrite.h"

namespace tg {

std::pair<int, int> finfo(DType d);  // (exponent, mantissa) bits
int mantissa_bits(DType d);
int exponent_bias(DType d);
int exponent_mask(DType d);
// x * 2**y and x // 2**y (y a python int)
UOp shl(const UOp& x, int y);
UOp shr(const UOp& x, int y);
UOp polyN(const UOp& x, const std::vector<double>& p);  // helpers.polyN (starts from the float 0.0)

UOp xsin(const UOp& d, bool fast = false, double switch_over = 30.0);
UOp xexp2(const UOp& d);
UOp xlog2(const UOp& d);
UOp xpow(const UOp& base, const UOp& exponent);
std::pair<UOp, UOp> payne_hanek_reduction(const UOp& d);
std::pair<UOp, UOp> cody_waite_reduction(const UOp& d);
std::pair<UOp, UOp> frexp(const UOp& v);
UOp rintk(const UOp& d);
UOp pow2if(const UOp& q, DType float_dtype);
UOp ilogb2k(const UOp& d);
UOp ldexp3k(const UOp& d, const UOp& e);
UOp ldexp2k(const UOp& d, const UOp& e);

// the matcher for the ops a renderer lacks (ops = renderer.code_for_op keys); force: TRANSCENDENTAL>=2
const PatternMatcher& get_transcendental_patterns(const std::vector<Ops>& ops, bool force_transcendental);

}  // namespace tg
