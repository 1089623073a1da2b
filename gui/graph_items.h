// The items the graph view's scene is made of: a node box (label, op colour, rewrite-diff mark, highlight) and an edge
// (path from a source to its user, arrowhead, source-port number).
#pragma once
#include <QGraphicsItem>
#include <QPainterPath>

#include "gui/frame_graph.h"
#include "gui/layout.h"

namespace tv {

// differs: a compared frame's node where the two traces start to differ (the Compare tab)
enum class Hi : uint8_t { none, selected, source, user, dim, differs };

class NodeItem : public QGraphicsItem {
 public:
  NodeItem(const GNode& n, int index, bool ghost);
  // the same node in the next frame of the step (the view keeps the item): points it at that frame's GNode and
  // repaints it only when it draws differently there (label, size, mark, root); the caller moves it
  void rebind(const GNode& n, int index);
  enum { Type = UserType + 1 };
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget* w) override;
  void set_hi(Hi h);
  int index() const { return index_; }  // in FrameGraph::nodes (or ::ghosts for a ghost)
  bool ghost() const { return ghost_; }
  const GNode& node() const { return *n_; }
  Hi hi() const { return hi_; }

 private:
  const GNode* n_;  // owned by the FrameGraph the view keeps alive
  int index_;
  bool ghost_;
  Hi hi_ = Hi::none;
  QColor fill_, text_;
};

class EdgeLines;

class EdgeItem : public QGraphicsItem {
 public:
  // crowded: one of very many edges (a frame with over kCrowdedEdges): drawn without antialiasing
  // dashed: a "runs after" edge (GEdge::order), not a source
  EdgeItem(const EdgePath& path, int port, bool show_port, bool crowded = false, bool dashed = false);
  // the same edge in the next frame of the step: rebuilds the path only when the layout moved it, repaints only
  // when something it draws changed
  void set(const EdgePath& path, int port, bool show_port, bool crowded, bool dashed);
  static constexpr size_t kCrowdedEdges = 1000;
  enum { Type = UserType + 2 };
  int type() const override { return Type; }
  QRectF boundingRect() const override { return bounds_; }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget* w) override;
  void set_hi(Hi h);
  Hi hi() const { return hi_; }
  // its line is drawn by this scene-wide item (EdgeLines) when it is plain there; null: always by the edge itself
  void set_lines(const EdgeLines* l) { lines_ = l; }
  bool plain() const { return crowded_ && !dashed_ && hi_ == Hi::none; }

 private:
  friend class EdgeLines;
  void build(const EdgePath& e);
  // the path where it can meet v, as polylines within tol of it (runs: cleared first)
  void visible_runs(const QRectF& v, double tol, std::vector<QPolygonF>& runs) const;
  std::vector<Pt> pts_;  // the layout's points the path was built from
  bool bezier_ = false;
  QPainterPath path_;
  QPolygonF arrow_;
  QPointF label_pos_;
  QRectF bounds_;
  int port_;
  bool show_port_, crowded_, dashed_;
  Hi hi_ = Hi::none;
  const EdgeLines* lines_ = nullptr;
};

// The lines of a crowded frame's plain edges (EdgeItem::plain), all drawn by one item into an image of the part of
// the view being painted, pixel by pixel, and put on the screen in one go. Where this applies (a one-pixel line
// without antialiasing: what Qt draws for such an edge) it draws the same pixels within a pixel, and the edges draw
// only their arrowheads and port numbers. Qt's drawing of such lines took 30-40 ms of the 50-65 ms paint of a
// 5,000-node frame whose ~1,300 fan-in edges cross the view; this takes ~5 ms.
class EdgeLines : public QGraphicsItem {
 public:
  explicit EdgeLines(const std::vector<EdgeItem*>* edges);  // the view's edges, read when painting
  enum { Type = UserType + 3 };
  int type() const override { return Type; }
  void set_bounds(const QRectF& r);  // at least every edge's bounds
  QRectF boundingRect() const override { return bounds_; }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget* w) override;
  // whether plain edges are drawn here with this painter (else each edge draws its own line, as Qt does)
  bool draws(const QPainter* p) const;
  static inline bool enabled = true;  // tests: off draws every line with Qt, to compare the two

 private:
  const std::vector<EdgeItem*>* edges_;
  QRectF bounds_;
};

}  // namespace tv
