#include "lib/codegen/late/coalesce.h"

#include <map>
#include <variant>

#include "lib/codegen/helpers.h"
#include "lib/codegen/late/uop_props.h"
#include "lib/codegen/opt/opt.h"
#include "lib/uop/symbolic.h"

namespace tg {

static UOp simplify_valid_load(const UOp& buf, const UOp& start_idx, const UOp& valid) {
  UOp idx = uop_given_valid(valid, start_idx);
  if (idx == start_idx || idx == start_idx.simplify()) return UOp();
  return buf.index(idx.valid(valid));
}

const PatternMatcher& indexing_simplify() {
  static const PatternMatcher pm = [] {
    UPat inv = UPat().arg(Arg::invalid());
    return PatternMatcher("indexing_simplify",
                          {
                              // image load valid idx simplification
                              TG_RULE(UPat(Ops::INDEX).src(UPat::var("buf"), invalid_gate()),
                                      [](U buf, U x, U i, U cond) { return simplify_valid_load(buf, x, cond); }),
                              TG_RULE(UPat(Ops::INDEX)
                                          .src(UPat::var("buf"), UPat::var("valid").where(UPat::var("idx_y"), inv),
                                               UPat::var("valid").where(UPat::var("idx_x"), inv)),
                                      [](U buf, U valid, U idx_y, U idx_x) {
                                        if (!is_image_shape(buf.shape_opt())) return UOp();
                                        throw Error("image valid simplification is not ported (IMAGE)");
                                      }),
                          });
  }();
  return pm;
}

const PatternMatcher& pm_simplify_add_image() {
  static const PatternMatcher pm(
      "pm_simplify_add_image",
      {
          TG_RULE(UPat(Ops::SHRINK).src(UPat(Ops::PARAM).named("buf"), UPat().named("x"), UPat().arg(Arg(4))),
                  [](U buf, U x) {
                    if (!IMAGE.value()) return UOp();
                    throw Error("transform_to_image is not ported (IMAGE)");
                  }),
          // image load/store is always float
          TG_RULE(UPat(Ops::LOAD).dtype(dtypes::half).src(UPat(Ops::INDEX).dtype(dtypes::float32).named("x")),
                  [](U x) { return x.load().cast(dtypes::half); }),
          TG_RULE(UPat(Ops::INDEX).dtype(dtypes::float32).named("x").store(UPat().named("d").dtype(dtypes::half)),
                  [](U x, U d) { return x.store(d.cast(dtypes::float32)); }),
          TG_RULE(UPat::var("x", dtypes::float32).cast(dtypes::half).cast(dtypes::float32), [](U x) { return x; }),
      });
  return pm;
}

UOp memory_coalescing(const UOp& sink, const Renderer& ctx) {
  if (getenv_int("DMC", 0)) return sink;
  // collect: (op, buf, root_src (a UOp or "INVALID"/"CONST"), valid) -> {offset: [uops]}, both insertion-ordered
  struct Key {
    Ops op;
    UOp buf;
    UOp root;
    std::string root_str;
    UOp valid;
    bool operator==(const Key& o) const {
      return op == o.op && buf == o.buf && root == o.root && root_str == o.root_str && valid == o.valid;
    }
  };
  struct Group {
    Key key;
    std::vector<std::pair<pyint, std::vector<UOp>>> offsets;
  };
  std::vector<Group> memory;
  AddrSpaceCache as;
  for (const UOp& u : sink.toposort_borrowed()) {
    // TODO: this should handle images too, it's just memory coalescing
    if (u.op() != Ops::LOAD && u.op() != Ops::STORE) continue;
    if (u.nsrc() != (u.op() == Ops::STORE ? 2u : 1u))
      throw Error("memory coalescing does not support gated loads/stores");
    if (u.src(0).op() != Ops::INDEX) throw Error("memory coalescing should be on INDEX");
    if (u.src(0).nsrc() != 2) throw Error("ValueError: too many values to unpack");
    UOp buf = u.src(0).src(0), idx_u = u.src(0).src(1);
    if (as.get(buf) == AddrSpace::REG) continue;
    UOp idx = idx_u.get_idx(), valid = idx_u.get_valid();
    Key k{u.op(), buf, UOp(), "", valid};
    pyint arg = 0;
    if (idx.op() == Ops::ADD && idx.src(1).op() == Ops::CONST)
      k.root = idx.src(0), arg = idx.src(1).val().as_int();
    else if (idx.op() == Ops::ADD && idx.src(0).op() == Ops::CONST)
      k.root = idx.src(1), arg = idx.src(0).val().as_int();
    else if (idx.op() == Ops::CONST && idx.val().is_invalid())
      k.root_str = "INVALID", arg = 0;
    else if (idx.op() == Ops::CONST)
      k.root_str = "CONST", arg = idx.val().as_int();
    else
      k.root = idx, arg = 0;
    auto it = std::find_if(memory.begin(), memory.end(), [&](const Group& g) { return g.key == k; });
    if (it == memory.end()) memory.push_back({k, {}}), it = memory.end() - 1;
    auto jt = std::find_if(it->offsets.begin(), it->offsets.end(), [&](const auto& p) { return p.first == arg; });
    if (jt == it->offsets.end()) it->offsets.push_back({arg, {}}), jt = it->offsets.end() - 1;
    jt->second.push_back(u);
  }

  // build replacements
  UOpDict<UOp> replacements;
  auto set_rep = [&](U k, U v) { replacements.set(k, v); };
  for (const Group& g : memory) {
    const Key& key = g.key;
    auto offsets_of = [&](pyint o) -> const std::vector<UOp>& {
      for (const auto& p : g.offsets)
        if (p.first == o) return p.second;
      throw Error("missing offset");
    };
    // allowed lengths (copied in)
    std::vector<int64_t> lengths;
    bool must_divide = true;
    DType bdt = key.buf.dtype();
    bool fp8 = false;
    for (DType d : dtypes::fp8s) fp8 |= bdt == d;
    bool image = is_image_shape(key.buf.shape_opt());
    if (ctx.target.device == "DSP") {
      lengths = {128, 64, 32, 16, 8, 4};
      must_divide = false;
    } else if (!(bdt == dtypes::float32 || bdt == dtypes::half || bdt == dtypes::int32 || bdt == dtypes::uint32 ||
                 fp8) &&
               !image) {
    } else if (as.get(key.buf) == AddrSpace::REG) {
    } else if (image) {
      lengths = {4};
    } else if (ctx.supports_float4) {
      lengths = bdt == dtypes::half && getenv_int("ALLOW_HALF8", 0) ? std::vector<int64_t>{8, 4, 2}
                                                                    : std::vector<int64_t>{4, 2};
    }
    lengths.push_back(1);  // worst case, it's not folded
    // do the grouping: runs of consecutive sorted offsets
    std::vector<pyint> keys;
    for (const auto& p : g.offsets) keys.push_back(p.first);
    std::sort(keys.begin(), keys.end());
    std::vector<std::vector<pyint>> grouped;
    for (size_t i = 0; i < keys.size(); i++) {
      if (i == 0 || keys[i] - (pyint)i != keys[i - 1] - (pyint)(i - 1)) grouped.emplace_back();
      grouped.back().push_back(keys[i]);
    }
    for (std::vector<pyint> full_grp : grouped) {
      while (!full_grp.empty()) {
        UOp offset = key.root ? key.root.add(PyConst(full_grp[0])) : UOp::const_(PyConst(full_grp[0]));
        int64_t length = 1;
        bool found = false;
        for (int64_t l : lengths)
          if (l <= (int64_t)full_grp.size() && (!must_divide || offset.divides(l))) {
            length = l;
            found = true;
            break;
          }
        if (!found) throw Error("IndexError: list index out of range");
        std::vector<pyint> grp(full_grp.begin(), full_grp.begin() + length);
        // NOTE: we apply the valid again after we determine the length
        offset = offset.valid(key.valid);
        UOp idx = grp.size() > 1 ? UOp(Ops::SHRINK, DType(), {key.buf, offset, UOp::const_(PyConst((pyint)grp.size()))})
                                 : key.buf.index(offset);
        if (key.op == Ops::STORE) {
          std::vector<UOp> datas;
          for (pyint o : grp) {
            const auto& us = offsets_of(o);
            if (us.size() != 1) throw Error("attempting multiple stores: " + std::to_string(us.size()));
            datas.push_back(us[0].src(1));
          }
          UOp store = idx.store(datas.size() > 1 ? UOp::stack(datas) : datas[0]);
          for (pyint o : grp) set_rep(offsets_of(o)[0], store);
        } else {
          UOp ld = idx.load();
          for (size_t i = 0; i < grp.size(); i++)
            for (const UOp& oo : offsets_of(grp[i]))
              set_rep(oo, grp.size() > 1 ? ld.index(UOp::const_(PyConst((pyint)i))) : ld);
        }
        full_grp.erase(full_grp.begin(), full_grp.begin() + length);
      }
    }
  }
  // apply
  std::vector<std::pair<UOp, UOp>> d(replacements.items().begin(), replacements.items().end());
  return sink.substitute(d, "memory coalescing");
}

}  // namespace tg
