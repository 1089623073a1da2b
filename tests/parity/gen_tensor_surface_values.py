#!/usr/bin/env python3
# Prints the values behind Tensor.EveryOpOptionOfTheReference (tests/unit/test_tensor.cpp): Tensor ops called with
# the options of their reference twins (reshape with None, split by sizes, avg_pool2d padding and
# count_include_pad, nll_loss weight and ignore_index, sequential over Tensor functions, std, scaled dot-product
# attention, the kaiming initializers, randperm).
# Run from a checkout of tinygrad a9069c17:
#   cd <tinygrad> && PYTHONPATH=. DEV=CPU python3 <repo>/tests/parity/gen_tensor_surface_values.py
from tinygrad import Tensor, dtypes
a = Tensor([3., 1., 2., 5., 4., 0.]).reshape(2, 3)
print("reshape_none", a.reshape(None, 3, 1).shape, a.reshape(-1, None).shape)
print("split_list", [t.tolist() for t in a.split([1, 2], dim=1)])
x = Tensor.arange(16, dtype=dtypes.float).reshape(1, 1, 4, 4)
print("avg_pool_pad", x.avg_pool2d(kernel_size=(2, 2), stride=2, padding=1).flatten().tolist())
print("avg_pool_pad_noinc", x.avg_pool2d(kernel_size=(2, 2), stride=2, padding=1, count_include_pad=False).flatten().tolist())
logp = Tensor([[-1.0, -2.0, -0.5], [-0.3, -1.5, -2.5], [-2.0, -0.1, -3.0]])
Y = Tensor([0, 2, 1])
w = Tensor([1.0, 2.0, 0.5])
print("nll_w", logp.nll_loss(Y, weight=w).item())
print("nll_ign", logp.nll_loss(Y, ignore_index=2).item())
print("nll_w_ign_sum", logp.nll_loss(Y, weight=w, ignore_index=1, reduction="sum").item())
print("sequential", a.sequential([lambda t: t * 2, lambda t: t + 1]).tolist())
print("std", round(a.std().item(), 6), a.std(axis=1).tolist())
q = Tensor.arange(24, dtype=dtypes.float).reshape(1, 2, 3, 4) / 10
k = (Tensor.arange(24, dtype=dtypes.float).reshape(1, 2, 3, 4) / 7).cos()
v = Tensor.arange(24, dtype=dtypes.float).reshape(1, 2, 3, 4).sin()
print("sdpa", [round(z, 6) for z in q.scaled_dot_product_attention(k, v).flatten().tolist()])
print("sdpa_causal", [round(z, 6) for z in q.scaled_dot_product_attention(k, v, is_causal=True).flatten().tolist()])
Tensor.manual_seed(42)
print("kaiming_uniform", Tensor.kaiming_uniform(2, 3).tolist())
Tensor.manual_seed(42)
print("kaiming_normal", Tensor.kaiming_normal(2, 3, a=0.5).tolist())
Tensor.manual_seed(42)
print("randperm", Tensor.randperm(6).tolist())
