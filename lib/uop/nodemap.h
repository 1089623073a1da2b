// Flat open-addressing maps and sets keyed by UOp identity, for the rewrite drivers and graph walks (the hot path:
// no allocation per entry, pointer hashing). Entries hold references, like the reference's dicts of UOps.
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "lib/uop/uop.h"

namespace tg {

namespace detail {
// the slot of a node in a table of mask+1 slots (pointer hashing)
inline size_t node_slot(const UOpNode* k, size_t mask) {
  uint64_t h = (uint64_t)(uintptr_t)k;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return (size_t)(h ^ (h >> 32)) & mask;
}
inline UOpNode* key_node(const UOp& k) { return k.node(); }
inline UOpNode* key_node(UOpNode* k) { return k; }
}  // namespace detail

// the probes are inlined into the walks and drivers that call them millions of times; growing is out of line
#define TG_HOT_INLINE inline __attribute__((always_inline))
#define TG_COLD_PATH __attribute__((noinline))

// a stack of plain entries for graph walks: push is inlined and the caller writes the entry in place, field by field
// (vector::emplace_back is a call, and an entry copied through a temporary is written as scalars and read back as
// vectors, which store forwarding cannot serve). Storage is kept across uses
template <typename T>
class PodStack {
 public:
  TG_HOT_INLINE T& push() {
    if (n_ == cap_) [[unlikely]]  // the capacity kept apart: v_.size() divides by sizeof(T)
      grow();
    return v_[n_++];
  }
  T& back() { return v_[n_ - 1]; }
  void pop_back() { n_--; }
  bool empty() const { return n_ == 0; }
  size_t size() const { return n_; }
  void clear() { n_ = 0; }

 private:
  __attribute__((noinline)) void grow() {
    v_.resize(v_.size() * 2 + 64);
    cap_ = v_.size();
  }
  std::vector<T> v_;
  size_t n_ = 0, cap_ = 0;
};

// a map from nodes to V; K = UOp: the keys hold references (NodeMap), K = detail::UOpNode*: the keys are borrowed
// (BorrowedNodeMap: for a rewrite driver whose keys all stay alive until it clears the map)
template <typename K, typename V>
class BasicNodeMap {
 public:
  explicit BasicNodeMap(size_t cap = 64) { reset(cap); }
  size_t size() const { return size_; }
  V* find(const UOp& k) { return find(k.node()); }
  TG_HOT_INLINE V* find(detail::UOpNode* k) {
    size_t i = detail::node_slot(k, mask_);
    while (detail::key_node(keys_[i])) {
      if (detail::key_node(keys_[i]) == k) return &vals_[i];
      i = (i + 1) & mask_;
    }
    return nullptr;
  }
  const V* find(const UOp& k) const { return const_cast<BasicNodeMap*>(this)->find(k.node()); }
  bool contains(const UOp& k) { return find(k) != nullptr; }
  // inserts k (default value) if absent; returns the value and whether it was inserted
  TG_HOT_INLINE std::pair<V*, bool> emplace(const UOp& k) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    size_t i = detail::node_slot(k.node(), mask_);
    while (detail::key_node(keys_[i])) {
      if (detail::key_node(keys_[i]) == k.node()) return {&vals_[i], false};
      i = (i + 1) & mask_;
    }
    if constexpr (std::is_same_v<K, UOp>)
      keys_[i] = k;
    else
      keys_[i] = k.node();
    used_.push_back((uint32_t)i);
    size_++;
    return {&vals_[i], true};
  }
  V& operator[](const UOp& k) { return *emplace(k).first; }
  // f(key node, value) for every entry, in insertion order
  template <typename F>
  void for_each(F&& f) const {
    for (uint32_t i : used_) f(detail::key_node(keys_[i]), vals_[i]);
  }
  // empties the map keeping its storage (only the used slots are touched)
  void clear() {
    for (uint32_t i : used_) keys_[i] = K(), vals_[i] = V();
    used_.clear();
    size_ = 0;
  }

