#include "lib/nn/state.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "lib/helpers.h"
#include "lib/mixin/helpers.h"

namespace tg {

namespace {

const std::vector<std::pair<const char*, DType>>& safe_dtypes() {
  static const std::vector<std::pair<const char*, DType>> t = {
      {"BOOL", dtypes::bool_},     {"I8", dtypes::int8},       {"U8", dtypes::uint8},         {"I16", dtypes::int16},
      {"U16", dtypes::uint16},     {"I32", dtypes::int32},     {"U32", dtypes::uint32},       {"I64", dtypes::int64},
      {"U64", dtypes::uint64},     {"F8_E4M3", dtypes::fp8e4m3}, {"F8_E5M2", dtypes::fp8e5m2}, {"F16", dtypes::float16},
      {"BF16", dtypes::bfloat16},  {"F32", dtypes::float32},   {"F64", dtypes::float64}};
  return t;
}

}  // namespace

DType safe_dtype(const std::string& name) {
  for (auto& [n, dt] : safe_dtypes())
    if (name == n) return dt;
  throw Error("safetensors: unknown dtype \"" + name + "\"");
}

std::string safe_dtype_name(DType dt) {
  for (auto& [n, d] : safe_dtypes())
    if (d == dt) return n;
  throw Error("safetensors: dtype " + dt.repr() + " has no safetensors name");
}

std::string safetensors_header(std::vector<SafeTensorInfo>& tensors, const std::vector<std::pair<std::string, std::string>>& metadata) {
  // json.dumps(headers, separators=(',', ':')): insertion order, ensure_ascii
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (auto& [k, v] : metadata) m[k] = v;
    j["__metadata__"] = std::move(m);
  }
  uint64_t offset = 0;
  for (auto& t : tensors) {
    if (t.name == "__metadata__") throw Error("safetensors: a tensor cannot be named __metadata__");
    uint64_t n = uint64_t(t.dtype.itemsize());
    for (int64_t s : t.shape) n *= uint64_t(s);
    t.begin = offset;
    t.end = offset + n;
    offset += n;
    j[t.name] = {{"dtype", safe_dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {t.begin, t.end}}};
  }
  std::string text;
  try {
    text = j.dump(-1, ' ', true);
  } catch (const nlohmann::json::type_error& e) {  // 316: not UTF-8
    throw Error(std::string("safetensors: a name or the metadata is not valid UTF-8 (") + e.what() + ")");
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t len = text.size();
  for (int k = 0; k < 8; k++) out[k] = char(len >> (8 * k) & 0xff);
  return out + text;
}

SafeTensorsHeader parse_safetensors_header(const uint8_t* data, size_t size, const std::string& what) {
  if (size < 8) throw Error(what + ": not a safetensors file (" + std::to_string(size) + " bytes, the header length needs 8)");
  uint64_t len = 0;
  for (int k = 0; k < 8; k++) len |= uint64_t(data[k]) << (8 * k);
  if (len > size - 8)
    throw Error(what + ": not a safetensors file (header length " + std::to_string(len) + " exceeds the file size " +
                std::to_string(size) + ")");
  SafeTensorsHeader h;
  h.data_start = 8 + len;
  const char* b = reinterpret_cast<const char*>(data + 8);
  nlohmann::ordered_json root;
  try {
    root = nlohmann::ordered_json::parse(b, b + len);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();  // "[json.exception.parse_error.101] parse error at line 1, column 5: <problem>"
    size_t colon = msg.find(": ");
    throw Error(what + ": bad safetensors header: " + (colon == std::string::npos ? msg : msg.substr(colon + 2)) +
                " at header byte " + std::to_string(e.byte));
  }
  if (!root.is_object()) throw Error(what + ": bad safetensors header: the header is not a JSON object");
  uint64_t data_size = size - h.data_start;
  auto non_negative_int = [](const nlohmann::ordered_json& v) {
    return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
  };
  for (auto& [name, v] : root.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) throw Error(what + ": __metadata__ must be an object of strings");
      for (auto& [k, mv] : v.items()) {
        if (!mv.is_string()) throw Error(what + ": __metadata__[\"" + k + "\"] is not a string");
        h.metadata.emplace_back(k, mv.get<std::string>());
      }
      continue;
    }
    auto bad = [&](const std::string& m) { return Error(what + ": tensor \"" + name + "\": " + m); };
    if (!v.is_object()) throw bad("entry is not an object");
    auto dt = v.find("dtype"), shape = v.find("shape"), offs = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string()) throw bad("missing \"dtype\" string");
    if (shape == v.end() || !shape->is_array()) throw bad("missing \"shape\" array");
    if (offs == v.end() || !offs->is_array() || offs->size() != 2) throw bad("\"data_offsets\" must be [begin, end]");
    SafeTensorInfo t;
    t.name = name;
    std::string dt_name = dt->get<std::string>();
    try {
      t.dtype = safe_dtype(dt_name);
    } catch (const Error& e) {
      throw bad(e.what());
    }
    uint64_t n = uint64_t(t.dtype.itemsize());
    for (auto& d : *shape) {
      if (!non_negative_int(d))
        throw bad("shape entries must be non-negative integers (expected an integer, got " + d.dump() + ")");
      if (d.get<uint64_t>() > uint64_t(INT64_MAX)) throw bad("shape entry " + d.dump() + " is too large");
      t.shape.push_back(d.get<int64_t>());
      if (__builtin_mul_overflow(n, d.get<uint64_t>(), &n)) throw bad("the shape has more bytes than 2**64");
    }
    for (auto& o : *offs)
      if (!non_negative_int(o))
        throw bad("data_offsets must be non-negative integers (expected an integer, got " + o.dump() + ")");
    t.begin = (*offs)[0].get<uint64_t>();
    t.end = (*offs)[1].get<uint64_t>();
    if (t.end < t.begin) throw bad("data_offsets end before they begin");
    if (t.end > data_size)
      throw bad("data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "] run past the " +
                std::to_string(data_size) + " data bytes of the file (truncated?)");
    if (t.end - t.begin != n)
      throw bad("data_offsets cover " + std::to_string(t.end - t.begin) + " bytes but " + dt_name +
                " of this shape needs " + std::to_string(n));
    h.tensors.push_back(std::move(t));
  }
  std::vector<const SafeTensorInfo*> by_off;
  for (auto& t : h.tensors) by_off.push_back(&t);
  std::sort(by_off.begin(), by_off.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_off.size(); i++)
    if (by_off[i]->begin < by_off[i - 1]->end && by_off[i]->end > by_off[i]->begin)
      throw Error(what + ": tensors \"" + by_off[i - 1]->name + "\" and \"" + by_off[i]->name + "\" overlap");
  return h;
}

