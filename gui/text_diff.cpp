#include "gui/text_diff.h"

#include <sstream>

namespace tv {

static std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<DiffLine> line_diff(const std::string& a, const std::string& b) {
  auto x = split_lines(a), y = split_lines(b);
  size_t n = x.size(), m = y.size();
  if (n * m > 4'000'000) {  // too big for the table: everything differs
    std::vector<DiffLine> out;
    for (auto& l : x) out.push_back({'-', l});
    for (auto& l : y) out.push_back({'+', l});
    return out;
  }
  std::vector<std::vector<int>> L(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;) L[i][j] = x[i] == y[j] ? L[i + 1][j + 1] + 1 : std::max(L[i + 1][j], L[i][j + 1]);
  std::vector<DiffLine> out;
  size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] == y[j])
      out.push_back({' ', x[i]}), i++, j++;
    else if (L[i + 1][j] >= L[i][j + 1])
      out.push_back({'-', x[i++]});
    else
      out.push_back({'+', y[j++]});
  }
  while (i < n) out.push_back({'-', x[i++]});
  while (j < m) out.push_back({'+', y[j++]});
  return out;
}

namespace {
std::string words(const std::string& s) {  // one word per line
  std::string out;
  auto wordy = [](char c) { return std::isalnum((unsigned char)c) || c == '_' || c == '.'; };
  for (size_t i = 0; i < s.size();) {
    size_t j = i + 1;
    if (wordy(s[i]))
      while (j < s.size() && wordy(s[j])) j++;
    while (j < s.size() && s[j] == ' ') j++;
    std::string w = s.substr(i, j - i);
    for (char& c : w)
      if (c == '\n') c = ' ';
    out += w + "\n";
    i = j;
  }
  return out;
}
}  // namespace

std::vector<DiffLine> word_diff(const std::string& a, const std::string& b) { return line_diff(words(a), words(b)); }

}  // namespace tv
