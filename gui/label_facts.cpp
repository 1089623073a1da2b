#include "gui/label_facts.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <unordered_set>

#include "viz/reader/reader.h"

namespace tv {

using tg::viz::Node;

namespace {
// tinygrad's range_start: the first source that is a range an op closes
int range_start(std::string_view op) {
  if (op == "STAGE" || op == "REDUCE" || op == "END" || op == "CALL" || op == "FUNCTION") return 1;
  if (op == "WMMA") return 3;
  if (op == "LINEAR") return 0;
  return -1;
}
// the integers of a RANGE's arg text "(0, 2, AxisType.LOOP)", before the axis type
std::vector<int64_t> axis_numbers(const std::string& arg) {
  std::vector<int64_t> out;
  size_t end = arg.find("AxisType");
  std::string_view s(arg.data(), end == std::string::npos ? arg.size() : end);
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '-' || (s[i] >= '0' && s[i] <= '9')) {
      char* e = nullptr;
      long long v = std::strtoll(s.data() + i, &e, 10);
      size_t used = (size_t)(e - (s.data() + i));
      if (used == 0) {
        i++;
        continue;
      }
      out.push_back(v);
      i += used;
    } else {
      i++;
    }
  }
  return out;
}
}  // namespace

std::vector<int64_t> LabelFacts::ended_ranges(int64_t id) {
  const Node& n = t_.node(id);
  int start = range_start(n.op_name);
  std::vector<int64_t> out;
  if (start >= 0) {
    for (size_t i = (size_t)start; i < n.src.size(); i++) out.push_back(n.src[i]);
  } else if (n.op_name == "AFTER") {
    for (size_t i = 1; i < n.src.size(); i++) {
      std::vector<int64_t> e = ended_ranges(n.src[i]);
      out.insert(out.end(), e.begin(), e.end());
    }
  } else if (n.op_name == "UNSHARD") {
    for (size_t i = 1; i < n.src.size(); i++) out.push_back(n.src[i]);
  }
  return out;
}

const std::vector<int64_t>& LabelFacts::ranges(int64_t root) {
  if (auto it = ranges_.find(root); it != ranges_.end()) return it->second;
  // sources first, without recursion (kernel graphs are thousands of nodes deep)
  std::vector<std::pair<int64_t, bool>> st{{root, false}};
  std::unordered_set<int64_t> expanded;  // a shared node's sources are pushed once
  while (!st.empty()) {
    auto [id, done] = st.back();
    st.pop_back();
    if (ranges_.count(id)) continue;
    const Node& n = t_.node(id);
    if (!done) {
      if (!expanded.insert(id).second) continue;
      st.push_back({id, true});
      for (int64_t s : n.src)
        if (!ranges_.count(s)) st.push_back({s, false});
      continue;
    }
    std::vector<int64_t> r;
    for (int64_t s : n.src)
      for (int64_t x : ranges_.at(s))
        if (std::find(r.begin(), r.end(), x) == r.end()) r.push_back(x);
    for (int64_t er : ended_ranges(id)) {
      if (t_.node(er).op_name == "RANGE") {
        r.erase(std::remove(r.begin(), r.end(), er), r.end());
      } else {
        const auto& inner = ranges_.count(er) ? ranges_.at(er) : ranges(er);
        r.erase(std::remove_if(r.begin(), r.end(),
                               [&](int64_t x) { return std::find(inner.begin(), inner.end(), x) != inner.end(); }),
                r.end());
      }
    }
    if (n.op_name == "RANGE" && std::find(r.begin(), r.end(), id) == r.end()) r.insert(r.begin(), id);
    for (int64_t x : r)
      if (!size_.count(x)) size_[x] = axis_numbers(t_.arg_text(x));
    std::stable_sort(r.begin(), r.end(), [&](int64_t a, int64_t b) { return size_.at(a) < size_.at(b); });
    ranges_.emplace(id, std::move(r));
  }
  return ranges_.at(root);
}

std::string LabelFacts::range_str(int64_t range) {
  if (!size_.count(range)) size_[range] = axis_numbers(t_.arg_text(range));
  std::string s;
  for (int64_t v : size_.at(range)) s += (s.empty() ? "" : "_") + (v >= 0 ? std::to_string(v) : "m" + std::to_string(-v));
  return s;
}

std::string LabelFacts::range_size(int64_t range) {
  const Node& n = t_.node(range);
  if (n.src.empty()) return "?";
  const Node& b = t_.node(n.src[0]);
  if (b.op_name == "CONST") return t_.arg_text(b.id);
  return expr_.expr(b.id);
}

size_t LabelFacts::subtree_size(int64_t id, size_t limit) {
  std::unordered_set<int64_t> seen;
  std::vector<int64_t> st{id};
  while (!st.empty() && seen.size() < limit) {
    int64_t x = st.back();
    st.pop_back();
    if (!seen.insert(x).second) continue;
    for (int64_t s : t_.node(x).src) st.push_back(s);
  }
  return seen.size();
}

