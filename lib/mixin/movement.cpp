// Port of tinygrad/mixin/movement.py: reshape (with -1 and None), expand/broadcasting, permute, pad, shrink, flip, stack and the
// high-level movement ops built from them (squeeze, flatten, split, repeat, _pool, unfold, rearrange, ...).
#include "lib/mixin/movement.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "lib/helpers.h"
#include "lib/mixin/helpers.h"
#include "lib/tensor.h"
#include "lib/uop/uop.h"

namespace tg {

using namespace mixin;

namespace {
Arg int_tuple(const std::vector<int64_t>& v) {
  std::vector<Arg> a;
  for (int64_t x : v) a.push_back(Arg(x));
  return Arg::tuple(a);
}
bool has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
int64_t index_of(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) - v.begin(); }
}  // namespace

template <class S>
int64_t MovementMixin<S>::ndim() const { return (int64_t)self().shape().size(); }
template <class S>
sint MovementMixin<S>::numel() const { return sprod(self().shape()); }
template <class S>
std::vector<pyint> MovementMixin<S>::max_shape() const {
  std::vector<pyint> r;
  for (const sint& s : self().shape()) r.push_back(s.is_int() ? s.i() : s.u().vmax().as_int());
  return r;
}
template <class S>
pyint MovementMixin<S>::max_numel() const {
  pyint p = 1;
  for (pyint x : max_shape()) p = sat_mul(p, x);
  return p;
}
template <class S>
sint MovementMixin<S>::size(int64_t dim) const { return self().shape()[norm_index(dim, self().shape().size(), "size")]; }

template <class S>
int64_t MovementMixin<S>::resolve_dim(int64_t dim, bool extra) const {
  int64_t total = ndim() + (extra ? 1 : 0), m = std::max<int64_t>(1, total);
  if (!(-m <= dim && dim <= m - 1))
    throw Error("dim=" + std::to_string(dim) + " out of range [" + std::to_string(-m) + ", " + std::to_string(m - 1) +
                "]");
  return dim < 0 ? dim + total : dim;
}

template <class S>
S MovementMixin<S>::broadcast_to(const Shape& new_shape) const {
  const Shape& sh = self().shape();
  if (shape_eq(sh, new_shape)) return self();
  if (sh.size() > new_shape.size())
    throw Error("cannot broadcast tensor to fewer dimensions. shape=" + shape_str(sh) +
                " to new_shape=" + shape_str(new_shape));
  Shape al = align_left({sh, new_shape})[0];
  for (size_t i = 0; i < al.size(); i++)
    if (!s_eq(al[i], new_shape[i]) && !s_eq(al[i], 1))
      throw Error("cannot broadcast " + shape_str(sh) + " to new_shape=" + shape_str(new_shape));
  // EXPAND only adds dims on the left: squeeze the 1s that need expanding, EXPAND on the left, permute back
  int64_t n_left = (int64_t)(new_shape.size() - sh.size());
  std::vector<int64_t> expand_at, kept;
  for (int64_t i : broadcast_axes(sh, new_shape))
    if (i >= n_left) expand_at.push_back(i - n_left);
  Shape kept_shape, exp_shape(new_shape.begin(), new_shape.begin() + n_left);
  for (int64_t i = 0; i < (int64_t)sh.size(); i++)
    if (!has(expand_at, i)) kept.push_back(i), kept_shape.push_back(sh[i]);
  for (int64_t i : expand_at) exp_shape.push_back(new_shape[n_left + i]);
  S expanded = reshape(kept_shape).mop(Ops::EXPAND, exp_shape);
  std::vector<int64_t> perm(n_left);
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = 0; i < (int64_t)sh.size(); i++)
    perm.push_back(n_left +
                   (has(expand_at, i) ? index_of(expand_at, i) : (int64_t)expand_at.size() + index_of(kept, i)));
  return expanded.permute(perm);
}

