// Training parity with the reference (gen_mnist_goldens.py): examples/beautiful_mnist with seed 1337 on Debian's
// Fashion-MNIST must give the reference's loss at each of its first 10 steps, for each CPU renderer.
// Skipped when the dataset is not installed (scripts/install-deps.sh installs it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

std::map<int, double> parse_losses(std::istream& in) {
  std::map<int, double> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string w, l;
    int n;
    double v;
    if (ss >> w >> n >> l >> v && w == "step" && l == "loss") out[n] = v;
  }
  return out;
}

// the first 10 losses of a run with DEV=dev against the reference's run with the same DEV (its losses as printed)
void check_losses(const char* dev, const char* goldens, double tol = 2e-6) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz") &&
      !std::getenv("FASHION_MNIST_PATH"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  std::ifstream g(std::string(TG_TEST_DATA) + "/" + goldens);
  std::map<int, double> want = parse_losses(g);
  ASSERT_GE(want.size(), 10u);
  std::string cmd = std::string("DEV=") + dev + " " + TG_MNIST_BIN + " --steps 10 --seed 1337 --bs 512 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int rc = pclose(p);
  ASSERT_EQ(rc, 0) << out;
  std::istringstream ss(out);
  std::map<int, double> got = parse_losses(ss);
  ASSERT_EQ(got.size(), 10u) << out;
  // training parity asks for 1e-3; every device computes the reference's arithmetic, so the printed digits agree
  for (int i = 0; i < 10; i++) EXPECT_NEAR(got[i], want[i], tol) << "step " << i << " DEV=" << dev << "\n" << out;
}

// DEV=CPU: the reference's default (C compiled by clang), mnist_goldens_clang.txt
}  // namespace

TEST(MnistParity, FirstTenLossesMatchTheReference) { check_losses("CPU", "mnist_goldens_clang.txt"); }
// DEV=CPU:LLVM: the reference's LLVM IR backend. Its divisions carry afn/arcp, which let LLVM use the host's
// reciprocal estimate instructions (refined; AVX-512's are 14-bit, AVX2's 12-bit), so the reference itself gives other
// last digits on a host without AVX-512 (1.077739 against 1.077738 at step 4, 8e-4 apart by step 6). One golden per instruction set, both from gen_mnist_goldens.py with DEV=CPU:LLVM: mnist_goldens.txt on an
// AVX-512 host (AMD Zen 5; an Intel Xeon gives the same), mnist_goldens_avx2.txt on an AVX2 host (AMD Zen 3).
TEST(MnistParity, FirstTenLossesMatchTheReferenceLLVM) {
  __builtin_cpu_init();
  check_losses("CPU:LLVM", __builtin_cpu_supports("avx512f") ? "mnist_goldens.txt" : "mnist_goldens_avx2.txt");
}
// DEV=CL on PoCL: the same OpenCL C as the reference's, built by the same PoCL, gives the same printed digits: the
// golden comes from AMD Zen 3 (AVX2), and an Intel Xeon with AVX-512 prints the same ten losses, so the bound is the
// print resolution, as for the CPU renderers.
TEST(MnistParity, FirstTenLossesMatchTheReferenceCL) { check_losses("CL", "mnist_goldens_cl.txt"); }
