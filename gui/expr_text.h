// Readable text of a UOp sub-expression, for the side panel and the before/after diff of a match:
//   infix for ALU ops ("(r2 * 4) + 1"), consts by value, ranges as r<axis>, anything else as OP(srcs, arg).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>

namespace tg::viz {
class Trace;
}

namespace tv {

class ExprPrinter {
 public:
  explicit ExprPrinter(tg::viz::Trace& t, size_t max_len = 300) : t_(t), max_len_(max_len) {}
  const std::string& expr(int64_t node);  // memoised, cut at max_len with "…"
  // a listing, one line per shared or long sub-expression: "t0 = (r2 * 4)\n...\n= t0 + 1"
  std::string listing(int64_t root, size_t max_lines = 40);

 private:
  std::string render(int64_t node, const std::unordered_map<int64_t, std::string>* names);
  tg::viz::Trace& t_;
  size_t max_len_;
  std::unordered_map<int64_t, std::string> memo_;
};

}  // namespace tv
