// Port of tinygrad/codegen/opt/__init__.py: OptOps, Opt, KernelOptError and check.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "lib/helpers.h"
#include "lib/uop/arg.h"

namespace tg {

// values as the reference's enum.auto() (TC = 1)
enum class OptOps : uint8_t { TC = 1, UPCAST, UNROLL, LOCAL, THREAD, GROUP, GROUPTOP, NOLOCALS, PADTO, SWAP };
const char* optops_name(OptOps o);
std::optional<OptOps> optops_from_name(const std::string& name);

// Opt(op, axis=None, arg=None); arg is an int or a tuple (TC) or None
struct Opt {
  OptOps op;
  std::optional<int64_t> axis;
  Arg arg;
  Opt(OptOps op, std::optional<int64_t> axis = std::nullopt, Arg arg = {}) : op(op), axis(axis), arg(std::move(arg)) {}
  // how a KernelInfo carries it (lib/uop/kernel_info.h): the tuple (op name, axis, arg)
  Arg to_arg() const;
  static Opt from_arg(const Arg& a);
  std::string repr() const;  // Opt(op=OptOps.UPCAST, axis=0, arg=4)
  bool operator==(const Opt& o) const { return op == o.op && axis == o.axis && arg.py_eq(o.arg); }
};
std::string opts_repr(const std::vector<Opt>& opts);  // python repr of the tuple

class KernelOptError : public Error {
 public:
  using Error::Error;
};
inline void check(bool cond, const std::string& msg = "") {
  if (!cond) throw KernelOptError(msg);
}

}  // namespace tg

namespace tg {
// the ContextVars of helpers.py that codegen reads
extern ContextVar NOOPT, NOLOCALS, BEAM, USE_TC, TC_SELECT, TC_OPT, IMAGE, TRANSCENDENTAL, DISABLE_FAST_IDIV, NO_COLOR;
// helpers.colored (ANSI colors, nothing when NO_COLOR)
std::string colored(const std::string& st, const std::string& color);
}  // namespace tg