template <class S>
S MovementMixin<S>::expand(const OptShape& shape_arg) const {
  // -1 and None keep the size; _align_left pads the shorter shape with 1s
  Shape arg;
  for (const auto& s : shape_arg) arg.push_back(s ? *s : sint(-1));
  auto al = align_left({self().shape(), arg});
  Shape new_shape;
  for (size_t i = 0; i < al[0].size(); i++) new_shape.push_back(s_eq(al[1][i], -1) ? al[0][i] : al[1][i]);
  return broadcast_to(new_shape);
}

template <class S>
S MovementMixin<S>::reshape(const Shape& shape_arg) const {
  const Shape& sh = self().shape();
  Shape new_shape = shape_arg;
  int c = 0;
  for (const sint& s : new_shape) c += s_eq(s, -1);
  if (c > 1) throw Error("reshape: only one dimension can be inferred using -1, getting " + shape_str(new_shape));
  if (c) {
    sint inferred = mixin::floordiv(-sprod(sh), sprod(new_shape));
    for (sint& s : new_shape)
      if (s_eq(s, -1)) s = inferred;
  }
  if (truthy(s_ne(sprod(sh), sprod(new_shape))))
    throw Error("reshape: size mismatch, can't reshape " + shape_str(sh) + " -> " + shape_str(new_shape));
  // to its own int shape: the node below would have that shape (int dims are not simplified), so it is not built
  if (shape_eq(new_shape, sh) && std::all_of(sh.begin(), sh.end(), [](const sint& s) { return s.is_int(); }))
    return self();
  S ret = self().mop(Ops::RESHAPE, new_shape);
  return shape_eq(ret.shape(), sh) ? self() : ret;
}

template <class S>
S MovementMixin<S>::reshape(std::initializer_list<std::optional<sint>> shape_arg) const {
  const Shape& sh = self().shape();
  Shape new_shape;
  for (const std::optional<sint>& s : shape_arg) {
    if (!s && new_shape.size() >= sh.size())
      throw Error("reshape: None at axis " + std::to_string(new_shape.size()) + " of a shape " + shape_str(sh));
    new_shape.push_back(s ? *s : sh[new_shape.size()]);
  }
  return reshape(new_shape);
}

template <class S>
S MovementMixin<S>::movement_pad(const PadArg& arg) const {
  const Shape& sh = self().shape();
  if ((size_t)ndim() != arg.size())
    throw Error("pad: self.ndim=" + std::to_string(ndim()) + " != len(arg)=" + std::to_string(arg.size()));
  std::vector<std::pair<sint, sint>> m;
  for (size_t i = 0; i < arg.size(); i++)
    m.push_back(arg[i].none ? std::pair<sint, sint>{0, sh[i]}
                            : std::pair<sint, sint>{arg[i].first, sh[i] + arg[i].first + arg[i].second});
  S ret = self().mop(Ops::PAD, m);
  return shape_eq(ret.shape(), sh) ? self() : ret;
}

template <class S>
S MovementMixin<S>::shrink(const PadArg& arg) const {
  const Shape& sh = self().shape();
  if ((size_t)ndim() != arg.size())
    throw Error("shrink: self.ndim=" + std::to_string(ndim()) + " != len(arg)=" + std::to_string(arg.size()));
  std::vector<std::pair<sint, sint>> m;
  for (size_t i = 0; i < arg.size(); i++)
    m.push_back(arg[i].none ? std::pair<sint, sint>{0, sh[i]}
                            : std::pair<sint, sint>{arg[i].first, arg[i].second - arg[i].first});
  S ret = self().mop(Ops::SHRINK, m);
  return shape_eq(ret.shape(), sh) ? self() : ret;
}

template <class S>
S MovementMixin<S>::permute(const std::vector<int64_t>& order) const {
  std::vector<int64_t> order_arg;
  for (int64_t x : order) order_arg.push_back(resolve_dim(x));
  std::vector<int64_t> sorted = order_arg, iden((size_t)ndim());
  std::sort(sorted.begin(), sorted.end());
  std::iota(iden.begin(), iden.end(), 0);
  if (sorted != iden) throw Error("permute: order is not a valid permutation, getting " + ints_str(order_arg));
  return order_arg != iden ? self().mop(Ops::PERMUTE, int_tuple(order_arg)) : self();
}

