#include "lib/uop/spec.h"

#include "lib/uop/track.h"

namespace tg {

using B = std::optional<bool>;

static bool matches_dtype(const UOp& x, DType d) { return x.dtype() == d || x.base().is_invalid(); }
static bool valid_gettuple(const UOp& g, const UOp& t) {
  if (!g.arg().is_int()) return false;
  int64_t i = g.arg().as_int();
  return 0 <= i && (size_t)i < t.nsrc() && matches_dtype(t.src((size_t)i), g.dtype());
}
static bool is_weak(DType d) { return contains(dtypes::weaks, d); }
static bool shapes_equal(const std::optional<Shape>& a, const std::optional<Shape>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->size() != b->size()) return false;
  for (size_t i = 0; i < a->size(); i++)
    if (!(*a)[i].same((*b)[i])) return false;
  return true;
}
static bool is_device(const Arg& d) {
  if (d.is_str()) return true;
  if (!d.is_tuple()) return false;
  for (const Arg& s : d.items())
    if (!s.is_str()) return false;
  return true;
}

const SpecMatcher& spec_shared() {
  static const SpecMatcher pm(
      "spec_shared",
      {
          TG_RULE(UPat(Ops::SINK).dtype(dtypes::void_), []() -> B { return true; }),
          TG_RULE(UPat(Ops::NOOP), []() -> B { return true; }),
          // CONST is everywhere; Invalid is a bool const
          TG_RULE(UPat(Ops::CONST).src_tuple({}).named("x"),
                  [](U x) -> B {
                    if (x.is_invalid()) return x.dtype() == dtypes::bool_;
                    return x.val().kind == x.dtype().const_(x.val()).kind;
                  }),
          TG_RULE(UPat(Ops::STACK).dtype(dtypes::void_).src_tuple({}), []() -> B { return true; }),
          TG_RULE(UPat(Ops::STACK).src(UPat()).any_len().named("s"),
                  [](U s) -> B {
                    for (const UOp& x : s.src()) {
                      if (!shapes_equal(x.shape_opt(), s.src(0).shape_opt())) return false;
                      if (!(matches_dtype(x, s.dtype()) || is_weak(x.dtype()))) return false;
                    }
                    return true;
                  }),
          TG_RULE(UPat(Ops::WHERE).named("w").src(UPat().dtype(dtypes::bool_), UPat(), UPat()),
                  [](U w) -> B {
                    for (size_t i = 1; i < 3; i++)
                      if (!(matches_dtype(w.src(i), w.dtype()) || is_weak(w.src(i).dtype()))) return false;
                    return true;
                  }),
          TG_RULE(UPat(GroupOp::Comparison).dtype(dtypes::bool_).src(UPat::var("x"), UPat::var("y")),
                  [](U x, U y) -> B {
                    return matches_dtype(x, y.dtype()) || matches_dtype(y, x.dtype()) || is_weak(x.dtype()) ||
                           is_weak(y.dtype());
                  }),
          TG_RULE(UPat(ops(Ops::AND, Ops::OR, Ops::XOR, Ops::SHL, Ops::SHR)).named("x"),
                  [](U x) -> B {
                    for (const UOp& s : x.src())
                      if (dtypes::is_float(s.dtype())) return false;
                    return std::nullopt;
                  }),
          TG_RULE(UPat(ops(Ops::SHL, Ops::SHR)).src(UPat::var("x"), UPat::var("c")).named("a"),
                  [](U a, U x, U c) -> B {
                    return (matches_dtype(x, a.dtype()) || x.dtype() == dtypes::weakint) &&
                           (matches_dtype(c, a.dtype()) || c.dtype() == dtypes::uint32 ||
                            c.dtype() == dtypes::weakint || x.base().is_invalid());
                  }),
          TG_RULE(UPat(ops(Ops::CDIV, Ops::CMOD, Ops::FLOORDIV, Ops::FLOORMOD)).named("x"),
                  [](U x) -> B {
                    if (dtypes::is_int(x.dtype())) return std::nullopt;
                    for (const UOp& s : x.src())
                      if (s.base().is_invalid()) return std::nullopt;
                    return false;
                  }),
          TG_RULE(UPat(GroupOp::ALU).named("x"),
                  [](U x) -> B {
                    for (const UOp& y : x.src())
                      if (!(matches_dtype(y, x.dtype()) || is_weak(y.dtype()))) return false;
                    return true;
                  }),
          TG_RULE(UPat(ops(Ops::BITCAST, Ops::CAST)).src(UPat()).named("x"),
                  [](U x) -> B { return x.arg().is_dtype(); }),
          TG_RULE(UPat(Ops::RANGE).src(UPat::var("x")).any_len().named("rng"),
                  [](U rng, U x) -> B {
                    if (!matches_dtype(x, rng.dtype()) || !rng.arg().is_tuple() || rng.arg().size() < 2) return false;
                    const auto& a = rng.arg().items();
                    for (size_t i = 0; i + 1 < a.size(); i++)
                      if (!a[i].is_int()) return false;
                    return a.back().kind() == Arg::Kind::Axis;
                  }),
          TG_RULE(UPat(Ops::INDEX).named("x"),
                  [](U x) -> B {
                    if (x.nsrc() == 0) return std::nullopt;
                    for (size_t i = 1; i < x.nsrc(); i++)
                      if (!(dtypes::is_int(x.src(i).dtype()) || x.src(i).base().is_invalid())) return std::nullopt;
                    return true;
                  }),
          // END closes RANGEs
          TG_RULE(UPat(Ops::END).src(UPat()).any_len().named("x"),
                  [](U x) -> B {
                    for (size_t i = 1; i < x.nsrc(); i++)
                      if (x.src(i).op() != Ops::RANGE) return std::nullopt;
                    return true;
                  }),
          TG_RULE(UPat(Ops::END).src(UPat(), UPat(Ops::RANGE).dtype(dtypes::void_), UPat().dtype(dtypes::bool_)),
                  []() -> B { return true; }),
          TG_RULE(UPat(Ops::PARAM).named("x"), [](U x) -> B { return x.param_arg() != nullptr; }),
          TG_RULE(UPat(Ops::BUFFER).src(UPat()).named("x"),
                  [](U x) -> B {
                    const ParamArg* p = x.param_arg();
                    return p && p->has_addrspace &&
                           (p->addrspace == AddrSpace::REG || p->addrspace == AddrSpace::LOCAL);
                  }),
          TG_RULE(UPat(Ops::GROUP)
                      .dtype(dtypes::void_)
                      .src_all(UPat(ops(Ops::GROUP, Ops::STORE, Ops::NOOP, Ops::INS, Ops::END))),
                  []() -> B { return true; }),
          TG_RULE(UPat(Ops::AFTER)
                      .src(UPat(GroupOp::Movement | ops(Ops::PARAM, Ops::BUFFER, Ops::CONTIGUOUS, Ops::INDEX,
                                                        Ops::AFTER, Ops::UNSHARD, Ops::BITCAST, Ops::INS)))
                      .any_len()
                      .named("x"),
                  [](U x) -> B { return matches_dtype(x.src(0), x.dtype()); }),
          TG_RULE(UPat(ops(Ops::CUSTOMI, Ops::CUSTOM)), []() -> B { return true; }),
          TG_RULE(UPat(Ops::CALL).src(UPat()).any_len().named("x"),
                  [](U x) -> B {
                    if (x.src(0).dtype() == dtypes::void_) return std::nullopt;
                    return matches_dtype(x.src(0), dtypes::uint64);
                  }),
          TG_RULE(UPat(Ops::PYLITERAL), []() -> B { return true; }),
          TG_RULE(UPat(Ops::BARRIER).dtype(dtypes::void_), []() -> B { return true; }),
          TG_RULE(UPat(Ops::INS), []() -> B { return true; }),
          // LOAD(idx) / STORE(idx, val) with gates (index validation needs CHECK_OOB and z3 in the reference: accepted
          // here)
          TG_RULE(UPat(ops(Ops::INDEX, Ops::SHRINK)).named("uidx").or_casted().load(),
                  [](U uidx) -> B { return true; }),
          TG_RULE(UPat(ops(Ops::INDEX, Ops::SHRINK))
                      .named("uidx")
                      .or_casted()
                      .load(UPat::var("alt"), UPat::var("gate", dtypes::bool_))
                      .named("load"),
                  [](U uidx, U gate, U alt, U load) -> B { return matches_dtype(alt, load.dtype()); }),
          TG_RULE(UPat(ops(Ops::INDEX, Ops::SHRINK)).named("uidx").or_casted().store(UPat()),
                  [](U uidx) -> B { return true; }),
          TG_RULE(UPat(ops(Ops::INDEX, Ops::SHRINK))
                      .named("uidx")
                      .or_casted()
                      .store(UPat(), UPat::var("gate", dtypes::bool_)),
                  [](U uidx) -> B { return true; }),
          TG_RULE(UPat(Ops::STORE).dtype(dtypes::void_).src(UPat().named("x"), UPat()), [](U x) -> B { return true; }),
          TG_RULE(UPat(Ops::WMMA).src(UPat(), UPat(), UPat()).named("x"),
                  [](U x) -> B { return x.arg().is_tuple() && x.arg().size() == 5; }),
      });
  return pm;
}

