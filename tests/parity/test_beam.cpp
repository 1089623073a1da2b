// BEAM search (codegen/opt/search.py): the action table and get_kernel_actions against the reference on every kernel
// AST of codegen_goldens.txt (tests/data/beam_goldens.txt, gen_beam_goldens.py), two levels deep; then
// beam_search itself on real kernels: the opts it picks give the same values as the hand-coded kernel, are written to
// the disk cache and reused from it, and BEAM=1 through Tensor realize / TinyJit works end to end.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "lib/codegen/opt/search.h"
#include "lib/engine/jit.h"
#include "lib/renderer/llvmir.h"
#include "lib/tensor.h"
#include "tests/support/codegen_goldens.h"
#include "tests/support/devices.h"
#include "tests/support/golden_file.h"

using namespace tg;

namespace {

struct BeamGolden {
  int id;
  std::map<std::string, std::vector<int64_t>> actions;  // path -> valid next actions
  std::map<std::string, std::string> shapes;            // path -> "full_shape axis_types"
};

struct BeamGoldens {
  size_t n_actions = 0;
  std::map<int, BeamGolden> kernels;
};

const BeamGoldens& beam_goldens() {
  static const BeamGoldens g = [] {
    BeamGoldens g;
    test::GoldenFile f(TG_TEST_DATA "/beam_goldens.txt");
    BeamGolden* cur = nullptr;
    while (f.next()) {
      std::istringstream ss(f.line());
      std::string key;
      ss >> key;
      if (key == "len") {
        ss >> g.n_actions;
      } else if (key == "kernel") {
        int id;
        ss >> id;
        cur = &g.kernels[id];
        cur->id = id;
      } else if (key == "actions") {
        std::string path;
        size_t n;
        ss >> path >> n;
        std::vector<int64_t> v(n);
        for (auto& x : v) ss >> x;
        cur->actions[path] = v;
      } else if (key == "shape") {
        std::string path, rest;
        ss >> path;
        std::getline(ss, rest);
        cur->shapes[path] = rest.substr(rest.find_first_not_of(' '));
      }
    }
    return g;
  }();
  return g;
}

const Renderer& llvm_renderer() {
  static CPULLVMRenderer r = [] {
    CPULLVMRenderer r(Target{"CPU", "LLVM", "x86_64,native", "", ""});
    r.global_max = std::vector<pyint>{8, 0, 0};
    return r;
  }();
  return r;
}

std::string shape_of(const Scheduler& s) {
  std::string fs, at;
  auto shape = s.full_shape();
  auto types = s.axis_types();
  for (size_t i = 0; i < shape.size(); i++) {
    fs += (i ? "," : "") + (shape[i].is_int() ? std::to_string((long long)shape[i].i()) : shape[i].u().render());
    at += (i ? "," : "") + std::string(axis_type_name(types[i]));
  }
  return fs + " " + at;
}

std::vector<int64_t> keys(const std::map<int64_t, Scheduler>& m) {
  std::vector<int64_t> r;
  for (auto& [k, _] : m) r.push_back(k);
  return r;
}

}  // namespace

TEST(Beam, ActionTableHasTheReferenceSize) { EXPECT_EQ(beam_actions().size(), beam_goldens().n_actions); }

TEST(Beam, KernelActionsEqualTheReferenceOnEveryGoldenKernel) {
  const auto& goldens = beam_goldens();
  auto kernels = load_codegen_goldens(TG_TEST_DATA "/codegen_goldens.txt");
  size_t checked = 0, paths = 0;
  for (const CgKernel& k : kernels) {
    auto it = goldens.kernels.find(k.id);
    if (it == goldens.kernels.end()) continue;
    const BeamGolden& g = it->second;
    Scheduler s(k.ast, llvm_renderer());
    s.convert_loop_to_global();
    EXPECT_EQ(shape_of(s), g.shapes.at("-")) << "kernel " << k.id << " " << k.program;
    auto acts = get_kernel_actions(s, false);
    EXPECT_EQ(keys(acts), g.actions.at("-")) << "kernel " << k.id << " " << k.program;
    for (auto& [path, want] : g.actions) {
      if (path == "-") continue;
      auto a = acts.find(std::stoll(path));
      if (a == acts.end()) {
        ADD_FAILURE() << "kernel " << k.id << ": action " << path << " missing";
        continue;
      }
      EXPECT_EQ(shape_of(a->second), g.shapes.at(path)) << "kernel " << k.id << " after action " << path;
      EXPECT_EQ(keys(get_kernel_actions(a->second, false)), want) << "kernel " << k.id << " after action " << path;
      paths++;
    }
    checked++;
  }
  EXPECT_GE(checked, 80u);
  std::printf("get_kernel_actions: %zu kernels, %zu second-level paths equal the reference\n", checked, paths);
}

