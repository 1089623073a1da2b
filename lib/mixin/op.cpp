// Port of the pure graph-building part of tinygrad/mixin/op.py: __getitem__ (basic indexing and UOp index tensors),
// arange/linspace/eye/triu/tril, pad modes, dot/matmul/einsum, min/mean/var/std, softmax/log_softmax/logsumexp, cat,
// cumulative ops, argmax/argmin, one_hot, sequential, linear.
#include "lib/mixin/op.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "lib/helpers.h"
#include "lib/mixin/helpers.h"
#include "lib/tensor.h"
#include "lib/tensor/conv_layout.h"
#include "lib/uop/uop.h"

namespace tg {

using namespace mixin;

namespace {
bool has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
std::vector<int64_t> range_vec(int64_t a, int64_t b) {
  std::vector<int64_t> r;
  for (int64_t i = a; i < b; i++) r.push_back(i);
  return r;
}
// python's ceildiv on scalars: -(num // -amt), floats become ints
PyConst ceildiv_const(const PyConst& num, const PyConst& amt) {
  if (!num.is_float() && !amt.is_float()) {
    pyint a = amt.as_int();
    if (a == 0) throw Error("integer division or modulo by zero");
    return PyConst(-floordiv(num.as_int(), -a));
  }
  double n = num.as_float(), a = amt.as_float();
  if (a == 0) throw Error("float floor division by zero");
  return PyConst((pyint)(-std::floor(n / -a)));
}

// one parsed index of _getitem
struct Parsed {
  sint size;
  sint b0, b1;  // boundary
  sint stride = 1;
  bool collapse = false;
  int kind = 0;  // 0 view index, 1 None, 2 tensor
  UOp tensor;
};

// python's slice.indices(length) for int start/stop/step
std::tuple<pyint, pyint, pyint> slice_indices(const std::optional<sint>& start, const std::optional<sint>& stop,
                                              const std::optional<sint>& step, pyint length) {
  pyint st = step ? step->i() : 1;
  if (st == 0) throw Error("slice step cannot be zero");
  pyint lower = st < 0 ? -1 : 0, upper = st < 0 ? length - 1 : length;
  auto fix = [&](const std::optional<sint>& v, pyint dflt) {
    if (!v) return dflt;
    pyint x = v->i();
    if (x < 0) {
      x += length;
      if (x < lower) x = lower;
    } else if (x > upper)
      x = upper;
    return x;
  };
  return {fix(start, st < 0 ? upper : lower), fix(stop, st < 0 ? lower : upper), st};
}
}  // namespace

// ************************* getitem *************************

// _normalize_indices: one Ellipsis becomes the missing full slices
static std::vector<Index> normalize_indices(const UOp& self, std::vector<Index> indices) {
  std::vector<size_t> ell;
  size_t nnone = 0;
  for (size_t i = 0; i < indices.size(); i++) {
    if (indices[i].kind == Index::Kind::Ellipsis) ell.push_back(i);
    if (indices[i].kind == Index::Kind::None) nnone++;
  }
  if (ell.size() > 1) throw Error("getitem: indices can only have a single ellipsis");
  int64_t num_real = (int64_t)(indices.size() - ell.size() - nnone);
  if (num_real > self.ndim())
    throw Error("getitem: too many indices (" + std::to_string(num_real) + ") for " + std::to_string(self.ndim()) +
                "D");
  size_t fill = ell.empty() ? indices.size() : ell[0];
  std::vector<Index> r(indices.begin(), indices.begin() + fill);
  for (int64_t i = 0; i < self.ndim() - num_real; i++) r.push_back(Index::slice());
  if (fill < indices.size()) r.insert(r.end(), indices.begin() + fill + (ell.empty() ? 0 : 1), indices.end());
  return r;
}

static bool is_adv(const Index& i) { return i.kind == Index::Kind::Tensor && !i.tensor.shape().empty(); }

// _parse_view_index
static Parsed parse_view_index(const Index& index, const sint& size) {
  Parsed p;
  if (index.kind == Index::Kind::None) {
    p.size = 1, p.b0 = 0, p.b1 = 1;
    return p;
  }
  if (index.kind == Index::Kind::Int || index.kind == Index::Kind::Tensor) {
    sint i = index.kind == Index::Kind::Int ? index.i : sint(index.tensor);
    if (resolve(s_ge(i, size), false) || resolve(s_lt(i, -size), false))
      throw Error("getitem: index=" + i.str() + " is out of bounds with size=" + size.str());
    sint b = resolve(s_ge(i, 0), false) ? i : i + size;
    p.size = size, p.b0 = b, p.b1 = b + sint(1), p.collapse = true;
    return p;
  }
  // slice
  if (index.step && resolve(s_eq(*index.step, 0) ? SBool(true) : SBool(false), false))
    throw Error("getitem: slice cannot have 0 as step");
  sint start = index.start ? *index.start : sint(0), stop = index.stop ? *index.stop : size;
  sint step = index.step ? *index.step : sint(1);
  if (start.is_int() && start.i() < 0) start = start + size;
  if (stop.is_int() && stop.i() < 0) stop = stop + size;
  if (start.is_int() && stop.is_int() && step.is_int()) {
    for (const auto* v : {&index.start, &index.stop, &index.step})
      if (*v && !(*v)->is_int()) throw Error("getitem: slice is not supported");
    auto [b0, b1, stride] =
        slice_indices(index.start, index.stop, index.step, size.is_int() ? size.i() : size.u().vmax().as_int());
    if (stride * (b1 - b0) < 0)
      b0 = 0, b1 = 0;
    else if (stride < 0)
      std::tie(b0, b1) = std::make_pair(b1 + 1, b0 + 1);
    p.size = ceildiv(sint(b1 - b0), sint(stride < 0 ? -stride : stride));
    p.b0 = b0, p.b1 = b1, p.stride = stride;
    return p;
  }
  if (resolve(s_eq(step, 1) ? SBool(true) : SBool(false), false) && resolve(s_ge(stop - start, 0), false)) {
    p.size = stop - start, p.b0 = start, p.b1 = stop, p.stride = step;
    return p;
  }
  throw Error("getitem: slice is not supported");
}

// _apply_view_ops: shrink + flip + stride
static UOp apply_view_ops(const UOp& self, const std::vector<Parsed>& mops) {
  PadArg bounds;
  std::vector<int64_t> flips;
  for (size_t i = 0; i < mops.size(); i++) {
    bounds.push_back(OptPair(mops[i].b0, mops[i].b1));
    if (mops[i].stride.is_int() && mops[i].stride.i() < 0) flips.push_back((int64_t)i);
  }
  UOp x = self.shrink(bounds).flip(flips);
  std::vector<pyint> strides;
  bool any = false;
  for (const Parsed& m : mops)
    strides.push_back(m.stride.is_int() ? (m.stride.i() < 0 ? -m.stride.i() : m.stride.i()) : 1);
  for (pyint st : strides) any |= st != 1;
  if (!any) return x;
  if (!all_int(x.shape())) throw Error("getitem: symbolic shape not supported");
  OptShape padded;
  for (size_t i = 0; i < strides.size(); i++) {
    pyint s = x.shape()[i].i(), st = strides[i];
    padded.push_back(sint((s + st - 1) / st * st));
  }
  x = x.pad_to(padded);
  Shape rs, half;
  for (size_t i = 0; i < strides.size(); i++) rs.push_back(x.shape()[i].i() / strides[i]), rs.push_back(strides[i]);
  x = x.reshape(rs);
  OptShape sh;
  for (size_t i = 0; i < x.shape().size(); i += 2)
    sh.push_back(x.shape()[i]), sh.push_back(sint(1)), half.push_back(x.shape()[i]);
  return x.shrink_to(sh).reshape(half);
}

// UOp.__getitem__ on a buffer (a GLOBAL/LOCAL/REG addrspace without a device): slices shrink, the rest INDEX
static UOp buffer_getitem(const UOp& self, const std::vector<Index>& indices) {
  std::vector<Index> idx = normalize_indices(self, indices);
  std::vector<int64_t> slice_idx;
  for (size_t i = 0; i < idx.size(); i++)
    if (idx[i].kind == Index::Kind::Slice) slice_idx.push_back((int64_t)i);
  std::vector<UOp> non_slice;
  for (const Index& x : idx) {
    if (x.kind == Index::Kind::Int)
      non_slice.push_back(UOp::const_(PyConst(x.i.i())));
    else if (x.kind == Index::Kind::Tensor)
      non_slice.push_back(x.tensor);
    else if (x.kind == Index::Kind::None && slice_idx.empty())
      continue;  // index() drops None
    else if (x.kind != Index::Kind::Slice)
      throw Error("getitem: unsupported index on a buffer");
  }
  if (slice_idx.empty()) return self.index(non_slice);
  PadArg bounds;
  for (size_t i = 0; i < idx.size(); i++) {
    const Index& s = idx[i];
    if (s.kind == Index::Kind::Slice) {
      sint a = s.start && !(s.start->is_int() && s.start->i() == 0) ? *s.start : sint(0);
      bounds.push_back(OptPair(a, s.stop ? *s.stop : self.shape()[i]));
    } else
      bounds.push_back(OptPair(0, self.shape()[i]));
  }
  UOp src = self.shrink(bounds);
  if (non_slice.empty()) return src;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < src.ndim(); i++)
    if (!has(slice_idx, i)) perm.push_back(i);
  perm.insert(perm.end(), slice_idx.begin(), slice_idx.end());
  return src.permute(perm).index(non_slice);
}

