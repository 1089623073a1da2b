#include "gui/timeline_view.h"

#include <QFontDatabase>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QTimer>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>

#include "gui/op_style.h"

namespace tv {

using namespace tg::viz;

namespace {
constexpr int kAxisH = 24, kMarkerRowH = 16, kLaneH = 20, kMemH = 48, kMemExpandedH = 220, kLaneGap = 2;
// marks drawn over kernel runs: the selected run, and the runs that used the marked buffer. Kernel runs are browns and
// oranges, so the marks are a white and a cyan that show on every one of them
const QColor kRunMark(0xff, 0xff, 0xff), kBufferMark(0x4d, 0xe1, 0xff);
const QRgb kKernelColors[] = {0x8c5a1e, 0x8a6d1f, 0x7f4a26, 0x946b35, 0x7a5530, 0x9a5f2a, 0x85602c, 0x6f4f24};
const QRgb kStepColors[] = {0x2f5d73, 0x3b6e5a, 0x5a4f7a, 0x6e5a3b, 0x375a8c, 0x4d6b2f,
                            0x7a4860, 0x2e6b6b, 0x5f5f2f, 0x4a4a7a, 0x6b3b3b, 0x2f4f6f};
QString fmt_ns(double ns) {
  if (ns >= 1e9) return QString::number(ns / 1e9, 'f', 3) + " s";
  if (ns >= 1e6) return QString::number(ns / 1e6, 'f', 3) + " ms";
  if (ns >= 1e3) return QString::number(ns / 1e3, 'f', 2) + " µs";
  return QString::number(ns, 'f', 0) + " ns";
}
// an axis label: as many decimals as the tick step needs
QString fmt_tick(double ns, double step) {
  const char* unit = "ns";
  double div = 1;
  if (step >= 1e8)
    unit = "s", div = 1e9;
  else if (step >= 1e5)
    unit = "ms", div = 1e6;
  else if (step >= 1e2)
    unit = "µs", div = 1e3;
  int decimals = std::max(0, (int)std::ceil(-std::log10(step / div) - 1e-9));
  return QString::number(ns / div, 'f', decimals) + " " + unit;
}
QString kernel_tooltip(const Trace& t, const KernelEventRow& k) {
  double ns = std::max<int64_t>(k.t_end - k.t_start, 1);
  QString tip =
      QObject::tr("%1 on %2\n%3").arg(QString::fromStdString(k.name), QString::fromStdString(k.device), fmt_ns(ns));
  if (const ProgramRow* p = k.program ? t.program(k.program) : nullptr) {
    if (p->ops >= 0) tip += QObject::tr(", %1 GFLOPS").arg(p->ops / ns, 0, 'f', 2);
    if (p->mem >= 0) tip += QObject::tr(", %1 GB/s").arg(p->mem / ns, 0, 'f', 2);
    tip += QObject::tr("\nglobal %1 local %2")
               .arg(QString::fromStdString(p->global_size), QString::fromStdString(p->local_size));
    if (p->context) tip += QObject::tr("\nclick: codegen context %1").arg(p->context);
  }
  int nb = k.bufs.empty() ? 0 : (int)std::count(k.bufs.begin(), k.bufs.end(), '[') - 1;
  if (nb > 0) tip += QObject::tr("\n%1 buffers").arg(nb);
  if (!k.var_vals.empty()) tip += "\n" + QString::fromStdString(k.var_vals);
  return tip;
}
QColor marker_color(const std::string& c) {
  QColor q(QString::fromStdString(c));
  return q.isValid() ? q : QColor(Qt::gray);
}
}  // namespace

QString fmt_bytes(double b) {
  if (b >= 1e9) return QString::number(b / 1e9, 'f', 2) + " GB";
  if (b >= 1e6) return QString::number(b / 1e6, 'f', 2) + " MB";
  if (b >= 1e3) return QString::number(b / 1e3, 'f', 2) + " KB";
  return QString::number(b, 'f', 0) + " B";
}

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMinimumHeight(120);
}

size_t TimelineView::span_count() const {
  ensure_lanes();
  size_t n = 0;
  for (const Lane& l : lanes_) n += l.spans.size();
  return n;
}

// The lanes are built on the event loop's next turn (or when something needs them first), not inside set_session: on
// a 100,000-step trace they take 30+ ms, which added to the tree model's time made opening stall the UI over 100 ms.
void TimelineView::set_session(SessionPtr s) {
  session_ = std::move(s);
  lanes_.clear();
  kernel_lanes_ = 0;
  sel_ = {};
  hover_.reset();
  pending_ = session_ != nullptr;
  if (pending_) QTimer::singleShot(0, this, [this] { ensure_lanes(); });
  update();
}

void TimelineView::ensure_lanes() const {
  if (pending_) const_cast<TimelineView*>(this)->build_lanes();
}

