// CPython 3.11's list.sort (timsort with the powersort merge policy), comparison for comparison. With a comparison
// that is not a strict weak order (python's `<` on tuples holding a nan is false both ways) the result depends on
// the algorithm, and the reference sorts with python's, so matching its output exactly needs the same algorithm.
#pragma once
#include <functional>
#include <vector>

namespace tg {

// sorts `items` in place, stable, using only lt(a, b) ("a < b")
template <typename T>
void py_sort(std::vector<T>& items, const std::function<bool(const T&, const T&)>& lt);

namespace detail {
void py_sort_indices(std::vector<size_t>& idx, const std::function<bool(size_t, size_t)>& lt);
}

template <typename T>
void py_sort(std::vector<T>& items, const std::function<bool(const T&, const T&)>& lt) {
  std::vector<size_t> idx(items.size());
  for (size_t i = 0; i < idx.size(); i++) idx[i] = i;
  detail::py_sort_indices(idx, [&](size_t a, size_t b) { return lt(items[a], items[b]); });
  std::vector<T> out;
  out.reserve(items.size());
  for (size_t i : idx) out.push_back(std::move(items[i]));
  items = std::move(out);
}

}  // namespace tg