// the end of _getitem with v: vb (the value in the indexed view's shape, tensor dims already merged) is un-strided,
// flipped and padded back to self's shape, and replaces self where the per-dim masks select
static UOp setitem_merge(const UOp& self, const std::vector<Parsed>& parsed, const std::vector<Parsed>& mops, UOp vb) {
  Shape rs;
  for (const Parsed& p : parsed)
    if (p.kind != 1) rs.push_back(p.collapse ? sint(1) : p.size);
  vb = vb.reshape(rs);
  std::vector<UOp> per_dim;
  std::vector<int64_t> flips;
  PadArg pads;
  for (size_t d = 0; d < mops.size(); d++) {
    const Parsed& m = mops[d];
    if (!m.b0.is_int() || !m.b1.is_int() || !m.stride.is_int() || !self.shape()[d].is_int())
      throw Error("setitem: symbolic indices are not supported");
    pyint s = m.b0.i(), e = m.b1.i(), st = m.stride.i() < 0 ? -m.stride.i() : m.stride.i(), n = self.shape()[d].i();
    if (st != 1 && resolve(s_gt(vb.shape()[d], 1), false)) {  // un-stride: interleave with zeros
      vb = vb.unsqueeze((int64_t)d + 1);
      OptShape pt;
      for (int64_t j = 0; j < vb.ndim(); j++)
        pt.push_back(j == (int64_t)d + 1 ? std::optional<sint>(sint(st)) : std::nullopt);
      vb = vb.pad_to(pt);
      Shape ns = slice(vb.shape(), 0, (int64_t)d);
      ns.push_back(vb.shape()[d] * vb.shape()[d + 1]);
      for (const sint& x : slice(vb.shape(), (int64_t)d + 2, INT64_MAX)) ns.push_back(x);
      vb = vb.reshape(ns);
      OptShape sh;
      for (int64_t j = 0; j < self.ndim(); j++)
        sh.push_back(j == (int64_t)d ? std::optional<sint>(sint(e - s)) : std::nullopt);
      vb = vb.shrink_to(sh);
    }
    Shape ishape(self.shape().size(), sint(1));
    ishape[d] = sint(n);
    UOp idx = UOp::arange(PyConst(n)).reshape(ishape);
    UOp phase = m.stride.i() < 0 ? idx.sub(e - 1, true) : idx.sub(s);
    per_dim.push_back(idx.ge(s).bitwise_and(idx.lt(e)).bitwise_and(phase.mod(st).eq(0)));
    if (m.stride.i() < 0) flips.push_back((int64_t)d);
    pads.push_back(OptPair(sint(s), sint(n - e)));
  }
  vb = vb.flip(flips).pad(pads);
  UOp cond = per_dim.empty() ? UOp::const_(PyConst(true)) : UOp::uprod_of(per_dim);
  return cond.where(vb, self);
}

// _getitem(indices, v): without v (null) the indexed view (__getitem__); with v, self with the indexed elements
// replaced by v (the value __setitem__ assigns or replaces)
static UOp getitem_impl(const UOp& self, const std::vector<Index>& indices, const UOp& v) {
  std::vector<Parsed> parsed;
  int64_t dim = 0;
  for (const Index& index : normalize_indices(self, indices)) {
    sint size =
        index.kind == Index::Kind::None ? sint(1) : self.shape()[norm_index(dim, self.shape().size(), "getitem")];
    Parsed p;
    if (is_adv(index)) {
      if (!dtypes::is_int(index.tensor.dtype()))
        throw Error("getitem: index dtype " + index.tensor.dtype().repr() + " is not supported");
      if (!size.is_int()) throw Error("getitem: size must be an int");
      p.size = size, p.b0 = 0, p.b1 = size, p.kind = 2;
      p.tensor = index.tensor.lt(0).where(index.tensor.add(size), index.tensor);  // treat negative index values
    } else {
      p = parse_view_index(index, size);
      if (index.kind == Index::Kind::None) p.kind = 1;
    }
    parsed.push_back(p);
    if (index.kind != Index::Kind::None) dim++;
  }
  // apply view ops then dim injection (None) and collapse (int)
  std::vector<Parsed> mops, x_dims;
  for (const Parsed& p : parsed)
    if (p.kind != 1) mops.push_back(p);
  UOp x = apply_view_ops(self, mops);
  Shape xs;
  for (const Parsed& p : parsed)
    if (!p.collapse) x_dims.push_back(p), xs.push_back(p.size);
  x = x.reshape(xs);
  // tensor indexing
  std::vector<int64_t> dims;
  std::vector<UOp> tensors;
  for (size_t d = 0; d < x_dims.size(); d++)
    if (x_dims[d].kind == 2) dims.push_back((int64_t)d), tensors.push_back(x_dims[d].tensor);
  if (dims.empty()) return v ? setitem_merge(self, parsed, mops, v.broadcast_to(x.shape())) : x;  // basic get/setitem
  std::vector<Shape> tshapes;
  for (const UOp& t : tensors) tshapes.push_back(t.shape());
  Shape big_shape = broadcast_shape(tshapes);
  bool consecutive = dims == range_vec(dims[0], dims[0] + (int64_t)dims.size());
  Shape ishp;
  for (int64_t d : dims) ishp.push_back(x.shape()[d]);
  if (!v && dims.size() > 1 && consecutive && all_int(ishp)) {
    // consecutive tensor indices with int shapes: linear indexing instead of one-hot masks
    std::vector<UOp> terms, valids;
    for (size_t i = 0; i < dims.size(); i++) {
      terms.push_back(tensors[i].mul(sprod(slice(ishp, (int64_t)i + 1, INT64_MAX))));
      valids.push_back(tensors[i].ge(0).bitwise_and(tensors[i].lt(ishp[i])));
    }
    UOp linear_idx = UOp::usum_of(terms), valid = UOp::uprod_of(valids);
    Shape pre = slice(x.shape(), 0, dims[0]), post = slice(x.shape(), dims.back() + 1, INT64_MAX);
    std::vector<Index> sub(pre.size(), Index::slice());
    sub.push_back(Index(valid.where(linear_idx, 0)));
    UOp xx = x.reshape(concat(concat(pre, {sprod(ishp)}), post)).getitem(sub);
    return valid.reshape(concat(concat(Shape(pre.size(), sint(1)), big_shape), Shape(post.size(), sint(1))))
        .where(xx, 0);
  }
  Shape pre_reduce_shape =
      concat(concat(slice(x.shape(), 0, dims[0]), big_shape), slice(x.shape(), dims[0], INT64_MAX));
  std::vector<UOp> masks;
  for (size_t k = 0; k < dims.size(); k++) {
    UOp i;
    try {
      i = tensors[k].reshape(concat(tensors[k].shape(), Shape(x.ndim() - dims[0], sint(1)))).expand(pre_reduce_shape);
    } catch (const Error& err) {
      throw Error(std::string("getitem: cannot broadcast indices: ") + err.what());
    }
    masks.push_back(i.one_hot_along_dim(x.shape()[dims[k]], dims[k] - x.ndim()));
  }
  UOp mask = UOp::uprod_of(masks);
  Shape reshape_arg = concat(concat(slice(x.shape(), 0, dims[0]), Shape(big_shape.size(), sint(1))),
                             slice(x.shape(), dims[0], INT64_MAX));
  std::vector<int64_t> sum_axis;
  for (int64_t d : dims) sum_axis.push_back(d + (int64_t)big_shape.size());
  UOp x_pre = x;  // the collapsed shape, for advanced setitem
  x = mask.where(x.reshape(reshape_arg), 0).sum(sum_axis, false, x.dtype());
  bool permuted = dims[0] != 0 && dims.size() != 1 && dims != range_vec(dims[0], dims.back() + 1);
  if (permuted) {  // the tensor dims first, for x and for the mask (each with its own ndim)
    auto perm = [&](const UOp& y) {
      std::vector<int64_t> p = range_vec(dims[0], dims[0] + (int64_t)big_shape.size());
      for (int64_t i = 0; i < dims[0]; i++) p.push_back(i);
      for (int64_t i = dims[0] + (int64_t)big_shape.size(); i < y.ndim(); i++) p.push_back(i);
      return y.permute(p);
    };
    x = perm(x), mask = perm(mask);
  }
  if (!v) return x;  // advanced getitem
  // advanced setitem: resolve the tensor dims in the collapsed space, then the basic setitem path
  UOp vb = v.broadcast_to(broadcast_shape({x.shape(), v.shape()}));
  for (int64_t d : sum_axis) vb = vb.unsqueeze(d);  // add back the dims the sum reduced
  int64_t start = permuted ? 0 : dims[0];
  return setitem_merge(self, parsed, mops,
                       x_pre.masked_merge(vb, mask, range_vec(start, start + (int64_t)big_shape.size())));
}

template <class S>
S OpMixin<S>::getitem(const std::vector<Index>& indices) const {
  const UOp& u = self()._uop();
  auto as = u.addrspace();
  UOp r = !(!as || *as == AddrSpace::ALU || !u.device().is_none()) ? buffer_getitem(u, indices)
                                                                    : getitem_impl(u, indices, UOp());
  return r == u ? self() : S::_wrap_uop(r);
}

UOp uop_getitem_set(const UOp& self, const std::vector<Index>& indices, const UOp& v) {
  if (!v) throw Error("setitem: no value");
  return getitem_impl(self, indices, v);
}

template <class S>
S OpMixin<S>::getitem(const S& index) const {
  return getitem({Index(index._uop())});
}
template <class S>
S OpMixin<S>::operator[](int64_t i) const {
  return getitem({Index((long long)i)});
}

// ************************* creation *************************

template <class S>
S OpMixin<S>::arange(PyConst start, std::optional<PyConst> stop_, PyConst step, DType dtype) {
  PyConst stop = stop_ ? *stop_ : start;
  if (!stop_) start = PyConst(0);
  bool pos = py_lt(PyConst(0), step);
  PyConst lo = pos ? start : py_sub(stop, step), hi = pos ? py_sub(stop, step) : start;
  if (!dtype) {
    dtype = (start.is_float() || stop.is_float() || step.is_float()) ? dtypes::default_float() : dtypes::default_int();
    if (dtype == dtypes::default_int() && (py_lt(lo, dtype.min()) || py_lt(dtype.max(), hi))) dtype = dtypes::int64;
  }
  if (py_lt(lo, dtype.min()) || py_lt(dtype.max(), hi))
    throw Error("arange: [" + start.str() + ", " + stop.str() + ") is not representable in dtype " + dtype.repr());
  PyConst output_len = ceildiv_const(py_sub(stop, start), step);
  if (!py_lt(PyConst(0), output_len)) return S::full({sint(0)}, 0, dtype, {}, false);
  return S::full({sint(output_len.as_int())}, step, dtype, {}, false)
      .cumalu(0, Ops::ADD)
      .add(py_sub(start, step))
      .cast(dtype);
}

template <class S>
S OpMixin<S>::linspace(PyConst start, PyConst stop, int64_t steps, DType dtype) {
  if (steps < 0) throw Error("linspace: number of steps must be non-negative");
  if (!dtype) dtype = dtypes::default_float();
  if (dtype == dtypes::bool_) throw Error("linspace with bool dtype is not supported");
  if (steps == 1) return S::full({sint(1)}, start, dtype, {}, false);
  PyConst d = PyConst(py_sub(stop, start).as_float() / (double)(steps - 1));
  return arange(steps, std::nullopt, 1, dtypes::default_float()).mul(d).add(start, true).cast(dtype);
}