const SpecMatcher& spec_tensor() {
  static const SpecMatcher pm =
      SpecMatcher(
          "spec_tensor",
          {
              TG_RULE(UPat(ops(Ops::SIN, Ops::LOG2, Ops::EXP2, Ops::SQRT, Ops::RECIPROCAL)).src(UPat()).named("u"),
                      [](U u) -> B { return dtypes::is_float(u.dtype()) || u.src(0).base().is_invalid(); }),
              TG_RULE(UPat(Ops::BUFFER).src(UPat()).named("buf"),
                      [](U buf) -> B {
                        const ParamArg* p = buf.param_arg();
                        if (!p || !p->has_addrspace || p->addrspace != AddrSpace::GLOBAL) return std::nullopt;
                        return matches_dtype(buf.src(0), dtypes::weakint) && is_device(p->device);
                      }),
              // a Variable is a 0-d ALU BUFFER with a value range and no device
              TG_RULE(UPat(Ops::BUFFER).src(UPat()).named("buf"),
                      [](U buf) -> B {
                        if (!buf.is_variable()) return std::nullopt;
                        return buf.param_arg()->device.is_none();
                      }),
              TG_RULE(UPat(Ops::CUSTOM_FUNCTION).named("x"), [](U x) -> B { return x.arg().is_str(); }),
              TG_RULE(UPat(Ops::CALL)
                          .dtype(dtypes::void_)
                          .src(UPat(ops(Ops::SINK, Ops::LINEAR, Ops::PROGRAM, Ops::COPY, Ops::CUSTOM_FUNCTION)))
                          .any_len(),
                      []() -> B { return true; }),
              TG_RULE(UPat(Ops::FUNCTION).dtype(dtypes::void_).src(UPat(Ops::TUPLE)).any_len(),
                      []() -> B { return true; }),
              TG_RULE(UPat(Ops::TUPLE).dtype(dtypes::void_), []() -> B { return true; }),
              // GETTUPLE can only appear on FUNCTION or TUPLE (valid_gettuple)
              TG_RULE(
                  UPat(Ops::GETTUPLE).src(UPat(Ops::FUNCTION).src(UPat(Ops::TUPLE).named("t")).any_len()).named("g"),
                  [](U g, U t) -> B { return valid_gettuple(g, t); }),
              TG_RULE(UPat(Ops::GETTUPLE).src(UPat(Ops::TUPLE).named("t")).named("g"),
                      [](U g, U t) -> B { return valid_gettuple(g, t); }),
              TG_RULE(UPat(Ops::SPECIAL).src(UPat::var("x", dtypes::weakint)).named("s"),
                      [](U s, U x) -> B { return matches_dtype(x, s.dtype()) && s.arg().is_str(); }),
              TG_RULE(UPat(ops(Ops::RESHAPE, Ops::EXPAND)).src(UPat(), UPat()), []() -> B { return true; }),
              TG_RULE(UPat(ops(Ops::PAD, Ops::SHRINK)).src(UPat(), UPat(), UPat()).named("x"),
                      [](U x) -> B { return shapes_equal(x.src(1).shape_opt(), x.src(2).shape_opt()); }),
              TG_RULE(UPat(ops(Ops::PERMUTE, Ops::FLIP)).named("mv").src(UPat()),
                      [](U mv) -> B { return mv.arg().is_tuple(); }),
              TG_RULE(UPat(Ops::REDUCE).src(UPat()).any_len().named("x"),
                      [](U x) -> B {
                        if (!x.arg().is_tuple() || x.arg().size() != 2 || x.arg()[0].kind() != Arg::Kind::Op)
                          return false;
                        if (!GroupOp::Reduce.has(x.arg()[0].as_op()) || !x.arg()[1].is_int()) return false;
                        for (size_t i = 1; i < x.nsrc(); i++)
                          if (x.src(i).dtype() != dtypes::weakint && x.src(i).dtype() != dtypes::int32) return false;
                        return true;
                      }),
              TG_RULE(UPat(Ops::COPY).named("copy").src(UPat::var("x")),
                      [](U copy, U x) -> B { return matches_dtype(x, copy.dtype()) && is_device(copy.arg()); }),
              TG_RULE(
                  UPat(ops(Ops::DETACH, Ops::CONTIGUOUS, Ops::CONTIGUOUS_BACKWARD)).named("root").src(UPat::var("x")),
                  [](U root, U x) -> B {
                    return root.arg().is_none() ? B(matches_dtype(x, root.dtype())) : std::nullopt;
                  }),
              TG_RULE(UPat(Ops::STAGE).src(UPat()).any_len(), []() -> B { return true; }),
              TG_RULE(UPat(Ops::LINEAR).dtype(dtypes::void_), []() -> B { return true; }),
              TG_RULE(UPat(Ops::SOURCE).dtype(dtypes::void_).src_tuple({}), []() -> B { return true; }),
              TG_RULE(UPat(Ops::PROGRAM).dtype(dtypes::void_).src(UPat(Ops::SINK)), []() -> B { return true; }),
              TG_RULE(UPat(Ops::PROGRAM).dtype(dtypes::void_).src(UPat(Ops::SINK), UPat(Ops::LINEAR)),
                      []() -> B { return true; }),
              TG_RULE(
                  UPat(Ops::PROGRAM).dtype(dtypes::void_).src(UPat(Ops::SINK), UPat(Ops::LINEAR), UPat(Ops::SOURCE)),
                  []() -> B { return true; }),
          }) +
      spec_shared();
  return pm;
}