template <class S>
S MovementMixin<S>::flip(const std::vector<int64_t>& axis) const {
  std::vector<int64_t> axis_arg;
  for (int64_t x : axis) axis_arg.push_back(resolve_dim(x));
  for (int64_t x : axis_arg)
    if (x < 0 || x >= ndim()) throw Error("flip: flip args must be axis ints " + ints_str(axis_arg));
  std::vector<int64_t> d = axis_arg;
  std::sort(d.begin(), d.end());
  if (std::adjacent_find(d.begin(), d.end()) != d.end())
    throw Error("flip: dim can appear at most once, getting " + ints_str(axis_arg));
  std::vector<Arg> flip_arg;
  bool any = false;
  for (int64_t i = 0; i < ndim(); i++) flip_arg.push_back(Arg(has(axis_arg, i))), any |= has(axis_arg, i);
  return any ? self().mop(Ops::FLIP, Arg::tuple(flip_arg)) : self();
}

template <class S>
S MovementMixin<S>::stack(std::span<const S> srcs_, int64_t dim) {
  std::vector<UOp> srcs;
  for (const S& t : srcs_) srcs.push_back(t._uop());
  if (srcs.empty()) return S::_wrap_uop(UOp(Ops::STACK, DType(), srcs));  // the reference needs one src
  const UOp& first = srcs[0];
  if (dim != 0) dim = first.resolve_dim(dim, true);
  for (const UOp& t : srcs) {
    const auto &a = t.shape_opt(), &b = first.shape_opt();
    if (a.has_value() != b.has_value() || (a && !shape_eq(*a, *b))) {
      std::string msg = "stack: all shapes must match, got [";
      for (size_t i = 0; i < srcs.size(); i++)
        msg += (i ? ", " : "") + (srcs[i].shape_opt() ? shape_str(*srcs[i].shape_opt()) : std::string("None"));
      throw Error(msg + "]");
    }
  }
  // _mop(STACK): consts are recreated at the promoted dtype, other srcs are cast
  DType dt = dtype_from_uop(Ops::STACK, srcs, Arg());
  std::vector<UOp> s;
  for (const UOp& u : srcs) {
    if (u.base().is_invalid())
      s.push_back(u);
    else if (u.op() == Ops::CONST)
      s.push_back(UOp::const_(u.val(), dt));
    else
      s.push_back(u.cast(dt));
  }
  S ret = S::_wrap_uop(UOp(Ops::STACK, dt, s));
  if (dim == 0) return ret;
  std::vector<int64_t> perm;
  for (int64_t i = 1; i <= dim; i++) perm.push_back(i);
  perm.push_back(0);
  for (int64_t i = dim + 1; i < ret.ndim(); i++) perm.push_back(i);
  return ret.permute(perm);
}

template <class S>
S MovementMixin<S>::shrink_to(const OptShape& shape_arg) const {
  PadArg a;
  for (const auto& ns : shape_arg) a.push_back(ns ? OptPair(0, *ns) : OptPair(std::nullopt));
  return shrink(a);
}

template <class S>
S MovementMixin<S>::movement_pad_to(const OptShape& shape_arg) const {
  const Shape& sh = self().shape();
  if (sh.size() != shape_arg.size())
    throw Error("pad_to: " + opt_shape_str(shape_arg) + " does not have the length of shape " + shape_str(sh));
  std::vector<std::pair<sint, sint>> m;
  for (size_t i = 0; i < sh.size(); i++) m.push_back({0, shape_arg[i] ? *shape_arg[i] : sh[i]});
  S ret = self().mop(Ops::PAD, m);
  return shape_eq(ret.shape(), sh) ? self() : ret;
}

template <class S>
S MovementMixin<S>::squeeze(std::optional<int64_t> dim) const {
  const Shape& sh = self().shape();
  if (!dim) {
    Shape ns;
    for (const sint& d : sh)
      if (truthy(s_ne(d, 1))) ns.push_back(d);
    return reshape(ns);
  }
  int64_t d = resolve_dim(*dim);
  if (sh.empty() || truthy(s_ne(sh[d], 1))) return self();
  return reshape(concat(slice(sh, 0, d), slice(sh, d + 1, INT64_MAX)));
}

