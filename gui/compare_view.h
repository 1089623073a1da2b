// The "Compare" tab: the window's trace (A) beside another (B), aligned as `tinyviz-cli diff` aligns them
// (viz/reader/diff.h). Left, the aligned contexts and steps of both with their status: equal, differs at match k, input
// differs, on one side only. Right, the selected pair's two graphs side by side at the same match, with the nodes where
// the two frames start to differ outlined (a node whose structure the other frame lacks while it has all its
// sources). F8 / Shift+F8 go to the next / previous divergent step, Ctrl+F8 to the first divergence; Left/Right step
// both graphs; a double click opens A's step in the Graph tab.
#pragma once
#include <QWidget>
#include <climits>
#include <memory>
#include <optional>

#include "gui/frame_loader.h"
#include "gui/trace_model.h"
#include "viz/reader/diff.h"

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace tv {

class GraphView;

class CompareView : public QWidget {
  Q_OBJECT
 public:
  explicit CompareView(QWidget* parent = nullptr);
  ~CompareView() override;
  // a: the window's trace, b: the other; d: tg::viz::diff_traces of the two
  void set_compare(SessionPtr a, SessionPtr b, std::shared_ptr<const tg::viz::TraceDiff> d);
  void clear();
  bool active() const { return (bool)diff_; }
  const tg::viz::TraceDiff* diff() const { return diff_.get(); }
  const SessionPtr& session_a() const { return a_; }
  const SessionPtr& session_b() const { return b_; }
  void set_frame_options(const FrameOptions& o);

  // the pair at (context pair, step pair) of diff()->pairs, at this frame (default: the frame after the first
  // differing match, else the input graph)
  void select_pair(size_t ctx, size_t step, std::optional<size_t> frame = std::nullopt);
  bool first_divergence();                         // the step and match diff() names first; false: the traces agree
  bool select_a_step(int64_t step, size_t frame);  // the pair holding A's step (`tinyviz A --compare B --select`)
  bool next_divergence(int dir);  // the next (+1) or previous (-1) differing pair from the selected one
  void step_frame(int delta);     // both graphs, each within its step's frames
  struct Current {
    size_t ctx = SIZE_MAX, step = SIZE_MAX;  // indices into diff()->pairs and its steps
    size_t frame = 0;
  };
  const Current& current() const { return cur_; }
  bool loading() const;  // a frame of the selected pair is still on its way

  // for tests and screenshots
  QTreeWidget* tree() const { return tree_; }
  GraphView* graph_a() const { return graph_a_; }
  GraphView* graph_b() const { return graph_b_; }
  QLabel* summary() const { return summary_; }
  // the nodes of each side's frame where the difference starts (uop ids of that side's trace), and the number of
  // nodes of the frame the other frame has no twin of
  const std::vector<int64_t>& origins_a() const { return origins_a_; }
  const std::vector<int64_t>& origins_b() const { return origins_b_; }
  // an outlined node of A whose counterpart in B (the same op over the same sources) differs only in its label: the
  // two labels, shown as a word diff under the captions
  struct LabelDiff {
    int64_t a = 0, b = 0;
    std::string label_a, label_b;
  };
  const std::vector<LabelDiff>& label_diffs() const { return label_diffs_; }
  size_t differing_a() const { return differing_a_; }
  size_t differing_b() const { return differing_b_; }

 signals:
  void open_in_trace(tv::Selection s);  // A's step at the frame shown (double click on a row)
  void frames_shown();                  // both sides of the selected pair are drawn (or say why not)
  void load_failed(QString message);

 protected:
  void keyPressEvent(QKeyEvent* e) override;

 private:
  void fill_tree();
  void request_frames();
  void on_frame(bool side_b, FrameResultPtr r);
  void mark_differences();
  QTreeWidgetItem* item_of(size_t ctx, size_t step) const;
  QString caption(bool side_b, int64_t step, size_t frame) const;
  size_t frames_of(bool side_b, int64_t step) const;  // matches + 1

  SessionPtr a_, b_;
  std::shared_ptr<const tg::viz::TraceDiff> diff_;
  // node structures, on the sessions' frame-side traces (made and used on the query thread only)
  std::shared_ptr<std::unique_ptr<tg::viz::NodeShapes>> shapes_a_, shapes_b_;
  uint64_t mark_gen_ = 0;
  bool marking_ = false;
  Current cur_;
  int64_t want_a_ = 0, want_b_ = 0;  // the steps whose frames are on their way (0: that side has none)
  size_t frame_a_ = 0, frame_b_ = 0;
  FrameResultPtr shown_a_, shown_b_;
  std::vector<int64_t> origins_a_, origins_b_;
  std::vector<LabelDiff> label_diffs_;
  size_t differing_a_ = 0, differing_b_ = 0;
  bool syncing_ = false;

  QLabel* summary_;
  QTreeWidget* tree_;
  QLabel* frame_label_;
  QLabel *caption_a_, *caption_b_;
  GraphView *graph_a_, *graph_b_;
  FrameLoader *loader_a_, *loader_b_;
};

}  // namespace tv
