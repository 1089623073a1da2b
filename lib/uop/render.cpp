#include "lib/uop/render.h"

#include <cctype>

namespace tg {

static int precedence(Ops op) {
  switch (op) {
    case Ops::MUL:
    case Ops::FLOORDIV:
    case Ops::FLOORMOD:
      return 1;
    case Ops::ADD:
    case Ops::SUB:
      return 2;
    case Ops::SHL:
    case Ops::SHR:
      return 3;
    case Ops::AND:
      return 4;
    case Ops::XOR:
      return 5;
    case Ops::OR:
      return 6;
    default:
      return 99;
  }
}
static const char* sym_of(Ops op) {
  switch (op) {
    case Ops::ADD:
      return "+";
    case Ops::SUB:
      return "-";
    case Ops::FLOORDIV:
      return "//";
    case Ops::FLOORMOD:
      return "%";
    case Ops::SHL:
      return "<<";
    case Ops::SHR:
      return ">>";
    case Ops::MUL:
      return "*";
    case Ops::CMPLT:
      return "<";
    case Ops::CMPNE:
      return "!=";
    case Ops::AND:
      return "&";
    case Ops::OR:
      return "|";
    case Ops::XOR:
      return "^";
    default:
      return nullptr;
  }
}
static const OpSet kSyms = ops(Ops::ADD, Ops::SUB, Ops::FLOORDIV, Ops::FLOORMOD, Ops::SHL, Ops::SHR, Ops::MUL,
                               Ops::CMPLT, Ops::CMPNE, Ops::AND, Ops::OR, Ops::XOR);

static std::string strip_binary_parens(const UOp& x, const std::string& l, const std::string& r) {
  std::string s = sym_of(x.op());
  int p = precedence(x.op());
  if (p == 99) return "(" + l + s + r + ")";
  std::string left = precedence(x.src(0).op()) <= p ? strip_parens(l) : l;
  std::string right = precedence(x.src(1).op()) < p ? strip_parens(r) : r;
  return "(" + left + s + right + ")";
}

static std::string lower(std::string s) {
  for (char& c : s) c = (char)std::tolower((unsigned char)c);
  return s;
}

static std::string marg_str(RenderMap& ctx, const sint& a) {
  if (a.is_int()) return pyint_str(a.i());
  auto it = ctx.find(a.u());
  return it != ctx.end() ? it->second : a.u().render();
}

static std::string render_marg(RenderMap& ctx, const UOp& x) {
  if (x.op() == Ops::PERMUTE) return x.arg().repr();
  if (x.op() == Ops::FLIP) {
    std::vector<Arg> ax;
    const auto& items = x.arg().items();
    for (size_t i = 0; i < items.size(); i++)
      if (items[i].as_bool()) ax.push_back(Arg((int)i));
    return Arg::tuple(ax).repr();
  }
  std::vector<std::string> pieces;
  if (x.op() == Ops::RESHAPE || x.op() == Ops::EXPAND)
    for (const sint& a : x.src(1).as_shape()) pieces.push_back(marg_str(ctx, a));
  if (x.op() == Ops::PAD || x.op() == Ops::SHRINK) {
    Shape o = x.src(1).as_shape(), s = x.src(2).as_shape();
    for (size_t i = 0; i < o.size(); i++)
      pieces.push_back("(" + marg_str(ctx, o[i]) + ", " + marg_str(ctx, s[i]) + ")");
  }
  if (pieces.size() == 1) return "(" + pieces[0] + ",)";
  std::string r = "(";
  for (size_t i = 0; i < pieces.size(); i++) r += (i ? "," : "") + pieces[i];
  return r + ")";
}

const StringMatcher& renderer() {
  using S = std::optional<std::string>;
  static const StringMatcher pm(
      "renderer",
      {
          TG_RULE(UPat(Ops::PARAM).named("x"),
                  [](U x) -> S {
                    const ParamArg* p = x.param_arg();
                    return p && p->has_name ? p->name : "p" + std::to_string(p ? p->slot : 0);
                  }),
          TG_RULE(UPat(Ops::BUFFER).named("x"),
                  [](U x) -> S {
                    const ParamArg* p = x.param_arg();
                    return p && p->has_name ? p->name : "b" + std::to_string(p ? p->slot : 0);
                  }),
          TG_RULE(UPat(Ops::AFTER).named("x"), [](RenderMap& ctx, U x) -> S { return ctx.at(x.src(0)); }),
          TG_RULE(UPat(Ops::SPECIAL).named("x"), [](U x) -> S { return x.arg().str(); }),
          TG_RULE(UPat(Ops::RANGE).dtype(dtypes::void_).named("x"), [](U x) -> S { return "loop" + x.arg()[0].str(); }),
          TG_RULE(UPat(Ops::RANGE).named("x"), [](U x) -> S { return "r" + range_str(x); }),
          TG_RULE(UPat(Ops::CONST).named("x"), [](U x) -> S { return x.val().str(); }),
          // CAST states the width, the weak CONST carries the value
          TG_RULE(UPat::cvar("c", dtypes::weaks + DTypes{dtypes::bool_}).cast(),
                  [](U c) -> S { return c.val().str(); }),
          TG_RULE(UPat(Ops::CAST).named("x"),
                  [](RenderMap& ctx, U x) -> S {
                    return "(" + x.dtype().repr().substr(7) + ")(" + ctx.at(x.src(0)) + ")";
                  }),
          TG_RULE(UPat(Ops::NEG).named("x"), [](RenderMap& ctx, U x) -> S { return "(-" + ctx.at(x.src(0)) + ")"; }),
          TG_RULE(UPat(Ops::RECIPROCAL).named("x"),
                  [](RenderMap& ctx, U x) -> S { return "(1/" + ctx.at(x.src(0)) + ")"; }),
          TG_RULE(UPat(Ops::MAX).named("x"),
                  [](RenderMap& ctx, U x) -> S { return "max(" + ctx.at(x.src(0)) + ", " + ctx.at(x.src(1)) + ")"; }),
          TG_RULE(UPat(Ops::MULACC).named("x"),
                  [](RenderMap& ctx, U x) -> S {
                    return "(" + ctx.at(x.src(0)) + "*" + ctx.at(x.src(1)) + "+" + ctx.at(x.src(2)) + ")";
                  }),
          TG_RULE(UPat(Ops::WHERE).named("x"),
                  [](RenderMap& ctx, U x) -> S {
                    return "(" + ctx.at(x.src(1)) + " if " + ctx.at(x.src(0)) + " else " + ctx.at(x.src(2)) + ")";
                  }),
          TG_RULE(UPat(Ops::CDIV).named("x"),
                  [](RenderMap& ctx, U x) -> S { return "cdiv(" + ctx.at(x.src(0)) + ", " + ctx.at(x.src(1)) + ")"; }),
          TG_RULE(UPat(Ops::CMOD).named("x"),
                  [](RenderMap& ctx, U x) -> S { return "cmod(" + ctx.at(x.src(0)) + ", " + ctx.at(x.src(1)) + ")"; }),
          TG_RULE(UPat(GroupOp::Movement).named("x"),
                  [](RenderMap& ctx, U x) -> S {
                    return ctx.at(x.src(0)) + "." + lower(op_name(x.op())) + "(" + render_marg(ctx, x) + ")";
                  }),
          TG_RULE(UPat(kSyms).named("x"),
                  [](RenderMap& ctx, U x) -> S { return strip_binary_parens(x, ctx.at(x.src(0)), ctx.at(x.src(1))); }),
          TG_RULE(UPat(ops(Ops::INDEX, Ops::STAGE)).named("x"),
                  [](U x, RenderMap& ctx) -> S {
                    std::string r;
                    for (size_t i = 1; i < x.nsrc(); i++) r += "[" + strip_parens(ctx.at(x.src(i))) + "]";
                    return r;
                  }),
          TG_RULE(UPat(Ops::STACK).named("x"),
                  [](RenderMap& ctx, U x) -> S {
                    std::string r = "{";
                    for (size_t i = 0; i < x.nsrc(); i++) r += (i ? "," : "") + ctx.at(x.src(i));
                    return r + "}";
                  }),
          TG_RULE(UPat(GroupOp::all()).named("x"), [](U x) -> S { return x.repr(); }),
      });
  return pm;
}

std::string UOp::render(bool simplify) const {
  UOp s = simplify ? this->simplify() : *this;
  RenderMap ctx;
  for (const UOp& u : s.toposort()) {
    auto r = renderer().rewrite(u, &ctx);
    ctx[u] = r ? *r : std::string();
  }
  return ctx.at(s);
}

}  // namespace tg
