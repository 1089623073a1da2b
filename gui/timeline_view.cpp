#include "gui/timeline_view.h"

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
constexpr int kAxisH = 24, kLaneH = 20, kLaneGap = 2, kGroupGap = 8;
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
}  // namespace

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
  show_all();
}

void TimelineView::set_selection(const Selection& s) {
  sel_ = s;
  update();
}

int TimelineView::lane_y(size_t lane) const { return kAxisH + 4 + (int)lane * (kLaneH + kLaneGap); }

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
  for (const Lane& l : lanes_) r.emplace_back(l.name, l.spans.size());
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
      if (s.kernel == (int64_t)event + 1) {
        double d = std::max<double>(s.t1 - s.t0, 1000);
        return show_range(s.t0 - d, s.t1 + d);
      }
}

// the whole run stays in view through resizes until the user zooms or pans (the lanes are often built while the tab
// is hidden, at a width the widget does not have yet)
void TimelineView::resizeEvent(QResizeEvent*) {
  if (whole_run_) show_all();
  else clamp_view();
}

std::optional<TimelineView::Span> TimelineView::hit(QPoint p) const {
  ensure_lanes();
  if (p.x() < plot_left() || p.y() < kAxisH) return std::nullopt;
  for (size_t li = 0; li < lanes_.size(); li++) {
    int y = lane_y(li);
    if (p.y() < y || p.y() >= y + kLaneH) continue;
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
  p.setClipRect(QRect(pl, kAxisH, W - pl, height() - kAxisH));
  for (size_t li = 0; li < lanes_.size(); li++) {
    int y = lane_y(li);
    if (y > height()) break;
    const auto& spans = lanes_[li].spans;
    // first span that ends after the left edge (spans do not overlap, so ends are sorted too)
    auto it = std::lower_bound(spans.begin(), spans.end(), left_, [](const Span& s, double v) { return s.t1 < v; });
    double right = left_ + (W - pl) * npp_;
    while (it != spans.end() && it->t0 <= right) {
      double x0 = x_of(it->t0), x1 = x_of(it->t1);
      bool is_sel = (it->step && it->step == sel_.step) ||
                    (!it->step && !sel_.step && it->context && it->context == sel_.context);
      QColor c = it->kernel ? QColor::fromRgb(kKernelColors[it->name_hash % 8])
                 : it->step ? QColor::fromRgb(kStepColors[it->name_hash % 12])
                            : QColor(0x1b, 0x57, 0x45);
      if (x1 - x0 < 1.0) {
        // sub-pixel: one column for everything that starts in this pixel, then jump past it
        int px = (int)std::floor(x0);
        p.fillRect(QRect(px, y, 1, kLaneH), c.lighter(130));
        double next_t = left_ + (px + 1 - pl) * npp_;
        it = std::lower_bound(it + 1, spans.end(), next_t, [](const Span& s, double v) { return s.t0 < v; });
        if (is_sel) p.fillRect(QRect(px - 1, y - 2, 3, kLaneH + 4), Qt::white);
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
        QString name;
        if (session_) {
          Trace& t = session_->ui();
          name = QString::fromStdString(it->kernel ? t.kernel_events()[it->kernel - 1].name
                                        : it->step ? t.step(it->step).name
                                                   : t.context(it->context).name);
        }
        p.setPen(QColor(0xe8, 0xea, 0xf2));
        p.drawText(r.adjusted(4, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(name, Qt::ElideRight, (int)r.width() - 6));
      }
      if (is_sel) {
        p.setPen(QPen(Qt::white, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r.adjusted(1, 1, -1, -1));
      }
      ++it;
    }
  }
  p.setClipping(false);
  // lane names
  p.fillRect(QRect(0, 0, pl, height()), QColor(0x15, 0x16, 0x1f));
  p.setPen(QColor(0xb0, 0xb4, 0xc8));
  for (size_t li = 0; li < lanes_.size(); li++)
    p.drawText(QRect(6, lane_y(li), pl - 10, kLaneH), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(lanes_[li].name, Qt::ElideRight, pl - 12));
  p.setPen(QColor(0x80, 0x84, 0x98));
  p.drawText(QRect(6, 0, pl - 10, kAxisH), Qt::AlignVCenter, tr("%1 spans").arg(span_count()));
  paint_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count();
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
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
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
  if (dragged_) return;
  if (auto h = hit(e->pos())) {
    if (h->kernel && !h->context) return;  // a kernel whose codegen was not recorded (PROFILE=1 only)
    sel_ = {h->context, h->step, 0};
    update();
    emit selected(sel_);
  }
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* e) {
  if (auto h = hit(e->pos()); h && h->kernel && h->context) emit open_kernel(h->context);
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
  if ((e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter) && sel_.context &&
      !session_->ui().context(sel_.context).steps.empty()) {
    emit open_kernel(sel_.context);
    return;
  }
  QWidget::keyPressEvent(e);
}

}  // namespace tv