void TimelineView::build_lanes() {
  pending_ = false;
  if (!session_) return;
  Trace& t = session_->ui();
  int64_t t0 = session_->time_origin(), tmax = 0;
  for (const auto& c : t.contexts()) tmax = std::max(tmax, std::max(c.t_start, c.t_end));
  for (const auto& st : t.steps()) tmax = std::max(tmax, std::max(st.t_start, st.t_end));
  for (const auto& k : t.kernel_events()) tmax = std::max(tmax, k.t_end);
  profile_ = build_profile(t, /*tiny=*/false);
  sel_buffer_ = nullptr, sel_buffer_runs_.clear(), iv1_ = iv0_ = 0, totals_.clear(), sel_run_ = -1;
  bands_.clear(), bands_too_many_.clear();
  if (!profile_.memory.empty() || !profile_.markers.empty() || !t.ranges().empty())
    tmax = std::max(tmax, profile_.t_end);
  total_ = std::max<double>(1.0, (double)(tmax - t0));
  // kernel lanes first, one per device (overlapping runs, e.g. from several threads, get extra lanes)
  kernel_lanes_ = 0;
  {
    std::map<std::string, std::vector<Span>> by_dev;
    const auto& evs = t.kernel_events();
    for (size_t i = 0; i < evs.size(); i++) {
      const auto& k = evs[i];
      const ProgramRow* prg = k.program ? t.program(k.program) : nullptr;
      by_dev[k.device].push_back({k.t_start - t0, std::max(k.t_end, k.t_start) - t0, prg ? prg->context : 0, 0,
                                  (int)(qHash(QString::fromStdString(k.name)) & 0xffff), (int64_t)i + 1});
    }
    for (auto& [dev, spans] : by_dev) {
      std::vector<Lane> packed;
      for (const Span& sp : spans) {  // already by start time
        auto it = std::find_if(packed.begin(), packed.end(), [&](const Lane& l) { return l.spans.back().t1 <= sp.t0; });
        if (it == packed.end()) {
          QString name = tr("%1 kernels").arg(QString::fromStdString(dev));
          if (!packed.empty()) name += QString(" (%1)").arg(packed.size() + 1);
          packed.push_back({name, {}});
          it = packed.end() - 1;
        }
        it->spans.push_back(sp);
      }
      for (Lane& l : packed) lanes_.push_back(std::move(l)), kernel_lanes_++;
    }
  }
  // host ranges (USER, <DEV> Graph), packed the same way; then a memory lane per device
  {
    std::map<std::string, std::vector<Span>> by_lane;
    const auto& rs = t.ranges();
    for (size_t i = 0; i < rs.size(); i++)
      by_lane[rs[i].device].push_back({rs[i].t_start - t0, rs[i].t_end - t0, 0, 0,
                                       (int)(qHash(QString::fromStdString(rs[i].name)) & 0xffff), 0, (int64_t)i + 1});
    for (auto& [dev, spans] : by_lane) {
      std::vector<Lane> packed;
      for (const Span& sp : spans) {
        auto it = std::find_if(packed.begin(), packed.end(), [&](const Lane& l) { return l.spans.back().t1 <= sp.t0; });
        if (it == packed.end()) {
          QString name = QString::fromStdString(dev);
          if (!packed.empty()) name += QString(" (%1)").arg(packed.size() + 1);
          packed.push_back({name, {}});
          it = packed.end() - 1;
        }
        it->spans.push_back(sp);
      }
      for (Lane& l : packed) lanes_.push_back(std::move(l));
    }
    for (size_t i = 0; i < profile_.memory.size(); i++) {
      Lane l{tr("%1 memory").arg(QString::fromStdString(profile_.memory[i].device)), {}};
      l.mem = (int)i;
      lanes_.push_back(std::move(l));
    }
  }
  // lanes: per thread, contexts then steps by depth; overlapping spans go to extra lanes (first fit)
  std::map<std::pair<int64_t, int>, std::vector<Span>> groups;
  std::map<int64_t, int> thread_no;  // recording threads, numbered in order of their first context
  for (const auto& c : t.contexts()) thread_no.emplace(c.thread, (int)thread_no.size() + 1);
  auto end_of = [&](int64_t a, int64_t b) { return b ? b - t0 : tmax - t0; };
  for (const auto& c : t.contexts())
    groups[{c.thread, 0}].push_back(
        {c.t_start - t0, end_of(c.t_start, c.t_end), c.id, 0, (int)(qHash(QString::fromStdString(c.name)) & 0xffff)});
  std::unordered_map<std::string, int> name_hash;
  for (const auto& st : t.steps()) {
    auto [it, fresh] = name_hash.emplace(st.name, 0);
    if (fresh) it->second = (int)(qHash(QString::fromStdString(st.name)) & 0xffff);
    groups[{t.context(st.context).thread, st.depth + 1}].push_back(
        {st.t_start - t0, end_of(st.t_start, st.t_end), st.context, st.id, it->second});
  }
  for (auto& [key, spans] : groups) {
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.t0 < b.t0; });
    std::vector<Lane> packed;
    for (const Span& s : spans) {
      auto it = std::find_if(packed.begin(), packed.end(), [&](const Lane& l) { return l.spans.back().t1 <= s.t0; });
      if (it == packed.end()) {
        QString name = key.second == 0 ? tr("thread %1: contexts").arg(thread_no[key.first])
                                       : tr("thread %1: depth %2").arg(thread_no[key.first]).arg(key.second - 1);
        if (!packed.empty()) name += QString(" (%1)").arg(packed.size() + 1);
        packed.push_back({name, {}});
        it = packed.end() - 1;
      }
      it->spans.push_back(s);
    }
    for (Lane& l : packed) lanes_.push_back(std::move(l));
  }
  place_lanes();
  if (!filter_.isEmpty()) set_filter(filter_);
  show_all();
}

int TimelineView::axis_h() const { return kAxisH + (profile_.markers.empty() ? 0 : kMarkerRowH); }

void TimelineView::place_lanes() {
  int y = axis_h() + 4;
  for (Lane& l : lanes_) {
    l.h = l.mem >= 0 ? (l.expanded ? kMemExpandedH : kMemH) : kLaneH;
    l.y = y;
    y += l.h + kLaneGap;
  }
}

QString TimelineView::span_name(const Span& s) const {
  if (!session_) return {};
  Trace& t = session_->ui();
  if (s.kernel) return QString::fromStdString(t.kernel_events()[s.kernel - 1].name);
  if (s.range) return QString::fromStdString(t.ranges()[s.range - 1].name);
  if (s.step) return QString::fromStdString(t.step(s.step).name);
  return QString::fromStdString(t.context(s.context).name);
}

size_t TimelineView::set_filter(const QString& text) {
  ensure_lanes();
  filter_ = text;
  filter_matches_ = 0;
  std::unordered_map<int64_t, bool> step_names;  // steps share few names: decide once per name
  std::unordered_map<std::string, bool> by_name;
  for (Lane& l : lanes_)
    for (Span& s : l.spans) {
      if (text.isEmpty()) {
        s.dim = false;
        continue;
      }
      std::string key = (s.kernel ? "k" : s.range ? "r" : s.step ? "s" : "c") + span_name(s).toStdString();
      auto [it, fresh] = by_name.emplace(key, false);
      if (fresh) it->second = QString::fromStdString(key.substr(1)).contains(text, Qt::CaseInsensitive);
      s.dim = !it->second;
      filter_matches_ += it->second;
    }
  update();
  emit filter_changed(filter_matches_);
  return filter_matches_;
}

std::vector<TimelineView::Total> TimelineView::select_interval(double t0, double t1) {
  ensure_lanes();
  iv0_ = std::min(t0, t1), iv1_ = std::max(t0, t1);
  std::map<QString, Total> by;
  for (const Lane& l : lanes_)
    for (const Span& s : l.spans) {
      if (!s.kernel && !s.range) continue;
      if (s.t0 < iv0_ || s.t0 > iv1_) continue;  // as the reference's --interval: spans that start inside
      QString name = (s.kernel ? QString::fromStdString(session_->ui().kernel_events()[s.kernel - 1].device)
                               : QString::fromStdString(session_->ui().ranges()[s.range - 1].device)) +
                     "  " + span_name(s);
      Total& tt = by[name];
      tt.name = name, tt.ns += (double)(s.t1 - s.t0), tt.count++;
    }
  totals_.clear();
  for (auto& [k, v] : by) totals_.push_back(v);
  std::stable_sort(totals_.begin(), totals_.end(), [](const Total& a, const Total& b) { return a.ns > b.ns; });
  update();
  return totals_;
}

