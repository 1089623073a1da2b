// Port of tinygrad/mixin/rand.py: threefry random numbers (rand, randn, uniform, randint, normal and the initializers),
// dropout and scaled dot-product attention, written once for UOp and Tensor (see lib/mixin/dtype.h). The random ones
// need Self's per-device RNG counter (`next_counter`), which only Tensor keeps: on UOp they throw, as in the
// reference.
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "lib/mixin/op.h"

namespace tg {

template <class S>
class RandMixin : public OpMixin<S> {
 public:
  static S random_bits(const S& key, const S& counter, pyint num);
  // uniform over [0, 1); a null `device` is the default device
  static S rand(const Shape& shape, DType dtype = DType(), const Arg& device = {}, bool contiguous = true);
  S rand_like(DType dtype = DType(), bool contiguous = true) const;
  S randn_like(DType dtype = DType()) const;
  static S randn(const Shape& shape, DType dtype = DType(), const Arg& device = {});
  static S randint(const Shape& shape, pyint low = 0, pyint high = 10, DType dtype = DType(), const Arg& device = {});
  static S normal(const Shape& shape, double mean = 0.0, double std = 1.0, DType dtype = DType(),
                  const Arg& device = {});
  static S uniform(const Shape& shape, PyConst low = 0.0, PyConst high = 1.0, DType dtype = DType(),
                   const Arg& device = {});
  static S scaled_uniform(const Shape& shape, DType dtype = DType(), const Arg& device = {});
  static S glorot_uniform(const Shape& shape, DType dtype = DType(), const Arg& device = {});
  static S kaiming_uniform(const Shape& shape, double a = 0.01, DType dtype = DType(), const Arg& device = {});
  static S kaiming_normal(const Shape& shape, double a = 0.01, DType dtype = DType(), const Arg& device = {});
  static S randperm(int64_t n, const Arg& device = {}, DType dtype = dtypes::int32);
  // zeroes elements with probability p and scales the rest by 1/(1-p), only when TRAINING is set
  S dropout(double p = 0.5) const;
  // self is the query; a bool attn_mask masks with -inf, another one is added
  S scaled_dot_product_attention(const S& key, const S& value, const std::optional<S>& attn_mask = std::nullopt,
                                 double dropout_p = 0.0, bool is_causal = false, bool enable_gqa = false) const;

 protected:
  using OpMixin<S>::self;
};

}  // namespace tg