const std::string& LabelFacts::addrspace(int64_t root) {
  if (auto it = addr_.find(root); it != addr_.end()) return it->second;
  std::vector<std::pair<int64_t, bool>> st{{root, false}};
  static const std::unordered_set<std::string_view> kFirst{"INDEX", "CAST",    "AFTER", "REDUCE", "STORE",
                                                           "MSTACK", "MSELECT", "END",   "UNSHARD", "RESHAPE",
                                                           "EXPAND", "PAD",     "SHRINK", "PERMUTE", "FLIP"};
  static const std::unordered_set<std::string_view> kElementwise{
      "STACK", "WMMA",  "GROUP", "ADD",  "MUL",    "SUB",      "FDIV",  "IDIV",  "MOD",   "MAX",  "CMPLT", "CMPNE",
      "CMPEQ", "AND",   "OR",    "XOR",  "SHL",    "SHR",      "WHERE", "MULACC", "NEG",  "EXP2", "LOG2",  "SIN",
      "SQRT",  "RECIPROCAL", "TRUNC", "THREEFRY", "POW", "FLOORDIV", "FLOORMOD", "BITCAST", "VECTORIZE"};
  std::unordered_set<int64_t> expanded;
  while (!st.empty()) {
    auto [id, done] = st.back();
    st.pop_back();
    if (addr_.count(id)) continue;
    const Node& n = t_.node(id);
    std::string_view op = n.op_name;
    bool first = kFirst.count(op) > 0, all = kElementwise.count(op) > 0;
    if (!done && (first || all)) {
      if (!expanded.insert(id).second) continue;
      st.push_back({id, true});
      if (first && !n.src.empty() && !addr_.count(n.src[0])) st.push_back({n.src[0], false});
      if (all)
        for (int64_t s : n.src)
          if (!addr_.count(s)) st.push_back({s, false});
      continue;
    }
    std::string a;
    if (op == "PARAM" || op == "BUFFER") {
      std::string arg = t_.arg_text(id);
      size_t at = arg.find("addrspace=");
      if (at == std::string::npos)
        a = op == "PARAM" ? "GLOBAL" : "";  // ParamArg's default is left out of its text
      else if (arg.compare(at + 10, 10, "AddrSpace.") == 0) {
        size_t b = at + 20, e = b;
        while (e < arg.size() && std::isalnum((unsigned char)arg[e])) e++;
        a = arg.substr(b, e - b);
      }
    } else if (op == "SPECIAL" || op == "RANGE" || op == "LOAD") {
      a = "ALU";
    } else if (first) {
      a = n.src.empty() ? "" : addr_.at(n.src[0]);
    } else if (all) {
      for (int64_t s : n.src) {
        const std::string& x = addr_.at(s);
        if (x.empty()) continue;
        if (a.empty()) a = x;
        if (x != a) {
          a.clear();
          break;
        }
      }
    }
    addr_.emplace(id, std::move(a));
  }
  return addr_.at(root);
}

std::vector<std::string> LabelFacts::lines(int64_t id, bool long_ones) {
  std::vector<std::string> out;
  const Node& n = t_.node(id);
  std::string_view op = n.op_name;
  const std::vector<int64_t>& rngs = ranges(id);
  if (!rngs.empty()) {
    std::string l = "(";
    for (size_t i = 0; i < rngs.size(); i++) l += (i ? "," : "") + range_str(rngs[i]);
    out.push_back(l + ")");
  }
  // its shape as the engine computed it when the node was recorded (schema 7; the reference's `u._shape` line)
  if (n.shape) {
    try {
      const std::string& sh = t_.str(n.shape);
      out.push_back(sh.size() <= 120 ? sh : sh.substr(0, 119) + "…");
    } catch (const tg::viz::TraceError&) {  // a damaged string reference: no shape line
    }
  }
  if ((op == "INDEX" || op == "STAGE") && n.src.size() > 1) {
    size_t nodes = 0;
    for (size_t i = 1; i < n.src.size(); i++) nodes += subtree_size(n.src[i], 30);
    if (long_ones) {
      if (nodes < 30) {
        // the buffer by its kernel argument name, as rendered code calls it
        const Node& b = t_.node(n.src[0]);
        std::string buf = expr_.expr(b.id);
        if (b.op_name == "PARAM") {
          std::string arg = t_.arg_text(b.id);
          size_t d = arg.find_first_of("0123456789");
          if (arg.rfind("ParamArg(", 0) == 0 && d != std::string::npos)
            buf = "data" + arg.substr(d, arg.find_first_not_of("0123456789", d) - d);
        } else if (buf.size() > 24) {
          buf = std::string(b.op_name);
        }
        std::string e = buf + "[";
        for (size_t i = 1; i < n.src.size(); i++) e += (i > 1 ? ", " : "") + expr_.expr(n.src[i]);
        out.push_back(e + "]");
      } else {
        out.push_back("INDEX TOO LARGE");
      }
    }
    std::vector<int64_t> seen;
    std::string l;
    for (size_t i = 1; i < n.src.size(); i++) {
      std::vector<int64_t> st{n.src[i]};
      while (!st.empty()) {
        int64_t x = st.back();
        st.pop_back();
        if (std::find(seen.begin(), seen.end(), x) != seen.end()) continue;
        seen.push_back(x);
        const Node& xn = t_.node(x);
        if (xn.op_name == "RANGE" || xn.op_name == "SPECIAL")
          l += (l.empty() ? "" : " ") + expr_.expr(x) + "=" + range_size(x);
        for (size_t j = xn.src.size(); j-- > 0;) st.push_back(xn.src[j]);
      }
    }
    if (!l.empty()) out.push_back(l);
  }
  if (op == "END" || op == "REDUCE") {
    std::vector<int64_t> closed;
    int start = range_start(op);
    for (size_t i = (size_t)start; i < n.src.size(); i++)
      for (int64_t r : ranges(n.src[i]))
        if (std::find(closed.begin(), closed.end(), r) == closed.end()) closed.push_back(r);
    std::stable_sort(closed.begin(), closed.end(), [&](int64_t a, int64_t b) { return size_.at(a) < size_.at(b); });
    std::string l;
    for (int64_t r : closed) l += (l.empty() ? "" : " ") + range_str(r) + "(" + range_size(r) + ")";
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

}  // namespace tv
