// Training mode (Tensor::train, the TRAINING ContextVar of helpers.py) and dropout (mixin/rand.py).
#include <string>

#include "lib/pyfmt.h"
#include "lib/tensor.h"

namespace tg {

Tensor::TrainGuard::TrainGuard(bool mode) : old_(TRAINING.value()) { TRAINING.set(mode ? 1 : 0); }
Tensor::TrainGuard::~TrainGuard() { TRAINING.set(old_); }

bool Tensor::training() { return TRAINING.value() != 0; }

Tensor Tensor::dropout(double p) const {
  if (!(0 <= p && p <= 1)) throw Error("dropout: p=" + py_float_repr(p) + " is out of range [0, 1]");
  if (!TRAINING.value() || p == 0) return *this;
  if (p == 1) return wrap(uop().const_like(0));
  Tensor keep = rand(shape(), dtypes::default_float(), device(), false) >= p;
  return keep.contiguous().where(*this, 0) / (1.0 - p);
}

}  // namespace tg
