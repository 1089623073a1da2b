// The CPU backend (backends/cpu): the device registry of lib/device.h, the host allocator, the LLVM compiler and its
// cache, the ORC loader, the launcher (argument checks, core_id, the thread pool), clear errors for bad input, and
// the reference's test_uops.py programs compiled through our CPULLVMRenderer.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/codegen/codegen.h"
#include "lib/codegen/late/program.h"
#include "lib/renderer/llvmir.h"
#include "lib/tensor.h"
#include "lib/uop/serialize.h"
#include "tests/support/cpu_bench_kernels.h"
#include "tests/support/cpu_helpers.h"
#include "tests/support/uops_goldens.h"

using namespace tg;
using namespace tg::cpu_test;

namespace {

using tg::test::dec_linear;

cpu::CPUDevice& dev() { return cpu::CPUDevice::get(); }

// c[i] = a[i] + b[i] for i < n (a Variable), written like CPULLVMRenderer writes IR
const char* kAddIR =
    R"(define void @vadd(float* noalias align 32 %data0, float* noalias align 32 %data1, float* noalias align 32 %data2, i32 %n) #0
{
entry:
  %empty = icmp sle i32 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %pa = getelementptr inbounds float, float* %data1, i32 %i
  %pb = getelementptr inbounds float, float* %data2, i32 %i
  %a = load float, float* %pa
  %b = load float, float* %pb
  %s = fadd nsz arcp contract afn float %a, %b
  %pc = getelementptr inbounds float, float* %data0, i32 %i
  store float %s, float* %pc
  %i1 = add i32 %i, 1
  %done = icmp sge i32 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
attributes #0 = { alwaysinline nounwind "no-builtins" "no-trapping-math"="true" }
)";

// device memory holding a vector, freed at scope exit
template <typename T>
struct DevBuf {
  size_t n;
  void* p;
  explicit DevBuf(size_t n_) : n(n_), p(dev().allocator().alloc(std::max<size_t>(n_ * sizeof(T), 1))) {}
  explicit DevBuf(const std::vector<T>& v) : DevBuf(v.size()) { set(v); }
  ~DevBuf() { dev().allocator().free(p, std::max<size_t>(n * sizeof(T), 1)); }
  void set(const std::vector<T>& v) {
    dev().allocator().copyin(p, {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(T)});
  }
  std::vector<T> get() const {
    std::vector<T> v(n);
    dev().allocator().copyout({reinterpret_cast<uint8_t*>(v.data()), n * sizeof(T)}, p);
    return v;
  }
};

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no tg::Error thrown>";
}

// the name of the first function an IR text defines
std::string ir_name(const std::string& src) {
  size_t d = src.find("define ");
  size_t at = src.find('@', d);
  return src.substr(at + 1, src.find('(', at) - at - 1);
}

const std::vector<KernelGolden>& goldens() {
  static const std::vector<KernelGolden> g = load_kernel_goldens(TG_TEST_DATA "/kernel_goldens.txt");
  return g;
}

// whether the host has AVX-512 (the CPU backend's defaults follow it)
bool host_has_avx512() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

}  // namespace

// ***** registry and allocator *****

TEST(CPUDevice, Registry) {
  cpu::register_device();
  EXPECT_TRUE(device_registered("CPU"));
  EXPECT_TRUE(device_registered("cpu:0"));
  EXPECT_EQ(canonicalize_device("cpu:0"), "CPU");
  EXPECT_EQ(canonicalize_device("cpu:1"), "CPU:1");
  EXPECT_EQ(&get_device("cpu"), &get_device("CPU:0"));
  EXPECT_EQ(&get_device("CPU"), static_cast<Compiled*>(&dev()));
  EXPECT_EQ(get_device("CPU").device, "CPU");
  std::string err = error_of([] { get_device("NOPE"); });
  EXPECT_NE(err.find("no backend registered device NOPE"), std::string::npos) << err;
  EXPECT_NE(err.find("CPU"), std::string::npos) << err;
  // the engine's path: only lib/device.h's interfaces
  Compiled& d = get_device("CPU");
  std::shared_ptr<Program> prg = d.compile(kAddIR, "vadd");
  EXPECT_EQ(prg.get(), d.compile(kAddIR, "vadd").get());
  void* bufs[3];
  std::vector<float> a{1, 2, 3}, b{4, 5, 6}, c(3);
  for (void*& p : bufs) p = d.allocator().alloc(3 * sizeof(float));
  d.allocator().copyin(bufs[1], {reinterpret_cast<const uint8_t*>(a.data()), 12});
  d.allocator().copyin(bufs[2], {reinterpret_cast<const uint8_t*>(b.data()), 12});
  std::optional<pyint> n = 3;
  auto t = prg->run(bufs, {&n, 1}, {1, 1, 1}, std::nullopt, true);
  EXPECT_TRUE(t.has_value());
  d.allocator().copyout({reinterpret_cast<uint8_t*>(c.data()), 12}, bufs[0]);
  EXPECT_EQ(c, (std::vector<float>{5, 7, 9}));
  for (void* p : bufs) d.allocator().free(p, 3 * sizeof(float));
  // the device's renderer is the LLVM one
  EXPECT_NE(dynamic_cast<const CPULLVMRenderer*>(&dev().renderer()), nullptr);
  EXPECT_TRUE(dev().renderer().has_threads);
}

