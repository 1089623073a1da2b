#include "gui/main_window.h"

#include <malloc.h>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPalette>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyleFactory>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWidgetAction>
#include <QDateTime>
#include <atomic>
#include <functional>
#include <thread>

#include "gui/ansi_text.h"
#include "gui/app.h"
#include "gui/async.h"
#include "gui/code_view.h"
#include "gui/compare_view.h"
#include "gui/graph_view.h"
#include "gui/message_bar.h"
#include "gui/rule_panel.h"
#include "gui/run_panel.h"
#include "gui/stats_view.h"
#include "gui/timeline_view.h"
#include "gui/trace_tree.h"

namespace tv {

using namespace tg::viz;

namespace {
// TINYVIZ_TIMING=1: where opening a trace spends its time, on stderr
struct Phase {
  const char* name;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  ~Phase() {
    if (std::getenv("TINYVIZ_TIMING"))
      std::fprintf(stderr, "tinyviz: %s %.1f ms\n", name,
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
};
}  // namespace

void apply_theme(QApplication& app) {
  app.setStyle(QStyleFactory::create("Fusion"));
  QPalette p;
  QColor bg(0x20, 0x22, 0x2e), base(0x17, 0x18, 0x22), text(0xdc, 0xde, 0xea), hi(0x3d, 0x5a, 0x9e);
  p.setColor(QPalette::Window, bg);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, bg);
  p.setColor(QPalette::ToolTipBase, QColor(0x2a, 0x2c, 0x3c));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, QColor(0x2a, 0x2c, 0x3a));
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::white);
  p.setColor(QPalette::Highlight, hi);
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::PlaceholderText, QColor(0x80, 0x84, 0x98));
  p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x70, 0x74, 0x88));
  p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x70, 0x74, 0x88));
  p.setColor(QPalette::Link, QColor(0x7a, 0xa2, 0xf7));
  app.setPalette(p);
  QFont f(QStringLiteral("DejaVu Sans"));
  f.setPointSizeF(9);
  app.setFont(f);
}

MainWindow::MainWindow(QWidget* parent, bool restore) : QMainWindow(parent) {
  tg::viz::set_display_text_limit(kShownTextLimit);  // (main() sets it first; a window made without it, in tests)
  setWindowTitle(tr("tinyviz"));
  setAcceptDrops(true);
  resize(1500, 900);
  loader_ = new FrameLoader(this);

  // left: search + tree
  auto* left = new QWidget(this);
  auto* ll = new QVBoxLayout(left);
  ll->setContentsMargins(4, 4, 0, 4);
  search_ = new QLineEdit(left);
  search_->setPlaceholderText(tr("Search contexts, steps, rules (file:line)…"));
  search_->setClearButtonEnabled(true);
  model_ = new TraceModel(this);
  filter_ = new TraceFilter(this);
  filter_->setSourceModel(model_);
  tree_ = new TraceTree(left);
  tree_->setModel(filter_);
  // (names: TraceTree's delegate, kernel names in their colours, the rest elided in the middle)
  tree_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  tree_->header()->setSectionResizeMode(1, QHeaderView::Interactive);
  tree_->header()->setSectionResizeMode(2, QHeaderView::Interactive);
  tree_->header()->resizeSection(1, 58);
  tree_->header()->resizeSection(2, 52);
  search_hits_ = new QLabel(left);
  search_hits_->setForegroundRole(QPalette::PlaceholderText);
  search_hits_->setVisible(false);
  ll->addWidget(search_);
  ll->addWidget(search_hits_);
  ll->addWidget(tree_, 1);
  search_timer_ = new QTimer(this);
  search_timer_->setSingleShot(true);
  search_timer_->setInterval(200);
  connect(search_, &QLineEdit::textChanged, this, [this] { search_timer_->start(); });
  connect(search_timer_, &QTimer::timeout, this, [this] { on_search(search_->text()); });

  // centre: tabs
  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  tabs_->addTab(build_graph_tab(), tr("Graph"));
  stats_ = new StatsView(this);
  tabs_->addTab(stats_, tr("Stats"));
  timeline_ = new TimelineView(this);
  {  // the timeline under a filter box: spans whose names do not match are dimmed
    auto* page = new QWidget(this);
    auto* v = new QVBoxLayout(page);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(2);
    auto* bar = new QHBoxLayout();
    bar->setContentsMargins(6, 4, 6, 0);
    timeline_filter_ = new QLineEdit(page);
    timeline_filter_->setPlaceholderText(tr("Filter spans by name"));
    timeline_filter_->setClearButtonEnabled(true);
    auto* hits = new QLabel(page);
    auto* help = new QLabel(tr("shift+drag: totals of an interval · Esc clears"), page);
    help->setStyleSheet("color: #8a8ea0;");
    bar->addWidget(timeline_filter_, 1);
    bar->addWidget(hits);
    bar->addWidget(help);
    v->addLayout(bar);
    v->addWidget(timeline_, 1);
    connect(timeline_filter_, &QLineEdit::textChanged, timeline_,
            [this](const QString& t) { timeline_->set_filter(t); });
    connect(timeline_, &TimelineView::filter_changed, hits, [this, hits](qulonglong n) {
      hits->setText(timeline_filter_->text().isEmpty() ? QString() : tr("%n span(s)", nullptr, (int)n));
    });
    tabs_->addTab(page, tr("Timeline"));
  }
  code_ = new CodeView(this);
  tabs_->addTab(code_, tr("Code"));
  compare_ = new CompareView(this);
  tabs_->addTab(compare_, tr("Compare"));
  tabs_->setTabVisible(CompareTab, false);

  // right: the panel of the tab shown (the rule panel explains the graph's selection, the run panel a kernel run or a
  // kernel, the stats panel the statistics' rule); beside the two compared graphs it only takes room
  side_ = new QStackedWidget(this);
  panel_ = new RulePanel(side_);
  run_panel_ = new RunPanel(timeline_, side_);
  stats_panel_ = new RulePanel(side_);
  stats_panel_->set_node_pane(false);
  side_->addWidget(panel_);
  side_->addWidget(run_panel_);
  side_->addWidget(stats_panel_);
  connect(tabs_, &QTabWidget::currentChanged, this, [this] { sync_side_panel(); });

  auto* split = split_ = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(tabs_);
  split->addWidget(side_);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setStretchFactor(2, 0);
  split->setSizes({430, 740, 380});

  auto* central = new QWidget(this);
  auto* cl = new QVBoxLayout(central);
  cl->setContentsMargins(0, 0, 0, 0);
  cl->setSpacing(0);
  msg_ = new MessageBar(central);
  cl->addWidget(msg_);
  cl->addWidget(split, 1);
  setCentralWidget(central);

  status_trace_ = new QLabel(this);
  status_frame_ = new QLabel(this);
  statusBar()->addWidget(status_trace_, 1);
  statusBar()->addPermanentWidget(status_frame_);

  build_menus();

  connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& cur) { on_tree_current(cur); });
  connect(tree_, &TraceTree::nav_key, this, &MainWindow::navigate);
  connect(graph_, &GraphView::nav_key, this, &MainWindow::navigate);
  connect(graph_, &GraphView::cancel_requested, loader_, &FrameLoader::cancel_layout);
  connect(graph_, &GraphView::node_clicked, this, [this](qint64 id) { panel_->show_node(graph_->frame(), id); });
  connect(panel_, &RulePanel::node_link, this, [this](qint64 id) {
    if (!graph_->reveal_node(id))
      statusBar()->showMessage(tr("Node %1 is not drawn (folded or filtered)").arg(id), 4000);
  });
  connect(graph_, &GraphView::collapse_requested, this, [this](qint64 id) { toggle_collapse(id); });
  connect(graph_, &GraphView::expand_all_requested, this, &MainWindow::expand_all);
  connect(graph_, &GraphView::open_context, this, [this](qint64 c) { open_codegen(c); });
  connect(loader_, &FrameLoader::frame_ready, this, &MainWindow::on_frame);
  connect(loader_, &FrameLoader::progress, graph_, &GraphView::set_progress);
  connect(loader_, &FrameLoader::frame_failed, this, [this](qint64 step, qulonglong frame, QString msg) {
    graph_->show_message(tr("Frame %1 of step %2 cannot be built:\n%3").arg(frame).arg(step).arg(msg));
    report_error(tr("Frame %1 of step %2 cannot be built: %3").arg(frame).arg(step).arg(msg));
    emit frame_shown();
  });
  // what the views could not read (queued: a model reports from inside a paint)
  connect(model_, &TraceModel::load_failed, this, &MainWindow::report_error, Qt::QueuedConnection);
  connect(stats_, &StatsView::load_failed, this, &MainWindow::report_error);
  connect(code_, &CodeView::load_failed, this, &MainWindow::report_error);
  connect(stats_, &StatsView::jump, this, [this](Selection s) {
    select(s);
    show_tab(GraphTab);
  });
  connect(timeline_, &TimelineView::selected, this, [this](Selection s) {
    timeline_shows_run_ = timeline_->selected_run() >= 0;
    timeline_shows_span_ = !timeline_shows_run_;
    select(s);
    sync_side_panel();
  });
  connect(timeline_, &TimelineView::run_selected, this, [this](qlonglong ev) {
    timeline_shows_run_ = ev >= 0;
    if (ev >= 0) {
      const auto& k = session_->ui().kernel_events()[(size_t)ev];
      const tg::viz::ProgramRow* p = k.program ? session_->ui().program(k.program) : nullptr;
      if (p && p->context) select({p->context, 0, 0});
    }
    sync_side_panel();
  });
  connect(timeline_, &TimelineView::buffer_marked, this, [this] {
    if (timeline_shows_run_) run_panel_->show_run(timeline_->selected_run());
  });
  connect(run_panel_, &RunPanel::open_buffer, this, [this](qlonglong b) {
    show_tab(TimelineTab);
    timeline_->mark_buffer(b);
  });
  connect(run_panel_, &RunPanel::open_run, this, [this](qlonglong ev) {
    show_tab(TimelineTab);
    timeline_->select_run(ev);
  });
  connect(run_panel_, &RunPanel::open_source, this, [this](qlonglong c) {
    select({c, 0, 0});
    show_tab(CodeTab);
  });
  connect(run_panel_, &RunPanel::open_graph, this, [this](qlonglong c) { open_codegen(c); });
  connect(stats_, &StatsView::rule_shown, this, [this](qlonglong r) { stats_panel_->show_rule(r); });
  connect(compare_, &CompareView::open_in_trace, this, [this](Selection s) {
    select(s);
    show_tab(GraphTab);
  });
  connect(compare_, &CompareView::load_failed, this, &MainWindow::report_error);
  connect(timeline_, &TimelineView::open_kernel, this, [this](qint64 c) { open_codegen(c); });
  graph_->show_message(tr("Open a trace: File › Open (Ctrl+O), drop a file here, or run  tinyviz TRACE"));
  if (restore) restore_settings();
  sync_side_panel();
}