template <class S>
S MovementMixin<S>::unsqueeze(int64_t dim) const {
  int64_t d = resolve_dim(dim, true);
  const Shape& sh = self().shape();
  return reshape(concat(concat(slice(sh, 0, d), {sint(1)}), slice(sh, d, INT64_MAX)));
}

template <class S>
S MovementMixin<S>::transpose(int64_t dim0, int64_t dim1) const {
  std::vector<int64_t> order((size_t)ndim());
  std::iota(order.begin(), order.end(), 0);
  int64_t a = norm_index(dim0, order.size(), "transpose"), b = norm_index(dim1, order.size(), "transpose");
  std::swap(order[a], order[b]);
  return permute(order);
}

template <class S>
S MovementMixin<S>::flatten(int64_t start_dim, int64_t end_dim) const {
  int64_t s = resolve_dim(start_dim), e = resolve_dim(end_dim);
  const Shape& sh = self().shape();
  return reshape(concat(concat(slice(sh, 0, s), {sprod(slice(sh, s, e + 1))}), slice(sh, e + 1, INT64_MAX)));
}

template <class S>
S MovementMixin<S>::unflatten(int64_t dim, const Shape& sizes) const {
  int64_t d = resolve_dim(dim);
  const Shape& sh = self().shape();
  return reshape(concat(concat(slice(sh, 0, d), sizes), slice(sh, d + 1, INT64_MAX)));
}

template <class S>
std::vector<S> MovementMixin<S>::split(const std::vector<int64_t>& sizes, int64_t dim) const {
  int64_t d = resolve_dim(dim);
  const sint& dim_sz = self().shape()[d];
  if (!dim_sz.is_int()) throw Error("split: does not support symbolic shape in split dimension " + std::to_string(d));
  int64_t total = std::accumulate(sizes.begin(), sizes.end(), (int64_t)0);
  if (total != dim_sz.i())
    throw Error("split: expect sizes to sum exactly to " + pyint_str(dim_sz.i()) + ", but got " +
                std::to_string(total));
  std::vector<S> ret;
  int64_t off = 0;
  for (int64_t s : sizes) {
    PadArg a;
    for (int64_t j = 0; j < ndim(); j++) a.push_back(j == d ? OptPair(off, off + s) : OptPair(std::nullopt));
    ret.push_back(shrink(a));
    off += s;
  }
  return ret;
}
template <class S>
std::vector<S> MovementMixin<S>::split(int64_t size, int64_t dim) const {
  int64_t d = resolve_dim(dim);
  const sint& dim_sz = self().shape()[d];
  if (!dim_sz.is_int()) throw Error("split: does not support symbolic shape in split dimension " + std::to_string(d));
  int64_t n = (int64_t)dim_sz.i();
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < std::max<int64_t>(1, n); i += std::max<int64_t>(1, size))
    sizes.push_back(std::min(size, n - i));
  return split(sizes, dim);
}

template <class S>
std::vector<S> MovementMixin<S>::chunk(int64_t chunks, int64_t dim) const {
  int64_t d = resolve_dim(dim);
  const sint& dim_sz = self().shape()[d];
  if (!dim_sz.is_int()) throw Error("chunk: does not support symbolic shape in split dimension " + std::to_string(d));
  if (chunks <= 0) throw Error("chunk: expect chunks to be greater than 0, got: " + std::to_string(chunks));
  if (dim_sz.i() == 0) return split(std::vector<int64_t>(chunks, 0), d);
  return split((int64_t)ceildiv(dim_sz, chunks).i(), d);
}

