#include "gui/expr_text.h"

#include <string_view>
#include <unordered_set>
#include <vector>

#include "viz/reader/reader.h"

namespace tv {

namespace {
const char* infix_op(std::string_view op) {
  static const std::pair<std::string_view, const char*> ops[] = {
      {"ADD", "+"},      {"SUB", "-"},   {"MUL", "*"},    {"FDIV", "/"},   {"FLOORDIV", "//"},
      {"FLOORMOD", "%"}, {"CMPLT", "<"}, {"CMPNE", "!="}, {"CMPEQ", "=="}, {"AND", "&"},
      {"OR", "|"},       {"XOR", "^"},   {"SHL", "<<"},   {"SHR", ">>"}};
  for (auto& [k, v] : ops)
    if (k == op) return v;
  return nullptr;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = (char)std::tolower((unsigned char)c);
  return r;
}

std::string cut(std::string s, size_t max_len) {
  if (s.size() > max_len) {
    s.resize(max_len);
    s += "…";
  }
  return s;
}

// one node from its sources' texts
std::string compose(tg::viz::Trace& t, const tg::viz::Node& n, const std::vector<const std::string*>& src) {
  const std::string op(n.op_name);
  std::string arg = t.arg_text(n.id);
  if (op == "CONST") return arg;
  if (op == "RANGE") {
    // arg "(2, AxisType.LOOP)": the axis number names the loop variable
    size_t b = arg.find_first_of("0123456789");
    size_t e = b == std::string::npos ? b : arg.find_first_not_of("0123456789", b);
    return b == std::string::npos ? "RANGE" : "r" + arg.substr(b, e - b);
  }
  if (op == "SPECIAL" || op == "DEFINE_VAR" || op == "PARAM") {
    if (arg.size() >= 2 && arg.front() == '\'') return arg.substr(1, arg.find('\'', 1) - 1);
  }
  if (const char* sym = infix_op(op); sym && src.size() == 2) return "(" + *src[0] + " " + sym + " " + *src[1] + ")";
  if (op == "NEG" && src.size() == 1) return "-" + *src[0];
  if (op == "WHERE" && src.size() == 3) return *src[0] + ".where(" + *src[1] + ", " + *src[2] + ")";
  if ((op == "CAST" || op == "BITCAST") && src.size() == 1)
    return lower(op) + "<" + t.dtype_name(n.dtype) + ">(" + *src[0] + ")";
  if (op == "MAX" && src.size() == 2) return "max(" + *src[0] + ", " + *src[1] + ")";
  std::string r = op + "(";
  for (size_t i = 0; i < src.size(); i++) r += (i ? ", " : "") + *src[i];
  if (arg != "None") r += std::string(src.empty() ? "" : ", ") + "arg=" + arg;
  return r + ")";
}

// nodes of the sub-DAG under root, sources before users (iterative)
std::vector<int64_t> toposort(tg::viz::Trace& t, int64_t root,
                              const std::unordered_map<int64_t, std::string>* known = nullptr) {
  std::vector<int64_t> out;
  std::unordered_set<int64_t> seen;
  std::vector<std::pair<int64_t, bool>> st{{root, false}};
  while (!st.empty()) {
    auto [n, done] = st.back();
    st.pop_back();
    if (done) {
      out.push_back(n);
      continue;
    }
    if (!seen.insert(n).second || (known && known->count(n))) continue;
    st.push_back({n, true});
    const auto& node = t.node(n);
    for (size_t i = node.src.size(); i-- > 0;)
      if (!seen.count(node.src[i])) st.push_back({node.src[i], false});
  }
  return out;
}
}  // namespace

const std::string& ExprPrinter::expr(int64_t root) {
  if (auto it = memo_.find(root); it != memo_.end()) return it->second;
  for (int64_t n : toposort(t_, root, &memo_)) {
    if (memo_.count(n)) continue;
    const auto& node = t_.node(n);
    std::vector<const std::string*> src;
    for (int64_t s : node.src) src.push_back(&memo_.at(s));
    memo_[n] = cut(compose(t_, node, src), max_len_);
  }
  return memo_.at(root);
}

std::string ExprPrinter::listing(int64_t root, size_t max_lines) {
  auto order = toposort(t_, root);
  std::unordered_map<int64_t, int> users;
  for (int64_t n : order)
    for (int64_t s : t_.node(n).src) users[s]++;
  // name the shared and the long sub-expressions, inline the rest
  std::unordered_map<int64_t, std::string> text;
  std::vector<std::string> lines;
  int next = 0;
  for (int64_t n : order) {
    const auto& node = t_.node(n);
    std::vector<const std::string*> src;
    for (int64_t s : node.src) src.push_back(&text.at(s));
    std::string s = compose(t_, node, src);
    bool leaf = node.src.empty() || node.op_name == "RANGE";
    if (n != root && !leaf && (users[n] > 1 || s.size() > 60)) {
      std::string name = "t" + std::to_string(next++);
      lines.push_back(name + " = " + cut(s, 200));
      s = name;
    }
    text[n] = std::move(s);
  }
  lines.push_back("= " + cut(text.at(root), 400));
  std::string out;
  size_t skip = lines.size() > max_lines ? lines.size() - max_lines : 0;
  if (skip) out += "… " + std::to_string(skip) + " more lines\n";
  for (size_t i = skip; i < lines.size(); i++) out += lines[i] + "\n";
  return out;
}

}  // namespace tv
