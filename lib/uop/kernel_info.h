// KernelInfo (tinygrad/uop/ops.py): the arg of a kernel's SINK. A frozen dataclass; Opts and Estimates are kept as
// plain args here (an Opt as the tuple (op name, axis, arg), Estimates as (ops, lds, mem)) until codegen/opt ports
// them.
#pragma once
#include <optional>
#include <string>

#include "lib/uop/arg.h"

namespace tg {

struct KernelInfo final : ArgObj {
  std::string name = "test";
  Arg axis_types = Arg::tuple({});  // tuple of AxisType
  bool dont_use_locals = false;
  Arg applied_opts = Arg::tuple({});
  Arg opts_to_apply;  // None or a tuple
  Arg estimates;      // None or (ops, lds, mem)
  int64_t beam = 0;

  KernelInfo() = default;
  explicit KernelInfo(std::string n) : name(std::move(n)) {}
  KernelInfo(const KernelInfo& o)
      : ArgObj(),
        name(o.name),
        axis_types(o.axis_types),
        dont_use_locals(o.dont_use_locals),
        applied_opts(o.applied_opts),
        opts_to_apply(o.opts_to_apply),
        estimates(o.estimates),
        beam(o.beam) {}
  Arg to_arg() const { return Arg(static_cast<const ArgObj*>(new KernelInfo(*this))); }
  // helpers.to_function_name: ANSI colors stripped, every char outside [A-Za-z0-9_] as two uppercase hex digits
  std::string function_name() const;

  size_t hash() const override;
  bool equals(const ArgObj& o) const override;
  int py_cmp(const ArgObj& o) const override;
  std::string repr() const override;
  const char* type_name() const override { return "KernelInfo"; }
};

// BufferizeOpts (schedule/indexing.py): the arg of STAGE. device is None, a device name, a tuple of names, or (on
// AddrSpace.LOCAL) an int id
struct BufferizeOpts final : ArgObj {
  Arg device;
  AddrSpace addrspace = AddrSpace::GLOBAL;
  bool removable = true;

  BufferizeOpts() = default;
  BufferizeOpts(Arg d, AddrSpace a, bool r = true) : device(std::move(d)), addrspace(a), removable(r) {}
  BufferizeOpts(const BufferizeOpts& o) : ArgObj(), device(o.device), addrspace(o.addrspace), removable(o.removable) {}
  Arg to_arg() const { return Arg(static_cast<const ArgObj*>(new BufferizeOpts(*this))); }
  size_t hash() const override;
  bool equals(const ArgObj& o) const override;
  std::string repr() const override;
  const char* type_name() const override { return "BufferizeOpts"; }
};

// CallInfo (uop/ops.py): the arg of CALL/FUNCTION. grad_fxn (a python callable) and aux are not carried.
struct CallInfo final : ArgObj {
  std::optional<std::string> name;
  bool precompile = false, precompile_backward = false;

  CallInfo() = default;
  CallInfo(std::optional<std::string> n, bool p = false, bool pb = false)
      : name(std::move(n)), precompile(p), precompile_backward(pb) {}
  CallInfo(const CallInfo& o) : ArgObj(), name(o.name), precompile(o.precompile), precompile_backward(o.precompile_backward) {}
  Arg to_arg() const { return Arg(static_cast<const ArgObj*>(new CallInfo(*this))); }
  size_t hash() const override;
  bool equals(const ArgObj& o) const override;
  std::string repr() const override;  // CallInfo(None, 'name', False, False)
  const char* type_name() const override { return "CallInfo"; }
};

std::string ansistrip(const std::string& s);
std::string to_function_name(const std::string& s);

}  // namespace tg
