// The "Timeline" tab: kernel runs on one lane per device (PROFILE; hover shows time, GFLOPS and GB/s, a click opens
// the kernel's codegen context), host ranges (USER: tg::profile_range), a memory lane per device (live bytes over
// time, the peak marked; hover a buffer for its size, dtype, life and the kernels that read and wrote it, click it to
// mark those kernels), then contexts and steps as spans over time (t_start..t_end), one group of lanes per recording
// thread (contexts, then steps by nesting depth). Markers (tg::profile_marker) are vertical lines across the lanes.
// The filter dims every span whose name does not contain its text; shift+drag selects an interval and lists the
// total time by name inside it. Wheel zooms around the cursor, dragging pans, hovering
// shows name and duration, clicking selects. Only what is on screen is drawn, and spans narrower than a pixel are
// merged per pixel column, so 10^5 spans paint in a few milliseconds.
#pragma once
#include <QWidget>
#include <optional>
#include <vector>

#include "gui/trace_model.h"
#include "viz/reader/trace_profile.h"

namespace tv {

QString fmt_bytes(double b);  // "37.75 MB": a size as the timeline, its tooltips and the run panel print it

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  struct Span {
    int64_t t0, t1;         // ns since the trace's first event
    int64_t context, step;  // step 0: a context span (or a kernel's codegen context)
    int name_hash;
    int64_t kernel = 0;  // index + 1 into Trace::kernel_events(), 0: not a kernel
    int64_t range = 0;   // index + 1 into Trace::ranges(), 0: not a host range
    bool dim = false;    // left out by the filter
  };
  // total time and count per span name inside an interval (shift+drag), most time first
  struct Total {
    QString name;
    double ns = 0;
    size_t count = 0;
  };
  explicit TimelineView(QWidget* parent = nullptr);
  void set_session(SessionPtr s);
  void set_selection(const Selection& s);
  std::optional<Span> hit(QPoint p) const;
  std::optional<QPoint> point_of(int64_t step) const;         // a point inside the step's span, if on screen
  std::optional<QPoint> point_of_kernel(size_t event) const;  // a point inside a kernel event's span, if on screen
  size_t kernel_lane_count() const {
    ensure_lanes();
    return kernel_lanes_;
  }
  void show_range(double t0, double t1);  // ns since the first event
  void show_all();
  void reveal(int64_t step);         // zoom in on a step's span
  void reveal_kernel(size_t event);  // zoom in on a kernel event (index into Trace::kernel_events())
  double last_paint_ms() const { return paint_ms_; }
  std::pair<double, double> visible_range() const;  // ns since the first event at the plot's left and right edges
  bool whole_run() const { return whole_run_; }     // the view shows the whole run (kept through resizes)
  double total_ns() const {
    ensure_lanes();
    return total_;
  }
  size_t span_count() const;
  // the lanes top to bottom: name ("CL kernels", "thread 1: depth 0", ...) and how many spans it holds (a memory
  // lane: how many allocs and frees)
  std::vector<std::pair<QString, size_t>> lane_summary() const;
  // the memory lanes (one per device with buffers) and the markers, as drawn
  const std::vector<tg::viz::MemoryLane>& memory_lanes() const {
    ensure_lanes();
    return profile_.memory;
  }
  size_t marker_count() const {
    ensure_lanes();
    return profile_.markers.size();
  }
  // the buffer drawn at a point of a memory lane (nullptr: none), and the one clicked
  const tg::viz::BufferLife* buffer_at(QPoint p) const;
  const tg::viz::BufferLife* selected_buffer() const { return sel_buffer_; }
  std::optional<QPoint> point_of_buffer(int64_t buffer, bool at_alloc) const;  // on its lane, if on screen
  // spans whose name contains `text` (case-insensitive) stay bright, the rest are dimmed; returns how many match
  size_t set_filter(const QString& text);
  size_t filter_matches() const { return filter_matches_; }
  // selects [t0, t1] (ns since the first event) and returns the totals by name of the kernel and range lanes in it
  std::vector<Total> select_interval(double t0, double t1);
  const std::vector<Total>& interval_totals() const { return totals_; }
  // Esc: clears the selected interval and the marked buffer; false when there was neither
  bool clear_marks();
  // the selected kernel run (a click, or the keys): index into Trace::kernel_events(), -1 none
  int64_t selected_run() const { return sel_run_; }
  // selects a run (-1: none), brings it into view when it is not, and says so (run_selected)
  void select_run(int64_t event);
  // Left/Right: the previous/next run on the selected run's lane (none selected: the first run in view);
  // Home/End: the lane's first/last. false when there is no such run
  bool step_run(int key);
  // F: the view fits the run's events (kernels, ranges, memory, contexts) with a small margin
  void fit();
  void zoom_by(double factor);  // + / -: around the view's centre
  // marks a buffer as a click on it does (0: none) and brings its life into view; false when no lane has it
  bool mark_buffer(int64_t buffer);
  const tg::viz::BufferLife* buffer_life(int64_t buffer) const;
  // a memory lane drawn as its buffers stacked over time, with a byte axis (a click on the lane's name toggles it)
  void set_memory_expanded(size_t mem_lane, bool on);
  bool memory_expanded(size_t mem_lane) const;
  // the tooltip a buffer shows: its users counted by kernel, mode and argument ("E_2 write@data0 ×10")
  QString buffer_tooltip(const tg::viz::BufferLife& b, double t) const;
  // the interval between two markers (end empty: the run's end) selected and in view; "" or what is wrong
  QString show_markers(const QString& start, const QString& end);