template <class S>
std::vector<S> MovementMixin<S>::meshgrid(std::span<const S> others, std::string_view indexing) const {
  if (indexing != "ij" && indexing != "xy")
    throw Error("meshgrid: indexing must be in (\"ij\", \"xy\"), got " + std::string(indexing));
  std::vector<S> tensors{self()};
  tensors.insert(tensors.end(), others.begin(), others.end());
  if (tensors.size() == 1) return tensors;
  std::vector<int64_t> basis((size_t)tensors.size());
  std::iota(basis.begin(), basis.end(), 0);
  if (indexing == "xy") std::swap(basis[0], basis[1]);
  std::vector<Shape> shapes;
  for (size_t k = 0; k < tensors.size(); k++) {
    Shape ns{sint(-1)};
    for (int64_t j = 0; j < (int64_t)others.size() - basis[k]; j++) ns.push_back(1);
    tensors[k] = tensors[k].reshape(ns);
    shapes.push_back(tensors[k].shape());
  }
  Shape out = broadcast_shape(shapes);
  for (S& t : tensors) t = t.broadcast_to(out);
  return tensors;
}

template <class S>
S MovementMixin<S>::diag() const {
  if (ndim() != 1) throw Error("diag: expect input to be 1-D, getting " + std::to_string(ndim()) + "-D");
  sint n = self().shape()[0];
  return unsqueeze(-1).pad_to(OptShape{std::nullopt, sint(1) + n}).flatten().shrink_to(OptShape{n * n}).reshape({n, n});
}

template <class S>
S MovementMixin<S>::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  int64_t d1 = resolve_dim(dim1), d2 = resolve_dim(dim2);
  if (d1 == d2) throw Error("diagonal: dim1 and dim2 cannot be the same dimension");
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < ndim(); i++)
    if (i != d1 && i != d2) perm.push_back(i);
  perm.push_back(d1), perm.push_back(d2);
  S x = permute(perm);
  size_t n = x.shape().size();
  PadArg a(n, std::nullopt);
  if (offset >= 0)
    a[n - 1] = OptPair(offset, x.shape()[n - 1]);
  else
    a[n - 2] = OptPair(-offset, x.shape()[n - 2]);
  x = x.shrink(a);
  const Shape& xs = x.shape();
  auto as_int = [](const sint& s) { return s.is_int() ? s.i() : s.u().as_int(); };
  pyint d = std::min(as_int(xs[n - 2]), as_int(xs[n - 1]));
  if (d <= 0) return x.reshape(concat(slice(xs, 0, (int64_t)n - 2), {sint(0)}));
  OptShape nones(n - 2, std::nullopt);
  OptShape sd = nones;
  sd.push_back(sint(d)), sd.push_back(sint(d));
  x = x.shrink_to(sd);
  OptShape p = nones, s2 = nones;
  p.push_back(sint(d * (d + 1)));
  s2.push_back(std::nullopt), s2.push_back(sint(1));
  return x.flatten(-2).pad_to(p).unflatten(-1, {sint(d), sint(d + 1)}).shrink_to(s2).squeeze(-1);
}

template <class S>
S MovementMixin<S>::roll(const std::vector<int64_t>& shifts, const std::optional<std::vector<int64_t>>& dims) const {
  if (!dims) return flatten().roll(shifts, std::vector<int64_t>{0}).reshape(self().shape());
  std::vector<int64_t> ds;
  for (int64_t d : *dims) ds.push_back(resolve_dim(d));
  if (ds.size() != shifts.size())
    throw Error("roll: len(dims)=" + std::to_string(ds.size()) + " != len(shifts)=" + std::to_string(shifts.size()));
  const Shape& sh = self().shape();
  for (const sint& s : sh)
    if (s_eq(s, 0)) return self();
  PadArg shrink_arg(sh.size(), std::nullopt);
  std::vector<sint> reps;
  for (size_t k = 0; k < ds.size(); k++) {
    sint delta = sh[ds[k]] - mixin::mod(shifts[k], sh[ds[k]]);
    shrink_arg[ds[k]] = OptPair(delta, delta + sh[ds[k]]);
  }
  for (int64_t i = 0; i < ndim(); i++) reps.push_back(has(ds, i) ? 2 : 1);
  return repeat(reps).shrink(shrink_arg);
}

