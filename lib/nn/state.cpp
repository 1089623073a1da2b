#include "lib/nn/state.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

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

// json.dumps(ensure_ascii=True) string escaping
void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    uint32_t cp = c;
    size_t len = 1;
    if (c >= 0x80) {  // decode UTF-8 (invalid bytes pass through as U+FFFD like errors="replace" would not: reject)
      len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
      if (len == 0 || i + len > s.size()) throw Error("safetensors: name or metadata is not valid UTF-8: " + s);
      cp = c & (0x7F >> len);
      for (size_t k = 1; k < len; k++) cp = cp << 6 | (s[i + k] & 0x3F);
    }
    i += len;
    char buf[16];
    switch (cp) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (cp < 0x20 || (cp >= 0x7F && cp < 0x10000)) {
          std::snprintf(buf, sizeof buf, "\\u%04x", cp);
          out += buf;
        } else if (cp >= 0x10000) {
          uint32_t v = cp - 0x10000;
          std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
          out += buf;
        } else {
          out += char(cp);
        }
    }
  }
  out += '"';
}

// A small JSON reader for the header: objects, arrays, strings, integers (what safetensors headers hold).
struct Json {
  enum Kind { Null, Bool, Int, Str, Arr, Obj } kind = Null;
  int64_t i = 0;
  std::string s;
  std::vector<Json> arr;
  std::vector<std::pair<std::string, Json>> obj;
};

