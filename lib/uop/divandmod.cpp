#include "lib/uop/divandmod.h"

#include <mutex>

#include "lib/uop/pyutil.h"

namespace tg {

static UOp ic(pyint v) { return UOp::const_(PyConst(v)); }

static UOp fold_divmod_general_impl(const UOp& d);

// functools.cache: results (including None) are kept per node
namespace {
// in a PrivateNodes scope: this thread's cache of its private nodes (adopt_private clears it before it hands nodes
// out)
thread_local UOpMap<UOp>* t_private_cache = nullptr;
const bool g_registered = (register_private_cache([] {
                             if (t_private_cache) t_private_cache->clear();
                           }),
                           true);
}  // namespace

UOp fold_divmod_general(const UOp& d) {
  if (in_private_nodes()) {
    if (!t_private_cache) t_private_cache = new UOpMap<UOp>();
    auto it = t_private_cache->find(d);
    if (it != t_private_cache->end()) return it->second;
    UOp r = fold_divmod_general_impl(d);
    t_private_cache->emplace(d, r);
    return r;
  }
  static std::mutex mu;
  static UOpMap<UOp> cache;
  {
    std::lock_guard<std::mutex> lk(mu);
    auto it = cache.find(d);
    if (it != cache.end()) return it->second;
  }
  UOp r = fold_divmod_general_impl(d);
  std::lock_guard<std::mutex> lk(mu);
  cache.emplace(d, r);
  return r;
}

static UOp fold_divmod_general_impl(const UOp& d) {
  const UOp& x = d.src(0);
  const UOp& y = d.src(1);
  bool is_mod = d.op() == Ops::FLOORMOD;
  if (y.vmin() == PyConst(0) && y.vmax() == PyConst(0))
    throw Error(std::string(is_mod ? "Mod" : "Division") + " by zero trying to rewrite " +
                x.alu(d.op(), y).render(false));
  // x//y is constant
  UOp xdiv = x.floordiv(y);
  if (xdiv.vmin() == xdiv.vmax()) {
    if (is_mod) return x - (UOp::const_(xdiv.vmin()) * y);
    return xdiv.const_like(xdiv.vmin());
  }
  // PARAM // c is irreducible
  if (x.op() == Ops::PARAM && y.op() == Ops::CONST && x.param_arg() && x.param_arg()->has_multiple_of &&
      py::fmod(x.param_arg()->multiple_of, y.val().as_int()) == 0)
    return is_mod ? d.const_like(0) : UOp();

  auto [x_peeled, const_pc] = x.pop_const();
  pyint cst = const_pc.as_int();
  std::vector<UOp> uops_no_const = x_peeled.split_uop(Ops::ADD);

  if (y.op() == Ops::CONST && y.val().as_int() > 0) {
    pyint c = y.val().as_int();
    // nested_div: (x%(k*c))//c -> (x//c)%k
    if (!is_mod && x.op() == Ops::FLOORMOD) {
      if (UOp k = x.src(1).divides(c); k && (k > PyConst(0)).as_bool()) return x.src(0).floordiv(y) % k;
    }
    // remove_nested_mod in sum: (a%4 + b)%2 -> (a+b)%2
    if (is_mod) {
      std::vector<UOp> new_xs;
      bool changed = false;
      for (UOp u : uops_no_const) {
        if (u.op() == Ops::FLOORMOD && u.src(1).divides(c)) {
          u = u.src(0);
          changed = true;
        }
        new_xs.push_back(u);
      }
      if (changed) return (UOp::usum_of(new_xs) + PyConst(cst)) % y;
    }
    std::vector<UOp> terms;
    std::vector<pyint> factors;
    for (const UOp& u : uops_no_const) {
      pyint f = u.const_factor().as_int();
      terms.push_back(u.divides(f));
      factors.push_back(f);
    }
    // fold_divmod_congruence
    std::vector<std::vector<pyint>> rem_choices;
    for (pyint f : factors) {
      pyint r = py::fmod(f, c);
      if (r * 2 == c || terms.size() == 1)
        rem_choices.push_back({r, r - c});
      else
        rem_choices.push_back({py::iabs(r) <= py::iabs(r - c) ? r : r - c});
    }
    std::vector<size_t> pick(rem_choices.size(), 0);
    for (;;) {
      std::vector<UOp> prods;
      for (size_t i = 0; i < terms.size(); i++) prods.push_back(ic(rem_choices[i][pick[i]]) * terms[i]);
      UOp rem = py::sum(prods) + PyConst(py::fmod(cst, c));
      pyint rmin = rem.vmin().as_int(), rmax = rem.vmax().as_int();
      if (py::fdiv(rmin, c) == py::fdiv(rmax, c)) {
        if (is_mod) return rem - PyConst(py::fdiv(rmin, c) * c);
        std::vector<UOp> q;
        for (size_t i = 0; i < terms.size(); i++)
          q.push_back(ic(py::fdiv(factors[i] - rem_choices[i][pick[i]], c)) * terms[i]);
        return (py::sum(q) + PyConst(py::fdiv(cst, c))) + PyConst(py::fdiv(rmin, c));
      }
      // itertools.product order: the last position varies fastest
      size_t k = pick.size();
      while (k > 0) {
        if (++pick[k - 1] < rem_choices[k - 1].size()) break;
        pick[k - 1] = 0;
        k--;
      }
      if (k == 0) break;
    }
    // gcd_with_remainder
    pyint g = c;
    for (pyint f : factors) {
      pyint a = py::iabs(f), b = py::iabs(g);
      while (b) {
        pyint t = a % b;
        a = b;
        b = t;
      }
      g = a;
    }
    if (g > 1) {
      UOp dv = x_peeled.divides(g);
      if (!dv) throw Error("fold_divmod_general: unwrap of None");
      UOp new_x = dv.simplify() + PyConst(py::fmod(py::fdiv(cst, g), py::fdiv(c, g)));
      if (!py_lt(new_x.vmin(), PyConst(0))) {
        if (is_mod) return ((new_x % PyConst(py::fdiv(c, g))) * PyConst(g)) + PyConst(py::fmod(cst, g));
        return new_x.floordiv(ic(py::fdiv(c, g))) + PyConst(py::fdiv(cst, c));
      }
    }
    // nest_by_factor
    std::vector<pyint> divs;
    for (size_t i = 0; i < uops_no_const.size(); i++) {
      pyint f = factors[i], af = py::iabs(f);
      if (uops_no_const[i].op() != Ops::CONST && 1 < af && af < c && py::fmod(c, f) == 0) divs.push_back(af);
    }
    std::vector<std::pair<size_t, UOp>> results;
    for (pyint div : py::set_order(divs)) {
      UOp newxs = fold_divmod_general(x.floordiv(ic(div)));
      if (!newxs) continue;
      if (!is_mod) {
        results.push_back({newxs.backward_slice().size(), newxs.floordiv(ic(py::fdiv(c, div)))});
      } else if (!py_lt(x.vmin(), PyConst(0)) && !py_lt(newxs.vmin(), PyConst(0))) {
        std::vector<UOp> b_parts;
        for (size_t i = 0; i < terms.size(); i++)
          if (py::fmod(factors[i], div)) b_parts.push_back(ic(py::fmod(factors[i], div)) * terms[i]);
        if (py::fmod(cst, div)) b_parts.push_back(x.const_like(PyConst(py::fmod(cst, div))));
        UOp b = b_parts.empty() ? x.const_like(0) : UOp::usum_of(b_parts);
        if (!py_lt(b.vmin(), PyConst(0)) && py_lt(b.vmax(), PyConst(div))) {
          UOp r = ((newxs % ic(py::fdiv(c, div))) * PyConst(div)) + b;
          results.push_back({r.backward_slice().size(), r});
        }
      }
    }
    if (!results.empty()) {
      size_t best = 0;
      for (size_t i = 1; i < results.size(); i++)
        if (results[i].first < results[best].first) best = i;
      return results[best].second;
    }
  }
  // ** variable denominator / fallback rules **
  std::vector<UOp> all_uops = x.split_uop(Ops::ADD);
  std::vector<UOp> gargs = all_uops;
  gargs.push_back(y);
  UOp gcd = UOp::gcd(gargs).simplify();
  if (!(gcd.op() == Ops::CONST && gcd.val() == PyConst(1))) {
    UOp xd = x.divide_exact(gcd), yd = y.divide_exact(gcd);
    if (!xd || !yd) throw Error("fold_divmod_general: divide_exact of the gcd failed");
    UOp ret = xd.alu(d.op(), yd);
    return is_mod ? ret * gcd : ret;
  }
  // factor_remainder: (d*x+y)//d -> x+y//d
  if (py_lt(y.vmin(), PyConst(0)) || py_lt(x.vmin(), PyConst(0))) return UOp();
  std::vector<UOp> quo, rem;
  for (const UOp& u : all_uops) {
    if (UOp q = u.divide_exact(y)) {
      quo.push_back(q);
      continue;
    }
    if (y.op() == Ops::CONST) {
      pyint c = u.const_factor().as_int(), yv = y.val().as_int();
      if (py::fmod(c, yv) != c) {
        rem.push_back(u.divides(c) * PyConst(py::fmod(c, yv)));
        quo.push_back(!is_mod ? u.divides(c) * PyConst(py::fdiv(c, yv)) : u.const_like(0));
        continue;
      }
    }
    rem.push_back(u);
  }
  if (quo.empty()) return UOp();
  UOp new_x = py::sum_plus(rem, x.const_like(0));
  if (py_lt(new_x.vmin(), PyConst(0))) return UOp();
  return is_mod ? new_x % y : new_x.floordiv(y) + py::sum(quo);
}

const PatternMatcher& div_and_mod_symbolic() {
  static const PatternMatcher pm(
      "div_and_mod_symbolic",
      {
          // (x//c+a)//d -> (x+a*c)//(c*d) for c>0, d>0
          TG_RULE((UPat::var("x").floordiv(UPat::cvar("c")) + UPat::cvar("a")).floordiv(UPat::cvar("d")),
                  [](U x, U c, U a, U d) { return py_lt(PyConst(0), d.vmin()) ? (x + a * c).floordiv(c * d) : UOp(); }),
          // (x+c)//d -> (x+c%d)//d + c//d ; (x+c)%d -> (x+c%d)%d
          TG_RULE(UPat(ops(Ops::FLOORDIV, Ops::FLOORMOD))
                      .src(UPat::var("x", dtypes::weakint) + UPat::cvar("c"), UPat::cvar("d"))
                      .named("n"),
                  [](U n, U x, U c, U d) {
                    pyint cv = c.val().as_int(), dv = d.val().as_int();
                    if (dv == 0 || py::fmod(cv, dv) == cv) return UOp();
                    if (n.op() == Ops::FLOORDIV)
                      return (x + PyConst(py::fmod(cv, dv))).floordiv(d) + PyConst(py::fdiv(cv, dv));
                    return (x + PyConst(py::fmod(cv, dv))) % d;
                  }),
          TG_RULE(UPat(ops(Ops::FLOORDIV, Ops::FLOORMOD)).dtype(dtypes::weakint).named("d"),
                  [](U d) { return fold_divmod_general(d); }),
      });
  return pm;
}

}  // namespace tg
