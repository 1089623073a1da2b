#include "lib/uop/upat.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "lib/uop/track.h"

namespace tg {

struct UPatData {
  bool any_op = true;  // op=None
  OpSet ops;
  std::vector<Ops> op_list;  // in declaration order
  bool has_dtype = false;
  uint64_t dtype_mask = 0;  // membership by dtype id
  DTypes dtypes;
  bool has_arg = false;
  Arg arg;
  bool has_tag = false;
  std::vector<Arg> tags;
  std::string name;
  int name_id = -2;  // -2: unnamed
  enum class Src : uint8_t { None, Tuple, List, Repeat } src_kind = Src::None;
  std::vector<UPat> in_src;               // as given
  std::vector<std::vector<UPat>> orders;  // Tuple: 1, List: permutations
  // the matcher's view: raw child pointers per ordering, and per child the ops it accepts (any_op/is_any: all)
  std::vector<std::vector<const UPatData*>> raw_orders;
  std::vector<std::vector<OpSet>> order_ops;
  bool allow_any_len = false;
  bool strict_length = false;
  size_t required_len = 0;
  bool is_any = false;
  bool is_leaf = true;  // no srcs to match and no alternatives (kept by finalize)
  bool has_custom_early_reject = false;
  OpSet custom_early_reject;

