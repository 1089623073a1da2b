#include "lib/schedule/helpers.h"

#include <cstdio>

#include "lib/device.h"
#include "lib/helpers.h"
#include "lib/mixin/helpers.h"
#include "lib/uop/rewrite.h"
#include "lib/uop/serialize.h"
#include "lib/uop/symbolic.h"

namespace tg {

UOp unsharded_base(const UOp& u) {
  if (GroupOp::Movement.has(u.op()) || u.op() == Ops::DETACH || u.op() == Ops::UNSHARD) return u.src(0).base();
  return u;
}

UOp copy_to_device(const UOp& u, const Arg& device) {
  if (contains(dtypes::weaks, u.dtype())) throw Error("cannot create storage for weak dtype " + u.dtype().repr());
  std::vector<pyint> ms = max_shape(u);
  OptShape mshape;
  for (pyint v : ms) mshape.push_back(sint(v));
  UOp padded = u.movement_pad_to(mshape);
  OptShape shp(u.shape());
  return UOp(Ops::COPY, DType(), {padded}, device).shrink_to(shp);
}

std::optional<int64_t> contiguous_view_offset(const UOp& self) {
  auto view = contiguous_view(self);
  if (!view) return std::nullopt;
  return view->second;
}

std::string uop_key(const UOp& root) {
  UOpMap<std::pair<uint64_t, uint64_t>> keys;
  for (const UOp& u : root.toposort()) {
    std::string s = std::to_string((int)u.op()) + " " + u.dtype().repr() + " " + encode_arg(u.arg());
    uint64_t h1 = 1469598103934665603ull, h2 = 0x9e3779b97f4a7c15ull;
    auto mix = [&](uint64_t v) {
      h1 = (h1 ^ v) * 1099511628211ull;
      h2 = (h2 ^ (v + 0x9e3779b97f4a7c15ull + (h2 << 6) + (h2 >> 2))) * 0xff51afd7ed558ccdull;
    };
    for (unsigned char c : s) mix(c);
    for (const UOp& x : u.src()) {
      auto [a, b] = keys.at(x);
      mix(a), mix(b);
    }
    keys[u] = {h1, h2};
  }
  auto [a, b] = keys.at(root);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
  return buf;
}

}  // namespace tg