TEST(CPUDevice, Allocator) {
  Allocator& a = dev().allocator();
  EXPECT_NE(error_of([&] { a.alloc(0); }).find("alloc size must be positive"), std::string::npos);
  void* p = a.alloc(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  std::vector<uint8_t> zero(100, 0), got(100, 1), data(100);
  a.copyout(got, p);
  EXPECT_EQ(got, zero);  // fresh memory is zeroed
  for (size_t i = 0; i < data.size(); i++) data[i] = (uint8_t)(i * 7);
  a.copyin(p, data);
  a.copyout(got, p);
  EXPECT_EQ(got, data);
  EXPECT_EQ(a.offset(p, 10, 32), static_cast<uint8_t*>(p) + 32);
  a.free(p, 100);
  // external memory is wrapped, not owned
  alignas(64) static float ext[16];
  BufferSpec spec;
  spec.external_ptr = reinterpret_cast<uintptr_t>(ext);
  void* e = a.alloc(sizeof(ext), spec);
  EXPECT_EQ(e, ext);
  a.free(e, sizeof(ext), spec);
}

// ***** compile, run, cache *****

TEST(CPUDevice, CompileAndRun) {
  auto prg = dev().compile(kAddIR, "vadd");
  EXPECT_EQ(prg->name, "vadd");
  const size_t n = 1000;
  std::vector<float> a(n), b(n);
  for (size_t i = 0; i < n; i++) a[i] = (float)i * 0.5f, b[i] = 3.0f - (float)i;
  DevBuf<float> A(a), B(b), C(n + 1);
  (*prg)({C.p, A.p, B.p}, {std::optional<pyint>(n)});
  auto c = C.get();
  for (size_t i = 0; i < n; i++) ASSERT_EQ(c[i], a[i] + b[i]) << i;
  EXPECT_EQ(c[n], 0.0f);  // nothing past n
  // a smaller n, and the wall time when asked
  C.set(std::vector<float>(n + 1, -1.0f));
  LaunchArgs la;
  la.wait = true;
  auto t = (*prg)({C.p, A.p, B.p}, {std::optional<pyint>(7)}, la);
  ASSERT_TRUE(t.has_value());
  EXPECT_GE(*t, 0.0);
  c = C.get();
  EXPECT_EQ(c[6], a[6] + b[6]);
  EXPECT_EQ(c[7], -1.0f);
}

TEST(CPUDevice, CompileCache) {
  Compiler& comp = dev().compiler();
  std::string src = std::string(kAddIR) + "; cache test\n";
  size_t size0 = comp.cache_size(), hits0 = comp.cache_hits();
  auto l1 = comp.compile_cached(src);
  auto l2 = comp.compile_cached(src);
  EXPECT_EQ(l1.get(), l2.get());
  EXPECT_EQ(comp.cache_size(), size0 + 1);
  EXPECT_EQ(comp.cache_hits(), hits0 + 1);
  EXPECT_GT(l1->size(), 64u);
  EXPECT_EQ(std::string(l1->begin(), l1->begin() + 4),
            "\x7f"
            "ELF");
  // programs are cached by (name, source)
  auto p1 = dev().compile(src, "vadd"), p2 = dev().compile(src, "vadd");
  EXPECT_EQ(p1.get(), p2.get());
  // two programs of the same name from different sources live side by side (one JITDylib each)
  std::string src2 = src;
  src2.replace(src2.find("fadd"), 4, "fsub");
  auto p3 = dev().compile(src2, "vadd");
  EXPECT_NE(p1.get(), p3.get());
  DevBuf<float> A(std::vector<float>{5, 6}), B(std::vector<float>{1, 2}), C(2), D(2);
  (*p1)({C.p, A.p, B.p}, {std::optional<pyint>(2)});
  (*p3)({D.p, A.p, B.p}, {std::optional<pyint>(2)});
  EXPECT_EQ(C.get(), (std::vector<float>{6, 8}));
  EXPECT_EQ(D.get(), (std::vector<float>{4, 4}));
  EXPECT_EQ(comp.cachekey.rfind("compile_llvm16p4_", 0), 0u) << comp.cachekey;
  // the SLP width limit is part of the key (CPU_SLP_MAX_VF: by default 8 with AVX-512, none without)
  if (host_has_avx512())
    EXPECT_NE(comp.cachekey.find("_vf8"), std::string::npos) << comp.cachekey;
  else
    EXPECT_EQ(comp.cachekey.find("_vf"), std::string::npos) << comp.cachekey;
}

// the disk cache (helpers.diskcache, table = the compiler's cachekey): a second compiler with an empty memory cache
// reads the library from disk instead of compiling, and the library runs; a damaged entry is compiled again
TEST(CPUDevice, CompiledLibrariesAreCachedOnDisk) {
  auto dir = std::filesystem::temp_directory_path() / ("tg-compile-cache-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::string old_dir = std::getenv("TG_CACHE_DIR") ? std::getenv("TG_CACHE_DIR") : "";
  setenv("TG_CACHE_DIR", dir.c_str(), 1);
  std::string src = std::string(kAddIR) + "; disk cache test\n";
  src.replace(src.find("fadd"), 4, "fmul");
  {
    cpu::LLVMCompiler c1;
    auto lib1 = c1.compile_cached(src);
    EXPECT_EQ(c1.disk_hits(), 0u);
    cpu::LLVMCompiler c2;
    auto lib2 = c2.compile_cached(src);
    EXPECT_EQ(c2.disk_hits(), 1u);
    EXPECT_EQ(*lib1, *lib2);
    setenv("ASSERT_COMPILE", "1", 1);
    cpu::LLVMCompiler c3;
    EXPECT_NO_THROW(c3.compile_cached(src)) << "a cached library needs no compile";
    std::string other = src;
    other.replace(other.find("fmul"), 4, "fsub");
    EXPECT_THROW(c3.compile_cached(other), CompileError);
    unsetenv("ASSERT_COMPILE");
    // damage every entry: they are compiled again, not loaded
    for (auto& e : std::filesystem::recursive_directory_iterator(dir))
      if (e.is_regular_file()) std::ofstream(e.path(), std::ios::trunc) << "garbage";
    cpu::LLVMCompiler c4;
    auto lib4 = c4.compile_cached(src);
    EXPECT_EQ(c4.disk_hits(), 0u);
    EXPECT_EQ(*lib4, *lib1);
  }
  if (old_dir.empty())
    unsetenv("TG_CACHE_DIR");
  else
    setenv("TG_CACHE_DIR", old_dir.c_str(), 1);
  std::filesystem::remove_all(dir);
}

// every way an entry can be damaged on disk (a crash mid-write on a filesystem without ordering, a bad sector, an
// edit): each reads as a miss, is compiled again and rewritten, and the next compiler finds the good entry
TEST(CPUDevice, DamagedDiskCacheEntriesAreMissesAndAreRewritten) {
  auto dir = std::filesystem::temp_directory_path() / ("tg-damaged-cache-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::string old_dir = std::getenv("TG_CACHE_DIR") ? std::getenv("TG_CACHE_DIR") : "";
  setenv("TG_CACHE_DIR", dir.c_str(), 1);
  std::string src = std::string(kAddIR) + "; damaged cache test\n";
  src.replace(src.find("fadd"), 4, "fsub");
  auto entry = [&] {
    for (auto& e : std::filesystem::recursive_directory_iterator(dir))
      if (e.is_regular_file()) return e.path();
    return std::filesystem::path();
  };
  auto read_all = [](const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  std::vector<uint8_t> good;
  {
    cpu::LLVMCompiler c0;
    good = *c0.compile_cached(src);
  }
  std::filesystem::path path = entry();
  ASSERT_FALSE(path.empty());
  const std::string intact = read_all(path);
  ASSERT_GT(intact.size(), good.size());
  size_t body = intact.size() - good.size();  // where the library starts
  std::vector<std::pair<std::string, std::function<std::string(std::string)>>> damages = {
      {"empty", [](std::string) { return std::string(); }},
      {"truncated in the header", [](std::string s) { return s.substr(0, 5); }},
      {"truncated in the library", [&](std::string s) { return s.substr(0, body + good.size() / 2); }},
      {"one byte short", [](std::string s) { return s.substr(0, s.size() - 1); }},
      {"zeroed", [](std::string s) { return std::string(s.size(), '\0'); }},
      {"library zeroed", [&](std::string s) { return s.substr(0, body) + std::string(s.size() - body, '\0'); }},
      {"bit flipped in the library start",
       [&](std::string s) {
         s[body] ^= 0x01;
         return s;
       }},
      {"bit flipped mid-library",
       [&](std::string s) {
         s[body + good.size() / 2] ^= 0x10;
         return s;
       }},
      {"bit flipped at the end",
       [](std::string s) {
         s.back() ^= 0x80;
         return s;
       }},
      {"bit flipped in the checksum",
       [&](std::string s) {
         s[s.find('\n') - 1] ^= 0x01;
         return s;
       }},
      {"bytes appended", [](std::string s) { return s + "xyz"; }},
  };
  for (auto& [what, damage] : damages) {
    SCOPED_TRACE(what);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << damage(intact);
    cpu::LLVMCompiler c1;
    auto lib = c1.compile_cached(src);
    EXPECT_EQ(c1.disk_hits(), 0u);
    EXPECT_EQ(*lib, good);
    EXPECT_EQ(read_all(path), intact) << "the entry was not rewritten";
    cpu::LLVMCompiler c2;
    EXPECT_EQ(*c2.compile_cached(src), good);
    EXPECT_EQ(c2.disk_hits(), 1u);
  }
  // the rewritten library, loaded from disk by the device, runs
  size_t disk0 = dev().compiler().disk_hits();
  auto prog = dev().compile(src, "vadd");
  EXPECT_EQ(dev().compiler().disk_hits(), disk0 + 1);
  DevBuf<float> A(std::vector<float>{5, 6}), B(std::vector<float>{1, 2}), C(2);
  (*prog)({C.p, A.p, B.p}, {std::optional<pyint>(2)});
  EXPECT_EQ(C.get(), (std::vector<float>{4, 4}));
  if (old_dir.empty())
    unsetenv("TG_CACHE_DIR");
  else
    setenv("TG_CACHE_DIR", old_dir.c_str(), 1);
  std::filesystem::remove_all(dir);
}

TEST(CPUDevice, HostFeaturesAndO2) {
  auto& comp = dev().compiler();
  EXPECT_FALSE(comp.cpu_name().empty());
  EXPECT_NE(comp.features().find("+sse2"), std::string::npos) << comp.features();
  // the scalar loop comes out vectorized for the host (default<O2> with loop vectorization)
  std::string ir = comp.optimized_ir(kAddIR);
  EXPECT_NE(ir.find(" x float>"), std::string::npos) << ir;
  size_t entry = ir.find("define void @__tg_entry_vadd(ptr noalias nocapture readonly %0)");
  ASSERT_NE(entry, std::string::npos) << ir;
  // the entry is a thunk calling the kernel, which is compiled once (out of line)
  EXPECT_NE(ir.find("call void @vadd(", entry), std::string::npos) << ir;
  EXPECT_EQ(ir.find("alwaysinline"), std::string::npos) << ir;
  // the signature: 4 parameters, three `ptr align 32` (1 | 32 << 8) and an int
  EXPECT_NE(ir.find("constant [5 x i64] [i64 4, i64 8193, i64 8193, i64 8193, i64 0]"), std::string::npos) << ir;
}

// the i32 values defined as a sum, product, shift or `or` with a constant that cannot wrap (`%x = add nuw nsw i32 %y,
// 3`) and that the IR extends to i64 (`sext` needs nsw, `zext` nuw; an extension always distributes over `or`)
int extended_index_sums(const std::string& ir) {
  static const std::regex def(R"((%[\w.]+) = (or|add|mul|shl)( nuw)?( nsw)? i32 [%\w.]+, -?\d+\n)");
  int n = 0;
  for (auto it = std::sregex_iterator(ir.begin(), ir.end(), def); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    bool is_or = m[2] == "or";
    if ((is_or || m[4].matched) && ir.find("sext i32 " + m[1].str() + " to i64") != std::string::npos) n++;
    if ((is_or || m[3].matched) && ir.find("zext i32 " + m[1].str() + " to i64") != std::string::npos) n++;
  }
  return n;
}

// InstCombine narrows address math to i32 (`sext(add nsw i32 %x, 5)`), and x86 cannot fold a sign extension of a sum
// into an address: in the renderer's unrolled kernels each load got a register of its own, and the big ones spilled
// them. After the pipeline none of the golden kernels has such an extension left (without the widening, a third of
// them had, 17 in the biggest).
TEST(CPUDevice, IndexMathWidenedForAddressing) {
  auto join = [](const std::vector<std::string>& v) {
    std::string r;
    for (const auto& l : v) r += l + "\n";
    return r;
  };
  int kernels = 0;
  for (const auto& k : goldens()) {
    std::string ir;
    try {
      ir = dev().compiler().optimized_ir(join(k.llvm.source));
    } catch (const CompileError&) {
      continue;  // the reference refuses it too (trunc_floor)
    }
    kernels++;
    EXPECT_EQ(extended_index_sums(ir), 0) << k.name << " (" << k.program << ")\n" << ir;
  }
  EXPECT_GT(kernels, 50);
  // and the reference's 1024x1024 matmul and big add (THREAD-split, upcast and unrolled like the training kernels)
  for (const auto& k : load_cpu_bench_kernels(TG_TEST_DATA "/cpu_bench_kernels.txt")) {
    std::string ir = dev().compiler().optimized_ir(k.source);
    EXPECT_EQ(extended_index_sums(ir), 0) << k.label << "\n" << ir;
  }
}

// CPU_SLP_MAX_VF (by default 8 on a host with AVX-512, no limit without): with the limit, the SLP vectorizer builds
// no vector wider than 8 floats; unlimited, it packs the 4x4 register tiles of upcast kernels (the reference's
// matmul, the training step's convolution gradients) into 16-wide vectors, which AVX-512 runs as one zmm FMA fed by
// inserts and permutes, and AVX2 as two ymm FMAs. Wider vectors from the loop vectorizer (elementwise kernels) are
// not the SLP vectorizer's and stay.
int widest_slp_float_vector(const std::string& ir) {
  static const std::regex vec(R"(<(\d+) x float>)");
  int w = 0;
  for (auto it = std::sregex_iterator(ir.begin(), ir.end(), vec); it != std::sregex_iterator(); ++it)
    w = std::max(w, std::stoi((*it)[1].str()));
  return w;
}
// the reduction kernels (name, LLVM IR) of the gradients of beautiful_mnist's second convolution (32 -> 32 channels,
// 5x5) on a batch of images: 4x4 register tiles, gated loads (only scheduled and rendered, never run)
std::vector<std::pair<std::string, std::string>> conv_gradient_kernels(int64_t batch) {
  cpu::register_device();
  interp::register_device();
  Tensor x = Tensor::empty({batch, 32, 24, 24}).requires_grad_(), w = Tensor::empty({32, 32, 5, 5}).requires_grad_();
  (batch == 8 ? x : x.relu()).conv2d(w).relu().sum().backward();
  std::vector<std::pair<std::string, std::string>> out;
  UOp linear = Tensor::schedule_linear({*x.grad(), *w.grad()});
  for (const UOp& call : linear.src()) {
    if (call.src(0).op() != Ops::SINK) continue;
    UOp prg = to_program(call.src(0), dev().renderer());
    const std::string name = prg.arg().as<ProgramInfo>()->function_name();
    if (name.rfind("r_", 0) != 0) continue;  // reductions: no loop-vectorized elementwise loops
    out.emplace_back(name, prg.src(2).arg().as_str());
  }
  return out;
}

TEST(CPUDevice, SLPVectorWidthFollowsTheHost) {
  auto kernels = conv_gradient_kernels(8);
  int widest = 0;
  for (const auto& [name, src] : kernels) {
    int w = widest_slp_float_vector(dev().compiler().optimized_ir(src));
    if (host_has_avx512()) {
      EXPECT_LE(w, 8) << name;
    }
    widest = std::max(widest, w);
  }
  EXPECT_GE(kernels.size(), 2u);
  if (!host_has_avx512()) {
    EXPECT_GT(widest, 8) << "no SLP vector wider than 8 floats without AVX-512";
  }
}

// A kernel that spills vector registers realigns its stack ("stackrealign"), so its 32-byte spill slots are aligned
// whatever the stack pointer of the thread that calls it. Without it the spills are unaligned moves into slots that
// straddle cache lines on a thread whose stack pointer is 16 mod 32 at the call (the pool's worker thread ran the
// training step's largest kernel 2x slower than the main thread).
TEST(CPUDevice, KernelsThatSpillVectorsRealignTheirStack) {
  int spilling = 0;
  // at beautiful_mnist's batch of 512 the input gradient (r_64_8_24_24_2_4_4_32_6_6) spills its accumulators
  for (const auto& [name, src] : conv_gradient_kernels(512)) {
    std::string as = dev().compiler().assembly(src);
    std::istringstream lines(as);
    bool spills = false;
    for (std::string l; std::getline(lines, l);) {
      bool vec_slot = l.find("32-byte Spill") != std::string::npos || l.find("32-byte Reload") != std::string::npos ||
                      l.find("64-byte Spill") != std::string::npos || l.find("64-byte Reload") != std::string::npos;
      if (!vec_slot) continue;
      spills = true;
      // an aligned slot is spilled and reloaded with aligned moves (a folded reload is an operand: always fine)
      EXPECT_EQ(l.find("vmovups"), std::string::npos) << name << ": unaligned spill: " << l;
    }
    if (!spills) continue;
    spilling++;
    EXPECT_TRUE(as.find("andq\t$-32, %rsp") != std::string::npos || as.find("andq\t$-64, %rsp") != std::string::npos)
        << name << ": spills vectors without realigning its stack";
  }
  EXPECT_GE(spilling, 1);
}

// index math beyond sums and products (a loaded index, a signed division, bit operations, an index also compared
// and stored as data) computes through the compile what it says, with negative values too
TEST(CPUDevice, IndexMathWithLoadsDivisionsAndBitOps) {
  // out[i] = in[((idx[i] + 3 * i) / 2 & 1023) ^ 5] for i < n, and iout[i] = i < 7 ? i * 3 : -1
  const std::string src =
      R"(define void @gather(float* noalias align 32 %data0, float* noalias align 32 %data1, i32* noalias align 32 %data2, i32* noalias align 32 %data3, i32 %n) #0
{
  br label %loop_latch_0
loop_latch_0:
  %i = phi i32 [ 0, %0 ], [ %iphi, %loop_body_0 ]
  %iphi = add i32 %i, 1
  %icmp = icmp slt i32 %i, %n
  br i1 %icmp, label %loop_body_0, label %loop_exit_0
loop_body_0:
  %pidx = getelementptr inbounds i32, i32* %data2, i32 %i
  %idx = load i32, i32* %pidx
  %j = mul i32 %i, 3
  %k = add nsw i32 %idx, %j
  %q = sdiv i32 %k, 2
  %m = and i32 %q, 1023
  %x = xor i32 %m, 5
  %p = getelementptr inbounds float, float* %data1, i32 %x
  %v = load float, float* %p
  %o = getelementptr inbounds float, float* %data0, i32 %i
  store float %v, float* %o
  %lt = icmp slt i32 %i, 7
  %d = select i1 %lt, i32 %j, i32 -1
  %oi = getelementptr inbounds i32, i32* %data3, i32 %i
  store i32 %d, i32* %oi
  br label %loop_latch_0
loop_exit_0:
  ret void
}
attributes #0 = { alwaysinline nounwind "no-builtins" "no-trapping-math"="true" }
)";
  auto prg = dev().compile(src, "gather");
  const int n = 300;
  std::vector<float> in(1024);
  for (int i = 0; i < 1024; i++) in[(size_t)i] = (float)i * 0.5f;
  std::vector<int32_t> idx(n);
  for (int i = 0; i < n; i++) idx[(size_t)i] = (i * 7919) % 2000 - 1000;  // negative too: sdiv rounds toward zero
  DevBuf<float> OUT(n), IN(in);
  DevBuf<int32_t> IDX(idx), IOUT(n);
  (*prg)({OUT.p, IN.p, IDX.p, IOUT.p}, {std::optional<pyint>(n)});
  auto out = OUT.get();
  auto iout = IOUT.get();
  for (int i = 0; i < n; i++) {
    int32_t x = (((idx[(size_t)i] + 3 * i) / 2) & 1023) ^ 5;
    ASSERT_EQ(out[(size_t)i], in[(size_t)x]) << i;
    ASSERT_EQ(iout[(size_t)i], i < 7 ? i * 3 : -1) << i;
  }
}

// compiles and loads from several threads at once (a context and a target machine per compile, one shared LLJIT)
TEST(CPUDevice, ConcurrentCompileAndLoad) {
  cpu::LLVMCompiler comp;  // uncached
  std::vector<const KernelGolden*> ks;
  for (const auto& k : goldens())
    if (k.program.rfind("add_", 0) == 0 || k.program.rfind("sum_", 0) == 0 || k.program == "where") ks.push_back(&k);
  ASSERT_GE(ks.size(), 8u);
  std::atomic<int> ok{0};
  std::mutex err_mu;
  std::string errors;
  auto worker = [&](size_t first) {
    for (size_t i = first; i < ks.size(); i += 2) {
      try {
        auto lib = comp.compile(join_lines(ks[i]->llvm.source));
        auto prg = dev().runtime(ks[i]->name, lib);
        auto got = run_on_device(*prg, ks[i]->bufs, ks[i]->vals, ks[i]->llvm.global);
        bool same = true;
        for (size_t b = 0; b < got.size(); b++)
          same = same && compare_buffer(dtypes::by_name(ks[i]->bufs[b].dtype), ks[i]->bufs[b].after, got[b]).empty();
        ok += same;
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lk(err_mu);
        errors += std::string(e.what()) + "\n";
      }
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(errors, "");
  EXPECT_EQ(ok.load(), (int)ks.size());
}

TEST(CPUDevice, UnoptimizedCompiler) {
  // LLVMOPT=0: the default<O0> pipeline still gives a working kernel
  cpu::LLVMCompiler o0(false);
  EXPECT_EQ(o0.cachekey.find("_opt"), std::string::npos);
  auto lib = o0.compile(kAddIR);
  auto prg = dev().runtime("vadd", lib);
  DevBuf<float> A(std::vector<float>{1, 2, 3}), B(std::vector<float>{10, 20, 30}), C(3);
  (*prg)({C.p, A.p, B.p}, {std::optional<pyint>(3)});
  EXPECT_EQ(C.get(), (std::vector<float>{11, 22, 33}));
  cpu::CompileTiming t;
  o0.compile(kAddIR, &t);
  EXPECT_GT(t.total(), 0.0);
}

// external functions resolve from the process (libm), like the reference links libm and libgcc_s
TEST(CPUDevice, ExternalSymbols) {
  const char* ir = R"(declare float @sinf(float)
declare float @llvm.exp.f32(float)
define void @ext(float* noalias align 32 %data0, float* noalias align 32 %data1) #0
{
  %x = load float, float* %data1
  %s = call float @sinf(float %x)
  %e = call float @llvm.exp.f32(float %x)
  store float %s, float* %data0
  %p = getelementptr inbounds float, float* %data0, i32 1
  store float %e, float* %p
  ret void
}
attributes #0 = { alwaysinline nounwind "no-builtins" "no-trapping-math"="true" }
)";
  auto prg = dev().compile(ir, "ext");
  DevBuf<float> out(2), in(std::vector<float>{0.5f});
  (*prg)({out.p, in.p});
  auto o = out.get();
  EXPECT_FLOAT_EQ(o[0], std::sin(0.5f));
  EXPECT_FLOAT_EQ(o[1], std::exp(0.5f));
}

// ***** errors: a tg::Error with a useful message, and the device keeps working *****

TEST(CPUDevice, ErrorMalformedIR) {
  std::string bad = "define void @broken(float* %data0) #0\n{\n  %v0 = fadd float 1.0, \n  ret void\n}\n";
  std::string err = error_of([&] { dev().compile(bad, "broken"); });
  EXPECT_NE(err.find("kernel broken: LLVM IR does not parse"), std::string::npos) << err;
  EXPECT_NE(err.find("line 4, column 3: expected value token\n    ret void\n    ^"), std::string::npos) << err;
  EXPECT_THROW(dev().compile(bad, "broken"), CompileError);
  // garbage
  err = error_of([] { dev().compiler().compile("this is not IR"); });
  EXPECT_NE(err.find("does not parse"), std::string::npos) << err;
  // a module without functions
  err = error_of([] { dev().compiler().compile(""); });
  EXPECT_NE(err.find("defines no function"), std::string::npos) << err;
  // parses, but does not verify
  std::string unverified = R"(define void @dom(i32* %data0)
{
entry:
  br label %next
next:
  store i32 %x, i32* %data0
  %x = add i32 1, 2
  ret void
}
)";
  err = error_of([&] { dev().compile(unverified, "dom"); });
  EXPECT_NE(err.find("kernel dom: LLVM IR does not verify"), std::string::npos) << err;
  EXPECT_NE(err.find("dominate"), std::string::npos) << err;
  // a parameter the launcher cannot pass
  err = error_of([] { dev().compiler().compile("define void @vec(<4 x float> %v)\n{\n  ret void\n}\n"); });
  EXPECT_NE(err.find("kernel vec: parameter 0 has type <4 x float>"), std::string::npos) << err;
  // failures are not cached, and the device still compiles and runs
  EXPECT_THROW(dev().compile(bad, "broken"), CompileError);
  auto prg = dev().compile(kAddIR, "vadd");
  DevBuf<float> A(std::vector<float>{1}), B(std::vector<float>{2}), C(1);
  (*prg)({C.p, A.p, B.p}, {std::optional<pyint>(1)});
  EXPECT_EQ(C.get()[0], 3.0f);
}

// IR that verifies but that the x86 backend cannot select (an AMD GPU intrinsic): LLVM calls report_fatal_error, which
// ends the process unless handled; here it is a CompileError and the device goes on
TEST(CPUDevice, ErrorLLVMFatal) {
  const char* ir = R"(declare float @llvm.amdgcn.rcp.f32(float)
define void @amd(float* noalias align 32 %data0) #0
{
  %x = load float, float* %data0
  %r = call float @llvm.amdgcn.rcp.f32(float %x)
  store float %r, float* %data0
  ret void
}
attributes #0 = { alwaysinline nounwind "no-builtins" "no-trapping-math"="true" }
)";
  for (int i = 0; i < 2; i++) {
    std::string err = error_of([&] { dev().compile(ir, "amd"); });
    EXPECT_NE(err.find("kernel amd: LLVM fatal error: Cannot select: intrinsic %llvm.amdgcn.rcp"), std::string::npos)
        << err;
  }
  auto prg = dev().compile(kAddIR, "vadd");
  DevBuf<float> A(std::vector<float>{1}), B(std::vector<float>{2}), C(1);
  (*prg)({C.p, A.p, B.p}, {std::optional<pyint>(1)});
  EXPECT_EQ(C.get()[0], 3.0f);
}

TEST(CPUDevice, ErrorMissingFunction) {
  std::string err = error_of([] { dev().compile(kAddIR, "vsub"); });
  EXPECT_NE(err.find("no function vsub in the compiled kernel (it has: vadd)"), std::string::npos) << err;
  EXPECT_THROW(dev().compile(kAddIR, "vsub"), DeviceError);
}

TEST(CPUDevice, ErrorUnresolvedSymbol) {
  const char* ir = R"(declare void @tg_no_such_function_anywhere()
define void @calls_missing(float* noalias align 32 %data0) #0
{
  call void @tg_no_such_function_anywhere()
  ret void
}
attributes #0 = { alwaysinline nounwind "no-builtins" "no-trapping-math"="true" }
)";
  std::string err = error_of([&] { dev().compile(ir, "calls_missing"); });
  EXPECT_NE(err.find("kernel calls_missing: cannot link"), std::string::npos) << err;
  EXPECT_NE(err.find("Symbols not found: [ tg_no_such_function_anywhere ]"), std::string::npos) << err;
}

TEST(CPUDevice, ErrorArguments) {
  auto prg = dev().compile(kAddIR, "vadd");
  DevBuf<float> A(4), B(4), C(4);
  std::string err = error_of([&] { (*prg)({C.p, A.p}); });
  EXPECT_NE(err.find("kernel vadd takes 4 arguments, got 2 buffers and 0 values"), std::string::npos) << err;
  err = error_of([&] { (*prg)({C.p, A.p, B.p}, {std::optional<pyint>(1), std::optional<pyint>(2)}); });
  EXPECT_NE(err.find("takes 4 arguments, got 3 buffers and 2 values"), std::string::npos) << err;
  err = error_of([&] { (*prg)({C.p, A.p, B.p, A.p}); });
  EXPECT_NE(err.find("kernel vadd: argument 3 is a value, got a buffer"), std::string::npos) << err;
  err = error_of([&] { (*prg)({C.p, A.p}, {std::optional<pyint>(1), std::optional<pyint>(2)}); });
  EXPECT_NE(err.find("kernel vadd: argument 2 is a buffer, got a value"), std::string::npos) << err;
  // the IR promises align 32
  err = error_of([&] { (*prg)({static_cast<uint8_t*>(C.p) + 4, A.p, B.p}, {std::optional<pyint>(1)}); });
  EXPECT_NE(err.find("kernel vadd: buffer 0 is not 32-byte aligned"), std::string::npos) << err;
  EXPECT_THROW((*prg)({C.p}), DeviceError);
}

// ***** THREAD kernels: core_id, the thread pool *****

namespace {
// records which thread ran each core_id and whether two calls were in flight at once
struct Recorder {
  std::mutex mu;
  std::vector<std::pair<int, std::thread::id>> calls;
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  bool wait = true;
};
Recorder* g_rec = nullptr;
void tg_test_record(int core_id) {
  g_rec->inside++;
  // wait a little for a second call to arrive: with two threads both chunks are inside at once
  auto t0 = std::chrono::steady_clock::now();
  while (g_rec->wait && g_rec->inside.load() < 2 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(250))
    std::this_thread::yield();
  if (g_rec->inside.load() >= 2) g_rec->overlapped = true;
  {
    std::lock_guard<std::mutex> lk(g_rec->mu);
    g_rec->calls.emplace_back(core_id, std::this_thread::get_id());
  }
  g_rec->inside--;
}
// the callback comes in as a "buffer" (a function address), core_id is the last argument like the renderer's
const char* kRecordIR = R"(define void @rec(ptr %fn, i32 %core_id) #0
{
  call void %fn(i32 %core_id)
  ret void
}
attributes #0 = { alwaysinline nounwind "no-builtins" "no-trapping-math"="true" }
)";
}  // namespace

