// The reference interpreter of linearized UOp programs: a port of tinygrad/runtime/ops_python.py (PythonProgram),
// "the (living) definition of uops". It runs the list do_linearize returns on host buffers with python value
// semantics (every ALU op through exec_alu, results truncated to their dtype), and is the oracle compiled CPU
// results are checked against.
//
//   std::vector<UOp> prg = tg::do_linearize(sink);
//   std::vector<float> out(16), a(16), b(16);
//   tg::interp::Program(prg).run({tg::interp::view(out), tg::interp::view(a), tg::interp::view(b)});
//
// Differences from the reference (which packs values into python memoryviews): memory is bytes, so a load or store
// through a BITCAST pointer reinterprets the bytes like the compiled code does (the reference reads the buffer's
// own element type at a scaled index), and float16 works (python < 3.12 has no 'e' memoryview format).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "lib/dtype.h"
#include "lib/helpers.h"
#include "lib/uop/uop.h"

namespace tg::interp {

// a global buffer: `count` elements of `dtype` at `data` (host memory owned by the caller)
struct BufferView {
  void* data = nullptr;
  size_t count = 0;
  DType dtype;
};
template <typename T>
BufferView view(std::vector<T>& v, DType dtype) {
  return BufferView{v.data(), v.size(), dtype};
}

struct LaunchDims {
  std::array<int64_t, 3> global{1, 1, 1};  // SPECIAL g dims; a core_id kernel runs once per global index (dim 0)
  std::array<int64_t, 3> local{1, 1, 1};   // SPECIAL l dims: the lanes of one warp, run in lockstep
};

class InterpError : public Error {
 public:
  using Error::Error;
};

class Program {
 public:
  explicit Program(std::vector<UOp> uops);
  // bufs: one per global PARAM, in the order they appear in the program (slot order); vals: one per Variable PARAM
  // in slot order, nullopt for core_id (filled with the global index of dim 0, like the CPU launcher's thread id)
  void run(std::span<const BufferView> bufs, std::span<const std::optional<pyint>> vals = {},
           const LaunchDims& dims = {}) const;
  void run(std::initializer_list<BufferView> bufs, std::initializer_list<std::optional<pyint>> vals = {},
           const LaunchDims& dims = {}) const {
    run(std::span<const BufferView>(bufs.begin(), bufs.size()),
        std::span<const std::optional<pyint>>(vals.begin(), vals.size()), dims);
  }
  const std::vector<UOp>& uops() const { return uops_; }

 private:
  std::vector<UOp> uops_;
  std::vector<std::vector<int>> srcs_;  // positions of the non-void srcs
  std::vector<int> loop_end_;           // RANGE position -> its END position
};

// run a PROGRAM (to_program_from_full_sink's result): its LINEAR, with the launch dims and the variable values its
// ProgramInfo gives for var_vals (buffers in ProgramInfo.globals order)
void run_program(const UOp& prg, std::span<const BufferView> bufs,
                 const std::unordered_map<std::string, pyint>& var_vals = {});

// decode / encode one scalar of a dtype from / to little-endian bytes (python values: int, float or bool)
PyConst load_scalar(const uint8_t* p, DType dt);
void store_scalar(uint8_t* p, DType dt, const PyConst& v);

// registers the PYTHON and INTERP devices (host buffers; programs run in this interpreter) with lib/device.h's registry;
// idempotent. DEV=INTERP makes INTERP the default device.
void register_device();

}  // namespace tg::interp
