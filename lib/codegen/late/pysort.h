// CPython 3.11's list.sort (timsort with the powersort merge policy), comparison for comparison: a port of listsort
// and its helpers in Objects/listobject.c, on an array of indices. With a comparison that is not a strict weak order
// (python's `<` on tuples holding a nan is false both ways) the result depends on the algorithm, and the reference
// sorts with python's, so matching its output exactly needs the same algorithm.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace tg {

namespace detail {

namespace pysort {

constexpr int64_t MIN_GALLOP = 7;

struct Run {
  int64_t base, len;
  int power;
};

template <typename Lt>
struct MergeState {
  std::vector<size_t>& a;
  Lt& lt;
  int64_t min_gallop = MIN_GALLOP;
  int64_t listlen;
  std::vector<Run> pending;
  std::vector<size_t> tmp;

  bool LT(size_t x, size_t y) const { return lt(x, y); }

  // binary insertion sort of a[lo:hi], a[lo:start] already sorted
  void binarysort(int64_t lo, int64_t hi, int64_t start) {
    if (lo == start) ++start;
    for (; start < hi; ++start) {
      int64_t l = lo, r = start;
      size_t pivot = a[(size_t)r];
      do {
        int64_t p = l + ((r - l) >> 1);
        if (LT(pivot, a[(size_t)p]))
          r = p;
        else
          l = p + 1;
      } while (l < r);
      for (int64_t p = start; p > l; --p) a[(size_t)p] = a[(size_t)(p - 1)];
      a[(size_t)l] = pivot;
    }
  }

  // length of the run at a[lo:hi]; descending runs are strictly descending
  int64_t count_run(int64_t lo, int64_t hi, bool& descending) {
    descending = false;
    ++lo;
    if (lo == hi) return 1;
    int64_t n = 2;
    if (LT(a[(size_t)lo], a[(size_t)(lo - 1)])) {
      descending = true;
      for (lo = lo + 1; lo < hi; ++lo, ++n)
        if (!LT(a[(size_t)lo], a[(size_t)(lo - 1)])) break;
    } else {
      for (lo = lo + 1; lo < hi; ++lo, ++n)
        if (LT(a[(size_t)lo], a[(size_t)(lo - 1)])) break;
    }
    return n;
  }

  // k in 0..n with arr[k-1] < key <= arr[k]; arr is a view a[base:base+n] or tmp
  template <typename Arr>
  int64_t gallop_left(size_t key, Arr arr, int64_t n, int64_t hint) {
    int64_t lastofs = 0, ofs = 1;
    if (LT(arr(hint), key)) {
      const int64_t maxofs = n - hint;
      while (ofs < maxofs) {
        if (LT(arr(hint + ofs), key)) {
          lastofs = ofs;
          ofs = (ofs << 1) + 1;
        } else
          break;
      }
      if (ofs > maxofs) ofs = maxofs;
      lastofs += hint;
      ofs += hint;
    } else {
      const int64_t maxofs = hint + 1;
      while (ofs < maxofs) {
        if (LT(arr(hint - ofs), key)) break;
        lastofs = ofs;
        ofs = (ofs << 1) + 1;
      }
      if (ofs > maxofs) ofs = maxofs;
      int64_t k = lastofs;
      lastofs = hint - ofs;
      ofs = hint - k;
    }
    ++lastofs;
    while (lastofs < ofs) {
      int64_t m = lastofs + ((ofs - lastofs) >> 1);
      if (LT(arr(m), key))
        lastofs = m + 1;
      else
        ofs = m;
    }
    return ofs;
  }

  // k in 0..n with arr[k-1] <= key < arr[k]
  template <typename Arr>
  int64_t gallop_right(size_t key, Arr arr, int64_t n, int64_t hint) {
    int64_t lastofs = 0, ofs = 1;
    if (LT(key, arr(hint))) {
      const int64_t maxofs = hint + 1;
      while (ofs < maxofs) {
        if (LT(key, arr(hint - ofs))) {
          lastofs = ofs;
          ofs = (ofs << 1) + 1;
        } else
          break;
      }
      if (ofs > maxofs) ofs = maxofs;
      int64_t k = lastofs;
      lastofs = hint - ofs;
      ofs = hint - k;
    } else {
      const int64_t maxofs = n - hint;
      while (ofs < maxofs) {
        if (LT(key, arr(hint + ofs))) break;
        lastofs = ofs;
        ofs = (ofs << 1) + 1;
      }
      if (ofs > maxofs) ofs = maxofs;
      lastofs += hint;
      ofs += hint;
    }
    ++lastofs;
    while (lastofs < ofs) {
      int64_t m = lastofs + ((ofs - lastofs) >> 1);
      if (LT(key, arr(m)))
        ofs = m;
      else
        lastofs = m + 1;
    }
    return ofs;
  }

  auto view(int64_t base) {
    return [this, base](int64_t i) { return a[(size_t)(base + i)]; };
  }
  auto tview(int64_t base) {
    return [this, base](int64_t i) { return tmp[(size_t)(base + i)]; };
  }

