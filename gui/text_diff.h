// Line diff (longest common subsequence) of two short texts, for the before/after view of a match.
#pragma once
#include <string>
#include <vector>

namespace tv {

struct DiffLine {
  char kind;  // ' ' same, '-' only in a, '+' only in b
  std::string text;
};
std::vector<DiffLine> line_diff(const std::string& a, const std::string& b);
// the same by words (runs of letters, digits and '_', '.', or single other characters; spaces kept with the word
// before), for two labels that differ in one word: each piece marked ' ', '-' or '+'
std::vector<DiffLine> word_diff(const std::string& a, const std::string& b);

}  // namespace tv
