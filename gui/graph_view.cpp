#include "gui/graph_view.h"

#include "viz/reader/argfmt.h"

#include <QContextMenuEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QTimer>
#include <QWheelEvent>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unordered_set>

#include "gui/graph_items.h"
#include "gui/op_style.h"

namespace tv {

namespace {
// bounding boxes of the groups of rectangles that touch one another (union-find)
std::vector<QRectF> cluster_bounds(const std::vector<QRectF>& rects) {
  std::vector<size_t> parent(rects.size());
  for (size_t i = 0; i < parent.size(); i++) parent[i] = i;
  auto find = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (size_t i = 0; i < rects.size(); i++)
    for (size_t j = i + 1; j < rects.size(); j++)
      if (rects[i].adjusted(-12, -12, 12, 12).intersects(rects[j])) parent[find(i)] = find(j);
  std::unordered_map<size_t, QRectF> box;
  for (size_t i = 0; i < rects.size(); i++) box[find(i)] = box[find(i)].united(rects[i]);
  std::vector<QRectF> out;
  for (auto& [root, r] : box) out.push_back(r);
  return out;
}
constexpr int kFooterH = 22;  // the strip under the graph
constexpr double kMaxFitScale = 1.25, kMinScale = 0.01, kMaxScale = 8, kMinReadableScale = 0.45;
}  // namespace

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
  setScene(new QGraphicsScene(this));
  // no BSP index: a new step replaces all items (the index would be rebuilt on the first paint: 100+ ms for a
  // 1,000-node frame), and while stepping, with the items kept, a BSP index saved 1-3 ms of a 5,000-node frame's
  // paint but added ~5 ms to updating the scene (the long edges of a fan-in sit in most of its leaves).
  // DontSavePainterState made no measurable difference either.
  scene()->setItemIndexMethod(QGraphicsScene::NoIndex);
  setBackgroundBrush(mark::canvas);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  // Every update repaints the whole view. With a part of it (SmartViewportUpdate, or one bounding rectangle), the
  // paint runs under a clip smaller than the window, and Qt draws each antialiased line of it pixel by pixel against
  // that clip: a 1,300-pixel edge took 1.4 ms instead of 0.04, and frames of a big step whose edges reach across it
  // 15-26 ms instead of 5-9 (a training trace's 17,913-match step: the longest stall while stepping 45 -> 21-25 ms).
  setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
  setDragMode(QGraphicsView::NoDrag);
  setFocusPolicy(Qt::StrongFocus);
  setFrameShape(QFrame::NoFrame);

  // the strip under the graph: the legend on the left, the frame's counts on the right (elided when the view is narrow,
  // as a compare pane is)
  setViewportMargins(0, 0, 0, kFooterH);
  footer_ = new QWidget(this);
  footer_->setAutoFillBackground(true);
  footer_->setStyleSheet("background:#15161f;");
  {
    auto* fl = new QHBoxLayout(footer_);
    fl->setContentsMargins(8, 0, 8, 0);
    fl->setSpacing(12);
    footer_legend_ = new QLabel(footer_);
    footer_legend_->setTextFormat(Qt::RichText);
    auto box = [](const QColor& c, const QString& t, bool dashed) {
      return QString("<span style='color:%1'>%2</span>&nbsp;<span style='color:#b0b4c8'>%3</span>")
          .arg(c.name(), dashed ? QString("▭") : QString("■"), t);
    };
    footer_legend_->setText(box(mark::added, tr("added"), false) + "&nbsp;&nbsp; " +
                            box(mark::changed, tr("rebuilt"), false) + "&nbsp;&nbsp; " +
                            box(mark::removed, tr("removed"), true) + "&nbsp;&nbsp; " +
                            box(mark::match_box, tr("match"), true));
    footer_info_ = new QLabel(footer_);
    footer_info_->setStyleSheet("color:#80849a;");
    footer_info_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    footer_info_->setMinimumWidth(0);
    footer_info_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    fl->addWidget(footer_legend_);
    fl->addWidget(footer_info_, 1);
  }
  overlay_ = new QWidget(viewport());
  overlay_->setAutoFillBackground(true);
  overlay_->setStyleSheet("background:#2a2c3c; color:#dde; border-radius:4px;");
  auto* lay = new QHBoxLayout(overlay_);
  lay->setContentsMargins(10, 6, 10, 6);
  auto* bar = new QProgressBar(overlay_);
  bar->setRange(0, 0);
  bar->setFixedWidth(90);
  bar->setFixedHeight(10);
  bar->setTextVisible(false);
  overlay_label_ = new QLabel(overlay_);
  auto* cancel = new QPushButton(tr("Cancel (Esc)"), overlay_);
  cancel->setToolTip(tr("Stop waiting for Graphviz and show a simple layered layout"));
  connect(cancel, &QPushButton::clicked, this, &GraphView::cancel_requested);
  lay->addWidget(bar);
  lay->addWidget(overlay_label_);
  lay->addWidget(cancel);
  overlay_->hide();
  overlay_delay_ = new QTimer(this);
  overlay_delay_->setSingleShot(true);
  connect(overlay_delay_, &QTimer::timeout, this, [this] {
    overlay_->show();
    place_overlay();
  });
}