// ***** state dicts and files *****

void append_state(StateDict& out, const std::string& prefix, const StateDict& sd) {
  for (const auto& [k, t] : sd) out.emplace_back(prefix + k, t);
}

std::vector<Tensor> get_parameters(const StateDict& sd) {
  std::vector<Tensor> out;
  for (const auto& [k, t] : sd) out.push_back(t);
  return out;
}

std::vector<Tensor> load_state_dict(const StateDict& model, const StateDict& state, bool strict, bool realize) {
  std::vector<Tensor> ret;
  for (const auto& [k, v_] : model) {
    Tensor v = v_;
    auto it = std::find_if(state.begin(), state.end(), [&](const auto& p) { return p.first == k; });
    if (it == state.end()) {
      if (!strict) {
        if (DEBUG >= 1) std::printf("WARNING: not loading %s\n", k.c_str());
        continue;
      }
      throw Error("load_state_dict: `" + k + "` is not in the state dict");
    }
    Tensor src = it->second;
    if (!shape_eq(v.shape(), src.shape())) {
      bool scalar_pair = v.shape().size() + src.shape().size() == 1 && src.numel().is_int() && src.numel().i() == 1 &&
                         v.numel().is_int() && v.numel().i() == 1;
      if (!scalar_pair)
        throw Error("Shape mismatch in layer `" + k + "`: Expected shape " + mixin::shape_str(v.shape()) +
                    ", but found " + mixin::shape_str(src.shape()) + " in state dict.");
      src = src.reshape(v.shape());
    }
    v.replace(src.to(v.device()));
    if (realize) v.realize();
    ret.push_back(v);
  }
  return ret;
}

void safe_save(const StateDict& tensors, const std::string& path,
               const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::vector<SafeTensorInfo> infos;
  for (const auto& [k, t] : tensors) {
    for (DType w : dtypes::weaks)
      if (t.dtype() == w) throw Error("safe_save requires concrete dtypes (`" + k + "` is " + t.dtype().repr() + ")");
    SafeTensorInfo info;
    info.name = k;
    info.dtype = t.dtype();
    for (const sint& d : t.shape()) {
      if (!d.is_int()) throw Error("safe_save: `" + k + "` has a symbolic shape");
      info.shape.push_back((int64_t)d.i());
    }
    infos.push_back(std::move(info));
  }
  std::string header = safetensors_header(infos, metadata);
  std::vector<Tensor> ts;
  for (const auto& [k, t] : tensors) ts.push_back(t);
  Tensor::realize_all(ts);
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error("safe_save: cannot write " + tmp + " (" + std::strerror(errno) + ")");
    f.write(header.data(), (std::streamsize)header.size());
    for (const Tensor& t : ts) {
      std::vector<uint8_t> b = t.data();
      f.write(reinterpret_cast<const char*>(b.data()), (std::streamsize)b.size());
    }
    if (!f) throw Error("safe_save: writing " + tmp + " failed (" + std::strerror(errno) + ")");
  }
  std::filesystem::rename(tmp, path);  // a crash never leaves a half-written file under the real name
}

static std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

SafeTensorsHeader safe_load_metadata(const std::string& path) {
  std::vector<uint8_t> b = read_file(path);
  return parse_safetensors_header(b.data(), b.size(), path);
}

StateDict safe_load(const std::string& path) {
  std::vector<uint8_t> b = read_file(path);
  SafeTensorsHeader h = parse_safetensors_header(b.data(), b.size(), path);
  StateDict out;
  for (const SafeTensorInfo& t : h.tensors) {
    std::vector<uint8_t> bytes(b.begin() + (std::ptrdiff_t)(h.data_start + t.begin),
                               b.begin() + (std::ptrdiff_t)(h.data_start + t.end));
    Shape shape;
    for (int64_t d : t.shape) shape.push_back(sint((pyint)d));
    Tensor x = bytes.empty() ? Tensor::empty(shape, t.dtype) : Tensor::from_bytes(bytes, t.dtype).reshape(shape);
    out.emplace_back(t.name, x);
  }
  return out;
}

}  // namespace tg