TEST(CPUThreads, ChunksRunOnThePool) {
  auto prg = dev().compile(kRecordIR, "rec");
  void* fn = reinterpret_cast<void*>(&tg_test_record);
  LaunchArgs la;
  la.global_size = {2, 1, 1};
  int saved = dev().threads();
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    dev().set_threads(threads);
    EXPECT_EQ(dev().threads(), threads);
    Recorder rec;
    g_rec = &rec;
    (*prg)({fn}, {std::nullopt}, la);
    ASSERT_EQ(rec.calls.size(), 2u);
    std::set<int> ids{rec.calls[0].first, rec.calls[1].first};
    EXPECT_EQ(ids, (std::set<int>{0, 1}));
    if (threads == 1) {
      // in order, on the caller
      EXPECT_EQ(rec.calls[0].first, 0);
      EXPECT_EQ(rec.calls[0].second, std::this_thread::get_id());
      EXPECT_EQ(rec.calls[1].second, std::this_thread::get_id());
      EXPECT_FALSE(rec.overlapped.load());
    } else {
      EXPECT_NE(rec.calls[0].second, rec.calls[1].second);
      EXPECT_TRUE(rec.overlapped.load());
    }
    // more chunks than threads: every core_id exactly once
    rec.calls.clear();
    rec.wait = false;
    LaunchArgs la5;
    la5.global_size = {5, 1, 1};
    (*prg)({fn}, {std::nullopt}, la5);
    std::multiset<int> all;
    for (auto& c : rec.calls) all.insert(c.first);
    EXPECT_EQ(all, (std::multiset<int>{0, 1, 2, 3, 4}));
    g_rec = nullptr;
  }
  dev().set_threads(saved);
}

