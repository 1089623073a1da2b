#include "lib/uop/serialize.h"

#include <cstring>

#include "lib/helpers.h"
#include "lib/uop/kernel_info.h"

namespace tg {

static std::string hex_double(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)bits);
  return buf;
}

std::string encode_arg(const Arg& a) {
  switch (a.kind()) {
    case Arg::Kind::None: return "N";
    case Arg::Kind::Invalid: return "I";
    case Arg::Kind::Bool: return a.as_bool() ? "T" : "F";
    case Arg::Kind::Int: return "i" + pyint_str(a.as_int());
    case Arg::Kind::Float: return "f" + hex_double(a.as_float());
    case Arg::Kind::Str: return "s" + std::to_string(a.as_str().size()) + ":" + a.as_str();
    case Arg::Kind::DType: return "d" + a.as_dtype().repr().substr(7) + " ";
    case Arg::Kind::Op: return std::string("o") + op_name(a.as_op()) + " ";
    case Arg::Kind::Axis: return std::string("a") + axis_type_name(a.as_axis()) + " ";
    case Arg::Kind::Tuple: {
      std::string r = "(";
      for (size_t i = 0; i < a.size(); i++) r += (i ? "," : "") + encode_arg(a[i]);
      return r + ")";
    }
    case Arg::Kind::Obj: {
      if (const ParamArg* p = a.as<ParamArg>()) {
        std::string r = "P(" + encode_arg(Arg((long long)p->slot)) + "," + encode_arg(Arg(p->dtype)) + ",";
        r += p->has_vminmax ? encode_arg(Arg::tup(Arg(p->vmin), Arg(p->vmax))) : "N";
        r += "," + (p->has_multiple_of ? encode_arg(Arg((long long)p->multiple_of)) : std::string("N"));
        r += "," + (p->has_name ? encode_arg(Arg(p->name)) : std::string("N"));
        r += "," + (p->has_addrspace ? std::string("A") + addrspace_name(p->addrspace) + " " : std::string("N"));
        r += "," + (p->has_axis ? encode_arg(Arg((long long)p->axis)) : std::string("N"));
        r += "," + encode_arg(p->device) + "," + (p->volatile_ ? "T" : "F") + ")";
        return r;
      }
      if (const KernelInfo* k = a.as<KernelInfo>()) {
        return "K(" + encode_arg(Arg(k->name)) + "," + encode_arg(k->axis_types) + "," +
               (k->dont_use_locals ? "T" : "F") + "," + encode_arg(k->applied_opts) + "," +
               encode_arg(k->opts_to_apply) + "," + encode_arg(k->estimates) + "," + encode_arg(Arg((long long)k->beam)) +
               ")";
      }
      if (const CallInfo* c = a.as<CallInfo>())
        return "C(" + (c->name ? encode_arg(Arg(*c->name)) : std::string("N")) + "," + (c->precompile ? "T" : "F") + "," +
               (c->precompile_backward ? "T" : "F") + ")";
      if (const BufferizeOpts* b = a.as<BufferizeOpts>())
        return "B(" + encode_arg(b->device) + ",A" + addrspace_name(b->addrspace) + " ," + (b->removable ? "T" : "F") + ")";
      // other structured args: their repr, marked so they are never confused with a string
      std::string rep = a.repr();
      return "R" + std::to_string(rep.size()) + ":" + rep;
    }
  }
  return "N";
}