// QSettings("tinygrad-cpp", "tinyviz"): window geometry and state, the splitters, the last tab, the graph's view
// options, and (add_recent) the recent files. Written when the window closes.
void MainWindow::restore_settings() {
  QSettings st("tinygrad-cpp", "tinyviz");
  if (QByteArray g = st.value("window/geometry").toByteArray(); !g.isEmpty()) restoreGeometry(g);
  if (QByteArray g = st.value("window/state").toByteArray(); !g.isEmpty()) restoreState(g);
  if (QByteArray g = st.value("window/splitter").toByteArray(); !g.isEmpty()) split_->restoreState(g);
  if (QByteArray g = st.value("window/stats_splitter").toByteArray(); !g.isEmpty()) stats_->splitter()->restoreState(g);
  int tab = st.value("window/tab", 0).toInt();
  if (tab >= 0 && tab < CompareTab) tabs_->setCurrentIndex(tab);  // the Compare tab shows with a comparison only
  QSignalBlocker b1(fold_box_), b2(split_box_), b3(auto_collapse_box_), b4(indexing_box_), b5(call_src_box_),
      b6(sink_box_), b7(implied_box_), b8(column_box_), b9(facts_box_), b10(long_facts_box_);
  fold_box_->setChecked(st.value("view/fold_consts", true).toBool());
  split_box_->setChecked(st.value("view/split_leaves", true).toBool());
  implied_box_->setChecked(st.value("view/hide_implied_edges", true).toBool());
  column_box_->setChecked(st.value("view/linear_as_column", true).toBool());
  auto_collapse_box_->setChecked(st.value("view/collapse_big_graphs", true).toBool());
  indexing_box_->setChecked(st.value("view/show_indexing", true).toBool());
  call_src_box_->setChecked(st.value("view/show_call_src", false).toBool());
  sink_box_->setChecked(st.value("view/show_sink", false).toBool());
  kernel_colors_action_->setChecked(st.value("view/kernel_colors", true).toBool());
  facts_box_->setChecked(st.value("view/label_facts", true).toBool());
  long_facts_box_->setChecked(st.value("view/long_label_facts", true).toBool());
  FrameOptions o = loader_->options();
  o.label_facts = facts_box_->isChecked(), o.long_facts = long_facts_box_->isChecked();
  o.fold_consts = fold_box_->isChecked(), o.split_leaves = split_box_->isChecked();
  o.show_indexing = indexing_box_->isChecked(), o.show_call_src = call_src_box_->isChecked();
  o.show_sink = sink_box_->isChecked();
  o.auto_collapse = auto_collapse_box_->isChecked();
  o.hide_implied_edges = implied_box_->isChecked();
  o.linear_as_column = column_box_->isChecked();
  loader_->set_options(o);
}

void MainWindow::save_settings() const {
  QSettings st("tinygrad-cpp", "tinyviz");
  st.setValue("window/geometry", saveGeometry());
  st.setValue("window/state", saveState());
  st.setValue("window/splitter", split_->saveState());
  st.setValue("window/stats_splitter", stats_->splitter()->saveState());
  st.setValue("window/tab", tabs_->currentIndex());
  st.setValue("view/fold_consts", fold_box_->isChecked());
  st.setValue("view/split_leaves", split_box_->isChecked());
  st.setValue("view/hide_implied_edges", implied_box_->isChecked());
  st.setValue("view/linear_as_column", column_box_->isChecked());
  st.setValue("view/collapse_big_graphs", auto_collapse_box_->isChecked());
  st.setValue("view/show_indexing", indexing_box_->isChecked());
  st.setValue("view/show_call_src", call_src_box_->isChecked());
  st.setValue("view/show_sink", sink_box_->isChecked());
  st.setValue("view/label_facts", facts_box_->isChecked());
  st.setValue("view/kernel_colors", kernel_colors_action_->isChecked());
  st.setValue("view/long_label_facts", long_facts_box_->isChecked());
}

MainWindow::~MainWindow() = default;