  // merge a[pa:pa+na] and a[pb:pb+nb] (pb == pa+na), na <= nb; a[pa+na-1] belongs at the end
  void merge_lo(int64_t pa, int64_t na, int64_t pb, int64_t nb) {
    tmp.assign(a.begin() + pa, a.begin() + pa + na);
    int64_t dest = pa, ta = 0;  // ssa lives in tmp from ta
    a[(size_t)dest++] = a[(size_t)pb++];
    --nb;
    auto copy_b_tail = [&]() {  // CopyB
      for (int64_t i = 0; i < nb; i++) a[(size_t)(dest + i)] = a[(size_t)(pb + i)];
      a[(size_t)(dest + nb)] = tmp[(size_t)ta];
    };
    auto finish = [&]() {  // Succeed: the rest of ssa
      for (int64_t i = 0; i < na; i++) a[(size_t)(dest + i)] = tmp[(size_t)(ta + i)];
    };
    if (nb == 0) return finish();
    if (na == 1) return copy_b_tail();
    int64_t mg = min_gallop;
    for (;;) {
      int64_t acount = 0, bcount = 0;
      for (;;) {
        if (LT(a[(size_t)pb], tmp[(size_t)ta])) {
          a[(size_t)dest++] = a[(size_t)pb++];
          ++bcount;
          acount = 0;
          --nb;
          if (nb == 0) return finish();
          if (bcount >= mg) break;
        } else {
          a[(size_t)dest++] = tmp[(size_t)ta++];
          ++acount;
          bcount = 0;
          --na;
          if (na == 1) return copy_b_tail();
          if (acount >= mg) break;
        }
      }
      ++mg;
      do {
        mg -= mg > 1;
        min_gallop = mg;
        int64_t k = gallop_right(a[(size_t)pb], tview(ta), na, 0);
        acount = k;
        if (k) {
          for (int64_t i = 0; i < k; i++) a[(size_t)(dest + i)] = tmp[(size_t)(ta + i)];
          dest += k;
          ta += k;
          na -= k;
          if (na == 1) return copy_b_tail();
          if (na == 0) return finish();
        }
        a[(size_t)dest++] = a[(size_t)pb++];
        --nb;
        if (nb == 0) return finish();
        k = gallop_left(tmp[(size_t)ta], view(pb), nb, 0);
        bcount = k;
        if (k) {
          for (int64_t i = 0; i < k; i++) a[(size_t)(dest + i)] = a[(size_t)(pb + i)];
          dest += k;
          pb += k;
          nb -= k;
          if (nb == 0) return finish();
        }
        a[(size_t)dest++] = tmp[(size_t)ta++];
        --na;
        if (na == 1) return copy_b_tail();
      } while (acount >= MIN_GALLOP || bcount >= MIN_GALLOP);
      ++mg;
      min_gallop = mg;
    }
  }

  // merge a[pa:pa+na] and a[pb:pb+nb], na >= nb; a[pb] belongs at the front
  void merge_hi(int64_t pa, int64_t na, int64_t pb, int64_t nb) {
    tmp.assign(a.begin() + pb, a.begin() + pb + nb);
    const int64_t basea = pa;
    int64_t dest = pb + nb - 1;
    int64_t tb = nb - 1;       // ssb in tmp, from its last element
    int64_t ia = pa + na - 1;  // ssa, from its last element
    a[(size_t)dest--] = a[(size_t)ia--];
    --na;
    auto copy_a = [&]() {  // CopyA: nb == 1
      // move ssa[1-na .. 0] to dest[1-na .. 0], then ssb[0] at the front
      for (int64_t i = 0; i < na; i++) a[(size_t)(dest - i)] = a[(size_t)(ia - i)];
      dest -= na;
      a[(size_t)dest] = tmp[(size_t)tb];
    };
    auto finish = [&]() {  // Succeed: the rest of ssb
      for (int64_t i = 0; i < nb; i++) a[(size_t)(dest - (nb - 1) + i)] = tmp[(size_t)i];
    };
    if (na == 0) return finish();
    if (nb == 1) return copy_a();
    int64_t mg = min_gallop;
    for (;;) {
      int64_t acount = 0, bcount = 0;
      for (;;) {
        if (LT(tmp[(size_t)tb], a[(size_t)ia])) {
          a[(size_t)dest--] = a[(size_t)ia--];
          ++acount;
          bcount = 0;
          --na;
          if (na == 0) return finish();
          if (acount >= mg) break;
        } else {
          a[(size_t)dest--] = tmp[(size_t)tb--];
          ++bcount;
          acount = 0;
          --nb;
          if (nb == 1) return copy_a();
          if (bcount >= mg) break;
        }
      }
      ++mg;
      do {
        mg -= mg > 1;
        min_gallop = mg;
        int64_t k = gallop_right(tmp[(size_t)tb], view(basea), na, na - 1);
        k = na - k;
        acount = k;
        if (k) {
          // move a[ia-k+1 .. ia] to a[dest-k+1 .. dest]
          for (int64_t i = 0; i < k; i++) a[(size_t)(dest - i)] = a[(size_t)(ia - i)];
          dest -= k;
          ia -= k;
          na -= k;
          if (na == 0) return finish();
        }
        a[(size_t)dest--] = tmp[(size_t)tb--];
        --nb;
        if (nb == 1) return copy_a();
        k = gallop_left(a[(size_t)ia], tview(0), nb, nb - 1);
        k = nb - k;
        bcount = k;
        if (k) {
          for (int64_t i = 0; i < k; i++) a[(size_t)(dest - i)] = tmp[(size_t)(tb - i)];
          dest -= k;
          tb -= k;
          nb -= k;
          if (nb == 1) return copy_a();
          if (nb == 0) return finish();
        }
        a[(size_t)dest--] = a[(size_t)ia--];
        --na;
        if (na == 0) return finish();
      } while (acount >= MIN_GALLOP || bcount >= MIN_GALLOP);
      ++mg;
      min_gallop = mg;
    }
  }