void GraphView::set_progress(const QString& text) {
  if (text.isEmpty()) {
    overlay_delay_->stop();
    overlay_->hide();
    return;
  }
  overlay_label_->setText(text);
  overlay_->adjustSize();
  place_overlay();
  if (!overlay_->isVisible() && !overlay_delay_->isActive()) overlay_delay_->start(120);
}

void GraphView::place_overlay() {
  overlay_->adjustSize();
  overlay_->move((viewport()->width() - overlay_->width()) / 2, 12);
}

void GraphView::resizeEvent(QResizeEvent* e) {
  QGraphicsView::resizeEvent(e);
  place_overlay();
  place_footer();
}

QRect GraphView::footer_rect() const { return footer_->geometry(); }

void GraphView::place_footer() {
  QRect v = viewport()->geometry();
  footer_->setGeometry(v.left(), v.bottom() + 1, v.width(), kFooterH);
  // the legend goes when the strip is too narrow for it and the counts
  footer_legend_->setVisible(v.width() > 560);
  int room = std::max(40, v.width() - (footer_legend_->isVisible() ? footer_legend_->sizeHint().width() + 28 : 16));
  footer_info_->setText(footer_info_->fontMetrics().elidedText(footer_text_, Qt::ElideRight, room));
  footer_info_->setToolTip(footer_text_);
}

void GraphView::update_footer() {
  footer_text_.clear();
  if (frame_ && message_.isEmpty()) {
    const FrameGraph& g = *frame_->graph;
    footer_text_ =
        QString("%1 nodes · %2 drawn%3 · %4 %5 ms")
            .arg(g.n_uops)
            .arg(g.nodes.size())
            .arg((g.collapsed.empty() ? QString()
                                      : QString(" · %1 collapsed (X, Shift+X: expand)").arg(g.collapsed.size())) +
                 (g.bodies_hidden.empty()
                      ? QString()
                      : QString(" · %1 kernel bodies hidden (c shows)").arg(g.bodies_hidden.size())))
            .arg(QString::fromStdString(frame_->layout->engine))
            .arg(frame_->layout->ms, 0, 'f', 1);
  }
  place_footer();
}

void GraphView::paintEvent(QPaintEvent* e) {
  auto t0 = std::chrono::steady_clock::now();
  timespec c0, c1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  QGraphicsView::paintEvent(e);
  // the time first: counting the visible items scans every item (the scene has no index)
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
  double cpu_ms = (c1.tv_sec - c0.tv_sec) * 1e3 + (c1.tv_nsec - c0.tv_nsec) / 1e6;
  if (std::getenv("TINYVIZ_TIMING"))
    std::fprintf(
        stderr,
        "tinyviz: graph paint %.1f ms, cpu %.1f ms (frame %zu, zoom %.2f, %d of %d items, %.0f%% of the view)\n", ms,
        cpu_ms, frame_ ? frame_->graph->frame : 0, zoom(), (int)items(e->region().boundingRect()).size(),
        (int)scene()->items().size(),
        100.0 * e->region().boundingRect().width() * e->region().boundingRect().height() /
            std::max(1, viewport()->width() * viewport()->height()));
}

