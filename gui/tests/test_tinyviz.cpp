// tinyviz end to end, headless: a trace recorded by the demo at test time is opened in the real window, then selected
// by model index and by keyboard, its diff marks compared with the replay, its statistics with SQL on the same file,
// the timeline hit-tested, broken files opened, and the --screenshot mode run as a user would.
#include <sqlite3.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QProcess>
#include <QScreen>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <unordered_set>

#include "gui/app.h"
#include "gui/code_view.h"
#include "gui/graph_items.h"
#include "gui/graph_view.h"
#include "gui/main_window.h"
#include "gui/message_bar.h"
#include "gui/rule_panel.h"
#include "gui/stats_view.h"
#include "gui/tests/demo_trace.h"
#include "gui/timeline_view.h"
#include "gui/trace_tree.h"
#include "tests/support/sql.h"
#include "viz/reader/reader.h"
#include "viz/reader/replay.h"

using namespace tv;
using namespace tg::viz;

int run_layout_tests(int argc, char** argv);
int run_feature_tests(int argc, char** argv);
int run_bad_trace_tests(int argc, char** argv);
int run_kernel_graph_tests(int argc, char** argv);
int run_compare_tests(int argc, char** argv);
int run_profiler_tests(int argc, char** argv);

namespace {
// one integer from SQL on the trace file
int64_t sql_int(const QString& path, const std::string& q) { return tg::test::sql_int(path.toStdString(), q); }

// TV_TEST_SHOTS=DIR: keep a picture of what a test checked, to look at
void shot(QWidget& w, const char* name) {
  if (const char* dir = std::getenv("TV_TEST_SHOTS")) w.grab().save(QString("%1/%2.png").arg(dir, name));
}

// the centre of what the shown match changed: its boxed replacement, else the removed node's ghost, else the lowest
// rebuilt node
QPointF where_the_match_is(GraphView* g) {
  for (NodeItem* n : g->node_items())
    if (n->node().in_match) return n->sceneBoundingRect().center();
  if (!g->ghost_items().empty()) return g->ghost_items().front()->sceneBoundingRect().center();
  for (NodeItem* n : g->node_items())
    if (n->node().mark == Mark::changed) return n->sceneBoundingRect().center();
  return {};
}

}  // namespace