template <class S>
S OpMixin<S>::eye(int64_t n, std::optional<int64_t> m, DType dtype) {
  int64_t m_ = m ? *m : n;
  if (n < 0 || m_ < 0) throw Error("eye: cannot have negative n=" + std::to_string(n) + ", m_=" + std::to_string(m_));
  return arange(n).unsqueeze(-1).eq(arange(m_)).cast(dtype ? dtype : dtypes::default_float());
}

template <class S>
static S tri(const sint& r, const sint& c, int64_t diagonal) {
  if (!r.is_int() || !c.is_int()) throw Error("triu/tril: symbolic shapes are not supported");
  return S::arange(PyConst(r.i())).unsqueeze(-1).add(diagonal).le(S::arange(PyConst(c.i())));
}
template <class S>
S OpMixin<S>::triu(int64_t diagonal) const {
  const Shape& sh = self().shape();
  if (sh.size() < 2) throw Error("triu: needs at least 2 dims, got " + shape_str(sh));
  return tri<S>(sh[sh.size() - 2], sh.back(), diagonal).where(self(), self().const_like(0));
}
template <class S>
S OpMixin<S>::tril(int64_t diagonal) const {
  const Shape& sh = self().shape();
  if (sh.size() < 2) throw Error("tril: needs at least 2 dims, got " + shape_str(sh));
  return tri<S>(sh[sh.size() - 2], sh.back(), diagonal + 1).where(self().const_like(0), self());
}

// ************************* pad *************************

using Pairs = std::vector<std::pair<sint, sint>>;

template <class S>
static S pad_constant(const S& self, const Pairs& pX, PyConst value) {
  bool has_neg = false;
  for (const auto& [a, b] : pX) has_neg |= !resolve(s_ge(a, 0)) || !resolve(s_ge(b, 0));
  S X = self;
  PadArg pads;
  if (has_neg) {
    PadArg sh;
    for (size_t i = 0; i < pX.size(); i++) {
      const sint& s = self.shape()[i];
      sh.push_back(OptPair(-smin({pX[i].first, 0}), smin({pX[i].second + s, s})));
      pads.push_back(OptPair(smax({pX[i].first, 0}), smax({pX[i].second, 0})));
    }
    X = self.shrink(sh);
  } else {
    for (const auto& [a, b] : pX) pads.push_back(OptPair(a, b));
  }
  S base_ = X.movement_pad(pads);
  if (value == PyConst(0)) return base_;
  return X.const_like(true, dtypes::bool_).movement_pad(pads).where(base_, value);
}

template <class S>
static S pad_circular(const S& self, const Pairs& pX0) {
  PadArg sh;
  Pairs pX;
  for (size_t i = 0; i < pX0.size(); i++) {
    const sint& s = self.shape()[i];
    sh.push_back(OptPair(-smin({pX0[i].first, 0}), smin({pX0[i].second + s, s})));
    pX.push_back({smax({pX0[i].first, 0}), smax({pX0[i].second, 0})});
  }
  S X = self.shrink(sh);
  for (size_t i = 0; i < pX.size(); i++)
    if (truthy(s_gt(pX[i].first, X.shape()[i])) || truthy(s_gt(pX[i].second, X.shape()[i])))
      throw Error("pad: Padding value causes wrapping around more than once.");
  Shape orig_shape = X.shape();
  std::vector<sint> reps;
  for (const auto& [a, b] : pX) reps.push_back(1 + (int)!s_eq(a, 0) + (int)!s_eq(b, 0));
  X = X.repeat(reps);
  PadArg fin;
  for (size_t i = 0; i < pX.size(); i++) {
    const sint &osh = orig_shape[i], &xsh = X.shape()[i];
    fin.push_back(OptPair(s_eq(pX[i].first, 0) ? sint(0) : osh - pX[i].first,
                          s_eq(pX[i].second, 0) ? xsh : xsh - osh + pX[i].second));
  }
  return X.shrink(fin);
}

template <class S>
static S pad_reflect_replicate(const S& self, const Pairs& pX, std::string_view mode) {
  S X = self;
  for (size_t d = 0; d < pX.size(); d++) {
    pyint pB = std::max<pyint>(pX[d].first.i(), 0), pA = std::max<pyint>(pX[d].second.i(), 0);
    std::optional<S> xB, xA;
    int64_t nd = X.ndim();
    if (mode == "reflect") {
      pyint s = X.shape()[d].i();
      if (pB >= s || pA >= s)
        throw Error("pad: Padding (" + pyint_str(pB) + ", " + pyint_str(pA) +
                    ") should be less than the input size=" + pyint_str(s) + " for dim=" + std::to_string(d) + ".");
      auto sl = [&](Index slc) {
        std::vector<Index> idx;
        for (int64_t i = 0; i < nd; i++) idx.push_back(i == (int64_t)d ? slc : Index::slice());
        return X.getitem(idx);
      };
      if (pB > 0) xB = sl(Index::slice(sint(pB), sint(0), sint(-1)));
      if (pA > 0)
        xA = sl(Index::slice(sint(s - 2), s - 2 - pA >= 0 ? std::optional<sint>(sint(s - 2 - pA)) : std::nullopt,
                             sint(-1)));
    } else {
      PadArg shrB(nd, std::nullopt), shrA(nd, std::nullopt);
      shrB[d] = OptPair(0, 1), shrA[d] = OptPair(X.shape()[d] - sint(1), X.shape()[d]);
      OptShape eB(nd, std::nullopt), eA(nd, std::nullopt);
      eB[d] = sint(pB), eA[d] = sint(pA);
      if (pB > 0) xB = X.shrink(shrB).expand(eB);
      if (pA > 0) xA = X.shrink(shrA).expand(eA);
    }
    std::vector<S> pieces;
    for (const std::optional<S>& p : {xB, std::optional<S>(X), xA})
      if (p) pieces.push_back(*p);
    X = pieces[0].cat(std::span<const S>(pieces).subspan(1), (int64_t)d);
  }
  PadArg fin;
  for (size_t i = 0; i < pX.size(); i++) {
    pyint pB = pX[i].first.i(), pA = pX[i].second.i(), s = X.shape()[i].i();
    fin.push_back(OptPair(sint(-std::min<pyint>(pB, 0)), sint(std::min(pA + s, s))));
  }
  return X.shrink(fin);
}

template <class S>
static S pad_dispatch(const S& self, const Pairs& pX, std::string_view mode, PyConst value,
                        const std::string& desc) {
  if ((int64_t)pX.size() != self.ndim())
    throw Error("pad: padding length is improper, padding=" + desc + " self.ndim=" + std::to_string(self.ndim()));
  if (mode == "constant") return pad_constant(self, pX, value);
  if (!all_int(self.shape())) throw Error("pad: does not support symbolic shape " + shape_str(self.shape()));
  if (mode == "circular") return pad_circular(self, pX);
  if (mode == "reflect" || mode == "replicate") {
    for (const auto& [a, b] : pX)
      if (!a.is_int() || !b.is_int()) throw Error("pad: symbolic pads are not supported in mode=" + std::string(mode));
    return pad_reflect_replicate(self, pX, mode);
  }
  throw Error("pad: mode='" + std::string(mode) + "' is not supported");
}

template <class S>
S OpMixin<S>::pad(const PadArg& padding, std::string_view mode, PyConst value) const {
  Pairs pX;
  std::string desc = "(";
  for (const OptPair& p : padding) {
    pX.push_back(p.none ? std::pair<sint, sint>{0, 0} : std::pair<sint, sint>{p.first, p.second});
    desc += (desc.size() > 1 ? ", " : "") +
            (p.none ? std::string("None") : "(" + p.first.str() + ", " + p.second.str() + ")");
  }
  return pad_dispatch(self(), pX, mode, value, desc + (padding.size() == 1 ? ",)" : ")"));
}

template <class S>
S OpMixin<S>::pad_flat(const std::vector<sint>& padding, std::string_view mode, PyConst value) const {
  if (padding.size() % 2 != 0) throw Error("pad: Flat padding must have even number of pads");
  Pairs pX;
  for (int64_t i = 0; i < this->ndim() - (int64_t)padding.size() / 2; i++) pX.push_back({0, 0});
  // flat_to_grouped: the last pair of pads is the first axis
  for (int64_t i = (int64_t)padding.size() - 2; i >= 0; i -= 2) pX.push_back({padding[i], padding[i + 1]});
  return pad_dispatch(self(), pX, mode, value, shape_str(padding));
}

template <class S>
S OpMixin<S>::pad_to(const OptShape& shape_arg, PyConst value) const {
  S ret = this->movement_pad_to(shape_arg);
  if (value == PyConst(0) || ret._uop() == self()._uop()) return ret;
  return self().const_like(true, dtypes::bool_).movement_pad_to(shape_arg).where(ret, value);
}

// ************************* linear algebra *************************

template <class S>
S OpMixin<S>::dot(const S& w0, DType dtype) const {
  int64_t dx = this->ndim(), dw = w0.ndim();
  if (!(dx > 0 && dw > 0))
    throw Error("dot: both tensors need to be at least 1D, got " + std::to_string(dx) + "D and " + std::to_string(dw) +
                "D");
  int64_t axis_w = -std::min<int64_t>(dw, 2);
  const Shape &xs = self().shape(), &ws = w0.shape();
  if (truthy(s_ne(xs.back(), ws[ws.size() + axis_w])))
    throw Error("dot: cannot dot " + shape_str(xs) + " and " + shape_str(ws));
  int64_t ones = std::min<int64_t>({dx - 1, dw - 1, 1});
  S x = this->reshape(concat(concat(slice(xs, 0, -1), Shape(ones, sint(1))), {xs.back()}));
  S w = w0.reshape(concat(concat(slice(ws, 0, -2), Shape(ones, sint(1))), slice(ws, axis_w, INT64_MAX)))
              .transpose(-1, axis_w);
  return x.mul(w).sum(-1, false, dtype).cast(dtype ? dtype : least_upper_dtype({x.dtype(), w.dtype()}));
}
template <class S>
S OpMixin<S>::matmul(const S& x, bool reverse, DType dtype) const { return reverse ? x.dot(self(), dtype) : dot(x, dtype); }