 private:
  void reset(size_t cap) {
    size_t n = 16;
    while (n < cap * 2) n <<= 1;
    // value-initialized in place: assign(n, V()) copies a default UOp into every slot (a call per slot)
    keys_.clear(), keys_.resize(n);
    vals_.clear(), vals_.resize(n);
    mask_ = n - 1;
    size_ = 0;
    used_.clear();
  }
  TG_COLD_PATH void grow() {
    std::vector<K> ok = std::move(keys_);
    std::vector<V> ov = std::move(vals_);
    reset(ok.size());
    for (size_t i = 0; i < ok.size(); i++)
      if (detail::UOpNode* n = detail::key_node(ok[i])) {
        detail::UOpNode* const& np = n;
        *emplace(*reinterpret_cast<const UOp*>(&np)).first = std::move(ov[i]);  // a view: no reference taken
      }
  }
  std::vector<K> keys_;
  std::vector<V> vals_;
  std::vector<uint32_t> used_;
  size_t mask_ = 0, size_ = 0;
};
template <typename V>
using NodeMap = BasicNodeMap<UOp, V>;
template <typename V>
using BorrowedNodeMap = BasicNodeMap<detail::UOpNode*, V>;

struct Unit {};

// a set of borrowed nodes (no references held): for walks where every node stays alive through the root.
// Clearable keeps the list of used slots, so clear() touches only them (for sets reused across many walks).
template <bool Clearable>
class BasicRawNodeSet {
 public:
  explicit BasicRawNodeSet(size_t cap = 64) {
    size_t n = 16;
    while (n < cap * 2) n <<= 1;
    keys_.assign(n, nullptr);
    mask_ = n - 1;
  }
  TG_HOT_INLINE bool insert(detail::UOpNode* k) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    size_t i = slot(k);
    while (keys_[i]) {
      if (keys_[i] == k) return false;
      i = (i + 1) & mask_;
    }
    keys_[i] = k;
    if constexpr (Clearable) used_.push_back((uint32_t)i);
    size_++;
    return true;
  }
  TG_HOT_INLINE bool contains(detail::UOpNode* k) const {
    size_t i = slot(k);
    while (keys_[i]) {
      if (keys_[i] == k) return true;
      i = (i + 1) & mask_;
    }
    return false;
  }
  // empties the set touching only the used slots; a big table the last walk hardly used is dropped, so that a set
  // reused across walks neither keeps megabytes nor scatters small walks over them
  void clear() requires Clearable {
    if (keys_.size() > (1u << 18) && used_.size() * 64 < keys_.size()) {
      *this = BasicRawNodeSet(64);
      return;
    }
    for (uint32_t i : used_) keys_[i] = nullptr;
    used_.clear();
    size_ = 0;
  }

 private:
  size_t slot(detail::UOpNode* k) const { return detail::node_slot(k, mask_); }
  TG_COLD_PATH void grow() {
    std::vector<detail::UOpNode*> old = std::move(keys_);
    keys_.assign(old.size() * 2, nullptr);
    mask_ = keys_.size() - 1;
    if constexpr (Clearable) used_.clear();
    for (auto* k : old) {
      if (!k) continue;
      size_t i = slot(k);
      while (keys_[i]) i = (i + 1) & mask_;  // the keys are distinct
      keys_[i] = k;
      if constexpr (Clearable) used_.push_back((uint32_t)i);
    }
  }
  std::vector<detail::UOpNode*> keys_;
  std::vector<uint32_t> used_;  // Clearable only
  size_t mask_ = 0, size_ = 0;
};
using RawNodeSet = BasicRawNodeSet<false>;
using ClearableRawNodeSet = BasicRawNodeSet<true>;
class NodeSet {
 public:
  explicit NodeSet(size_t cap = 64) : m_(cap) {}
  bool insert(const UOp& k) { return m_.emplace(k).second; }  // true if newly inserted
  bool contains(const UOp& k) { return m_.find(k) != nullptr; }
  size_t size() const { return m_.size(); }
  void clear() { m_.clear(); }

 private:
  NodeMap<Unit> m_;
};

}  // namespace tg
