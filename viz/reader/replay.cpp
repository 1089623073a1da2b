#include "viz/reader/replay.h"

#include <algorithm>
#include <climits>
#include <unordered_map>
#include <unordered_set>

namespace tg::viz {

namespace {
constexpr int OP_FUNCTION = 6, OP_CALL = 7, OP_PROGRAM = 8, OP_LINEAR = 9, OP_SINK = 12, OP_COPY = 68,
              OP_CUSTOM_FUNCTION = 71;
}

StepReplay::StepReplay(Trace& trace, int64_t step, Mode mode)
    : t_(trace), step_(trace.step(step)), mode_(mode), g_(trace) {
  Trace::Batch batch(t_);
  matches_ = t_.matches(step);
  std::vector<int64_t> ids{step_.input_root, step_.output_root};
  for (const MatchRow& m : matches_) ids.push_back(m.before), ids.push_back(m.after);
  t_.preload(std::move(ids));
  // load every node the replay can meet, so content lookups find recorded nodes (an id that is not a uop of the
  // trace is an error naming the row it came from)
  t_.check_roots(step_);
  t_.check_matches(step, matches_);
  std::vector<int64_t> notes = t_.step_notes(step);
  for (int64_t n : notes) t_.node_ref(n, "step_uops", "step " + std::to_string(step), "uop");
  L input = g_.load(step_.input_root);
  if (step_.output_root) g_.load(step_.output_root);
  for (const MatchRow& m : matches_) lmatch_.push_back({g_.load(m.before), g_.load(m.after)});
  for (int64_t n : notes) g_.load(n);
  map_.assign(g_.size(), kNone);  // every key is a match's before, loaded above
  roots_.assign(num_frames(), kNone);
  roots_[0] = input;
  if (!chained()) return;
  deltas_.resize(num_frames()), has_delta_.assign(num_frames(), 0);
  if (incremental()) ref(input, nullptr);
  if (mode_ == Mode::incremental) try {
      for (auto& [f, blob] : t_.checkpoints(step))
        if (f > 0 && (size_t)f < num_frames()) checkpoints_.push_back({(size_t)f, std::move(blob)});
    } catch (const TraceError&) {  // a damaged checkpoint row: replay from the start instead
      checkpoints_.clear();
    }
}

std::string StepReplay::where() const { return "trace '" + t_.path() + "': replay of step " + std::to_string(step_.id); }

static bool is_opaque_call(const StepGraph& g, uint32_t n) {
  if (g.op(n) == OP_FUNCTION) return true;
  if (g.op(n) != OP_CALL || !g.nsrc(n)) return false;
  int b = g.op(g.src(n)[0]);
  return b == OP_SINK || b == OP_PROGRAM || b == OP_LINEAR || b == OP_COPY || b == OP_CUSTOM_FUNCTION;
}

StepReplay::L StepReplay::substitute(L root, bool walk, bool incremental) {
  if (++stamp_ == 0) {  // the stamps wrapped: start over
    for (Slot& x : slot_) x.replaced = x.on_stack = 0;
    stamp_ = 1;
  }
  auto replaced = [&](L n) { return n < slot_.size() && slot_[n].replaced == stamp_; };
  auto set_replace = [&](L n, L r) {
    Slot& x = slot(n);
    x.replace = r, x.replaced = stamp_;
  };
  auto push_once = [&](L n) {  // on_stack: the first push of a node wins
    Slot& x = slot(n);
    if (x.on_stack == stamp_) return false;
    x.on_stack = stamp_;
    return true;
  };
  std::vector<L> ns;
  if (walk) {
    std::vector<std::pair<L, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [n, processed] = stack.back();
      stack.pop_back();
      if (replaced(n)) continue;
      if (!processed) {
        if (L r = lookup(n); r != kNone) {
          set_replace(n, r);
          continue;
        }
        stack.push_back({n, true});
        if (!step_.enter_calls && is_opaque_call(g_, n)) set_replace(g_.src(n)[0], g_.src(n)[0]);
        for (uint32_t i = g_.nsrc(n); i > 0; i--)
          if (!replaced(g_.src(n)[i - 1])) stack.push_back({g_.src(n)[i - 1], false});
      } else {
        ns.clear();
        bool changed = false;
        for (uint32_t i = 0; i < g_.nsrc(n); i++) {
          L s = g_.src(n)[i];
          ns.push_back(replaced(s) ? slot_[s].replace : s);
          changed |= ns.back() != s;
        }
        set_replace(n, changed ? g_.rebuild(n, ns.data()) : n);
      }
    }
    return replaced(root) ? slot_[root].replace : root;
  }
  struct E {
    L n;
    int stage;
    L nn;
  };
  std::vector<E> stack{{root, 0, root}};
  push_once(root);
  std::unordered_map<L, std::vector<E>> waitlist;
  auto release = [&](L n) {
    if (waitlist.empty()) return;
    auto it = waitlist.find(n);
    if (it == waitlist.end()) return;
    for (E& e : it->second) stack.push_back(e);
    waitlist.erase(it);
  };
  auto is_dirty = [&](L n) { return n < slot_.size() && slot_[n].dirty == dirty_stamp_; };
  // a replacement map read from a file could make the rewrite grow without end: a bottom-up rewrite visits each node
  // of the graph a few times per src, so a budget of many times the nodes known (loaded and built) is never reached
  // by a real step
  size_t guard = 0, budget = 64 * (g_.size() + matches_.size()) + 1'000'000;
  while (!stack.empty()) {
    if (++guard > budget) throw TraceError(where() + " does not terminate (its replacements keep growing the graph)");
    E e = stack.back();
    stack.pop_back();
    if (replaced(e.n)) continue;
    if (e.stage == 0) {
      L nn = e.n, test = lookup(e.n);
      if (test == kNone && incremental && !is_dirty(e.n) && live(e.n)) {
        set_replace(e.n, e.n);  // in frame k-1, not a key, nothing below it replaced: the substitute keeps it
        release(e.n);
        continue;
      }
      if (test != kNone) {
        std::unordered_set<L> seen{e.n};
        while (test != kNone) {
          if (!seen.insert(test).second) throw TraceError(where() + ": its replacements form a cycle");
          nn = test;
          test = lookup(test);
        }
      }
      stack.push_back({e.n, 1, nn});
      if (!step_.enter_calls && is_opaque_call(g_, nn)) set_replace(g_.src(nn)[0], g_.src(nn)[0]);
      for (uint32_t i = g_.nsrc(nn); i > 0; i--) {
        L x = g_.src(nn)[i - 1];
        if (!push_once(x)) continue;
        if (incremental && lookup(x) == kNone && !is_dirty(x) && live(x)) set_replace(x, x);  // as stage 0 would
        else stack.push_back({x, 0, x});
      }
    } else if (e.stage == 1) {
      ns.clear();
      bool waiting = false, changed = false;
      for (uint32_t i = 0; i < g_.nsrc(e.nn); i++) {
        L x = g_.src(e.nn)[i];
        if (!replaced(x)) {
          waitlist[x].push_back(e);
          waiting = true;
          break;
        }
        ns.push_back(slot_[x].replace);
        changed |= slot_[x].replace != x;
      }
      if (waiting) continue;
      if (!changed) {
        set_replace(e.n, e.nn);
        release(e.n);
        continue;
      }
      L rb = g_.rebuild(e.nn, ns.data());
      stack.push_back({e.n, 2, rb});
      stack.push_back({rb, 0, rb});
    } else {
      if (!replaced(e.nn)) waitlist[e.nn].push_back(e);
      else {
        set_replace(e.n, slot_[e.nn].replace);
        release(e.n);
      }
    }
  }
  if (!replaced(root)) throw TraceError(where() + " did not reach the root");
  return slot_[root].replace;
}

