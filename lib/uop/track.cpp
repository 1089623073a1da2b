#include "lib/uop/track.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "profiler/profile.h"

namespace tg {

// ************************* recorder installation *************************

static std::atomic<Recorder*> g_recorder{nullptr};
static std::atomic<uint64_t> g_last_context{0};  // the reference attributes ungrouped steps to the last context
static std::atomic<RecorderFactory> g_factory{nullptr};
static std::mutex g_install_mu;
static std::atomic<bool> g_install_tried{false};
static std::atomic<bool> g_atexit{false};

static void ensure_atexit() {
  bool expected = false;
  if (g_atexit.compare_exchange_strong(expected, true)) std::atexit([] { track::finalize(); });
}

Recorder* recorder() { return g_recorder.load(std::memory_order_acquire); }
static std::mutex g_prog_mu;
static UOpMap<uint64_t>& program_ids() {
  static auto* m = new UOpMap<uint64_t>();
  return *m;
}
static UOpSet& machine_code_claimed() {
  static auto* m = new UOpSet();
  return *m;
}
void set_recorder(Recorder* r) {
  {
    std::lock_guard<std::mutex> lk(g_prog_mu);
    program_ids().clear();
    machine_code_claimed().clear();
  }
  g_recorder.store(r, std::memory_order_release);
  g_last_context.store(0);
  if (r) ensure_atexit();
}
void set_recorder_factory(RecorderFactory f) { g_factory.store(f); }
static std::atomic<VizLauncher> g_launcher{nullptr};
void set_viz_launcher(VizLauncher f) { g_launcher.store(f); }

namespace track {

static Recorder* active_recorder() {
  Recorder* r = g_recorder.load(std::memory_order_acquire);
  if (r || g_install_tried.load(std::memory_order_acquire)) return r;
  std::lock_guard<std::mutex> lk(g_install_mu);
  if (!g_install_tried.load()) {
    RecorderFactory f = g_factory.load();
    if (f) {
      Recorder* made = f();
      if (made) set_recorder(made);
    } else if (TRACK_MATCH_STATS.value() >= 2) {
      std::fprintf(stderr,
                   "tinygrad: TRACK_MATCH_STATS>=2/VIZ asks for a trace, but this program has no trace writer "
                   "linked (link tg::viz); only statistics are kept\n");
    }
    g_install_tried.store(true, std::memory_order_release);
  }
  return g_recorder.load();
}

}  // namespace track

Recorder* profile_recorder() {
  if (PROFILE.value() < 1 && TRACK_MATCH_STATS.value() < 2) return nullptr;
  return track::active_recorder();
}

// the profiler's events (buffers, markers, user ranges) go where kernel events go
static const bool g_profile_hook = [] {
  profile::set_hook({[] { return PROFILE.value() >= 1 || TRACK_MATCH_STATS.value() >= 2; },
                     [](ProfileEvent&& e) {
                       if (Recorder* r = profile_recorder()) r->profile_event(e);
                     }});
  return true;
}();

namespace track {

// ************************* per-thread state *************************

// times are in fast_ticks units until they leave this file
struct Counters {
  uint64_t cand = 0, er = 0, att = 0, mat = 0;
  int64_t fail_ns = 0, match_ns = 0, excl_ns = 0;
};
struct StepFrame {
  uint64_t id = 0;
  uint32_t ordinal = 0;
  std::vector<Counters> stats;  // dense by rule id, reused
  std::vector<uint32_t> touched;
};
struct ThreadState;
static std::mutex g_threads_mu;
// process-lifetime (never destroyed): the exit handler reads them after static destructors may have run
static std::vector<ThreadState*>& live_threads() {
  static auto* v = new std::vector<ThreadState*>();
  return *v;
}
static std::vector<Counters>& retired_totals() {
  static auto* v = new std::vector<Counters>();
  return *v;
}
static void add_into(std::vector<Counters>& dst, const std::vector<Counters>& src) {
  if (dst.size() < src.size()) dst.resize(src.size());
  for (size_t i = 0; i < src.size(); i++) {
    Counters& d = dst[i];
    const Counters& s = src[i];
    d.cand += s.cand, d.er += s.er, d.att += s.att, d.mat += s.mat;
    d.fail_ns += s.fail_ns, d.match_ns += s.match_ns, d.excl_ns += s.excl_ns;
  }
}

struct ThreadState {
  std::vector<Counters> totals;
  std::vector<StepFrame> frames;  // frames[0..depth) active
  int depth = 0;
  std::vector<uint64_t> groups;
  int untracked = 0;
  std::vector<int64_t> child_ns;
  std::mutex mu;  // guards totals against a concurrent snapshot
  ThreadState() {
    std::lock_guard<std::mutex> lk(g_threads_mu);
    live_threads().push_back(this);
  }
  ~ThreadState() {
    std::lock_guard<std::mutex> lk(g_threads_mu);
    add_into(retired_totals(), totals);
    auto& v = live_threads();
    for (size_t i = 0; i < v.size(); i++)
      if (v[i] == this) {
        v.erase(v.begin() + i);
        break;
      }
  }
};
static ThreadState& ts() {
  thread_local ThreadState s;
  return s;
}

static std::atomic<uint64_t> g_n_contexts{0}, g_n_steps{0}, g_n_matches{0};
static std::mutex g_name_mu;
static std::unordered_map<std::string, int>& name_counters() {
  static auto* m = new std::unordered_map<std::string, int>();
  return *m;
}

bool recording() {
  return TRACK_MATCH_STATS.value() >= 2 && ts().untracked == 0 && ts().depth > 0 && recorder() != nullptr;
}

void note_uop(const UOp& u) {
  if (Recorder* r = recorder(); r && TRACK_MATCH_STATS.value() >= 2 && ts().untracked == 0) r->note_uop(u);
}

Untracked::Untracked() { ts().untracked++; }
Untracked::~Untracked() { ts().untracked--; }

// ************************* groups *************************

uint64_t program_id(const UOp& prg) {
  std::lock_guard<std::mutex> lk(g_prog_mu);
  auto it = program_ids().find(prg);
  return it == program_ids().end() ? 0 : it->second;
}
void set_program_id(const UOp& prg, uint64_t id) {
  std::lock_guard<std::mutex> lk(g_prog_mu);
  program_ids()[prg] = id;
}
bool claim_machine_code(const UOp& prg) {
  std::lock_guard<std::mutex> lk(g_prog_mu);
  return machine_code_claimed().insert(prg).second;
}

uint64_t current_context() { return ts().groups.empty() ? 0 : ts().groups.back(); }

Group::Group(const std::string& fn_name) : fn_(fn_name) {
  if (TRACK_MATCH_STATS.value() < 2) return;
  Recorder* r = active_recorder();
  if (!r) return;
  int n;
  {
    std::lock_guard<std::mutex> lk(g_name_mu);
    n = ++name_counters()[fn_name];
  }
  display_ = fn_name + " n" + std::to_string(n);
  id_ = r->context_begin(display_, now_ns());
  g_n_contexts++;
  g_last_context.store(id_);
  ts().groups.push_back(id_);
}
Group::~Group() {
  if (!id_) return;
  ts().groups.pop_back();
  if (Recorder* r = recorder()) r->context_end(id_, now_ns());
}
void Group::rename(const std::string& name) {
  if (!id_) return;
  size_t p = display_.find(fn_);
  if (p != std::string::npos) display_.replace(p, fn_.size(), name);
  if (Recorder* r = recorder()) r->context_rename(id_, display_);
}
void Group::set_name(const std::string& full) {
  if (!id_) return;
  display_ = full;
  if (Recorder* r = recorder()) r->context_rename(id_, display_);
}

// ************************* steps *************************

Step::Step(const char* name, const std::source_location& loc, const UOp& input, bool bottom_up, bool walk,
           bool enter_calls) {
  if (TRACK_MATCH_STATS.value() < 2) return;
  ThreadState& t = ts();
  if (t.untracked) return;
  Recorder* r = active_recorder();
  if (!r) return;
  StepInfo info;
  if (!t.groups.empty())
    info.context = t.groups.back();
  else if (uint64_t last = g_last_context.load())
    info.context = last;
  else {
    std::lock_guard<std::mutex> lk(g_install_mu);
    if (!(info.context = g_last_context.load())) {
      info.context = r->context_begin("default graph_rewrite", now_ns());
      g_n_contexts++;
      g_last_context.store(info.context);
    }
  }
  info.parent = t.depth > 0 ? t.frames[t.depth - 1].id : 0;
  info.depth = t.depth;
  info.name = name ? name : "graph_rewrite";
  // source_location file names are static strings: strip the repository root once per call site file
  thread_local std::unordered_map<const char*, std::string> stripped;
  auto it = stripped.find(loc.file_name());
  if (it == stripped.end()) {
    std::string f = loc.file_name();
    const char* root = TG_SOURCE_ROOT;
    if (f.rfind(root, 0) == 0) f = f.substr(std::strlen(root));
    it = stripped.emplace(loc.file_name(), std::move(f)).first;
  }
  info.file = it->second;
  info.line = (int)loc.line();
  info.bottom_up = bottom_up, info.walk = walk, info.enter_calls = enter_calls;
  info.t_start_ns = now_ns();
  id_ = r->step_begin(info, input);
  g_n_steps++;
  if ((int)t.frames.size() <= t.depth) t.frames.emplace_back();
  StepFrame& fr = t.frames[t.depth++];
  fr.id = id_;
  fr.ordinal = 0;
}

static std::vector<RuleStat> pop_frame_stats(ThreadState& t) {
  StepFrame& fr = t.frames[--t.depth];
  std::vector<RuleStat> out;
  out.reserve(fr.touched.size());
  for (uint32_t id : fr.touched) {
    Counters& c = fr.stats[id];
    RuleStat s;
    s.rule = id, s.candidates = c.cand, s.early_rejects = c.er, s.attempts = c.att, s.matches = c.mat;
    s.excl_ns = ticks_to_ns(c.excl_ns), s.incl_ns = ticks_to_ns(c.fail_ns + c.match_ns);
    out.push_back(s);
    c = Counters{};
  }
  fr.touched.clear();
  return out;
}

void Step::done(const UOp& output) {
  if (!id_) return;
  done_ = true;
  ThreadState& t = ts();
  auto stats = pop_frame_stats(t);
  if (Recorder* r = recorder()) r->step_end(id_, &output, now_ns(), std::move(stats), "");
}
Step::~Step() {
  if (!id_ || done_) return;
  ThreadState& t = ts();
  auto stats = pop_frame_stats(t);
  if (Recorder* r = recorder())
    r->step_end(id_, nullptr, now_ns(), std::move(stats), "graph_rewrite raised an exception");
}

// ************************* the tracked matcher loop *************************

bool tracked_rewrite(const std::vector<const RuleData*>& bucket, const UOp& u, CtxRef ctx, void* out, bool uop_result) {
  static const bool registered = (ensure_atexit(), true);  // the table prints at exit
  (void)registered;
  ThreadState& t = ts();
  // nested rewrites (inside a rule) grow t.frames and t.totals: hold indices, never pointers, across try_rule
  const int depth = (TRACK_MATCH_STATS.value() >= 2 && t.untracked == 0) ? t.depth : 0;
  const uint32_t nrules = rule_count();
  if (t.totals.size() < nrules) {
    std::lock_guard<std::mutex> lk(t.mu);
    t.totals.resize(nrules);
  }
  if (depth > 0 && t.frames[depth - 1].stats.size() < nrules) t.frames[depth - 1].stats.resize(nrules);
  auto frame = [&]() -> StepFrame* { return depth > 0 ? &t.frames[depth - 1] : nullptr; };
  OpSet ler = u.src_ops();
  for (const RuleData* r : bucket) {
    const uint32_t id = r->id;
    if (StepFrame* fr = frame()) {
      Counters& sc = fr->stats[id];
      if (sc.cand == 0) fr->touched.push_back(id);
      sc.cand++;
    }
    t.totals[id].cand++;
    if (!r->early_reject.subset_of(ler)) {
      // an early reject is one bitset test: counted, not timed (two clock reads would cost 20x the test)
      t.totals[id].er++;
      if (StepFrame* fr = frame()) fr->stats[id].er++;
      continue;
    }
    int64_t st = fast_ticks();
    t.totals[id].att++;
    if (StepFrame* fr = frame()) fr->stats[id].att++;
    t.child_ns.push_back(0);
    bool hit;
    try {
      hit = detail::try_rule(*r, u, ctx, out, uop_result);
    } catch (const std::exception& e) {
      t.child_ns.pop_back();
      StepFrame* fr = frame();
      if (fr && recorder()) {
        std::string msg = std::string("Exception\n") + e.what();
        std::vector<UOp> srcs(u.src().begin(), u.src().end());
        UOp err(Ops::REWRITE_ERROR, DType(), srcs, Arg(msg));
        recorder()->rule_error(fr->id, fr->ordinal++, u, err, id, msg);
      }
      throw;
    }
    int64_t dt = fast_ticks() - st;
    int64_t child = t.child_ns.back();
    t.child_ns.pop_back();
    if (!t.child_ns.empty()) t.child_ns.back() += dt;
    Counters& c = t.totals[id];
    c.excl_ns += dt - child;
    StepFrame* fr = frame();
    if (fr) fr->stats[id].excl_ns += dt - child;
    if (hit) {
      c.mat++, c.match_ns += dt;
      if (fr) {
        fr->stats[id].mat++, fr->stats[id].match_ns += dt;
        if (uop_result) {
          if (Recorder* rr = recorder()) {
            rr->match(fr->id, fr->ordinal++, u, *static_cast<UOp*>(out), id, ticks_to_ns(dt));
            g_n_matches++;
          }
        }
      }
      return true;
    }
    c.fail_ns += dt;
    if (fr) fr->stats[id].fail_ns += dt;
    if (detail::bottom_up_gate) return false;  // the rule gated the node (request_bottom_up_gate)
  }
  return false;
}

// ************************* statistics *************************

std::vector<std::pair<uint32_t, RuleTotals>> match_stats() {
  std::vector<Counters> all;
  {
    std::lock_guard<std::mutex> lk(g_threads_mu);
    add_into(all, retired_totals());
    for (ThreadState* t : live_threads()) {
      std::lock_guard<std::mutex> lk2(t->mu);
      add_into(all, t->totals);
    }
  }
  std::vector<std::pair<uint32_t, RuleTotals>> out;
  for (uint32_t i = 0; i < all.size(); i++) {
    const Counters& c = all[i];
    if (c.cand == 0) continue;
    RuleTotals r;
    r.candidates = c.cand, r.early_rejects = c.er, r.attempts = c.att, r.matches = c.mat;
    r.fail_ns = ticks_to_ns(c.fail_ns), r.match_ns = ticks_to_ns(c.match_ns), r.excl_ns = ticks_to_ns(c.excl_ns);
    out.push_back({i, r});
  }
  return out;
}

void reset_match_stats() {
  std::lock_guard<std::mutex> lk(g_threads_mu);
  retired_totals().clear();
  for (ThreadState* t : live_threads()) {
    std::lock_guard<std::mutex> lk2(t->mu);
    for (Counters& c : t->totals) c = Counters{};
  }
}

std::string format_match_stats() {
  auto stats = match_stats();
  std::stable_sort(stats.begin(), stats.end(), [](const auto& a, const auto& b) {
    return a.second.fail_ns + a.second.match_ns < b.second.fail_ns + b.second.match_ns;
  });
  std::string out;
  char buf[256];
  RuleTotals tot;
  int matched = 0;
  for (const auto& [id, v] : stats) {
    const RuleData* r = rule_by_id(id);
    std::string file = r->file;
    size_t slash = file.rfind('/');
    std::string loc = (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" + std::to_string(r->src.line);
    if (v.attempts != 0) {
      std::snprintf(buf, sizeof(buf), "%6" PRIu64 " / %7" PRIu64 " -- %9.2f / %9.2f ms -- %-20s ", v.matches,
                    v.attempts, v.match_ns / 1e6, (v.fail_ns + v.match_ns) / 1e6, loc.c_str());
      out += buf + r->text + "\n";
    }
    tot.matches += v.matches, tot.attempts += v.attempts, tot.match_ns += v.match_ns, tot.fail_ns += v.fail_ns;
    matched += v.matches > 0;
  }
  std::snprintf(buf, sizeof(buf), "%6" PRIu64 " / %7" PRIu64 " -- %9.2f / %9.2f ms -- TOTAL\n", tot.matches,
                tot.attempts, tot.match_ns / 1e6, (tot.fail_ns + tot.match_ns) / 1e6);
  out += buf;
  out += std::to_string(stats.size()) + " rules, " + std::to_string(matched) + " matched once\n";
  return out;
}

RecordTotals record_totals() { return {g_n_contexts.load(), g_n_steps.load(), g_n_matches.load()}; }

void finalize(bool interrupted) {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  Recorder* r = recorder();
  if (r) {
    r->finish();
    auto t = record_totals();
    if (std::string why = r->stopped(); !why.empty())
      std::printf("recording stopped early (%s): %s holds what was written before, marked truncated\n", why.c_str(),
                  r->path().c_str());
    else if (t.contexts == 0 && t.steps == 0 && TRACK_MATCH_STATS.value() < 2)  // PROFILE=1 without VIZ: timings only
      std::printf("saved the kernel timings (PROFILE, no rewrites) to %s\n", r->path().c_str());
    else
      std::printf("rewrote %" PRIu64 " graphs and matched %" PRIu64 " times in %" PRIu64 " steps, saved to %s\n",
                  t.contexts, t.matches, t.steps, r->path().c_str());
  }
  if (TRACK_MATCH_STATS.value() >= 1 && getenv_int("PRINT_MATCH_STATS", 1))
    std::fputs(format_match_stats().c_str(), stdout);
  std::fflush(stdout);
  if (r && VIZ.value() > 0 && !interrupted) {
    if (VizLauncher launch = g_launcher.load())
      launch(r->path());
    else
      std::printf("open the trace with: tinyviz %s\n", r->path().c_str());
    std::fflush(stdout);
  }
}

}  // namespace track
}  // namespace tg