// the reference's THREAD kernels (core_id, global_size = (2,1,1)): 1 and 2 threads give the same bits, and the
// reference's outputs
TEST(CPUThreads, GoldenThreadKernelsSameWithOneAndTwoThreads) {
  int n = 0, saved = dev().threads();
  for (const auto& k : goldens()) {
    if (k.program.rfind("thread_", 0) != 0) continue;
    SCOPED_TRACE(k.program + " " + k.name);
    n++;
    ASSERT_EQ(k.llvm.global[0], 2);
    ASSERT_NE(std::find(k.vals.begin(), k.vals.end(), "-"), k.vals.end());  // has a core_id
    auto prg = dev().compile(join_lines(k.llvm.source), k.name);
    dev().set_threads(1);
    auto one = run_on_device(*prg, k.bufs, k.vals, k.llvm.global);
    dev().set_threads(2);
    auto two = run_on_device(*prg, k.bufs, k.vals, k.llvm.global);
    EXPECT_EQ(one, two);
    for (size_t i = 0; i < k.bufs.size(); i++)
      EXPECT_EQ(compare_buffer(dtypes::by_name(k.bufs[i].dtype), k.bufs[i].after, two[i]), "") << "buffer " << i;
  }
  dev().set_threads(saved);
  EXPECT_EQ(n, 3);
}