template <class S>
S OpMixin<S>::linear(const S& weight, const std::optional<S>& bias, DType dtype) const {
  if (dtype) return this->cast(dtype).linear(weight.cast(dtype), bias ? std::optional<S>(bias->cast(dtype)) : std::nullopt);
  S x = weight.shape().size() == 1 ? this->mul(weight) : dot(weight);
  return bias ? x.add(*bias) : x;
}

template <class S>
S OpMixin<S>::einsum(const std::string& formula0, std::span<const S> operands, DType dtype) {
  std::vector<S> xs(operands.begin(), operands.end());
  std::string formula;
  for (char c : formula0)
    if (c != ' ') formula += c;
  auto is_alpha = [](char c) { return std::isalpha((unsigned char)c) != 0; };
  auto count = [](const std::string& s, char c) { return std::count(s.begin(), s.end(), c); };
  auto split = [](const std::string& s, char sep) {
    std::vector<std::string> r{""};
    for (char c : s) c == sep ? r.push_back("") : (void)(r.back() += c);
    return r;
  };
  size_t arrow = formula.find("->");
  if (formula.find("...") != std::string::npos) {
    std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", ell;
    for (char c : letters)
      if (formula.find(c) == std::string::npos) ell += c;
    std::string lhs = arrow == std::string::npos ? formula : formula.substr(0, arrow);
    std::vector<std::string> inputs = split(lhs, ',');
    std::vector<int64_t> ell_n;
    for (size_t i = 0; i < inputs.size() && i < xs.size(); i++)
      ell_n.push_back(inputs[i].find("...") != std::string::npos
                          ? std::max<int64_t>(0, xs[i].ndim() - (int64_t)inputs[i].size() + 3)
                          : 0);
    int64_t mx = ell_n.empty() ? 0 : *std::max_element(ell_n.begin(), ell_n.end());
    for (size_t i = 0; i < inputs.size() && i < ell_n.size(); i++) {
      size_t p = inputs[i].find("...");
      if (p != std::string::npos)
        inputs[i] = inputs[i].substr(0, p) + ell.substr(mx - ell_n[i], ell_n[i]) + inputs[i].substr(p + 3);
    }
    std::string auto_;
    for (char c : lhs)
      if (count(lhs, c) == 1 && is_alpha(c) && ell.find(c) == std::string::npos) auto_ += c;
    std::sort(auto_.begin(), auto_.end());
    std::string new_lhs;
    for (size_t i = 0; i < inputs.size(); i++) new_lhs += (i ? "," : "") + inputs[i];
    std::string rhs;
    if (arrow != std::string::npos) {
      rhs = formula.substr(arrow + 2);
      size_t p = rhs.find("...");
      if (p != std::string::npos) rhs = rhs.substr(0, p) + ell.substr(0, mx) + rhs.substr(p + 3);
    } else
      rhs = ell.substr(0, mx) + auto_;
    formula = new_lhs + "->" + rhs;
    arrow = formula.find("->");
  }
  std::string lhs = arrow == std::string::npos ? formula : formula.substr(0, arrow), rhs;
  if (arrow != std::string::npos)
    rhs = formula.substr(arrow + 2);
  else {
    for (char c : formula)
      if (count(formula, c) == 1 && is_alpha(c)) rhs += c;
    std::sort(rhs.begin(), rhs.end());
  }
  std::vector<std::string> inputs = split(lhs, ',');
  if (xs.size() != inputs.size())
    throw Error("einsum: number of operands doesn't match, expected " + std::to_string(inputs.size()) + ", got " +
                std::to_string(xs.size()));
  // trace: take the diagonal when a letter repeats in one input (python iterates set(s): letters in sorted order here)
  for (size_t i = 0; i < inputs.size(); i++) {
    std::string s = inputs[i], letters = s;
    std::sort(letters.begin(), letters.end());
    letters.erase(std::unique(letters.begin(), letters.end()), letters.end());
    S x = xs[i];
    if ((int64_t)s.size() > x.ndim())
      throw Error("einsum: operand " + std::to_string(i) + " has " + std::to_string(x.ndim()) + " dims, the formula " +
                  s);
    for (char c : letters) {
      while (count(s, c) > 1) {
        int64_t j = (int64_t)s.find(c), k = (int64_t)s.find(c, j + 1);
        sint n = x.shape()[j];
        if (x.ndim() > 2) {
          std::vector<int64_t> perm;
          for (int64_t d = 0; d < x.ndim(); d++)
            if (d != j && d != k) perm.push_back(d);
          perm.push_back(j), perm.push_back(k);
          PadArg pads(x.ndim() - 2, OptPair(0, 0));
          pads.push_back(OptPair(0, n));
          S y = x.permute(perm).flatten(-2).pad(pads).unflatten(-1, {n, n + sint(1)});
          std::vector<Index> idx{Ellipsis, Index(0)};
          x = y.getitem(idx);
        } else
          x = x.diagonal();
        s = s.substr(0, k) + s.substr(k + 1);
      }
    }
    inputs[i] = s, xs[i] = x;
  }
  std::map<char, sint> sz;
  for (size_t i = 0; i < inputs.size(); i++)
    for (size_t k = 0; k < inputs[i].size(); k++) {
      auto it = sz.find(inputs[i][k]);
      if (it != sz.end() && !s_eq(it->second, xs[i].shape()[k]))
        throw Error(std::string("einsum: different sizes for the same letter ") + inputs[i][k]);
      sz.emplace(inputs[i][k], xs[i].shape()[k]);
    }
  for (size_t i = 0; i < inputs.size(); i++) {
    const std::string& s = inputs[i];
    if (s.empty()) continue;
    std::string sorted_s = s;
    std::sort(sorted_s.begin(), sorted_s.end());
    std::vector<int64_t> perm;
    for (char c : sorted_s) perm.push_back((int64_t)s.find(c));
    Shape rs;
    for (const auto& [c, n] : sz) rs.push_back(s.find(c) != std::string::npos ? n : sint(1));
    xs[i] = xs[i].permute(perm).reshape(rs);
  }
  std::vector<int64_t> red;
  int64_t ai = 0;
  for (const auto& [c, n] : sz) {
    if (rhs.find(c) == std::string::npos) red.push_back(ai);
    ai++;
  }
  std::vector<int64_t> as(rhs.size());
  std::iota(as.begin(), as.end(), 0);
  std::sort(as.begin(), as.end(), [&](int64_t a, int64_t b) { return rhs[a] < rhs[b]; });
  std::vector<int64_t> inv(as.size());
  std::iota(inv.begin(), inv.end(), 0);
  std::sort(inv.begin(), inv.end(), [&](int64_t a, int64_t b) { return as[a] < as[b]; });
  return S::uprod_of(xs).sum(red, false, dtype).permute(inv);
}

// ************************* reductions *************************

template <class S>
S OpMixin<S>::min(const AxisArg& axis, bool keepdim) const { return this->inverse_().max(axis, keepdim).inverse_(); }

// prod of the dims that a keepdim reduction changes
template <class S>
static sint reduced_numel(const S& self, const S& reduced_keepdim) {
  Shape ns;
  for (size_t i = 0; i < self.shape().size(); i++)
    if (resolve(s_ne(self.shape()[i], reduced_keepdim.shape()[i]))) ns.push_back(self.shape()[i]);
  return sprod(ns);
}

template <class S>
S OpMixin<S>::mean(const AxisArg& axis, bool keepdim) const {
  DType output_dtype = dtypes::is_float(self().dtype()) ? self().dtype() : dtypes::float32;
  S numerator = this->cast(sum_acc_dtype(self().dtype())).sum(axis, keepdim);
  sint denominator = reduced_numel(self(), this->sum(axis, true));
  return numerator.div(denominator).cast(output_dtype);
}
template <class S>
S OpMixin<S>::var(const AxisArg& axis, bool keepdim, PyConst correction) const {
  DType output_dtype = dtypes::is_float(self().dtype()) ? self().dtype() : dtypes::float32;
  S squares = this->sub(mean(axis, true)).square();
  sint n = reduced_numel(self(), squares.sum(axis, true));
  S numerator = squares.cast(sum_acc_dtype(self().dtype())).sum(axis, keepdim);
  operand_t<S> den = PyConst(0);
  if (n.is_int()) {
    PyConst d = py_sub(PyConst(n.i()), correction);
    den = py_lt(d, PyConst(0)) ? PyConst(0) : d;  // python max(n - correction, 0)
  } else {
    den = sint(n.u().sub(correction).maximum(0).ssimplify());
  }
  return numerator.div(den).cast(output_dtype);
}
template <class S>
std::pair<S, S> OpMixin<S>::var_mean(const AxisArg& axis, bool keepdim, PyConst correction) const {
  return {var(axis, keepdim, correction), mean(axis, keepdim)};
}
template <class S>
S OpMixin<S>::std(const AxisArg& axis, bool keepdim, PyConst correction) const {
  return var(axis, keepdim, correction).sqrt();
}
template <class S>
std::pair<S, S> OpMixin<S>::std_mean(const AxisArg& axis, bool keepdim, PyConst correction) const {
  return {std(axis, keepdim, correction), mean(axis, keepdim)};
}
template <class S>
S OpMixin<S>::normalize(double p, int64_t dim, double eps) const {
  S den = p == 0 ? this->ne(0).sum(dim, true) : this->abs().pow(p).sum(dim, true).pow(1 / p);
  return this->div(den.maximum(eps));
}

template <class S>
S OpMixin<S>::logsumexp(const AxisArg& axis, bool keepdim) const {
  S m = this->max(axis, true).detach();
  S ms = m;
  if (!keepdim) {
    if (axis.is_none())
      ms = m.squeeze();
    else if (axis.is_scalar())
      ms = m.squeeze(axis.axes()[0]);
    else
      throw Error("logsumexp: keepdim=False needs an int or None axis (squeeze takes one dim)");
  }
  return this->sub(m).exp().sum(axis, keepdim).log().add(ms);
}

template <class S>
static std::tuple<S, S, S> softmax_(const S& self, int64_t axis, DType dtype) {
  S m = self.sub(self.max(axis, true).detach());
  if (dtype) m = m.cast(dtype);
  S e = m.exp();
  return {m, e, e.sum(axis, true)};
}
template <class S>
S OpMixin<S>::softmax(int64_t axis, DType dtype) const {
  auto [m, e, ss] = softmax_(self(), axis, dtype);
  return e.mul(ss.reciprocal());
}
template <class S>
S OpMixin<S>::log_softmax(int64_t axis, DType dtype) const {
  auto [m, e, ss] = softmax_(self(), axis, dtype);
  return m.sub(ss.log());
}
template <class S>
S OpMixin<S>::softmin(int64_t axis, DType dtype) const { return this->neg().softmax(axis, dtype); }