void GraphView::show_message(const QString& text) {
  scene()->clear();  // before the frame its items point into
  lines_ = nullptr;
  frame_.reset();
  nodes_.clear(), ghosts_.clear(), edges_.clear(), boxes_.clear(), by_id_.clear();
  selected_ = 0;
  message_ = text;
  update_footer();
  viewport()->update();
}

double GraphView::zoom() const { return transform().m11(); }

namespace {
// an edge between the same two drawn nodes at the same port, of the same kind, is the same edge in the next frame
struct EdgeKey {
  NodeKey src, dst;
  int port;
  bool order;
  bool operator==(const EdgeKey&) const = default;
};
struct EdgeKeyHash {
  size_t operator()(const EdgeKey& k) const {
    NodeKeyHash h;
    return h(k.src) * 31 ^ h(k.dst) * 7 ^ (size_t)k.port * 2 ^ (size_t)k.order;
  }
};
}  // namespace

void GraphView::show_frame(FrameResultPtr r) {
  FrameResultPtr prev = frame_;  // keeps the GNodes the kept items point into alive until they are rebound
  QPointF centre = mapToScene(viewport()->rect().center());
  bool same_coords = prev && prev->graph->step == r->graph->step && prev->family == r->family;
  bool same_step = prev && prev->graph->step == r->graph->step;
  // another frame of the same layout: keep the items of what survives (most of the graph), and let Qt repaint only
  // what changed. A new step or a fresh layout (a jump) starts from an empty scene: everything moves there, and
  // removing thousands of items one by one from the scene costs more than clearing it (each removal scans its list)
  bool reuse = same_coords;
  QTransform transform_before = transform();
  int h_before = horizontalScrollBar()->value(), v_before = verticalScrollBar()->value();

  if (!reuse) {
    setUpdatesEnabled(false);
    scene()->clear();
    lines_ = nullptr;
    nodes_.clear(), edges_.clear(), ghosts_.clear(), boxes_.clear();
  }
  if (!lines_) {
    lines_ = new EdgeLines(&edges_);
    scene()->addItem(lines_);
  }
  for (NodeItem* it : ghosts_) delete it;
  for (QGraphicsItem* it : boxes_) delete it;
  ghosts_.clear(), boxes_.clear(), by_id_.clear();
  found_.clear();
  differing_.clear();
  message_.clear();
  frame_ = r;
  update_footer();
  const FrameGraph& g = *r->graph;
  const Layout& L = *r->layout;

  // the previous frame's items by what they draw (an item whose key repeats, which a frame should not have, goes)
  std::vector<QGraphicsItem*> gone;
  std::unordered_map<NodeKey, NodeItem*, NodeKeyHash> old_nodes;
  std::unordered_map<EdgeKey, EdgeItem*, EdgeKeyHash> old_edges;
  if (reuse) {
    const FrameGraph& pg = *prev->graph;
    old_nodes.reserve(nodes_.size());
    for (NodeItem* it : nodes_)
      if (!old_nodes.emplace(it->node().key, it).second) gone.push_back(it);
    old_edges.reserve(edges_.size());
    for (size_t i = 0; i < edges_.size(); i++) {
      const GEdge& e = pg.edges[i];
      if (!old_edges.emplace(EdgeKey{pg.nodes[e.src].key, pg.nodes[e.dst].key, e.port, e.order}, edges_[i]).second)
        gone.push_back(edges_[i]);
    }
    nodes_.clear(), edges_.clear();
  }

  QRectF match_box;                 // bounds of the matched subgraph
  std::vector<QRectF> match_rects;  // its nodes, grown a little
  QRectF near_match;  // with no drawn replacement (a folded const): the removed node's ghost, else the lowest rebuilt
  nodes_.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); i++) {
    NodeItem* it;
    QPointF at(L.pos[i].x, L.pos[i].y);
    if (auto f = old_nodes.find(g.nodes[i].key); f != old_nodes.end()) {
      it = f->second;
      old_nodes.erase(f);
      it->rebind(g.nodes[i], (int)i);
      it->setPos(at);  // (no-op when it kept its place)
    } else {
      it = new NodeItem(g.nodes[i], (int)i, false);
      it->setPos(at);
      scene()->addItem(it);
    }
    nodes_.push_back(it);
    by_id_.emplace(g.nodes[i].key.id, (int)i);
    if (g.nodes[i].in_match) {
      QRectF r = it->mapRectToScene(it->boundingRect()).adjusted(-14, -14, 14, 14);
      match_box = match_box.united(r);
      match_rects.push_back(r);
    }
    if (near_match.isNull() && g.nodes[i].mark == Mark::changed)  // nodes come sources first: the lowest one
      near_match = it->mapRectToScene(it->boundingRect());
  }
  for (auto& [key, it] : old_nodes) gone.push_back(it);
  for (size_t i = 0; i < g.ghosts.size(); i++) {
    if (i >= r->ghost_shown.size() || !r->ghost_shown[i]) continue;
    auto* it = new NodeItem(g.ghosts[i], (int)i, true);
    it->setPos(r->ghost_pos[i].x, r->ghost_pos[i].y);
    scene()->addItem(it);
    ghosts_.push_back(it);
    if (ghosts_.size() == 1) near_match = it->mapRectToScene(it->boundingRect());
  }
  bool crowded = g.edges.size() > EdgeItem::kCrowdedEdges;
  edges_.reserve(g.edges.size());
  for (size_t i = 0; i < g.edges.size() && i < L.edges.size(); i++) {
    const GEdge& e = g.edges[i];
    bool show_port = e.nslots > 1 && !e.order;
    EdgeItem* it;
    if (auto f = old_edges.find(EdgeKey{g.nodes[e.src].key, g.nodes[e.dst].key, e.port, e.order});
        f != old_edges.end()) {
      it = f->second;
      old_edges.erase(f);
      it->set(L.edges[i], e.port, show_port, crowded, e.order);
    } else {
      it = new EdgeItem(L.edges[i], e.port, show_port, crowded, e.order);
      it->set_lines(lines_);
      scene()->addItem(it);
    }
    edges_.push_back(it);
  }
  for (auto& [key, it] : old_edges) gone.push_back(it);
  for (QGraphicsItem* it : gone) delete it;  // (leaves the scene, which repaints where it was)
  // one box per cluster of touching match nodes (a chain of new nodes is one box, not a ribbon of little ones)
  for (const QRectF& box : cluster_bounds(match_rects)) {
    auto* item = scene()->addRect(box, QPen(mark::match_box, 1.5, Qt::DashLine), QColor(0x7a, 0xa2, 0xf7, 38));
    item->setZValue(-2);
    boxes_.push_back(item);
  }
  QRectF bounds = graph_bounds();
  // 2,000 pixels around the graph to scroll in, in steps of 512: a frame that moves a node at the edge a little
  // keeps the scene rect (a new one re-ranges the scroll bars and has the view re-centred)
  auto snap_down = [](double v) { return std::floor(v / 512) * 512; };
  auto snap_up = [](double v) { return std::ceil(v / 512) * 512; };
  QRectF rect = QRectF(QPointF(snap_down(bounds.left() - 2000), snap_down(bounds.top() - 2000)),
                       QPointF(snap_up(bounds.right() + 2000), snap_up(bounds.bottom() + 2000)));
  bool rect_changed = rect != scene()->sceneRect();
  if (rect_changed) scene()->setSceneRect(rect);
  lines_->set_bounds(rect);  // (changes with the scene rect only: a new one repaints everything anyway)

  if (selected_ && !by_id_.count(selected_)) selected_ = 0;
  apply_highlight();
  if (match_box.isNull()) match_box = near_match;
  if (same_coords) {
    if (rect_changed) centerOn(centre);
    // the view stays put while the match is in sight; stepping to one outside it scrolls just enough to show it
    if (!match_box.isNull()) ensureVisible(match_box, 40, 40);
  } else if (same_step) {
    // a fresh layout of the same step: keep the zoom, look at what the match touched
    QPointF c = !match_box.isNull() ? match_box.center() : bounds.center();
    centerOn(c);
  } else {
    initial_view(match_box);
  }
  if (!reuse) {
    setUpdatesEnabled(true);
    viewport()->update();
  } else if (transform() != transform_before || horizontalScrollBar()->value() != h_before ||
             verticalScrollBar()->value() != v_before) {
    viewport()->update();  // the view moved: everything (the scrolled pixels carry the old legend and info line)
  } else {
    update_overlays();  // the items repaint where they changed; the frame's info line changed too
  }
}

