// beautiful_mnist: the reference's examples/beautiful_mnist.py in C++ — a small convnet trained on Fashion-MNIST
// (Debian's dataset-fashion-mnist; --data DIR or FASHION_MNIST_PATH for other MNIST-format files) with Adam and a
// TinyJit train step, batch 512. Prints a progress line per step (loss, step time) and the test accuracy at the end.
//   ./build/examples/beautiful_mnist --steps 70            VIZ=-1 ./build/examples/beautiful_mnist --steps 5
//   ./build/examples/beautiful_mnist --steps 10 --seed 1337 --bs 512 --eval
// With the same seed as the reference its initial weights are bit-identical and its losses follow the reference's.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cl/cl.h"
#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/engine/counters.h"
#include "lib/engine/jit.h"
#include "lib/helpers.h"
#include "lib/nn/datasets.h"
#include "lib/nn/nn.h"
#include "lib/nn/optim.h"
#include "profiler/profile.h"

using namespace tg;

struct Model {
  nn::Conv2d c1{1, 32, 5}, c2{32, 32, 5};
  nn::BatchNorm b1{32};
  nn::Conv2d c3{32, 64, 3}, c4{64, 64, 3};
  nn::BatchNorm b2{64};
  nn::Linear l{576, 10};

  Tensor operator()(const Tensor& x) {
    Tensor h = b1(c2(c1(x).relu()).relu()).max_pool2d();
    h = b2(c4(c3(h).relu()).relu()).max_pool2d();
    return l(h.flatten(1));
  }
  StateDict state_dict() const {
    StateDict sd;
    append_state(sd, "c1.", c1.state_dict()), append_state(sd, "c2.", c2.state_dict());
    append_state(sd, "b1.", b1.state_dict()), append_state(sd, "c3.", c3.state_dict());
    append_state(sd, "c4.", c4.state_dict()), append_state(sd, "b2.", b2.state_dict());
    append_state(sd, "l.", l.state_dict());
    return sd;
  }
};

static void usage() {
  std::fprintf(stderr,
               "usage: beautiful_mnist [--steps N] [--bs N] [--seed N] [--eval] [--data DIR] [--save FILE]\n"
               "  --steps N   training steps (default 70)          --bs N     batch size (default 512)\n"
               "  --seed N    Tensor::manual_seed (default 1337)    --eval     test accuracy at the end\n"
               "  --data DIR  MNIST-format IDX files (default: Debian's Fashion-MNIST)\n"
               "  --save FILE write the trained weights as safetensors\n");
}

int main(int argc, char** argv) {
  int64_t steps = 70, bs = 512, seed = 1337;
  bool eval = false;
  std::string data, save;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto num = [&](const char* what) -> int64_t {
      if (i + 1 >= argc) throw Error(std::string(what) + " needs a value");
      char* e = nullptr;
      long long v = std::strtoll(argv[++i], &e, 10);
      if (!e || *e || v < 0) throw Error(std::string(what) + ": expected a non-negative number, got '" + argv[i] + "'");
      return v;
    };
    try {
      if (a == "--steps") steps = num("--steps");
      else if (a == "--bs") bs = num("--bs");
      else if (a == "--seed") seed = num("--seed");
      else if (a == "--eval") eval = true;
      else if (a == "--data" && i + 1 < argc) data = argv[++i];
      else if (a == "--save" && i + 1 < argc) save = argv[++i];
      else if (a == "-h" || a == "--help") return usage(), 0;
      else throw Error("unknown argument '" + a + "'");
    } catch (const Error& e) {
      std::fprintf(stderr, "beautiful_mnist: %s\n", e.what());
      usage();
      return 2;
    }
  }
  try {
    cpu::register_device();
    cl::register_device();
    interp::register_device();
    auto t0 = std::chrono::steady_clock::now();
    MnistTensors ds = mnist(true, data);
    Tensor::realize_all({ds.X_train, ds.Y_train});
    std::printf("loaded %s training images in %.2f s\n", ds.X_train.shape()[0].str().c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

    Tensor::manual_seed(seed);
    Model model;
    auto opt = nn::Adam(get_parameters(model.state_dict()));  // BatchNorm statistics become buffers (is_param false)
    TinyJit train_step([&](const std::vector<Tensor>& in) {
      Context training({{"TRAINING", 1}});
      Tensor samples = Tensor::randint({sint((pyint)bs)}, 0, in[0].shape()[0].i());
      opt->zero_grad();
      Tensor loss = model(in[0].getitem({Index(samples.uop())}))
                        .sparse_categorical_crossentropy(in[1].getitem({Index(samples.uop())}))
                        .backward();
      std::vector<Tensor> out{loss};
      for (const Tensor& t : opt->schedule_step()) out.push_back(t);
      return out;
    });
    for (int64_t i = 0; i < steps; i++) {
      GlobalCounters::reset();
      CompileCounters::reset();
      // with PROFILE=1 or VIZ: a marker per step (tinyviz-cli profile --interval "train @ 2" "train @ 3") and the
      // step as a span on the USER lane
      profile_marker("train @ " + std::to_string(i));
      profile_range span("train step " + std::to_string(i));
      auto st = std::chrono::steady_clock::now();
      Tensor loss = train_step({ds.X_train, ds.Y_train})[0];
      float l = loss.item<float>();
      double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count();
      std::printf("step %3lld  loss %9.6f  %7.3f s  %4lld kernels  %.2f GFLOPS\n", (long long)i, l, sec,
                  (long long)GlobalCounters::kernel_count.load(), (double)GlobalCounters::global_ops.load() / sec / 1e9);
      // the steps that built kernels: where the compile stack's time went
      if (CompileCounters::programs > 0) {
        std::printf("          CPU time: schedule %.3f s, codegen %.3f s, compile %.3f s for %lld new programs\n",
                    CompileCounters::schedule_s.load(), CompileCounters::codegen_s.load(),
                    CompileCounters::compile_s.load(), (long long)CompileCounters::programs.load());
        std::printf("          wall time on %lld thread%s: schedule + codegen %.3f s, compile %.3f s\n",
                    (long long)CompileCounters::threads.load(), CompileCounters::threads.load() == 1 ? "" : "s",
                    CompileCounters::schedule_s.load() + CompileCounters::codegen_wall_s.load(),
                    CompileCounters::compile_wall_s.load());
      }
      std::fflush(stdout);
    }
    if (eval) {
      profile_range span("eval");
      Tensor acc = (model(ds.X_test).argmax(1) == ds.Y_test).mean() * 100;
      std::printf("test accuracy %.2f%%\n", acc.item<float>());
    }
    // the most memory each device held at once (a recorded trace's memory lane peaks at the same bytes)
    for (const auto& [dev, m] : mem_used_per_device())
      std::printf("peak memory on %s: %lld bytes (%s)\n", dev.c_str(), (long long)m.peak, size_to_str(m.peak).c_str());
    if (!save.empty()) {
      safe_save(model.state_dict(), save);
      std::printf("saved the weights to %s\n", save.c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "beautiful_mnist: %s\n", e.what());
    return 1;
  }
}
