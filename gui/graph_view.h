// The centre of tinyviz: one frame of a rewrite step drawn from its laid-out FrameGraph. Wheel zooms around the
// cursor, dragging pans, F fits, a click on a node highlights its sources (blue) and users (orange) and reports it.
// Between frames of one step the view keeps its zoom and centre, so nodes that kept their place do not move.
#pragma once
#include <QGraphicsView>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gui/frame_loader.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace tv {

class NodeItem;
class EdgeItem;
class EdgeLines;

class GraphView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphView(QWidget* parent = nullptr);
  void show_frame(FrameResultPtr r);
  void show_message(const QString& text);  // replaces the graph (errors, empty selections)
  void set_progress(const QString& text);  // overlay with a busy bar and a cancel button; empty hides it
  void fit();
  void zoom_by(double f);
  void select_node(int64_t id);         // 0 clears
  bool reveal_node(int64_t id);         // selects it and scrolls to it (a drawn node or ghost); false: not drawn
  int find_nodes(const QString& text);  // highlight nodes whose label contains text, centre on the next one
  // outline these nodes (uop ids) as differing from a compared trace's frame, until the next frame; returns how many
  // drawn nodes got the outline
  int mark_differing(const std::vector<int64_t>& ids);
  bool is_marked_differing(int index) const;  // a drawn node (index into frame()->graph->nodes)
  FrameResultPtr frame() const { return frame_; }
  int64_t selected_node() const { return selected_; }
  double zoom() const;
  // for the tests: drawn nodes (index into frame()->graph->nodes) and ghosts
  const std::vector<NodeItem*>& node_items() const { return nodes_; }
  const std::vector<NodeItem*>& ghost_items() const { return ghosts_; }
  const std::vector<EdgeItem*>& edge_items() const { return edges_; }  // index into frame()->graph->edges
  QPoint node_viewport_pos(int index) const;
  NodeItem* node_at(QPoint viewport_pos) const;  // the drawn node there (a node over a ghost), or null
  bool is_collapsed(int64_t id) const;           // drawn with its sources collapsed (a CALL: its body hidden)
  int64_t ref_context_of(int64_t id) const;      // the codegen context a drawn CALL links to (0: none)

  QString footer_text() const { return footer_text_; }  // the frame's counts line (tests)
  QRect footer_rect() const;                             // where the strip is, in the view's coordinates
  void set_zoom(double scale);                           // the same scale as another view (compare panes)

 signals:
  void zoomed(double scale);  // the user zoomed (wheel, +/-, fit)
  void node_clicked(qint64 id);  // 0: the background
  void nav_key(int key);         // arrow keys: the main window steps through steps and matches
  void cancel_requested();
  void collapse_requested(qint64 id);  // collapse the node's sources, or expand them when it is collapsed
  void expand_all_requested();
  void open_context(qint64 context);  // Enter or a double click on a CALL: its kernel's codegen context

 protected:
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void drawForeground(QPainter* p, const QRectF& rect) override;
  void resizeEvent(QResizeEvent* e) override;
  void paintEvent(QPaintEvent* e) override;
  void contextMenuEvent(QContextMenuEvent* e) override;

 private:
  void apply_highlight();
  QRectF graph_bounds() const;  // of the frame's items (itemsBoundingRect without the edge lines' item)
  void initial_view(const QRectF& focus);
  void place_overlay();
  void update_overlays();  // repaint where drawForeground draws (the legend, the frame's info line and note)
  FrameResultPtr frame_;
  // nodes_ and edges_ run parallel to the frame's FrameGraph::nodes and ::edges. Stepping within a step keeps the
  // items of the nodes and edges that survive (by NodeKey; an edge by its ends' keys, port and kind): only what
  // changed is moved, added, removed and repainted
  std::vector<NodeItem*> nodes_, ghosts_;
  std::vector<EdgeItem*> edges_;
  EdgeLines* lines_ = nullptr;                   // draws the plain edges' lines (in the scene while a frame is shown)
  std::vector<QGraphicsItem*> boxes_;            // the match's boxes
  std::unordered_multimap<int64_t, int> by_id_;  // uop id -> node indices (a leaf drawn per use has several)
  int64_t selected_ = 0;
  std::vector<int> found_;
  std::unordered_set<int64_t> differing_;  // mark_differing's ids
  size_t found_next_ = 0;
  QString message_;
  QPoint press_pos_;
  bool panning_ = false, pressed_ = false;
  QWidget* overlay_;
  QLabel* overlay_label_;
  // the legend and the frame's counts, in a strip under the view (its viewport margin), never over the graph
  QWidget* footer_;
  QLabel* footer_legend_;
  QLabel* footer_info_;
  QString footer_text_;  // the counts before eliding
  void update_footer();
  void place_footer();
  QTimer* overlay_delay_;
};

}  // namespace tv
