// hello_tensor: the C++ Tensor API in a few lines. Builds lazy graphs, realizes them on the default device
// (DEV=CPU, or DEV=INTERP for the interpreter) and reads the values back.
//   ./hello_tensor            DEBUG=2 ./hello_tensor   (one line per kernel)   VIZ=-1 ./hello_tensor (save a trace)
#include <cstdio>

#include "backends/cl/cl.h"
#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/tensor.h"
#include "profiler/profile.h"

using tg::Tensor;

static void print(const char* name, const Tensor& t) {
  std::printf("%-10s %s:", name, t.repr().c_str());
  for (float v : t.to_vector<float>()) std::printf(" %g", v);
  std::printf("\n");
}

int main() {
  try {
    tg::cpu::register_device();     // backends register their devices
    tg::cl::register_device();      // CL (DEV=CL): opened only when used
    tg::interp::register_device();  // PYTHON (host data) and INTERP

    // with PROFILE=1 or VIZ: a span on the trace's USER lane, and markers across its timeline
    tg::profile_marker("first graphs");
    tg::profile_range span("first graphs");
    Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}).reshape({2, 3});
    Tensor b = Tensor({{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}});  // nested lists: float32
    Tensor c = (a.matmul(b) + 1).relu();                      // nothing runs yet: c is a graph
    print("a@b+1", c);                                        // realize: schedule, codegen, compile, run
    print("softmax", c.softmax());
    print("sum(0)", a.sum(0));
    std::printf("mean       %g\n", a.mean().item<float>());

    tg::profile_marker("random", "orange");
    Tensor::manual_seed(42);
    print("rand", Tensor::rand({5}));  // threefry: the same bits as the reference's Tensor.rand

    Tensor x = Tensor::zeros({3});
    x.assign(Tensor::from_vector<float>({7, 8, 9}));  // STORE into x's buffer
    print("assigned", x.realize());

    try {
      (a + Tensor::ones({4})).realize();  // shapes (2, 3) and (4,) don't broadcast
    } catch (const tg::Error& e) {
      std::printf("error      %s\n", e.what());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hello_tensor: %s\n", e.what());
    return 1;
  }
}
