// The tinyviz window: the context/step/match tree on the left, the tabs (Graph, Stats, Timeline, Code) in the
// centre, the rule panel on the right. It owns the one current Selection and keeps every view in step with it, the
// back/forward history, the keyboard navigation, opening/reloading traces and the error banner.
#pragma once
#include <QMainWindow>
#include <chrono>
#include <unordered_map>

#include "gui/frame_loader.h"
#include "gui/trace_model.h"

class QAction;
class QLabel;
class QLineEdit;
class QMenu;
class QTabWidget;
class QTimer;
class QToolButton;
class QCheckBox;
class QComboBox;
class QApplication;
class QSplitter;
class QStackedWidget;

namespace tv {

// the most characters of one name, label line or text a view shows (viz/reader/reader.h display_text): a context named by a
// million characters would otherwise take Qt's text layout minutes
constexpr size_t kShownTextLimit = 2000;


class CodeView;
class CompareView;
class GraphView;
class MessageBar;
class RulePanel;
class RunPanel;
class StatsView;
class TimelineView;
class TraceTree;

void apply_theme(QApplication& app);  // Fusion, dark palette, DejaVu fonts

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  enum Tab { GraphTab, StatsTab, TimelineTab, CodeTab, CompareTab };
  // restore=false: the defaults instead of the saved window layout and view options (screenshots, benchmarks)
  explicit MainWindow(QWidget* parent = nullptr, bool restore = true);
  ~MainWindow() override;

  // false: the error is shown in the window, the previous trace stays. Opens on `first` (a context or step of the
  // trace: the command line's --select) when it names one, else on the first step, so there is a graph at once
  bool open_trace(const QString& path, const Selection& first = {});
  // an error a user should see (a trace that cannot be read, a frame that cannot be built, an exception the event
  // loop caught): the banner shows it, error_shown() tells tests
  void report_error(const QString& text);
  void reload();
  // Live: while the trace is still being recorded (opened before its program finished, or --follow), it is read
  // again whenever its file grows (checked every interval_ms), keeping the selection, the tree's open rows and the
  // timeline's view; it stops when the program finishes the trace. refresh() is one such read
  // waiting_for: a trace that does not exist yet, opened once its program has created it
  void set_follow(bool on, int interval_ms = 1000, const QString& waiting_for = {});
  bool following() const;
  bool refresh();
  // the Compare tab: this trace beside another, aligned (File › Compare with…). Reads and diffs on workers while the
  // window keeps painting; false: the error is shown, the comparison before stays
  bool compare_with(const QString& path);
  void close_compare();
  void select(const Selection& s, bool record_history = true);
  const Selection& selection() const { return sel_; }
  void navigate(int key);  // Qt::Key_Up/Down: steps, Left/Right: matches
  void back();
  void forward();
  void show_tab(Tab t);
  void toggle_collapse(int64_t id);               // collapse a drawn node's sources into a placeholder, or expand them
  void expand_all();                              // every collapsed node of the frame, the automatic ones too
  void set_frame_options(const FrameOptions& o);  // redraws the selection with them
  void save_settings() const;                     // geometry, splitters, tab, view options (also on close)
  QSplitter* splitter() const { return split_; }
  QMenu* recent_menu() const { return recent_menu_; }
  QTabWidget* tabs() const { return tabs_; }
  bool idle() const;  // no frame, statistics or code still loading (screenshots wait for this)
  void set_first_frame_clock(std::chrono::steady_clock::time_point t0) { launch_ = t0, first_frame_done_ = false; }
  double last_frame_ms() const { return last_frame_ms_; }  // request -> drawn, of the last frame

  // the parts, for tests and screenshots
  TraceModel* model() const { return model_; }
  TraceFilter* filter() const { return filter_; }
  TraceTree* tree() const { return tree_; }
  GraphView* graph() const { return graph_; }
  StatsView* stats() const { return stats_; }
  TimelineView* timeline() const { return timeline_; }
  CodeView* code() const { return code_; }
  CompareView* compare() const { return compare_; }
  RulePanel* panel() const { return panel_; }
  RunPanel* run_panel() const { return run_panel_; }
  RulePanel* stats_panel() const { return stats_panel_; }
  QWidget* side_panel() const;  // the right panel the current tab shows
  MessageBar* message_bar() const { return msg_; }
  QString status_text() const;  // the status bar's trace line
  FrameLoader* loader() const { return loader_; }
  QLineEdit* search_box() const { return search_; }
  QLabel* search_hits() const { return search_hits_; }
  QComboBox* focus_box() const { return focus_box_; }
  QCheckBox* auto_collapse_box() const { return auto_collapse_box_; }
  QCheckBox* indexing_box() const { return indexing_box_; }
  QCheckBox* facts_box() const { return facts_box_; }
  QCheckBox* long_facts_box() const { return long_facts_box_; }
  QCheckBox* call_src_box() const { return call_src_box_; }
  QCheckBox* sink_box() const { return sink_box_; }
  void open_codegen(int64_t context);  // a kernel's codegen context, from a CALL or a kernel run (Alt+Left: back)
  const SessionPtr& session() const { return session_; }