void StepReplay::use_matches(size_t k) {
  if (k < map_matches_) {
    for (L key : map_keys_) map_[key] = kNone;
    map_keys_.clear(), map_matches_ = 0;
  }
  for (; map_matches_ < k; map_matches_++) {
    auto [before, after] = lmatch_[map_matches_];
    if (map_[before] == kNone) map_keys_.push_back(before);
    map_[before] = after;
  }
}

void StepReplay::ref(L root, std::vector<L>* added) {
  grow(users_, root, {});
  if (slot(root).refs++ > 0) return;
  std::vector<std::pair<L, uint32_t>> st{{root, 0}};  // (node, next src); srcs before users in `added`
  while (!st.empty()) {
    L n = st.back().first;
    if (st.back().second < g_.nsrc(n)) {
      L s = g_.src(n)[st.back().second++];
      grow(users_, s, {});
      auto& u = users_[s];
      if (u.empty() || u.back() != n) {
        // users that died stay in the list until it would grow (unref would otherwise search lists of thousands)
        if (u.size() == u.capacity() && u.size() >= 8)
          u.erase(std::remove_if(u.begin(), u.end(), [&](L x) { return !live(x); }), u.end());
        u.push_back(n);
      }
      if (slot(s).refs++ == 0) st.push_back({s, 0});
    } else {
      if (added) added->push_back(n);
      st.pop_back();
    }
  }
}

