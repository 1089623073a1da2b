// Port of tinygrad/engine/realize.py: lowering and compiling the kernels of a LINEAR (compile_linear), and running it
// (run_linear): each CALL is executed by pm_exec's rules (exec_kernel for PROGRAMs, exec_copy for COPYs), with the
// reference's statistics (GlobalCounters) and DEBUG output:
//   DEBUG>=2  one line per kernel: "*** CPU        3 E_4_4   arg  2 mem   0.00 GB tm      5.12us/     0.02ms (...)"
//   DEBUG>=3  the opts applied to each compiled kernel, DEBUG>=4 its source, DEBUG>=5 its AST (before codegen),
//   DEBUG>=6  its linearized UOps (after lowering)
// NOOPT and SPEC apply as in codegen. Compiled programs are cached by (AST, renderer, NOOPT); runtimes by the device.
//
//   tg::LinearWithVars lv = tg::create_linear_with_vars(big_sink);
//   tg::run_linear(lv.linear, lv.var_vals);
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/device.h"
#include "lib/renderer/renderer.h"
#include "lib/uop/uop.h"

namespace tg {

using VarVals = std::map<std::string, pyint>;

extern ContextVar PARALLEL;

// the call's buffer args (its srcs after the body, without bound Variables)
std::vector<UOp> get_call_arg_uops(const UOp& call);
// (outputs, inputs) positions among the call args
std::pair<std::vector<int64_t>, std::vector<int64_t>> get_call_outs_ins(const UOp& call);
// "E_4_4" for a kernel, "copy       16 B,     CPU <- PYTHON " (yellow) for a copy
std::string get_call_name(const UOp& call, const std::vector<std::shared_ptr<Buffer>>& bufs,
                          const VarVals& var_vals = {});
// the estimates of a CALL (a compiled kernel's from its linear program, a copy's from its size)
Estimates estimate_uop(const UOp& call);

struct ExecContext {
  VarVals var_vals;
  std::vector<UOp> input_uops;
  bool update_stats = true, jit = false, wait = false, cache = true;
  // where the last kernel ran on its device's clock (host-clock ns), when the device times kernels itself (CL)
  std::optional<std::pair<int64_t, int64_t>> device_range;
};

// PARAM args resolved against the inputs (resolve_params)
std::vector<UOp> resolve_params(const UOp& call, const std::vector<UOp>& inputs);

// lower + compile every kernel CALL (SINK body) of the linear into a PROGRAM (cached), "precompile kernels". The
// kernels not cached yet are generated and compiled on PARALLEL worker threads (default: NUM_CPU_THREADS, 0 while a
// trace is recorded, as the reference; BEAM kernels and DEBUG>=3 run one after another)
UOp lower_and_compile(const UOp& linear);
// compile_linear(linear, beam): beam (default: the BEAM ContextVar) >= 1 makes every kernel's codegen run the BEAM
// search (lib/codegen/opt/search.h) instead of hand_coded_optimizations
UOp compile_linear(const UOp& linear, std::optional<int64_t> beam = std::nullopt);
// launch dims (ProgramInfo::launch_dims) as a Program call's LaunchArgs (missing dims are 1)
LaunchArgs launch_args(const std::vector<pyint>& global_size, const std::optional<std::vector<pyint>>& local_size,
                       bool wait);
// the loaded runtime of a compiled PROGRAM on a device (cached by source and name)
std::shared_ptr<Program> get_runtime(const std::string& device, const UOp& prg);
// execute one CALL (pm_exec); returns the kernel times when waited for
std::vector<std::optional<double>> exec_call(ExecContext& ctx, const UOp& call);
// compile (unless jit) and run every CALL of the linear in order
void run_linear(const UOp& linear, const VarVals& var_vals = {}, const std::vector<UOp>& input_uops = {},
                bool update_stats = true, bool jit = false, bool wait = false);

// engine/realize.py's pm_flatten_linear is defined by lib/schedule (schedule.h)
size_t to_program_cache_size();

}  // namespace tg