class TestTinyviz : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString trace_;
  std::unique_ptr<Trace> t_;
  int64_t step_ = 0;  // a step with several matches (the first one)
  QString hello_;     // examples/hello_tensor under VIZ=-1, recorded once by hello_trace

  // a copy of hello_tensor's trace under `name` (recorded at the first call), or "" with *err saying why
  QString hello_trace(const QString& name, QString* err) {
    if (hello_.isEmpty()) {
      QString p = dir_.filePath("hello.trace.db");
      if (!(*err = record_trace(TV_TENSOR_BIN, p)).isEmpty()) return QString();
      hello_ = p;
    }
    QString out = dir_.filePath(name);
    QFile::remove(out);
    if (!QFile::copy(hello_, out)) return *err = "cannot copy " + hello_ + " to " + out, QString();
    return out;
  }
  // w shown at 1400 x 900 on the trace at path, its first layout done
  static bool open_window(MainWindow& w, const QString& path) {
    w.resize(1400, 900);
    w.show();
    return w.open_trace(path) && wait_idle(w);
  }

  // w on the trace at path, showing the Code tab on a kernel's codegen context
  static bool open_code_tab(MainWindow& w, const QString& path, int64_t context) {
    if (!open_window(w, path)) return false;
    w.select({context, 0, 0});
    w.show_tab(MainWindow::CodeTab);
    return wait_idle(w);
  }

  // the step whose input graph is biggest among those with at least min_matches matches (0: none)
  int64_t biggest_step(int64_t min_matches) const {
    int64_t step = 0;
    size_t most = 0;
    for (const auto& s : t_->steps())
      if (s.n_matches >= min_matches) {
        StepReplay r(*t_, s.id);
        if (r.nodes(0).size() > most) most = r.nodes(0).size(), step = s.id;
      }
    return step;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // recent files go to a test location
    QVERIFY(dir_.isValid());
    trace_ = dir_.filePath("demo.trace.db");
    QString err = record_demo_trace(trace_);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    t_ = Trace::open(trace_.toStdString());
    for (const auto& s : t_->steps())
      if (s.n_matches >= 5) {
        step_ = s.id;
        break;
      }
    QVERIFY(step_ > 0);
  }

  void opens_trace_and_draws_first_graph() {
    MainWindow w;
    QVERIFY(w.open_trace(trace_));
    QCOMPARE(w.model()->rowCount(), (int)t_->contexts().size());
    QCOMPARE(w.model()->step_order().size(), t_->steps().size());
    QVERIFY(wait_idle(w));
    QVERIFY(w.graph()->frame());
    // frame 0 of the first step: every drawn node is a node of the replayed input graph, every non-const node drawn
    int64_t first = w.model()->step_order().front();
    QCOMPARE(w.selection().step, first);
    StepReplay r(*t_, first);
    auto nodes = r.nodes(0);
    std::unordered_set<int64_t> in(nodes.begin(), nodes.end()), drawn;
    for (NodeItem* n : w.graph()->node_items()) {
      QVERIFY(in.count(n->node().key.id));
      drawn.insert(n->node().key.id);
    }
    for (int64_t n : nodes)
      if (t_->node(n).op_name != "CONST") QVERIFY(drawn.count(n));
    QVERIFY(w.message_bar()->isHidden());
  }

  // every committed sample trace (traces/*.trace.db) opens, lists all its contexts and draws its first graph: a schema
  // change that forgets to re-record them fails here
  void opens_sample_traces() {
    QDir dir(QStringLiteral(TG_SOURCE_ROOT "traces"));
    QStringList files = dir.entryList({"*.trace.db"}, QDir::Files);
    QVERIFY(!files.isEmpty());
    for (const QString& f : files) {
      QString path = dir.filePath(f);
      auto t = Trace::open(path.toStdString());
      MainWindow w;
      QVERIFY2(w.open_trace(path), qPrintable(path));
      QCOMPARE(w.model()->rowCount(), (int)t->contexts().size());
      QVERIFY(wait_idle(w));
      QVERIFY2(w.graph()->frame(), qPrintable(path));
      QVERIFY(!w.graph()->node_items().empty());
      QVERIFY(w.message_bar()->isHidden());
    }
  }

  void selects_by_model_index() {
    MainWindow w;
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    // context row -> its first step row -> its third match row, through the tree's (filtered) model
    int64_t ctx = t_->step(step_).context;
    QModelIndex step_idx = w.filter()->mapFromSource(w.model()->index_of({ctx, step_, 0}));
    QVERIFY(step_idx.isValid());
    QCOMPARE(step_idx.parent().data(TraceModel::ContextRole).toLongLong(), ctx);
    w.tree()->setCurrentIndex(step_idx);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection(), (Selection{ctx, step_, 0}));
    w.tree()->expand(step_idx);
    QModelIndex m3;
    for (int r = 0; r < w.filter()->rowCount(step_idx); r++) {
      QModelIndex c = w.filter()->index(r, 0, step_idx);
      if (c.data(TraceModel::KindRole).toInt() == TraceModel::Match && c.data(TraceModel::FrameRole).toULongLong() == 3)
        m3 = c;
    }
    QVERIFY(m3.isValid());
    w.tree()->setCurrentIndex(m3);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection(), (Selection{ctx, step_, 3}));
    QCOMPARE(w.graph()->frame()->graph->frame, size_t(3));
    // the rule panel names the rule that fired, as file:line
    auto ms = t_->matches(step_);
    auto rule = t_->rule(ms[2].rule);
    QVERIFY(rule);
    QCOMPARE(w.panel()->site(), QString::fromStdString(rule->file + ":" + std::to_string(rule->line)));
    QVERIFY(w.panel()->text().contains(QString::fromStdString(rule->source.substr(0, 20))));
  }

  void keyboard_navigation() {
    MainWindow w;
    w.show();
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    const auto& order = w.model()->step_order();
    w.tree()->setFocus();
    QTest::keyClick(w.tree(), Qt::Key_Down);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().step, order[1]);
    QTest::keyClick(w.tree(), Qt::Key_Up);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().step, order[0]);
    size_t n = w.model()->frames_of(order[0]) - 1;
    QVERIFY(n >= 2);
    QTest::keyClick(w.tree(), Qt::Key_Right);
    QTest::keyClick(w.tree(), Qt::Key_Right);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().frame, size_t(2));
    QCOMPARE(w.graph()->frame()->graph->frame, size_t(2));
    QTest::keyClick(w.tree(), Qt::Key_Left);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().frame, size_t(1));
    // the graph view takes the same keys
    w.graph()->setFocus();
    QTest::keyClick(w.graph(), Qt::Key_Right);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().frame, size_t(2));
    // back / forward through the history of selections: Alt+Left / Alt+Right
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    w.tree()->setFocus();
    QTest::keyClick(w.tree(), Qt::Key_Left, Qt::AltModifier);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().frame, size_t(1));
    QTest::keyClick(w.tree(), Qt::Key_Right, Qt::AltModifier);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().frame, size_t(2));
    // F fits the graph wherever the focus is
    w.graph()->zoom_by(4);
    double zoomed = w.graph()->zoom();
    QTest::keyClick(w.tree(), Qt::Key_F);
    QVERIFY(w.graph()->zoom() < zoomed);
    // Enter expands the current step
    QModelIndex cur = w.tree()->currentIndex();
    QVERIFY(cur.isValid());
    w.select({0, order[3], 0});
    QVERIFY(wait_idle(w));
    QModelIndex si = w.tree()->currentIndex();
    bool was = w.tree()->isExpanded(si);
    w.tree()->setFocus();
    QTest::keyClick(w.tree(), Qt::Key_Return);
    QCOMPARE(w.tree()->isExpanded(si), !was);
  }

  // the panel's counts of added, removed and rebuilt nodes list each of them; a listed id shows the node in the graph
  void change_counts_list_the_nodes() {
    MainWindow w;
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    w.select({0, step_, 1});
    QVERIFY(wait_idle(w));
    FrameResultPtr r = w.graph()->frame();
    QVERIFY(r && r->graph->frame == 1);
    FrameDelta d = StepReplay(*t_, step_).delta(1);
    QVERIFY(!d.added.empty() && !d.removed.empty());
    for (const char* which : {"added", "removed", "rebuilt"}) {
      w.panel()->show_list(r, which);
      QString text = w.panel()->node_text();
      std::vector<int64_t> ids = which == std::string("added") ? d.added : which == std::string("removed") ? d.removed
                                                                                                           : std::vector<int64_t>{};
      if (which == std::string("rebuilt"))
        for (auto& [o, n] : d.changed) ids.push_back(n);
      QVERIFY2(text.contains(QString(": %1 nodes").arg(ids.size())), qPrintable(text));
      for (int64_t id : ids) QVERIFY2(text.contains(QString::number(id) + "  "), qPrintable(text));
    }
    // a drawn ghost's id: the view selects it
    QVERIFY(!w.graph()->ghost_items().empty());
    int64_t ghost = w.graph()->ghost_items().front()->node().key.id;
    emit w.panel()->node_link(ghost);
    QCOMPARE(w.graph()->selected_node(), ghost);
  }

  void diff_marks_match_the_replay() {
    MainWindow w;
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    for (size_t k : {size_t(1), size_t(3)}) {
      w.select({0, step_, k});
      QVERIFY(wait_idle(w));
      FrameResultPtr r = w.graph()->frame();
      QVERIFY(r && r->graph->frame == k);
      StepReplay rep(*t_, step_);
      FrameDelta d = rep.delta(k);
      std::unordered_set<int64_t> added(d.added.begin(), d.added.end()), changed,
          removed(d.removed.begin(), d.removed.end());
      for (auto& [o, n] : d.changed) changed.insert(n);
      int marked = 0;
      for (NodeItem* n : w.graph()->node_items()) {
        int64_t id = n->node().key.id;
        Mark want = changed.count(id) ? Mark::changed : added.count(id) ? Mark::added : Mark::none;
        QCOMPARE((int)n->node().mark, (int)want);
        marked += want != Mark::none;
      }
      QVERIFY(marked > 0);
      // removed nodes stand as ghosts where the previous frame had them
      QVERIFY(!w.graph()->ghost_items().empty() || removed.empty());
      for (NodeItem* g : w.graph()->ghost_items()) QVERIFY(removed.count(g->node().key.id));
      // the replacement is boxed
      bool boxed = false;
      for (NodeItem* n : w.graph()->node_items()) boxed |= n->node().in_match && n->node().key.id == d.after;
      bool after_drawn = false;
      for (NodeItem* n : w.graph()->node_items()) after_drawn |= n->node().key.id == d.after;
      QCOMPARE(boxed, after_drawn);
    }
    // stepping on: nodes that survive keep their position
    FrameResultPtr a = w.graph()->frame();
    w.navigate(Qt::Key_Right);
    QVERIFY(wait_idle(w));
    FrameResultPtr b = w.graph()->frame();
    QCOMPARE(b->graph->frame, size_t(4));
    QCOMPARE(a->family, b->family);
    std::unordered_map<int64_t, Pt> pa;
    for (size_t i = 0; i < a->graph->nodes.size(); i++)
      if (!a->graph->nodes[i].key.via) pa[a->graph->nodes[i].key.id] = a->layout->pos[i];
    int same = 0;
    for (size_t i = 0; i < b->graph->nodes.size(); i++)
      if (auto it = pa.find(b->graph->nodes[i].key.id); it != pa.end() && !b->graph->nodes[i].key.via) {
        QCOMPARE(b->layout->pos[i].x, it->second.x);
        QCOMPARE(b->layout->pos[i].y, it->second.y);
        same++;
      }
    QVERIFY(same > 0);
  }

  // a match whose replacement is a folded const has no drawn replacement to look at: a graph that does not fit starts
  // at the removed node's ghost (or the lowest rebuilt node) instead of the root
  void view_starts_where_a_folded_replacement_happened() {
    int64_t step = 0;
    size_t frame = 0;
    for (const auto& s : t_->steps()) {
      if (s.n_matches == 0 || s.id == t_->steps().front().id) continue;
      StepReplay rep(*t_, s.id);
      for (size_t k = 1; k < rep.num_frames() && !step; k++) {
        FrameDelta d = rep.delta(k);
        if (!d.removed.empty() && !d.changed.empty() && t_->node(d.after).op_name == "CONST") step = s.id, frame = k;
      }
      if (step) break;
    }
    QVERIFY2(step, "the demo trace has a match that folds to a const");
    MainWindow w;
    w.resize(420, 320);  // a graph view too small for the graph at a readable scale
    w.show();
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    w.select({0, step, frame});
    QVERIFY(wait_idle(w));
    GraphView* g = w.graph();
    QVERIFY(g->frame() && g->frame()->graph->frame == frame);
    QPointF near = where_the_match_is(g);
    QRectF visible = g->mapToScene(g->viewport()->rect()).boundingRect();
    QVERIFY2(
        visible.contains(near),
        qPrintable(QString("step %1 match %2: (%3, %4) not in view").arg(step).arg(frame).arg(near.x()).arg(near.y())));
  }

  // stepping keeps the view still, unless the next match is out of sight: then it scrolls to it
  void stepping_follows_a_match_out_of_sight() {
    MainWindow w;
    w.resize(420, 320);
    w.show();
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    int64_t step = biggest_step(3);  // a step with a few matches whose graph is bigger than the view
    QVERIFY(step);
    w.select({0, step, 1});
    QVERIFY(wait_idle(w));
    GraphView* g = w.graph();
    g->zoom_by(3);
    g->centerOn(g->sceneRect().topLeft());  // far from the graph
    FrameResultPtr before = g->frame();
    w.navigate(Qt::Key_Right);
    QVERIFY(wait_idle(w));
    QCOMPARE(g->frame()->graph->frame, size_t(2));
    QCOMPARE(g->frame()->family, before->family);  // the same layout family: the view is kept, not reset
    QPointF near = where_the_match_is(g);
    QRectF visible = g->mapToScene(g->viewport()->rect()).boundingRect();
    QVERIFY2(visible.contains(near),
             qPrintable(QString("step %1: (%2, %3) not in view").arg(step).arg(near.x()).arg(near.y())));
  }

  // Stepping keeps the items of what survives (graph_view.cpp): after steps forward and back, with a node selected,
  // every node of the frame has exactly one item, at the layout's place, drawing this frame's node (its mark), every
  // edge one item with the layout's path, nothing of a removed node is left in the scene, and what is on the screen
  // (only the changed parts repainted) is what a view that builds the frame from scratch draws
  void stepping_keeps_items_and_draws_each_frame_right() {
    int64_t step = biggest_step(5);  // the step with the biggest graph among those with 5+ matches
    QVERIFY(step);
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    w.select({0, step, 0});
    QVERIFY(wait_idle(w));
    GraphView* g = w.graph();
    // what the screen shows of a view's viewport (the window's backing store, as painted bit by bit)
    auto on_screen = [](QAbstractScrollArea* v) {
      for (int i = 0; i < 5; i++) QCoreApplication::processEvents();
      QWidget* top = v->window();
      QPoint o = v->viewport()->mapTo(top, QPoint(0, 0));
      return top->screen()
          ->grabWindow(top->winId(), o.x(), o.y(), v->viewport()->width(), v->viewport()->height())
          .toImage()
          .convertToFormat(QImage::Format_RGB32);
    };
    auto check = [&](const char* when) {
      QString at = QString("%1, frame %2").arg(when).arg(g->frame()->graph->frame);
      const FrameResult& r = *g->frame();
      const FrameGraph& fg = *r.graph;
      const Layout& L = *r.layout;
      QCOMPARE(g->node_items().size(), fg.nodes.size());
      std::unordered_set<const QGraphicsItem*> mine;
      for (size_t i = 0; i < fg.nodes.size(); i++) {
        NodeItem* n = g->node_items()[i];
        QVERIFY2(mine.insert(n).second, qPrintable(at));
        QVERIFY2(&n->node() == &fg.nodes[i] && n->index() == (int)i && !n->ghost(), qPrintable(at));
        QVERIFY2(n->scene() == g->scene(), qPrintable(at));
        QCOMPARE(n->pos(), QPointF(L.pos[i].x, L.pos[i].y));
      }
      size_t n_edges = std::min(fg.edges.size(), L.edges.size()), n_ghosts = 0;
      QCOMPARE(g->edge_items().size(), n_edges);
      bool crowded = fg.edges.size() > EdgeItem::kCrowdedEdges;
      for (size_t i = 0; i < n_edges; i++) {
        EdgeItem* e = g->edge_items()[i];
        QVERIFY2(mine.insert(e).second, qPrintable(at));
        const GEdge& ge = fg.edges[i];
        EdgeItem fresh_edge(L.edges[i], ge.port, ge.nslots > 1 && !ge.order, crowded, ge.order);
        QCOMPARE(e->boundingRect(), fresh_edge.boundingRect());
      }
      for (char shown : r.ghost_shown) n_ghosts += shown;
      QCOMPARE(g->ghost_items().size(), n_ghosts);
      // the scene holds this frame's nodes, edges and ghosts (and the match boxes), nothing else
      size_t nodes = 0, ghosts = 0, edges = 0;
      for (QGraphicsItem* it : g->scene()->items()) {
        if (it->type() == NodeItem::Type) {
          auto* n = static_cast<NodeItem*>(it);
          n->ghost() ? ghosts++ : nodes++;
          if (!n->ghost()) QVERIFY2(mine.count(n), qPrintable(at + ": an item of a node not in the frame"));
        } else if (it->type() == EdgeItem::Type) {
          edges++;
          QVERIFY2(mine.count(it), qPrintable(at + ": an item of an edge not in the frame"));
        }
      }
      QCOMPARE(nodes, fg.nodes.size());
      QCOMPARE(ghosts, n_ghosts);
      QCOMPARE(edges, n_edges);
      // the same picture as a view that draws the frame from scratch, looking at the same place
      GraphView fresh;
      fresh.resize(g->size());
      fresh.show();
      fresh.show_frame(g->frame());
      if (g->selected_node()) fresh.select_node(g->selected_node());
      fresh.setTransform(g->transform());
      fresh.horizontalScrollBar()->setValue(g->horizontalScrollBar()->value());
      fresh.verticalScrollBar()->setValue(g->verticalScrollBar()->value());
      QCOMPARE(fresh.mapToScene(0, 0), g->mapToScene(0, 0));
      for (size_t i = 0; i < fg.nodes.size(); i++) QCOMPARE(fresh.node_items()[i]->hi(), g->node_items()[i]->hi());
      for (size_t i = 0; i < n_edges; i++) QCOMPARE(fresh.edge_items()[i]->hi(), g->edge_items()[i]->hi());
      QImage a = on_screen(g), b = on_screen(&fresh);
      QCOMPARE(a.size(), b.size());
      int differ = 0;
      for (int y = 0; y < a.height(); y++)
        for (int x = 0; x < a.width(); x++) {
          QRgb p = a.pixel(x, y), q = b.pixel(x, y);
          differ += std::abs(qRed(p) - qRed(q)) + std::abs(qGreen(p) - qGreen(q)) + std::abs(qBlue(p) - qBlue(q)) > 24;
        }
      if (differ) qInfo("%s: %d pixels differ", qPrintable(at), differ);
      // (overlapping edges may stack in another order: an item kept lies under one added later)
      QVERIFY2(differ <= a.width() * a.height() / 1000,
               qPrintable(QString("%1: %2 pixels differ from a fresh view").arg(at).arg(differ)));
    };
    check("the input graph");
    size_t frames = std::min<size_t>(w.model()->frames_of(step), 9);
    for (size_t k = 1; k < frames; k++) {
      w.navigate(Qt::Key_Right);
      QVERIFY(wait_idle(w));
      QCOMPARE(g->frame()->graph->frame, k);
      if (k == 2) {  // select a node that stays drawn for a while: its highlight follows the frames
        const FrameGraph& fg = *g->frame()->graph;
        g->select_node(fg.nodes[fg.nodes.size() / 2].key.id);
      }
      check("forward");
      // while a frame is looked at, the worker builds the next one
      if (k + 1 < w.model()->frames_of(step)) QTRY_VERIFY(w.loader()->cached(step, k + 1) != nullptr);
    }
    for (size_t k = frames - 1; k-- > 0;) {
      w.navigate(Qt::Key_Left);
      QVERIFY(wait_idle(w));
      QCOMPARE(g->frame()->graph->frame, k);
      check("back");
    }
    shot(w, "stepped_back_to_the_input");
  }

  void focus_draws_only_the_neighbourhood_of_the_match() {
    MainWindow w;
    QVERIFY(w.open_trace(trace_));
    int64_t big = biggest_step(5);  // the step with the biggest graph
    w.select({0, big, 5});
    QVERIFY(wait_idle(w));
    size_t all = w.graph()->node_items().size();
    w.focus_box()->setCurrentIndex(w.focus_box()->findData(2));
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection(), (Selection{t_->step(big).context, big, 5}));
    const FrameGraph& g = *w.graph()->frame()->graph;
    QVERIFY2(g.nodes.size() < all, qPrintable(QString("%1 of %2").arg(g.nodes.size()).arg(all)));
    bool boundary = false, after = false;
    for (const GNode& n : g.nodes) {
      boundary |= n.lines.back().find("hidden") != std::string::npos;
      after |= n.key.id == g.match->after;
    }
    QVERIFY(boundary);
    QVERIFY(after || t_->node(g.match->after).op_name == "CONST");
  }

  void clicking_a_node_highlights_and_describes_it() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    GraphView* g = w.graph();
    // a node with sources and users
    int pick = -1;
    const FrameGraph& fg = *g->frame()->graph;
    for (size_t i = 0; i < fg.nodes.size() && pick < 0; i++) {
      const auto& inf = fg.info.at(fg.nodes[i].key.id);
      if (!inf.src.empty() && !inf.users.empty() && !fg.nodes[i].key.via) pick = (int)i;
    }
    QVERIFY(pick >= 0);
    g->centerOn(g->node_items()[pick]);
    QTest::mouseClick(g->viewport(), Qt::LeftButton, {}, g->node_viewport_pos(pick));
    int64_t id = fg.nodes[pick].key.id;
    QCOMPARE(g->selected_node(), id);
    QVERIFY(w.panel()->text().contains(QString("Node %1").arg(id)));
    shot(w, "clicked_node");
    // a click on the background clears it
    QTest::mouseClick(g->viewport(), Qt::LeftButton, {}, QPoint(3, 3));
    QCOMPARE(g->selected_node(), int64_t(0));
    // the wheel zooms, dragging pans
    double z = g->zoom();
    QPoint c = g->viewport()->rect().center();
    QWheelEvent wheel(c, g->viewport()->mapToGlobal(c), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(g->viewport(), &wheel);
    QVERIFY(g->zoom() > z * 1.3);
    QPointF before = g->mapToScene(c);
    QTest::mousePress(g->viewport(), Qt::LeftButton, {}, c);
    for (int i = 1; i <= 5; i++) QTest::mouseMove(g->viewport(), c + QPoint(20 * i, 10 * i));
    QTest::mouseRelease(g->viewport(), Qt::LeftButton, {}, c + QPoint(100, 50));
    QPointF after = g->mapToScene(c);
    QVERIFY((after - before).manhattanLength() > 50);
    QCOMPARE(g->selected_node(), int64_t(0));  // a drag is not a click
  }

  void statistics_equal_sql() {
    MainWindow w;
    QVERIFY(w.open_trace(trace_));
    StatsView* sv = w.stats();
    QVERIFY(wait_idle(w));
    StatsModel* m = sv->model();
    QVERIFY(m->rowCount() > 0);
    int64_t total = 0;
    for (int r = 0; r < m->rowCount(); r++) {
      int64_t rule = m->data(m->index(r, 0), StatsModel::RuleIdRole).toLongLong();
      auto num = [&](int col) { return (int64_t)m->data(m->index(r, col), Qt::DisplayRole).toULongLong(); };
      std::string where = " WHERE rule=" + std::to_string(rule);
      QCOMPARE(num(StatsModel::Matches), sql_int(trace_, "SELECT COUNT(*) FROM matches" + where));
      QCOMPARE(num(StatsModel::Attempts), sql_int(trace_, "SELECT SUM(attempts) FROM context_rule_stats" + where));
      QCOMPARE(num(StatsModel::EarlyRejects),
               sql_int(trace_, "SELECT SUM(early_rejects) FROM context_rule_stats" + where));
      total += num(StatsModel::Matches);
    }
    QCOMPARE(total, sql_int(trace_, "SELECT COUNT(*) FROM matches"));
    // the "attempted, never matched" filter
    sv->findChild<QCheckBox*>()->setChecked(true);
    QCOMPARE((int64_t)sv->proxy()->rowCount(),
             sql_int(trace_,
                     "SELECT COUNT(*) FROM (SELECT rule FROM context_rule_stats GROUP BY rule "
                     "HAVING SUM(attempts) > 0 AND SUM(matches) = 0)"));
    sv->findChild<QCheckBox*>()->setChecked(false);
    // one step's statistics
    w.select({0, step_, 0});
    sv->set_scope(StatsView::ThisStep);
    QVERIFY(wait_idle(w));
    QCOMPARE((int64_t)m->rowCount(),
             sql_int(trace_, "SELECT COUNT(*) FROM rule_stats WHERE step=" + std::to_string(step_)));
    int64_t step_matches = 0;
    for (int r = 0; r < m->rowCount(); r++)
      step_matches += m->data(m->index(r, StatsModel::Matches), Qt::DisplayRole).toLongLong();
    QCOMPARE(step_matches, sql_int(trace_, "SELECT COUNT(*) FROM matches WHERE step=" + std::to_string(step_)));
    // every match of a rule, and the jump to one
    int64_t rule = t_->matches(step_)[0].rule;
    sv->show_rule(rule);
    QVERIFY(wait_idle(w));
    QCOMPARE((int64_t)sv->rule_matches()->rowCount(),
             sql_int(trace_, "SELECT COUNT(*) FROM matches WHERE rule=" + std::to_string(rule)));
    QSignalSpy jumped(sv, &StatsView::jump);
    const MatchRow& last = sv->rule_matches()->rows().back();
    emit sv->match_table()->doubleClicked(sv->rule_matches()->index(sv->rule_matches()->rowCount() - 1, 0));
    QCOMPARE(jumped.count(), 1);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().step, last.step);
    QCOMPARE(w.selection().frame, (size_t)last.ordinal + 1);
  }

  void kernel_trace_shows_source_and_kernel_lanes() {
    // a trace of a real tensor program (examples/hello_tensor under VIZ=-1): kernels, their sources and runs
    QString path = dir_.filePath("tensor.trace.db");
    QString err = record_trace(TV_TENSOR_BIN, path);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    auto t = Trace::open(path.toStdString());
    const ProgramRow* p = nullptr;
    for (const auto& x : t->programs())
      if (x.context) {
        p = &x;
        break;
      }
    QVERIFY(p);
    size_t ev = t->kernel_events().size();
    for (size_t i = 0; i < t->kernel_events().size(); i++)
      if (t->kernel_events()[i].program == p->id) {
        ev = i;
        break;
      }
    QVERIFY(ev < t->kernel_events().size());

    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_trace(path));
    QVERIFY(wait_idle(w));
    // the Code tab on the kernel's codegen context: its LLVM IR, a summary with its runs, its linearized UOps
    w.select({p->context, 0, 0});
    w.show_tab(MainWindow::CodeTab);
    QVERIFY(wait_idle(w));
    QTRY_VERIFY(w.code()->text().contains("define void @"));
    QVERIFY(w.code()->title().contains(QString::fromStdString(p->name)));
    QVERIFY(w.code()->title().contains("runs"));
    QVERIFY(!w.code()->title().contains("not timed"));
    w.code()->set_mode(CodeView::Uops);
    QVERIFY(w.code()->text().contains("Ops.SINK"));
    w.code()->set_mode(CodeView::Source);
    // the tree shows kernel names without terminal colour codes
    QVERIFY(!QString::fromStdString(t->context(p->context).name).contains(QChar(0x1b)));
    // the timeline: kernel lanes first; a click on a run selects the kernel's codegen context
    w.show_tab(MainWindow::TimelineTab);
    TimelineView* tl = w.timeline();
    QVERIFY(tl->kernel_lane_count() >= 1);
    tl->reveal_kernel(ev);
    auto pt = tl->point_of_kernel(ev);
    QVERIFY(pt);
    auto h = tl->hit(*pt);
    QVERIFY(h);
    QCOMPARE(h->kernel, (int64_t)ev + 1);
    w.select({0, 0, 0});
    QTest::mouseClick(tl, Qt::LeftButton, {}, *pt);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().context, p->context);
  }

  // the Code tab's run summary reads each duration in its unit, and runs without a duration as not timed
  void kernel_runs_read_in_their_unit_or_as_not_timed() {
    QCOMPARE(duration_text(850), QString("850 ns"));
    QCOMPARE(duration_text(1250), QString("1.25 µs"));
    QCOMPARE(duration_text(12500), QString("12.5 µs"));
    QCOMPARE(duration_text(557999100), QString("558 ms"));
    QCOMPARE(duration_text(2.5e6), QString("2.50 ms"));
    QCOMPARE(duration_text(1.25e9), QString("1.25 s"));
    QString err, path = hello_trace("untimed.trace.db", &err);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    int64_t program = sql_int(path, "SELECT k.program FROM kernel_events k JOIN programs p ON p.id=k.program "
                                    "WHERE p.context>0 LIMIT 1");
    tg::test::sql_exec(path.toStdString(), "UPDATE kernel_events SET t_end=t_start WHERE program=" + std::to_string(program));
    int64_t context = sql_int(path, "SELECT context FROM programs WHERE id=" + std::to_string(program));
    QVERIFY(context > 0);
    MainWindow w;
    QVERIFY(open_window(w, path));
    w.select({context, 0, 0});
    w.show_tab(MainWindow::CodeTab);
    QVERIFY(wait_idle(w));
    QTRY_VERIFY(w.code()->title().contains("runs"));
    QVERIFY2(w.code()->title().contains("not timed"), qPrintable(w.code()->title()));
    QVERIFY(!w.code()->title().contains("GFLOPS"));
  }

  // the Code tab shows, beside a kernel's source, the machine code it ran as (the CPU's disassembly of its object);
  // "Next loop" and the find box reach the innermost loop; a trace from before machine code, and a damaged row, say
  // so in the pane instead
  void code_tab_shows_the_machine_code_beside_the_source() {
    QString err, path = hello_trace("asm.trace.db", &err);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    int64_t program = sql_int(path,
                              "SELECT p.id FROM programs p JOIN machine_code m ON m.program=p.id "
                              "WHERE p.context>0 LIMIT 1");
    int64_t context = sql_int(path, "SELECT context FROM programs WHERE id=" + std::to_string(program));
    QVERIFY(context > 0);
    auto t = Trace::open(path.toStdString(), false);
    std::optional<MachineCodeRow> mc = t->machine_code(program);
    QVERIFY(mc && !mc->text.empty());
    {
      MainWindow w;
      QVERIFY(open_code_tab(w, path, context));
      QTRY_VERIFY(w.code()->text().contains("define void @"));
      QVERIFY(w.code()->machine_code_visible());
      QCOMPARE(w.code()->machine_code_text().trimmed(), QString::fromStdString(mc->text).trimmed());
      QVERIFY2(w.code()->machine_code_title().contains("x86-64 machine code"),
               qPrintable(w.code()->machine_code_title()));
      QVERIFY(w.code()->machine_code_text().contains(QRegularExpression("\\n +[0-9a-f]+: +[| ]*retq\\n")));
      QVERIFY(w.code()->find_in_machine_code("retq"));
      QVERIFY(w.code()->machine_code_text().split('\n')[w.code()->machine_code_cursor_line()].contains("retq"));
      // the linearized UOps have the whole width
      w.code()->set_mode(CodeView::Uops);
      QVERIFY(!w.code()->machine_code_visible());
      w.code()->set_mode(CodeView::Source);
      QVERIFY(w.code()->machine_code_visible());
    }
    // a kernel with a loop: "Next loop" goes to its innermost loop's head
    std::string looped =
        "; x86-64 machine code for test\n\nk:\n       0:    xorl       %eax, %eax\n"
        ".L1:                                    ; loop, back from 0x20\n       4:  |  nop\n"
        ".L2:                                    ; innermost loop, back from 0x10\n       8:  || vaddps     %xmm0, "
        "%xmm1, %xmm1\n"
        "      10:  || jne        .L2                                  # <- loop .L2 (innermost)\n"
        "      20:  |  jne        .L1                                  # <- loop .L1\n      22:     retq\n";
    tg::test::sql_exec(path.toStdString(),
                       "UPDATE machine_code SET code='" + looped + "' WHERE program=" + std::to_string(program));
    {
      MainWindow w;
      QVERIFY(open_code_tab(w, path, context));
      QTRY_VERIFY(w.code()->machine_code_text().contains(".L2:"));
      QVERIFY(w.code()->next_loop());
      QVERIFY(w.code()->machine_code_text().split('\n')[w.code()->machine_code_cursor_line()].startsWith(".L2:"));
    }
    // garbage in the row: said in the pane, no crash
    tg::test::sql_exec(path.toStdString(),
                       "UPDATE machine_code SET code=x'00ff10' WHERE program=" + std::to_string(program));
    {
      MainWindow w;
      QVERIFY(open_code_tab(w, path, context));
      QTRY_VERIFY(w.code()->machine_code_title().contains("cannot be read"));
      QVERIFY(w.code()->machine_code_text().isEmpty());
      QVERIFY(w.code()->text().contains("define void @"));
    }
    // a trace from before machine code (schema 5)
    tg::test::sql_exec(path.toStdString(), "DROP TABLE machine_code; PRAGMA user_version=5;");
    {
      MainWindow w;
      QVERIFY(open_code_tab(w, path, context));
      QTRY_VERIFY(w.code()->text().contains("define void @"));
      QVERIFY2(w.code()->machine_code_title().contains("This trace holds no machine code (it was recorded before"),
               qPrintable(w.code()->machine_code_title()));
      QVERIFY(w.code()->machine_code_text().isEmpty());
    }
  }

  // Esc on the timeline clears the selected interval (the window's Esc shortcut took the key before)
  void esc_clears_the_timelines_interval() {
    QString err, path = hello_trace("esc.trace.db", &err);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    MainWindow w;
    QVERIFY(open_window(w, path));
    w.show_tab(MainWindow::TimelineTab);
    TimelineView* tl = w.timeline();
    QVERIFY(!tl->select_interval(0, 1e15).empty());
    QVERIFY(!tl->interval_totals().empty());
    tl->setFocus();
    QTest::keyClick(tl, Qt::Key_Escape);
    QVERIFY(tl->interval_totals().empty());
    QVERIFY(!tl->clear_marks());
  }

  void profile_lanes_match_the_trace() {
    // examples/hello_tensor under VIZ=-1: its buffers make a memory lane per device, its tg::profile_range a USER
    // lane, its two markers lines across the timeline. Each is checked against SQL over the same file.
    QString err, path = hello_trace("profile.trace.db", &err);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    MainWindow w;
    QVERIFY(open_window(w, path));
    w.show_tab(MainWindow::TimelineTab);
    TimelineView* tl = w.timeline();
    QCOMPARE((int64_t)tl->marker_count(), sql_int(path, "SELECT COUNT(*) FROM markers"));
    QCOMPARE((int64_t)tl->marker_count(), (int64_t)2);
    std::map<QString, size_t> lanes;
    for (const auto& [name, n] : tl->lane_summary()) lanes[name] += n;
    QCOMPARE((int64_t)lanes["USER"], sql_int(path,
                                             "SELECT COUNT(*) FROM ranges r JOIN strings d ON d.id=r.device "
                                             "WHERE d.value='USER'"));
    // every device's lane: one point per alloc and free, and its peak is the running sum's maximum
    QVERIFY(!tl->memory_lanes().empty());
    for (const auto& m : tl->memory_lanes()) {
      std::string dev = "(SELECT id FROM strings WHERE value='" + m.device + "')";
      QCOMPARE((int64_t)lanes[QString::fromStdString(m.device) + " memory"],
               sql_int(path, "SELECT COUNT(*) FROM mem_events WHERE device=" + dev));
      QCOMPARE(m.peak, sql_int(path,
                               "SELECT MAX(live) FROM (SELECT SUM(CASE kind WHEN 1 THEN nbytes ELSE -nbytes END) "
                               "OVER (ORDER BY t, id) AS live FROM mem_events WHERE device=" +
                                   dev + ")"));
    }
    // hover and click on a buffer's allocation: it is that buffer, and the kernels that used it are marked
    const tg::viz::MemoryLane* cpu = nullptr;
    for (const auto& m : tl->memory_lanes())
      if (m.device == "CPU") cpu = &m;
    QVERIFY(cpu);
    const tg::viz::BufferLife* used = nullptr;
    for (const auto& b : cpu->buffers)
      if (!b.users.empty() && (!used || b.nbytes > used->nbytes)) used = &b;
    QVERIFY(used);
    tl->show_range((double)(used->t_alloc - w.session()->time_origin()) - 2000,
                   (double)(used->t_alloc - w.session()->time_origin()) + 2000);
    auto pt = tl->point_of_buffer(used->buffer, true);
    QVERIFY(pt);
    QCOMPARE(tl->buffer_at(*pt), used);
    QTest::mouseClick(tl, Qt::LeftButton, {}, *pt);
    QCOMPARE(tl->selected_buffer(), used);
    // the filter: spans of one kernel name stay, the count is SQL's
    std::string kname = tg::viz::Trace::open(path.toStdString())->kernel_events().front().name;
    size_t n = tl->set_filter(QString::fromStdString(kname));
    QVERIFY(n >= (size_t)sql_int(path, "SELECT COUNT(*) FROM kernel_events_view WHERE name='" + kname + "'"));
    tl->set_filter("");
    // an interval's totals: between the two markers, the kernel runs that start inside, by name
    QVERIFY(tl->show_markers("first graphs", "random").isEmpty());
    size_t runs = 0;
    for (const auto& t : tl->interval_totals())
      if (!t.name.startsWith("USER")) runs += t.count;
    QCOMPARE((int64_t)runs,
             sql_int(path,
                     "SELECT COUNT(*) FROM kernel_events WHERE t_start >= (SELECT t FROM markers m JOIN strings s "
                     "ON s.id=m.name WHERE s.value='first graphs') AND t_start <= (SELECT t FROM markers m JOIN "
                     "strings s ON s.id=m.name WHERE s.value='random')"));
    QVERIFY(runs > 0);
    QVERIFY(!tl->show_markers("nowhere", "").isEmpty());
  }

  void cl_trace_has_device_timed_lanes() {
    // examples/hello_tensor on CL (PoCL): its kernels on a "CL kernels" lane, timed on the device clock, its copies
    // from host data on "CL:COPY"; the Code tab shows the OpenCL C
    QString path = dir_.filePath("cl.trace.db");
    qputenv("DEV", "CL");
    QString err = record_trace(TV_TENSOR_BIN, path);
    qunsetenv("DEV");
    QVERIFY2(err.isEmpty(), qPrintable(err));
    int64_t kernels = sql_int(path, "SELECT COUNT(*) FROM kernel_events_view WHERE device='CL'");
    int64_t copies = sql_int(path, "SELECT COUNT(*) FROM kernel_events_view WHERE device='CL:COPY'");
    QVERIFY(kernels > 0);
    QVERIFY(copies > 0);
    QCOMPARE(sql_int(path, "SELECT COUNT(*) FROM kernel_events_view WHERE device LIKE 'CPU%'"), (int64_t)0);
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_trace(path));
    QVERIFY(wait_idle(w));
    w.show_tab(MainWindow::TimelineTab);
    std::map<QString, size_t> lanes;
    for (const auto& [name, n] : w.timeline()->lane_summary()) lanes[name] += n;
    QCOMPARE((int64_t)lanes["CL kernels"], kernels);
    QCOMPARE((int64_t)lanes["CL:COPY kernels"], copies);
    auto t = Trace::open(path.toStdString());
    const ProgramRow* p = nullptr;
    for (const auto& x : t->programs())
      if (x.context) p = &x;
    QVERIFY(p);
    QCOMPARE(QString::fromStdString(p->device), QString("CL"));
    w.select({p->context, 0, 0});
    w.show_tab(MainWindow::CodeTab);
    QVERIFY(wait_idle(w));
    QTRY_VERIFY(w.code()->text().contains("__kernel void " + QString::fromStdString(p->name) + "("));
  }

  void timeline_hit_selects_the_step() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    w.show_tab(MainWindow::TimelineTab);
    TimelineView* tl = w.timeline();
    QCOMPARE(tl->span_count(), t_->steps().size() + t_->contexts().size());
    int64_t target = w.model()->step_order()[5];
    tl->reveal(target);
    auto p = tl->point_of(target);
    QVERIFY(p);
    auto h = tl->hit(*p);
    QVERIFY(h);
    QCOMPARE(h->step, target);
    QVERIFY(!tl->hit(QPoint(5, 5)));  // the axis
    QTest::mouseClick(tl, Qt::LeftButton, {}, *p);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().step, target);
    // zoomed all the way out, the first and the last step are on screen (how fast that paints is make bench's)
    tl->show_all();
    tl->repaint();
    QVERIFY(tl->point_of(w.model()->step_order().front()));
    QVERIFY(tl->point_of(w.model()->step_order().back()));
  }

  void search_filters_by_name_and_rule() {
    MainWindow w;
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    w.search_box()->setText("final symbolic");
    QTRY_VERIFY(w.filter()->text() == "final symbolic");
    int shown = 0;
    for (int c = 0; c < w.filter()->rowCount(); c++) {
      QModelIndex ci = w.filter()->index(c, 0);
      for (int s = 0; s < w.filter()->rowCount(ci); s++) {
        QVERIFY(w.filter()->index(s, 0, ci).data().toString().contains("final symbolic"));
        shown++;
      }
    }
    QCOMPARE(shown, (int)sql_int(trace_, "SELECT COUNT(*) FROM steps_view WHERE name='final symbolic'"));
    // by rule file:line: the steps holding a match of that rule
    auto rule = *t_->rule(t_->matches(step_)[0].rule);
    QString site = QString::fromStdString(rule.file + ":" + std::to_string(rule.line));
    w.search_box()->setText(site);
    QTRY_VERIFY_WITH_TIMEOUT(w.filter()->mapFromSource(w.model()->index_of({0, step_, 0})).isValid(), 5000);
    // and a step without that rule's matches is filtered out
    int64_t other = 0;
    std::vector<int64_t> with = t_->steps_with_rules({rule.id});
    for (const auto& s : t_->steps())
      if (!std::count(with.begin(), with.end(), s.id) && s.name.find("symbolic") != std::string::npos) other = s.id;
    QVERIFY(other);
    QVERIFY(!w.filter()->mapFromSource(w.model()->index_of({0, other, 0})).isValid());
    // clearing the search brings every step back, keeps the selection and leaves it current in the tree
    w.select({t_->step(step_).context, step_, 2});
    QVERIFY(wait_idle(w));
    Selection before = w.selection();
    w.search_box()->setText("");
    QTRY_VERIFY(w.filter()->text().isEmpty());
    QVERIFY(w.filter()->mapFromSource(w.model()->index_of({0, other, 0})).isValid());
    QCOMPARE(w.selection(), before);
    QCOMPARE(w.filter()->mapToSource(w.tree()->currentIndex()), w.model()->index_of(before));
  }

  void broken_files_show_errors_and_the_app_keeps_running() {
    MainWindow w;
    QString missing = dir_.filePath("nope.db");
    QVERIFY(!w.open_trace(missing));
    QVERIFY(w.message_bar()->text().contains("no such file"));
    QString junk = dir_.filePath("junk.db");
    {
      QFile f(junk);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray(4096, 'x'));
    }
    QVERIFY(!w.open_trace(junk));
    QVERIFY(w.message_bar()->text().contains("not a tinygrad trace"));
    // somebody else's SQLite database
    QString foreign = dir_.filePath("foreign.db");
    {
      sqlite3* db = nullptr;
      sqlite3_open(foreign.toStdString().c_str(), &db);
      sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", nullptr, nullptr, nullptr);
      sqlite3_close(db);
    }
    QVERIFY(!w.open_trace(foreign));
    QVERIFY(w.message_bar()->text().contains("not a tinygrad trace"));
    // a truncated copy of a real trace
    QString cut = dir_.filePath("cut.db");
    {
      QFile src(trace_);
      QVERIFY(src.open(QIODevice::ReadOnly));
      QByteArray head = src.read(3000);
      QFile f(cut);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(head);
    }
    QVERIFY(!w.open_trace(cut));
    QVERIFY(!w.message_bar()->text().isEmpty());
    // a newer schema
    QString newer = dir_.filePath("newer.db");
    QVERIFY(QFile::copy(trace_, newer));
    sql_int(newer, "SELECT 1");
    {
      sqlite3* db = nullptr;
      sqlite3_open(newer.toStdString().c_str(), &db);
      sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr);
      sqlite3_close(db);
    }
    QVERIFY(!w.open_trace(newer));
    QVERIFY(w.message_bar()->text().contains("newer"));
    // still alive: a good trace opens and draws
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    QVERIFY(w.graph()->frame());
    QVERIFY(w.message_bar()->isHidden());
    // a frame that cannot be built is a message, not a crash
    w.loader()->request(step_, 100000);
    QVERIFY(wait_idle(w));
    QVERIFY(!w.message_bar()->isHidden());
    QVERIFY(w.message_bar()->text().contains("cannot be built"));
  }

  void cancelling_graphviz_shows_the_simple_layout() {
    MainWindow w;
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    int64_t other = w.model()->step_order()[2];
    w.select({0, other, 0});
    w.loader()->cancel_layout();  // Esc before Graphviz could answer
    QVERIFY(wait_idle(w));
    FrameResultPtr r = w.graph()->frame();
    QVERIFY(r);
    QCOMPARE(r->graph->step, other);
    QCOMPARE(r->layout->engine, std::string("layered"));
    QVERIFY(!r->note.isEmpty());
    // R asks for Graphviz again and waits for it
    w.loader()->relayout();
    QVERIFY(wait_idle(w));
    QCOMPARE(w.graph()->frame()->layout->engine, std::string("dot"));
  }

  void reload_keeps_the_selection() {
    MainWindow w;
    QVERIFY(w.open_trace(trace_));
    w.select({0, step_, 2});
    QVERIFY(wait_idle(w));
    w.reload();
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().step, step_);
    QCOMPARE(w.selection().frame, size_t(2));
    QCOMPARE(w.graph()->frame()->graph->frame, size_t(2));
  }

  void code_tab_shows_the_graphs_as_text() {
    MainWindow w;
    w.show();
    QVERIFY(w.open_trace(trace_));
    w.select({0, step_, 0});
    w.show_tab(MainWindow::CodeTab);
    QVERIFY(wait_idle(w));
    QTRY_VERIFY(w.code()->text().contains("## input"));
    QVERIFY(w.code()->text().contains("## output"));
  }

  void screenshot_writes_a_png() {
    QString out = dir_.filePath("shot.png");
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    p.setProcessEnvironment(env);
    int64_t ctx = t_->step(step_).context;
    p.start(TV_APP_BIN,
            {"--screenshot", out, "--select", QString("%1/%2/3").arg(ctx).arg(step_), "--size", "1200x800", trace_});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 0);
    QImage img(out);
    QVERIFY(!img.isNull());
    QCOMPARE(img.size(), QSize(1200, 800));
    // a drawn graph: many pixels in node colours, not just the dark background
    int bright = 0;
    for (int y = 0; y < img.height(); y += 2)
      for (int x = 0; x < img.width(); x += 2)
        if (qGray(img.pixel(x, y)) > 180) bright++;
    QVERIFY2(bright > 2000, qPrintable(QString("only %1 bright pixels").arg(bright)));
    // bad arguments: a message and a non-zero exit, no window
    p.start(TV_APP_BIN, {"--select", "x/y", trace_});
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(p.exitCode(), 2);
  }
};

int main(int argc, char** argv) {
  App app(argc, argv);  // tinyviz's: App::notify catches what reaches the event loop
  apply_theme(app);
  int rc = run_layout_tests(argc, argv);
  TestTinyviz t;
  rc |= QTest::qExec(&t, argc, argv);
  rc |= run_feature_tests(argc, argv);
  rc |= run_bad_trace_tests(argc, argv);
  rc |= run_kernel_graph_tests(argc, argv);
  rc |= run_compare_tests(argc, argv);
  rc |= run_profiler_tests(argc, argv);
  return rc;
}

#include "test_tinyviz.moc"