// ************************* cat and cumulative ops *************************

template <class S>
S OpMixin<S>::cat(std::span<const S> args, int64_t dim) const {
  int64_t d = this->resolve_dim(dim);
  const Shape& sh = self().shape();
  for (const S& a : args) {
    bool ok = a.ndim() == this->ndim();
    for (size_t i = 0; ok && i < sh.size(); i++) ok = (int64_t)i == d || s_eq(sh[i], a.shape()[i]);
    if (!ok)
      throw Error("cat: shapes " + shape_str(sh) + " and " + shape_str(a.shape()) + " differ outside dim " +
                  std::to_string(d));
  }
  bool same = true;
  for (const S& a : args) same &= s_eq(a.shape()[d], sh[d]);
  std::vector<S> tensors{self()};
  tensors.insert(tensors.end(), args.begin(), args.end());
  if (same) return this->stack(tensors, d).flatten(d, d + 1);
  std::vector<sint> cs{sint(0)};
  for (const S& t : tensors) cs.push_back(cs.back() + t.shape()[d]);
  std::vector<S> padded;
  for (size_t i = 0; i < tensors.size(); i++) {
    PadArg p;
    for (int64_t j = 0; j < tensors[i].ndim(); j++)
      p.push_back(j == d ? OptPair(cs[i], cs.back() - cs[i + 1]) : OptPair(std::nullopt));
    padded.push_back(tensors[i].pad(p));
  }
  return this->usum_of(padded);
}

template <class S>
S OpMixin<S>::cumalu(int64_t axis, Ops op) const {
  const sint& n = self().shape()[norm_index(axis, self().shape().size(), "cumalu")];
  if (!truthy(s_ne(n, 0)) || (op != Ops::ADD && op != Ops::MAX && op != Ops::MUL))
    throw Error("cumalu: needs a non-empty axis and ADD, MAX or MUL");
  Pairs pads((size_t)this->ndim() - 1, {sint(0), sint(0)});
  pads.push_back({n - sint(1), sint(0)});
  S pooled = pad_constant(this->transpose(axis, -1), pads, identity_element(op, self().dtype())).pool({n});
  S r = op == Ops::ADD ? pooled.sum(-1) : op == Ops::MAX ? pooled.max(-1) : pooled.prod(-1);
  return r.transpose(axis, -1);
}

template <class S>
S OpMixin<S>::split_cumalu(int64_t axis0, Ops op) const {
  int64_t axis = this->resolve_dim(axis0);
  bool zero = false;
  for (const sint& s : self().shape()) zero |= s_eq(s, 0);
  if (this->ndim() == 0 || zero) return op == Ops::ADD ? this->cast(this->sum().dtype()) : self();
  const int64_t SPLIT = 256;
  PyConst value = identity_element(op, self().dtype());
  const sint& s = self().shape()[axis];
  if (!s.is_int() || s.i() <= SPLIT * 2) return cumalu(axis, op);
  pyint si = s.i(), padn = (si + SPLIT - 1) / SPLIT * SPLIT - si;
  Pairs p1((size_t)this->ndim() - 1, {sint(0), sint(0)});
  p1.push_back({sint(padn), sint(0)});
  S chunks = pad_constant(this->transpose(axis, -1), p1, value).unflatten(-1, {sint(-1), sint(SPLIT)}).cumalu(-1, op);
  Pairs p2((size_t)chunks.ndim() - 2, {sint(0), sint(0)});
  p2.push_back({sint(1), sint(-1)});
  S base_ = pad_constant(chunks.getitem({Ellipsis, Index(-1)}).cumalu(-1, op), p2, value);
  return chunks.alu(op, base_.unsqueeze(-1))
      .flatten(-2)
      .getitem({Ellipsis, Index::slice(sint(-si))})
      .transpose(axis, -1);
}

template <class S>
S OpMixin<S>::cumsum(int64_t axis) const { return split_cumalu(axis, Ops::ADD); }
template <class S>
S OpMixin<S>::cumprod(int64_t axis) const { return split_cumalu(axis, Ops::MUL); }

template <class S>
std::pair<S, S> OpMixin<S>::cummax(int64_t axis) const {
  if (this->ndim() == 0) return {split_cumalu(axis, Ops::MAX), this->zeros(self().shape(), dtypes::int32, {}, false)};
  S values = split_cumalu(axis, Ops::MAX);
  const sint& ns = self().shape()[this->resolve_dim(axis)];
  pyint n = ns.is_int() ? ns.i() : ns.u().as_int();
  S x = this->transpose(axis, -1), values_t = values.transpose(axis, -1);
  S match = x.unsqueeze(-1).eq(values_t.unsqueeze(-2)).mul(this->ones({sint(n), sint(n)}, dtypes::bool_, {}, false).triu());
  S idx = match.mul(arange(PyConst(n), PyConst(0), PyConst(-1)).reshape({sint(n), sint(1)}))
                .max(-2)
                .neg()
                .add(n)
                .cast(dtypes::int32);
  return {values, idx.transpose(-1, axis)};
}
template <class S>
std::pair<S, S> OpMixin<S>::cummin(int64_t axis) const {
  auto [values, indices] = this->inverse_().cummax(axis);
  return {values.inverse_(), indices};
}
template <class S>
S OpMixin<S>::logcumsumexp(int64_t axis) const {
  if (this->ndim() == 0) return self();
  S x = this->transpose(axis, -1);
  sint last = x.shape().back();
  S x_cummax = x.cummax(-1).first.detach();
  S mask = this->ones({last, last}, dtypes::bool_, {}, false).tril();
  S ret = mask.where(x.unsqueeze(-2).sub(x_cummax.unsqueeze(-1)), self().dtype().min()).exp().sum(-1).log().add(x_cummax);
  return ret.transpose(-1, axis);
}

// ************************* argmax, one_hot, misc *************************

template <class S>
S OpMixin<S>::argmax(std::optional<int64_t> axis0, bool keepdim) const {
  if (!axis0) return this->flatten().argmax(0);
  int64_t axis = this->resolve_dim(*axis0);
  const sint& n = self().shape()[axis];
  if (!n.is_int()) throw Error("argmax: symbolic axis sizes are not supported");
  // the reference returns 2^31 wrapped to int32 here (its index of "none found"); an empty axis has no index to give
  if (n.i() == 0)
    throw Error("argmax/argmin of an empty axis: axis " + std::to_string(axis) + " of shape " + mixin::shape_str(self().shape()) +
                " has size 0");
  S m = this->eq(this->max(axis, true));
  Shape rs{n};
  for (int64_t i = 0; i < this->ndim() - axis - 1; i++) rs.push_back(1);
  S idx = m.mul(arange(PyConst(n.i()), PyConst(0), PyConst(-1)).reshape(rs));
  return idx.max(axis, keepdim).sub(n, true).cast(dtypes::int32);
}
template <class S>
S OpMixin<S>::argmin(std::optional<int64_t> axis, bool keepdim) const { return this->inverse_().argmax(axis, keepdim); }

template <class S>
S OpMixin<S>::allclose(const S& other, double rtol, double atol, bool equal_nan) const {
  return this->isclose(other, rtol, atol, equal_nan).all();
}

template <class S>
S OpMixin<S>::one_hot_along_dim(const sint& num_classes, int64_t dim) const {
  if (!dtypes::is_int(self().dtype())) throw Error("_one_hot_along_dim expects int index tensor, getting " + self().dtype().repr());
  if (!num_classes.is_int()) throw Error("one_hot: symbolic num_classes is not supported");
  int64_t offset = this->ndim() - this->resolve_dim(dim) - 1;
  Shape rs{num_classes};
  for (int64_t i = 0; i < offset; i++) rs.push_back(1);
  return this->eq(arange(PyConst(num_classes.i())).reshape(rs));
}
template <class S>
S OpMixin<S>::one_hot(int64_t num_classes) const {
  if (!dtypes::is_int(self().dtype())) throw Error("one_hot: expect integer dtype, getting self.dtype=" + self().dtype().repr());
  if (num_classes < 0) throw Error("one_hot: num_classes must be non-negative, got " + std::to_string(num_classes));
  return getitem({Ellipsis, Index(std::nullopt)}).one_hot_along_dim(num_classes).where(1, 0);
}

template <class S>
S OpMixin<S>::sequential(const std::vector<std::function<S(const S&)>>& ll) const {
  S x = self();
  for (const auto& f : ll) x = f(x);
  return x;
}

}  // namespace tg

// ************************* gather, pooling, convolution *************************