// the reference's big kernels lowered with its default optimizations (THREAD over 2 cores, tests/parity/
// cpu_bench_kernels.txt): exact results, and the same bits with 1 and 2 threads
TEST(CPUThreads, ReferenceBigKernelsOneAndTwoThreads) {
  auto ks = load_cpu_bench_kernels(TG_TEST_DATA "/cpu_bench_kernels.txt");
  int saved = dev().threads();
  {
    const CPUBenchKernel& k = find_cpu_bench_kernel(ks, "add_16M");
    ASSERT_EQ(k.global[0], 2);
    ASSERT_EQ(k.vals, std::vector<std::string>{"-"});
    const size_t n = k.bufs[0].second;
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; i++) a[i] = (float)(i % 1000) * 0.25f, b[i] = (float)(i % 77) - 30.0f;
    DevBuf<float> C(n), A(a), B(b);
    auto prg = dev().compile(k.source, k.name);
    std::vector<std::vector<float>> results;
    for (int threads : {1, 2}) {
      dev().set_threads(threads);
      C.set(std::vector<float>(n, -1.0f));
      LaunchArgs la;
      la.global_size = k.global;
      (*prg)({C.p, A.p, B.p}, {std::nullopt}, la);
      results.push_back(C.get());
      size_t bad = 0;
      for (size_t i = 0; i < n; i++) bad += results.back()[i] != a[i] + b[i];
      EXPECT_EQ(bad, 0u) << "threads=" << threads;
    }
    EXPECT_TRUE(results[0] == results[1]);
  }
  {
    const CPUBenchKernel& k = find_cpu_bench_kernel(ks, "matmul_1024");
    ASSERT_EQ(k.global[0], 2);
    const size_t N = 1024;
    ASSERT_EQ(k.bufs[0].second, N * N);
    // multiples of 1/4 in [-1, 1]: every product and partial sum is exact in float32, so any summation order gives
    // the integer result exactly
    std::vector<float> a(N * N), b(N * N);
    uint32_t seed = 12345;
    auto rnd = [&] {
      seed = seed * 1664525u + 1013904223u;
      return (int)((seed >> 16) % 9) - 4;
    };
    for (auto& x : a) x = (float)rnd() / 4.0f;
    for (auto& x : b) x = (float)rnd() / 4.0f;
    DevBuf<float> C(N * N), A(a), B(b);
    auto prg = dev().compile(k.source, k.name);
    std::vector<std::vector<float>> results;
    for (int threads : {1, 2}) {
      dev().set_threads(threads);
      C.set(std::vector<float>(N * N, -7.0f));
      LaunchArgs la;
      la.global_size = k.global;
      (*prg)({C.p, A.p, B.p}, {std::nullopt}, la);
      results.push_back(C.get());
    }
    EXPECT_TRUE(results[0] == results[1]);
    size_t bad = 0;
    for (size_t r = 0; r < N; r += 31)
      for (size_t c = 0; c < N; c++) {
        int64_t acc = 0;  // in units of 1/16
        for (size_t j = 0; j < N; j++) acc += (int64_t)(a[r * N + j] * 4) * (int64_t)(b[j * N + c] * 4);
        bad += results[1][r * N + c] != (float)acc / 16.0f;
      }
    EXPECT_EQ(bad, 0u);
  }
  dev().set_threads(saved);
}

