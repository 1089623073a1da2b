// Port of tinygrad/function.py on UOps: the FUNCTION call of a value-producing body (UOp.call), gettuple, the
// implicit-input capture of _function.__call__ (pm_ctx, "get_implicit_inputs") and invalid_outputs /
// renumber_invalid_outputs. The Tensor wrapper (@function on Tensors) builds on function_call.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lib/uop/uop.h"

namespace tg {

// UOp.maketuple / UOp.gettuple (gettuple requires a FUNCTION or a TUPLE source)
UOp maketuple(std::span<const UOp> srcs);
UOp gettuple(const UOp& f, int64_t idx);

// UOp.param_like (the uop_param_like of lib/tensor.h)
UOp param_like(const UOp& u, int64_t slot);

// UOp.call for a value-producing body: a FUNCTION whose body is a TUPLE (a non-TUPLE body is wrapped in one).
// No grad_fxn: custom gradient functions are not supported in C++ yet.
UOp function_uop(const UOp& body, std::span<const UOp> srcs, std::optional<std::string> name = std::nullopt,
                 bool precompile = false, bool precompile_backward = false);

// function.py invalid_outputs: the fresh (unrealized) buffers of STOREs of CONST(Invalid) in uret
UOpSet invalid_outputs(const UOp& uret);
// function.py renumber_invalid_outputs: those buffers get slots 0.. in toposort order (enter_calls=False)
UOp renumber_invalid_outputs(const UOp& uret);

struct FunctionOpts {
  std::optional<std::string> name;
  bool precompile = false, precompile_backward = false, allow_implicit = false;
};

// the UOp part of _function.__call__: `inputs` are the uops of the call's Tensor arguments (those with a device are
// the explicit inputs, deduplicated in order), `rets` what the function returned (one uop, or several for a tuple).
// Inputs are replaced by PARAMs, the BUFFERs left become implicit inputs ("get_implicit_inputs"), and the FUNCTION is
// called with them. Returns the outputs: gettuple(i) of the FUNCTION for every returned uop.
// Throws tg::Error when there are implicit BUFFERs and allow_implicit is false.
std::vector<UOp> call_function(std::span<const UOp> inputs, std::span<const UOp> rets, const FunctionOpts& opts = {});

}  // namespace tg