namespace tg {

template <class S>
S OpMixin<S>::gather(int64_t dim0, const S& index) const {
  if (index.ndim() != this->ndim())
    throw Error("gather: self.ndim must equal index.ndim, self.ndim=" + std::to_string(this->ndim()) +
                ", index.ndim=" + std::to_string(index.ndim()));
  int64_t dim = this->resolve_dim(dim0);
  const Shape &sh = self().shape(), &ish = index.shape();
  for (size_t d = 0; d < sh.size(); d++)
    if ((int64_t)d != dim && !truthy(s_ge(sh[d], ish[d])))
      throw Error("gather: requires self.shape[d] >= index.shape[d] for all d != dim, got " + shape_str(sh) + " and " +
                  shape_str(ish));
  OptShape st;
  for (size_t d = 0; d < ish.size(); d++) st.push_back((int64_t)d != dim ? std::optional<sint>(ish[d]) : std::nullopt);
  S x = this->shrink_to(st).unsqueeze(-1).transpose(-1, dim);
  return index.unsqueeze(-1).one_hot_along_dim(sh[dim]).where(x, 0).sum(-1, false, self().dtype());
}

namespace {
// helpers.resolve_pool_pads: an int, one pad per axis (both sides), or torch-style flat pairs
std::vector<sint> resolve_pool_pads(const IntTuple& padding, size_t dims) {
  const auto& p = padding.values();
  if (padding.is_scalar()) return std::vector<sint>(2 * dims, sint(p[0]));
  if (p.size() == 2 * dims) return std::vector<sint>(p.begin(), p.end());
  if (p.size() != dims)
    throw Error("pool: Padding must be an int or a sequence of length " + std::to_string(dims) + " or " +
                std::to_string(2 * dims) + ", but got padding=" + ints_str(p) + " with dims=" + std::to_string(dims) +
                ".");
  std::vector<sint> r;
  for (auto it = p.rbegin(); it != p.rend(); ++it) r.push_back(*it), r.push_back(*it);
  return r;
}
// helpers.flat_to_grouped: (l, r, t, b) -> ((t, b), (l, r))
Pairs flat_to_grouped(const std::vector<sint>& pads) {
  Pairs r;
  for (int64_t i = (int64_t)pads.size() - 2; i >= 0; i -= 2) r.push_back({pads[i], pads[i + 1]});
  return r;
}
// ((0, 0),)*(ndim-len(k)) + flat_to_grouped(pads)
Pairs full_pads(int64_t ndim, size_t nk, const std::vector<sint>& pads) {
  Pairs r(std::max<int64_t>(0, ndim - (int64_t)nk), {sint(0), sint(0)});
  for (const auto& p : flat_to_grouped(pads)) r.push_back(p);
  return r;
}
Shape to_shape(const std::vector<int64_t>& v) { return Shape(v.begin(), v.end()); }
std::vector<int64_t> last_axes(size_t n) {
  std::vector<int64_t> r;
  for (int64_t i = -(int64_t)n; i < 0; i++) r.push_back(i);
  return r;
}
std::string reduction_error(std::string_view r) {
  return "reduction='" + std::string(r) + "' must be one of ('mean', 'sum', 'none')";
}
template <class S>
S do_reduction(const S& x, std::string_view reduction) {
  if (reduction == "none") return x;
  if (reduction == "sum") return x.sum();
  if (reduction == "mean") return x.mean();
  throw Error(reduction_error(reduction));
}
}  // namespace

// _apply_ceil_mode: extra padding so that _pool's output size is the ceil-mode one
template <class S>
static std::vector<sint> apply_ceil_mode(const S& self, const std::vector<sint>& pads, const std::vector<int64_t>& k_,
                                         const std::vector<int64_t>& s_, const std::vector<int64_t>& d_) {
  Shape i_ = slice(self.shape(), -(int64_t)k_.size(), INT64_MAX);
  Pairs g = flat_to_grouped(pads);
  size_t n = std::min({i_.size(), k_.size(), s_.size(), d_.size(), g.size()});
  std::vector<sint> o_;
  for (size_t j = 0; j < n; j++)
    o_.push_back(ceildiv(i_[j] + g[j].first + g[j].second - sint(d_[j] * (k_[j] - 1) + 1), s_[j]) + sint(1));
  for (size_t j = 0; j < n; j++) {
    const sint &o = o_[j], &i = i_[j], pB = g[j].first, pA = g[j].second;
    sint s = s_[j], d = d_[j], k = k_[j];
    g[j] = {pB, pA + s * (o - sint(1)) + (d * (k - sint(1)) + sint(1)) - (i + pB + pA) -
                    smax({s * (o - sint(1)) - (pB + i - sint(1)), sint(0)})};
  }
  std::vector<sint> r;
  for (auto it = g.rbegin(); it != g.rend(); ++it) r.push_back(it->first), r.push_back(it->second);
  return r;
}

template <class S>
S OpMixin<S>::avg_pool2d(const IntTuple& kernel_size, const std::optional<IntTuple>& stride, const IntTuple& dilation,
                    const IntTuple& padding, bool ceil_mode, bool count_include_pad) const {
  std::vector<int64_t> k_ = kernel_size.make_tuple(2), axis = last_axes(k_.size());
  std::vector<int64_t> s_ = stride ? stride->make_tuple(k_.size()) : k_, d_ = dilation.make_tuple(k_.size());
  auto pool_ = [&](const S& x, const std::vector<sint>& p) {
    return pad_constant(x, full_pads(x.ndim(), k_.size(), p), 0.0).pool(to_shape(k_), s_, d_);
  };
  std::vector<sint> reg_pads = resolve_pool_pads(padding, k_.size());
  std::vector<sint> pads = ceil_mode ? apply_ceil_mode(self(), reg_pads, k_, s_, d_) : reg_pads;
  if (!count_include_pad) return pool_(self(), pads).sum(axis).div(pool_(self().const_like(1), pads).sum(axis));
  if (!ceil_mode) return pool_(self(), pads).mean(axis);
  std::vector<sint> diff;
  for (size_t j = 0; j < pads.size(); j++) diff.push_back(pads[j] - reg_pads[j]);
  S ones_ = pad_constant(self(), full_pads(this->ndim(), k_.size(), reg_pads), 0.0).const_like(1);
  return pool_(self(), pads).sum(axis).div(pool_(ones_, diff).sum(axis));
}

template <class S>
static S max_pooled(const S& self, const std::vector<int64_t>& k_, const std::vector<int64_t>& s_,
                      const std::vector<int64_t>& d_, const std::vector<sint>& pads) {
  return pad_constant(self, full_pads(self.ndim(), k_.size(), pads), self.dtype().min()).pool(to_shape(k_), s_, d_);
}

template <class S>
S OpMixin<S>::max_pool2d(const IntTuple& kernel_size, const std::optional<IntTuple>& stride, const IntTuple& dilation,
                    const IntTuple& padding, bool ceil_mode) const {
  std::vector<int64_t> k_ = kernel_size.make_tuple(2);
  std::vector<int64_t> s_ = stride ? stride->make_tuple(k_.size()) : k_, d_ = dilation.make_tuple(k_.size());
  std::vector<sint> pads = resolve_pool_pads(padding, k_.size());
  if (ceil_mode) pads = apply_ceil_mode(self(), pads, k_, s_, d_);
  return max_pooled(self(), k_, s_, d_, pads).max(last_axes(k_.size()));
}

template <class S>
std::pair<S, S> OpMixin<S>::max_pool2d_with_indices(const IntTuple& kernel_size, const std::optional<IntTuple>& stride,
                                                 const IntTuple& dilation, const IntTuple& padding,
                                                 bool ceil_mode) const {
  std::vector<int64_t> k_ = kernel_size.make_tuple(2), axis = last_axes(k_.size());
  std::vector<int64_t> s_ = stride ? stride->make_tuple(k_.size()) : k_, d_ = dilation.make_tuple(k_.size());
  std::vector<sint> pads = resolve_pool_pads(padding, k_.size());
  if (ceil_mode) pads = apply_ceil_mode(self(), pads, k_, s_, d_);
  S pooled = max_pooled(self(), k_, s_, d_, pads);
  Shape spatial_shape = slice(self().shape(), -(int64_t)k_.size(), INT64_MAX);
  sint sz = sprod(spatial_shape);
  pyint spatial_sz = sz.is_int() ? sz.i() : sz.u().as_int();
  S idx = arange(PyConst(spatial_sz), PyConst(0), PyConst(-1)).reshape(spatial_shape);
  S m = pooled.eq(pooled.max(axis, true));
  idx = m.mul(max_pooled(idx, k_, s_, d_, pads));
  return {pooled.max(axis), idx.max(axis).sub(PyConst(spatial_sz), true)};
}

template <class S>
S OpMixin<S>::max_unpool2d(const S& indices, const IntTuple& kernel_size, const std::optional<IntTuple>& stride,
                      const IntTuple& dilation, const IntTuple& padding,
                      const std::optional<Shape>& output_size) const {
  const Shape& sh = self().shape();
  if (sh.size() < 2) throw Error("max_unpool2d: needs (bs, c, *spatial), got " + shape_str(sh));
  sint bs = sh[0], c = sh[1];
  Shape spatial(sh.begin() + 2, sh.end());
  Shape out;
  if (!output_size) {
    size_t n = spatial.size();
    std::vector<int64_t> k_ = kernel_size.make_tuple(n), d_ = dilation.make_tuple(n);
    std::vector<int64_t> s_ = (stride ? *stride : kernel_size).make_tuple(n);
    Pairs p_ = flat_to_grouped(resolve_pool_pads(padding, n));
    // the reference unpacks each pair as (pA, pB); their sum is what counts
    for (size_t j = 0; j < std::min({n, k_.size(), d_.size(), s_.size(), p_.size()}); j++)
      out.push_back((spatial[j] - sint(1)) * sint(s_[j]) - (p_[j].second + p_[j].first) +
                    sint(d_[j] * (k_[j] - 1) + 1));
  } else
    out = slice(*output_size, -(int64_t)spatial.size(), INT64_MAX);
  S ret = indices.reshape({bs, c, 1, -1}).one_hot_along_dim(sprod(out), 2).where(this->reshape({bs, c, 1, -1}), 0).sum(3);
  return ret.reshape(concat({bs, c}, out));
}

template <class S>
S OpMixin<S>::conv2d(const S& weight, const std::optional<S>& bias, int64_t groups, const IntTuple& stride,
                const IntTuple& dilation, const IntTuple& padding, DType dtype) const {
  const Shape &xs = self().shape(), &ws = weight.shape();
  if (xs.size() < 2 || ws.size() < 2) throw Error("conv2d: input and weight need at least 2 dims");
  sint bs = xs[0], cin_ = xs[1], cout = ws[0], cin = ws[1];
  Shape HW(ws.begin() + 2, ws.end());
  std::vector<sint> padding_ = resolve_pool_pads(padding, HW.size());
  if (!s_eq(sint(groups) * cin, cin_) || xs.size() != ws.size())
    throw Error("conv2d: Input Tensor shape " + shape_str(xs) + " does not match the shape of the weights " +
                shape_str(ws) + ". (" + (sint(groups) * cin).str() + " vs. " + cin_.str() + ")");
  std::vector<int64_t> s_ = stride.make_tuple(HW.size()), d_ = dilation.make_tuple(HW.size());
  S x = pad_constant(self(), full_pads(this->ndim(), HW.size(), padding_), 0.0).pool(HW, s_, d_);
  sint rcout = mixin::floordiv(cout, sint(groups));
  Shape oyx = slice(x.shape(), 2, -(int64_t)HW.size());
  int64_t no = (int64_t)oyx.size(), nh = (int64_t)HW.size();
  x = x.reshape(concat(concat({bs, groups, cin, 1}, oyx), HW))
          .expand(concat(concat({bs, groups, cin, rcout}, oyx), HW));
  std::vector<int64_t> perm{0, 1, 3};
  for (int64_t i = 0; i < no; i++) perm.push_back(4 + i);
  perm.push_back(2);
  for (int64_t i = 0; i < nh; i++) perm.push_back(4 + no + i);
  x = x.permute(perm);
  std::vector<int64_t> sum_axes;
  for (int64_t i = 0; i < 1 + no; i++) sum_axes.push_back(-1 - i);
  S w = weight;
  if constexpr (std::is_same_v<S, Tensor>) w = cpu_conv_weight(weight, bs * sprod(oyx));  // (CPU_CONV_LAYOUT)
  w = w.reshape(concat(concat(concat({1, groups, rcout}, Shape(no, sint(1))), {cin}), HW));
  S ret = x.mul(w).sum(sum_axes, true, dtype).reshape(concat({bs, cout}, oyx));
  if (!bias) return ret;
  return ret.add(bias->reshape(concat({1, -1}, Shape(nh, sint(1)))));
}

template <class S>
S OpMixin<S>::conv_transpose2d(const S& weight, const std::optional<S>& bias, int64_t groups, const IntTuple& stride,
                          const IntTuple& dilation, const IntTuple& padding, const IntTuple& output_padding) const {
  std::vector<int64_t> flips;
  for (int64_t i = 3; i < (int64_t)weight.shape().size() + 1; i++) flips.push_back(i);
  S x = self(), w = weight.unflatten(0, {groups, -1}).transpose(1, 2).flip(flips);
  Shape HW = slice(weight.shape(), 2, INT64_MAX);
  size_t n = HW.size();
  Pairs pads = flat_to_grouped(resolve_pool_pads(padding, n));
  std::vector<int64_t> s_ = stride.make_tuple(n), d_ = dilation.make_tuple(n), op_ = output_padding.make_tuple(n);
  if (std::any_of(s_.begin(), s_.end(), [](int64_t s) { return s > 1; })) {
    // strides: (k) -> reshape -> (k,1) -> pad -> (k,s) -> reshape -> (k*s) -> shrink (k-(s-1))
    Shape a = slice(x.shape(), 0, 2);
    for (size_t j = 2; j < x.shape().size(); j++) a.push_back(x.shape()[j]), a.push_back(1);
    x = x.reshape(a);
    PadArg p{std::nullopt, std::nullopt};
    for (int64_t s : s_) p.push_back(std::nullopt), p.push_back(OptPair(0, s - 1));
    x = x.pad(p);
    Shape b = slice(x.shape(), 0, 2);
    for (size_t j = 0; 2 + 2 * j < x.shape().size() && j < s_.size(); j++)
      b.push_back(x.shape()[2 + 2 * j] * sint(s_[j]));
    x = x.reshape(b);
    OptShape c{std::nullopt, std::nullopt};
    for (size_t j = 0; 2 + j < x.shape().size() && j < s_.size(); j++) c.push_back(x.shape()[2 + j] - sint(s_[j] - 1));
    x = x.shrink_to(c);
  }
  std::vector<int64_t> flat;
  size_t m = std::min({n, d_.size(), pads.size(), op_.size()});
  for (size_t j = m; j-- > 0;) {
    if (!pads[j].first.is_int() || !pads[j].second.is_int() || !HW[j].is_int())
      throw Error("conv_transpose2d: symbolic sizes are not supported");
    int64_t k = (int64_t)HW[j].i(), d = d_[j];
    flat.push_back((k - 1) * d - (int64_t)pads[j].first.i());
    flat.push_back((k - 1) * d - (int64_t)pads[j].second.i() + op_[j]);
  }
  return x.conv2d(w.flatten(0, 1), bias, groups, 1, d_, flat);
}

template <class S>
S OpMixin<S>::layernorm(const AxisArg& axis, double eps) const {
  S y = this->sub(mean(axis, true));
  return y.mul(y.mul(y).mean(axis, true).add(eps).rsqrt());
}

template <class S>
S OpMixin<S>::batchnorm(const std::optional<S>& weight, const std::optional<S>& bias, const S& mean_,
                   const S& invstd, const AxisArg& axis) const {
  if (axis.is_none()) throw Error("batchnorm: axis must be an int or a list of ints");
  const std::vector<int64_t>& axis_ = axis.axes();  // not resolved: the reference compares them with enumerate()
  Shape bshape;
  for (int64_t ax = 0; ax < this->ndim(); ax++)
    bshape.push_back(std::find(axis_.begin(), axis_.end(), ax) != axis_.end() ? self().shape()[ax] : sint(1));
  S x = this->sub(mean_.reshape(bshape));
  if (weight) x = x.mul(weight->reshape(bshape));
  S ret = x.mul(invstd.shape().size() == axis_.size() ? invstd.reshape(bshape) : invstd);
  return bias ? ret.add(bias->reshape(bshape)) : ret;
}

template <class S>
S OpMixin<S>::binary_crossentropy(const S& Y, std::string_view reduction) const {
  return do_reduction(Y.neg().mul(this->log()).sub(Y.sub(1, true).mul(this->sub(1, true).log())), reduction);
}
template <class S>
S OpMixin<S>::binary_crossentropy_logits(const S& Y, std::string_view reduction,
                                    const std::optional<S>& pos_weight) const {
  S log_p = this->logsigmoid(), log_1_minus_p = this->neg().logsigmoid();
  S wy = pos_weight ? pos_weight->mul(Y) : Y.mul(1, true);
  return do_reduction(wy.mul(log_p).add(Y.sub(1, true).mul(log_1_minus_p)).neg(), reduction);
}
template <class S>
S OpMixin<S>::sparse_categorical_crossentropy(const S& Y, int64_t ignore_index, double label_smoothing,
                                         std::string_view reduction) const {
  if (!(0.0 <= label_smoothing && label_smoothing <= 1.0))
    throw Error("sparse_categorical_crossentropy: label_smoothing must be in [0.0, 1.0]");
  S log_probs = log_softmax();
  S loss_mask = ignore_index != -1 ? Y.ne(ignore_index) : Y.const_like(true, dtypes::bool_);
  S y = Y.unsqueeze(-1).one_hot_along_dim(self().shape().back(), -1).mul(loss_mask.unsqueeze(-1));
  S smoothing = log_probs.mean(-1).mul(loss_mask).mul(label_smoothing, true);
  S unreduced = log_probs.mul(y).sum(-1).mul(1 - label_smoothing, true).add(smoothing);
  if (reduction == "mean") return unreduced.sum().neg().div(loss_mask.sum());
  return do_reduction(unreduced, reduction).neg();
}
template <class S>
S OpMixin<S>::cross_entropy(const S& Y0, std::string_view reduction, double label_smoothing) const {
  if (!(0.0 <= label_smoothing && label_smoothing <= 1.0))
    throw Error("cross_entropy: label_smoothing must be in [0.0, 1.0]");
  int64_t classes_dim = this->ndim() == 1 ? 0 : 1;
  S Y = Y0;
  if (!shape_eq(self().shape(), Y.shape())) {
    if (!shape_eq(this->max(classes_dim).shape(), Y.shape()))
      throw Error("cross_entropy: shape mismatch: self.shape=" + shape_str(self().shape()) +
                  ", Y.shape=" + shape_str(Y.shape()));
    Y = Y.unsqueeze(classes_dim).one_hot_along_dim(self().shape()[classes_dim], classes_dim);
  }
  const sint& nc = Y.shape()[classes_dim];
  double n = (double)(nc.is_int() ? nc.i() : nc.u().as_int());
  Y = Y.mul(1 - label_smoothing, true).add(label_smoothing / n);
  return do_reduction(log_softmax(classes_dim).mul(Y).sum(classes_dim), reduction).neg();
}
template <class S>
S OpMixin<S>::nll_loss(const S& Y, const std::optional<S>& weight, std::optional<int64_t> ignore_index,
                  std::string_view reduction) const {
  S w = weight ? weight->gather(0, Y.flatten()).reshape(Y.shape()) : Y.const_like(1);
  S masked_weight = ignore_index ? w.mul(Y.ne(*ignore_index)) : w;
  S nll = gather(1, Y.unsqueeze(1)).squeeze(1).neg().mul(masked_weight);
  if (reduction == "mean") return nll.sum().div(masked_weight.sum());
  return do_reduction(nll, reduction);
}

}  // namespace tg