  void finalize() {
    orders.clear();
    if (src_kind == Src::Tuple) orders.push_back(in_src);
    if (src_kind == Src::List) {
      bool all_same = true;
      for (const UPat& p : in_src) all_same &= p.data() == in_src[0].data();
      if (all_same) {
        orders.push_back(in_src);
      } else {
        // itertools.permutations order: permutations of indices in lexicographic order
        std::vector<size_t> idx(in_src.size());
        for (size_t i = 0; i < idx.size(); i++) idx[i] = i;
        do {
          std::vector<UPat> o;
          for (size_t i : idx) o.push_back(in_src[i]);
          orders.push_back(o);
        } while (std::next_permutation(idx.begin(), idx.end()));
      }
    }
    raw_orders.clear();
    order_ops.clear();
    for (const auto& o : orders) {
      std::vector<const UPatData*> r;
      std::vector<OpSet> ops;
      for (const UPat& c : o) {
        r.push_back(c.data());
        ops.push_back(c.data()->accepted_ops());
      }
      raw_orders.push_back(std::move(r));
      order_ops.push_back(std::move(ops));
    }
    strict_length = !(allow_any_len || src_kind == Src::Repeat || src_kind == Src::None);
    required_len = (src_kind == Src::Repeat || src_kind == Src::None) ? 0 : in_src.size();
    name_id = name.empty() ? -2 : tg::name_id(name);
    is_leaf = !is_any && src_kind == Src::None;
  }
  // ops a node can have to match this pattern (a necessary condition, used to reject orderings early)
  OpSet accepted_ops() const {
    if (is_any) {
      OpSet r;
      for (const UPat& a : in_src) r = r | a.data()->accepted_ops();
      return r;
    }
    return any_op ? GroupOp::all() : ops;
  }
  // every node this pattern matches has an Invalid CONST in its backward slice (itself included): it is one, every
  // alternative needs one, or every ordering of its srcs has a src pattern that needs one
  bool requires_invalid() const {
    if (is_any) {
      if (in_src.empty()) return false;
      for (const UPat& a : in_src)
        if (!a.data()->requires_invalid()) return false;
      return true;
    }
    if (!any_op && ops.size() == 1 && ops.first() == Ops::CONST && has_arg && arg.is_invalid()) return true;
    if (src_kind != Src::Tuple && src_kind != Src::List) return false;  // no srcs, or any number of them
    if (orders.empty()) return false;
    for (const auto& o : orders) {
      bool some = false;
      for (const UPat& c : o) some = some || c.data()->requires_invalid();
      if (!some) return false;
    }
    return true;
  }
  // the depth below this pattern's node of each name it binds (0: this node), where that depth is fixed: the walk
  // stops at alternatives (their structures differ) and at srcs of any number
  void named_depths(int depth, std::vector<std::pair<int, int>>& out) const {
    if (name_id >= 0) out.push_back({name_id, depth});
    if (is_any || (src_kind != Src::Tuple && src_kind != Src::List)) return;
    for (const UPat& c : in_src) c.data()->named_depths(depth + 1, out);
  }
  // every node this pattern matches has two srcs that reach one node, the first within d1 levels below it and the
  // other within d2 (0: the src itself): a name binds a node under one src and under another (a bound name matches
  // one node only). The srcs' orderings permute whole src patterns, so each ordering has the same depths. The
  // cheapest such (d1, d2) with d1 <= d2 <= 2, as d1 * 3 + d2; -1 when there is none
  int shared_src_depths() const {
    if (is_any || (src_kind != Src::Tuple && src_kind != Src::List) || orders.empty()) return -1;
    std::vector<std::vector<std::pair<int, int>>> per_src(in_src.size());
    for (size_t i = 0; i < in_src.size(); i++) in_src[i].data()->named_depths(0, per_src[i]);
    int best = -1;
    for (size_t i = 0; i < per_src.size(); i++)
      for (size_t j = i + 1; j < per_src.size(); j++)
        for (auto [a, da] : per_src[i])
          for (auto [b, db] : per_src[j]) {
            if (a != b || da > 2 || db > 2) continue;
            const int d1 = std::min(da, db), d2 = std::max(da, db), key = d1 * 3 + d2;
            // fewer nodes to compare first: (0,0) 1, (0,1) 3, (1,1) 9, (0,2) 7, (1,2) 21, (2,2) 49 for binary srcs
            static constexpr int kCost[9] = {1, 3, 7, 0, 9, 21, 0, 0, 49};
            if (best < 0 || kCost[key] < kCost[best]) best = key;
          }
    return best;
  }
  // the arg a CONST src of every node this pattern matches has: in every ordering of its srcs, one src pattern is a
  // CONST leaf with that arg (x+0, x*1, x*0); None when there is none
  Arg required_src_const() const {
    if (is_any || (src_kind != Src::Tuple && src_kind != Src::List) || orders.empty()) return Arg();
    Arg found;
    for (const auto& o : orders) {
      bool has = false;
      for (const UPat& c : o) {
        const UPatData* d = c.data();
        if (d->is_any || d->any_op || d->ops.size() != 1 || d->ops.first() != Ops::CONST || !d->has_arg ||
            d->src_kind != Src::None || d->arg.is_none())
          continue;
        if (found.is_none()) found = d->arg;
        if (found.same(d->arg)) has = true;
      }
      if (!has) return Arg();
    }
    return found;
  }
  OpSet early_reject() const {
    if (has_custom_early_reject) return custom_early_reject;
    OpSet r;
    std::vector<UPat> children;
    if (src_kind == Src::Repeat)
      children = in_src;
    else if (!orders.empty())
      children = orders[0];
    for (const UPat& c : children)
      if (!c.data()->any_op && c.data()->ops.size() == 1) r.add(c.data()->ops.first());
    return r;
  }
};

// ************************* names *************************

static std::mutex g_names_mu;
static std::map<std::string, int>& names_map() {
  static auto* m = new std::map<std::string, int>();
  return *m;
}
int name_id(const std::string& name) {
  if (name == "ctx") return -1;
  std::lock_guard<std::mutex> lk(g_names_mu);
  auto& m = names_map();
  auto it = m.find(name);
  if (it != m.end()) return it->second;
  int id = (int)m.size();
  m[name] = id;
  return id;
}

// ************************* construction *************************

static std::shared_ptr<UPatData> copy_of(const std::shared_ptr<const UPatData>& d) {
  return std::make_shared<UPatData>(*d);
}

UPat::UPat() : d_(std::make_shared<UPatData>()) {}
UPat::UPat(Ops op) {
  auto d = std::make_shared<UPatData>();
  d->any_op = false;
  d->ops = OpSet(op);
  d->op_list = {op};
  d_ = d;
}
UPat::UPat(OpSet ops) {
  auto d = std::make_shared<UPatData>();
  d->any_op = false;
  d->ops = ops;
  for (int i = 1; i <= NUM_OPS; i++)
    if (ops.has((Ops)i)) d->op_list.push_back((Ops)i);
  d_ = d;
}

UPat UPat::dtype(DType dt) const { return dtype(DTypes{dt}); }
UPat UPat::dtype(const DTypes& ds) const {
  auto d = copy_of(d_);
  d->has_dtype = true;
  d->dtypes = ds;
  d->dtype_mask = 0;
  for (DType x : ds) d->dtype_mask |= 1ull << x.id();
  return UPat(std::shared_ptr<const UPatData>(d));
}
UPat UPat::dtype_of(const UPat& other) const {
  if (!other.d_->has_dtype) return *this;
  return dtype(other.d_->dtypes);
}
UPat UPat::named(const std::string& name) const {
  auto d = copy_of(d_);
  d->name = name;
  d->finalize();
  return UPat(std::shared_ptr<const UPatData>(d));
}
UPat UPat::arg(Arg a) const {
  auto d = copy_of(d_);
  d->has_arg = !a.is_none();
  d->arg = std::move(a);
  return UPat(std::shared_ptr<const UPatData>(d));
}
UPat UPat::tag(Arg t) const {
  auto d = copy_of(d_);
  d->has_tag = true;
  d->tags = t.is_tuple() ? t.items() : std::vector<Arg>{t};
  return UPat(std::shared_ptr<const UPatData>(d));
}
UPat UPat::any_len() const {
  auto d = copy_of(d_);
  d->allow_any_len = true;
  d->finalize();
  return UPat(std::shared_ptr<const UPatData>(d));
}
UPat UPat::early_reject(OpSet ops) const {
  auto d = copy_of(d_);
  d->has_custom_early_reject = true;
  d->custom_early_reject = ops;
  return UPat(std::shared_ptr<const UPatData>(d));
}
UPat UPat::src_tuple(std::vector<UPat> s) const {
  auto d = copy_of(d_);
  d->src_kind = UPatData::Src::Tuple;
  d->in_src = std::move(s);
  d->finalize();
  return UPat(std::shared_ptr<const UPatData>(d));
}
UPat UPat::src_list(std::vector<UPat> s) const {
  auto d = copy_of(d_);
  d->src_kind = UPatData::Src::List;
  d->in_src = std::move(s);
  d->finalize();
  return UPat(std::shared_ptr<const UPatData>(d));
}
UPat UPat::src_all(const UPat& s) const {
  auto d = copy_of(d_);
  d->src_kind = UPatData::Src::Repeat;
  d->in_src = {s};
  d->finalize();
  return UPat(std::shared_ptr<const UPatData>(d));
}

// UPat.var / UPat.cvar are functools.cache'd in the reference: the same arguments give the same object, which is
// what makes [x, x] a single ordering. Keep that identity.
static std::mutex g_var_mu;
static std::string var_key(const char* kind, const std::string& name, const DTypes& dts, const Arg& arg) {
  std::string k = std::string(kind) + "|" + name + "|";
  for (DType d : dts) k += std::to_string(d.id()) + ",";
  // python's cache key compares args with == (1 == 1.0 == True share an entry)
  k += "|" + (arg.is_const() && !arg.is_invalid() ? std::to_string((double)arg.as_float()) : arg.repr());
  return k;
}
static std::map<std::string, UPat>& var_cache() {
  static std::map<std::string, UPat> m;
  return m;
}

UPat UPat::var(const std::string& name, const DTypes& dtypes) {
  std::lock_guard<std::mutex> lk(g_var_mu);
  std::string k = var_key("var", name, dtypes, Arg());
  auto it = var_cache().find(k);
  if (it != var_cache().end()) return it->second;
  UPat p;
  if (!dtypes.empty()) p = p.dtype(dtypes);
  if (!name.empty()) p = p.named(name);
  var_cache().emplace(k, p);
  return p;
}
UPat UPat::cvar(const std::string& name, const DTypes& dtypes, Arg arg) {
  std::lock_guard<std::mutex> lk(g_var_mu);
  std::string k = var_key("cvar", name, dtypes, arg);
  auto it = var_cache().find(k);
  if (it != var_cache().end()) return it->second;
  UPat p(Ops::CONST);
  if (!dtypes.empty()) p = p.dtype(dtypes);
  if (!arg.is_none()) p = p.arg(arg);
  if (!name.empty()) p = p.named(name);
  var_cache().emplace(k, p);
  return p;
}
UPat UPat::const_(PyConst b, const DTypes& dtypes) {
  UPat p = UPat(Ops::CONST).arg(Arg(b));
  return dtypes.empty() ? p : p.dtype(dtypes);
}
UPat::UPat(PyConst c) : UPat(UPat::cvar("", DTypes{}, Arg(c))) {}

UPat UPat::any_of(std::vector<UPat> alts) {
  auto d = std::make_shared<UPatData>();
  d->is_any = true;
  d->src_kind = UPatData::Src::Tuple;
  d->in_src = std::move(alts);
  d->finalize();
  return UPat(std::shared_ptr<const UPatData>(d));
}
UPat UPat::or_casted(const std::string& name) const {
  UPat self = name.empty() ? *this : named(name);
  UPat c = UPat(Ops::CAST).src(*this);
  if (!name.empty()) c = c.named(name);
  return any(self, c);
}
UPat UPat::or_after(const std::string& name) const {
  UPat self = name.empty() ? *this : named(name);
  UPat a = UPat(Ops::AFTER).src(*this).any_len();
  if (!name.empty()) a = a.named(name);
  return any(self, a);
}
UPat UPat::f(Ops op) const { return UPat(op).src(*this); }
UPat UPat::f(Ops op, Arg a) const { return UPat(op).src(*this).arg(std::move(a)); }
UPat UPat::cast(std::optional<DType> dt) const {
  if (dt && d_->has_dtype && d_->dtypes.size() == 1 && d_->dtypes[0] == *dt) return *this;
  UPat r = UPat(Ops::CAST).src(*this);
  return dt ? r.dtype(*dt) : r;
}
UPat UPat::cast(const DTypes& dts) const { return UPat(Ops::CAST).dtype(dts).src(*this); }
UPat UPat::bitcast(std::optional<DType> dt) const {
  UPat r = UPat(Ops::BITCAST).src(*this);
  return dt ? r.dtype(*dt) : r;
}
UPat UPat::reduce(Ops op) const { return UPat(Ops::REDUCE).dtype_of(*this).src(*this).arg(Arg::tup(op, 0)); }
UPat UPat::reduce_any() const { return UPat(Ops::REDUCE).dtype_of(*this).src(*this); }
UPat UPat::broadcast() const { return UPat(Ops::STACK).dtype_of(*this).src_all(*this); }

DType UPat::first_dtype() const { return d_->has_dtype && !d_->dtypes.empty() ? d_->dtypes[0] : dtypes::void_; }

// UPat.alu: dtype bool for CMPLT/CMPNE, else the last operand's match dtype; commutative ops match every order
static UPat pat_alu(Ops op, std::vector<UPat> asrc) {
  UPat r(op);
  if (op == Ops::CMPLT || op == Ops::CMPNE)
    r = r.dtype(dtypes::bool_);
  else if (asrc.back().data()->has_dtype)
    r = r.dtype(asrc.back().data()->dtypes);
  return GroupOp::Commutative.has(op) ? r.src_list(std::move(asrc)) : r.src_tuple(std::move(asrc));
}
UPat UPat::alu(Ops op) const { return pat_alu(op, {*this}); }
UPat UPat::alu(Ops op, const UPat& a) const { return pat_alu(op, {*this, a}); }
UPat UPat::alu(Ops op, const UPat& a, const UPat& b) const { return pat_alu(op, {*this, a, b}); }
UPat UPat::binop(Ops op, const UPat& x, bool reverse) const {
  return reverse ? pat_alu(op, {x, *this}) : pat_alu(op, {*this, x});
}
UPat UPat::neg() const {
  if (first_dtype() == dtypes::bool_) return logical_not();
  return binop(Ops::MUL, UPat(PyConst(-1)));
}
UPat UPat::sub(const UPat& x, bool reverse) const {
  const UPat& a = reverse ? x : *this;
  const UPat& b = reverse ? *this : x;
  return a.alu(Ops::ADD, b.neg());
}
UPat UPat::div(const UPat& x, bool reverse) const {
  UPat a = reverse ? x : *this;
  const UPat& b = reverse ? *this : x;
  if (dtypes::is_int(a.first_dtype()) || a.first_dtype() == dtypes::bool_) a = a.cast(dtypes::default_float());
  return a.alu(Ops::MUL, b.reciprocal());
}

UPat operator+(const UPat& a, const UPat& b) { return a.binop(Ops::ADD, b); }
UPat operator-(const UPat& a, const UPat& b) { return a.sub(b); }
UPat operator*(const UPat& a, const UPat& b) { return a.binop(Ops::MUL, b); }
UPat operator/(const UPat& a, const UPat& b) { return a.div(b); }
UPat operator%(const UPat& a, const UPat& b) { return a.mod(b); }
UPat operator&(const UPat& a, const UPat& b) { return a.binop(Ops::AND, b); }
UPat operator|(const UPat& a, const UPat& b) { return a.binop(Ops::OR, b); }
UPat operator^(const UPat& a, const UPat& b) { return a.binop(Ops::XOR, b); }
UPat operator<<(const UPat& a, const UPat& b) { return a.binop(Ops::SHL, b); }
UPat operator>>(const UPat& a, const UPat& b) { return a.binop(Ops::SHR, b); }
UPat operator<(const UPat& a, const UPat& b) { return a.binop(Ops::CMPLT, b); }
UPat operator>(const UPat& a, const UPat& b) { return a.binop(Ops::CMPLT, b, true); }
UPat operator-(const UPat& a) { return a.neg(); }
UPat operator-(int a, const UPat& b) { return b.sub(UPat(PyConst(a)), true); }
UPat operator*(int a, const UPat& b) { return b.binop(Ops::MUL, UPat(PyConst(a)), true); }
UPat operator+(int a, const UPat& b) { return b.binop(Ops::ADD, UPat(PyConst(a)), true); }

std::string UPat::repr() const {
  const UPatData& d = *d_;
  if (d.is_any) {
    std::string r = "UPat.any(";
    for (size_t i = 0; i < d.in_src.size(); i++) r += (i ? ", " : "") + d.in_src[i].repr();
    return r + ")";
  }
  std::string r = "UPat(";
  if (d.any_op)
    r += "None";
  else if (d.op_list.size() == 1)
    r += op_repr(d.op_list[0]);
  else {
    r += "(";
    for (size_t i = 0; i < d.op_list.size(); i++) r += (i ? ", " : "") + op_repr(d.op_list[i]);
    r += ")";
  }
  if (d.has_dtype) {
    r += ", dtype=";
    if (d.dtypes.size() == 1)
      r += d.dtypes[0].repr();
    else {
      r += "(";
      for (size_t i = 0; i < d.dtypes.size(); i++) r += (i ? ", " : "") + d.dtypes[i].repr();
      r += ")";
    }
  }
  if (d.src_kind != UPatData::Src::None) {
    r += ", src=";
    const char* open = d.src_kind == UPatData::Src::List ? "[" : "(";
    const char* close = d.src_kind == UPatData::Src::List ? "]" : d.in_src.size() == 1 ? ",)" : ")";
    if (d.src_kind == UPatData::Src::Repeat)
      r += d.in_src[0].repr();
    else {
      r += open;
      for (size_t i = 0; i < d.in_src.size(); i++) r += (i ? ", " : "") + d.in_src[i].repr();
      r += close;
    }
  }
  if (d.has_arg) r += ", arg=" + d.arg.repr();
  if (!d.name.empty()) r += ", name=" + py_str_repr(d.name);
  if (d.allow_any_len) r += ", allow_any_len=True";
  return r + ")";
}

std::string encode_arg(const Arg& a);  // serialize.cpp

std::string UPat::canon() const {
  const UPatData& d = *d_;
  if (d.is_any) {
    std::string r = "any(";
    for (size_t i = 0; i < d.in_src.size(); i++) r += (i ? "," : "") + d.in_src[i].canon();
    return r + ")";
  }
  std::vector<std::string> ops;
  for (Ops o : d.op_list) ops.push_back(op_name(o));
  std::sort(ops.begin(), ops.end());
  std::string r = "P[";
  if (d.any_op) r += "*";
  for (size_t i = 0; i < ops.size(); i++) r += (i ? "|" : "") + ops[i];
  r += ";";
  if (!d.has_dtype)
    r += "*";
  else {
    std::vector<std::string> dts;
    for (DType dt : d.dtypes) dts.push_back(dt.repr().substr(7));
    std::sort(dts.begin(), dts.end());
    for (size_t i = 0; i < dts.size(); i++) r += (i ? "|" : "") + dts[i];
  }
  r += ";" + (d.has_arg ? encode_arg(d.arg) : std::string("*")) + ";" + d.name + ";";
  if (!d.has_tag)
    r += "*";
  else
    for (size_t i = 0; i < d.tags.size(); i++) r += (i ? "|" : "") + d.tags[i].str();
  r += std::string(";") + (d.strict_length ? "strict" : "any") + ";";
  auto kids = [&](const char* k) {
    std::string x = std::string(k) + "(";
    for (size_t i = 0; i < d.in_src.size(); i++) x += (i ? "," : "") + d.in_src[i].canon();
    return x + ")";
  };
  switch (d.src_kind) {
    case UPatData::Src::None:
      r += "-";
      break;
    case UPatData::Src::Repeat:
      r += kids("R");
      break;
    case UPatData::Src::List:
      r += kids("L");
      break;
    case UPatData::Src::Tuple:
      r += kids("T");
      break;
  }
  return r + "]";
}

// ************************* matching *************************

namespace {
// a non-owning callable reference (no allocation on the hot path)
class Cont {
 public:
  template <typename F>
  Cont(F& f) : obj_(&f), call_([](void* o) { return (*static_cast<F*>(o))(); }) {}  // NOLINT
  bool operator()() const { return call_(obj_); }