QWidget* MainWindow::build_graph_tab() {
  auto* w = new QWidget(this);
  auto* lay = new QVBoxLayout(w);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  auto* bar = new QWidget(w);
  auto* bl = new QHBoxLayout(bar);
  bl->setContentsMargins(6, 3, 6, 3);
  auto button = [&](const QString& text, const QString& tip, auto fn) {
    auto* b = new QToolButton(bar);
    b->setText(text);
    b->setToolTip(tip);
    b->setAutoRaise(true);
    connect(b, &QToolButton::clicked, this, fn);
    bl->addWidget(b);
    return b;
  };
  button("◀", tr("Previous match (Left)"), [this] { navigate(Qt::Key_Left); });
  frame_label_ = new QLabel(bar);
  frame_label_->setMinimumWidth(150);
  frame_label_->setAlignment(Qt::AlignCenter);
  bl->addWidget(frame_label_);
  button("▶", tr("Next match (Right)"), [this] { navigate(Qt::Key_Right); });
  bl->addSpacing(12);
  button(tr("Fit"), tr("Fit the graph in the view (F)"), [this] { graph_->fit(); });
  bl->addSpacing(12);
  fold_box_ = new QCheckBox(tr("Fold consts"), bar);
  fold_box_->setChecked(true);
  fold_box_->setToolTip(tr("Draw CONST sources inside their users' labels instead of as shared nodes"));
  split_box_ = new QCheckBox(tr("Split shared leaves"), bar);
  split_box_->setChecked(true);
  split_box_->setToolTip(tr("Draw leaves with 3 or more users once per user instead of with long edges"));
  implied_box_ = new QCheckBox(tr("Hide implied edges"), bar);
  implied_box_->setChecked(true);
  implied_box_->setToolTip(
      tr("A node with 8 or more drawn sources (a schedule's LINEAR, a SINK) draws no edge to a "
         "source that another of its sources reaches; its label counts them"));
  column_box_ = new QCheckBox(tr("LINEAR as a column"), bar);
  column_box_->setChecked(true);
  column_box_->setToolTip(
      tr("A LINEAR with 8 or more drawn sources (a program's calls) draws them in a column in "
         "their order, linked by dashed \"runs after\" edges, instead of in one row"));
  focus_box_ = new QComboBox(bar);
  focus_box_->addItem(tr("Whole graph"), 0);
  for (int hops : {2, 4, 8}) focus_box_->addItem(tr("Match ±%1").arg(hops), hops);
  focus_box_->setToolTip(
      tr("Draw only the nodes within this many edges of what the match touched (on frame 0: of the "
         "node the first match rewrites); boundary nodes count what is hidden"));
  auto_collapse_box_ = new QCheckBox(tr("Collapse big graphs"), bar);
  auto_collapse_box_->setChecked(true);
  auto_collapse_box_->setToolTip(tr("A graph of more than %1 drawn nodes starts with its biggest private subtrees "
                                    "collapsed (what the match changed stays open). X or the context menu collapses "
                                    "or expands a node's sources")
                                     .arg(kAutoCollapseAbove));
  facts_box_ = new QCheckBox(tr("Compiler facts in labels"), bar);
  facts_box_->setChecked(true);
  facts_box_->setToolTip(tr("Under each label, as the reference's VIZ: the ranges the node lies in, the ranges an END or "
                            "REDUCE closes with their sizes, an INDEX's ranges with their sizes; the address space "
                            "as a square (green global, yellow local, red register, grey ALU)"));
  long_facts_box_ = new QCheckBox(tr("INDEX expressions"), bar);
  long_facts_box_->setChecked(true);
  long_facts_box_->setToolTip(tr("An INDEX's rendered index expression under its label (under 30 nodes)"));
  // the reference VIZ's toggles, with its keys and defaults
  indexing_box_ = new QCheckBox(tr("Indexing"), bar);
  indexing_box_->setChecked(true);
  indexing_box_->setToolTip(tr("Show indexing: the nodes of dtype weakint (r)"));
  call_src_box_ = new QCheckBox(tr("CALL src"), bar);
  call_src_box_->setChecked(false);
  call_src_box_->setToolTip(
      tr("Show every CALL's kernel body; off, a CALL is one node with its buffers and X on a "
         "CALL shows or hides its body alone. Enter or a double click opens its kernel (c)"));
  sink_box_ = new QCheckBox(tr("SINK"), bar);
  sink_box_->setChecked(false);
  sink_box_->setToolTip(tr("Show a SINK nothing uses (s)"));
  auto apply = [this] {
    FrameOptions o = loader_->options();
    o.fold_consts = fold_box_->isChecked(), o.split_leaves = split_box_->isChecked();
    o.focus_hops = focus_box_->currentData().toInt();
    o.auto_collapse = auto_collapse_box_->isChecked();
    o.hide_implied_edges = implied_box_->isChecked();
    o.linear_as_column = column_box_->isChecked();
    o.show_indexing = indexing_box_->isChecked(), o.show_sink = sink_box_->isChecked();
    o.label_facts = facts_box_->isChecked(), o.long_facts = long_facts_box_->isChecked();
    if (o.show_call_src != call_src_box_->isChecked() && graph_->frame()) {
      // as the reference: switching every body on or off forgets the CALLs toggled one by one
      for (const GNode& g : graph_->frame()->graph->nodes)
        if (g.op == "CALL" || g.op == "FUNCTION" || g.op == "PROGRAM")
          o.collapsed.erase(g.key.id), o.expanded.erase(g.key.id);
    }
    o.show_call_src = call_src_box_->isChecked();
    set_frame_options(o);
  };
  // the reference's toggles stay in the bar; the graph's own drawing options go in a menu, so the bar fits beside
  // the tree at the default width
  for (QCheckBox* c : {indexing_box_, call_src_box_, sink_box_}) bl->addWidget(c);
  auto* more = new QToolButton(bar);
  more->setText(tr("Drawing"));
  more->setToolTip(
      tr("How the graph is drawn: consts folded into their users, shared leaves split, implied edges "
         "hidden, big graphs collapsed"));
  more->setPopupMode(QToolButton::InstantPopup);
  more->setAutoRaise(true);
  auto* menu = new QMenu(more);
  for (QCheckBox* c :
       {fold_box_, split_box_, implied_box_, column_box_, auto_collapse_box_, facts_box_, long_facts_box_}) {
    auto* wa = new QWidgetAction(menu);
    c->setParent(menu);
    c->setContentsMargins(8, 2, 8, 2);
    wa->setDefaultWidget(c);
    menu->addAction(wa);
  }
  more->setMenu(menu);
  bl->addWidget(more);
  for (QCheckBox* c :
       {fold_box_, split_box_, implied_box_, column_box_, auto_collapse_box_, indexing_box_, call_src_box_, sink_box_,
        facts_box_, long_facts_box_})
    connect(c, &QCheckBox::toggled, this, apply);
  bl->addWidget(focus_box_);
  connect(focus_box_, &QComboBox::currentIndexChanged, this, apply);
  bl->addStretch(1);
  graph_find_ = new QLineEdit(bar);
  graph_find_->setPlaceholderText(tr("Find node: op, dtype, arg, id"));
  graph_find_->setClearButtonEnabled(true);
  graph_find_->setMinimumWidth(100);
  graph_find_->setMaximumWidth(240);
  connect(graph_find_, &QLineEdit::textChanged, this, [this](const QString& t) {
    int n = graph_->find_nodes(t);
    status_frame_->setText(t.isEmpty() ? QString() : tr("%1 nodes match “%2” (Enter: next)").arg(n).arg(t));
  });
  connect(graph_find_, &QLineEdit::returnPressed, this, [this] { graph_->find_nodes(graph_find_->text()); });
  bl->addWidget(graph_find_);
  graph_ = new GraphView(w);
  lay->addWidget(bar);
  lay->addWidget(graph_, 1);
  return w;
}

