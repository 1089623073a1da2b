#include "gui/frame_loader.h"

#include <QCoreApplication>
#include <QPointer>
#include <QThreadPool>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <unordered_set>

#include "gui/async.h"
#include "gui/frame_builder.h"

namespace tv {

namespace {
// process-wide worker threads: one for frames (replay is serial per trace anyway), one for Graphviz (not
// thread-safe). Never destroyed: a Graphviz run cannot be interrupted, so quitting must not wait for it.
QThreadPool* pool(int which) {
  static QThreadPool* pools[2] = {nullptr, nullptr};
  static std::once_flag once;
  std::call_once(once, [] {
    for (auto& p : pools) {
      p = new QThreadPool();
      p->setMaxThreadCount(1);
      p->setExpiryTimeout(-1);
    }
  });
  return pools[which];
}
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
constexpr size_t kMaxChain = 64;           // derive a frame from a cached one at most this many frames away
constexpr size_t kCacheBytes = 4u << 20;   // cached frames, by what they hold (a 1,000-node frame: ~0.5 MB)

size_t cost(const FrameResult& r) {
  size_t b = sizeof(FrameResult) + r.graph->bytes() + r.ghost_pos.size() * sizeof(Pt) + r.ghost_shown.size();
  if (r.layout) {
    b += sizeof(Layout) + r.layout->pos.size() * sizeof(Pt);
    for (const EdgePath& e : r.layout->edges) b += sizeof(EdgePath) + e.pts.capacity() * sizeof(Pt);
  }
  return b;
}
}  // namespace

struct FrameLoader::Shared {
  std::atomic<uint64_t> gen{0};
  std::atomic<uint64_t> prefetch_gen{0};  // a prefetch job is stale once this moves on
  std::atomic<uint64_t> epoch{0};         // clear() moves it on: a job that started before puts nothing in the cache
  std::atomic<int64_t> next_family{1};
  std::mutex m;
  using Key = std::pair<int64_t, size_t>;
  struct Entry {
    FrameResultPtr r;
    std::list<Key>::iterator lru;
    size_t bytes;
  };
  std::map<Key, Entry> cache;
  std::list<Key> lru;  // most recent first
  size_t bytes = 0;
  std::unordered_set<int64_t> slow_steps;  // Graphviz went over budget here: lay this step out simply

  FrameResultPtr get(int64_t step, size_t k) {
    std::lock_guard<std::mutex> l(m);
    auto it = cache.find({step, k});
    if (it == cache.end()) return nullptr;
    lru.splice(lru.begin(), lru, it->second.lru);
    return it->second.r;
  }
  void erase_locked(std::map<Key, Entry>::iterator it) {
    bytes -= it->second.bytes;
    lru.erase(it->second.lru);
    cache.erase(it);
  }
  bool has(int64_t step, size_t k) {
    std::lock_guard<std::mutex> l(m);
    return cache.count({step, k});
  }
  void put(int64_t step, size_t k, FrameResultPtr r, uint64_t job_epoch = UINT64_MAX) {
    size_t b = cost(*r);
    std::lock_guard<std::mutex> l(m);
    if (job_epoch != UINT64_MAX && job_epoch != epoch) return;  // built with what a clear() dropped
    Key key{step, k};
    if (auto it = cache.find(key); it != cache.end()) erase_locked(it);
    lru.push_front(key);
    bytes += b;
    cache[key] = {std::move(r), lru.begin(), b};
    while (bytes > kCacheBytes && lru.size() > 1) erase_locked(cache.find(lru.back()));
  }
  void drop(int64_t step, size_t k) {
    std::lock_guard<std::mutex> l(m);
    if (auto it = cache.find({step, k}); it != cache.end()) erase_locked(it);
  }
  // the cached frame of this step closest to k (within kMaxChain), preferring earlier frames
  std::optional<std::pair<size_t, FrameResultPtr>> nearest(int64_t step, size_t k) {
    std::lock_guard<std::mutex> l(m);
    for (size_t d = 1; d <= kMaxChain; d++) {
      if (k >= d)
        if (auto it = cache.find({step, k - d}); it != cache.end()) return std::make_pair(k - d, it->second.r);
      if (auto it = cache.find({step, k + d}); it != cache.end()) return std::make_pair(k + d, it->second.r);
    }
    return std::nullopt;
  }
  bool slow(int64_t step) {
    std::lock_guard<std::mutex> l(m);
    return slow_steps.count(step);
  }
  void set_slow(int64_t step) {
    std::lock_guard<std::mutex> l(m);
    slow_steps.insert(step);
  }
  void clear() {
    std::lock_guard<std::mutex> l(m);
    epoch++;
    cache.clear(), lru.clear(), slow_steps.clear();
    bytes = 0;
  }

