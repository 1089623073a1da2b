#include "lib/uop/pyutil.h"

namespace tg::py {

UOp sum(const std::vector<UOp>& items) {
  UOp acc = items[0].add(UOp::const_(PyConst(0)), true);
  for (size_t i = 1; i < items.size(); i++) acc = acc + items[i];
  return acc;
}
UOp sum_plus(const std::vector<UOp>& items, const UOp& tail) {
  if (items.empty()) return tail.add(UOp::const_(PyConst(0)), true);
  return sum(items) + tail;
}

// CPython 3.11 setobject.c: open addressing, LINEAR_PROBES=9, PERTURB_SHIFT=5, grow at fill*5 >= mask*3 to
// the smallest power of two > used*4 (min 8). For ints, hash == value.
std::vector<pyint> set_order(const std::vector<pyint>& values) {
  std::vector<pyint> keys;  // insertion order of distinct values
  for (pyint v : values) {
    bool dup = false;
    for (pyint k : keys) dup |= k == v;
    if (!dup) keys.push_back(v);
  }
  size_t size = 8;
  std::vector<std::pair<bool, pyint>> table(size, {false, 0});
  auto insert = [&](std::vector<std::pair<bool, pyint>>& t, pyint key) {
    size_t mask = t.size() - 1;
    uint64_t hash = (uint64_t)key;
    size_t i = hash & mask;
    uint64_t perturb = hash;
    for (;;) {
      if (!t[i].first) {
        t[i] = {true, key};
        return;
      }
      if (i + 9 <= mask) {
        for (size_t j = 1; j <= 9; j++)
          if (!t[i + j].first) {
            t[i + j] = {true, key};
            return;
          }
      }
      perturb >>= 5;
      i = (i * 5 + 1 + perturb) & mask;
    }
  };
  size_t used = 0;
  for (pyint k : keys) {
    insert(table, k);
    used++;
    size_t mask = table.size() - 1;
    if (used * 5 >= mask * 3) {
      size_t newsize = 8;
      while (newsize <= used * 4) newsize <<= 1;
      std::vector<std::pair<bool, pyint>> nt(newsize, {false, 0});
      for (auto& e : table)
        if (e.first) insert(nt, e.second);
      table = std::move(nt);
    }
  }
  std::vector<pyint> out;
  for (auto& e : table)
    if (e.first) out.push_back(e.second);
  return out;
}

}  // namespace tg::py