QString TimelineView::show_markers(const QString& start, const QString& end) {
  ensure_lanes();
  int64_t t0 = session_ ? session_->time_origin() : 0;
  auto find = [&](const QString& name) -> std::optional<double> {
    for (const MarkerRow& m : profile_.markers)
      if (QString::fromStdString(m.name) == name) return (double)(m.t - t0);
    return std::nullopt;
  };
  auto a = find(start);
  if (!a) return tr("no marker named \"%1\" (the trace has %2)").arg(start).arg(profile_.markers.size());
  std::optional<double> b = end.isEmpty() ? std::optional<double>(total_) : find(end);
  if (!b) return tr("no marker named \"%1\" (the trace has %2)").arg(end).arg(profile_.markers.size());
  double lo = std::min(*a, *b), hi = std::max(*a, *b), pad = std::max((hi - lo) * 0.05, 1000.0);
  show_range(lo - pad, hi + pad);
  select_interval(lo, hi);
  return {};
}

const BufferLife* TimelineView::buffer_at(QPoint p) const {
  ensure_lanes();
  for (size_t li = 0; li < lanes_.size(); li++) {
    const Lane& l = lanes_[li];
    if (l.mem < 0 || p.y() < l.y || p.y() >= l.y + l.h || p.x() < plot_left()) continue;
    if (l.expanded) return band_at(l, p);
    const MemoryLane& m = profile_.memory[(size_t)l.mem];
    int64_t t0 = session_ ? session_->time_origin() : 0;
    double t = left_ + (p.x() - plot_left()) * npp_ + (double)t0;
    // an alloc or free within 4 px wins; else the biggest buffer live at that time
    const BufferLife* best = nullptr;
    double best_d = 4 * npp_;
    for (const BufferLife& b : m.buffers)
      for (int64_t e : {b.t_alloc, b.t_free})
        if (double d = std::abs((double)e - t); d <= best_d) best_d = d, best = &b;
    if (best) return best;
    for (const BufferLife& b : m.buffers)
      if (b.t_alloc <= t && t <= b.t_free && (!best || b.nbytes > best->nbytes)) best = &b;
    return best;
  }
  return nullptr;
}

std::optional<QPoint> TimelineView::point_of_buffer(int64_t buffer, bool at_alloc) const {
  ensure_lanes();
  int64_t t0 = session_ ? session_->time_origin() : 0;
  for (const Lane& l : lanes_) {
    if (l.mem < 0) continue;
    for (const BufferLife& b : profile_.memory[(size_t)l.mem].buffers)
      if (b.buffer == buffer) {
        double x = x_of((double)((at_alloc ? b.t_alloc : b.t_free) - t0));
        if (x < plot_left() || x > width()) return std::nullopt;
        return QPoint((int)std::lround(x), l.y + l.h / 2);
      }
  }
  return std::nullopt;
}

void TimelineView::set_selection(const Selection& s) {
  sel_ = s;
  update();
}

void TimelineView::clamp_view() {
  ensure_lanes();
  int w = std::max(1, width() - plot_left() - 8);
  npp_ = std::clamp(npp_, 0.5 / 1.0, std::max(1.0, total_ * 1.2 / w));
  left_ = std::clamp(left_, -total_ * 0.1, total_);
}

void TimelineView::show_range(double t0, double t1) {
  ensure_lanes();
  whole_run_ = false;
  int w = std::max(1, width() - plot_left() - 8);
  npp_ = std::max(0.5, (t1 - t0) / w);
  left_ = t0;
  clamp_view();
  update();
}

std::vector<std::pair<QString, size_t>> TimelineView::lane_summary() const {
  ensure_lanes();
  std::vector<std::pair<QString, size_t>> r;
  for (const Lane& l : lanes_)
    r.emplace_back(l.name, l.mem >= 0 ? profile_.memory[(size_t)l.mem].steps.size() : l.spans.size());
  return r;
}

std::pair<double, double> TimelineView::visible_range() const {
  ensure_lanes();
  return {left_, left_ + std::max(1, width() - plot_left() - 8) * npp_};
}

void TimelineView::show_all() {
  ensure_lanes();  // (total_ is known once the lanes are built)
  show_range(0, total_ * 1.02);
  whole_run_ = true;
}

void TimelineView::reveal(int64_t step) {
  ensure_lanes();
  for (const Lane& l : lanes_)
    for (const Span& s : l.spans)
      if (s.step == step) {
        double d = std::max<double>(s.t1 - s.t0, 1000);
        return show_range(s.t0 - d, s.t1 + d);
      }
}

void TimelineView::reveal_kernel(size_t event) {
  ensure_lanes();
  for (size_t li = 0; li < kernel_lanes_; li++)
    for (const Span& s : lanes_[li].spans)
      if (s.kernel == (int64_t)event + 1) {  // the run and a few of its neighbours
        double d = std::max<double>(s.t1 - s.t0, 1000) * 4;
        return show_range(s.t0 - d, s.t1 + d);
      }
}

// the whole run stays in view through resizes until the user zooms or pans (the lanes are often built while the tab
// is hidden, at a width the widget does not have yet)
void TimelineView::resizeEvent(QResizeEvent*) {
  if (whole_run_)
    show_all();
  else
    clamp_view();
}

std::optional<TimelineView::Span> TimelineView::hit(QPoint p) const {
  ensure_lanes();
  if (p.x() < plot_left() || p.y() < axis_h()) return std::nullopt;
  for (size_t li = 0; li < lanes_.size(); li++) {
    int y = lane_y(li);
    if (p.y() < y || p.y() >= y + lane_h(li)) continue;
    if (lanes_[li].mem >= 0) return std::nullopt;
    const auto& spans = lanes_[li].spans;
    double t = left_ + (p.x() - plot_left()) * npp_;
    double slack = npp_ * 1.5;  // a span thinner than a pixel is still clickable
    auto it = std::upper_bound(spans.begin(), spans.end(), t + slack, [](double v, const Span& s) { return v < s.t0; });
    // candidates end at or after t - slack: look back over the few that could contain t
    std::optional<Span> best;
    double best_d = 1e300;
    for (auto j = it; j != spans.begin();) {
      --j;
      if (j->t1 < t - slack) break;
      double d = t < j->t0 ? j->t0 - t : t > j->t1 ? t - j->t1 : 0;
      if (d < best_d) best_d = d, best = *j;
      if (d == 0) break;
    }
    return best;
  }
  return std::nullopt;
}

std::optional<QPoint> TimelineView::point_of_kernel(size_t event) const {
  ensure_lanes();
  for (size_t li = 0; li < kernel_lanes_; li++)
    for (const Span& s : lanes_[li].spans)
      if (s.kernel == (int64_t)event + 1) {
        double x = x_of((s.t0 + s.t1) / 2.0);
        if (x < plot_left() || x > width()) return std::nullopt;
        return QPoint((int)x, lane_y(li) + kLaneH / 2);
      }
  return std::nullopt;
}

std::optional<QPoint> TimelineView::point_of(int64_t step) const {
  ensure_lanes();
  for (size_t li = 0; li < lanes_.size(); li++)
    for (const Span& s : lanes_[li].spans)
      if (s.step == step) {
        double x = x_of((s.t0 + s.t1) / 2.0);
        if (x < plot_left() || x > width()) return std::nullopt;
        return QPoint((int)x, lane_y(li) + kLaneH / 2);
      }
  return std::nullopt;
}