void MainWindow::set_frame_options(const FrameOptions& o) {
  if (o == loader_->options()) return;
  loader_->set_options(o);
  compare_->set_frame_options(o);
  if (sel_.step || sel_.context) {
    Selection s = sel_;
    sel_ = {};
    select(s, false);
  }
}

void MainWindow::toggle_collapse(int64_t id) {
  if (!id) return;
  FrameOptions o = loader_->options();
  if (graph_->is_collapsed(id)) {
    o.collapsed.erase(id);
    o.expanded.insert(id);
    status_frame_->setText(tr("Expanded the sources of node %1").arg(id));
  } else {
    o.expanded.erase(id);
    o.collapsed.insert(id);
    status_frame_->setText(tr("Collapsed the sources of node %1 (X expands them)").arg(id));
  }
  set_frame_options(o);
}

void MainWindow::expand_all() {
  FrameOptions o = loader_->options();
  o.collapsed.clear();
  if (graph_->frame())
    for (int64_t id : graph_->frame()->graph->auto_collapsed) o.expanded.insert(id);
  set_frame_options(o);
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
    QString p = QFileDialog::getOpenFileName(this, tr("Open a trace"), QString(),
                                             tr("Traces (*.db *.trace *.sqlite);;All files (*)"));
    if (!p.isEmpty()) open_trace(p);
  });
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  rebuild_recent_menu();
  file->addAction(tr("&Reload"), QKeySequence(Qt::Key_F5), this, &MainWindow::reload);
  file->addSeparator();
  file->addAction(tr("&Compare with…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this] {
    if (!session_) return report_error(tr("Open a trace first: the comparison puts another one beside it."));
    QString p = QFileDialog::getOpenFileName(this, tr("Compare with a trace"), QString(),
                                             tr("Traces (*.db *.trace *.sqlite);;All files (*)"));
    if (!p.isEmpty()) compare_with(p);
  });
  file->addAction(tr("Close comparison"), this, &MainWindow::close_compare);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  // F and +/- act on the tab shown: the graph, or the timeline
  view->addAction(tr("&Fit"), QKeySequence(Qt::Key_F), this, [this] {
    if (tabs_->currentIndex() == TimelineTab) return timeline_->fit();
    graph_->fit();
  });
  view->addAction(tr("Zoom &in"), QKeySequence::ZoomIn, this, [this] {
    if (tabs_->currentIndex() == TimelineTab) return timeline_->zoom_by(1.25);
    graph_->zoom_by(1.25);
  });
  view->addAction(tr("Zoom &out"), QKeySequence::ZoomOut, this, [this] {
    if (tabs_->currentIndex() == TimelineTab) return timeline_->zoom_by(0.8);
    graph_->zoom_by(0.8);
  });
  view->addAction(tr("&Relayout with Graphviz"), QKeySequence(Qt::Key_L), this, [this] { loader_->relayout(); });
  // Esc is the window's: on the timeline it clears the interval and the marked buffer (the timeline's own key handler
  // never sees it), elsewhere it cancels a running layout
  view->addAction(tr("&Cancel layout"), QKeySequence(Qt::Key_Escape), this, [this] {
    if (timeline_->isVisible() && timeline_->clear_marks()) return;
    loader_->cancel_layout();
  });
  view->addAction(tr("C&ollapse / expand the selected node's sources"), QKeySequence(Qt::Key_X), this,
                  [this] { toggle_collapse(graph_->selected_node()); });
  view->addAction(tr("E&xpand everything"), QKeySequence(Qt::SHIFT | Qt::Key_X), this, &MainWindow::expand_all);
  view->addSeparator();
  view->addAction(tr("Show &indexing"), QKeySequence(Qt::Key_R), this, [this] { indexing_box_->toggle(); });
  view->addAction(tr("Show all CALL s&rc"), QKeySequence(Qt::Key_C), this, [this] { call_src_box_->toggle(); });
  view->addAction(tr("Show SIN&K"), QKeySequence(Qt::Key_S), this, [this] { sink_box_->toggle(); });
  view->addSeparator();
  QAction* colors = view->addAction(tr("&Kernel-name colours"));
  colors->setCheckable(true);
  colors->setChecked(kernel_colors());
  colors->setToolTip(tr("Kernel names in the reference's colours: each dimension by its axis type (global blue, local "
                        "cyan, reduce red, upcast yellow, unroll magenta)"));
  connect(colors, &QAction::toggled, this, [this](bool on) {
    set_kernel_colors(on);
    tree_->viewport()->update();
    graph_->viewport()->update();
    if (run_panel_->run() >= 0) run_panel_->show_run(run_panel_->run());
  });
  kernel_colors_action_ = colors;
  view->addSeparator();
  view->addAction(tr("&Search the tree"), QKeySequence::Find, this, [this] {
    search_->setFocus();
    search_->selectAll();
  });
  view->addAction(tr("Find &node in graph"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F), this, [this] {
    show_tab(GraphTab);
    graph_find_->setFocus();
    graph_find_->selectAll();
  });
  view->addSeparator();
  const char* tabs[] = {"&Graph", "&Stats", "&Timeline", "&Code", "Co&mpare"};
  for (int i = 0; i < 5; i++)
    view->addAction(tr(tabs[i]), QKeySequence(Qt::CTRL | (Qt::Key_1 + i)), this, [this, i] { show_tab((Tab)i); });

  QMenu* go = menuBar()->addMenu(tr("&Go"));
  go->addAction(tr("&Back"), QKeySequence(Qt::ALT | Qt::Key_Left), this, &MainWindow::back);
  go->addAction(tr("&Forward"), QKeySequence(Qt::ALT | Qt::Key_Right), this, &MainWindow::forward);
  go->addSeparator();
  go->addAction(tr("Next step\tDown"), this, [this] { navigate(Qt::Key_Down); });
  go->addAction(tr("Previous step\tUp"), this, [this] { navigate(Qt::Key_Up); });
  go->addAction(tr("Next match\tRight"), this, [this] { navigate(Qt::Key_Right); });
  go->addAction(tr("Previous match\tLeft"), this, [this] { navigate(Qt::Key_Left); });
  go->addSeparator();
  auto divergence = [this](int how) {
    if (!compare_->active()) return statusBar()->showMessage(tr("No comparison: File › Compare with…"), 4000);
    show_tab(CompareTab);
    bool found = how == 0 ? compare_->first_divergence() : compare_->next_divergence(how);
    if (!found)
      statusBar()->showMessage(how == 0 ? tr("The traces do not diverge") : tr("No divergence that way"), 4000);
  };
  go->addAction(tr("First divergence"), QKeySequence(Qt::CTRL | Qt::Key_F8), this, [divergence] { divergence(0); });
  go->addAction(tr("Next divergence"), QKeySequence(Qt::Key_F8), this, [divergence] { divergence(1); });
  go->addAction(tr("Previous divergence"), QKeySequence(Qt::SHIFT | Qt::Key_F8), this,
                [divergence] { divergence(-1); });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Keys"), this, [this] {
    QMessageBox::information(
        this, tr("tinyviz keys"),
        tr("Up / Down\tprevious / next step\nLeft / Right\tprevious / next match (frame)\nEnter\texpand / collapse\n"
           "F\tfit the graph (on the timeline: the run's events)\nWheel, + / -\tzoom\nDrag\tpan\n"
           "Click a node\tits sources (blue) and users (orange)\n"
           "Timeline: click a run\tits details in the right panel\nTimeline: Left / Right, Home / End\t"
           "previous / next run on its lane, the first / last\n"
           "Timeline: click a memory lane's name\tits buffers stacked, with a byte axis\n"
           "L\trelayout with Graphviz\nEsc\tstop waiting for Graphviz\n"
           "X\tcollapse / expand the selected node's sources (a CALL: its kernel body)\nShift+X\texpand everything\n"
           "r / c / s\tshow indexing / every CALL's kernel body / a SINK nothing uses\n"
           "Enter, double click\ton a CALL: open its kernel's codegen\nAlt+Left / Right\tback / forward\n"
           "Ctrl+F\tsearch the tree\nCtrl+Shift+F\tfind a node in the graph\nF5\treload the trace\n"
           "Ctrl+1..5\tGraph, Stats, Timeline, Code, Compare\n"
           "Ctrl+Shift+O\tcompare with another trace\nCtrl+F8\tits first divergence\n"
           "F8 / Shift+F8\tthe next / previous divergent step"));
  });
}