QRectF GraphView::graph_bounds() const {
  QRectF b;  // (the items are only moved, never transformed otherwise)
  for (const auto* items : {&nodes_, &ghosts_})
    for (const NodeItem* it : *items) b |= it->boundingRect().translated(it->pos());
  for (const EdgeItem* it : edges_) b |= it->boundingRect();
  for (const QGraphicsItem* it : boxes_) b |= it->sceneBoundingRect();
  return b;
}

void GraphView::update_overlays() {
  QRect vr = viewport()->rect();
  int lh = QFontMetrics(graph_font(false)).height();
  viewport()->update(QRect(0, vr.bottom() - 2 * lh - 40, vr.width(), 2 * lh + 41));  // legend, info line
  viewport()->update(QRect(0, 0, vr.width(), lh + 20));                              // the note
}

void GraphView::initial_view(const QRectF& focus) {
  // a graph that only fits with unreadable labels: start readable, at what the match touched or at the root
  QRectF b = graph_bounds().adjusted(-20, -20, 20, 20);
  double fit_scale =
      std::min(viewport()->width() / std::max(1.0, b.width()), viewport()->height() / std::max(1.0, b.height()));
  if (fit_scale >= kMinReadableScale) return fit();
  setTransform(QTransform::fromScale(0.9, 0.9));
  if (!focus.isNull()) return centerOn(focus.center());
  for (NodeItem* n : nodes_)
    if (n->node().is_root) {
      QRectF r = n->mapRectToScene(n->boundingRect());
      // the root near the top of the view
      centerOn(QPointF(r.center().x(), r.top() + viewport()->height() / 2.0 / 0.9 - 40));
      return;
    }
  centerOn(b.center());
}