// ************************* interpolate, scatter, selection, sort *************************

namespace tg {

template <class S>
S OpMixin<S>::interpolate(const std::vector<int64_t>& size, std::string_view mode, bool align_corners) const {
  if (size.empty() || (int64_t)size.size() > this->ndim())
    throw Error("interpolate: invalid size=" + ints_str(size) + " for " + shape_str(self().shape()));
  if (mode != "linear" && mode != "nearest" && mode != "nearest-exact")
    throw Error("interpolate: only supports linear, nearest or nearest-exact interpolate, got mode=" +
                std::string(mode));
  if (align_corners && mode != "linear")
    throw Error("interpolate: align_corners option can only be set with the interpolating mode linear");
  S x = self();
  Shape expand_ = self().shape();
  int64_t nd = this->ndim(), ns = (int64_t)size.size();
  for (int64_t i = -1; i > -ns - 1; i--) {
    const sint& s = self().shape()[nd + i];
    int64_t in_sz = (int64_t)(s.is_int() ? s.i() : s.u().as_int()), sz = size[ns + i];
    Shape reshape_(nd, sint(1));
    reshape_[nd + i] = sz, expand_[nd + i] = sz;
    if (mode == "linear") {
      S arr = arange(sz);
      S num;
      int64_t den;
      if (align_corners)
        num = arr.mul(in_sz - 1), den = sz - 1;
      else
        num = arr.mul(2).add(1).mul(in_sz).sub(sz), den = sz * 2;
      num = num.clip(0, (in_sz - 1) * den);
      S low = num.floordiv(den).reshape(reshape_).expand(expand_);
      S high = num.add(den).sub(1).floordiv(den).reshape(reshape_).expand(expand_);
      S perc = num.mod(den).cast(dtypes::float32).div(den).reshape(reshape_).expand(expand_);
      x = x.gather(i, low).lerp(x.gather(i, high), perc);
    } else {
      double scale = (double)in_sz / (double)sz;
      S arr = arange(sz, std::nullopt, 1, dtypes::float32);
      S index = (mode == "nearest-exact" ? arr.add(0.5).mul(scale, true) : arr.mul(scale, true))
                      .cast(dtypes::int32)
                      .reshape(reshape_)
                      .expand(expand_);
      x = x.gather(i, index);
    }
  }
  return x.cast(self().dtype());
}

// _pre_scatter: src and a one-hot mask of index, both padded to self.shape + (self.shape[dim],)
template <class S>
static std::pair<S, S> pre_scatter(const S& self, int64_t dim0, const S& index, const S& src0) {
  int64_t dim = self.resolve_dim(dim0);
  if (!(index.ndim() == self.ndim() && self.ndim() == src0.ndim()))
    throw Error("scatter: self.ndim, index.ndim and src.ndim must all equal, self.ndim=" + std::to_string(self.ndim()) +
                " index.ndim=" + std::to_string(index.ndim()) + " src.ndim=" + std::to_string(src0.ndim()));
  const Shape &ss = self.shape(), &is = index.shape(), &rs = src0.shape();
  for (size_t d = 0; d < ss.size(); d++)
    if (!(((int64_t)d == dim || truthy(s_ge(ss[d], is[d]))) && truthy(s_ge(rs[d], is[d]))))
      throw Error("scatter: All dimensions of index.shape=" + shape_str(is) +
                  " should be <= to all dimensions of src.shape=" + shape_str(rs) +
                  " and all dimensions except dimension " + std::to_string(dim) + " of self.shape=" + shape_str(ss));
  if (self.dtype() != src0.dtype())
    throw Error("scatter: expect self.dtype=" + self.dtype().repr() +
                " to be equal to src.dtype=" + src0.dtype().repr());
  S src = src0.shrink_to(is);
  src = src.unsqueeze(-1).expand(concat(src.shape(), {ss[dim]})).transpose(-1, dim);
  S mask = index.unsqueeze(-1).one_hot_along_dim(ss[dim]).transpose(-1, dim);
  OptShape to(ss);
  to.push_back(std::nullopt);
  return {src.pad_to(to), mask.pad_to(to)};
}

template <class S>
S OpMixin<S>::scatter_reduce(int64_t dim, const S& index, const S& src0, std::string_view reduce,
                        bool include_self) const {
  auto [src, mask] = pre_scatter(self(), dim, index, src0);
  auto inv_mask = [&](const operand_t<S>& a, const operand_t<S>& b) { return mask.any(-1).logical_not().where(a, b); };
  if (reduce == "sum") return mask.where(src, 0).sum(-1).add(include_self ? self() : inv_mask(self(), 0));
  if (reduce == "prod") return mask.where(src, 1).prod(-1).mul(include_self ? self() : inv_mask(self(), 1));
  if (reduce == "amax") {
    PyConst m = src.dtype().min();
    return mask.where(src, m).max(-1).maximum(include_self ? self() : inv_mask(self(), m));
  }
  if (reduce == "amin") {
    PyConst m = src.dtype().max();
    return mask.where(src, m).min(-1).minimum(include_self ? self() : inv_mask(self(), m));
  }
  if (reduce == "mean") {
    S count = mask.where(1, 0).sum(-1).add(include_self ? operand_t<S>(1) : operand_t<S>(inv_mask(1, 0)));
    return mask.where(src, 0).sum(-1).add(include_self ? self() : inv_mask(self(), 0)).div(count);
  }
  throw Error("scatter_reduce: reduce='" + std::string(reduce) +
              "' must be one of 'sum', 'prod', 'mean', 'amax', 'amin'");
}

template <class S>
S OpMixin<S>::scatter(int64_t dim, const S& index, const operand_t<S>& src0, std::string_view reduce) const {
  if (!reduce.empty() && reduce != "add" && reduce != "multiply")
    throw Error("scatter: reduce='" + std::string(reduce) + "' must be one of None, 'multiply', or 'add'");
  if (src0.is_uop() && !reduce.empty())
    throw Error("scatter: non-scalar src is not supported with reduce arg. use scatter_reduce");
  S src = src0.is_uop() ? S::_wrap_uop(src0.uop()) : this->full(index.shape(), src0.value(), self().dtype(), {}, false);
  if (reduce == "add") return scatter_reduce(dim, index, src, "sum", true);
  if (reduce == "multiply") return scatter_reduce(dim, index, src, "prod", true);
  auto [s, mask] = pre_scatter(self(), dim, index, src);
  return masked_merge(s, mask, {-1});
}

template <class S>
S OpMixin<S>::masked_merge(const S& values0, const S& mask0, const std::vector<int64_t>& axes) const {
  S mask = mask0, values = values0;
  // reduce so that with repeated indices in mask the last one remains
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    std::vector<S> ms = mask.split(1, *it), vs = values.split(1, *it);
    S m = ms[0], v = vs[0];
    for (size_t k = 1; k < ms.size(); k++) {
      S nm = m.bitwise_or(ms[k]), nv = ms[k].where(vs[k], v);
      m = nm, v = nv;
    }
    mask = m, values = v;
  }
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) mask = mask.squeeze(*it), values = values.squeeze(*it);
  return mask.where(values, self());
}

