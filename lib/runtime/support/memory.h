// Port of the TLSFAllocator of tinygrad/runtime/support/memory.py: a Two-Level Segregated Fit allocator over an
// address range. The 1st level is the most significant bit of the size, the 2nd level splits it into lv2_cnt entries.
// Offsets are the reference's exactly (the memory planner's arena offsets depend on them).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace tg {

class TLSFAllocator {
 public:
  TLSFAllocator(int64_t size, int64_t base = 0, int64_t block_size = 16, int64_t lv2_cnt = 16);
  int64_t alloc(int64_t req_size, int64_t align = 1);  // throws tg::Error when no block fits
  void free(int64_t start);

 private:
  struct Block {
    int64_t size;
    std::optional<int64_t> next, prev;
    bool is_free;
  };
  int64_t lv1(int64_t size) const;
  int64_t lv2(int64_t size) const;
  void insert_block(int64_t start, int64_t size, std::optional<int64_t> prev, bool prev_given);
  void remove_block(int64_t start, int64_t size);
  void split_block(int64_t start, int64_t size, int64_t new_size);
  void merge_right(int64_t start);
  void merge_block(int64_t start);
  int64_t size_, base_, block_size_, l2_cnt_;
  std::vector<std::vector<std::vector<int64_t>>> storage_;  // [lv1][lv2] -> starts, in insertion order
  std::vector<int64_t> lv1_entries_;
  std::map<int64_t, Block> blocks_;
};

}  // namespace tg