void GraphView::fit() {
  if (!frame_) return;
  QRectF b = graph_bounds().adjusted(-20, -20, 20, 20);
  if (b.isEmpty()) return;
  fitInView(b, Qt::KeepAspectRatio);
  if (zoom() > kMaxFitScale) {
    setTransform(QTransform::fromScale(kMaxFitScale, kMaxFitScale));
    centerOn(b.center());
  }
}

void GraphView::zoom_by(double f) {
  double z = zoom();
  f = std::clamp(z * f, kMinScale, kMaxScale) / z;
  scale(f, f);
}

void GraphView::select_node(int64_t id) {
  selected_ = id;
  apply_highlight();
}

bool GraphView::reveal_node(int64_t id) {
  for (const auto* items : {&nodes_, &ghosts_})
    for (NodeItem* n : *items)
      if (n->node().key.id == id) {
        select_node(id);
        centerOn(n);
        return true;
      }
  return false;
}

void GraphView::apply_highlight() {
  if (!frame_) return;
  const FrameGraph& g = *frame_->graph;
  std::unordered_set<int> found(found_.begin(), found_.end());
  if (!selected_) {
    for (NodeItem* n : nodes_)
      n->set_hi(!found.empty() ? (found.count(n->index()) ? Hi::none : Hi::dim)
                : differing_.count(n->node().key.id) && !n->node().hides ? Hi::differs
                                                                         : Hi::none);
    for (EdgeItem* e : edges_) e->set_hi(found.empty() ? Hi::none : Hi::dim);
    return;
  }
  std::unordered_set<int64_t> srcs, users;
  if (auto it = g.info.find(selected_); it != g.info.end()) {
    srcs.insert(it->second.src.begin(), it->second.src.end());
    users.insert(it->second.users.begin(), it->second.users.end());
  }
  for (NodeItem* n : nodes_) {
    int64_t id = n->node().key.id;
    n->set_hi(id == selected_ ? Hi::selected : srcs.count(id) ? Hi::source : users.count(id) ? Hi::user : Hi::dim);
  }
  for (size_t i = 0; i < edges_.size(); i++) {
    const GEdge& e = g.edges[i];
    int64_t s = g.nodes[e.src].key.id, d = g.nodes[e.dst].key.id;
    edges_[i]->set_hi(e.order ? Hi::dim : d == selected_ ? Hi::source : s == selected_ ? Hi::user : Hi::dim);
  }
}

