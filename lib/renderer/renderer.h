// Port of tinygrad/renderer/__init__.py: the Renderer base (capabilities, code_for_op, extra_matcher) and Target.
// A renderer turns a linear program (the list do_linearize returns) into source text; it is plain C++ producing a
// string, the compiler that consumes it lives in a backend.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/helpers.h"
#include "lib/uop/rewrite.h"

namespace tg {

// helpers.Target: [interface[:indices]+]device[:renderer[:arch]]
struct Target {
  std::string device, renderer, arch, interface, indices;
  std::string repr() const;
};

// code_for_op: Ops -> how an ALU op is spelled, from the rendered operands and the result dtype. Keeps insertion
// order like the reference's dict (its keys are the ops a renderer supports natively).
using CodeFn = std::function<std::string(const std::vector<std::string>& operands, DType dtype)>;
class CodeForOp {
 public:
  CodeForOp() = default;
  CodeForOp(std::initializer_list<std::pair<Ops, CodeFn>> items);
  void set(Ops op, CodeFn fn);  // replaces in place, or appends
  void erase(Ops op);
  bool has(Ops op) const;
  const CodeFn& at(Ops op) const;
  std::vector<Ops> keys() const;

 private:
  std::vector<std::pair<Ops, CodeFn>> items_;
};

// helpers.NUM_CPU_THREADS: cgroup v2 quota, else the affinity mask (lives here until helpers grows it)
int64_t cpu_count();
extern ContextVar NUM_CPU_THREADS;

// Estimates (renderer/__init__.py): FLOPs, bytes loaded/stored, and distinct bytes of global memory touched, as python
// int|UOp (symbolic when a loop bound is a Variable)
struct Estimates {
  sint ops = 0, lds = 0, mem = 0;
  Estimates operator+(const Estimates& o) const;
  Estimates simplify() const;
  // over a linear program; ignore_indexing leaves the index arithmetic of INDEX/SHRINK out of the FLOPs
  static Estimates from_uops(const std::vector<UOp>& uops, bool ignore_indexing = false);
};

using StringMatcher = BasicPatternMatcher<std::optional<std::string>>;

class Renderer {
 public:
  explicit Renderer(Target target) : target(std::move(target)) {}
  virtual ~Renderer() = default;
  Target target;
  std::string suffix;
  bool supports_float4 = true;
  bool has_local = true;
  bool has_threads = false;
  bool has_shared = true;
  // in (x,y,z) order to match the max_sizes argument in get_grouped_dims; nullopt is None
  std::optional<std::vector<pyint>> global_max = std::vector<pyint>{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  std::optional<std::vector<pyint>> local_max = std::vector<pyint>{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  std::optional<std::vector<pyint>> global_prod_max;
  int64_t shared_max = 32768;
  const PatternMatcher* extra_matcher = nullptr;  // None
  CodeForOp code_for_op;

  virtual std::string render(const std::vector<UOp>& uops) const;  // raises "needs a renderer"
  virtual std::vector<DType> supported_dtypes() const;
};

}  // namespace tg