QWidget* MainWindow::side_panel() const { return side_->currentWidget(); }

void MainWindow::sync_side_panel() {
  int tab = tabs_->currentIndex();
  side_->setVisible(tab != CompareTab);
  split_->widget(0)->setVisible(tab != CompareTab);  // the Compare tab has its own tree: the graphs get the width
  panel_->set_node_pane(tab == GraphTab);
  if (tab == StatsTab) {
    if (!stats_->shown_rule()) stats_panel_->show_rule(0);
    side_->setCurrentWidget(stats_panel_);
  } else if (tab == TimelineTab && timeline_shows_run_ && timeline_->selected_run() >= 0) {
    if (run_panel_->run() != timeline_->selected_run()) run_panel_->show_run(timeline_->selected_run());
    side_->setCurrentWidget(run_panel_);
  } else if (tab == TimelineTab && !timeline_shows_span_) {  // nothing of the timeline's clicked yet
    run_panel_->show_hint(tr("Click a kernel run for its details: times, GFLOPS, launch dims, the buffers it read and "
                             "wrote. Left/Right then walk its lane's runs. Click a rewrite span for its step, a memory "
                             "lane's name for its buffers."));
    side_->setCurrentWidget(run_panel_);
  } else if (tab == CodeTab) {
    run_panel_->show_program(sel_.context);
    side_->setCurrentWidget(run_panel_);
  } else {
    side_->setCurrentWidget(panel_);
  }
}

void MainWindow::show_tab(Tab t) {
  if (t == CompareTab && !compare_->active())
    return statusBar()->showMessage(tr("No comparison: File › Compare with… (Ctrl+Shift+O)"), 4000);
  tabs_->setCurrentIndex((int)t);
}

void MainWindow::report_error(const QString& text) {
  msg_->show_error(text);
  emit error_shown(text);
}

// Reading a trace's contexts, steps and kernels takes 60-110 ms on a training run: done on a thread of its own while
// this waits in a local event loop, so the window keeps painting (user input waits the few hundred ms).
SessionPtr MainWindow::open_session(const QString& path, QString& error, const Selection& first) {
  Phase p{"open trace"};
  struct Result {
    SessionPtr s;
    QString error;
  };
  auto r = std::make_shared<Result>();
  std::string file = path.toStdString();
  QEventLoop loop;
  QPointer<QEventLoop> guard(&loop);
  auto done = std::make_shared<std::atomic<bool>>(false);
  int64_t warm_step = first.step;
  size_t warm_frame = first.frame;
  std::thread([r, file, done, guard, warm_step, warm_frame] {
    try {
      r->s = TraceSession::open(file, warm_step, warm_frame);
    } catch (...) {
      r->error = App::describe(std::current_exception());
    }
    done->store(true);
    QMetaObject::invokeMethod(
        qApp,
        [guard] {
          if (guard) guard->quit();
        },
        Qt::QueuedConnection);
  }).detach();
  status_trace_->setText(tr("Opening %1…").arg(path));
  if (!done->load()) loop.exec(QEventLoop::ExcludeUserInputEvents);
  error = r->error;
  return r->s;
}

bool MainWindow::open_trace(const QString& path, const Selection& first) {
  if (opening_) return false;  // a second open while the first one reads
  opening_ = true;
  QString error;
  SessionPtr s = open_session(path, error, first);
  opening_ = false;
  if (!s) {
    status_trace_->setText(session_ ? QString::fromStdString(session_->path()) : QString());
    report_error(error);
    if (!session_) graph_->show_message(tr("No trace open.\n%1").arg(error));
    emit frame_shown();
    return false;
  }
  msg_->hide();
  opening_on_ = first;
  if (follow_timer_ && !follow_asked_) follow_timer_->stop();
  bool set = guard([&] { set_session(s); });
  opening_on_ = {};
  if (!set) return false;
  // a trace still being recorded grows in the window as it is written
  if ((!s->ui().complete() && !s->ui().truncated()) || follow_asked_) arm_follow();
  add_recent(QFileInfo(path).absoluteFilePath());
  // start on the first step, so there is a graph at once; or straight on the selection asked for, so no frame of the
  // first step is built and laid out on the way (the workers do one frame at a time)
  guard([&] {
    const auto& order = model_->step_order();
    bool known = false;
    try {
      if (first.step)
        known = session_->ui().step(first.step).id == first.step;
      else if (first.context)
        known = session_->ui().context(first.context).id == first.context;
    } catch (...) {  // not in this trace: the caller reports it
    }
    if (known)
      select(first);
    else if (!order.empty())
      select({session_->ui().step(order.front()).context, order.front(), 0});
    else if (!session_->ui().contexts().empty())
      select({session_->ui().contexts().front().id, 0, 0});
    else
      graph_->show_message(tr("The trace has no rewrite steps yet."));
  });
  return true;
}

namespace {
qint64 file_stamp(const QString& path) {  // changes when the trace or its write-ahead log is written
  qint64 s = 0;
  for (const QString& p : {path, path + "-wal"}) {
    QFileInfo f(p);
    if (f.exists()) s += f.size() * 31 + f.lastModified().toMSecsSinceEpoch();
  }
  return s;
}
}  // namespace

void MainWindow::set_follow(bool on, int interval_ms, const QString& waiting_for) {
  follow_asked_ = on;
  follow_interval_ = interval_ms;
  follow_path_ = waiting_for;
  if (on && (session_ || !follow_path_.isEmpty()))
    arm_follow();
  else if (!on && follow_timer_)
    follow_timer_->stop();
}

void MainWindow::arm_follow() {
  if (!follow_timer_) {
    follow_timer_ = new QTimer(this);
    connect(follow_timer_, &QTimer::timeout, this, &MainWindow::follow_tick);
  }
  follow_timer_->setInterval(follow_interval_);
  follow_stamp_ = file_stamp(session_ ? QString::fromStdString(session_->path()) : follow_path_);
  follow_timer_->start();
  status_trace_->setText(status_trace_->text().replace(tr("incomplete (F5 reloads)"), tr("live: being recorded")));
}

bool MainWindow::following() const { return follow_timer_ && follow_timer_->isActive(); }