namespace {
struct Parser {
  const std::string& s;
  size_t i = 0;
  [[noreturn]] void fail(const std::string& what) {
    throw Error("bad encoded arg at offset " + std::to_string(i) + ": " + what + " in '" + s.substr(0, 200) + "'");
  }
  char peek() { return i < s.size() ? s[i] : '\0'; }
  std::string word() {
    size_t st = i;
    while (i < s.size() && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
    std::string w = s.substr(st, i - st);
    if (peek() == ' ') i++;
    return w;
  }
  Arg parse() {
    if (i >= s.size()) fail("unexpected end");
    char c = s[i++];
    switch (c) {
      case 'N': return Arg();
      case 'I': return Arg::invalid();
      case 'T': return Arg(true);
      case 'F': return Arg(false);
      case 'i': {
        size_t st = i;
        if (peek() == '-') i++;
        while (i < s.size() && isdigit((unsigned char)s[i])) i++;
        if (st == i) fail("int");
        pyint v = 0;
        bool neg = s[st] == '-';
        for (size_t k = st + (neg ? 1 : 0); k < i; k++) v = v * 10 + (s[k] - '0');
        return Arg(neg ? -v : v);
      }
      case 'f': {
        if (i + 16 > s.size()) fail("float");
        uint64_t bits = std::stoull(s.substr(i, 16), nullptr, 16);
        i += 16;
        double d;
        std::memcpy(&d, &bits, 8);
        return Arg(d);
      }
      case 's': case 'R': {
        size_t colon = s.find(':', i);
        if (colon == std::string::npos) fail("string length");
        size_t n = std::stoull(s.substr(i, colon - i));
        if (colon + 1 + n > s.size()) fail("string");
        std::string v = s.substr(colon + 1, n);
        i = colon + 1 + n;
        return Arg(v);
      }
      case 'd': return Arg(dtypes::by_name(word()));
      case 'o': return Arg(op_from_name(word()));
      case 'a': {
        std::string w = word();
        for (int k = 1; k <= 12; k++)
          if (w == axis_type_name((AxisType)k)) return Arg((AxisType)k);
        fail("axis type " + w);
      }
      case '(': {
        std::vector<Arg> items;
        if (peek() == ')') {
          i++;
          return Arg::tuple(items);
        }
        for (;;) {
          items.push_back(parse());
          if (peek() == ',') i++;
          else if (peek() == ')') {
            i++;
            return Arg::tuple(items);
          } else fail("tuple");
        }
      }
      case 'P': {
        if (s[i++] != '(') fail("ParamArg");
        auto* p = new ParamArg();
        Arg keep(static_cast<const ArgObj*>(p));
        auto next = [&]() {
          Arg a = parse();
          if (peek() == ',' || peek() == ')') i++;
          return a;
        };
        p->slot = (int64_t)next().as_int();
        p->dtype = next().as_dtype();
        Arg mm = next();
        if (!mm.is_none()) p->has_vminmax = true, p->vmin = mm[0].as_const(), p->vmax = mm[1].as_const();
        Arg mo = next();
        if (!mo.is_none()) p->has_multiple_of = true, p->multiple_of = (int64_t)mo.as_int();
        Arg nm = next();
        if (!nm.is_none()) p->has_name = true, p->name = nm.as_str();
        if (peek() == 'A') {
          i++;
          std::string w = word();
          p->has_addrspace = true;
          for (int k = 1; k <= 4; k++)
            if (w == addrspace_name((AddrSpace)k)) p->addrspace = (AddrSpace)k;
          if (peek() == ',') i++;
        } else {
          next();
          p->has_addrspace = false;
        }
        Arg ax = next();
        if (!ax.is_none()) p->has_axis = true, p->axis = (int64_t)ax.as_int();
        p->device = next();
        p->volatile_ = next().as_bool();
        return keep;
      }
      case 'K': {
        if (s[i++] != '(') fail("KernelInfo");
        auto* k = new KernelInfo();
        Arg keep(static_cast<const ArgObj*>(k));
        auto next = [&]() {
          Arg a = parse();
          if (peek() == ',' || peek() == ')') i++;
          return a;
        };
        k->name = next().as_str();
        k->axis_types = next();
        k->dont_use_locals = next().as_bool();
        k->applied_opts = next();
        k->opts_to_apply = next();
        k->estimates = next();
        k->beam = (int64_t)next().as_int();
        return keep;
      }
      case 'C': {
        if (s[i++] != '(') fail("CallInfo");
        auto* c = new CallInfo();
        Arg keep(static_cast<const ArgObj*>(c));
        auto next = [&]() {
          Arg a = parse();
          if (peek() == ',' || peek() == ')') i++;
          return a;
        };
        Arg n = next();
        if (!n.is_none()) c->name = n.as_str();
        c->precompile = next().as_bool();
        c->precompile_backward = next().as_bool();
        return keep;
      }
      case 'B': {
        if (s[i++] != '(') fail("BufferizeOpts");
        auto* b = new BufferizeOpts();
        Arg keep(static_cast<const ArgObj*>(b));
        auto next = [&]() {
          Arg a = parse();
          if (peek() == ',' || peek() == ')') i++;
          return a;
        };
        b->device = next();
        if (peek() != 'A') fail("BufferizeOpts addrspace");
        i++;
        std::string w = word();
        for (int k = 0; k <= 4; k++)
          if (w == addrspace_name((AddrSpace)k)) b->addrspace = (AddrSpace)k;
        if (peek() == ' ') i++;
        if (peek() == ',') i++;
        b->removable = next().as_bool();
        return keep;
      }
      default: fail(std::string("unknown tag '") + c + "'");
    }
  }
};
}  // namespace

Arg decode_arg(const std::string& s) {
  Parser p{s};
  Arg a = p.parse();
  if (p.peek() == ' ') p.i++;
  if (p.i != s.size()) p.fail("trailing characters");
  return a;
}

std::vector<std::string> encode_graph(const UOp& root) {
  auto topo = root.toposort();
  UOpMap<size_t> idx;
  std::vector<std::string> out;
  for (size_t i = 0; i < topo.size(); i++) {
    const UOp& u = topo[i];
    idx[u] = i;
    std::string srcs;
    for (size_t k = 0; k < u.nsrc(); k++) srcs += (k ? "," : "") + std::to_string(idx.at(u.src(k)));
    out.push_back(std::string(op_name(u.op())) + " " + u.dtype().repr().substr(7) + " " + encode_arg(u.arg()) + " " +
                  encode_arg(u.tag()) + " " + srcs);
  }
  return out;
}

UOp decode_graph(const std::vector<std::string>& lines) {
  std::vector<UOp> nodes;
  for (const std::string& line : lines) nodes.push_back(decode_node(line, nodes));
  if (nodes.empty()) throw Error("empty encoded graph");
  return nodes.back();
}

UOp decode_node(const std::string& line, const std::vector<UOp>& nodes) {
  {
    size_t a = line.find(' ');
    size_t b = line.find(' ', a + 1);
    if (a == std::string::npos || b == std::string::npos) throw Error("bad encoded node: " + line);
    Ops op = op_from_name(line.substr(0, a));
    DType dt = dtypes::by_name(line.substr(a + 1, b - a - 1));
    Parser p{line, b + 1};
    Arg arg = p.parse();
    if (p.peek() == ' ') p.i++;
    Arg tag = p.parse();
    if (p.peek() == ' ') p.i++;
    std::vector<UOp> src;
    std::string rest = line.substr(p.i);
    size_t st = 0;
    while (st < rest.size()) {
      size_t e = rest.find(',', st);
      if (e == std::string::npos) e = rest.size();
      size_t k = std::stoull(rest.substr(st, e - st));
      if (k >= nodes.size()) throw Error("bad src index in encoded node: " + line);
      src.push_back(nodes[k]);
      st = e + 1;
    }
    return UOp(op, dt, src, arg, tag);
  }
}

}  // namespace tg