 signals:
  void selected(tv::Selection s);
  void open_kernel(qint64 context);  // a double click or Enter on a kernel run: its codegen context, in the graph
  void filter_changed(qulonglong matches);
  void run_selected(qlonglong event);  // a kernel run was selected (index into Trace::kernel_events()), -1: none
  void buffer_marked(qlonglong buffer);  // a buffer was marked (0: none)

 protected:
  void paintEvent(QPaintEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;

 private:
  struct Lane {
    QString name;
    std::vector<Span> spans;  // sorted, not overlapping
    int mem = -1;             // a memory lane: index into profile_.memory
    bool expanded = false;    // a memory lane: its buffers stacked (taller, with a byte axis)
    int y = 0, h = 0;         // its place
  };
  int plot_left() const { return 150; }
  int axis_h() const;  // the time axis, and below it a row for the markers' labels when there are markers
  // a buffer's place in the stacked view of its memory lane: from each time on, its offset in bytes from the bottom
  struct Band {
    const tg::viz::BufferLife* buffer;
    std::vector<std::pair<int64_t, int64_t>> offsets;  // (t, offset), by time, from t_alloc to t_free
  };
  // offsets past this many points are not computed: the lane says it has too many buffers to stack
  static constexpr size_t kMaxBandPoints = 4'000'000;
  mutable std::vector<char> bands_too_many_;
  void build_bands(size_t mem_lane) const;
  const tg::viz::BufferLife* band_at(const Lane& l, QPoint p) const;
  void paint_bands(QPainter& p, const Lane& l);
  void paint_byte_axis(QPainter& p, const Lane& l);
  size_t lane_of_run(int64_t event) const;  // the kernel lane that holds a run (kernel_lanes_: none)
  void mark_runs_of(const tg::viz::BufferLife* b);
  int lane_y(size_t lane) const { return lanes_[lane].y; }
  int lane_h(size_t lane) const { return lanes_[lane].h; }
  void place_lanes();
  QString span_name(const Span& s) const;
  void paint_memory(QPainter& p, const Lane& l);
  void paint_markers(QPainter& p);
  void paint_totals(QPainter& p);
  double x_of(double t) const { return plot_left() + (t - left_) / npp_; }
  void clamp_view();
  void ensure_lanes() const;  // builds the lanes of a new session if that has not happened yet
  void build_lanes();
  SessionPtr session_;
  bool pending_ = false;  // the session's lanes are not built yet
  std::vector<Lane> lanes_;
  size_t kernel_lanes_ = 0;    // the first lanes hold kernel events
  double total_ = 1;           // ns covered by the trace
  double left_ = 0, npp_ = 1;  // view: ns at the plot's left edge, ns per pixel
  bool whole_run_ = true;      // showing the whole run (kept through resizes)
  Selection sel_;
  std::optional<Span> hover_;
  QPoint press_;
  bool pressed_ = false, dragged_ = false;
  double paint_ms_ = 0;
  tg::viz::Profile profile_;
  const tg::viz::BufferLife* sel_buffer_ = nullptr;
  std::vector<size_t> sel_buffer_runs_;  // kernel events (indexes) that used the selected buffer, sorted
  QString filter_;
  size_t filter_matches_ = 0;
  bool interval_drag_ = false;
  double iv0_ = 0, iv1_ = 0;  // the selected interval, ns since the first event (iv1_ <= iv0_: none)
  std::vector<Total> totals_;
  int64_t sel_run_ = -1;
  mutable std::vector<std::vector<Band>> bands_;  // per memory lane, built when it is first expanded
};

}  // namespace tv