const SpecMatcher& spec_program() {
  static const SpecMatcher pm =
      SpecMatcher(
          "spec_program",
          {
              // a literal is CAST(dt, CONST(value)), so its inner CONST is the one weak node a program may contain
              TG_RULE(UPat(Ops::CONST).dtype(dtypes::weaks).named("x"),
                      [](U x) -> B { return x.dtype() == dtypes::from_py(x.val()); }),
              TG_RULE(UPat(GroupOp::all()).dtype(dtypes::weaks), []() -> B { return false; }),
              TG_RULE(UPat(Ops::SHRINK)
                          .src(UPat(ops(Ops::PARAM, Ops::BUFFER, Ops::AFTER)), UPat(), UPat(Ops::CONST).or_casted()),
                      []() -> B { return true; }),
              TG_RULE(UPat(GroupOp::Movement), []() -> B { return false; }),
              TG_RULE(UPat(Ops::BUFFER).named("x"),
                      [](U x) -> B {
                        const ParamArg* p = x.param_arg();
                        return p && p->has_addrspace &&
                               (p->addrspace == AddrSpace::REG || p->addrspace == AddrSpace::LOCAL);
                      }),
              TG_RULE(UPat(Ops::CONST).arg(Arg::invalid()), []() -> B { return false; }),
              TG_RULE(UPat(Ops::IF)
                          .dtype(dtypes::void_)
                          .src(UPat().dtype(dtypes::bool_), UPat(ops(Ops::CAST, Ops::INDEX, Ops::SHRINK))),
                      []() -> B { return true; }),
              TG_RULE(UPat(Ops::ENDIF).dtype(dtypes::void_).src(UPat(Ops::IF)), []() -> B { return true; }),
              TG_RULE(UPat(Ops::SPECIAL).src(UPat::var("x", dtypes::int32)).named("s"),
                      [](U s, U x) -> B { return matches_dtype(x, s.dtype()) && s.arg().is_str(); }),
          }) +
      spec_shared();
  return pm;
}