template <class S>
S MovementMixin<S>::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  S x = dim ? self() : flatten();
  int64_t d = dim ? resolve_dim(*dim) : 0;
  Shape shp = x.shape();
  Shape pre = slice(shp, 0, d + 1), post = slice(shp, d + 1, INT64_MAX);
  x = x.reshape(concat(concat(pre, {sint(1)}), post));
  x = x.expand(concat(concat(pre, {sint(repeats)}), post));
  return x.reshape(concat(concat(slice(shp, 0, d), {shp[d] * sint(repeats)}), post));
}

template <class S>
S MovementMixin<S>::repeat(const std::vector<sint>& repeats) const {
  Shape base_shape = align_left({self().shape(), repeats})[0];
  Shape unsq, expd, fin;
  for (size_t i = 0; i < std::min(repeats.size(), base_shape.size()); i++) {
    const sint &r = repeats[i], &s = base_shape[i];
    if (s_eq(r, 1))
      unsq.push_back(s), expd.push_back(s);
    else
      unsq.push_back(1), unsq.push_back(s), expd.push_back(r), expd.push_back(s);
    fin.push_back(r * s);
  }
  return reshape(unsq).expand(expd).reshape(fin);
}

template <class S>
S MovementMixin<S>::pool(const Shape& k_, int64_t stride, int64_t dilation) const {
  return pool(k_, std::vector<int64_t>(k_.size(), stride), std::vector<int64_t>(k_.size(), dilation));
}
template <class S>
S MovementMixin<S>::pool(const Shape& k_, const std::vector<int64_t>& s_, const std::vector<int64_t>& d_) const {
  const Shape& sh = self().shape();
  if (sh.size() < k_.size()) throw Error("pool: can't pool " + shape_str(sh) + " with " + shape_str(k_));
  if (k_.size() != s_.size() || k_.size() != d_.size())
    throw Error("pool: stride/dilation mismatch kernel:" + shape_str(k_) + " stride:" + ints_str(s_) +
                " dilation:" + ints_str(d_));
  size_t nk = k_.size(), nn = sh.size() - nk;
  Shape i_ = slice(sh, -(int64_t)nk, INT64_MAX);
  for (size_t j = 0; j < nk; j++)
    if (!resolve(s_le(sint(d_[j]) * (k_[j] - sint(1)) + sint(1), i_[j])))
      throw Error("pool: kernel size cannot be greater than actual input size");
  std::vector<sint> o_, f_;
  for (size_t j = 0; j < nk; j++) o_.push_back(ceildiv(i_[j] - sint(d_[j]) * (k_[j] - sint(1)), s_[j]));
  for (size_t j = 0; j < nk; j++) f_.push_back(smax({sint(1), ceildiv(o_[j] * sint(s_[j]) - sint(d_[j]), i_[j])}));
  // noop entries are python None: keep the current size
  auto with_noop = [&](const S& x, const Shape& rest) { return concat(slice(x.shape(), 0, (int64_t)nn), rest); };
  std::vector<sint> reps(nn, sint(1));
  Shape isfd;  // i*f+d
  for (size_t j = 0; j < nk; j++) isfd.push_back(i_[j] * f_[j] + sint(d_[j]));
  for (size_t j = 0; j < nk; j++) reps.push_back(ceildiv(k_[j] * isfd[j], i_[j]));
  S x = repeat(reps);
  Shape a, b, c, e, f, g;
  for (size_t j = 0; j < nk; j++) {
    a.push_back(k_[j] * isfd[j]);
    b.push_back(k_[j]), b.push_back(isfd[j]);
    c.push_back(k_[j]), c.push_back(o_[j] * sint(s_[j]));
    e.push_back(k_[j]), e.push_back(o_[j]), e.push_back(s_[j]);
    f.push_back(k_[j]), f.push_back(o_[j]), f.push_back(1);
    g.push_back(k_[j]), g.push_back(o_[j]);
  }
  auto noop_opt = [&](const Shape& rest) {
    OptShape r(nn, std::nullopt);
    for (const sint& s : rest) r.push_back(s);
    return r;
  };
  x = x.shrink_to(noop_opt(a));
  x = x.reshape(with_noop(x, b));
  x = x.shrink_to(noop_opt(c));
  x = x.reshape(with_noop(x, e));
  x = x.shrink_to(noop_opt(f));
  x = x.reshape(with_noop(x, g));
  std::vector<int64_t> perm;
  for (size_t j = 0; j < nn; j++) perm.push_back((int64_t)j);
  for (size_t j = 0; j < i_.size(); j++) perm.push_back((int64_t)(nn + j * 2 + 1));
  for (size_t j = 0; j < i_.size(); j++) perm.push_back((int64_t)(nn + j * 2));
  return x.permute(perm);
}

