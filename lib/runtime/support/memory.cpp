#include "lib/runtime/support/memory.h"

#include <algorithm>
#include <string>

#include "lib/helpers.h"

namespace tg {

static int64_t bit_length(int64_t v) { return v <= 0 ? 0 : 64 - __builtin_clzll((unsigned long long)v); }
static int64_t round_up(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

TLSFAllocator::TLSFAllocator(int64_t size, int64_t base, int64_t block_size, int64_t lv2_cnt)
    : size_(size), base_(base), block_size_(block_size), l2_cnt_(bit_length(lv2_cnt)) {
  storage_.assign((size_t)bit_length(size) + 1, std::vector<std::vector<int64_t>>((size_t)1 << l2_cnt_));
  lv1_entries_.assign(storage_.size(), 0);
  blocks_[0] = Block{size, std::nullopt, std::nullopt, true};
  if (size > 0) insert_block(0, size, std::nullopt, false);
}

int64_t TLSFAllocator::lv1(int64_t size) const { return bit_length(size); }
int64_t TLSFAllocator::lv2(int64_t size) const {
  int64_t bl = bit_length(size);
  return (size - ((int64_t)1 << (bl - 1))) / ((int64_t)1 << std::max<int64_t>(0, bl - l2_cnt_));
}

void TLSFAllocator::insert_block(int64_t start, int64_t size, std::optional<int64_t> prev, bool prev_given) {
  if (!prev_given) prev = blocks_.at(start).prev;
  storage_[lv1(size)][lv2(size)].push_back(start);
  lv1_entries_[lv1(size)] += 1;
  blocks_[start] = Block{size, start + size, prev, true};
}

void TLSFAllocator::remove_block(int64_t start, int64_t size) {
  std::optional<int64_t> prev = blocks_.at(start).prev;
  auto& v = storage_[lv1(size)][lv2(size)];
  auto it = std::find(v.begin(), v.end(), start);
  if (it == v.end()) throw Error("TLSFAllocator: block " + std::to_string(start) + " is not in its bucket");
  v.erase(it);
  lv1_entries_[lv1(size)] -= 1;
  blocks_[start] = Block{size, start + size, prev, false};
}

void TLSFAllocator::split_block(int64_t start, int64_t size, int64_t new_size) {
  std::optional<int64_t> nxt = blocks_.at(start).next;
  remove_block(start, size);
  insert_block(start, new_size, std::nullopt, false);
  insert_block(start + new_size, size - new_size, start, true);
  if (nxt && blocks_.count(*nxt)) blocks_[*nxt].prev = start + new_size;
}

void TLSFAllocator::merge_right(int64_t start) {
  Block b = blocks_.at(start);
  int64_t size = b.size;
  std::optional<int64_t> nxt = b.next;
  while (nxt && blocks_.count(*nxt)) {
    Block blk = blocks_.at(*nxt);
    if (!blk.is_free) break;
    remove_block(start, size);
    remove_block(*nxt, blk.size);
    size = size + blk.size;
    insert_block(start, size, std::nullopt, false);
    Block popped = blocks_.at(*nxt);
    blocks_.erase(*nxt);
    nxt = popped.next;
  }
  if (nxt && blocks_.count(*nxt)) blocks_[*nxt].prev = start;
}

void TLSFAllocator::merge_block(int64_t start) {
  // go left while blocks are free, then merge them all right
  while (true) {
    std::optional<int64_t> x = blocks_.at(start).prev;
    if (!x || !blocks_.at(*x).is_free) break;
    start = *x;
  }
  merge_right(start);
}

int64_t TLSFAllocator::alloc(int64_t req_size, int64_t align) {
  req_size = std::max(block_size_, req_size);
  int64_t size = std::max(block_size_, req_size + align - 1);
  // round up the allocation size to the next bucket, so any entry there can fit the requested size
  size = round_up(size, (int64_t)1 << (bit_length(size) - l2_cnt_));
  for (size_t l1 = (size_t)lv1(size); l1 < storage_.size(); l1++) {
    if (lv1_entries_[l1] == 0) continue;
    for (int64_t l2 = (int64_t)l1 == bit_length(size) ? lv2(size) : 0; l2 < ((int64_t)1 << l2_cnt_); l2++) {
      if (storage_[l1][l2].empty()) continue;
      int64_t start = storage_[l1][l2][0];
      int64_t nsize = blocks_.at(start).size;
      if (int64_t new_start = round_up(start, align); new_start != start) {
        split_block(start, nsize, new_start - start);
        start = new_start, nsize = blocks_.at(new_start).size;
      }
      if (nsize > req_size) split_block(start, nsize, req_size);
      remove_block(start, req_size);
      return start + base_;
    }
  }
  throw Error("Can't allocate " + std::to_string(req_size) + " bytes");
}

void TLSFAllocator::free(int64_t start) {
  insert_block(start - base_, blocks_.at(start - base_).size, std::nullopt, false);
  merge_block(start - base_);
}

}  // namespace tg
