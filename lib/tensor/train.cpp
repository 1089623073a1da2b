// Training mode (Tensor::train, the TRAINING ContextVar of helpers.py).
#include <string>

#include "lib/tensor.h"

namespace tg {

Tensor::TrainGuard::TrainGuard(bool mode) : old_(TRAINING.value()) { TRAINING.set(mode ? 1 : 0); }
Tensor::TrainGuard::~TrainGuard() { TRAINING.set(old_); }

bool Tensor::training() { return TRAINING.value() != 0; }


}  // namespace tg
