// A random movement op over x for the tests of movement-op index math (test_schedule's apply_movement_op_direct,
// test_codegen's devectorize lanes): kind 0 a RESHAPE (flattened, or (1, n) when `split`), 1 a new leading dim
// EXPANDed to 2..4, 2 a shuffled PERMUTE (which may be the identity: then x itself comes back).
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "lib/uop/uop.h"

namespace tg::test_util {

// a float buffer of 1 to 3 dims of 1 to 4 each
inline UOp random_buffer(std::mt19937& rng) {
  Shape in;
  for (int d = 0, nd = 1 + (int)(rng() % 3); d < nd; d++) in.push_back(sint((pyint)(1 + rng() % 4)));
  return UOp::placeholder(in, dtypes::float32, 0);
}

inline UOp random_movement(std::mt19937& rng, const UOp& x, int kind, bool split = false) {
  const Shape& s = x.shape();
  switch (kind) {
    case 0: {
      pyint total = 1;
      for (const sint& d : s) total *= d.i();
      return x.reshape(split ? Shape{sint(1), sint(total)} : Shape{sint(total)});
    }
    case 1: {
      Shape one{sint(1)};
      one.insert(one.end(), s.begin(), s.end());
      OptShape out{sint((pyint)(2 + rng() % 3))};
      for (const sint& d : s) out.push_back(d);
      return x.reshape(one).expand(out);
    }
    default: {
      std::vector<int64_t> order(s.size());
      for (size_t i = 0; i < order.size(); i++) order[i] = (int64_t)i;
      std::shuffle(order.begin(), order.end(), rng);
      return x.permute(order);
    }
  }
}

}  // namespace tg::test_util