template <class S>
S MovementMixin<S>::unfold(int64_t dim, int64_t size, int64_t step) const {
  if (size < 0) throw Error("unfold: size must be >= 0 but got size=" + std::to_string(size));
  if (step <= 0) throw Error("unfold: step must be > 0 but got step=" + std::to_string(step));
  const sint& sd = self().shape()[norm_index(dim, self().shape().size(), "unfold")];
  if (truthy(s_gt(size, sd)))
    throw Error("unfold: maximum size for tensor at dimension " + std::to_string(dim) + " is " + sd.str() +
                " but size is " + std::to_string(size));
  int64_t d = resolve_dim(dim);
  std::vector<int64_t> perm_to_last;
  for (int64_t i = 0; i < ndim(); i++)
    if (i != d) perm_to_last.push_back(i);
  perm_to_last.push_back(d);
  std::vector<int64_t> inv(perm_to_last.size());
  std::iota(inv.begin(), inv.end(), 0);
  std::sort(inv.begin(), inv.end(), [&](int64_t a, int64_t b) { return perm_to_last[a] < perm_to_last[b]; });
  inv.push_back(ndim());
  return permute(perm_to_last).pool({sint(size)}, step).permute(inv);
}

// ************************* rearrange (einops) *************************

namespace {
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  std::string r;
  size_t i = 0;
  while (true) {
    size_t j = s.find(from, i);
    if (j == std::string::npos) break;
    r += s.substr(i, j - i) + to;
    i = j + from.size();
  }
  return r + s.substr(i);
}
std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> r;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!cur.empty()) r.push_back(cur), cur.clear();
    } else
      cur += c;
  }
  if (!cur.empty()) r.push_back(cur);
  return r;
}
using Dims = std::vector<std::pair<int64_t, int64_t>>;
std::pair<std::vector<std::string>, Dims> parse_side(const std::string& s) {
  std::string t = " " + s + " ";
  t = replace_all(t, "\xe2\x80\xa6", "...");
  t = replace_all(t, "(", " ( ");
  t = replace_all(t, ")", " ) ");
  t = replace_all(t, " ", "  ");
  t = replace_all(t, " 1 ", " ( ) ");
  std::vector<std::string> tokens = split_ws(t), names;
  std::vector<int64_t> lp, rp;
  for (size_t i = 0; i < tokens.size(); i++) {
    if (tokens[i] == "(")
      lp.push_back((int64_t)i);
    else if (tokens[i] == ")")
      rp.push_back((int64_t)i);
    else
      names.push_back(tokens[i]);
  }
  bool ok = lp.size() == rp.size();
  std::vector<int64_t> flat;
  for (size_t i = 0; ok && i < lp.size(); i++) flat.push_back(lp[i]), flat.push_back(rp[i]);
  ok = ok && std::is_sorted(flat.begin(), flat.end());
  if (!ok) throw Error("rearrange: bracket mismatch");
  Dims dims;
  for (size_t i = 0; i < lp.size(); i++) dims.push_back({lp[i] - 2 * (int64_t)i, rp[i] - 1 - 2 * (int64_t)i});
  return {names, dims};
}
bool valid_name(const std::string& n) {
  if (n == "...") return true;
  if (n.empty() || !(std::isalpha((unsigned char)n[0]) || n[0] == '_')) return false;
  for (char c : n)
    if (!(std::isalnum((unsigned char)c) || c == '_')) return false;
  return n.front() != '_' && n.back() != '_';
}
}  // namespace