void MainWindow::follow_tick() {
  if (opening_) return;
  if (!session_ || (follow_path_.size() && QString::fromStdString(session_->path()) != follow_path_ &&
                    QFileInfo(QString::fromStdString(session_->path())) != QFileInfo(follow_path_))) {
    // --follow on a trace its program has not written yet: open it once it reads
    if (follow_path_.isEmpty() || !QFileInfo::exists(follow_path_)) return;
    QString error;
    opening_ = true;
    SessionPtr s = open_session(follow_path_, error);
    opening_ = false;
    if (!s) return;  // not a trace yet (the writer is creating it): the next tick tries again
    s.reset();
    open_trace(follow_path_);
    return;
  }
  QString path = QString::fromStdString(session_->path());
  qint64 stamp = file_stamp(path);
  if (stamp == follow_stamp_) return;
  follow_stamp_ = stamp;
  refresh();
  if (session_ && (session_->ui().complete() || session_->ui().truncated()) && !follow_asked_)
    follow_timer_->stop();  // the program finished it, or its recording stopped
}

QString MainWindow::status_text() const { return status_trace_->text(); }

bool MainWindow::refresh() {
  if (!session_ || opening_) return false;
  if (compare_->active()) {  // a new session would end the comparison: the trace is read again once it is closed
    statusBar()->showMessage(tr("Live: the trace grew; it is read again when the comparison is closed"), 3000);
    follow_stamp_ = -1;
    return false;
  }
  QString path = QString::fromStdString(session_->path());
  Selection keep = sel_;
  QString search = search_->text();  // the search typed goes on filtering what comes in
  // the rows open in the tree, by what they show
  std::vector<Selection> open_rows;
  std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
    for (int r = 0; r < filter_->rowCount(parent); r++) {
      QModelIndex i = filter_->index(r, 0, parent);
      if (!tree_->isExpanded(i)) continue;
      open_rows.push_back(model_->selection_of(filter_->mapToSource(i)));
      walk(i);
    }
  };
  walk({});
  auto [l, r] = timeline_->visible_range();
  bool whole = timeline_->whole_run();
  int tab = tabs_->currentIndex();
  opening_ = true;
  QString error;
  SessionPtr s = open_session(path, error);
  opening_ = false;
  if (!s) {  // a half-written file can fail to read: the next tick tries again
    statusBar()->showMessage(tr("Live: %1").arg(error), 3000);
    return false;
  }
  if (!guard([&] { set_session(s); })) return false;
  if (!search.isEmpty()) search_->setText(search);
  for (const Selection& o : open_rows) {
    QModelIndex src = model_->index_of(o);
    if (src.isValid()) tree_->expand(filter_->mapFromSource(src));
  }
  sel_ = {};
  select(keep.step || keep.context ? keep : Selection{}, false);
  if (!sel_.step && !sel_.context && !model_->step_order().empty())
    select({s->ui().step(model_->step_order().front()).context, model_->step_order().front(), 0}, false);
  if (!whole) timeline_->show_range(l, r);
  tabs_->setCurrentIndex(tab);
  return true;
}

void MainWindow::reload() {
  if (!session_) return;
  QString path = QString::fromStdString(session_->path());
  Selection keep = sel_;
  if (opening_) return;
  opening_ = true;
  QString error;
  SessionPtr s = open_session(path, error);
  opening_ = false;
  if (!s) {
    report_error(tr("Reload failed: %1").arg(error));
    return;
  }
  guard([&] { set_session(s); });
  msg_->show_info(tr("Reloaded %1: %2 contexts, %3 steps%4")
                      .arg(path)
                      .arg(s->ui().contexts().size())
                      .arg(s->ui().steps().size())
                      .arg(s->ui().complete()    ? QString()
                           : s->ui().truncated() ? tr(" (truncated: recording stopped early)")
                                                 : tr(" (still being written)")));
  sel_ = {};
  select(keep.step || keep.context ? keep : Selection{}, false);
  if (!sel_.step && !model_->step_order().empty())
    select({s->ui().step(model_->step_order().front()).context, model_->step_order().front(), 0}, false);
}

// The other trace's session and the diff of the two files are made on a thread of their own (a diff of two training
// runs reads every match of both: seconds), while this waits in a local event loop so the window keeps painting.
bool MainWindow::compare_with(const QString& path) {
  if (!session_) {
    report_error(tr("Open a trace first: the comparison puts another one beside it."));
    return false;
  }
  if (comparing_ || opening_) return false;
  comparing_ = true;
  struct Result {
    SessionPtr b;
    std::shared_ptr<const TraceDiff> diff;
    QString error;
  };
  auto r = std::make_shared<Result>();
  std::string a_path = session_->path(), b_path = path.toStdString();
  QEventLoop loop;
  QPointer<QEventLoop> guard_loop(&loop);
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([r, a_path, b_path, done, guard_loop] {
    try {
      r->b = TraceSession::open(b_path);
      auto ta = Trace::open(a_path), tb = Trace::open(b_path);
      r->diff = std::make_shared<const TraceDiff>(diff_traces(*ta, *tb));
    } catch (...) {
      r->error = App::describe(std::current_exception());
    }
    done->store(true);
    QMetaObject::invokeMethod(
        qApp,
        [guard_loop] {
          if (guard_loop) guard_loop->quit();
        },
        Qt::QueuedConnection);
  }).detach();
  statusBar()->showMessage(tr("Comparing with %1…").arg(path));
  if (!done->load()) loop.exec(QEventLoop::ExcludeUserInputEvents);
  comparing_ = false;
  statusBar()->clearMessage();
  if (!r->error.isEmpty() || !r->diff) {
    report_error(tr("Cannot compare with %1: %2").arg(path, r->error));
    return false;
  }
  return guard([&] {
    compare_->set_frame_options(loader_->options());
    compare_->set_compare(session_, r->b, r->diff);
    stats_->set_compare(r->diff.get());
    tabs_->setTabVisible(CompareTab, true);
    show_tab(CompareTab);
    compare_->first_divergence();
  });
}

void MainWindow::close_compare() {
  compare_->clear();
  stats_->set_compare(nullptr);
  tabs_->setTabVisible(CompareTab, false);
}

void MainWindow::set_session(SessionPtr s) {
  if (compare_->active()) close_compare();
  session_ = std::move(s);
  sel_ = {};
  history_.clear();
  history_pos_ = 0;
  loader_->set_session(session_);
  // opening on a step's frame: the worker starts on it now, while the models and the tree are built (the select
  // that follows finds it on its way)
  if (opening_on_.step) try {
      const StepRow& st = session_->ui().step(opening_on_.step);
      if (st.error.empty() && opening_on_.frame <= (size_t)st.n_matches) {
        request_t0_ = std::chrono::steady_clock::now();
        loader_->request(st.id, opening_on_.frame);
      }
    } catch (...) {  // not in this trace: open_trace opens on the first step
    }
  {
    Phase p{"tree model"};
    model_->set_session(session_);
  }
  {
    Phase p{"filter"};
    search_->clear();
    filter_->set_text(QString());
  }
  step_pos_.clear();
  for (size_t i = 0; i < model_->step_order().size(); i++) step_pos_[model_->step_order()[i]] = i;
  panel_->set_session(session_);
  run_panel_->set_session(session_);
  stats_panel_->set_session(session_);
  timeline_shows_run_ = timeline_shows_span_ = false;
  stats_->set_session(session_);
  {
    Phase p{"timeline"};
    timeline_->set_session(session_);
  }
  code_->set_session(session_);
  Trace& t = session_->ui();
  uint64_t matches = t.match_count();  // (a step's n_matches counts its nested steps' matches too)
  setWindowTitle(tr("tinyviz — %1").arg(QString::fromStdString(session_->path())));
  status_trace_->setText(tr("%1   ·   %2 contexts, %3 steps, %4 matches%5")
                             .arg(QString::fromStdString(session_->path()))
                             .arg(t.contexts().size())
                             .arg(t.steps().size())
                             .arg(matches)
                             .arg(t.complete()    ? QString()
                                  : t.truncated() ? tr("   ·   truncated: recording stopped early (%1)")
                                                        .arg(QString::fromStdString(t.meta()["stopped"]))
                                  : following() || follow_asked_ ? tr("   ·   live: being recorded")
                                                                 : tr("   ·   incomplete (F5 reloads)")));
  Phase p{"expand"};
  if (model_->rowCount() <= 8) tree_->expandToDepth(0);
}

