// Private helpers of the builder mixins (see helpers.h).
#include "lib/mixin/helpers.h"

#include <algorithm>

namespace tg::mixin {

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + s[i].str();
  return r + (s.size() == 1 ? ",)" : ")");
}
std::string ints_str(const std::vector<int64_t>& v) {
  std::string r = "(";
  for (size_t i = 0; i < v.size(); i++) r += (i ? ", " : "") + std::to_string(v[i]);
  return r + (v.size() == 1 ? ",)" : ")");
}
std::string opt_shape_str(const OptShape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + (s[i] ? s[i]->str() : std::string("None"));
  return r + (s.size() == 1 ? ",)" : ")");
}

static PyConst pc(const sint& s) { return PyConst(s.i()); }

sint operator+(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return sat_add(a.i(), b.i());
  if (!a.is_int()) return a.u().add(b);
  return b.u().add(pc(a), true);
}
sint operator-(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return sat_sub(a.i(), b.i());
  if (!a.is_int()) return a.u().sub(b);
  return b.u().sub(pc(a), true);
}
sint operator*(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return sat_mul(a.i(), b.i());
  if (!a.is_int()) return a.u().mul(b);
  return b.u().mul(pc(a), true);
}
sint operator-(const sint& a) {
  if (a.is_int()) return -a.i();
  return a.u().neg();
}
sint floordiv(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) {
    if (b.i() == 0) throw Error("integer division or modulo by zero");
    return tg::floordiv(a.i(), b.i());
  }
  if (!a.is_int()) return a.u().floordiv(b);
  return b.u().floordiv(pc(a), true);
}
sint mod(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) {
    if (b.i() == 0) throw Error("integer division or modulo by zero");
    return tg::floormod(a.i(), b.i());
  }
  if (!a.is_int()) return a.u().mod(b);
  return b.u().mod(pc(a), true);
}
sint sprod(const Shape& s) {
  sint acc = 1;
  for (const sint& x : s) acc = acc * x;
  return acc;
}
sint ceildiv(const sint& num, const sint& amt) {
  if (!num.is_int() && !py_lt(num.u().vmin(), PyConst(0)) &&
      (amt.is_int() ? amt.i() > 0 : py_lt(PyConst(0), amt.u().vmin())))
    return floordiv(num + amt - sint(1), amt);
  return -floordiv(num, -amt);
}
sint ssimplify(const sint& x) { return x.is_int() ? x : x.u().ssimplify(); }
static sint suop(const std::vector<sint>& lst, bool is_max) {
  std::vector<UOp> uops;
  std::optional<pyint> num;
  for (const sint& x : lst) {
    if (!x.is_int())
      uops.push_back(x.u());
    else
      num = !num ? x.i() : (is_max ? std::max(*num, x.i()) : std::min(*num, x.i()));
  }
  if (uops.empty()) {
    if (!num) throw Error("max() arg is an empty sequence");
    return *num;
  }
  UOp acc = uops[0];
  for (size_t i = 1; i < uops.size(); i++) acc = is_max ? acc.maximum(uops[i]) : acc.minimum(uops[i]);
  if (num) acc = is_max ? acc.maximum(PyConst(*num)) : acc.minimum(PyConst(*num));
  return acc.ssimplify();
}
sint smax(const std::vector<sint>& lst) { return suop(lst, true); }
sint smin(const std::vector<sint>& lst) { return suop(lst, false); }

bool resolve(const SBool& x, bool default_value) { return x.u ? tg::resolve(x.u, default_value) : x.b; }
bool truthy(const SBool& x) { return x.u ? x.u.as_bool() : x.b; }
SBool s_lt(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.i() < b.i();
  return !a.is_int() ? a.u().lt(b) : b.u().gt(pc(a));
}
SBool s_gt(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.i() > b.i();
  return !a.is_int() ? a.u().gt(b) : b.u().lt(pc(a));
}
SBool s_le(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.i() <= b.i();
  return !a.is_int() ? a.u().le(b) : b.u().ge(pc(a));
}
SBool s_ge(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.i() >= b.i();
  return !a.is_int() ? a.u().ge(b) : b.u().le(pc(a));
}
SBool s_ne(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.i() != b.i();
  return !a.is_int() ? a.u().ne(b) : b.u().ne(pc(a));
}
bool s_eq(const sint& a, const sint& b) { return a.same(b); }
bool all_int(const Shape& s) {
  for (const sint& x : s)
    if (!x.is_int()) return false;
  return true;
}

int64_t norm_index(int64_t i, size_t n, const char* what) {
  int64_t r = i < 0 ? i + (int64_t)n : i;
  if (r < 0 || r >= (int64_t)n) throw Error(std::string(what) + ": list index " + std::to_string(i) + " out of range");
  return r;
}
Shape slice(const Shape& s, int64_t start, int64_t stop) {
  int64_t n = (int64_t)s.size();
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + n : i, (int64_t)0, n); };
  int64_t a = clamp(start), b = clamp(stop);
  return b > a ? Shape(s.begin() + a, s.begin() + b) : Shape{};
}
Shape concat(const Shape& a, const Shape& b) {
  Shape r = a;
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

std::vector<Shape> align_left(const std::vector<Shape>& shapes) {
  size_t mx = 0;
  for (const Shape& s : shapes) mx = std::max(mx, s.size());
  std::vector<Shape> r;
  for (const Shape& s : shapes) {
    Shape a(mx - s.size(), sint(1));
    a.insert(a.end(), s.begin(), s.end());
    r.push_back(std::move(a));
  }
  return r;
}
Shape broadcast_shape(const std::vector<Shape>& shapes) {
  bool same = true;
  for (const Shape& s : shapes) same &= shape_eq(s, shapes[0]);
  if (same) return shapes[0];
  std::vector<Shape> al = align_left(shapes);
  Shape ret;
  for (size_t d = 0; d < al[0].size(); d++) {
    std::vector<sint> rest;
    for (const Shape& s : al) {
      if (s[d].is_int() && s[d].i() == 1) continue;
      bool dup = false;
      for (const sint& r : rest) dup |= r.same(s[d]);
      if (!dup) rest.push_back(s[d]);
    }
    if (rest.size() > 1) {
      std::string msg = "shape mismatch: objects cannot be broadcast to a single shape (";
      for (size_t i = 0; i < shapes.size(); i++) msg += (i ? ", " : "") + shape_str(shapes[i]);
      throw Error(msg + ")");
    }
    ret.push_back(rest.empty() ? sint(1) : rest[0]);
  }
  return ret;
}

}  // namespace tg::mixin
