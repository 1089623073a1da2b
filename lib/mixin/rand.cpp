// Port of tinygrad/mixin/rand.py (threefry random numbers, dropout, scaled dot-product attention), with tensor.py's
// per-device RNG state (Tensor::manual_seed, _next_counter). The graphs are the reference's, so the bits are the
// reference's.
#include <array>
#include <cmath>
#include <ctime>
#include <map>
#include <mutex>

#include "lib/device.h"
#include "lib/mixin/rand.h"
#include "lib/pyfmt.h"
#include "lib/tensor.h"

namespace tg {

namespace {

// sha256 of a short message (tensor.py derives each device's seed from sha256 of its index)
std::array<uint8_t, 32> sha256(const std::vector<uint8_t>& msg) {
  static const uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::vector<uint8_t> m = msg;
  uint64_t bits = (uint64_t)msg.size() * 8;
  m.push_back(0x80);
  while (m.size() % 64 != 56) m.push_back(0);
  for (int i = 7; i >= 0; i--) m.push_back((uint8_t)(bits >> (8 * i)));
  auto rotr = [](uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  for (size_t off = 0; off < m.size(); off += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
      w[i] = (uint32_t)m[off + 4 * i] << 24 | (uint32_t)m[off + 4 * i + 1] << 16 | (uint32_t)m[off + 4 * i + 2] << 8 |
             m[off + 4 * i + 3];
    for (int i = 16; i < 64; i++) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
      uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
  }
  std::array<uint8_t, 32> out{};
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++) out[(size_t)(4 * i + j)] = (uint8_t)(h[i] >> (24 - 8 * j));
  return out;
}

struct RngState {
  std::mutex mu;
  int64_t seed = (int64_t)std::time(nullptr);
  std::vector<std::pair<std::string, Tensor>> device_seeds, device_rng_counters;  // insertion order
};
RngState& rng() {
  static RngState* s = new RngState();
  return *s;
}
Tensor* find_dev(std::vector<std::pair<std::string, Tensor>>& v, const std::string& d) {
  for (auto& [k, t] : v)
    if (k == d) return &t;
  return nullptr;
}

pyint cdiv_up(pyint a, pyint b) { return (a + b - 1) / b; }

pyint prod_int(const Shape& shape, const char* fn) {
  pyint n = 1;
  for (const sint& s : shape) {
    if (!s.is_int() || s.i() < 0) throw Error(std::string(fn) + ": invalid input shape (symbolic or negative)");
    if (__builtin_mul_overflow(n, s.i(), &n)) throw Error(std::string(fn) + ": the shape has too many elements");
  }
  return n;
}

template <class S>
S threefry_random_bits(const S& key, const S& counts0, const S& counts1) {
  S x = counts1.cast(dtypes::uint64).lshift(32).bitwise_or(counts0.cast(dtypes::uint64));
  x = x.threefry(key[1].cast(dtypes::uint64).lshift(32).bitwise_or(key[0].cast(dtypes::uint64)));
  return x.cast(dtypes::uint32).cat({x.rshift(32).cast(dtypes::uint32)});
}

template <class S>
S bits_to_rand(const S& bits, const Shape& shape, DType dtype) {
  int nmant;
  DType uint_dtype;
  pyint one_bits;
  if (dtype == dtypes::float16)
    nmant = 10, uint_dtype = dtypes::uint16, one_bits = 0x3c00;
  else if (dtype == dtypes::bfloat16)
    nmant = 7, uint_dtype = dtypes::uint16, one_bits = 0x3f80;
  else if (dtype == dtypes::float32)
    nmant = 23, uint_dtype = dtypes::uint32, one_bits = 0x3f800000;
  else if (dtype == dtypes::float64)
    nmant = 52, uint_dtype = dtypes::uint64, one_bits = (pyint)0x3ff0000000000000LL;
  else
    throw Error("rand: no bit layout for " + dtype.repr());
  pyint n = prod_int(shape, "rand");
  S uint_bits = bits.bitcast(uint_dtype);
  return uint_bits.rshift((pyint)(dtype.itemsize() * 8 - nmant))
      .bitwise_or(one_bits)
      .bitcast(dtype)
      .getitem({Index::slice(std::nullopt, sint(n))})
      .sub(1)
      .reshape(shape);
}

// prod(shape[1:]): the fan-in of a weight of this shape, for the initializers
pyint fan_in(const Shape& shape, const char* fn) {
  if (shape.empty()) throw Error(std::string(fn) + " needs a shape");
  return prod_int(Shape(shape.begin() + 1, shape.end()), fn);
}

std::string canon_device(const Arg& device) {
  if (device.is_none()) return default_device();
  if (!device.is_str()) throw Error("rand only supports single device, got " + device.repr());
  return canonicalize_device(device.as_str());
}

}  // namespace

void Tensor::manual_seed(int64_t seed) {
  RngState& r = rng();
  std::lock_guard<std::mutex> lk(r.mu);
  r.seed = seed;
  r.device_seeds.clear(), r.device_rng_counters.clear();
}

std::pair<Tensor, Tensor> Tensor::next_counter(const std::string& device, pyint num) {
  RngState& r = rng();
  std::lock_guard<std::mutex> lk(r.mu);
  if (!find_dev(r.device_seeds, device)) {
    uint32_t n = (uint32_t)r.device_seeds.size();
    std::array<uint8_t, 32> h = sha256({(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n});
    pyint low = (pyint)h[28] << 24 | (pyint)h[29] << 16 | (pyint)h[30] << 8 | (pyint)h[31];  // int & 0xffffffff
    r.device_seeds.emplace_back(device, Tensor::from_values({PyConst(low), PyConst((pyint)(uint32_t)r.seed)},
                                                            Shape{sint(2)}, dtypes::uint32, Arg(device)));
    r.device_rng_counters.emplace_back(device, Tensor::from_values({PyConst((pyint)0), PyConst((pyint)0)},
                                                                   Shape{sint(2)}, dtypes::uint32, Arg(device)));
  }
  Tensor counter = *find_dev(r.device_rng_counters, device);
  Tensor c0 = counter.getitem({Index::slice(sint(0), sint(1))}), c1 = counter.getitem({Index::slice(sint(1), sint(2))});
  Tensor new_low = c0 + (num & 0xffffffffLL);
  Tensor new_high = c1 + (num >> 32) + (new_low < counter[0]);
  counter.assign(new_low.cat({new_high}));
  Tensor low = counter.getitem({Index::slice(sint(0), sint(1))}) - (num & 0xffffffffLL);
  Tensor high = counter.getitem({Index::slice(sint(1), sint(2))}) - (num >> 32) - (counter[0] < (num & 0xffffffffLL));
  return {*find_dev(r.device_seeds, device), low.cat({high})};
}

std::pair<UOp, UOp> UOp::next_counter(const std::string&, pyint) {
  throw Error("_next_counter requires the stateful per-device RNG counter, only implemented on Tensor");
}

template <class S>
S RandMixin<S>::random_bits(const S& key, const S& counter, pyint num) {
  S low = counter.getitem({Index::slice(sint(0), sint(1))}), high = counter.getitem({Index::slice(sint(1), sint(2))});
  std::vector<S> bits;
  const pyint umax = 0xffffffffLL;
  for (pyint i = 0; i < num; i += umax) {
    pyint chunk_num = std::min(num - i, umax);
    S c_low = low.add(i & 0xffffffffLL);
    S c_high = high.add(i >> 32).add(c_low.lt(low));
    S new_key = threefry_random_bits(key, c_low, c_high);
    S counts0 = S::arange(PyConst(cdiv_up(chunk_num, 2)), std::nullopt, 1, dtypes::uint32);
    S counts1 = counts0.add(cdiv_up(chunk_num, 2));
    bits.push_back(
        threefry_random_bits(new_key, counts0, counts1).getitem({Index::slice(std::nullopt, sint(chunk_num))}));
  }
  if (bits.empty()) return counter.getitem({Index::slice(sint(0), sint(0))});
  return bits[0].cat(std::span<const S>(bits).subspan(1));
}

template <class S>
S RandMixin<S>::rand(const Shape& shape, DType dtype, const Arg& device, bool contiguous) {
  DType dt = dtype ? dtype : dtypes::default_float();
  if (!dtypes::is_float(dt) || contains(dtypes::weaks, dt))
    throw Error("rand only supports concrete float dtypes, got " + dt.repr());
  pyint n = prod_int(shape, "rand");
  std::string dev = canon_device(device);
  check_buffer_fits(dev, n, dt);  // the bits alone would be as large: fail before building anything
  pyint num = cdiv_up(n * dt.itemsize(), 4);
  auto [key, counter] = S::next_counter(dev, num);
  S out = bits_to_rand(random_bits(key, counter, num), shape, dt);
  return contiguous ? out.contiguous() : out;
}

template <class S>
S RandMixin<S>::rand_like(DType dtype, bool contiguous) const {
  return rand(self().shape(), dtype ? dtype : self().dtype(), self().device(), contiguous);
}

template <class S>
S RandMixin<S>::randn_like(DType dtype) const {
  DType dt = dtype ? dtype : self().dtype();
  if (contains(dtypes::weaks, dt) && !dtype) throw Error("randn_like requires an explicit dtype for " + dt.repr());
  S src = S::stack({self(), self()}).rand_like(dtypes::float32);
  return src[0].mul(2 * M_PI).cos().mul(src[1].sub(1, true).log().mul(-2).sqrt()).cast(dt);
}

template <class S>
S RandMixin<S>::randn(const Shape& shape, DType dtype, const Arg& device) {
  return S::empty(shape, DType(), device).randn_like(dtype);
}

template <class S>
S RandMixin<S>::uniform(const Shape& shape, PyConst low, PyConst high, DType dtype, const Arg& device) {
  prod_int(shape, "uniform");
  PyConst diff = py_sub(high, low);
  if (!py_lt(low, high))
    throw Error("Tensor.uniform requires low < high, got low=" + low.repr() + ", high=" + high.repr());
  return rand(shape, DType(), device).mul(diff, true).cast(dtype ? dtype : dtypes::default_float()).add(low);
}

template <class S>
S RandMixin<S>::randint(const Shape& shape, pyint low, pyint high, DType dtype, const Arg& device) {
  DType dt = dtype ? dtype : dtypes::int32;
  if (!dtypes::is_int(dt)) throw Error("randint: dtype=" + dt.repr() + " must be int");
  if (low >= high)
    throw Error("Tensor.randint requires low < high, got low=" + std::to_string((long long)low) +
                ", high=" + std::to_string((long long)high));
  return uniform(shape, PyConst(low), PyConst(high), dt, device);
}

template <class S>
S RandMixin<S>::normal(const Shape& shape, double mean, double std, DType dtype, const Arg& device) {
  if (std < 0) throw Error("Tensor.normal requires std >= 0");
  return randn(shape, dtype, device).mul(std, true).add(mean);
}

template <class S>
S RandMixin<S>::scaled_uniform(const Shape& shape, DType dtype, const Arg& device) {
  pyint n = prod_int(shape, "scaled_uniform");
  return uniform(shape, -1.0, 1.0, dtype, device).mul(std::pow((double)n, -0.5));
}

template <class S>
S RandMixin<S>::glorot_uniform(const Shape& shape, DType dtype, const Arg& device) {
  pyint rest = fan_in(shape, "glorot_uniform");
  double bound = std::pow(6.0 / (double)(prod_int({shape[0]}, "glorot_uniform") + rest), 0.5);
  return uniform(shape, -bound, bound, dtype, device);
}

template <class S>
S RandMixin<S>::kaiming_uniform(const Shape& shape, double a, DType dtype, const Arg& device) {
  pyint rest = fan_in(shape, "kaiming_uniform");
  double bound = std::pow(6 / (1 + a * a) / (double)rest, 0.5);
  return uniform(shape, -bound, bound, dtype, device);
}

template <class S>
S RandMixin<S>::kaiming_normal(const Shape& shape, double a, DType dtype, const Arg& device) {
  pyint rest = fan_in(shape, "kaiming_normal");
  double std = std::pow(2 / (1 + a * a) / (double)rest, 0.5);
  return normal(shape, 0.0, std, dtype, device);
}

template <class S>
S RandMixin<S>::randperm(int64_t n, const Arg& device, DType dtype) {
  return rand({sint(n)}, DType(), device).argsort().cast(dtype);
}

template <class S>
S RandMixin<S>::dropout(double p) const {
  if (!(0 <= p && p <= 1)) throw Error("dropout: p=" + py_float_repr(p) + " is out of range [0, 1]");
  if (!TRAINING.value() || p == 0) return self();
  if (p == 1) return self().const_like(0);
  return rand_like(dtypes::default_float(), false).ge(p).contiguous().where(self(), 0).div(1.0 - p);
}

template <class S>
S RandMixin<S>::scaled_dot_product_attention(const S& key0, const S& value0, const std::optional<S>& attn_mask0,
                                             double dropout_p, bool is_causal, bool enable_gqa) const {
  S key = key0, value = value0;
  const S& q = self();
  // GQA: https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
  if (enable_gqa) {
    auto ratio = [&](const S& t) {
      const sint &a = q.shape().at(q.shape().size() - 3), &b = t.shape().at(t.shape().size() - 3);
      if (!a.is_int() || !b.is_int() || b.i() == 0)
        throw Error("scaled_dot_product_attention: enable_gqa needs int head counts");
      return (int64_t)(a.i() / b.i());
    };
    key = key.repeat_interleave(ratio(key), -3);
    value = value.repeat_interleave(ratio(value), -3);
  }
  const sint& d = q.shape().back();
  if (!d.is_int()) throw Error("scaled_dot_product_attention: the head size must be an int");
  S qk = q.matmul(key.transpose(-2, -1), false, least_upper_dtype({q.dtype(), key.dtype(), dtypes::float32}))
             .div(std::sqrt((double)d.i()));
  // handle attention mask
  std::optional<S> attn_mask = attn_mask0;
  if (is_causal) {
    if (attn_mask) throw Error("scaled_dot_product_attention: cannot set attn_mask when is_causal=True");
    attn_mask = qk.const_like(true, dtypes::bool_).tril();
  }
  if (attn_mask) {
    if (attn_mask->dtype() == dtypes::bool_) attn_mask = attn_mask->where(0, -INFINITY);
    qk = qk.add(*attn_mask);
  }
  return qk.cast(q.dtype()).softmax(-1).dropout(dropout_p).matmul(value);
}

template class RandMixin<UOp>;
template class RandMixin<Tensor>;

}  // namespace tg