void StepReplay::unref(L root, std::vector<L>* removed) {
  if (--slot_[root].refs > 0) return;
  std::vector<L> dead{root};  // users before their srcs
  for (size_t i = 0; i < dead.size(); i++) {
    L n = dead[i];
    for (uint32_t j = 0; j < g_.nsrc(n); j++)
      if (L s = g_.src(n)[j]; --slot_[s].refs == 0) dead.push_back(s);
  }
  for (L n : dead) std::vector<L>().swap(users_[n]);
  if (removed) removed->insert(removed->end(), dead.rbegin(), dead.rend());
}

template <class InNew>
std::vector<std::pair<StepReplay::L, StepReplay::L>> StepReplay::changed_pairs(L prev, L next, InNew in_new) {
  // a node of frame k-1 that frame k no longer holds, whose position (same op and arity down from the roots) frame k
  // fills with another node: the old node and its replacement
  std::vector<std::pair<L, L>> out, st{{prev, next}};
  std::unordered_set<L> done;
  while (!st.empty()) {
    auto [x, y] = st.back();
    st.pop_back();
    if (x == y || in_new(x) || !done.insert(x).second) continue;  // still present: not replaced at this position
    out.push_back({x, y});
    if (g_.op(x) == g_.op(y) && g_.nsrc(x) == g_.nsrc(y))
      for (uint32_t i = 0; i < g_.nsrc(x); i++) st.push_back({g_.src(x)[i], g_.src(y)[i]});
  }
  return out;
}

void StepReplay::next_chained() {
  size_t k = cur_ + 1;
  const MatchRow& m = matches_[k - 1];
  use_matches(k);
  L prev = roots_[cur_], next = prev;
  if (stop_ && k > stop_) {
    // the step stopped at frame stop_: later frames are the same graph
  } else if (m.is_error) {
    stop_ = k;  // a rule raised: the step stopped here
    if (error_.empty()) error_ = t_.str(m.error);
  } else {
    L before = lmatch_[k - 1].first;
    n_dirty_ = 0;
    if (incremental() && live(before)) {  // frame k-1's nodes that have the matched node under them
      if (++dirty_stamp_ == 0) {
        for (Slot& x : slot_) x.dirty = 0;
        dirty_stamp_ = 1;
      }
      slot(before).dirty = dirty_stamp_;
      std::vector<L> st{before};
      while (!st.empty()) {
        L n = st.back();
        st.pop_back();
        n_dirty_++;
        for (L u : users_[n]) {  // a user that died is still listed
          if (live(u) && slot_[u].dirty != dirty_stamp_) slot_[u].dirty = dirty_stamp_, st.push_back(u);
        }
      }
    }
    try {
      // the matched node is not in frame k-1 (a rule rewrote a node the rewrite built and then dropped): no node
      // of frame k-1 changes
      if (!incremental() || n_dirty_) next = substitute(prev, false, incremental());
    } catch (const TraceError& e) {
      stop_ = k;
      error_ = e.what();
      damage_ = true;
      next = prev;
    }
  }
  roots_[k] = next;
  cur_ = k;
  if (!incremental()) return;
  LocalDelta d;
  if (next != prev) {
    ref(next, &d.added);  // first: a node of both frames never drops to zero references
    unref(prev, &d.removed);
    d.changed = changed_pairs(prev, next, [&](L x) { return live(x); });
  }
  deltas_[k] = std::move(d);
  has_delta_[k] = 1;
}

void StepReplay::restart(L root, size_t k) {
  for (Slot& x : slot_) x.refs = 0;
  for (auto& u : users_) std::vector<L>().swap(u);
  ref(root, nullptr);
  roots_[k] = root;
  cur_ = k;
}

void StepReplay::reach(size_t k, bool with_delta) {
  if (roots_[k] != kNone && (!with_delta || k == 0 || has_delta_[k])) return;
  if (!incremental()) {  // forward from frame 0 only: every frame before cur_ is known
    while (cur_ < k) next_chained();
    return;
  }
  // start from the live frame, or from the last checkpoint that lies well ahead of it (or the live frame is past k)
  size_t limit = with_delta ? k - 1 : k;
  const std::pair<size_t, std::string>* ck = nullptr;
  for (const auto& c : checkpoints_)
    if (c.first <= limit) ck = &c;
  bool live_ok = cur_ <= limit;
  if (ck && (!live_ok || ck->first > cur_ + 64)) {
    L r;
    try {
      r = decode_frame(ck->second);
    } catch (const TraceError&) {  // damaged: replay from the start (the frames do not depend on checkpoints)
      checkpoints_.clear();
      reach(k, with_delta);
      return;
    }
    restart(r, ck->first);
  } else if (!live_ok) {
    restart(roots_[0], 0);
  }
  while (cur_ < k) next_chained();
}