int GraphView::mark_differing(const std::vector<int64_t>& ids) {
  differing_ = std::unordered_set<int64_t>(ids.begin(), ids.end());
  apply_highlight();
  int n = 0;
  for (NodeItem* it : nodes_) n += differing_.count(it->node().key.id) > 0 && !it->node().hides;
  return n;
}

bool GraphView::is_marked_differing(int index) const { return nodes_.at(index)->hi() == Hi::differs; }

int GraphView::find_nodes(const QString& text) {
  found_.clear();
  if (frame_ && !text.isEmpty()) {
    std::string needle = text.toLower().toStdString();
    const FrameGraph& g = *frame_->graph;
    for (size_t i = 0; i < g.nodes.size(); i++) {
      std::string hay;
      for (const auto& l : g.nodes[i].lines) hay += tg::viz::strip_ansi(l) + "\n";
      for (char& c : hay) c = (char)std::tolower((unsigned char)c);
      if (hay.find(needle) != std::string::npos || std::to_string(g.nodes[i].key.id) == needle)
        found_.push_back((int)i);
    }
  }
  selected_ = 0;
  apply_highlight();
  if (!found_.empty()) {
    found_next_ %= found_.size();
    centerOn(nodes_[found_[found_next_++]]);
  }
  return (int)found_.size();
}

QPoint GraphView::node_viewport_pos(int index) const { return mapFromScene(nodes_.at(index)->pos()); }

void GraphView::wheelEvent(QWheelEvent* e) {
  double steps = e->angleDelta().y() / 120.0;
  if (e->modifiers() & Qt::ShiftModifier) {  // shift+wheel pans sideways
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() - (int)(steps * 60));
    return;
  }
  zoom_by(std::pow(1.2, steps));
  emit zoomed(zoom());
}

void GraphView::set_zoom(double scale) {
  double z = zoom();
  if (std::abs(scale - z) < 1e-9 * z) return;
  double f = std::clamp(scale, kMinScale, kMaxScale) / z;
  ViewportAnchor a = transformationAnchor();
  setTransformationAnchor(QGraphicsView::AnchorViewCenter);  // the other pane's centre stays where it is
  this->scale(f, f);
  setTransformationAnchor(a);
}

void GraphView::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton || e->button() == Qt::MiddleButton) {
    press_pos_ = e->pos();
    pressed_ = true;
    panning_ = false;
    e->accept();
    return;
  }
  QGraphicsView::mousePressEvent(e);
}

void GraphView::mouseMoveEvent(QMouseEvent* e) {
  if (pressed_) {
    QPoint d = e->pos() - press_pos_;
    if (!panning_ && d.manhattanLength() > 4) {
      panning_ = true;
      viewport()->setCursor(Qt::ClosedHandCursor);
    }
    if (panning_) {
      horizontalScrollBar()->setValue(horizontalScrollBar()->value() - d.x());
      verticalScrollBar()->setValue(verticalScrollBar()->value() - d.y());
      press_pos_ = e->pos();
    }
    return;
  }
  QGraphicsView::mouseMoveEvent(e);
}

NodeItem* GraphView::node_at(QPoint pos) const {
  NodeItem* hit = nullptr;
  for (QGraphicsItem* it : items(pos))
    if (it->type() == NodeItem::Type) {
      auto* n = static_cast<NodeItem*>(it);
      if (!hit || (hit->ghost() && !n->ghost())) hit = n;
    }
  return hit;
}

bool GraphView::is_collapsed(int64_t id) const {
  if (!frame_) return false;
  const auto& c = frame_->graph->collapsed;
  const auto& b = frame_->graph->bodies_hidden;
  return std::find(c.begin(), c.end(), id) != c.end() || std::find(b.begin(), b.end(), id) != b.end();
}