const SpecMatcher& spec_full() {
  static const SpecMatcher pm =
      SpecMatcher("spec_full",
                  {
                      TG_RULE(UPat(Ops::REWRITE_ERROR).dtype(dtypes::void_).named("x"),
                              [](U x) -> B { return x.arg().is_str(); }),
                      TG_RULE(UPat(Ops::END).src(UPat(), UPat()).any_len(), []() -> B { return true; }),
                      TG_RULE(UPat(Ops::AFTER).src(UPat()).any_len(), []() -> B { return true; }),
                      TG_RULE(UPat(ops(Ops::LOAD, Ops::STORE)), []() -> B { return true; }),
                  }) +
      spec_tensor() + spec_program();
  return pm;
}

// SPEC>=2: every UOp is checked against spec_full as it is created (uop.cpp calls this for new nodes)
void spec_check_created(const UOp& u) {
  thread_local int depth = 0;
  if (depth > 0) return;  // nodes the check itself creates (shapes, simplify) are not re-checked
  struct Guard {
    Guard() { depth++; }
    ~Guard() { depth--; }
  } g;
  track::Untracked untracked;
  auto ret = spec_full().rewrite(u);
  if (!ret || !*ret) throw SpecError("SPEC ISSUE " + std::string(!ret ? "None" : "False") + ": " + u.repr());
}

void type_verify(const UOp& ast, const SpecMatcher& check_spec, bool enter_calls) {
  track::Untracked untracked;
  auto lst = ast.toposort(nullptr, enter_calls);
  for (size_t i = 0; i < lst.size(); i++) {
    const UOp& u = lst[i];
    auto ret = check_spec.rewrite(u);
    if (!ret || !*ret) {
      std::string srcs = "[";
      for (size_t k = 0; k < u.nsrc(); k++)
        srcs += (k ? ", (" : "(") + op_repr(u.src(k).op()) + ", " + u.src(k).dtype().repr() + ", " +
                u.src(k).arg().repr() + ")";
      throw SpecError("UOp verification failed at " + std::to_string(i) + " on " + op_repr(u.op()) + " " +
                      u.dtype().repr() + " " + std::to_string(u.nsrc()) + " " + srcs + "] " + u.arg().repr());
    }
  }
}

}  // namespace tg