  void merge_at(size_t i) {
    int64_t pa = pending[i].base, na = pending[i].len;
    int64_t pb = pending[i + 1].base, nb = pending[i + 1].len;
    pending[i].len = na + nb;
    if (i + 3 == pending.size()) pending[i + 1] = pending[i + 2];
    pending.pop_back();
    int64_t k = gallop_right(a[(size_t)pb], view(pa), na, 0);
    pa += k;
    na -= k;
    if (na == 0) return;
    nb = gallop_left(a[(size_t)(pa + na - 1)], view(pb), nb, nb - 1);
    if (nb <= 0) return;
    if (na <= nb)
      merge_lo(pa, na, pb, nb);
    else
      merge_hi(pa, na, pb, nb);
  }

  static int powerloop(int64_t s1, int64_t n1, int64_t n2, int64_t n) {
    int result = 0;
    int64_t x = 2 * s1 + n1;
    int64_t y = x + n1 + n2;
    for (;;) {
      ++result;
      if (x >= n) {
        x -= n;
        y -= n;
      } else if (y >= n) {
        break;
      }
      x <<= 1;
      y <<= 1;
    }
    return result;
  }

  void found_new_run(int64_t n2) {
    if (pending.empty()) return;
    int64_t s1 = pending.back().base, n1 = pending.back().len;
    int power = powerloop(s1, n1, n2, listlen);
    while (pending.size() > 1 && pending[pending.size() - 2].power > power) merge_at(pending.size() - 2);
    pending.back().power = power;
  }

  void merge_force_collapse() {
    while (pending.size() > 1) {
      size_t n = pending.size() - 2;
      if (n > 0 && pending[n - 1].len < pending[n + 1].len) --n;
      merge_at(n);
    }
  }
};

inline int64_t merge_compute_minrun(int64_t n) {
  int64_t r = 0;
  while (n >= 64) {
    r |= n & 1;
    n >>= 1;
  }
  return n + r;
}

}  // namespace pysort

// sorts the indices in place, stable, using only lt(a, b) ("a < b"); the comparator is a template parameter so the
// sort calls it directly (the linearizer's numbering runs millions of comparisons per training step)
template <typename Lt>
void py_sort_indices(std::vector<size_t>& idx, Lt&& lt) {
  using namespace pysort;
  int64_t nremaining = (int64_t)idx.size();
  if (nremaining < 2) return;
  MergeState<std::remove_reference_t<Lt>> ms{idx, lt, MIN_GALLOP, nremaining, {}, {}};
  int64_t lo = 0;
  const int64_t minrun = merge_compute_minrun(nremaining);
  do {
    bool descending;
    int64_t n = ms.count_run(lo, lo + nremaining, descending);
    if (descending) std::reverse(idx.begin() + lo, idx.begin() + lo + n);
    if (n < minrun) {
      const int64_t force = nremaining <= minrun ? nremaining : minrun;
      ms.binarysort(lo, lo + force, lo + n);
      n = force;
    }
    ms.found_new_run(n);
    ms.pending.push_back({lo, n, 0});
    lo += n;
    nremaining -= n;
  } while (nremaining);
  ms.merge_force_collapse();
}

}  // namespace detail

// sorts `items` in place, stable, using only lt(a, b) ("a < b")
template <typename T, typename Lt>
void py_sort(std::vector<T>& items, Lt&& lt) {
  std::vector<size_t> idx(items.size());
  for (size_t i = 0; i < idx.size(); i++) idx[i] = i;
  detail::py_sort_indices(idx, [&](size_t a, size_t b) { return lt(items[a], items[b]); });
  std::vector<T> out;
  out.reserve(items.size());
  for (size_t i : idx) out.push_back(std::move(items[i]));
  items = std::move(out);
}

}  // namespace tg