int64_t GraphView::ref_context_of(int64_t id) const {
  if (!frame_ || !id) return 0;
  auto [a, b] = by_id_.equal_range(id);
  for (auto it = a; it != b; ++it)
    if (int64_t c = frame_->graph->nodes[(size_t)it->second].ref_context) return c;
  return 0;
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* e) {
  NodeItem* hit = node_at(e->pos());
  if (hit && !hit->ghost() && hit->node().ref_context) {
    emit open_context(hit->node().ref_context);
    return;
  }
  QGraphicsView::mouseDoubleClickEvent(e);
}

void GraphView::contextMenuEvent(QContextMenuEvent* e) {
  NodeItem* hit = node_at(e->pos());
  QMenu menu(this);
  if (hit && !hit->ghost()) {
    int64_t id = hit->node().key.id;
    select_node(id);
    emit node_clicked(id);
    bool collapsed = is_collapsed(id);
    const GNode& gn = hit->node();
    bool body = gn.op == "CALL" || gn.op == "FUNCTION" || gn.op == "PROGRAM";
    if (gn.ref_context) {
      int64_t ctx = gn.ref_context;
      connect(menu.addAction(tr("Open the kernel's codegen (Enter)")), &QAction::triggered, this,
              [this, ctx] { emit open_context(ctx); });
    }
    QAction* a = menu.addAction(body ? (collapsed ? tr("Show the kernel body (X)") : tr("Hide the kernel body (X)"))
                                : collapsed ? tr("Expand the sources (X)")
                                            : tr("Collapse the sources (X)"));
    a->setEnabled(collapsed || !frame_->graph->info.count(id) || !frame_->graph->info.at(id).src.empty());
    connect(a, &QAction::triggered, this, [this, id] { emit collapse_requested(id); });
  }
  if (frame_ && !frame_->graph->collapsed.empty())
    connect(menu.addAction(tr("Expand everything (%1 collapsed)").arg(frame_->graph->collapsed.size())),
            &QAction::triggered, this, &GraphView::expand_all_requested);
  if (!menu.isEmpty()) menu.exec(e->globalPos());
}

void GraphView::mouseReleaseEvent(QMouseEvent* e) {
  if (!pressed_) return QGraphicsView::mouseReleaseEvent(e);
  pressed_ = false;
  viewport()->unsetCursor();
  if (panning_) return;
  NodeItem* hit = node_at(e->pos());
  int64_t id = hit ? hit->node().key.id : 0;
  found_.clear();
  select_node(id);
  emit node_clicked(id);
}

void GraphView::keyPressEvent(QKeyEvent* e) {
  switch (e->key()) {
    case Qt::Key_Up:
    case Qt::Key_Down:
    case Qt::Key_Left:
    case Qt::Key_Right:
      if (e->modifiers() & Qt::AltModifier) break;
      emit nav_key(e->key());
      return;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoom_by(1.25);
      return;
    case Qt::Key_Minus:
      zoom_by(0.8);
      return;
    case Qt::Key_0:
      setTransform(QTransform());
      return;
    case Qt::Key_X:
      if (selected_ && !(e->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::ShiftModifier))) {
        emit collapse_requested(selected_);
        return;
      }
      break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
      if (int64_t c = ref_context_of(selected_)) {
        emit open_context(c);
        return;
      }
      break;
    default:
      break;
  }
  QGraphicsView::keyPressEvent(e);
}

void GraphView::drawForeground(QPainter* p, const QRectF&) {
  p->save();
  p->resetTransform();
  QFont f = graph_font(false);
  p->setFont(f);
  QFontMetrics fm(f);
  QRect vr = viewport()->rect();
  if (!message_.isEmpty()) {
    p->setPen(QColor(0xc0, 0xc4, 0xd8));
    p->drawText(vr.adjusted(40, 40, -40, -40), Qt::AlignCenter | Qt::TextWordWrap, message_);
  }
  if (frame_) {
    // (the legend and the counts are in the strip under the view)
    if (!frame_->note.isEmpty()) {
      QRect nr(10, 10, vr.width() - 20, fm.height() + 8);
      p->setPen(QColor(0xf0, 0xc0, 0x60));
      p->drawText(nr, Qt::AlignLeft | Qt::AlignVCenter, frame_->note);
    }
  }
  p->restore();
}

}  // namespace tv
