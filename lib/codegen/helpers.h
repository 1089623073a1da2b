// Small python-semantics containers the codegen passes need: an insertion-ordered UOp -> V map (a python dict keyed by
// UOps, whose iteration order leaks into substitutions and kernel order) and list helpers.
#pragma once
#include <algorithm>
#include <utility>
#include <vector>

#include "lib/uop/uop.h"

namespace tg {

template <typename V>
class UOpDict {
 public:
  bool contains(const UOp& k) const { return idx_.count(k) != 0; }
  V* find(const UOp& k) {
    auto it = idx_.find(k);
    return it == idx_.end() ? nullptr : &items_[it->second].second;
  }
  const V* find(const UOp& k) const {
    auto it = idx_.find(k);
    return it == idx_.end() ? nullptr : &items_[it->second].second;
  }
  // d[k] = v: a new key goes to the end, an existing key keeps its place
  void set(const UOp& k, V v) {
    auto it = idx_.find(k);
    if (it != idx_.end())
      items_[it->second].second = std::move(v);
    else {
      idx_.emplace(k, items_.size());
      items_.emplace_back(k, std::move(v));
    }
  }
  V& operator[](const UOp& k) {
    auto it = idx_.find(k);
    if (it != idx_.end()) return items_[it->second].second;
    idx_.emplace(k, items_.size());
    items_.emplace_back(k, V{});
    return items_.back().second;
  }
  const std::vector<std::pair<UOp, V>>& items() const { return items_; }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() {
    items_.clear();
    idx_.clear();
  }

 private:
  std::vector<std::pair<UOp, V>> items_;
  UOpMap<size_t> idx_;
};

inline bool contains(const std::vector<UOp>& v, const UOp& x) { return std::find(v.begin(), v.end(), x) != v.end(); }
inline std::vector<UOp> srcs_from(const UOp& u, size_t start) {
  return start >= u.nsrc() ? std::vector<UOp>{} : std::vector<UOp>(u.src().begin() + start, u.src().end());
}
inline std::vector<UOp> cat(std::vector<UOp> a, const std::vector<UOp>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
// dedup keeping the first occurrence
inline std::vector<UOp> dedup(const std::vector<UOp>& v) {
  std::vector<UOp> r;
  UOpSet seen;
  for (const UOp& x : v)
    if (seen.insert(x).second) r.push_back(x);
  return r;
}

}  // namespace tg