// the public entry points run their work under guard(): whatever a trace makes them throw is shown, never thrown at
// the caller (main() opens the first trace before the event loop and its App::notify run)
template <class F>
bool MainWindow::guard(F&& f) {
  try {
    f();
    return true;
  } catch (...) {
    report_error(App::describe(std::current_exception()));
    return false;
  }
}

void MainWindow::select(const Selection& in, bool record_history) {
  guard([&] { select_unguarded(in, record_history); });
}

void MainWindow::select_unguarded(const Selection& in, bool record_history) {
  if (!session_) return;
  Trace& t = session_->ui();
  Selection s = in;
  try {
    if (s.step) {
      s.context = t.step(s.step).context;
      size_t frames = model_->frames_of(s.step);
      if (s.frame >= frames) s.frame = frames - 1;
    } else if (s.context) {
      t.context(s.context);
      s.frame = 0;
    } else {
      return;
    }
  } catch (...) {
    report_error(App::describe(std::current_exception()));
    return;
  }
  if (s == sel_) return;
  if (record_history) {
    history_.resize(std::min(history_.size(), history_pos_ + 1));
    history_.push_back(s);
    if (history_.size() > 500) history_.erase(history_.begin());
    history_pos_ = history_.size() - 1;
  }
  sel_ = s;

  // the tree follows (without coming back here)
  QModelIndex src;
  {
    Phase p{"select: index"};
    src = model_->index_of(s);
  }
  QModelIndex pi = src.isValid() ? filter_->mapFromSource(src) : QModelIndex();
  // a match of a big step whose rule group is closed: the group's row stands for it (opening a group of thousands of
  // rows at every step costs the tree's layout more than the frame); an open group shows the match's own row
  if (pi.isValid() && pi.parent().isValid() &&
      pi.parent().data(TraceModel::KindRole).toInt() == TraceModel::Group && !tree_->isExpanded(pi.parent()))
    pi = pi.parent();
  if (pi.isValid()) {
    Phase p{"select: tree"};
    syncing_tree_ = true;
    tree_->setCurrentIndex(pi);
    tree_->scrollTo(pi);
    syncing_tree_ = false;
  }
  {
    Phase p{"select: panel"};
    panel_->show_selection(s, s.step && s.frame ? model_->match(s.step, s.frame) : nullptr);
  }
  {
    Phase p{"select: views"};
    stats_->set_selection(s);
    timeline_->set_selection(s);
    code_->set_selection(s);
    update_frame_bar();
    if (tabs_->currentIndex() == CodeTab) sync_side_panel();
  }

  int64_t step = s.step;
  if (!step) {  // a context: show its first step's input
    const ContextRow& c = t.context(s.context);
    step = c.steps.empty() ? 0 : c.steps.front();
  }
  if (!step) {
    graph_->show_message(tr("Context %1 has no steps.").arg(s.context));
    emit frame_shown();
    return;
  }
  size_t frame = s.step ? s.frame : 0;
  if (!loader_->on_its_way(step, frame)) request_t0_ = std::chrono::steady_clock::now();  // (else: since opening)
  loader_->request(step, frame);
}

void MainWindow::update_frame_bar() {
  if (!session_ || !sel_.step) {
    frame_label_->setText(sel_.context ? tr("context %1").arg(sel_.context) : QString());
    return;
  }
  size_t n = model_->frames_of(sel_.step) - 1;
  frame_label_->setText(sel_.frame == 0 ? tr("input  ·  %1 matches").arg(n)
                                        : tr("match %1 / %2").arg(sel_.frame).arg(n));
}

void MainWindow::on_tree_current(const QModelIndex& cur) {
  if (syncing_tree_ || !cur.isValid()) return;
  select(model_->selection_of(filter_->mapToSource(cur)));
}

void MainWindow::on_frame(FrameResultPtr r) {
  FrameResultPtr before = graph_->frame();
  // stepping back through a step prefetches backwards, else forwards
  int dir = before && before->graph->step == r->graph->step && r->graph->frame < before->graph->frame ? -1 : 1;
  {
    Phase p{"show frame: graph"};
    graph_->show_frame(r);
  }
  {
    Phase p{"show frame: panel"};
    panel_->show_frame(r);
  }
  if (graph_->selected_node()) panel_->show_node(r, graph_->selected_node());
  if (!graph_find_->text().isEmpty()) graph_->find_nodes(graph_find_->text());
  auto now = std::chrono::steady_clock::now();
  last_frame_ms_ = std::chrono::duration<double, std::milli>(now - request_t0_).count();
  const FrameGraph& g = *r->graph;
  status_frame_->setText(tr("step %1 frame %2: %3 nodes  ·  built %4 ms  ·  %5 %6 ms  ·  shown in %7 ms")
                             .arg(g.step)
                             .arg(g.frame)
                             .arg(g.n_uops)
                             .arg(r->build_ms, 0, 'f', 1)
                             .arg(QString::fromStdString(r->layout->engine))
                             .arg(r->layout->ms, 0, 'f', 1)
                             .arg(last_frame_ms_, 0, 'f', 1));
  if (!g.error.empty()) {
    QString text = tr("Step %1: %2").arg(g.step).arg(QString::fromStdString(g.error));
    if (g.error_is_damage)
      report_error(text);  // the trace's problem
    else
      msg_->show_error(text);  // the error the program raised, as recorded
  }
  // hand freed pages back (frames come and go by the megabyte; glibc keeps them resident otherwise): at most every
  // 2 s, on a thread of its own (a trim walks the whole heap: tens of ms)
  static std::atomic<bool> trimming{false};
  if (now - last_trim_ > std::chrono::seconds(2) && !trimming.exchange(true)) {
    last_trim_ = now;
    std::thread([] {
      malloc_trim(0);
      trimming = false;
    }).detach();
  }
  if (!first_frame_done_) {
    first_frame_done_ = true;
    double ms = std::chrono::duration<double, std::milli>(now - launch_).count();
    if (std::getenv("TINYVIZ_TIMING")) std::fprintf(stderr, "tinyviz: first graph drawn %.1f ms after launch\n", ms);
  }
  if (std::getenv("TINYVIZ_TIMING"))
    std::fprintf(stderr,
                 "tinyviz: step %lld frame %zu (%zu nodes, %zu drawn): build %.1f ms, %s %.1f ms, total %.1f ms\n",
                 (long long)g.step, g.frame, g.n_uops, g.nodes.size(), r->build_ms, r->layout->engine.c_str(),
                 r->layout->ms, last_frame_ms_);
  // the next frame in the direction of travel, built on the worker while this one is painted and looked at
  if (sel_.step == g.step && sel_.frame == g.frame) {
    size_t n = model_->frames_of(g.step);
    if (dir > 0 ? g.frame + 1 < n : g.frame > 0) loader_->prefetch(g.step, g.frame + dir);
  }
  emit frame_shown();
}