namespace {
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) out.push_back((char)(v | 0x80)), v >>= 7;
  out.push_back((char)v);
}
uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
}  // namespace

// per node, srcs first: 0 <trace id> for a recorded node, or 1 <op> <dtype> <arg> <tag> <nsrc> <distance back to each
// src> for a built one (signed values zigzagged); the last node is the root
std::string StepReplay::encode_frame(size_t k) {
  if (!chained()) return "";
  L r = local_root(k);
  if (stop_ && k >= stop_) return "";
  std::string out;
  std::unordered_map<L, uint64_t> index;
  for (L n : local_nodes(r)) {
    uint64_t i = index.size();
    if (int64_t id = g_.known_id(n); id > 0) {
      put_varint(out, 0), put_varint(out, (uint64_t)id);
    } else {
      put_varint(out, 1), put_varint(out, zigzag(g_.op(n))), put_varint(out, zigzag(g_.dtype(n)));
      put_varint(out, zigzag(g_.arg(n))), put_varint(out, zigzag(g_.tag(n))), put_varint(out, g_.nsrc(n));
      for (uint32_t j = 0; j < g_.nsrc(n); j++) put_varint(out, i - index.at(g_.src(n)[j]));
    }
    index.emplace(n, i);
  }
  return out;
}

StepReplay::L StepReplay::decode_frame(const std::string& blob) {
  size_t p = 0;
  auto bad = [&](const std::string& what) -> TraceError {
    return TraceError("trace '" + t_.path() + "': table replay_checkpoints, step " + std::to_string(step_.id) + ": " + what);
  };
  auto varint = [&]() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= blob.size()) throw bad("ends inside a node");
      uint8_t c = (uint8_t)blob[p++];
      v |= (uint64_t)(c & 0x7f) << shift;
      if (!(c & 0x80)) return v;
    }
    throw bad("has a varint past 64 bits");
  };
  auto signed_ = [&]() {
    uint64_t v = varint();
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
  };
  std::vector<L> nodes;
  std::vector<L> srcs;
  while (p < blob.size()) {
    uint64_t kind = varint();
    if (kind == 0) {
      int64_t id = (int64_t)varint();
      if (id < 1) throw bad("names uop " + std::to_string(id));
      nodes.push_back(g_.load(id));
    } else if (kind == 1) {
      int64_t op = signed_(), dtype = signed_(), arg = signed_(), tag = signed_();
      if (op < INT32_MIN || op > INT32_MAX || dtype < INT32_MIN || dtype > INT32_MAX) throw bad("has an op or dtype out of range");
      t_.str(arg);  // the strings exist (a label shows them), or this throws
      if (tag) t_.str(tag);
      uint64_t n = varint();
      if (n > nodes.size()) throw bad("has a node with more srcs than nodes before it");
      srcs.clear();
      for (uint64_t j = 0; j < n; j++) {
        uint64_t back = varint();
        if (back < 1 || back > nodes.size()) throw bad("has a src that is not an earlier node");
        srcs.push_back(nodes[nodes.size() - back]);
      }
      nodes.push_back(g_.intern((int)op, (int)dtype, arg, tag, srcs.data(), (uint32_t)srcs.size()));
    } else {
      throw bad("has a node of unknown kind " + std::to_string(kind));
    }
  }
  if (nodes.empty()) throw bad("is empty");
  return nodes.back();
}

std::vector<size_t> StepReplay::checkpoint_frames() const {
  std::vector<size_t> out;
  for (const auto& c : checkpoints_) out.push_back(c.first);
  return out;
}

StepReplay::L StepReplay::from_input(size_t k) {
  if (roots_[k] != kNone) return roots_[k];
  // frames from the first rule error on are the frame before it (the step stopped there)
  for (size_t j = 1; j <= k; j++)
    if (matches_[j - 1].is_error) {
      if (error_.empty()) error_ = t_.str(matches_[j - 1].error);
      return roots_[k] = from_input(j - 1);
    }
  use_matches(k);
  try {
    return roots_[k] = substitute(roots_[0], step_.walk, false);
  } catch (const TraceError&) {
  }
  // a damaged trace: like a replay frame by frame, stop at the first frame that cannot be built
  for (size_t j = 1; j <= k; j++) {
    if (roots_[j] != kNone) continue;
    use_matches(j);
    try {
      roots_[j] = substitute(roots_[0], step_.walk, false);
    } catch (const TraceError& e) {
      error_ = e.what();
      damage_ = true;
      for (size_t i = j; i < roots_.size(); i++) roots_[i] = roots_[j - 1];
      break;
    }
  }
  return roots_[k];
}

