// The compiler facts tinygrad's VIZ adds under a node's label (viz/serve.py uop_to_json), derived here from the
// trace's nodes as the reference derives them from the UOp (the viewer never links the engine):
//   - the ranges a node lies in, `(0_1,2_3)` (UOp.ranges: its sources' ranges less those an END, REDUCE, STAGE, WMMA,
//     CALL, AFTER or UNSHARD closes; a RANGE lies in itself), each as range_str: its axis numbers joined by `_`;
//   - on an INDEX (or STAGE), the rendered index expression when it is small (the reference: under 30 nodes, else
//     "INDEX TOO LARGE") and every RANGE or SPECIAL it reads with its size, `r0=16 r1=4`;
//   - on an END or REDUCE, the ranges it closes with their sizes, `0_1(16) 3(4)`;
//   - the address space (UOp.addrspace: GLOBAL, LOCAL, REG, ALU), which the reference draws as a coloured square.
//   - its shape, "(4,4)", "()" for a scalar, as the engine computed it when the trace was recorded (schema 7; older
//     traces and imported ones have none).
// A range's size is its bound when that is a constant, else the bound's expression.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "gui/expr_text.h"

namespace tg::viz {
class Trace;
}

namespace tv {

class LabelFacts {
 public:
  explicit LabelFacts(tg::viz::Trace& t) : t_(t), expr_(t, 160) {}
  // the lines under the node's label, in the reference's order; `long_ones` false leaves out the INDEX expression
  std::vector<std::string> lines(int64_t id, bool long_ones = true);
  // "GLOBAL", "LOCAL", "REG", "ALU", or "" when the node has none (or its sources disagree)
  const std::string& addrspace(int64_t id);
  // the RANGE nodes the node lies in, ordered by their axis numbers
  const std::vector<int64_t>& ranges(int64_t id);
  std::string range_str(int64_t range);   // "0_1": the axis numbers of the RANGE's arg, negatives as m1
  std::string range_size(int64_t range);  // "16": the bound, or its expression when it is not a constant
  size_t size() const { return ranges_.size() + addr_.size(); }  // memoised entries

 private:
  std::vector<int64_t> ended_ranges(int64_t id);
  size_t subtree_size(int64_t id, size_t limit);
  tg::viz::Trace& t_;
  ExprPrinter expr_;
  std::unordered_map<int64_t, std::vector<int64_t>> ranges_;
  std::unordered_map<int64_t, std::string> addr_;
  std::unordered_map<int64_t, std::vector<int64_t>> size_;  // RANGE -> its axis numbers (the sort key)
};

}  // namespace tv