bool MainWindow::step_visible(int64_t step) const {
  if (filter_->text().isEmpty()) return true;
  QModelIndex src = model_->index_of({0, step, 0});
  return src.isValid() && filter_->mapFromSource(src).isValid();
}

void MainWindow::navigate(int key) {
  guard([&] { navigate_unguarded(key); });
}

void MainWindow::navigate_unguarded(int key) {
  if (!session_) return;
  const auto& order = model_->step_order();
  if (order.empty()) return;
  Trace& t = session_->ui();
  if (key == Qt::Key_Left || key == Qt::Key_Right) {
    if (!sel_.step) return;
    size_t frames = model_->frames_of(sel_.step);
    size_t f = sel_.frame;
    if (key == Qt::Key_Right && f + 1 < frames)
      f++;
    else if (key == Qt::Key_Left && f > 0)
      f--;
    else
      return;
    select({sel_.context, sel_.step, f});
    return;
  }
  int dir = key == Qt::Key_Down ? 1 : -1;
  long pos;
  if (sel_.step) {
    pos = (long)step_pos_.at(sel_.step);
  } else {  // a context: its first step is "next", the step before it "previous"
    const ContextRow& c = t.context(sel_.context);
    if (c.steps.empty()) return;
    pos = (long)step_pos_.at(c.steps.front()) - (dir > 0 ? 1 : 0);
  }
  for (long p = pos + dir; p >= 0 && p < (long)order.size(); p += dir)
    if (step_visible(order[p])) {
      select({t.step(order[p]).context, order[p], 0});
      return;
    }
}

void MainWindow::open_codegen(int64_t context) {
  guard([&] {
    if (!session_ || !context) return;
    const ContextRow& c = session_->ui().context(context);
    show_tab(GraphTab);
    select(c.steps.empty() ? Selection{context, 0, 0} : Selection{context, c.steps.front(), 0});
  });
}

void MainWindow::back() {
  if (history_pos_ == 0 || history_.empty()) return;
  history_pos_--;
  select(history_[history_pos_], false);
}

void MainWindow::forward() {
  if (history_pos_ + 1 >= history_.size()) return;
  history_pos_++;
  select(history_[history_pos_], false);
}

void MainWindow::on_search(const QString& text) {
  expand_queue_.clear();
  select_first_rule_hit_ = false;
  {
    Phase p{"filter the tree"};
    filter_->set_text(text);
  }
  QString needle = text.trimmed().toLower();
  if (needle.isEmpty() || !session_) {
    search_hits_->setVisible(false);
    tree_->expandToDepth(0);
    if (sel_.step || sel_.context) {
      QModelIndex pi = filter_->mapFromSource(model_->index_of(sel_));
      if (pi.isValid()) {
        syncing_tree_ = true;
        tree_->setCurrentIndex(pi);
        tree_->scrollTo(pi);
        syncing_tree_ = false;
      }
    }
    return;
  }
  // what the text names: contexts and steps by name or call site; the first one in the tree's order is selected
  std::string n = needle.toStdString();
  size_t ctx_hits = 0, step_hits = 0;
  int64_t first = 0;
  for (const ContextRow& c : session_->ui().contexts())
    ctx_hits += session_->context_hay(c.id).find(n) != std::string::npos;
  for (int64_t st : model_->step_order())
    if (session_->step_hay(st).find(n) != std::string::npos) {
      step_hits++;
      if (!first) first = st;
    }
  QString hits = tr("“%1”: %2 contexts, %3 steps").arg(text.trimmed()).arg(ctx_hits).arg(step_hits);
  search_hits_->setText(hits);
  search_hits_->setVisible(true);
  if (first) select({session_->ui().step(first).context, first, 0});
  // rules the text names (file:line, file name:line, matcher or source): find the steps holding their matches
  std::vector<int64_t> rules;
  for (const RuleRow& r : session_->rules())
    if (auto it = model_->rule_hay().find(r.id);
        it != model_->rule_hay().end() && it->second.find(n) != std::string::npos)
      rules.push_back(r.id);
  if (!rules.empty()) {
    SessionPtr s = session_;
    run_async<std::vector<int64_t>>(
        this, [s, rules] { return s->with_queries([&](Trace& t) { return t.steps_with_rules(rules); }); },
        [this, s, text, rules, hits, first](std::vector<int64_t> steps, QString err) {
          if (s != session_ || !err.isEmpty()) return;
          search_hits_->setText(tr("%1; %2 rules matched in %3 steps").arg(hits).arg(rules.size()).arg(steps.size()));
          // no step named by the text: the first match of the rules is the first hit
          select_first_rule_hit_ = !first && !steps.empty();
          {
            Phase p{"rule hits"};
            filter_->set_rule_hits(text, std::unordered_set<int64_t>(steps.begin(), steps.end()),
                                   std::unordered_set<int64_t>(rules.begin(), rules.end()));
          }
          // open the first steps so their matching matches show, one per event-loop turn (each is a tree relayout)
          expand_queue_.assign(steps.begin(), steps.begin() + std::min<size_t>(8, steps.size()));
          QTimer::singleShot(0, this, &MainWindow::expand_queued);
        });
  }
  Phase p{"expand after search"};
  tree_->expandToDepth(0);
}

void MainWindow::expand_queued() {
  if (expand_queue_.empty()) return;
  QModelIndex pi = filter_->mapFromSource(model_->index_of({0, expand_queue_.front(), 0}));
  expand_queue_.erase(expand_queue_.begin());
  if (pi.isValid()) tree_->expand(pi);
  if (select_first_rule_hit_ && pi.isValid()) {
    select_first_rule_hit_ = false;
    // the step's matches the filter keeps are the rules' matches: its first one (loaded now if the view has not yet)
    if (filter_->canFetchMore(pi)) filter_->fetchMore(pi);
    for (int r = 0; r < filter_->rowCount(pi); r++) {
      Selection hit = model_->selection_of(filter_->mapToSource(filter_->index(r, 0, pi)));
      if (hit.frame) {
        select(hit);
        break;
      }
    }
  }
  QTimer::singleShot(0, this, &MainWindow::expand_queued);
}

void MainWindow::add_recent(const QString& path) {
  QSettings st("tinygrad-cpp", "tinyviz");
  QStringList list = st.value("recent").toStringList();
  list.removeAll(path);
  list.prepend(path);
  while (list.size() > 10) list.removeLast();
  st.setValue("recent", list);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  QSettings st("tinygrad-cpp", "tinyviz");
  QStringList list = st.value("recent").toStringList();
  for (const QString& p : list) recent_menu_->addAction(p, this, [this, p] { open_trace(p); });
  recent_menu_->setEnabled(!list.isEmpty());
}

bool MainWindow::idle() const {
  return !loader_->busy() && !stats_->loading() && !code_->loading() && !compare_->loading() && !comparing_;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  for (const QUrl& u : e->mimeData()->urls())
    if (u.isLocalFile()) {
      open_trace(u.toLocalFile());
      return;
    }
}

void MainWindow::closeEvent(QCloseEvent* e) {
  save_settings();
  loader_->set_session(nullptr);
  e->accept();
}

}  // namespace tv
