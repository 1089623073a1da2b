// A Recorder for the golden tests: the steps of graph_rewrite calls (name, depth, flags "b"/"w"/"bw"/"-") with the
// output of each finished step, and the name of the last context (as begun or renamed, e.g. to the kernel's name).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/recorder.h"
#include "lib/uop/uop.h"

namespace tg {

class StepRecorder : public Recorder {
 public:
  struct Step {
    std::string name;
    int depth;
    std::string flags;
    UOp out;
  };
  std::vector<Step> steps;
  std::string context_name;

  uint64_t context_begin(const std::string& name, int64_t) override {
    context_name = name;
    return next_++;
  }
  void context_rename(uint64_t, const std::string& name) override { context_name = name; }
  void context_end(uint64_t, int64_t) override {}
  uint64_t step_begin(const StepInfo& s, const UOp&) override {
    std::string f = std::string(s.bottom_up ? "b" : "") + (s.walk ? "w" : "");
    steps.push_back({s.name, s.depth, f.empty() ? "-" : f, UOp()});
    open_[next_] = steps.size() - 1;
    return next_++;
  }
  void step_end(uint64_t id, const UOp* out, int64_t, std::vector<RuleStat>&&, const std::string&) override {
    if (out) steps[open_[id]].out = *out;
  }
  void match(uint64_t, uint32_t, const UOp&, const UOp&, uint32_t, int64_t) override {}
  void rule_error(uint64_t, uint32_t, const UOp&, const UOp&, uint32_t, const std::string&) override {}
  void note_uop(const UOp&) override {}
  void finish() override {}
  std::string path() const override { return "(test recorder)"; }
  // forget the steps recorded so far (the recorder is reused across cases)
  void clear() {
    steps.clear();
    open_.clear();
  }

 private:
  uint64_t next_ = 1;
  std::map<uint64_t, size_t> open_;
};

}  // namespace tg