StepReplay::L StepReplay::local_root(size_t k) {
  if (k >= num_frames())
    throw TraceError(where() + ": the step has frames 0.." + std::to_string(num_frames() - 1) + ", not " + std::to_string(k));
  if (!chained()) return from_input(k);
  reach(k, false);
  return roots_[k];
}

int64_t StepReplay::root(size_t k) { return g_.trace_id(local_root(k)); }

std::vector<StepReplay::L> StepReplay::local_nodes(L r) {
  std::vector<L> out;
  std::unordered_set<L> seen;
  std::vector<std::pair<L, bool>> st{{r, false}};
  while (!st.empty()) {
    auto [n, visited] = st.back();
    st.pop_back();
    if (seen.count(n)) continue;
    if (visited) {
      seen.insert(n);
      out.push_back(n);
      continue;
    }
    st.push_back({n, true});
    for (uint32_t i = g_.nsrc(n); i > 0; i--) st.push_back({g_.src(n)[i - 1], false});
  }
  return out;
}

std::vector<int64_t> StepReplay::nodes(size_t k) {
  L r = local_root(k);
  g_.trace_id(r);
  std::vector<int64_t> out;
  for (L n : local_nodes(r)) out.push_back(g_.trace_id(n));
  return out;
}

StepReplay::LocalDelta StepReplay::diff(size_t k) {
  LocalDelta d;
  L rb = local_root(k), ra = local_root(k - 1);
  auto a = local_nodes(ra), b = local_nodes(rb);
  std::unordered_set<L> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  for (L x : b)
    if (!sa.count(x)) d.added.push_back(x);
  for (L x : a)
    if (!sb.count(x)) d.removed.push_back(x);
  d.changed = changed_pairs(ra, rb, [&](L x) { return sb.count(x) > 0; });
  return d;
}

FrameDelta StepReplay::delta(size_t k) {
  if (k == 0 || k >= num_frames()) throw TraceError(where() + ": no delta for frame " + std::to_string(k));
  LocalDelta d;
  if (chained() && incremental()) {
    reach(k, true);
    d = deltas_[k];
  } else {
    local_root(k);
    d = diff(k);
  }
  FrameDelta out;
  out.before = matches_[k - 1].before;
  out.after = matches_[k - 1].after;
  for (L n : d.added) out.added.push_back(g_.trace_id(n));
  for (L n : d.removed) out.removed.push_back(g_.trace_id(n));
  for (auto [x, y] : d.changed) out.changed.push_back({g_.trace_id(x), g_.trace_id(y)});
  return out;
}

bool StepReplay::reproduces_output() {
  if (!step_.output_root) return false;
  return root(num_frames() - 1) == step_.output_root;
}

std::string frames_differ(Trace& t, int64_t step) {
  StepReplay fast(t, step), full(t, step, StepReplay::Mode::full);
  auto sorted = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  for (size_t k = 0; k < fast.num_frames(); k++) {
    std::string at = "frame " + std::to_string(k) + ": ";
    if (fast.root(k) != full.root(k))
      return at + "root " + std::to_string(fast.root(k)) + ", the whole-graph substitute gives " +
             std::to_string(full.root(k));
    if (k == 0) continue;
    FrameDelta a = fast.delta(k), b = full.delta(k);
    if (sorted(a.added) != sorted(b.added)) return at + "the added nodes differ";
    if (sorted(a.removed) != sorted(b.removed)) return at + "the removed nodes differ";
    if (a.changed != b.changed) return at + "the changed nodes differ";
  }
  if (fast.error() != full.error()) return "the replay errors differ: '" + fast.error() + "' and '" + full.error() + "'";
  // a jump to each checkpoint (and the frame after it) gives the same frames
  for (size_t c : fast.checkpoint_frames()) {
    for (size_t k : {c, c + 1}) {
      if (k >= full.num_frames()) continue;
      StepReplay jump(t, step);
      std::string at = "checkpoint frame " + std::to_string(k) + ": ";
      if (jump.root(k) != full.root(k)) return at + "the root differs";
      FrameDelta a = jump.delta(k), b = full.delta(k);
      if (sorted(a.added) != sorted(b.added) || sorted(a.removed) != sorted(b.removed) || a.changed != b.changed)
        return at + "the delta differs";
    }
  }
  return "";
}

}  // namespace tg::viz