TEST(CPUThreads, PoolParallelFor) {
  for (int threads : {1, 2, 3}) {
    cpu::ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {0, 1, 2, 7, 100}) {
      std::vector<std::atomic<int>> hits((size_t)n);
      pool.parallel_for(n, [&](int64_t i) { hits[(size_t)i]++; });
      for (int64_t i = 0; i < n; i++) ASSERT_EQ(hits[(size_t)i].load(), 1) << "n=" << n << " i=" << i;
    }
  }
  // concurrent submitters are served one after the other
  cpu::ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([&] {
      for (int r = 0; r < 50; r++) pool.parallel_for(10, [&](int64_t i) { sum += i; });
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(sum.load(), 4 * 50 * 45);
}

// ***** test/backend/test_uops.py programs (tests/data/uops_kernel_goldens.txt) through CPULLVMRenderer *****

namespace {
struct UopsRecord {
  std::string test;
  bool is_case = false, has_llvm_source = false;
  std::vector<std::string> program, llvm_source;
  std::array<int64_t, 3> global{1, 1, 1};
  std::vector<std::string> vals;
  std::vector<GoldenBuffer> bufs;
  int runs = 0;
};
// a case's kernel run, or the last of a hand-built program's runs on the PYTHON device
std::vector<UopsRecord> load_uops() {
  std::vector<UopsRecord> rs;
  for (const UopsCase& c : load_uops_goldens(TG_TEST_DATA "/uops_kernel_goldens.txt").cases) {
    UopsRecord r{.test = c.test,
                 .is_case = !c.is_linear,
                 .has_llvm_source = c.has_llvm_source,
                 .program = c.program,
                 .llvm_source = c.llvm_source,
                 .global = c.global,
                 .vals = c.vals,
                 .bufs = c.bufs,
                 .runs = (int)c.runs.size()};
    if (!c.runs.empty()) r.global = c.runs.back().global, r.vals = c.runs.back().vals, r.bufs = c.runs.back().bufs;
    rs.push_back(std::move(r));
  }
  return rs;
}
// TestUOps._equal: floats with rtol 2e-7 (nan equals nan), everything else exactly
std::string uops_equal(DType dt, const std::vector<uint8_t>& want, const std::vector<uint8_t>& got) {
  if (want.size() != got.size()) return "size differs";
  const size_t sz = (size_t)dt.itemsize();
  for (size_t i = 0; i < want.size(); i += sz) {
    PyConst w = interp::load_scalar(want.data() + i, dt), g = interp::load_scalar(got.data() + i, dt);
    bool ok;
    if (dtypes::is_float(dt)) {
      double a = g.as_float(), b = w.as_float();
      ok = std::isnan(b) ? std::isnan(a) : std::isinf(b) ? a == b : std::fabs(a - b) <= 2e-7 * std::fabs(b);
    } else {
      ok = std::memcmp(want.data() + i, got.data() + i, sz) == 0;
    }
    if (!ok) return "element " + std::to_string(i / sz) + ": want " + w.str() + ", got " + g.str();
  }
  return "";
}
}  // namespace

// The programs were lowered for ClangRenderer (the reference's default on CPU), so a few hold ops CPULLVMRenderer does
// not render (SQRT: its pipeline decomposes it; an INDEX on a uint64 BITCAST view): those are counted and skipped.
TEST(CPUUops, TestUopsProgramsThroughLLVM) {
  CPULLVMRenderer ren(Target{"CPU", "LLVM", "x86_64,native", "", ""});
  int n = 0, ran = 0;
  std::map<std::string, int> refused;
  for (const auto& r : load_uops()) {
    if (!r.is_case || r.bufs.empty()) continue;
    SCOPED_TRACE(r.test + " #" + std::to_string(n));
    n++;
    std::vector<UOp> prg = dec_linear(r.program);
    std::string src;
    try {
      src = ren.render(prg);
    } catch (const Error& e) {
      refused[r.test + ": " + e.what()]++;
      continue;
    }
    try {
      auto p = dev().compile(src, ir_name(src));
      auto got = run_on_device(*p, r.bufs, r.vals, r.global);
      auto interp = run_interp(prg, r.bufs, r.vals, r.global);
      ran++;
      // single ops: TestUOps._equal (rtol 2e-7); whole programs (matmul): the interpreter tests' 1e-6, the compiled
      // kernel contracts a*b+c to an FMA
      bool program = r.test.rfind("TestUOpPrograms.", 0) == 0;
      for (size_t i = 0; i < r.bufs.size(); i++) {
        DType dt = dtypes::by_name(r.bufs[i].dtype);
        auto cmp = [&](DType d, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
          return program ? compare_buffer(d, a, b) : uops_equal(d, a, b);
        };
        EXPECT_EQ(cmp(dt, r.bufs[i].after, got[i]), "") << "buffer " << i << " vs the reference";
        EXPECT_EQ(cmp(dt, interp[i], got[i]), "") << "buffer " << i << " vs the interpreter";
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  int n_refused = 0;
  for (const auto& [what, count] : refused) {
    std::printf("[ skipped ] %dx %s\n", count, what.c_str());
    n_refused += count;
  }
  std::printf("[ uops    ] %d/%d programs compiled and ran\n", ran, n);
  EXPECT_GE(n, 425);
  EXPECT_LE(n_refused, 5);
  EXPECT_EQ(ran + n_refused, n);
}

// the hand-built programs the reference's LLVM renderer renders (its own IR), run on the PYTHON device's inputs;
// CPUDevice.timestamp_prog (calls a function pointer of the reference's process) and worker_prog (never returns) are
// left out
TEST(CPUUops, HandBuiltProgramsThroughLLVM) {
  int n = 0;
  for (const auto& r : load_uops()) {
    if (r.is_case || !r.has_llvm_source || r.runs == 0) continue;
    if (r.test == "CPUDevice.timestamp_prog" || r.test == "CPUDevice.worker_prog") continue;
    SCOPED_TRACE(r.test);
    n++;
    try {
      std::string src = join_lines(r.llvm_source);
      std::string name = ir_name(src);
      auto p = dev().compile(src, name);
      auto got = run_on_device(*p, r.bufs, r.vals, r.global);
      for (size_t i = 0; i < r.bufs.size(); i++)
        EXPECT_EQ(compare_buffer(dtypes::by_name(r.bufs[i].dtype), r.bufs[i].after, got[i]), "") << "buffer " << i;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(n, 3);
}

// float64 constants with a short python repr ("1e-05") render without a '.', which LLVM refuses; the compiler adds it
TEST(CPUDevice, FloatLiteralsWithoutADotCompile) {
  EXPECT_EQ(cpu::fix_float_literals("  %v3 = fadd double %v2, 1e-05\n  %v4 = fmul double -1e+100, %v3\n"),
            "  %v3 = fadd double %v2, 1.0e-05\n  %v4 = fmul double -1.0e+100, %v3\n");
  EXPECT_EQ(
      cpu::fix_float_literals("  %v1e5 = add i32 %v0, 100\n  br label %loop_1e2\n  %x = fadd double 2.5e-07, 1.0\n"),
      "  %v1e5 = add i32 %v0, 100\n  br label %loop_1e2\n  %x = fadd double 2.5e-07, 1.0\n");
  cpu::register_device();
  interp::register_device();  // host data arrives through the PYTHON device
  Tensor x = Tensor::from_vector<double>({1.0, 2.0}, dtypes::float64, Arg("CPU"));
  std::vector<double> got = (x * 1e-05 + 1e+100).to_vector<double>();
  EXPECT_DOUBLE_EQ(got[0], 1e+100);
  std::vector<double> small = (x * 1e-05).to_vector<double>();
  EXPECT_DOUBLE_EQ(small[1], 2e-05);
}

// CPU_TILE (codegen/opt/heuristic.cpp): a reduce kernel whose reference tile gathers every vector (the convolution
// gradients: lanes along images and channels) gets an 8-lane register tile instead, with the reference's unrolls of
// the reduce axes. Each output is summed by the same ops in the same order, so the gradients are bit-identical.
namespace {
// the function names of the kernels that compute these tensors (copies left out)
std::vector<std::string> kernel_names(const std::vector<Tensor>& outs) {
  std::vector<std::string> names;
  UOp linear = Tensor::schedule_linear(outs);
  for (const UOp& call : linear.src())
    if (call.src(0).op() == Ops::SINK)
      names.push_back(to_program(call.src(0), dev().renderer()).arg().as<ProgramInfo>()->function_name());
  return names;
}

struct TileRun {
  std::vector<std::string> names;  // the reduce kernels' names (their shapes show the upcasts)
  std::vector<float> dx, dw;
};
TileRun tile_run(int64_t tile, const std::vector<float>& hx, const std::vector<float>& hw) {
  Context c({{"CPU_TILE", tile}});
  auto grads = [&] {
    Tensor x = Tensor::from_vector(hx).reshape({16, 32, 12, 12}).realize().requires_grad_();
    Tensor w = Tensor::from_vector(hw).reshape({32, 32, 5, 5}).realize().requires_grad_();
    x.relu().conv2d(w).relu().sum().backward();
    return std::make_pair(*x.grad(), *w.grad());
  };
  TileRun r;
  auto [gx, gw] = grads();
  for (const std::string& name : kernel_names({gx, gw}))
    if (name.rfind("r_", 0) == 0) r.names.push_back(name);
  auto [vx, vw] = grads();
  r.dx = vx.to_vector<float>(), r.dw = vw.to_vector<float>();
  return r;
}
}  // namespace

TEST(CPUDevice, RegisterTileKeepsTheReferenceSums) {
  cpu::register_device();
  interp::register_device();
  std::vector<float> hx(16 * 32 * 12 * 12), hw(32 * 32 * 5 * 5);
  for (size_t n = 0; n < hx.size(); n++) hx[n] = std::sin(0.37f * (float)n) - 0.1f;
  for (size_t n = 0; n < hw.size(); n++) hw[n] = 0.05f * std::cos(0.11f * (float)n);
  TileRun ref = tile_run(0, hx, hw), ours = tile_run(1, hx, hw);
  ASSERT_EQ(ref.names.size(), ours.names.size());
  // the input gradient's reference tile gathers along images and input channels (4 x 4); ours has 8 lanes
  int tiled = 0;
  for (size_t i = 0; i < ref.names.size(); i++)
    if (ref.names[i] != ours.names[i]) {
      tiled++;
      EXPECT_NE(ours.names[i].find("_8_"), std::string::npos) << ours.names[i] << " has no 8-wide upcast";
    }
  EXPECT_GE(tiled, 1) << "no kernel got a register tile";
  ASSERT_EQ(ref.dx.size(), ours.dx.size());
  ASSERT_EQ(ref.dw.size(), ours.dw.size());
  EXPECT_EQ(0, std::memcmp(ref.dx.data(), ours.dx.data(), ours.dx.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(ref.dw.data(), ours.dw.data(), ours.dw.size() * sizeof(float)));
}

// CPU_CONV_LAYOUT (tensor/conv_layout.cpp, cpu_conv_weight): in training, a convolution on DEV=CPU reads its weights
// through a copy with the output channels innermost, one more kernel, its forward takes a tile along the output
// channels, and the output and every gradient stay bit-identical. Forward-only (TRAINING unset) and where each weight
// is used fewer than 256 times per call, the graph is the reference's.
namespace {
struct LayoutRun {
  std::vector<std::string> names;  // every kernel's
  std::vector<float> y, dx, dw;
};
LayoutRun layout_run(int64_t layout, int64_t training, const Shape& xs, const std::vector<float>& hx,
                     const std::vector<float>& hw) {
  Context c({{"CPU_CONV_LAYOUT", layout}});
  auto mode = Tensor::train(training != 0);
  auto run = [&] {
    Tensor x = Tensor::from_vector(hx).reshape(xs).realize().requires_grad_();
    Tensor w = Tensor::from_vector(hw).reshape({32, 32, 5, 5}).realize().requires_grad_();
    Tensor y = x.relu().conv2d(w).relu();
    y.sum().backward();
    return std::make_tuple(y, *x.grad(), *w.grad());
  };
  LayoutRun r;
  auto [y, gx, gw] = run();
  r.names = kernel_names({y, gx, gw});
  auto [vy, vx, vw] = run();
  r.y = vy.to_vector<float>(), r.dx = vx.to_vector<float>(), r.dw = vw.to_vector<float>();
  return r;
}
}  // namespace

TEST(CPUDevice, ConvWeightLayoutKeepsTheValues) {
  cpu::register_device();
  interp::register_device();
  std::vector<float> hx(4 * 32 * 24 * 24), hw(32 * 32 * 5 * 5);
  for (size_t n = 0; n < hx.size(); n++) hx[n] = std::sin(0.37f * (float)n) - 0.1f;
  for (size_t n = 0; n < hw.size(); n++) hw[n] = 0.05f * std::cos(0.11f * (float)n);
  const Shape xs{4, 32, 24, 24};
  LayoutRun ref = layout_run(0, 1, xs, hx, hw), ours = layout_run(1, 1, xs, hx, hw);
  EXPECT_EQ(ours.names.size(), ref.names.size() + 1) << "training: one kernel copies the weights";
  // the forward gets 8 lanes along the output channels, now one weight vector per tap, and 5 neighbor rows along an
  // image row (heuristic.cpp, cpu_register_tile); the gradients keep their tiles
  std::vector<std::string> changed;
  for (const std::string& n : ours.names)
    if (n.rfind("r_", 0) == 0 && std::find(ref.names.begin(), ref.names.end(), n) == ref.names.end())
      changed.push_back(n);
  ASSERT_EQ(changed.size(), 1u) << ::testing::PrintToString(changed);
  EXPECT_NE(changed[0].find("_8_5_32_5_5"), std::string::npos) << changed[0];
  ASSERT_EQ(ref.dx.size(), ours.dx.size());
  ASSERT_EQ(ref.dw.size(), ours.dw.size());
  EXPECT_EQ(0, std::memcmp(ref.y.data(), ours.y.data(), ours.y.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(ref.dx.data(), ours.dx.data(), ours.dx.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(ref.dw.data(), ours.dw.data(), ours.dw.size() * sizeof(float)));
  EXPECT_EQ(layout_run(1, 0, xs, hx, hw).names.size(), layout_run(0, 0, xs, hx, hw).names.size())
      << "forward-only: no copy";
  // 2 images of 5x5: one output position each, every weight used twice per call
  std::vector<float> small(2 * 32 * 5 * 5);
  for (size_t n = 0; n < small.size(); n++) small[n] = std::sin(0.3f * (float)n);
  EXPECT_EQ(layout_run(1, 1, {2, 32, 5, 5}, small, hw).names.size(),
            layout_run(0, 1, {2, 32, 5, 5}, small, hw).names.size())
      << "a convolution whose weights are used twice per call reads them as they are";
}

// CPU_TILE (codegen/opt/heuristic.cpp): a weight gradient whose reference tile gathers every vector and whose body is
// too big for an outer product (beautiful_mnist's second convolution, batch 512: 4 x 4 lanes, 20 unrolled image
// columns) grows its last upcast to 16 lanes, 4 rows x 16 lanes, on a host without AVX-512. Only the kernels are built.
TEST(CPUDevice, GatheredWeightGradientTileGrowsTo16Lanes) {
  cpu::register_device();
  interp::register_device();
  if (host_has_avx512()) GTEST_SKIP() << "the gathered tiles are not used with AVX-512";
  Tensor x = Tensor::ones({512, 32, 24, 24}).contiguous().requires_grad_();
  Tensor w = Tensor::ones({32, 32, 5, 5}).contiguous().requires_grad_();
  Tensor g = Tensor::ones({512, 32, 20, 20}).contiguous();
  (x.relu().conv2d(w) * g).sum().backward();
  std::vector<std::string> names = kernel_names({*w.grad()});
  EXPECT_NE(std::find(names.begin(), names.end(), "r_8_5_5_128_2_4_16_4_20_20"), names.end())
      << ::testing::PrintToString(names);
}

// CPU_TILE (codegen/late/program.cpp, skip_gated_reduce_loops): a convolution's input gradient is the reference's
// transposed convolution, sum over a 6x6 window of where(valid, sum over channels of w * g, 0), valid on 25 of its 36
// taps. With the register tile the tap loop is not unrolled, so valid is the same for the whole tile and the channel
// loop runs inside IF(valid); the gradients stay bit-identical (RegisterTileKeepsTheReferenceSums).
namespace {
// the loops (RANGE) that run inside an IF, over the reduce kernels of the gradients of relu(conv2d(relu(x), w))
int loops_inside_ifs(std::span<const UOp> lin) {
  int depth = 0, n = 0;
  for (const UOp& u : lin) {
    depth += u.op() == Ops::IF ? 1 : u.op() == Ops::ENDIF ? -1 : 0;
    n += depth > 0 && u.op() == Ops::RANGE;
  }
  return n;
}
int conv_loops_inside_ifs(int64_t tile) {
  Context c({{"CPU_TILE", tile}});
  Tensor x = Tensor::ones({16, 32, 12, 12}).contiguous().realize().requires_grad_();
  Tensor w = Tensor::ones({32, 32, 5, 5}).contiguous().realize().requires_grad_();
  x.relu().conv2d(w).relu().sum().backward();
  int n = 0;
  UOp linear = Tensor::schedule_linear({*x.grad(), *w.grad()});
  for (const UOp& call : linear.src())
    if (call.src(0).op() == Ops::SINK) n += loops_inside_ifs(to_program(call.src(0), dev().renderer()).src(1).src());
  return n;
}
}  // namespace

TEST(CPUDevice, TransposedConvolutionSkipsItsInvalidTaps) {
  cpu::register_device();
  interp::register_device();
  EXPECT_EQ(conv_loops_inside_ifs(0), 0) << "the reference's programs have no loop inside an IF";
  EXPECT_GE(conv_loops_inside_ifs(1), 1) << "the input gradient's channel loop is not gated by its tap's validity";
}

// A loop whose accumulators are read without the WHERE of its gate keeps running: a padded sum's loads are gated per
// output column, and its accumulators are stored as they are
TEST(CPUDevice, ALoopReadWithoutItsGateIsNotSkipped) {
  cpu::register_device();
  interp::register_device();
  Context c({{"CPU_TILE", 1}});
  const int64_t K = 64, J = 24;
  std::vector<float> host(K * J);
  for (size_t n = 0; n < host.size(); n++) host[n] = std::cos(0.01f * (float)n);
  Tensor x = Tensor::from_vector(host).reshape({K, J}).realize();
  Tensor y = x.pad({{0, 0}, {3, 5}}).sum(0);
  UOp linear = Tensor::schedule_linear({y});
  for (const UOp& call : linear.src()) {
    if (call.src(0).op() == Ops::SINK) {
      EXPECT_EQ(loops_inside_ifs(to_program(call.src(0), dev().renderer()).src(1).src()), 0);
    }
  }
  std::vector<float> got = x.pad({{0, 0}, {3, 5}}).sum(0).to_vector<float>();
  ASSERT_EQ(got.size(), (size_t)(J + 8));
  for (int64_t j = 0; j < J + 8; j++) {
    double s = 0;
    for (int64_t k = 0; j >= 3 && j < J + 3 && k < K; k++) s += host[k * J + (j - 3)];
    EXPECT_NEAR(got[j], s, 1e-4) << j;
  }
}

// LOOP_ORDER (codegen/late/linearizer.cpp): the output loops of a CPU kernel nest so the one whose step moves the
// memory accesses least runs innermost. y[i, j] = sum_k x[k, j, i] over a 1.5 MB x: the reference's order (the
// output's, i outer, j inner) steps j through x with a stride of I floats; LOOP_ORDER=1 puts i (stride 1 in x, and
// the reduction's loads run K times per output) innermost. Only the nesting changes: the values are bit-identical.
namespace {
struct LoopOrderRun {
  std::vector<pyint> loops;  // the output loops' sizes, outermost first
  std::vector<float> values;
};
LoopOrderRun loop_order_run(int64_t loop_order, const Tensor& x) {
  Context c({{"LOOP_ORDER", loop_order}});
  Tensor y = x.permute({2, 1, 0}).sum(2);
  LoopOrderRun r;
  UOp linear = Tensor::schedule_linear({y});
  for (const UOp& call : linear.src()) {
    if (call.src(0).op() != Ops::SINK) continue;
    UOp prg = to_program(call.src(0), dev().renderer());
    for (const UOp& u : prg.src(1).src())
      if (u.op() == Ops::RANGE && u.arg().items().back().as_axis() != AxisType::REDUCE)
        r.loops.push_back(u.vmax().as_int() + 1);
  }
  r.values = x.permute({2, 1, 0}).sum(2).to_vector<float>();
  return r;
}
}  // namespace

TEST(CPUDevice, LoopOrderPutsTheLeastMovingOutputLoopInnermost) {
  cpu::register_device();
  interp::register_device();  // host data arrives through the PYTHON device
  const int64_t K = 128, J = 48, I = 64;
  std::vector<float> host(K * J * I);
  for (size_t n = 0; n < host.size(); n++) host[n] = std::sin(0.001f * (float)n) + 0.25f;
  Tensor x = Tensor::from_vector(host).reshape({K, J, I}).realize();
  LoopOrderRun ref = loop_order_run(0, x), ours = loop_order_run(1, x);
  // the same loops in the other nesting: the reference's outermost loop is over i, ours over j
  ASSERT_GE(ref.loops.size(), 2u);
  EXPECT_NE(ref.loops, ours.loops);
  std::vector<pyint> a = ref.loops, b = ours.loops;
  std::sort(a.begin(), a.end()), std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  EXPECT_EQ(ref.loops.front(), ours.loops.back()) << "the reference's outer loop (over i) is innermost";
  // bit-identical values, and the sums they should be
  ASSERT_EQ(ours.values.size(), (size_t)(I * J));
  EXPECT_EQ(0, std::memcmp(ref.values.data(), ours.values.data(), ours.values.size() * sizeof(float)));
  for (int64_t i = 0; i < I; i++)
    for (int64_t j = 0; j < J; j++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) s += host[(k * J + j) * I + i];
      EXPECT_NEAR(ours.values[i * J + j], s, 1e-3) << i << "," << j;
    }
}