 private:
  void* obj_;
  bool (*call_)(void*);
};

bool match(const UPatData* p, detail::UOpNode* u, Bindings& b, Cont k);

// the checks of a pattern on the node itself, binding its name: false leaves b as it was
inline __attribute__((always_inline)) bool match_self(const UPatData* p, detail::UOpNode* u, Bindings& b) {
  if (!p->any_op && !p->ops.has(u->op)) return false;
  if (u->nsrc < p->required_len || (p->strict_length && u->nsrc != p->required_len)) return false;
  if (p->has_dtype && !((p->dtype_mask >> u->dtype.id()) & 1)) return false;
  int save = b.n;
  if (p->name_id != -2) {
    detail::UOpNode* bound = b.get(p->name_id);
    if (bound == nullptr) {
      if (b.n >= Bindings::kMax) throw Error("pattern has more than 16 names");
      b.ids[b.n] = (int16_t)p->name_id;
      b.vals[b.n++] = u;
    } else if (bound != u) {
      return false;
    }
  }
  bool ok = !p->has_arg || p->arg.py_eq(u->arg);
  if (ok && p->has_tag) {
    ok = false;
    for (const Arg& t : p->tags) ok |= t.py_eq(u->tag);
  }
  if (!ok) b.n = save;
  return ok;
}

// match srcs[i:] of u against pats[i:] (or the repeated pattern), then continue with k; false leaves b as it was.
// A run of leaf patterns (no srcs, no alternatives: one way to match each) is checked in a loop; a pattern with srcs
// recurses, with the rest of the sequence as its continuation
bool match_seq(const UPatData* const* pats, size_t npats, bool repeat, detail::UOpNode* u, size_t i, Bindings& b,
               Cont k) {
  size_t n = repeat ? u->nsrc : std::min<size_t>(npats, u->nsrc);
  int save = b.n;
  for (; i < n; i++) {
    const UPatData* p = repeat ? pats[0] : pats[i];
    if (!p->is_leaf) break;
    if (!match_self(p, u->srcs[i], b)) {
      b.n = save;
      return false;
    }
  }
  if (i >= n) {
    if (k()) return true;
    b.n = save;
    return false;
  }
  const UPatData* p = repeat ? pats[0] : pats[i];
  auto next = [&]() { return match_seq(pats, npats, repeat, u, i + 1, b, k); };
  if (match(p, u->srcs[i], b, Cont(next))) return true;
  b.n = save;
  return false;
}

bool match(const UPatData* p, detail::UOpNode* u, Bindings& b, Cont k) {
  if (p->is_any) {
    for (const UPat& alt : p->in_src) {
      int save = b.n;
      if (match(alt.data(), u, b, k)) return true;
      b.n = save;
    }
    return false;
  }
  int save = b.n;
  if (!match_self(p, u, b)) return false;
  if (p->src_kind == UPatData::Src::None) {
    bool r = k();
    b.n = save;
    return r;
  }
  if (p->src_kind == UPatData::Src::Repeat) {
    const UPatData* rep = p->in_src[0].data();
    bool r = match_seq(&rep, 1, true, u, 0, b, k);
    b.n = save;
    return r;
  }
  int after_self = b.n;  // each ordering starts from the store holding this node's own binding
  for (size_t o = 0; o < p->raw_orders.size(); o++) {
    const auto& order = p->raw_orders[o];
    // cheap necessary condition before recursing: every src's op is accepted by its child pattern
    const auto& ops = p->order_ops[o];
    size_t n = std::min<size_t>(order.size(), u->nsrc);
    bool possible = true;
    for (size_t c = 0; c < n && possible; c++) possible = ops[c].has(u->srcs[c]->op);
    if (!possible) continue;
    if (match_seq(order.data(), order.size(), false, u, 0, b, k)) return true;
    b.n = after_self;
  }
  b.n = save;
  return false;
}
}  // namespace

namespace detail {
// run one rule on u: the function is called for each complete binding until it returns something that is not None.
// A result that is the node itself counts as no match (and the rule's remaining bindings are not tried).
bool try_rule(const RuleData& r, const UOp& u, CtxRef ctx, void* out, bool uop_result) {
  Bindings b;
  bool got = false;
  const UPatData* p = r.pat.data();
  if (p->is_leaf) {  // a root with no srcs to match: one way to match, no continuation
    if (match_self(p, u.node(), b)) got = r.invoke(r, b, ctx, out);
  } else {
    auto k = [&]() {
      got = r.invoke(r, b, ctx, out);
      return got;
    };
    match(p, u.node(), b, Cont(k));
  }
  if (!got) return false;
  if (uop_result && static_cast<UOp*>(out)->node() == u.node()) {
    *static_cast<UOp*>(out) = UOp();
    return false;
  }
  return true;
}

[[noreturn]] void throw_ctx_mismatch(const RuleData& r, const std::type_info& want, CtxRef got) {
  throw Error("rule at " + r.file + ":" + std::to_string(r.src.line) + " takes a ctx of type " + want.name() +
              ", graph_rewrite passed " + (got.p == nullptr ? std::string("no ctx") : got.type->name()));
}

// the parameter names of the lambda in a TG_RULE's text: the last top-level argument's parameter list
std::vector<std::string> parse_lambda_params(const char* text) {
  std::string s(text);
  // split at top-level commas, skipping string/char literals
  std::vector<size_t> cuts;
  int depth = 0;
  for (size_t i = 0; i < s.size(); i++) {
    char c = s[i];
    if (c == '"' || c == '\'') {
      for (i++; i < s.size() && s[i] != c; i++)
        if (s[i] == '\\') i++;
      continue;
    }
    if (c == '(' || c == '[' || c == '{')
      depth++;
    else if (c == ')' || c == ']' || c == '}')
      depth--;
    else if (c == ',' && depth == 0)
      cuts.push_back(i);
  }
  if (cuts.empty()) return {};
  std::string fn = s.substr(cuts.back() + 1);
  size_t lb = fn.find('[');
  if (lb == std::string::npos) return {};
  size_t rb = fn.find(']', lb);
  size_t lp = fn.find('(', rb);
  if (rb == std::string::npos || lp == std::string::npos) return {};
  size_t rp = lp;
  depth = 0;
  for (; rp < fn.size(); rp++) {
    if (fn[rp] == '(')
      depth++;
    else if (fn[rp] == ')' && --depth == 0)
      break;
  }
  std::string params = fn.substr(lp + 1, rp - lp - 1);
  std::vector<std::string> out;
  depth = 0;
  std::string cur;
  auto flush = [&]() {
    size_t eq = cur.find('=');
    if (eq != std::string::npos) cur = cur.substr(0, eq);
    size_t e = cur.find_last_not_of(" \t\n");
    if (e == std::string::npos) return;
    size_t st = e;
    while (st > 0 && (isalnum((unsigned char)cur[st - 1]) || cur[st - 1] == '_')) st--;
    out.push_back(cur.substr(st, e - st + 1));
    cur.clear();
  };
  for (char c : params) {
    if (c == '<' || c == '(') depth++;
    if (c == '>' || c == ')') depth--;
    if (c == ',' && depth == 0)
      flush();
    else
      cur += c;
  }
  flush();
  return out;
}

static std::mutex g_rules_mu;
// owns every rule for the life of the process (never destroyed: statistics print at exit, after static matchers die)
static std::vector<Rule>& rule_registry() {
  static auto* v = new std::vector<Rule>();
  return *v;
}

void finish_rule(const Rule& rule, const std::vector<std::string>& params) {
  RuleData& r = *rule;
  if (r.pat.data()->any_op || r.pat.data()->is_any)
    throw Error(std::string("rule at ") + r.src.file + ":" + std::to_string(r.src.line) +
                ": the top pattern of a rule needs an op");
  for (const std::string& p : params) r.param_ids.push_back(name_id(p));
  std::string f = r.src.file;
  const char* root = TG_SOURCE_ROOT;
  if (f.rfind(root, 0) == 0) f = f.substr(std::strlen(root));
  r.file = f;
  r.text = r.src.text;
  r.early_reject = r.pat.data()->early_reject();
  r.needs_invalid = r.pat.data()->requires_invalid();
  r.shared_src_depths = (int8_t)r.pat.data()->shared_src_depths();
  r.needs_src_const = r.pat.data()->required_src_const();
  r.ops = r.pat.data()->op_list;
  std::lock_guard<std::mutex> lk(g_rules_mu);
  r.id = (uint32_t)rule_registry().size();
  rule_registry().push_back(rule);
}
}  // namespace detail

const RuleData* rule_by_id(uint32_t id) {
  std::lock_guard<std::mutex> lk(detail::g_rules_mu);
  return id < detail::rule_registry().size() ? detail::rule_registry()[id].get() : nullptr;
}
uint32_t rule_count() {
  std::lock_guard<std::mutex> lk(detail::g_rules_mu);
  return (uint32_t)detail::rule_registry().size();
}

// ************************* PatternMatcher *************************

// DISABLE_RULE=file:line[,file:line...]: those rules never fire (a file is matched by its base name). For asking what
// one rule does to a program's rewrites: record with and without it and `tinyviz-cli diff` the two traces. Read once;
// the rules are left out of the op buckets, so a disabled rule costs nothing while matching
static bool rule_disabled(const RuleSrc& src) {
  static const std::vector<std::pair<std::string, int>> disabled = [] {
    std::vector<std::pair<std::string, int>> out;
    const char* env = std::getenv("DISABLE_RULE");
    std::string s = env ? env : "";
    for (size_t pos = 0; pos < s.size();) {
      size_t end = s.find(',', pos);
      if (end == std::string::npos) end = s.size();
      std::string item = s.substr(pos, end - pos);
      pos = end + 1;
      size_t colon = item.rfind(':');
      char* rest = nullptr;
      long line = colon == std::string::npos ? 0 : std::strtol(item.c_str() + colon + 1, &rest, 10);
      if (colon == std::string::npos || colon == 0 || line <= 0 || (rest && *rest)) {
        // read while the rule tables are built (static initialization): reported as the ContextVars' bad values are
        std::fprintf(stderr,
                     "tinygrad: environment variable DISABLE_RULE: '%s' is not file:line (e.g. symbolic.cpp:274)\n",
                     item.c_str());
        std::exit(2);
      }
      out.emplace_back(item.substr(0, colon), (int)line);
    }
    return out;
  }();
  if (disabled.empty()) return false;
  const char* base = std::strrchr(src.file, '/');
  base = base ? base + 1 : src.file;
  for (auto& [file, line] : disabled)
    if (line == src.line && (file == base || file == src.file)) {
      static std::mutex m;
      static std::set<std::pair<std::string, int>> told;
      std::lock_guard<std::mutex> lock(m);
      if (told.insert({file, line}).second) std::fprintf(stderr, "DISABLE_RULE: %s:%d never fires\n", base, line);
      return true;
    }
  return false;
}

void PatternMatcherBase::add_rules(const std::vector<Rule>& rules) {
  static std::atomic<uint32_t> next_uid{1};
  const uint32_t uid = next_uid.fetch_add(1, std::memory_order_relaxed);
  uid_ = uid < (1u << 26) ? uid : 0;  // the cache's tags hold 26 bits of it; later rule sets are not cached
  rules_ = rules;
  for (auto& b : pdict_) b.clear();
  root_ops_ = OpSet();
  for (const Rule& r : rules_)
    if (!rule_disabled(r->src))
      for (Ops op : r->ops) pdict_[(int)op].push_back(r.get()), root_ops_.add(op);
}

thread_local bool detail::bottom_up_gate = false;

// the nodes at most d levels below x (x included) into out, n of them; false when there are more than kMaxBelow
constexpr int kMaxBelow = 24;
static bool nodes_below(const detail::UOpNode* x, int d, const detail::UOpNode** out, int& n) {
  if (n == kMaxBelow) return false;
  out[n++] = x;
  if (d > 0)
    for (uint32_t k = 0; k < x->nsrc; k++)
      if (!nodes_below(x->srcs[k], d - 1, out, n)) return false;
  return true;
}
// two srcs of n reach one node, the first within d1 levels below it and the other within d2 (RuleData::
// shared_src_depths): true also when there are too many nodes to compare (the rule is tried)
static bool has_shared_src(const detail::UOpNode* n, int d1, int d2) {
  for (uint32_t i = 0; i < n->nsrc; i++) {
    const detail::UOpNode* a[kMaxBelow];
    int na = 0;
    if (!nodes_below(n->srcs[i], d1, a, na)) return true;
    for (uint32_t j = 0; j < n->nsrc; j++) {
      if (i == j || (d1 == d2 && j < i)) continue;  // equal depths: each unordered pair once
      const detail::UOpNode* b[kMaxBelow];
      int nb = 0;
      if (!nodes_below(n->srcs[j], d2, b, nb)) return true;
      for (int x = 0; x < na; x++)
        for (int y = 0; y < nb; y++)
          if (a[x] == b[y]) return true;
    }
  }
  return false;
}

// has_shared_src's necessary condition, from Bloom filters of the nodes below each src (a bit per node, from its
// structural hash; UOpNode::below1 holds a node's and its srcs' bits): false proves that no two srcs of n reach a
// common node within d1 and d2 levels; true may be a collision (or n has more srcs than it looks at), and
// has_shared_src decides.
static uint64_t below_filter(const detail::UOpNode* x, int d) {
  if (d == 0) return detail::below_bit(x);
  uint64_t b = x->below1;
  if (d == 2)
    for (uint32_t k = 0; k < x->nsrc; k++) b |= x->srcs[k]->below1;
  return b;
}
static bool may_share_src(const detail::UOpNode* n, int d1, int d2) {
  constexpr uint32_t kMax = 4;
  if (n->nsrc > kMax) return true;
  uint64_t a[kMax], b[kMax];
  for (uint32_t i = 0; i < n->nsrc; i++) {
    a[i] = below_filter(n->srcs[i], d1);
    b[i] = d1 == d2 ? a[i] : below_filter(n->srcs[i], d2);
  }
  for (uint32_t i = 0; i < n->nsrc; i++)
    for (uint32_t j = 0; j < n->nsrc; j++)
      if (i != j && (a[i] & b[j])) return true;
  return false;
}

// a src of n is a CONST whose arg is python-equal to arg (RuleData::needs_src_const)
static bool has_src_const(const detail::UOpNode* n, const Arg& arg) {
  for (uint32_t i = 0; i < n->nsrc; i++)
    if (n->srcs[i]->op == Ops::CONST && arg.py_eq(n->srcs[i]->arg)) return true;
  return false;
}

namespace {
// The checks of a rule that depend on the node's kind alone: its srcs' ops (early reject, and in order for each src
// ordering of the root pattern), an Invalid in its slice, its dtype and its number of srcs. A rule failing them is not
// tried (the root's op is the bucket's; is_any roots are refused by finish_rule).
inline bool kind_admits(const RuleData* r, const detail::UOpNode* n, OpSet src_ops) {
  if (!r->early_reject.subset_of(src_ops)) return false;
  if (r->needs_invalid && !(n->flags.load(std::memory_order_relaxed) & detail::kSliceInvalid)) return false;
  const UPatData* p = r->pat.data();
  if (p->has_dtype && !((p->dtype_mask >> n->dtype.id()) & 1)) return false;
  if (n->nsrc < p->required_len || (p->strict_length && n->nsrc != p->required_len)) return false;
  if (p->raw_orders.empty()) return true;
  for (size_t o = 0; o < p->order_ops.size(); o++) {
    const auto& ops = p->order_ops[o];
    size_t k = std::min<size_t>(ops.size(), n->nsrc);
    bool possible = true;
    for (size_t c = 0; c < k && possible; c++) possible = ops[c].has(n->srcs[c]->op);
    if (possible) return true;
  }
  return false;
}
// the checks that depend on the node itself (two srcs that are one node, a CONST src's value, the rule's own first
// test), then the match and the call; false with the gate set when the rule gated the node
// shared: has_shared_src(n, d1, d2) by d1 * 3 + d2 once known (-1: not yet; the node's rules ask a few of them)
inline bool node_try(const RuleData* r, const UOp& u, CtxRef ctx, void* out, bool uop_result, int8_t* shared) {
  detail::UOpNode* n = u.node();
  if (const int8_t k = r->shared_src_depths; k >= 0) {
    if (shared[k] < 0) shared[k] = may_share_src(n, k / 3, k % 3) && has_shared_src(n, k / 3, k % 3);
    if (!shared[k]) return false;
  }
  if (!r->needs_src_const.is_none() && !has_src_const(n, r->needs_src_const)) return false;
  if (r->pre && !r->pre(u)) return false;
  return detail::try_rule(*r, u, ctx, out, uop_result);
}

// Which rules of a bucket admit a node's kind, per (rule set, kind), cached per thread: a bucket of many rules (sym's
// ADD has 22) mostly fails them, and a kernel's nodes are of a few hundred kinds. A kind is (op, dtype, up to 3 srcs'
// ops in order, Invalid in the slice); a node with more srcs takes the loop over the whole bucket. Direct-mapped: a
// slot holds one (rule set, kind) and is overwritten by another; a list longer than a slot holds is not cached.
constexpr size_t kKindSlots = 2048, kKindMax = 22;
constexpr uint8_t kKindTooMany = 0xff;
struct KindSlot {
  uint64_t tag = 0;  // (rule set uid << 38) | kind; 0: empty (uids start at 1)
  uint8_t n = 0;     // rules listed, or kKindTooMany
  uint8_t idx[kKindMax + 1];
};
static_assert(sizeof(KindSlot) == 32);
thread_local KindSlot* t_kind_slots = nullptr;  // made on the thread's first listed bucket, freed when it ends
thread_local bool t_kind_slots_gone = false;    // freed: a rewrite run by a later thread-exit destructor lists none
struct KindSlotsOwner {
  ~KindSlotsOwner() {
    delete[] t_kind_slots;
    t_kind_slots = nullptr, t_kind_slots_gone = true;
  }
};
// this thread's slots, or null once they are gone
KindSlot* kind_slots() {
  if (!t_kind_slots && !t_kind_slots_gone) [[unlikely]] {
    thread_local KindSlotsOwner owner;
    t_kind_slots = new KindSlot[kKindSlots]();
  }
  return t_kind_slots;
}
constexpr size_t kMinCachedBucket = 6;  // a smaller bucket's loop is as cheap as the lookup

// the node's kind in 38 bits, or 0 when it has more than 3 srcs
inline uint64_t kind_of(const detail::UOpNode* n) {
  if (n->nsrc > 3) return 0;
  uint64_t k = (uint64_t)n->op | (uint64_t)n->dtype.id() << 7 | (uint64_t)n->nsrc << 13 |
               (uint64_t)((n->flags.load(std::memory_order_relaxed) & detail::kSliceInvalid) != 0) << 15;
  for (uint32_t i = 0; i < n->nsrc; i++) k |= (uint64_t)n->srcs[i]->op << (16 + 7 * i);
  return k | uint64_t(1) << 37;  // never 0
}
static_assert(NUM_OPS < 128, "an op takes 7 bits of a kind");
}  // namespace

bool PatternMatcherBase::try_bucket(const UOp& u, CtxRef ctx, void* out, bool uop_result) const {
  const auto& bucket = pdict_[(int)u.op()];
  if (TRACK_MATCH_STATS.value() > 0) [[unlikely]]
    return track::tracked_rewrite(bucket, u, ctx, out, uop_result);
  detail::UOpNode* n = u.node();
  const uint64_t kind =
      bucket.size() >= kMinCachedBucket && bucket.size() < kKindTooMany && uid_ && n->dtype.id() < 64 ? kind_of(n) : 0;
  KindSlot* slots = kind ? kind_slots() : nullptr;
  if (slots) {
    const uint64_t tag = (uint64_t)uid_ << 38 | kind;
    KindSlot& s = slots[((tag * 0x9e3779b97f4a7c15ULL) >> 40) & (kKindSlots - 1)];
    if (s.tag != tag) {
      const OpSet src_ops = u.src_ops();
      uint8_t m = 0;
      for (size_t i = 0; i < bucket.size() && m != kKindTooMany; i++)
        if (kind_admits(bucket[i], n, src_ops)) m = m < kKindMax ? (s.idx[m] = (uint8_t)i, m + 1) : kKindTooMany;
      s.tag = tag, s.n = m;
    }
    if (s.n != kKindTooMany) {
      // the slot may be overwritten by a nested rewrite the rules run: its list is copied first
      uint8_t idx[kKindMax];
      const uint8_t m = s.n;
      std::copy(s.idx, s.idx + m, idx);
      int8_t shared[9] = {-1, -1, -1, -1, -1, -1, -1, -1, -1};
      for (uint8_t i = 0; i < m; i++) {
        if (node_try(bucket[idx[i]], u, ctx, out, uop_result, shared)) return true;
        if (detail::bottom_up_gate) [[unlikely]]
          return false;  // the rule gated the node: no later rule is tried, as when it throws BottomUpGate
      }
      return false;
    }
  }
  const OpSet src_ops = u.src_ops();
  int8_t shared[9] = {-1, -1, -1, -1, -1, -1, -1, -1, -1};
  for (const RuleData* r : bucket) {
    if (!kind_admits(r, n, src_ops)) continue;
    if (node_try(r, u, ctx, out, uop_result, shared)) return true;
    if (detail::bottom_up_gate) [[unlikely]]
      return false;  // the rule gated the node: no later rule is tried, as when it throws BottomUpGate
  }
  return false;
}

}  // namespace tg
