#include "lib/renderer/renderer.h"

#include <sched.h>

#include <algorithm>
#include <fstream>

#include "lib/codegen/late/uop_props.h"
#include "lib/helpers.h"

namespace tg {

int64_t cpu_count() {
  std::ifstream f("/sys/fs/cgroup/cpu.max");
  std::string quota, period;
  if (f >> quota >> period && quota != "max") {
    try {
      int64_t q = std::stoll(quota), p = std::stoll(period);
      if (p != 0) return std::max<int64_t>(1, q / p);
    } catch (const std::exception&) {
    }
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}
ContextVar NUM_CPU_THREADS("NUM_CPU_THREADS", cpu_count(), 1, 1024);

static std::string strip_trailing_colons(std::string s) {
  while (!s.empty() && s.back() == ':') s.pop_back();
  return s;
}
std::string Target::repr() const {
  std::string fst = strip_trailing_colons(interface + ":" + indices);
  std::string snd = strip_trailing_colons(device + ":" + renderer + ":" + arch);
  return (fst.empty() ? "" : fst + "+") + snd;
}

CodeForOp::CodeForOp(std::initializer_list<std::pair<Ops, CodeFn>> items) {
  for (const auto& [op, fn] : items) set(op, fn);
}
void CodeForOp::set(Ops op, CodeFn fn) {
  for (auto& [o, f] : items_)
    if (o == op) {
      f = std::move(fn);
      return;
    }
  items_.emplace_back(op, std::move(fn));
}
void CodeForOp::erase(Ops op) {
  items_.erase(std::remove_if(items_.begin(), items_.end(), [&](const auto& p) { return p.first == op; }),
               items_.end());
}
bool CodeForOp::has(Ops op) const {
  for (const auto& [o, f] : items_)
    if (o == op) return true;
  return false;
}
const CodeFn& CodeForOp::at(Ops op) const {
  for (const auto& [o, f] : items_)
    if (o == op) return f;
  throw Error(std::string("code_for_op has no ") + op_repr(op));
}
std::vector<Ops> CodeForOp::keys() const {
  std::vector<Ops> r;
  for (const auto& [o, f] : items_) r.push_back(o);
  return r;
}

// ************************* Estimates *************************

// python's int|UOp arithmetic: ints stay ints, otherwise the mixin operators in the written order (an int operand is
// a python int const, a UOp is used as it is)
static UOp as_uop(const sint& a) { return a.is_int() ? UOp::const_(PyConst(a.i())) : a.u(); }
static sint s_add(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return sint(sat_add(a.i(), b.i()));
  return sint(as_uop(a) + as_uop(b));
}
static sint s_mul(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return sint(sat_mul(a.i(), b.i()));
  return sint(as_uop(a) * as_uop(b));
}
static sint s_ssimplify(const sint& a) { return a.is_int() ? a : a.u().ssimplify(); }
// smin: the UOps reduced with minimum, the ints folded with min, then ssimplify
static sint s_min(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return sint(std::min(a.i(), b.i()));
  if (!a.is_int() && !b.is_int()) return a.u().minimum(b.u()).ssimplify();
  const sint& u = a.is_int() ? b : a;
  const sint& n = a.is_int() ? a : b;
  return u.u().minimum(as_uop(n)).ssimplify();
}

Estimates Estimates::operator+(const Estimates& o) const {
  return Estimates{s_add(ops, o.ops), s_add(lds, o.lds), s_add(mem, o.mem)};
}
Estimates Estimates::simplify() const { return Estimates{s_ssimplify(ops), s_ssimplify(lds), s_ssimplify(mem)}; }

Estimates Estimates::from_uops(const std::vector<UOp>& uops, bool ignore_indexing) {
  sint flops = 0, lds = 0, mults = 1;
  std::vector<std::pair<std::pair<UOp, Ops>, sint>> mem;  // insertion-ordered dict
  std::vector<sint> mult_stack;
  UOpSet excluded;
  AddrSpaceCache as;
  if (ignore_indexing) {
    for (const UOp& u : uops)
      if (u.op() == Ops::INDEX || u.op() == Ops::SHRINK) {
        std::vector<UOp> idx(u.src().begin() + 1, u.src().end());
        for (const UOp& x : UOp::sink(idx).toposort([](const UOp& y) { return y.op() != Ops::END; })) excluded.insert(x);
      }
  }
  auto numel = [](const UOp& u) { return sint(max_numel(u)); };
  for (const UOp& u : uops) {
    Ops op = u.op();
    if (op == Ops::LOAD || op == Ops::STORE) {
      UOp buf = u;
      while (buf.nsrc() && buf.op() != Ops::PARAM) buf = buf.src(0);
      if (buf.op() == Ops::PARAM) {
        // u.src[0] is INDEX, cap at buffer size for re-reads (e.g. matmul)
        auto it = std::find_if(mem.begin(), mem.end(), [&](const auto& e) { return e.first.first == buf && e.first.second == op; });
        sint prev = it == mem.end() ? sint(0) : it->second;
        sint accessed = s_add(prev, s_mul(s_mul(numel(u.src(0)), sint((pyint)u.src(0).dtype().itemsize())), mults));
        sint capped = s_min(accessed, sint(max_numel(buf) * buf.dtype().itemsize()));
        if (it == mem.end()) mem.push_back({{buf, op}, capped});
        else it->second = capped;
      }
    }
    if (op == Ops::RANGE) {
      mult_stack.push_back(mults);
      if (u.dtype() != dtypes::void_) {  // an unbounded loop has an unknown trip count
        mults = s_mul(mults, u.src(0).ssimplify());
        // SPECIAL are already counted in mults
        if (!mults.is_int()) {
          std::vector<std::pair<UOp, UOp>> subs;
          for (const UOp& x : mults.u().toposort())
            if (x.op() == Ops::SPECIAL) subs.push_back({x, x.const_like(0)});
          mults = sint(mults.u().substitute(subs));
        }
      }
    } else if (op == Ops::END) {
      mults = mult_stack.back();
      mult_stack.pop_back();
    } else if (op == Ops::SPECIAL) {
      mults = s_mul(mults, u.src(0).ssimplify());  // not pushed to the mult_stack: SPECIALs are never ended
    } else if (op == Ops::PARAM && as.get(u) == AddrSpace::ALU && u.expr() == "core_id") {
      mults = s_mul(mults, sint(u.vmax().as_int() + 1));
    } else if (op == Ops::LOAD && as.get(u.src(0)) != AddrSpace::REG) {
      lds = s_add(lds, s_mul(s_mul(numel(u), sint((pyint)u.dtype().itemsize())), mults));
    } else if (op == Ops::STORE && as.get(u.src(0)) != AddrSpace::REG) {
      lds = s_add(lds, s_mul(s_mul(numel(u), sint((pyint)u.src(1).dtype().itemsize())), mults));
    } else if (GroupOp::ALU.has(op) && !excluded.count(u)) {
      flops = s_add(flops, s_mul(s_mul(mults, sint(op == Ops::MULACC ? 2 : 1)), numel(u)));
    } else if (op == Ops::WMMA && !excluded.count(u)) {
      pyint p = 1;
      for (const Arg& d : u.arg()[0].items()) p *= d.as_int();
      flops = s_add(flops, s_mul(sint(2 * p / u.arg()[3].as_int()), mults));
    }
  }
  sint total = 0;
  for (const auto& [k, v] : mem) total = s_add(total, v);
  return Estimates{flops, lds, total};
}

std::string Renderer::render(const std::vector<UOp>&) const { throw Error("needs a renderer"); }

std::vector<DType> Renderer::supported_dtypes() const {
  // double can't be bitcast to anything without long support (EMULATED_DTYPES is not ported: nothing is emulated)
  return dtypes::all;
}

}  // namespace tg
