// The one reader of the golden and corpus files in tests/data (written by tests/parity/gen_*.py and
// tests/bench/gen_corpus.py against the reference; each script's header describes its format). Every format is made of
// records, one a line: "<key> <rest>". Blank lines and '#' comments between records are skipped. A counted block
// "<key> <n>" is followed by n raw lines. In the pooled formats a line "+ <node>" appends one node (uop_codec.py's
// encoding, its sources as pool indices) to the pool of the current record, and "@i" names pool node i.
// Every problem is a std::runtime_error naming the file and the line.
#pragma once
#include <cstdint>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lib/uop/serialize.h"

namespace tg::test {

// the words of s: the pieces between runs of `sep` (none for an empty s, as python's str.split())
inline std::vector<std::string> split(const std::string& s, char sep = ' ') {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(sep, i);
    if (j == std::string::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// hex digits to bytes; "-" (an empty buffer) is no bytes
inline std::vector<uint8_t> unhex(const std::string& h) {
  std::vector<uint8_t> r;
  if (h == "-") return r;
  for (size_t i = 0; i + 1 < h.size(); i += 2) r.push_back((uint8_t)std::stoi(h.substr(i, 2), nullptr, 16));
  return r;
}

// "A=1 B=-2": the pairs in order (words without '=' are skipped)
inline std::vector<std::pair<std::string, long long>> key_values(const std::string& s) {
  std::vector<std::pair<std::string, long long>> out;
  for (const std::string& kv : split(s)) {
    size_t q = kv.find('=');
    if (q != std::string::npos) out.emplace_back(kv.substr(0, q), std::stoll(kv.substr(q + 1)));
  }
  return out;
}

// the lines of a block as one text ('\n' between them)
inline std::string join_lines(const std::vector<std::string>& v) {
  std::string r;
  for (size_t i = 0; i < v.size(); i++) r += (i ? "\n" : "") + v[i];
  return r;
}

// the first line where two texts differ, for failure messages
inline std::string first_diff(const std::string& want, const std::string& got) {
  size_t i = 0, line = 1;
  while (i < want.size() && i < got.size() && want[i] == got[i]) line += want[i++] == '\n';
  auto grab = [&](const std::string& s) {
    size_t b = s.rfind('\n', i ? i - 1 : 0);
    b = b == std::string::npos ? 0 : b + 1;
    size_t e = s.find('\n', i);
    return s.substr(b, e == std::string::npos ? std::string::npos : e - b);
  };
  return "line " + std::to_string(line) + "\n  want: " + grab(want) + "\n  got:  " + grab(got);
}

// a golden LINEAR graph's program: the UOps of its sources, in order
inline std::vector<UOp> dec_linear(const std::vector<std::string>& lines) {
  UOp l = decode_graph(lines);
  return std::vector<UOp>(l.src().begin(), l.src().end());
}

class GoldenFile {
 public:
  enum Mode { kPlain, kNodePool };
  explicit GoldenFile(std::string path, Mode mode = kPlain) : path_(std::move(path)), mode_(mode) {
    f_.open(path_, std::ios::binary);
    if (!f_) throw std::runtime_error("cannot open golden file " + path_);
  }

  // called with each '#' line between records (most formats ignore them)
  std::function<void(const std::string&)> on_comment;

  // the next record; false at the end of the file
  bool next() {
    while (getline()) {
      if (line_.empty()) continue;
      if (line_[0] == '#') {
        if (on_comment) on_comment(line_);
        continue;
      }
      if (mode_ == kNodePool && line_.rfind("+ ", 0) == 0) {
        try {
          pool_.push_back(decode_node(line_.substr(2), pool_));
        } catch (const std::exception& e) {
          fail(std::string("bad node: ") + e.what());
        }
        continue;
      }
      size_t sp = line_.find(' ');
      key_ = line_.substr(0, sp);
      rest_ = sp == std::string::npos ? "" : line_.substr(sp + 1);
      return true;
    }
    return false;
  }

  const std::string& line() const { return line_; }
  const std::string& key() const { return key_; }
  const std::string& rest() const { return rest_; }
  bool is(const char* key) const { return key_ == key; }
  size_t line_no() const { return line_no_; }
  std::vector<std::string> words() const { return split(line_); }
  // the words from the i-th on (the key is word 0), as numbers
  std::vector<double> numbers(size_t from) const {
    std::vector<std::string> w = words();
    std::vector<double> out;
    try {
      for (size_t i = from; i < w.size(); i++) out.push_back(std::stod(w[i]));
    } catch (const std::exception&) {
      fail("expected numbers");
    }
    return out;
  }
  int count() const {
    try {
      return std::stoi(rest_);
    } catch (const std::exception&) {
      fail("expected a count after '" + key_ + "'");
    }
  }

  // the n raw lines that follow the current record
  std::vector<std::string> lines(size_t n) {
    std::vector<std::string> out;
    for (size_t i = 0; i < n && getline(); i++) out.push_back(line_);
    if (out.size() != n) fail("the file ends inside a block of " + std::to_string(n) + " lines");
    return out;
  }
  // a counted block: the current record is "<key> <n>"
  std::vector<std::string> block() { return lines((size_t)count()); }

  // the pool: cleared where a format's record starts a new one; node("@i") is its node i
  void clear_pool() { pool_.clear(); }
  UOp node(const std::string& ref) const {
    if (ref.empty() || ref[0] != '@') fail("bad graph reference '" + ref + "'");
    size_t i = std::stoul(ref.substr(1));
    if (i >= pool_.size()) fail("graph reference " + ref + " past the " + std::to_string(pool_.size()) + " nodes");
    return pool_[i];
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(path_ + ":" + std::to_string(line_no_) + ": " + what);
  }
  [[noreturn]] void unknown() const { fail("unknown record '" + line_.substr(0, 80) + "'"); }

 private:
  bool getline() {
    if (!std::getline(f_, line_)) return false;
    line_no_++;
    return true;
  }
  std::string path_;
  Mode mode_;
  std::ifstream f_;
  std::string line_, key_, rest_;
  size_t line_no_ = 0;
  std::vector<UOp> pool_;
};

// A kernel's first run in the reference (kernel, codegen and uops goldens):
//   run                                                   the record that starts it
//   vals <v...>                                           Variable values in slot order ('-' = core_id)
//   buf <dtype attr> <count> <hex before> <hex after>     one per global buffer, in slot order
struct GoldenBuffer {
  std::string dtype;  // dtypes.<attr>
  size_t count = 0;
  std::vector<uint8_t> before, after;
};
struct GoldenRun {
  bool has_run = false;
  std::vector<std::string> vals;
  std::vector<GoldenBuffer> bufs;
  // takes the current record if it is one of these; false if not
  bool read_run(GoldenFile& f) {
    if (f.is("run")) {
      has_run = true;
    } else if (f.is("vals")) {
      std::vector<std::string> w = f.words();
      vals.assign(w.begin() + 1, w.end());
    } else if (f.is("buf")) {
      std::vector<std::string> w = f.words();
      if (w.size() != 5) f.fail("expected: buf <dtype> <count> <hex before> <hex after>");
      bufs.push_back({w[1], std::stoull(w[2]), unhex(w[3]), unhex(w[4])});
    } else {
      return false;
    }
    return true;
  }
};

// The shape most goldens share: "case <name>" starts a record; a key in `blocks` is a counted block, any other key a
// one-line value (the last one wins).
struct GoldenCase {
  std::string name;
  std::map<std::string, std::string> values;
  std::map<std::string, std::vector<std::string>> blocks;
  std::string value(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? "" : it->second;
  }
  const std::vector<std::string>& block(const std::string& key) const {
    static const std::vector<std::string> none;
    auto it = blocks.find(key);
    return it == blocks.end() ? none : it->second;
  }
};

inline std::vector<GoldenCase> load_cases(const std::string& path, std::initializer_list<std::string> blocks = {}) {
  GoldenFile f(path);
  std::vector<GoldenCase> cases;
  while (f.next()) {
    if (f.is("case")) {
      cases.push_back({f.rest(), {}, {}});
      continue;
    }
    if (cases.empty()) f.fail("a record before the first case");
    bool is_block = false;
    for (const std::string& b : blocks) is_block = is_block || f.key() == b;
    if (is_block)
      cases.back().blocks[f.key()] = f.block();
    else
      cases.back().values[f.key()] = f.rest();
  }
  return cases;
}

}  // namespace tg::test
