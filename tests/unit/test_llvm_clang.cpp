// The CPU's CLANG renderer (llvm_clang_rewrite, DEV=CPU): LLVM IR that computes what clang computes from the
// reference's C source. The C renderer writes a uop used once into its user's expression and strips the parens of a
// same-op operand (ADD(c, ADD(d, e)) is the text (c+d+e), evaluated (c+d)+e); clang -O2 fuses a product that is an
// operand of + or - into llvm.fmuladd, the left operand first, never through a negation (clang 14, checked with
// `clang -O2 -S -emit-llvm` on the reference's kernels).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/renderer/llvmir.h"
#include "lib/tensor.h"

using namespace tg;

namespace {

struct Kernel {
  LLVMContext ctx;
  int n = 0;
  UOp val(const char* name) {
    UOp u = UOp::const_(PyConst(1.0 + ++n / 64.0), dtypes::float32);
    ctx.r[u] = std::string("%") + name;
    return u;
  }
  // the rendering of x in a kernel whose uops are `all` (their srcs give the use counts)
  std::string render(const UOp& x, const std::vector<UOp>& all, const char* name = "%x") {
    ctx.uses.clear(), ctx.user.clear();
    for (const UOp& u : all)
      for (const UOp& s : u.src()) ctx.uses[s]++;
    for (const UOp& u : all)
      for (const UOp& s : u.src())
        if (ctx.uses[s] == 1) ctx.user[s] = u;
    for (const UOp& u : all)
      if (!ctx.r.find(u)) ctx.r[u] = u == x ? name : "%t" + std::to_string(ctx.r.size());
    auto out = llvm_clang_rewrite().rewrite(x, CtxRef(&ctx));
    return out ? *out : "<no rule>";
  }
};

TEST(ClangNumerics, ProductUsedOnceIsFused) {
  Kernel k;
  UOp a = k.val("a"), b = k.val("b"), c = k.val("c");
  UOp m = a * b, x = c + m;
  k.ctx.r[m] = "%m";
  EXPECT_EQ(k.render(x, {m, x}), "  %x = call float @llvm.fmuladd.f32(float %a, float %b, float %c)");
  EXPECT_EQ(k.ctx.decls, std::vector<std::string>{"declare float @llvm.fmuladd.f32(float, float, float)"});
  // a product the C renderer keeps in a variable (used twice) is a load in clang's expression: no fusion
  UOp y = m * c;
  EXPECT_EQ(k.render(x, {m, x, y}), "  %x = fadd float %c, %m");
}

TEST(ClangNumerics, LeftProductFirst) {
  Kernel k;
  UOp a = k.val("a"), b = k.val("b"), c = k.val("c"), d = k.val("d");
  UOp m1 = a * b, m2 = c * d, x = m1 + m2;
  k.ctx.r[m1] = "%m1", k.ctx.r[m2] = "%m2";
  EXPECT_EQ(k.render(x, {m1, m2, x}), "  %x = call float @llvm.fmuladd.f32(float %a, float %b, float %m2)");
}

TEST(ClangNumerics, FlattenedSumsAddLeftToRight) {
  Kernel k;
  UOp a = k.val("a"), b = k.val("b"), c = k.val("c"), d = k.val("d");
  UOp m = a * b, inner = d + m, x = c + inner;  // the text (c+d+(a*b)): ((c+d)+a*b)
  k.ctx.r[m] = "%m", k.ctx.r[inner] = "%inner";
  std::vector<UOp> all{m, inner, x};
  EXPECT_EQ(k.render(x, all),
            "  %x_1 = fadd float %c, %d\n"
            "  %x = call float @llvm.fmuladd.f32(float %a, float %b, float %x_1)");
  // the inner sum is evaluated inside its user's expression: nothing of its own
  EXPECT_EQ(k.render(inner, all, "%inner"), "");
  // a product of three is (a*b)*c; fused into a sum as fmuladd(a*b, c, ...)
  UOp p = (a * b) * c, s = d + p;
  k.ctx.r[p] = "%p", k.ctx.r[p.src(0)] = "%ab", k.ctx.r[s] = "%s";
  std::vector<UOp> all2{p.src(0), p, s};
  EXPECT_EQ(k.render(p, all2, "%p"), "  %p_1 = fmul float %a, %b\n  %p = fmul float %p_1, %c");
  EXPECT_EQ(k.render(s, all2, "%s"), "  %s = call float @llvm.fmuladd.f32(float %p_1, float %c, float %d)");
}

TEST(ClangNumerics, SubtractionNegatesAsClangDoes) {
  Kernel k;
  UOp a = k.val("a"), b = k.val("b"), c = k.val("c");
  UOp m = a * b;
  k.ctx.r[m] = "%m";
  UOp x1 = m.alu(Ops::SUB, c), x2 = c.alu(Ops::SUB, m);
  // (a*b)-c is fmuladd(a, b, -c); c-(a*b) is fmuladd(-a, b, c)
  EXPECT_EQ(k.render(x1, {m, x1}),
            "  %x_n = fneg float %c\n"
            "  %x = call float @llvm.fmuladd.f32(float %a, float %b, float %x_n)");
  EXPECT_EQ(k.render(x2, {m, x2}),
            "  %x_n = fneg float %a\n"
            "  %x = call float @llvm.fmuladd.f32(float %x_n, float %b, float %c)");
  // never through a negation: c + -(a*b) stays a sum
  UOp n = m.alu(Ops::NEG), x3 = c + n;
  k.ctx.r[n] = "%n";
  EXPECT_EQ(k.render(x3, {m, n, x3}), "  %x = fadd float %c, %n");
}

// DEV=CPU (the default) compiles with the CLANG renderer, whose fused multiply-add rounds once: (1+2^-12)^2 - 1 is
// 2^-11 + 2^-24 exactly, where a rounded product gives 2^-11
TEST(ClangNumerics, DefaultCpuFusesAsClang) {
  cpu::register_device();
  interp::register_device();  // host data lives on PYTHON
  ASSERT_EQ(get_device("CPU").renderer().target.renderer, "CLANG");
  float v = 1.0f + std::ldexp(1.0f, -12);
  Tensor a = Tensor::from_vector(std::vector<float>{v, v}), c = Tensor::from_vector(std::vector<float>{-1, -1});
  std::vector<float> r = (a * a + c).to_vector<float>();
  EXPECT_EQ(r[0], std::ldexp(1.0f, -11) + std::ldexp(1.0f, -24));
}

}  // namespace
