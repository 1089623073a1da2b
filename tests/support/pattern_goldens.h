// Loader for the rule-pattern goldens (tests/data/pattern_goldens.txt, codegen_pattern_goldens.txt,
// schedule_pattern_goldens.txt, written by the gen_*pattern_goldens.py scripts): per matcher "matcher <name> <n>" and
// the canonical structure of its n rules' UPats in order; the codegen file also has "ops <renderer> <OP,OP,...>" lines.
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lib/uop/upat.h"
#include "tests/support/golden_file.h"

struct PatternGoldens {
  std::map<std::string, std::string> ops;  // renderer -> its code_for_op keys, comma separated
  std::vector<std::pair<std::string, std::vector<std::string>>> matchers;
};

inline PatternGoldens load_pattern_goldens(const std::string& path) {
  tg::test::GoldenFile f(path);
  PatternGoldens g;
  while (f.next()) {
    size_t sp = f.rest().rfind(' ');
    if (sp == std::string::npos) f.fail("expected: " + f.key() + " <name> <value>");
    std::string name = f.rest().substr(0, sp), value = f.rest().substr(sp + 1);
    if (f.is("ops"))
      g.ops[name] = value;
    else if (f.is("matcher"))
      g.matchers.emplace_back(name, f.lines(std::stoul(value)));
    else
      f.unknown();
  }
  return g;
}

// every rule of pm has the reference's structure, in the reference's order; returns how many were compared
inline int expect_reference_rules(const std::string& name, const tg::PatternMatcher& pm,
                                  const std::vector<std::string>& canon) {
  EXPECT_EQ(pm.rules().size(), canon.size()) << "rule count of " << name;
  int checked = 0;
  for (size_t i = 0; i < canon.size() && i < pm.rules().size(); i++) {
    const tg::RuleData& r = *pm.rules()[i];
    EXPECT_EQ(r.pat.canon(), canon[i]) << name << " rule " << i << " (" << r.file << ":" << r.src.line << ")";
    checked++;
  }
  return checked;
}