// On DEV=CPU (the CLANG renderer) BEAM can also take the register tiles' upcasts (8 and 16 lanes, CPU_TILE=1),
// numbered after the reference's table; the LLVM renderer, and CPU_TILE=0, keep the reference's actions only
TEST(Beam, CpuTileUpcastsJoinTheActionsOnDevCpu) {
  auto kernels = load_codegen_goldens(TG_TEST_DATA "/codegen_goldens.txt");
  CPULLVMRenderer clang(Target{"CPU", "CLANG", "x86_64,native", "", ""}, true);
  // the upcast amounts of the actions numbered after the reference's table, over every golden kernel
  auto extra_upcasts = [&](const Renderer& ren) {
    std::set<pyint> amounts;
    for (const CgKernel& k : kernels) {
      if (!k.ast.tag().is_none()) continue;
      Scheduler s(k.ast, ren);
      s.convert_loop_to_global();
      for (auto& [i, s2] : get_kernel_actions(s, false))
        if (i > (int64_t)beam_actions().size()) {
          const Opt& o = s2.applied_opts.back();
          EXPECT_EQ(o.op, OptOps::UPCAST) << k.program << " action " << i;
          amounts.insert(o.arg.as_int());
        }
    }
    return amounts;
  };
  EXPECT_EQ(extra_upcasts(clang), (std::set<pyint>{8, 16}));
  EXPECT_TRUE(extra_upcasts(llvm_renderer()).empty());
  Context off({{"CPU_TILE", 0}});
  EXPECT_TRUE(extra_upcasts(clang).empty());
}

namespace {

// a scratch cache dir for one test
struct TempCache {
  std::filesystem::path dir;
  std::string old;
  bool had_old;
  TempCache() {
    dir = std::filesystem::temp_directory_path() / ("tg-beam-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    const char* o = std::getenv("TG_CACHE_DIR");
    had_old = o != nullptr;
    if (o) old = o;
    setenv("TG_CACHE_DIR", dir.c_str(), 1);
  }
  ~TempCache() {
    if (had_old)
      setenv("TG_CACHE_DIR", old.c_str(), 1);
    else
      unsetenv("TG_CACHE_DIR");
    std::filesystem::remove_all(dir);
  }
  size_t entries() const {
    size_t n = 0;
    if (std::filesystem::exists(dir / "beam_search"))
      for (auto& e : std::filesystem::directory_iterator(dir / "beam_search")) n += e.is_regular_file();
    return n;
  }
};

std::vector<float> iota(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = float((i * 37) % 101) * scale - 1.0f;
  return v;
}

}  // namespace

TEST(Beam, SearchPicksOptsThatComputeTheSameValuesAndCachesThem) {
  TempCache cache;
  Tensor a = Tensor::from_vector<float>(iota(64 * 48, 0.02f)).reshape({64, 48}).realize();
  Tensor b = Tensor::from_vector<float>(iota(48 * 40, 0.03f)).reshape({48, 40}).realize();
  std::vector<float> want = a.matmul(b).relu().to_vector<float>();
  std::vector<float> got;
  {
    Context c({{"BEAM", 2}});
    got = a.matmul(b).relu().to_vector<float>();
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  size_t n = cache.entries();
  EXPECT_GE(n, 1u) << "the chosen opts are written to the disk cache";

  // the cached opts are applied without searching again: same Scheduler result from the cache and the search
  auto kernels = load_codegen_goldens(TG_TEST_DATA "/codegen_goldens.txt");
  const CgKernel* k = nullptr;
  for (const CgKernel& x : kernels)
    if (x.program.find("matmul") != std::string::npos && x.ast.tag().is_none()) {
      k = &x;
      break;
    }
  ASSERT_NE(k, nullptr);
  Scheduler s(k->ast, get_device("CPU").renderer());
  s.convert_loop_to_global();
  auto [bufs, vv] = args_from_ast(k->ast, "CPU");
  testing::internal::CaptureStderr();
  Scheduler first = beam_search(s, bufs, vv, 2);
  std::string progress = testing::internal::GetCapturedStderr();
  EXPECT_EQ(cache.entries(), n + 1);
  // below DEBUG=2 a search says on stderr what it searched, the best time and how long it took
  std::string shape;
  for (const UOp& r : s.rngs()) shape += (shape.empty() ? "" : "x") + r.src(0).render();
  EXPECT_EQ(progress.rfind("BEAM 2: searching the " + shape + " kernel ... best ", 0), 0u) << progress;
  EXPECT_NE(progress.find(" candidates timed\n"), std::string::npos) << progress;
  testing::internal::CaptureStderr();
  Scheduler again = beam_search(s, bufs, vv, 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "a cached search prints nothing";
  EXPECT_EQ(opts_repr(again.applied_opts), opts_repr(first.applied_opts));
  EXPECT_FALSE(first.applied_opts.empty()) << "a matmul always gains from some opt";
  // a torn cache file is ignored, not an error
  for (auto& e : std::filesystem::directory_iterator(cache.dir / "beam_search")) {
    std::ofstream(e.path(), std::ios::trunc) << "garbage";
  }
  Scheduler searched = beam_search(s, bufs, vv, 2);
  EXPECT_FALSE(searched.applied_opts.empty());
}

TEST(Beam, JitBeamCompilesTheCapturedKernelsWithTheSearch) {
  TempCache cache;
  Tensor w = Tensor::from_vector<float>(iota(32 * 16, 0.05f)).reshape({32, 16}).realize();
  auto f = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].matmul(w).sum(1)}; };
  std::vector<float> want = f({Tensor::from_vector<float>(iota(8 * 32, 0.01f)).reshape({8, 32})})[0].to_vector<float>();
  setenv("JITBEAM", "1", 1);
  struct Unset {
    ~Unset() { unsetenv("JITBEAM"); }
  } unset;
  TinyJit jit(f);
  for (int i = 0; i < 3; i++) {
    auto out = jit({Tensor::from_vector<float>(iota(8 * 32, 0.01f)).reshape({8, 32}).realize()});
    auto got = out[0].to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < want.size(); j++) EXPECT_NEAR(got[j], want[j], 1e-4) << "call " << i << " " << j;
  }
  EXPECT_GE(cache.entries(), 1u) << "the captured kernels were searched";
}
