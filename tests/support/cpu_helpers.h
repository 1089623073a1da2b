// Helpers of the CPU backend tests: run a compiled program on golden buffers (allocated by the CPU device, so they
// have the alignment the IR promises), and compare buffers the way the interpreter tests do.
#pragma once
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "tests/support/compare_buffer.h"
#include "tests/support/kernel_goldens.h"

namespace tg::cpu_test {

using tg::test::join_lines;

inline std::vector<std::optional<pyint>> parse_vals(const std::vector<std::string>& vals) {
  std::vector<std::optional<pyint>> r;
  for (const auto& v : vals) r.push_back(v == "-" ? std::nullopt : std::optional<pyint>(std::stoll(v)));
  return r;
}

inline size_t nbytes(const GoldenBuffer& g) { return g.count * (size_t)dtypes::by_name(g.dtype).itemsize(); }

// the buffers after running prg on the golden inputs (device memory from the CPU allocator)
inline std::vector<std::vector<uint8_t>> run_on_device(Program& prg, const std::vector<GoldenBuffer>& bufs,
                                                       const std::vector<std::string>& vals,
                                                       std::array<int64_t, 3> global) {
  Allocator& alloc = cpu::CPUDevice::get().allocator();
  std::vector<void*> ptrs;
  for (const auto& g : bufs) {
    void* p = alloc.alloc(std::max<size_t>(nbytes(g), 1));
    if (!g.before.empty()) alloc.copyin(p, g.before);
    ptrs.push_back(p);
  }
  std::vector<std::vector<uint8_t>> out;
  try {
    auto v = parse_vals(vals);
    LaunchArgs la;
    la.global_size = global;
    prg(ptrs, v, la);
    for (size_t i = 0; i < bufs.size(); i++) {
      out.emplace_back(nbytes(bufs[i]));
      alloc.copyout(out.back(), ptrs[i]);
    }
  } catch (...) {
    for (size_t i = 0; i < bufs.size(); i++) alloc.free(ptrs[i], std::max<size_t>(nbytes(bufs[i]), 1));
    throw;
  }
  for (size_t i = 0; i < bufs.size(); i++) alloc.free(ptrs[i], std::max<size_t>(nbytes(bufs[i]), 1));
  return out;
}

// the interpreter on the same linear program and inputs
inline std::vector<std::vector<uint8_t>> run_interp(const std::vector<UOp>& program,
                                                    const std::vector<GoldenBuffer>& bufs,
                                                    const std::vector<std::string>& vals,
                                                    std::array<int64_t, 3> global) {
  std::vector<std::vector<uint8_t>> mem;
  std::vector<interp::BufferView> views;
  for (const auto& g : bufs) {
    mem.push_back(g.before);
    mem.back().resize(nbytes(g));
  }
  for (size_t i = 0; i < mem.size(); i++)
    views.push_back({mem[i].data(), bufs[i].count, dtypes::by_name(bufs[i].dtype)});
  interp::LaunchDims dims;
  dims.global = global;
  auto v = parse_vals(vals);
  interp::Program(program).run(views, v, dims);
  return mem;
}

}  // namespace tg::cpu_test
