// Private helpers of the builder mixins: python arithmetic and comparisons on int|UOp (sint), python reprs for
// error messages. Not part of the public API.
#pragma once
#include <string>
#include <vector>

#include "lib/helpers.h"
#include "lib/uop/uop.h"

namespace tg::mixin {

// python repr of a shape tuple: (), (4,), (4, 3)
std::string shape_str(const Shape& s);
std::string ints_str(const std::vector<int64_t>& v);  // python repr of a tuple of ints
std::string opt_shape_str(const OptShape& s);

// python arithmetic on int|UOp: two ints give an int, otherwise the UOp mixin builds the graph (reflected ops keep
// the UOp as self, like python's __radd__ and friends)
sint operator+(const sint& a, const sint& b);
sint operator-(const sint& a, const sint& b);
sint operator*(const sint& a, const sint& b);
sint operator-(const sint& a);
sint floordiv(const sint& a, const sint& b);  // python //
sint mod(const sint& a, const sint& b);       // python %
sint sprod(const Shape& s);                   // helpers.prod: functools.reduce(mul, s, 1)
sint ceildiv(const sint& num, const sint& amt);
sint smax(const std::vector<sint>& lst);  // ops.smax / smin: symbolic max/min, ssimplified
sint smin(const std::vector<sint>& lst);
sint ssimplify(const sint& x);

// a python comparison result: a bool for ints, a bool UOp when a UOp takes part
struct SBool {
  SBool(bool v) : b(v) {}
  SBool(UOp v) : u(std::move(v)) {}
  bool b = false;
  UOp u;
};
bool resolve(const SBool& x, bool default_value = true);  // ops.resolve
bool truthy(const SBool& x);                              // python bool(): a UOp must simplify to a constant
SBool s_lt(const sint& a, const sint& b);
SBool s_le(const sint& a, const sint& b);
SBool s_gt(const sint& a, const sint& b);
SBool s_ge(const sint& a, const sint& b);
SBool s_ne(const sint& a, const sint& b);
bool s_eq(const sint& a, const sint& b);  // python ==: UOps compare by identity
bool all_int(const Shape& s);

// python list helpers
int64_t norm_index(int64_t i, size_t n, const char* what);  // list[i] with negative i, IndexError when out of range
Shape slice(const Shape& s, int64_t start, int64_t stop);   // s[start:stop] with python clamping
Shape concat(const Shape& a, const Shape& b);
std::vector<Shape> align_left(const std::vector<Shape>& shapes);  // ops._align_left: pad with 1s on the left
Shape broadcast_shape(const std::vector<Shape>& shapes);          // ops._broadcast_shape

}  // namespace tg::mixin