struct Parser {
  const char* p;
  const char* end;
  const std::string& what;
  const char* begin;
  [[noreturn]] void fail(const std::string& msg) {
    throw Error(what + ": bad safetensors header: " + msg + " at header byte " + std::to_string(p - begin));
  }
  void ws() {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
  }
  void expect(char c) {
    ws();
    if (p >= end || *p != c) fail(std::string("expected '") + c + "'");
    p++;
  }
  static void utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) out += char(cp);
    else if (cp < 0x800) out += char(0xC0 | cp >> 6), out += char(0x80 | (cp & 0x3F));
    else if (cp < 0x10000) out += char(0xE0 | cp >> 12), out += char(0x80 | (cp >> 6 & 0x3F)), out += char(0x80 | (cp & 0x3F));
    else
      out += char(0xF0 | cp >> 18), out += char(0x80 | (cp >> 12 & 0x3F)), out += char(0x80 | (cp >> 6 & 0x3F)),
          out += char(0x80 | (cp & 0x3F));
  }
  uint32_t hex4() {
    if (end - p < 4) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; k++, p++) {
      char c = *p;
      v = v * 16 + (c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : (fail("bad \\u escape"), 0));
    }
    return v;
  }
  std::string str() {
    expect('"');
    std::string out;
    while (true) {
      if (p >= end) fail("unterminated string");
      char c = *p++;
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p >= end) fail("unterminated escape");
      char e = *p++;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            p += 2;
            uint32_t lo = hex4();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default: fail(std::string("bad escape \\") + e);
      }
    }
  }
  Json value(int depth = 0) {
    if (depth > 64) fail("nesting too deep");
    ws();
    if (p >= end) fail("unexpected end");
    Json j;
    if (*p == '{') {
      p++;
      j.kind = Json::Obj;
      ws();
      if (p < end && *p == '}') return p++, j;
      while (true) {
        std::string k = str();
        expect(':');
        j.obj.emplace_back(std::move(k), value(depth + 1));
        ws();
        if (p < end && *p == ',') {
          p++;
          continue;
        }
        expect('}');
        return j;
      }
    }
    if (*p == '[') {
      p++;
      j.kind = Json::Arr;
      ws();
      if (p < end && *p == ']') return p++, j;
      while (true) {
        j.arr.push_back(value(depth + 1));
        ws();
        if (p < end && *p == ',') {
          p++;
          continue;
        }
        expect(']');
        return j;
      }
    }
    if (*p == '"') {
      j.kind = Json::Str;
      j.s = str();
      return j;
    }
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
      j.kind = Json::Int;
      bool neg = *p == '-';
      if (neg) p++;
      if (p >= end || *p < '0' || *p > '9') fail("bad number");
      uint64_t v = 0;
      while (p < end && *p >= '0' && *p <= '9') {
        if (v > (UINT64_MAX - 9) / 10) fail("number too large");
        v = v * 10 + uint64_t(*p++ - '0');
      }
      if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) fail("expected an integer");
      if (v > uint64_t(INT64_MAX)) fail("number too large");
      j.i = neg ? -int64_t(v) : int64_t(v);
      return j;
    }
    for (auto [lit, kind] : {std::pair{"true", Json::Bool}, {"false", Json::Bool}, {"null", Json::Null}})
      if (size_t(end - p) >= std::strlen(lit) && std::memcmp(p, lit, std::strlen(lit)) == 0) {
        p += std::strlen(lit);
        j.kind = kind;
        j.i = lit[0] == 't';
        return j;
      }
    fail(std::string("unexpected character '") + *p + "'");
  }
};

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
  std::string j = "{";
  if (!metadata.empty()) {
    j += "\"__metadata__\":{";
    bool first = true;
    for (auto& [k, v] : metadata) {
      if (!first) j += ',';
      first = false;
      json_string(j, k);
      j += ':';
      json_string(j, v);
    }
    j += "}";
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); i++) {
    auto& t = tensors[i];
    if (t.name == "__metadata__") throw Error("safetensors: a tensor cannot be named __metadata__");
    uint64_t n = uint64_t(t.dtype.itemsize());
    for (int64_t s : t.shape) n *= uint64_t(s);
    t.begin = offset;
    t.end = offset + n;
    offset += n;
    if (j.size() > 1) j += ',';
    json_string(j, t.name);
    j += ":{\"dtype\":";
    json_string(j, safe_dtype_name(t.dtype));
    j += ",\"shape\":[";
    for (size_t k = 0; k < t.shape.size(); k++) j += (k ? "," : "") + std::to_string(t.shape[k]);
    j += "],\"data_offsets\":[" + std::to_string(t.begin) + "," + std::to_string(t.end) + "]}";
  }
  j += "}";
  j.append((8 - j.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t len = j.size();
  for (int k = 0; k < 8; k++) out[k] = char(len >> (8 * k) & 0xff);
  return out + j;
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
  Parser ps{b, b + len, what, b};
  Json root = ps.value();
  ps.ws();
  if (ps.p != ps.end) ps.fail("trailing characters after the header object");
  if (root.kind != Json::Obj) ps.fail("the header is not a JSON object");
  uint64_t data_size = size - h.data_start;
  for (auto& [name, v] : root.obj) {
    if (name == "__metadata__") {
      if (v.kind != Json::Obj) throw Error(what + ": __metadata__ must be an object of strings");
      for (auto& [k, mv] : v.obj) {
        if (mv.kind != Json::Str) throw Error(what + ": __metadata__[\"" + k + "\"] is not a string");
        h.metadata.emplace_back(k, mv.s);
      }
      continue;
    }
    auto bad = [&](const std::string& m) { return Error(what + ": tensor \"" + name + "\": " + m); };
    if (v.kind != Json::Obj) throw bad("entry is not an object");
    const Json *dt = nullptr, *shape = nullptr, *offs = nullptr;
    for (auto& [k, f] : v.obj) {
      if (k == "dtype") dt = &f;
      else if (k == "shape") shape = &f;
      else if (k == "data_offsets") offs = &f;
    }
    if (!dt || dt->kind != Json::Str) throw bad("missing \"dtype\" string");
    if (!shape || shape->kind != Json::Arr) throw bad("missing \"shape\" array");
    if (!offs || offs->kind != Json::Arr || offs->arr.size() != 2) throw bad("\"data_offsets\" must be [begin, end]");
    SafeTensorInfo t;
    t.name = name;
    try {
      t.dtype = safe_dtype(dt->s);
    } catch (const Error& e) {
      throw bad(e.what());
    }
    uint64_t n = uint64_t(t.dtype.itemsize());
    for (auto& d : shape->arr) {
      if (d.kind != Json::Int || d.i < 0) throw bad("shape entries must be non-negative integers");
      t.shape.push_back(d.i);
      n *= uint64_t(d.i);
    }
    for (auto& o : offs->arr)
      if (o.kind != Json::Int || o.i < 0) throw bad("data_offsets must be non-negative integers");
    t.begin = uint64_t(offs->arr[0].i);
    t.end = uint64_t(offs->arr[1].i);
    if (t.end < t.begin) throw bad("data_offsets end before they begin");
    if (t.end > data_size)
      throw bad("data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "] run past the " +
                std::to_string(data_size) + " data bytes of the file (truncated?)");
    if (t.end - t.begin != n)
      throw bad("data_offsets cover " + std::to_string(t.end - t.begin) + " bytes but " + dt->s + " of this shape needs " +
                std::to_string(n));
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