void TimelineView::paintEvent(QPaintEvent*) {
  ensure_lanes();
  auto t_start = std::chrono::steady_clock::now();
  QPainter p(this);
  p.fillRect(rect(), mark::canvas);
  QFont f = graph_font(false);
  p.setFont(f);
  QFontMetrics fm(f);
  int W = width(), pl = plot_left();
  if (lanes_.empty()) {
    p.setPen(QColor(0xa0, 0xa4, 0xb8));
    p.drawText(rect(), Qt::AlignCenter, session_ ? tr("The trace has no contexts or kernels.") : tr("No trace open."));
    return;
  }
  // axis
  double span_ns = (W - pl) * npp_;
  double step = std::pow(10.0, std::floor(std::log10(std::max(span_ns / 8, 1.0))));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (span_ns / (step * m) <= 10) {
      step *= m;
      break;
    }
  p.setPen(QColor(0x3a, 0x3d, 0x52));
  for (double t = std::ceil(left_ / step) * step; x_of(t) < W; t += step) {
    int x = (int)x_of(t);
    p.setPen(QColor(0x30, 0x33, 0x46));
    p.drawLine(x, kAxisH, x, height());
    p.setPen(QColor(0x90, 0x94, 0xa8));
    p.drawText(x + 3, kAxisH - 8, fmt_tick(t, step));
  }
  // lanes
  int ah = axis_h();
  p.setClipRect(QRect(pl, ah, W - pl, height() - ah));
  if (iv1_ > iv0_) {  // the selected interval, under the spans
    double a = std::max(x_of(iv0_), (double)pl), b = std::min(x_of(iv1_), (double)W);
    if (b > a) p.fillRect(QRectF(a, ah, std::max(b - a, 1.0), height() - ah), QColor(0x4a, 0x6a, 0xa8, 70));
  }
  for (size_t li = 0; li < lanes_.size(); li++) {
    int y = lane_y(li);
    if (y > height()) break;
    if (lanes_[li].mem >= 0) {
      if (lanes_[li].expanded)
        paint_bands(p, lanes_[li]);
      else
        paint_memory(p, lanes_[li]);
      continue;
    }
    const auto& spans = lanes_[li].spans;
    // first span that ends after the left edge (spans do not overlap, so ends are sorted too)
    auto it = std::lower_bound(spans.begin(), spans.end(), left_, [](const Span& s, double v) { return s.t1 < v; });
    double right = left_ + (W - pl) * npp_;
    while (it != spans.end() && it->t0 <= right) {
      double x0 = x_of(it->t0), x1 = x_of(it->t1);
      bool is_sel = (it->step && it->step == sel_.step) ||
                    (!it->step && !sel_.step && it->context && it->context == sel_.context);
      QColor c = it->kernel  ? QColor::fromRgb(kKernelColors[it->name_hash % 8])
                 : it->range ? QColor::fromRgb(kStepColors[it->name_hash % 12]).lighter(115)
                 : it->step  ? QColor::fromRgb(kStepColors[it->name_hash % 12])
                             : QColor(0x1b, 0x57, 0x45);
      if (it->dim) c = QColor(0x2a, 0x2c, 0x3a);
      // the kernels that used the clicked buffer
      bool uses_buffer = it->kernel && !sel_buffer_runs_.empty() &&
                         std::binary_search(sel_buffer_runs_.begin(), sel_buffer_runs_.end(), (size_t)it->kernel - 1);
      bool is_run = it->kernel && it->kernel - 1 == sel_run_;
      if (x1 - x0 < 1.0) {
        // sub-pixel: one column for everything that starts in this pixel, then jump past it
        int px = (int)std::floor(x0);
        p.fillRect(QRect(px, y, 1, kLaneH), c.lighter(130));
        double next_t = left_ + (px + 1 - pl) * npp_;
        auto next = std::lower_bound(it + 1, spans.end(), next_t, [](const Span& s, double v) { return s.t0 < v; });
        // the last span that starts in this column may reach past it (a long kernel right after short ones): it is
        // drawn, not merged away
        if (next - it > 1 && std::prev(next)->t1 > next_t) --next;
        it = next;
        if (is_sel) p.fillRect(QRect(px - 1, y - 2, 3, kLaneH + 4), QColor(0xc8, 0xcc, 0xd8));
        if (uses_buffer) p.fillRect(QRect(px - 1, y - 2, 3, kLaneH + 4), kBufferMark);
        if (is_run) p.fillRect(QRect(px - 2, y - 3, 5, kLaneH + 6), kRunMark);
        continue;
      }
      QRectF r(std::max(x0, (double)pl - 2), y, std::min(x1, (double)W + 2) - std::max(x0, (double)pl - 2), kLaneH);
      p.fillRect(r, c);
      if (hover_ && hover_->t0 == it->t0 && hover_->step == it->step && hover_->kernel == it->kernel)
        p.fillRect(r, QColor(255, 255, 255, 40));
      if (r.width() > 4) {
        p.setPen(QColor(0x10, 0x10, 0x18));
        p.drawLine(QPointF(r.left(), y), QPointF(r.left(), y + kLaneH));
      }
      if (r.width() > 28) {
        QString name = span_name(*it);
        p.setPen(it->dim ? QColor(0x70, 0x74, 0x88) : QColor(0xe8, 0xea, 0xf2));
        p.drawText(r.adjusted(4, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(name, Qt::ElideRight, (int)r.width() - 6));
      }
      if (uses_buffer) p.fillRect(QRectF(r.left(), y, r.width(), 4), kBufferMark);  // a bar on top, and the box
      if (is_sel || uses_buffer || is_run) {
        p.setPen(QPen(is_run ? kRunMark : uses_buffer ? kBufferMark : QColor(0xc8, 0xcc, 0xd8), is_run ? 3 : 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r.adjusted(1, 1, -1, -1));
      }
      ++it;
    }
  }
  p.setClipping(false);
  paint_markers(p);
  paint_totals(p);
  // lane names
  p.fillRect(QRect(0, 0, pl, height()), QColor(0x15, 0x16, 0x1f));
  p.setPen(QColor(0xb0, 0xb4, 0xc8));
  for (size_t li = 0; li < lanes_.size(); li++) {
    p.drawText(QRect(6, lane_y(li), pl - 10, std::min(lane_h(li), kLaneH)), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(lanes_[li].name, Qt::ElideRight, pl - 12));
    if (lanes_[li].mem >= 0) {  // the scale: the peak (the stacked view draws a byte axis of its own)
      p.setPen(QColor(0x80, 0x84, 0x98));
      p.drawText(QRect(6, lane_y(li) + kLaneH - 2, pl - 10, kLaneH), Qt::AlignVCenter | Qt::AlignLeft,
                 lanes_[li].expanded ? tr("▾ buffers")
                                     : tr("peak %1").arg(fmt_bytes((double)profile_.memory[(size_t)lanes_[li].mem].peak)));
      if (lanes_[li].expanded) paint_byte_axis(p, lanes_[li]);
      p.setPen(QColor(0xb0, 0xb4, 0xc8));
    }
  }
  p.setPen(QColor(0x80, 0x84, 0x98));
  p.drawText(QRect(6, 0, pl - 10, kAxisH), Qt::AlignVCenter, tr("%1 spans").arg(span_count()));
  paint_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count();
}

// a step chart of live bytes: per pixel column the most that was live in it, so a burst of thousands of allocations
// stays visible at any zoom; the peak is a dashed line with its value
void TimelineView::paint_memory(QPainter& p, const Lane& l) {
  const MemoryLane& m = profile_.memory[(size_t)l.mem];
  int W = width(), pl = plot_left();
  int64_t t0 = session_ ? session_->time_origin() : 0;
  int top = l.y + 3, bottom = l.y + l.h - 1;
  p.fillRect(QRect(pl, l.y, W - pl, l.h), QColor(0x1c, 0x1e, 0x2a));
  if (m.peak <= 0 || m.steps.empty()) return;
  auto y_of = [&](int64_t bytes) { return bottom - (double)bytes / (double)m.peak * (bottom - top); };
  // the column's maximum, walking the steps that fall on screen
  double right = left_ + (W - pl) * npp_;
  auto first = std::upper_bound(m.steps.begin(), m.steps.end(), (int64_t)left_ + t0,
                                [](int64_t v, const std::pair<int64_t, int64_t>& s) { return v < s.first; });
  int64_t live = first == m.steps.begin() ? 0 : std::prev(first)->second;
  QPolygonF poly;
  poly << QPointF(pl, bottom) << QPointF(pl, y_of(live));
  int col = pl;
  int64_t col_max = live;
  for (auto it = first; it != m.steps.end() && (double)(it->first - t0) <= right; ++it) {
    int x = (int)std::floor(x_of((double)(it->first - t0)));
    if (x != col) {
      poly << QPointF(col, y_of(col_max)) << QPointF(x, y_of(col_max)) << QPointF(x, y_of(live));
      col = x, col_max = live;
    }
    live = it->second;
    col_max = std::max(col_max, live);
  }
  poly << QPointF(col, y_of(col_max)) << QPointF(col + 1, y_of(col_max)) << QPointF(col + 1, y_of(live))
       << QPointF(W, y_of(live)) << QPointF(W, bottom);
  p.setPen(QPen(QColor(0x6c, 0xa8, 0xd8), 1));
  p.setBrush(QColor(0x3a, 0x6a, 0x98, 150));
  p.drawPolygon(poly);
  // the clicked buffer's life
  if (sel_buffer_)
    for (const BufferLife& b : m.buffers)
      if (&b == sel_buffer_) {
        double a = x_of((double)(b.t_alloc - t0)), e = x_of((double)(b.t_free - t0));
        p.fillRect(QRectF(a, l.y, std::max(e - a, 2.0), l.h), QColor(0xff, 0xc8, 0x40, 90));
      }
  // the peak
  double px = x_of((double)(m.t_peak - t0));
  p.setPen(QPen(QColor(0xe0, 0x80, 0x60), 1, Qt::DashLine));
  p.drawLine(QPointF(pl, top), QPointF(W, top));
  if (px >= pl && px <= W) {
    p.setBrush(QColor(0xe0, 0x80, 0x60));
    p.setPen(Qt::NoPen);
    p.drawEllipse(QPointF(px, top), 3, 3);
    p.setPen(QColor(0xf0, 0xb0, 0x90));
    QString label = tr("peak %1").arg(fmt_bytes((double)m.peak));
    int lw = QFontMetrics(p.font()).horizontalAdvance(label);
    // right of the dot, or left of it when the dot is near the right edge
    p.drawText(QPointF(px + 6 + lw > W ? px - 6 - lw : px + 6, top + 11), label);
  }
}

void TimelineView::paint_markers(QPainter& p) {
  int64_t t0 = session_ ? session_->time_origin() : 0;
  QFontMetrics fm(p.font());
  int last_label_end = -1000;
  for (const MarkerRow& m : profile_.markers) {
    double x = x_of((double)(m.t - t0));
    if (x < plot_left() || x > width()) continue;
    QColor c = marker_color(m.color);
    p.setPen(QPen(c, 1, Qt::DashLine));
    p.drawLine(QPointF(x, kAxisH), QPointF(x, height()));
    QString name = QString::fromStdString(m.name);
    int w = fm.horizontalAdvance(name) + 6;
    if (x + 2 < last_label_end) continue;  // labels do not overlap: the line alone says where
    QRectF box(x + 2, kAxisH, w, kMarkerRowH);  // in their own row under the tick labels
    p.fillRect(box, QColor(0x15, 0x16, 0x1f, 220));
    p.setPen(c.lighter(140));
    p.drawText(box, Qt::AlignCenter, name);
    last_label_end = (int)(x + 2 + w);
  }
}

void TimelineView::paint_totals(QPainter& p) {
  if (iv1_ <= iv0_) return;
  p.save();
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(p.font().pointSizeF());
  p.setFont(mono);  // the columns line up
  QFontMetrics fm(mono);
  double total = 0;
  for (const Total& t : totals_) total += t.ns;
  QStringList rows;
  rows << tr("%1 .. %2 (%3): %4 spans").arg(fmt_ns(iv0_), fmt_ns(iv1_), fmt_ns(iv1_ - iv0_)).arg([&] {
    size_t n = 0;
    for (const Total& t : totals_) n += t.count;
    return n;
  }());
  for (size_t i = 0; i < totals_.size() && i < 10; i++)
    rows << QString("%1  %2  %3×  %4%")
                .arg(totals_[i].name.size() > 44 ? totals_[i].name.left(20) + "…" + totals_[i].name.right(23)
                                                 : totals_[i].name,
                     -44)
                .arg(fmt_ns(totals_[i].ns), 11)
                .arg(totals_[i].count, 5)
                .arg(total > 0 ? 100.0 * totals_[i].ns / total : 0.0, 5, 'f', 1);
  if (totals_.size() > 10) rows << tr("... %1 more names").arg(totals_.size() - 10);
  int w = 0;
  for (const QString& r : rows) w = std::max(w, fm.horizontalAdvance(r));
  QRect box(width() - w - 24, height() - (int)rows.size() * fm.height() - 20, w + 16,
            (int)rows.size() * fm.height() + 12);
  p.fillRect(box, QColor(0x15, 0x16, 0x1f, 235));
  p.setPen(QColor(0x4a, 0x6a, 0xa8));
  p.setBrush(Qt::NoBrush);
  p.drawRect(box);
  p.setPen(QColor(0xd8, 0xdc, 0xe8));
  for (int i = 0; i < rows.size(); i++)
    p.drawText(box.left() + 8, box.top() + 6 + fm.ascent() + i * fm.height(), rows[i]);
  p.restore();
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  double steps = e->angleDelta().y() / 120.0;
  double x = e->position().x();
  double t = left_ + (x - plot_left()) * npp_;
  whole_run_ = false;
  npp_ /= std::pow(1.25, steps);
  clamp_view();
  left_ = t - (x - plot_left()) * npp_;
  clamp_view();
  update();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  pressed_ = true;
  dragged_ = false;
  press_ = e->pos();
  interval_drag_ = (e->modifiers() & Qt::ShiftModifier) && e->pos().x() >= plot_left();
  if (interval_drag_) {
    double t = left_ + (e->pos().x() - plot_left()) * npp_;
    iv0_ = iv1_ = t;
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  if (pressed_ && interval_drag_) {
    double t = left_ + (e->pos().x() - plot_left()) * npp_;
    double a = left_ + (press_.x() - plot_left()) * npp_;
    select_interval(a, t);
    return;
  }
  if (pressed_) {
    QPoint d = e->pos() - press_;
    if (dragged_ || d.manhattanLength() > 3) {
      dragged_ = true;
      left_ -= d.x() * npp_;
      whole_run_ = false;
      press_ = e->pos();
      clamp_view();
      update();
    }
    return;
  }
  if (const BufferLife* b = buffer_at(e->pos())) {
    double t = left_ + (e->pos().x() - plot_left()) * npp_ + (double)session_->time_origin();
    QString tip = buffer_tooltip(*b, t);
    QToolTip::showText(e->globalPosition().toPoint(), tip, this);
    return;
  }
  auto h = hit(e->pos());
  bool changed = h.has_value() != hover_.has_value() ||
                 (h && (h->t0 != hover_->t0 || h->step != hover_->step || h->kernel != hover_->kernel));
  hover_ = h;
  if (changed) update();
  if (h && session_) {
    Trace& t = session_->ui();
    QString tip;
    if (h->kernel) {
      tip = kernel_tooltip(t, t.kernel_events()[h->kernel - 1]);
    } else if (h->range) {
      const RangeRow& r = t.ranges()[h->range - 1];
      tip = tr("%1 on %2\n%3 at %4")
                .arg(QString::fromStdString(r.name), QString::fromStdString(r.device), fmt_ns(h->t1 - h->t0),
                     fmt_ns(h->t0));
    } else if (h->step) {
      const StepRow& s = t.step(h->step);
      tip = tr("%1\nstep %2, %3 matches\n%4 at %5\n%6:%7")
                .arg(QString::fromStdString(s.name))
                .arg(s.id)
                .arg(s.n_matches)
                .arg(fmt_ns(h->t1 - h->t0))
                .arg(fmt_ns(h->t0))
                .arg(QString::fromStdString(s.file))
                .arg(s.line);
    } else {
      tip = tr("%1\ncontext %2\n%3")
                .arg(QString::fromStdString(t.context(h->context).name))
                .arg(h->context)
                .arg(fmt_ns(h->t1 - h->t0));
    }
    QToolTip::showText(e->globalPosition().toPoint(), tip, this);
  } else {
    QToolTip::hideText();
  }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
  if (!pressed_) return;
  pressed_ = false;
  if (interval_drag_) {
    interval_drag_ = false;
    if (std::abs(e->pos().x() - press_.x()) < 3) iv0_ = iv1_ = 0, totals_.clear(), update();  // a click clears it
    return;
  }
  if (dragged_) return;
  if (e->pos().x() < plot_left()) {  // a memory lane's name: its buffers stacked, or its live bytes again
    for (size_t li = 0; li < lanes_.size(); li++)
      if (lanes_[li].mem >= 0 && e->pos().y() >= lanes_[li].y && e->pos().y() < lanes_[li].y + lanes_[li].h)
        set_memory_expanded((size_t)lanes_[li].mem, !lanes_[li].expanded);
    return;
  }
  if (const BufferLife* b = buffer_at(e->pos())) {
    mark_runs_of(b == sel_buffer_ ? nullptr : b);
    update();
    emit buffer_marked(sel_buffer_ ? sel_buffer_->buffer : 0);
    return;
  }
  if (auto h = hit(e->pos())) {
    if (h->kernel || sel_run_ >= 0) {  // a run, or a span that is not one (the run is let go)
      sel_run_ = h->kernel - 1;
      update();
      emit run_selected(sel_run_);
    }
    if ((h->kernel && !h->context) || h->range) return;  // no codegen recorded (PROFILE=1 only), a host range
    sel_ = {h->context, h->step, 0};
    update();
    emit selected(sel_);
  }
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* e) {
  if (auto h = hit(e->pos()); h && h->kernel && h->context) emit open_kernel(h->context);
}

bool TimelineView::clear_marks() {
  if (!(iv1_ > iv0_ || sel_buffer_)) return false;
  bool had_buffer = sel_buffer_ != nullptr;
  iv0_ = iv1_ = 0, totals_.clear(), sel_buffer_ = nullptr, sel_buffer_runs_.clear();
  update();
  if (had_buffer) emit buffer_marked(0);
  return true;
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
  if (e->key() == Qt::Key_Escape && clear_marks()) return;
  if (e->key() == Qt::Key_Left || e->key() == Qt::Key_Right || e->key() == Qt::Key_Home || e->key() == Qt::Key_End) {
    step_run(e->key());
    return;
  }
  if ((e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter) && sel_.context &&
      !session_->ui().context(sel_.context).steps.empty()) {
    emit open_kernel(sel_.context);
    return;
  }
  QWidget::keyPressEvent(e);
}


void TimelineView::mark_runs_of(const BufferLife* b) {
  sel_buffer_ = b;
  sel_buffer_runs_.clear();
  if (!b || !session_) return;
  std::unordered_map<int64_t, size_t> index;
  const auto& evs = session_->ui().kernel_events();
  for (size_t i = 0; i < evs.size(); i++) index[evs[i].id] = i;
  for (const BufferUser& u : b->users)
    if (auto it = index.find(u.kernel_event); it != index.end()) sel_buffer_runs_.push_back(it->second);
  std::sort(sel_buffer_runs_.begin(), sel_buffer_runs_.end());
}

const BufferLife* TimelineView::buffer_life(int64_t buffer) const {
  ensure_lanes();
  for (const MemoryLane& m : profile_.memory)
    for (const BufferLife& b : m.buffers)
      if (b.buffer == buffer) return &b;
  return nullptr;
}

bool TimelineView::mark_buffer(int64_t buffer) {
  const BufferLife* b = buffer ? buffer_life(buffer) : nullptr;
  if (buffer && !b) return false;
  mark_runs_of(b);
  if (b) {  // its whole life in view, unless it already is
    int64_t t0 = session_->time_origin();
    double a = (double)(b->t_alloc - t0), z = (double)(b->t_free - t0);
    auto [l, r] = visible_range();
    if (a < l || z > r) {
      double pad = std::max((z - a) * 0.05, 1000.0);
      show_range(a - pad, z + pad);
    }
  }
  update();
  emit buffer_marked(buffer);
  return true;
}

// "E_2 write@data0 ×10": a buffer a JIT uses every step lists each use once, counted, in first-use order
QString TimelineView::buffer_tooltip(const BufferLife& b, double t) const {
  int64_t t0 = session_ ? session_->time_origin() : 0;
  const MemoryLane* lane = nullptr;
  for (const MemoryLane& m : profile_.memory)
    if (!m.buffers.empty() && &b >= &m.buffers.front() && &b <= &m.buffers.back()) lane = &m;
  int64_t live = 0;
  if (lane)
    for (const auto& [ts, bytes] : lane->steps)
      if ((double)ts <= t) live = bytes;
  QString tip = tr("%1 memory: %2 live (peak %3)\n\nbuffer %4: %5 × %6 (%7)\nallocated %8, %9")
                    .arg(QString::fromStdString(lane ? lane->device : ""), fmt_bytes((double)live),
                         fmt_bytes(lane ? (double)lane->peak : 0.0))
                    .arg(b.buffer)
                    .arg(QString::fromStdString(b.dtype))
                    .arg(b.size)
                    .arg(fmt_bytes((double)b.nbytes), fmt_ns((double)(b.t_alloc - t0)),
                         b.freed ? tr("freed %1").arg(fmt_ns((double)(b.t_free - t0))) : tr("live at the end"));
  std::vector<std::pair<QString, size_t>> uses;
  std::unordered_map<QString, size_t> at;
  for (const BufferUser& u : b.users) {
    QString key = QString("%1 %2@data%3").arg(QString::fromStdString(u.name), mode_name(u.mode)).arg(u.num);
    auto [it, fresh] = at.emplace(key, uses.size());
    if (fresh) uses.emplace_back(key, 0);
    uses[it->second].second++;
  }
  for (size_t i = 0; i < uses.size() && i < 8; i++)
    tip += "\n  " + uses[i].first + (uses[i].second > 1 ? QString(" ×%1").arg(uses[i].second) : QString());
  if (uses.size() > 8) tip += tr("\n  ... %1 more kernels").arg(uses.size() - 8);
  if (b.users.empty())
    tip += tr("\nno kernel used it");
  else
    tip += b.users.size() == 1 ? tr("\n1 run used it; click: mark it")
                               : tr("\n%1 runs used it; click: mark them").arg(b.users.size());
  return tip;
}

size_t TimelineView::lane_of_run(int64_t event) const {
  ensure_lanes();
  for (size_t li = 0; li < kernel_lanes_; li++)
    for (const Span& s : lanes_[li].spans)
      if (s.kernel == event + 1) return li;
  return kernel_lanes_;
}

void TimelineView::select_run(int64_t event) {
  ensure_lanes();
  size_t li = event >= 0 ? lane_of_run(event) : kernel_lanes_;
  sel_run_ = li < kernel_lanes_ ? event : -1;
  if (sel_run_ >= 0) {
    for (const Span& s : lanes_[li].spans)
      if (s.kernel == event + 1) {
        auto [l, r] = visible_range();
        if (s.t1 < l || s.t0 > r) {  // off screen: centre it at the same zoom
          double w = r - l, mid = (s.t0 + s.t1) / 2.0;
          if (w < (double)(s.t1 - s.t0)) w = (double)(s.t1 - s.t0) * 3;
          show_range(mid - w / 2, mid + w / 2);
        }
        break;
      }
    const ProgramRow* prg = nullptr;
    const KernelEventRow& k = session_->ui().kernel_events()[(size_t)sel_run_];
    if (k.program) prg = session_->ui().program(k.program);
    if (prg && prg->context) sel_ = {prg->context, 0, 0};
  }
  update();
  emit run_selected(sel_run_);
}

bool TimelineView::step_run(int key) {
  ensure_lanes();
  if (kernel_lanes_ == 0) return false;
  size_t li = sel_run_ >= 0 ? lane_of_run(sel_run_) : kernel_lanes_;
  if (li >= kernel_lanes_) {  // nothing selected: the first run in view on the first kernel lane that has one
    auto [l, r] = visible_range();
    for (size_t i = 0; i < kernel_lanes_; i++)
      for (const Span& s : lanes_[i].spans)
        if (s.t1 >= l && s.t0 <= r) {
          select_run(s.kernel - 1);
          return true;
        }
    return false;
  }
  const auto& spans = lanes_[li].spans;
  size_t at = 0;
  while (at < spans.size() && spans[at].kernel != sel_run_ + 1) at++;
  size_t to = at;
  if (key == Qt::Key_Home) to = 0;
  if (key == Qt::Key_End) to = spans.size() - 1;
  if (key == Qt::Key_Left) {
    if (at == 0) return false;
    to = at - 1;
  }
  if (key == Qt::Key_Right) {
    if (at + 1 >= spans.size()) return false;
    to = at + 1;
  }
  if (to == at) return false;
  select_run(spans[to].kernel - 1);
  return true;
}

void TimelineView::fit() {
  ensure_lanes();
  double lo = total_, hi = 0;
  for (const Lane& l : lanes_)
    if (!l.spans.empty()) lo = std::min(lo, (double)l.spans.front().t0), hi = std::max(hi, (double)l.spans.back().t1);
  int64_t t0 = session_ ? session_->time_origin() : 0;
  for (const MemoryLane& m : profile_.memory)
    if (!m.steps.empty())
      lo = std::min(lo, (double)(m.steps.front().first - t0)), hi = std::max(hi, (double)(m.steps.back().first - t0));
  if (hi <= lo) return show_all();
  double pad = (hi - lo) * 0.01;
  show_range(lo - pad, hi + pad);
}

void TimelineView::zoom_by(double factor) {
  auto [l, r] = visible_range();
  double mid = (l + r) / 2, half = (r - l) / 2 / factor;
  show_range(mid - half, mid + half);
}

bool TimelineView::memory_expanded(size_t mem_lane) const {
  ensure_lanes();
  for (const Lane& l : lanes_)
    if (l.mem == (int)mem_lane) return l.expanded;
  return false;
}

void TimelineView::set_memory_expanded(size_t mem_lane, bool on) {
  ensure_lanes();
  for (Lane& l : lanes_)
    if (l.mem == (int)mem_lane) l.expanded = on;
  if (on) build_bands(mem_lane);
  place_lanes();
  update();
}

// The stacked view, as the reference's memory graph: the live buffers stand on each other in allocation order, so a
// buffer's band keeps its height (its bytes) and sinks when one below it is freed; the top of the stack is the live
// bytes of the step chart.
void TimelineView::build_bands(size_t mi) const {
  bands_.resize(profile_.memory.size());
  bands_too_many_.resize(profile_.memory.size(), 0);
  std::vector<Band>& out = bands_[mi];
  if (!out.empty() || bands_too_many_[mi]) return;
  const MemoryLane& m = profile_.memory[mi];
  struct Ev {
    int64_t t;
    bool alloc;
    size_t b;
  };
  std::vector<Ev> evs;
  for (size_t i = 0; i < m.buffers.size(); i++) {
    evs.push_back({m.buffers[i].t_alloc, true, i});
    if (m.buffers[i].freed) evs.push_back({m.buffers[i].t_free, false, i});
  }
  // by time; at one time frees before allocs (the step chart's order), allocs in buffer order
  std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
    return a.t != b.t ? a.t < b.t : a.alloc != b.alloc ? !a.alloc : false;
  });
  out.resize(m.buffers.size());
  for (size_t i = 0; i < m.buffers.size(); i++) out[i].buffer = &m.buffers[i];
  std::vector<size_t> live;  // the stack, bottom first
  int64_t top = 0;
  size_t points = 0;
  for (const Ev& e : evs) {
    if (e.alloc) {
      out[e.b].offsets.emplace_back(e.t, top);
      live.push_back(e.b);
      top += m.buffers[e.b].nbytes;
      points++;
      continue;
    }
    auto it = std::find(live.begin(), live.end(), e.b);
    if (it == live.end()) continue;
    int64_t gone = m.buffers[e.b].nbytes;
    for (auto j = it + 1; j != live.end(); ++j) out[*j].offsets.emplace_back(e.t, out[*j].offsets.back().second - gone);
    points += (size_t)(live.end() - it);
    live.erase(it);
    top -= gone;
    if (points > kMaxBandPoints) {
      out.clear();
      bands_too_many_[mi] = 1;
      return;
    }
  }
}

const BufferLife* TimelineView::band_at(const Lane& l, QPoint p) const {
  build_bands((size_t)l.mem);
  const MemoryLane& m = profile_.memory[(size_t)l.mem];
  if (m.peak <= 0) return nullptr;
  int64_t t0 = session_ ? session_->time_origin() : 0;
  double t = left_ + (p.x() - plot_left()) * npp_ + (double)t0;
  int top = l.y + 3, bottom = l.y + l.h - 1;
  double bytes = (double)(bottom - p.y()) / (bottom - top) * (double)m.peak;
  double slack = (double)m.peak / (bottom - top);  // a band thinner than a pixel is still hit within one
  const BufferLife* best = nullptr;
  for (const Band& b : bands_[(size_t)l.mem]) {
    if (b.offsets.empty() || t < (double)b.buffer->t_alloc || t > (double)b.buffer->t_free) continue;
    auto it = std::upper_bound(b.offsets.begin(), b.offsets.end(), t,
                               [](double v, const std::pair<int64_t, int64_t>& o) { return v < (double)o.first; });
    if (it == b.offsets.begin()) continue;
    double lo = (double)std::prev(it)->second, hi = lo + (double)b.buffer->nbytes;
    if (bytes >= lo && bytes < hi) return b.buffer;
    if (bytes >= lo - slack && bytes < hi + slack && !best) best = b.buffer;
  }
  return best;
}

void TimelineView::paint_byte_axis(QPainter& p, const Lane& l) {
  const MemoryLane& m = profile_.memory[(size_t)l.mem];
  if (m.peak <= 0) return;
  int top = l.y + 3, bottom = l.y + l.h - 1, pl = plot_left();
  p.save();
  p.setPen(QColor(0x80, 0x84, 0x98));
  QFontMetrics fm(p.font());
  for (int i = 0; i <= 4; i++) {
    double y = bottom - (bottom - top) * i / 4.0;
    QString label = fmt_bytes((double)m.peak * i / 4.0);
    p.drawLine(QPointF(pl - 4, y), QPointF(pl, y));
    if (i > 0) p.drawText(QPointF(pl - 8 - fm.horizontalAdvance(label), y + fm.ascent() / 2.0 - 1), label);
  }
  p.restore();
}

void TimelineView::paint_bands(QPainter& p, const Lane& l) {
  size_t mi = (size_t)l.mem;
  build_bands(mi);
  const MemoryLane& m = profile_.memory[mi];
  int W = width(), pl = plot_left();
  int top = l.y + 3, bottom = l.y + l.h - 1;
  p.fillRect(QRect(pl, l.y, W - pl, l.h), QColor(0x1c, 0x1e, 0x2a));
  if (bands_too_many_[mi]) {
    p.setPen(QColor(0xa0, 0xa4, 0xb8));
    p.drawText(QRect(pl, l.y, W - pl, l.h), Qt::AlignCenter,
               tr("%1 buffers: too many to stack; click the lane's name for the live bytes").arg(m.buffers.size()));
    return;
  }
  if (m.peak <= 0) return;
  int64_t t0 = session_ ? session_->time_origin() : 0;
  double scale = (double)(bottom - top) / (double)m.peak;
  double right = left_ + (W - pl) * npp_ + (double)t0, leftt = left_ + (double)t0;
  static const QRgb kBand[] = {0x2f6f9f, 0x3b7f8c, 0x35628a, 0x2e7a6a, 0x4a6a9a, 0x3a8a9a, 0x2a5a7a, 0x467a8a};
  for (const Band& b : bands_[mi]) {
    const BufferLife& bl = *b.buffer;
    if ((double)bl.t_free < leftt || (double)bl.t_alloc > right || b.offsets.empty()) continue;
    bool marked = &bl == sel_buffer_;
    QColor c = marked ? QColor(0xff, 0xc8, 0x40) : QColor::fromRgb(kBand[(size_t)bl.buffer % 8]);
    for (size_t i = 0; i < b.offsets.size(); i++) {
      double a = (double)b.offsets[i].first, z = i + 1 < b.offsets.size() ? (double)b.offsets[i + 1].first
                                                                          : (double)bl.t_free;
      if (z < leftt || a > right) continue;
      double x0 = std::max(x_of(a - (double)t0), (double)pl), x1 = std::min(x_of(z - (double)t0), (double)W);
      double y1 = bottom - (double)b.offsets[i].second * scale, h = (double)bl.nbytes * scale;
      QRectF r(x0, y1 - h, std::max(x1 - x0, 1.0), std::max(h, 1.0));
      p.fillRect(r, c);
      if (h >= 3 && r.width() >= 3) {  // an edge between stacked buffers
        p.setPen(QColor(0x1c, 0x1e, 0x2a));
        p.drawLine(QPointF(r.left(), r.top()), QPointF(r.right(), r.top()));
      }
      if (h >= 12 && r.width() > 60) {
        p.setPen(QColor(0xe8, 0xea, 0xf2));
        QString label = QString("%1 %2").arg(bl.buffer).arg(fmt_bytes((double)bl.nbytes));
        p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   QFontMetrics(p.font()).elidedText(label, Qt::ElideRight, (int)r.width() - 5));
      }
    }
  }
}

}  // namespace tv