 signals:
  void frame_shown();  // a frame (or a frame error) is on screen
  void error_shown(QString text);

 protected:
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;
  void closeEvent(QCloseEvent* e) override;

 private:
  template <class F>
  bool guard(F&& f);  // runs f; false when it threw (the error is shown)
  void select_unguarded(const Selection& s, bool record_history);
  void navigate_unguarded(int key);
  void build_menus();
  void restore_settings();
  QWidget* build_graph_tab();
  SessionPtr open_session(const QString& path, QString& error,
                          const Selection& first = {});  // on a worker, the event loop turning
  void set_session(SessionPtr s);
  void on_tree_current(const QModelIndex& proxy_index);
  void on_frame(FrameResultPtr r);
  void on_search(const QString& text);
  void update_frame_bar();
  void add_recent(const QString& path);
  void rebuild_recent_menu();
  bool step_visible(int64_t step) const;
  void expand_queued();
  void follow_tick();
  void arm_follow();  // starts the follow timer on the open trace
  int follow_interval_ = 1000;
  QString follow_path_;  // the trace --follow waits for
  QTimer* follow_timer_ = nullptr;
  bool follow_asked_ = false;        // --follow: follow even a trace that opened complete until it is reopened
  qint64 follow_stamp_ = -1;         // the file's and its WAL's size and time when last read
  void sync_side_panel();  // the right panel follows the tab: rule and node, kernel run, kernel, statistics' rule

  SessionPtr session_;
  Selection sel_;
  Selection opening_on_;  // open_trace's first selection, while it opens
  std::vector<Selection> history_;
  size_t history_pos_ = 0;
  bool syncing_tree_ = false, opening_ = false, comparing_ = false;
  std::unordered_map<int64_t, size_t> step_pos_;  // position in the tree's step order
  std::vector<int64_t> expand_queue_;             // steps a rule search opens, one per event-loop turn
  bool select_first_rule_hit_ = false;            // select the first match under the first step it opens

  TraceModel* model_;
  TraceFilter* filter_;
  TraceTree* tree_;
  QLineEdit* search_;
  QLabel* search_hits_;  // what the search found
  QTimer* search_timer_;
  QTabWidget* tabs_;
  QSplitter* split_;
  GraphView* graph_;
  StatsView* stats_;
  TimelineView* timeline_;
  QLineEdit* timeline_filter_ = nullptr;
  CodeView* code_;
  CompareView* compare_;
  RulePanel* panel_;
  RunPanel* run_panel_;
  RulePanel* stats_panel_;  // the Stats tab's selected rule
  QStackedWidget* side_;
  bool timeline_shows_run_ = false;   // the timeline's last click was a kernel run
  bool timeline_shows_span_ = false;  // ... or a context's or step's span (the selection's panel)
  MessageBar* msg_;
  FrameLoader* loader_;
  QLabel* frame_label_;
  QLineEdit* graph_find_;
  QCheckBox* fold_box_;
  QCheckBox* split_box_;
  QCheckBox* implied_box_;
  QCheckBox* column_box_;
  QCheckBox* auto_collapse_box_;
  QAction* kernel_colors_action_ = nullptr;
  QCheckBox* facts_box_;       // compiler facts under the labels
  QCheckBox* long_facts_box_;  // of those, INDEX expressions
  QCheckBox* indexing_box_;  // the reference's display toggles: r, c, s
  QCheckBox* call_src_box_;
  QCheckBox* sink_box_;
  QComboBox* focus_box_;
  QLabel* status_trace_;
  QLabel* status_frame_;
  QMenu* recent_menu_;

  std::chrono::steady_clock::time_point request_t0_, launch_, last_trim_;
  bool first_frame_done_ = true;
  double last_frame_ms_ = 0;
};

}  // namespace tv