template <class S>
S OpMixin<S>::masked_select(const S& mask0, int64_t size, PyConst fill_value) const {
  if (mask0.dtype() != dtypes::bool_)
    throw Error("masked_select expects bool mask tensor, got " + mask0.dtype().repr());
  S x = this->flatten(), mask = mask0.broadcast_to(self().shape()).flatten();
  S mask_cumsum = mask.cumsum();
  S counts = this->zeros({sint(size)}, dtypes::int32, {}, false).scatter(0, mask_cumsum, 1, "add");
  return arange(size).lt(mask.sum()).where(x.getitem({Index(counts.cumsum()._uop())}), fill_value).cast(self().dtype());
}

template <class S>
S OpMixin<S>::nonzero(int64_t size, PyConst fill_value) const {
  if (this->ndim() == 0) return this->zeros({sint(size), sint(0)}, dtypes::int32, self().device());
  S mask = this->ne(0).flatten();
  std::vector<S> parts;
  const Shape& sh = self().shape();
  for (int64_t i = 0; i < this->ndim(); i++) {
    if (!sh[i].is_int()) throw Error("nonzero: symbolic shapes are not supported");
    Shape rs(i, sint(1));
    rs.push_back(sh[i]);
    for (int64_t k = 0; k < this->ndim() - i - 1; k++) rs.push_back(1);
    parts.push_back(arange(PyConst(sh[i].i())).reshape(rs).expand(sh).flatten());
  }
  S indices = this->stack(parts, -1);
  return indices.masked_select(mask.unsqueeze(-1).expand({mask.shape()[0], sint(this->ndim())}), size * this->ndim(), fill_value)
      .reshape({-1, this->ndim()});
}

template <class S>
std::pair<S, S> OpMixin<S>::sort(int64_t dim0, bool descending) const {
  int64_t dim = this->resolve_dim(dim0);
  S x = self();
  const sint& ls = self().shape()[dim];
  int64_t orig_len = (int64_t)(ls.is_int() ? ls.i() : ls.u().as_int());
  if (orig_len <= 1) return {x, x.const_like(0, dtypes::default_int())};
  int64_t n_stages = 0;
  while (((int64_t)1 << n_stages) < orig_len) n_stages++;  // (orig_len-1).bit_length()
  Pairs pads((size_t)this->ndim(), {sint(0), sint(0)});
  pads[dim] = {sint(0), sint(((int64_t)1 << n_stages) - orig_len)};
  x = pad_constant(x, pads, descending ? x.dtype().min() : x.dtype().max()).unflatten(dim, Shape(n_stages, sint(2)));
  for (int64_t stage = 1; stage <= n_stages; stage++) {
    int64_t crossover_dim = dim + n_stages - stage - 1;
    std::vector<int64_t> flip_dims;
    for (int64_t i = 1; i < stage + 1 + (this->ndim() - dim); i++) flip_dims.push_back(-i);
    if (stage != n_stages) {
      // flip so the arrows of the green boxes point the same way as the blue boxes
      auto bg = x.split(1, crossover_dim);
      x = bg[0].cat({bg[1].flip(flip_dims)}, crossover_dim).contiguous();
    }
    for (int64_t substage = stage - 1; substage >= 0; substage--) {
      int64_t partner_dim = dim + n_stages - substage - 1;
      auto tb = x.split(1, partner_dim);
      S larger = tb[0].maximum(tb[1]), smaller = tb[0].minimum(tb[1]);
      x = (descending ? larger.cat({smaller}, partner_dim) : smaller.cat({larger}, partner_dim)).contiguous();
    }
    if (stage != n_stages) {
      auto bf = x.split(1, crossover_dim);  // flip the wires back to undo the crossover
      x = bf[0].cat({bf[1].flip(flip_dims)}, crossover_dim);
    }
  }
  x = x.flatten(dim, dim + n_stages - 1).shrink_to(self().shape());
  // indices of the sorted values: equal values keep their order, by counting earlier equal elements
  S mask = this->ones({sint(orig_len), sint(orig_len)}, dtypes::bool_, {}, false).tril();
  Shape ms{sint(orig_len), sint(orig_len)};
  for (int64_t i = 0; i < this->ndim() - dim - 1; i++) ms.push_back(1);
  mask = mask.reshape(ms);
  auto compute_counts = [&](const S& t) {
    return mask.bitwise_and(t.unsqueeze(dim).eq(t.unsqueeze(dim + 1))).sum(dim + 1);
  };
  S count_orig = compute_counts(self()), count_sorted = compute_counts(x);
  S cond = this->unsqueeze(dim + 1)
                 .eq(x.unsqueeze(dim))
                 .bitwise_and(count_orig.unsqueeze(dim + 1).eq(count_sorted.unsqueeze(dim)));
  Shape is;
  for (int64_t i = 0; i < x.ndim(); i++) is.push_back(i == dim ? sint(orig_len) : sint(1));
  S idx = arange(orig_len).reshape(is);
  idx = cond.mul(idx.unsqueeze(dim + 1)).sum(dim);
  return {x, idx};
}

template <class S>
S OpMixin<S>::argsort(int64_t dim, bool descending) const { return sort(dim, descending).second; }

template <class S>
std::pair<S, S> OpMixin<S>::topk(int64_t k, int64_t dim0, bool largest, bool sorted_) const {
  if (!sorted_) throw Error("topk with sorted_=False is not supported");
  int64_t dim = this->resolve_dim(dim0);
  if (truthy(s_gt(k, self().shape()[dim]))) throw Error("topk: selected index k=" + std::to_string(k) + " is out of range");
  auto [x, idx] = sort(dim, largest);
  OptShape ts;
  for (int64_t i = 0; i < this->ndim(); i++) ts.push_back(i == dim ? std::optional<sint>(sint(k)) : std::nullopt);
  return {x.shrink_to(ts), idx.shrink_to(ts)};
}

template class OpMixin<UOp>;
template class OpMixin<Tensor>;

}  // namespace tg
