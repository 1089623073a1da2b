// The tensor programs of gen_tensor_goldens.py, written with the C++ Tensor API (same order, same graphs).
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lib/tensor.h"

namespace tensor_programs {

using tg::Index;
using tg::PyConst;
using tg::Shape;
using tg::sint;
using tg::Tensor;
namespace dtypes = tg::dtypes;

inline std::vector<PyConst> vals(int64_t n, int64_t k = 0) {
  std::vector<PyConst> v;
  for (int64_t i = 0; i < n; i++) v.emplace_back((double)((i * 7 + k * 3) % 11 - 5) * 0.25);
  return v;
}
inline std::vector<PyConst> ivals(int64_t n, int64_t k = 0) {
  std::vector<PyConst> v;
  for (int64_t i = 0; i < n; i++) v.emplace_back((tg::pyint)((i * 7 + k * 3) % 11 - 5));
  return v;
}
inline int64_t prod(const std::vector<int64_t>& s) {
  int64_t r = 1;
  for (int64_t x : s) r *= x;
  return r;
}
inline Shape shp(const std::vector<int64_t>& s) {
  Shape r;
  for (int64_t x : s) r.push_back(sint((tg::pyint)x));
  return r;
}
// F(*shape, k): Tensor(vals(prod(shape), k)).reshape(shape)
inline Tensor F(const std::vector<int64_t>& s, int64_t k = 0) {
  int64_t n = prod(s);
  return Tensor::from_values(vals(n, k), shp({n}), dtypes::float32).reshape(shp(s));
}
inline Tensor I(const std::vector<int64_t>& s, int64_t k = 0) {
  int64_t n = prod(s);
  return Tensor::from_values(ivals(n, k), shp({n}), dtypes::int32).reshape(shp(s));
}
inline Tensor ints(const std::vector<int64_t>& v) {
  std::vector<PyConst> p;
  for (int64_t x : v) p.emplace_back((tg::pyint)x);
  return Tensor::from_values(p, shp({(int64_t)v.size()}), dtypes::int32);
}
inline Index sl(std::optional<int64_t> a, std::optional<int64_t> b, std::optional<int64_t> c = std::nullopt) {
  auto o = [](std::optional<int64_t> x) { return x ? std::optional<sint>(sint((tg::pyint)*x)) : std::nullopt; };
  return Index::slice(o(a), o(b), o(c));
}
inline std::function<std::vector<Tensor>()> seeded(int64_t seed, std::function<std::vector<Tensor>()> f) {
  return [seed, f] {
    Tensor::manual_seed(seed);
    return f();
  };
}

using Program = std::pair<std::string, std::function<std::vector<Tensor>()>>;

inline const std::vector<Program>& programs() {
  static const std::vector<Program> p = {
      {"add_scalar", [] { return std::vector<Tensor>{F({4}) + 1}; }},
      {"ew_chain",
       [] {
         return std::vector<Tensor>{(F({3, 4}) * 2 - F({3, 4}, 1)).relu() / 3};
       }},
      {"ew_exp_log",
       [] {
         return std::vector<Tensor>{(F({2, 5}).exp() + 1).log()};
       }},
      {"sqrt_abs",
       [] {
         return std::vector<Tensor>{F({4, 4}).abs().sqrt()};
       }},
      {"sigmoid",
       [] {
         return std::vector<Tensor>{F({3, 3}).sigmoid()};
       }},
      {"tanh", [] { return std::vector<Tensor>{F({8}).tanh()}; }},
      {"where",
       [] {
         return std::vector<Tensor>{(F({4, 4}) > 0).where(F({4, 4}), F({4, 4}, 1))};
       }},
      {"cmp_eq", [] { return std::vector<Tensor>{F({6}) == F({6}, 2)}; }},
      {"neg", [] { return std::vector<Tensor>{-F({5})}; }},
      {"pow", [] { return std::vector<Tensor>{F({4}).abs().pow(1.5)}; }},
      {"maximum",
       [] {
         return std::vector<Tensor>{F({3, 4}).maximum(F({3, 4}, 1))};
       }},
      {"sin", [] { return std::vector<Tensor>{F({7}).sin()}; }},
      {"bcast_row",
       [] {
         return std::vector<Tensor>{F({3, 4}) + F({4}, 1)};
       }},
      {"bcast_col",
       [] {
         return std::vector<Tensor>{F({3, 1}) * F({1, 4}, 1)};
       }},
      {"bcast_3d",
       [] {
         return std::vector<Tensor>{F({2, 1, 3}) - F({4, 1}, 1)};
       }},
      {"sum_all",
       [] {
         return std::vector<Tensor>{F({4, 5}).sum()};
       }},
      {"sum_ax0",
       [] {
         return std::vector<Tensor>{F({4, 5}).sum(0)};
       }},
      {"sum_ax1",
       [] {
         return std::vector<Tensor>{F({4, 5}).sum(1)};
       }},
      {"sum_3d_ax0",
       [] {
         return std::vector<Tensor>{F({2, 3, 4}).sum(0)};
       }},
      {"sum_3d_ax1",
       [] {
         return std::vector<Tensor>{F({2, 3, 4}).sum(1)};
       }},
      {"sum_3d_ax2_keep",
       [] {
         return std::vector<Tensor>{F({2, 3, 4}).sum(2, true)};
       }},
      {"sum_3d_ax02",
       [] {
         return std::vector<Tensor>{F({2, 3, 4}).sum({0, 2})};
       }},
      {"max_ax0",
       [] {
         return std::vector<Tensor>{F({4, 5}).max(0)};
       }},
      {"min_ax1",
       [] {
         return std::vector<Tensor>{F({4, 5}).min(1)};
       }},
      {"mean",
       [] {
         return std::vector<Tensor>{F({3, 6}).mean()};
       }},
      {"var",
       [] {
         return std::vector<Tensor>{F({3, 6}).var(1)};
       }},
      {"prod",
       [] {
         return std::vector<Tensor>{F({2, 3}).prod(1)};
       }},
      {"argmax",
       [] {
         return std::vector<Tensor>{F({4, 5}).argmax(1)};
       }},
      {"matmul_sq",
       [] {
         return std::vector<Tensor>{F({4, 4}).matmul(F({4, 4}, 1))};
       }},
      {"matmul_odd",
       [] {
         return std::vector<Tensor>{F({3, 5}).matmul(F({5, 7}, 1))};
       }},
      {"matmul_vec",
       [] {
         return std::vector<Tensor>{F({5}).matmul(F({5, 3}, 1))};
       }},
      {"matmul_batch",
       [] {
         return std::vector<Tensor>{F({2, 3, 4}).matmul(F({2, 4, 5}, 1))};
       }},
      {"matmul_17",
       [] {
         return std::vector<Tensor>{F({17, 13}).matmul(F({13, 9}, 1))};
       }},
      {"dot_sum",
       [] {
         return std::vector<Tensor>{F({4, 4}).matmul(F({4, 4}, 1)).sum()};
       }},
      {"pad",
       [] {
         return std::vector<Tensor>{F({3, 3}).pad({{1, 1}, {2, 0}})};
       }},
      {"pad_value",
       [] {
         return std::vector<Tensor>{F({2, 3}).pad({{0, 1}, {1, 1}}, "constant", -1.0)};
       }},
      {"shrink",
       [] {
         return std::vector<Tensor>{F({5, 5}).shrink({{1, 4}, {0, 2}})};
       }},
      {"flip",
       [] {
         return std::vector<Tensor>{F({3, 4}).flip(0)};
       }},
      {"flip_both",
       [] {
         return std::vector<Tensor>{F({3, 4}).flip(std::vector<int64_t>{0, 1})};
       }},
      {"permute",
       [] {
         return std::vector<Tensor>{F({2, 3, 4}).permute({2, 0, 1})};
       }},
      {"transpose_add",
       [] {
         return std::vector<Tensor>{F({3, 4}).T() + F({4, 3}, 1)};
       }},
      {"reshape",
       [] {
         return std::vector<Tensor>{F({12}).reshape(shp({3, 4})) * 2};
       }},
      {"expand",
       [] {
         return std::vector<Tensor>{F({1, 4}).expand(tg::OptShape(shp({3, 4}))) + 1};
       }},
      {"slice_step",
       [] {
         return std::vector<Tensor>{F({6, 6})[{sl(1, 5, 2), sl(std::nullopt, std::nullopt, 3)}]};
       }},
      {"getitem_int",
       [] {
         return std::vector<Tensor>{F({4, 5})[2]};
       }},
      {"getitem_neg",
       [] {
         return std::vector<Tensor>{F({4, 5})[{sl(std::nullopt, std::nullopt), Index(-1)}]};
       }},
      {"getitem_none",
       [] {
         return std::vector<Tensor>{F({4})[{Index(std::nullopt), sl(std::nullopt, std::nullopt), Index(std::nullopt)}]};
       }},
      {"tensor_index",
       [] {
         return std::vector<Tensor>{F({5, 3})[{Index(ints({0, 2, 4, 1}).uop())}]};
       }},
      {"gather",
       [] {
         return std::vector<Tensor>{F({3, 4}).gather(1, ints({0, 1, 2, 3, 1, 1}).reshape(shp({3, 2})))};
       }},
      {"softmax",
       [] {
         return std::vector<Tensor>{F({3, 5}).softmax()};
       }},
      {"log_softmax",
       [] {
         return std::vector<Tensor>{F({3, 5}).log_softmax(0)};
       }},
      {"cat",
       [] {
         return std::vector<Tensor>{F({2, 3}).cat({F({1, 3}, 1)}, 0)};
       }},
      {"cat_dim1",
       [] {
         return std::vector<Tensor>{F({2, 3}).cat({F({2, 2}, 1)}, 1)};
       }},
      {"stack",
       [] {
         return std::vector<Tensor>{Tensor::stack({F({3}), F({3}, 1), F({3}, 2)})};
       }},
      {"cast_f2i", [] { return std::vector<Tensor>{F({6}).cast(dtypes::int32)}; }},
      {"cast_i2f", [] { return std::vector<Tensor>{I({6}).cast(dtypes::float32) / 2}; }},
      {"cast_f2h", [] { return std::vector<Tensor>{F({6}).cast(dtypes::float16)}; }},
      {"half_math", [] { return std::vector<Tensor>{F({6}).half() * 3}; }},
      {"cast_bool", [] { return std::vector<Tensor>{F({6}).cast(dtypes::bool_)}; }},
      {"cast_u8", [] { return std::vector<Tensor>{I({6}).cast(dtypes::uint8)}; }},
      {"int_arith", [] { return std::vector<Tensor>{I({8}) * 3 + I({8}, 1)}; }},
      {"int_floordiv", [] { return std::vector<Tensor>{I({8}).floordiv(3)}; }},
      {"int_mod", [] { return std::vector<Tensor>{I({8}) % 3}; }},
      {"bitwise", [] { return std::vector<Tensor>{(I({8}) & 6) | 1}; }},
      {"shift", [] { return std::vector<Tensor>{I({8}).abs() << 2}; }},
      {"double", [] { return std::vector<Tensor>{F({4}).cast(dtypes::float64) * 1.5}; }},
      {"int64", [] { return std::vector<Tensor>{I({4}).cast(dtypes::int64) * 1000000}; }},
      {"arange", [] { return std::vector<Tensor>{Tensor::arange(10)}; }},
      {"arange_float", [] { return std::vector<Tensor>{Tensor::arange(0, PyConst(2), 0.25)}; }},
      {"eye", [] { return std::vector<Tensor>{Tensor::eye(4)}; }},
      {"linspace", [] { return std::vector<Tensor>{Tensor::linspace(0, 1, 5)}; }},
      {"ones_zeros",
       [] {
         return std::vector<Tensor>{Tensor::ones(shp({3, 3})) + Tensor::zeros(shp({3, 3}))};
       }},
      {"full",
       [] {
         return std::vector<Tensor>{Tensor::full(shp({2, 3}), 7.0)};
       }},
      {"rand", seeded(42, [] { return std::vector<Tensor>{Tensor::rand(shp({5}))}; })},
      {"randn", seeded(1,
                       [] {
                         return std::vector<Tensor>{Tensor::randn(shp({2, 3}))};
                       })},
      {"randint", seeded(3, [] { return std::vector<Tensor>{Tensor::randint(shp({8}), 0, 10)}; })},
      {"uniform", seeded(5, [] { return std::vector<Tensor>{Tensor::uniform(shp({4}), PyConst(-1), PyConst(1))}; })},
      {"multi_out",
       [] {
         Tensor a = F({6});
         return std::vector<Tensor>{a * 2, a + 1};
       }},
      {"multi_shared",
       [] {
         Tensor x = F({4, 4}).exp();
         return std::vector<Tensor>{x.sum(0), x.sum(1)};
       }},
      {"sym_shrink",
       [] {
         tg::UOp vi = tg::UOp::variable("i", 1, 10).bind(3);
         return std::vector<Tensor>{(F({10}).shrink({{sint(0), sint(vi)}}) * 2).sum()};
       }},
      {"sym_sum",
       [] {
         tg::UOp vj = tg::UOp::variable("j", 1, 10).bind(5);
         return std::vector<Tensor>{F({10, 4}).shrink({{sint(0), sint(vj)}, std::nullopt}).sum(0)};
       }},
      {"cumsum", [] { return std::vector<Tensor>{F({6}).cumsum()}; }},
      {"contiguous_chain",
       [] {
         return std::vector<Tensor>{(F({4, 4}).contiguous() + 1).contiguous() * 2};
       }},
      {"conv2d",
       [] {
         return std::vector<Tensor>{F({1, 1, 5, 5}).conv2d(F({2, 1, 3, 3}, 1))};
       }},
      {"max_pool2d",
       [] {
         return std::vector<Tensor>{F({1, 1, 4, 4}).max_pool2d()};
       }},
      {"layernorm",
       [] {
         return std::vector<Tensor>{F({2, 6}).layernorm()};
       }},
      {"triu",
       [] {
         return std::vector<Tensor>{F({4, 4}).triu(1)};
       }},
      {"clip", [] { return std::vector<Tensor>{F({8}).clip(-0.5, 0.5)}; }},
      {"square_mean",
       [] {
         return std::vector<Tensor>{F({3, 3}).pow(2).mean(1)};
       }},
      {"one_hot",
       [] {
         return std::vector<Tensor>{ints({0, 2, 1}).one_hot(4)};
       }},
  };
  return p;
}

}  // namespace tensor_programs