template <class S>
S MovementMixin<S>::rearrange(const std::string& formula, const std::vector<std::pair<std::string, int64_t>>& sizes_list) const {
  auto fail = [&](const std::string& why) { return Error("rearrange: " + why + " in '" + formula + "'"); };
  size_t arrow = formula.find("->");
  if (arrow == std::string::npos || formula.find("->", arrow + 2) != std::string::npos)
    throw fail("need exactly one \"->\"");
  auto [lhs, unflatten_dims] = parse_side(formula.substr(0, arrow));
  auto [rhs, flatten_dims] = parse_side(formula.substr(arrow + 2));
  std::map<std::string, int64_t> sizes(sizes_list.begin(), sizes_list.end());
  auto contains_name = [](const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  for (const auto& [name, _] : sizes_list)
    if (!contains_name(lhs, name)) throw fail("axis " + name + " is not used in transform");
  std::vector<std::string> sl = lhs, sr = rhs;
  std::sort(sl.begin(), sl.end()), std::sort(sr.begin(), sr.end());
  if (sl != sr || std::adjacent_find(sl.begin(), sl.end()) != sl.end()) throw fail("name mismatch");
  for (const auto* side : {&lhs, &rhs})
    for (const std::string& n : *side)
      if (!valid_name(n)) throw fail("invalid axis name " + n);
  for (auto [s, e] : unflatten_dims)
    for (int64_t i = s; i < e; i++)
      if (lhs[i] == "...") throw fail("cannot have collapsed ellipsis (...) in lhs");
  if (std::count(lhs.begin(), lhs.end(), "...") > 1) throw fail("too many ellipses");
  if (contains_name(lhs, "...")) {
    int64_t ell_len = ndim() - (int64_t)lhs.size() + 1;
    for (auto [s, e] : unflatten_dims) ell_len += e - s - 1;
    auto expand_ell = [&](std::vector<std::string> l) {
      auto it = std::find(l.begin(), l.end(), "...");
      if (it == l.end()) return l;
      size_t i = it - l.begin();
      std::vector<std::string> r(l.begin(), l.begin() + i);
      for (int64_t j = 0; j < ell_len; j++) r.push_back("..." + std::to_string(j));
      r.insert(r.end(), l.begin() + i + 1, l.end());
      return r;
    };
    lhs = expand_ell(lhs), rhs = expand_ell(rhs);
    auto newdims = [&](const std::vector<std::string>& side, Dims& dims) {
      auto before = [&](int64_t k) {
        return std::find(side.begin(), side.begin() + std::min<int64_t>(k, side.size()), "...0") !=
               side.begin() + std::min<int64_t>(k, side.size());
      };
      for (auto& [s, e] : dims) {
        int64_t ns = s + (before(s) ? ell_len - 1 : 0), ne = e + (before(e) ? ell_len - 1 : 0);
        s = ns, e = ne;
      }
    };
    newdims(lhs, unflatten_dims), newdims(rhs, flatten_dims);
  }
  S t = self();
  for (auto [s, e] : unflatten_dims) {
    Shape sz;
    for (int64_t i = s; i < e; i++) sz.push_back(sizes.count(lhs[i]) ? sint(sizes[lhs[i]]) : sint(-1));
    t = t.unflatten(s, sz);
  }
  if (lhs.size() != t.shape().size())
    throw fail("the formula has " + std::to_string(lhs.size()) + " axes, the tensor " + std::to_string(t.ndim()));
  for (size_t i = 0; i < lhs.size(); i++)
    if (sizes.count(lhs[i]) && !s_eq(sint(sizes[lhs[i]]), t.shape()[i]))
      throw fail("size provided for dimension " + lhs[i] + " incorrect");
  std::vector<int64_t> perm;
  for (const std::string& n : rhs) perm.push_back(std::find(lhs.begin(), lhs.end(), n) - lhs.begin());
  t = t.permute(perm);
  for (auto it = flatten_dims.rbegin(); it != flatten_dims.rend(); ++it)
    t = it->first < it->second ? t.flatten(it->first, it->second - 1) : t.unsqueeze(it->first);
  return t;
}

template class MovementMixin<UOp>;
template class MovementMixin<Tensor>;

}  // namespace tg