  // ghosts of frame k stand where frame k-1 (same coordinates) had them; when a node of this frame covers that spot
  // (often the replacement, which took it), beside it: the nearest free place right, left, below or above
  void attach_ghosts(FrameResult& r) {
    const FrameGraph& g = *r.graph;
    r.ghost_pos.assign(g.ghosts.size(), {});
    r.ghost_shown.assign(g.ghosts.size(), 0);
    if (g.frame == 0 || g.ghosts.empty()) return;
    FrameResultPtr prev = get(g.step, g.frame - 1);
    if (!prev || prev->family != r.family) return;
    std::unordered_map<NodeKey, size_t, NodeKeyHash> where;
    std::unordered_map<int64_t, size_t> where_id;  // a leaf drawn once per user: its first copy
    for (size_t i = 0; i < prev->graph->nodes.size(); i++) {
      where[prev->graph->nodes[i].key] = i;
      if (!prev->graph->nodes[i].hides) where_id.emplace(prev->graph->nodes[i].key.id, i);
    }
    struct Box {
      double x, y, w, h;
    };
    std::vector<Box> taken;  // this frame's nodes, then the ghosts placed so far
    taken.reserve(g.nodes.size() + g.ghosts.size());
    for (size_t n = 0; n < g.nodes.size(); n++) taken.push_back({r.layout->pos[n].x, r.layout->pos[n].y, g.nodes[n].w, g.nodes[n].h});
    auto free_at = [&](const GNode& gh, Pt p) {
      for (const Box& b : taken) {
        // (10: the room both items keep outside their boxes for marks, 4 each, and a gap)
        double ox = (gh.w + b.w) / 2 + 10 - std::abs(b.x - p.x);
        double oy = (gh.h + b.h) / 2 + 10 - std::abs(b.y - p.y);
        if (ox > 0 && oy > 0) return false;
      }
      return true;
    };
    for (size_t i = 0; i < g.ghosts.size(); i++) {
      auto it = where.find(g.ghosts[i].key);
      size_t at_prev;
      if (it != where.end()) at_prev = it->second;
      else if (auto id = where_id.find(g.ghosts[i].key.id); id != where_id.end()) at_prev = id->second;
      else continue;  // not drawn in the previous frame (folded, collapsed): the panel lists it
      const GNode& gh = g.ghosts[i];
      Pt p = prev->layout->pos[at_prev], at = p;
      bool placed = free_at(gh, p);
      for (int k = 1; k <= 8 && !placed; k++)
        for (Pt d : {Pt{1, 0}, Pt{-1, 0}, Pt{0, 1}, Pt{0, -1}}) {
          // a step of the ghost's own size, so that k steps clear nodes up to k times as big
          Pt c{p.x + d.x * k * (gh.w * 0.5 + 30), p.y + d.y * k * (gh.h + 16)};
          if (free_at(gh, c)) {
            at = c, placed = true;
            break;
          }
        }
      if (!placed) {  // a crowded neighbourhood: under everything, straight below its place
        double bottom = p.y;
        for (const Box& b : taken) bottom = std::max(bottom, b.y + b.h / 2);
        at = {p.x, bottom + gh.h / 2 + 24};
      }
      r.ghost_pos[i] = at;
      r.ghost_shown[i] = 1;
      taken.push_back({at.x, at.y, gh.w, gh.h});
    }
  }
};

FrameLoader::FrameLoader(QObject* parent) : QObject(parent), sh_(std::make_shared<Shared>()) {
  qRegisterMetaType<tv::FrameResultPtr>();
  frame_pool_ = pool(0);
  dot_pool_ = pool(1);
  budget_timer_.setSingleShot(true);
  connect(&budget_timer_, &QTimer::timeout, this, &FrameLoader::on_budget);
  if (const char* b = std::getenv("TINYVIZ_LAYOUT_BUDGET_MS")) budget_ms_ = std::max(50, std::atoi(b));
}

FrameLoader::~FrameLoader() { sh_->gen++; }  // running jobs see they are stale and deliver nothing

void FrameLoader::set_session(SessionPtr s) {
  session_ = std::move(s);
  sh_->gen++;
  sh_->prefetch_gen++;
  sh_->clear();
  // open the frame side's own connection now, while the window builds its models
  if (session_)
    frame_pool_->start([s = session_] {
      try {
        s->with_frames([](TraceSession::Frames&) {});
      } catch (...) {  // reported by the first frame request
      }
    });
  busy_ = false;
  budget_timer_.stop();
  emit progress(QString());
}

void FrameLoader::set_options(const FrameOptions& o) {
  opt_ = o;
  sh_->prefetch_gen++;
  sh_->clear();
}

bool FrameLoader::workers_idle() {
  return pool(0)->activeThreadCount() == 0 && pool(1)->activeThreadCount() == 0 &&
         query_pool()->activeThreadCount() == 0;
}

FrameResultPtr FrameLoader::cached(int64_t step, size_t frame) const { return sh_->get(step, frame); }

void FrameLoader::request(int64_t step, size_t frame) {
  // asked again for the frame on its way (opening on a selection starts it before the window selects it)
  if (on_its_way(step, frame)) return;
  step_ = step, frame_ = frame;
  gen_ = ++sh_->gen;
  // a prefetch of another frame stops before its next frame; one of this frame goes on, and the job started below
  // (queued behind it on the one frame worker) then finds the frame in the cache
  if (std::make_pair(step, frame) != prefetching_) sh_->prefetch_gen++;
  fallback_started_ = false;
  if (!session_) return;
  if (FrameResultPtr r = sh_->get(step, frame)) {
    budget_timer_.stop();
    busy_ = false;
    emit progress(QString());
    emit frame_ready(r);
    return;
  }
  budget_timer_.stop();
  start_job(false, false, false);
}

void FrameLoader::relayout() {
  if (!session_) return;
  sh_->prefetch_gen++;
  sh_->drop(step_, frame_);
  gen_ = ++sh_->gen;
  fallback_started_ = false;
  budget_timer_.stop();
  start_job(false, true, true);
}

void FrameLoader::cancel_layout() {
  if (busy_ && !fallback_started_) on_budget();
}

void FrameLoader::on_budget() {
  if (!busy_ || fallback_started_) return;
  fallback_started_ = true;
  sh_->set_slow(step_);
  emit progress(tr("Graphviz is taking too long: drawing a simple layout…"));
  start_job(true, false, true);
}

namespace {
// frame k laid out from a cached frame of the same step (at most kMaxChain frames away, through every frame in
// between): nodes that survive keep their place. Null when nothing is cached nearby, the graphs differ too much, or
// the request went stale.
// stale: the result is no longer wanted (checked before each frame)
template <class Stale>
FrameResultPtr derive(TraceSession::Frames& fr, FrameLoader::Shared& sh, int64_t step, size_t k,
                      const FrameOptions& opt, Stale stale) {
  uint64_t epoch = sh.epoch;
  auto nb = sh.nearest(step, k);
  if (!nb) return nullptr;
  auto [j, base] = *nb;
  int dir = k > j ? 1 : -1;
  for (size_t i = j + dir;; i += dir) {
    if (stale()) return nullptr;
    if (FrameResultPtr c = sh.get(step, i)) {
      base = c;
    } else {
      auto t0 = std::chrono::steady_clock::now();
      FrameGraphPtr g = build_frame(fr, step, i, opt);
      double build_ms = ms_since(t0);
      std::unordered_map<int64_t, int64_t> inherit;
      // a rebuilt node takes the place of the node it replaced (forward), or the other way round (backward).
      // Ghosts of removed nodes are no obstacles: new nodes may cover them, keeping the graph compact.
      if (dir > 0)
        for (auto& [o, n] : g->changed) inherit[n] = o;
      else
        for (auto& [o, n] : base->graph->changed) inherit[o] = n;
      Layout L = layout_incremental(g->layout_graph(), base->graph->layout_graph(), *base->layout, inherit, {});
      if (L.engine.empty()) return nullptr;  // too different: lay out from scratch
      auto r = std::make_shared<FrameResult>();
      r->graph = g;
      r->layout = std::make_shared<Layout>(std::move(L));
      r->family = base->family;
      r->build_ms = build_ms;
      sh.attach_ghosts(*r);
      sh.put(step, i, r, epoch);
      base = r;
    }
    if (i == k) return base;
  }
}
}  // namespace

void FrameLoader::prefetch(int64_t step, size_t frame) {
  // not while a frame is on its way, nor with focus (every frame is laid out afresh there), nor for a cached frame
  if (!session_ || busy_ || opt_.focus_hops > 0 || sh_->has(step, frame)) return;
  uint64_t pg = ++sh_->prefetch_gen;
  prefetching_ = {step, frame};
  auto sh = sh_;
  SessionPtr session = session_;
  FrameOptions opt = opt_;
  frame_pool_->start([=] {
    if (sh->prefetch_gen != pg) return;
    try {
      // derived from a cached neighbour only (the frame just shown): no fresh layout, nothing to deliver
      session->with_frames([&](TraceSession::Frames& fr) {
        if (!sh->has(step, frame)) derive(fr, *sh, step, frame, opt, [&] { return sh->prefetch_gen != pg; });
      });
    } catch (...) {  // the request for that frame, if one comes, reports it
    }
  });
}

// force_fallback: the simple layout now (budget spent or cancelled). force_full: a fresh Graphviz layout of this very
// frame. exact: lay out this frame itself, not its predecessor. Without those, a frame with no cached neighbour is
// derived from a fresh layout of frame k-1, so even a jump shows what the match removed, with the same coordinates.
void FrameLoader::start_job(bool force_fallback, bool force_full, bool exact) {
  busy_ = true;
  job_opt_ = opt_;
  // asked for Graphviz explicitly (force_full): wait as long as it takes, Esc still cancels
  if (!force_fallback && !force_full && !budget_timer_.isActive()) budget_timer_.start(budget_ms_);
  emit progress(tr("Building frame %1…").arg(frame_));
  QPointer<FrameLoader> self(this);
  auto sh = sh_;
  SessionPtr session = session_;
  FrameOptions opt = opt_;
  uint64_t gen = gen_;
  int64_t step = step_;
  size_t k = frame_;
  int budget = budget_ms_;
  QThreadPool* dot_pool = dot_pool_;
  // runs fn on the UI thread if the loader still exists
  auto post = [self](auto fn) {
    QMetaObject::invokeMethod(
        qApp,
        [self, fn] {
          if (self) fn(self.data());
        },
        Qt::QueuedConnection);
  };
  auto deliver = [post, gen](FrameResultPtr r) { post([gen, r](FrameLoader* l) { l->deliver(gen, r); }); };
  frame_pool_->start([=] {
    if (sh->gen != gen) return;
    try {
      session->with_frames([&](TraceSession::Frames& fr) {
        if (!force_full)
          if (FrameResultPtr r = sh->get(step, k)) return deliver(r);
        bool focus = opt.focus_hops > 0;  // small, different graphs per frame: lay each out afresh
        if (!force_full && !force_fallback && !focus)
          if (FrameResultPtr r = derive(fr, *sh, step, k, opt, [&] { return sh->gen != gen; })) return deliver(r);
        if (sh->gen != gen) return;
        size_t base = force_full || force_fallback || exact || focus || k == 0 ? k : k - 1;
        auto t0 = std::chrono::steady_clock::now();
        FrameGraphPtr g = build_frame(fr, step, base, opt);
        double build_ms = ms_since(t0);
        size_t n = g->nodes.size();
        auto r = std::make_shared<FrameResult>();
        r->graph = g;
        r->build_ms = build_ms;
        r->family = sh->next_family++;
        size_t work = n <= kMaxDotNodes ? dot_work(g->layout_graph()) : SIZE_MAX;
        bool dot_ok = force_full ? n <= kMaxDotNodes : work <= kMaxDotWork && !sh->slow(step);
        if (!force_fallback && dot_ok) {
          post([n](FrameLoader* l) { emit l->progress(tr("Laying out %1 nodes with Graphviz dot…").arg(n)); });
          dot_pool->start([=] {
            if (sh->gen != gen) return;  // the user moved on before it started
            try {
              LayoutGraph lg = g->layout_graph();
              try {
                r->layout = std::make_shared<Layout>(layout_dot(lg));
              } catch (const std::exception& e) {
                r->layout = std::make_shared<Layout>(layout_layered(lg));
                r->note = QString::fromStdString(e.what());
              }
            } catch (...) {  // a pool job that throws would end the process
              QString msg = App::describe(std::current_exception());
              post([gen, msg](FrameLoader* l) { l->fail(gen, msg); });
              return;
            }
            if (std::getenv("TINYVIZ_TIMING"))
              std::fprintf(stderr, "tinyviz: step %lld frame %zu%s: build %.1f ms, %s %.1f ms (%zu nodes, work %zu)\n",
                           (long long)step, r->graph->frame,
                           r->graph->frame != k ? " (the frame before the one asked for)" : "", r->build_ms,
                           r->layout->engine.c_str(), r->layout->ms, n, work);
            post([gen, r, k](FrameLoader* l) {
              if (l->gen_ != gen || l->fallback_started_) return;  // too late: the simple layout is up
              l->sh_->attach_ghosts(*r);
              l->sh_->put(r->graph->step, r->graph->frame, r);
              if (r->graph->frame != k)
                l->start_job(false, false, true);  // now derive the frame asked for
              else
                l->deliver(gen, r);
            });
          });
          return;
        }
        r->layout = std::make_shared<Layout>(layout_layered(g->layout_graph()));
        if (force_fallback || sh->slow(step))  // cancelled, or over budget here or earlier in this step
          r->note = tr("Stopped waiting for Graphviz (budget %1 ms, or cancelled): simple layered layout. "
                       "L: wait for Graphviz")
                        .arg(budget);
        else if (n > kMaxDotNodes || work > kMaxDotWork)
          r->note = tr("%1 nodes (%2 with the virtual nodes of long edges) is too much for Graphviz in the time a "
                       "frame has: simple layered layout. R: Graphviz anyway")
                        .arg(n)
                        .arg(work == SIZE_MAX ? n : work);
        sh->attach_ghosts(*r);
        sh->put(step, base, r);
        if (base == k) return deliver(r);
        FrameResultPtr d = derive(fr, *sh, step, k, opt, [&] { return sh->gen != gen; });
        if (!d) {  // too different from its predecessor: lay out k itself
          auto g2 = build_frame(fr, step, k, opt);
          auto r2 = std::make_shared<FrameResult>();
          r2->graph = g2;
          r2->layout = std::make_shared<Layout>(layout_layered(g2->layout_graph()));
          r2->family = sh->next_family++;
          r2->note = r->note;
          sh->put(step, k, r2);
          d = r2;
        }
        deliver(d);
      });
    } catch (...) {  // a pool job that throws would end the process
      QString msg = App::describe(std::current_exception());
      post([gen, msg](FrameLoader* l) { l->fail(gen, msg); });
    }
  });
}

void FrameLoader::deliver(uint64_t gen, FrameResultPtr r) {
  if (gen != gen_ || gen == delivered_) return;  // stale, or already shown (a fallback racing the normal job)
  delivered_ = gen;
  budget_timer_.stop();
  busy_ = false;
  emit progress(QString());
  emit frame_ready(r);
}

void FrameLoader::fail(uint64_t gen, QString msg) {
  if (gen != gen_) return;
  budget_timer_.stop();
  busy_ = false;
  emit progress(QString());
  emit frame_failed(step_, frame_, msg);
}

}  // namespace tv
