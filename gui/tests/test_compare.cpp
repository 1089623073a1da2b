// The Compare tab on a real seeded difference: hello_tensor recorded as is (A) and with one rule disabled
// (DISABLE_RULE=file:line: B, whose other rules rewrite to the same graphs, and C, whose graphs differ). The tab opens
// on that rule's first match in A, its row says where the step differs, F8 / Shift+F8 / Ctrl+F8 move between
// divergences, the outlined nodes of a differing frame have no structural twin in the other trace's frame (checked
// against the reader's replay), the Stats tab lists the rule's counts in both, and a double click opens A's step in the
// Graph tab.
#include <QLabel>
#include <QWheelEvent>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>
#include <unordered_set>

#include "gui/compare_view.h"
#include "gui/graph_items.h"
#include "gui/graph_view.h"
#include "gui/text_diff.h"
#include "gui/main_window.h"
#include "gui/stats_view.h"
#include "gui/trace_tree.h"
#include "gui/tests/demo_trace.h"
#include "viz/reader/diff.h"
#include "viz/reader/reader.h"
#include "viz/reader/replay.h"

using namespace tv;
using namespace tg::viz;

class TestCompare : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString a_, b_, c_;
  int line_ = 0;                            // the disabled rule's line in symbolic.cpp
  int64_t first_step_ = 0, first_ord_ = 0;  // its first match in A (0-based ordinal)
  int64_t count_a_ = 0;                     // its matches in A

  // a 1600x1000 window showing trace A, idle (the comparisons open from it)
  static bool show_a(MainWindow& w, const QString& a) {
    w.resize(1600, 1000);
    w.show();
    return w.open_trace(a) && wait_idle(w, 30000);
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    a_ = dir_.filePath("a.trace.db");
    b_ = dir_.filePath("b.trace.db");
    QString err = record_trace(TV_TENSOR_BIN, a_);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    auto t = Trace::open(a_.toStdString());
    // symbolic_simple's bool folding `x | c`, found by its source (hello_tensor runs without it)
    for (const RuleRow& r : t->rules())
      if (r.file.ends_with("/symbolic.cpp") &&
          r.source.find("UPat::var(\"x\", dtypes::bool_) | UPat::cvar(\"c\")") != std::string::npos)
        line_ = r.line;
    QVERIFY(line_ > 0);
    // its first match: contexts in order, their steps in order, matches in order
    for (const ContextRow& c : t->contexts()) {
      for (int64_t s : c.steps) {
        for (const MatchRow& m : t->matches(s)) {
          auto r = t->rule(m.rule);
          if (r && r->file.ends_with("/symbolic.cpp") && r->line == line_) {
            if (!first_step_) first_step_ = s, first_ord_ = m.ordinal;
            count_a_++;
          }
        }
      }
    }
    QVERIFY(first_step_ > 0 && count_a_ > 0);
    err = record_trace(TV_TENSOR_BIN, b_, 120000, {QString("DISABLE_RULE=symbolic.cpp:%1").arg(line_)});
    QVERIFY2(err.isEmpty(), qPrintable(err));
    // another rule B replaces with an equal rewrite; C lacks a rule whose absence changes the graphs: the folding of
    // a WHERE on a constant gate
    int where_line = 0;
    for (const RuleRow& r : t->rules())
      if (r.file.ends_with("/symbolic.cpp") &&
          r.source.find("UPat::cvar(\"gate\").where(UPat::var(\"c0\"), UPat::var(\"c1\"))") != std::string::npos)
        where_line = r.line;
    QVERIFY(where_line > 0);
    c_ = dir_.filePath("c.trace.db");
    err = record_trace(TV_TENSOR_BIN, c_, 120000, {QString("DISABLE_RULE=symbolic.cpp:%1").arg(where_line)});
    QVERIFY2(err.isEmpty(), qPrintable(err));
  }

  void opens_on_the_disabled_rules_first_match() {
    MainWindow w(nullptr, false);
    QVERIFY(show_a(w, a_));
    QVERIFY(!w.tabs()->isTabVisible(MainWindow::CompareTab));
    QVERIFY(w.compare_with(b_));
    QVERIFY(wait_idle(w, 30000));
    CompareView* c = w.compare();
    QVERIFY(c->active());
    QVERIFY(w.tabs()->isTabVisible(MainWindow::CompareTab));
    QCOMPARE(w.tabs()->currentIndex(), (int)MainWindow::CompareTab);
    const TraceDiff& d = *c->diff();
    QVERIFY(d.diverged);
    QCOMPARE(d.first_a.step, first_step_);
    QCOMPARE(d.first_a.ordinal, first_ord_ + 1);
    QCOMPARE(QString::fromStdString(d.first_a.rule), QString("symbolic.cpp:%1").arg(line_));
    // the selected pair is that step, at the frame after that match, on both sides
    const StepPair& p = d.pairs[c->current().ctx].steps[c->current().step];
    QCOMPARE(p.a, first_step_);
    QCOMPARE(p.status, DiffStatus::differs);
    QCOMPARE(c->current().frame, (size_t)first_ord_ + 1);
    QVERIFY(c->graph_a()->frame() && c->graph_b()->frame());
    QCOMPARE(c->graph_a()->frame()->graph->step, first_step_);
    QCOMPARE(c->graph_a()->frame()->graph->frame, (size_t)first_ord_ + 1);
    QCOMPARE(c->graph_b()->frame()->graph->step, p.b);
    // B's other rule rewrote the node to the same result: the frames hold the same structures, nothing is outlined
    QCOMPARE(c->differing_a() + c->differing_b(), (size_t)0);
    QVERIFY(c->origins_a().empty() && c->origins_b().empty());
    // its row says so, and is the current one
    QTreeWidgetItem* row = c->tree()->currentItem();
    QVERIFY(row);
    QCOMPARE(row->text(1), QString("≠ match %1").arg(first_ord_ + 1));
    QVERIFY(c->summary()->text().contains(QString("symbolic.cpp:%1").arg(line_)));
    // the Stats tab: the rule's counts in both traces
    QTableView* deltas = w.stats()->delta_table();
    QVERIFY(deltas->isVisibleTo(w.stats()));
    QCOMPARE(deltas->model()->rowCount(), (int)d.rules.size());
    bool listed = false;
    for (int r = 0; r < deltas->model()->rowCount(); r++)
      if (deltas->model()->index(r, 0).data().toString() == QString("symbolic.cpp:%1").arg(line_)) {
        listed = true;
        QCOMPARE(deltas->model()->index(r, 1).data().toLongLong(), count_a_);
        QCOMPARE(deltas->model()->index(r, 2).data().toLongLong(), 0LL);
      }
    QVERIFY(listed);
    // a double click on the row opens A's step at that frame in the Graph tab
    emit c->tree()->itemDoubleClicked(row, 0);
    QVERIFY(wait_idle(w, 30000));
    QCOMPARE(w.selection().step, first_step_);
    QCOMPARE(w.selection().frame, (size_t)first_ord_ + 1);
    QCOMPARE(w.tabs()->currentIndex(), (int)MainWindow::GraphTab);
  }

  void divergences_one_key_away_and_outlines_without_twins() {
    MainWindow w(nullptr, false);
    QVERIFY(show_a(w, a_));
    QVERIFY(w.compare_with(c_));
    QVERIFY(wait_idle(w, 30000));
    CompareView* c = w.compare();
    const TraceDiff& d = *c->diff();
    auto at = [&] { return std::pair{c->current().ctx, c->current().step}; };
    auto first = at();
    // F8: the next differing pair (both sides present, not equal); Shift+F8 back; Ctrl+F8 the first again
    QTest::keyClick(&w, Qt::Key_F8);
    QVERIFY(wait_idle(w, 30000));
    auto next = at();
    QVERIFY(next != first);
    const StepPair& np = d.pairs[next.first].steps[next.second];
    QVERIFY(np.a && np.b && np.status != DiffStatus::equal);
    // nothing differing lies between the two
    bool between = false, in_range = false;
    for (size_t ci = 0; ci < d.pairs.size(); ci++)
      for (size_t k = 0; k < d.pairs[ci].steps.size(); k++) {
        auto here = std::pair{ci, k};
        if (here == next) in_range = false;
        const StepPair& sp = d.pairs[ci].steps[k];
        if (in_range && sp.a && sp.b && sp.status != DiffStatus::equal) between = true;
        if (here == first) in_range = true;
      }
    QVERIFY(!between);
    QTest::keyClick(&w, Qt::Key_F8, Qt::ShiftModifier);
    QVERIFY(wait_idle(w, 30000));
    QVERIFY(at() == first);
    QTest::keyClick(&w, Qt::Key_F8);
    QVERIFY(wait_idle(w, 30000));
    QTest::keyClick(&w, Qt::Key_F8, Qt::ControlModifier);
    QVERIFY(wait_idle(w, 30000));
    QVERIFY(at() == first);

    // walk the divergences until a pair whose frames differ in structure; its outlines, checked with the reader
    auto ta = Trace::open(a_.toStdString()), tb = Trace::open(c_.toStdString());
    NodeShapes sa(*ta), sb(*tb);
    int checked = 0;
    for (int hops = 0; hops < 40 && !checked; hops++) {
      if (c->differing_a() + c->differing_b() > 0) {
        const StepPair& sp = d.pairs[c->current().ctx].steps[c->current().step];
        FrameResultPtr fa = c->graph_a()->frame(), fb = c->graph_b()->frame();
        QVERIFY(fa && fb);
        // each side's frame as the reader's replay builds it
        StepReplay ra(*ta, sp.a), rb(*tb, sp.b);
        std::unordered_set<uint64_t> shapes_a, shapes_b;
        for (int64_t n : ra.nodes(fa->graph->frame)) shapes_a.insert(sa.of(n));
        for (int64_t n : rb.nodes(fb->graph->frame)) shapes_b.insert(sb.of(n));
        QVERIFY(shapes_a != shapes_b);
        auto outlined_without_twin = [&](GraphView* g, Trace& t, NodeShapes& mine, std::unordered_set<uint64_t>& other,
                                         const std::vector<int64_t>& origins) {
          int outlined = 0;
          std::unordered_set<int64_t> origin_set(origins.begin(), origins.end());
          for (size_t i = 0; i < g->node_items().size(); i++) {
            if (!g->is_marked_differing((int)i)) continue;
            outlined++;
            int64_t id = g->frame()->graph->nodes[i].key.id;
            // an origin has no twin; a drawn user standing in for an undrawn origin has none either (its source
            // differs)
            if (other.count(mine.of(id))) return -1;
            if (!origin_set.count(id)) {
              bool stands_in = false;
              for (int64_t s : t.node(id).src) stands_in |= origin_set.count(s) > 0;
              if (!stands_in) return -1;
            }
          }
          return outlined;
        };
        int oa = outlined_without_twin(c->graph_a(), *ta, sa, shapes_b, c->origins_a());
        int ob = outlined_without_twin(c->graph_b(), *tb, sb, shapes_a, c->origins_b());
        QVERIFY2(oa >= 0 && ob >= 0, "an outlined node has a twin in the other frame");
        QVERIFY(oa + ob > 0);
        // and every origin is a node of its frame with no twin on the other side
        for (int64_t id : c->origins_a()) QVERIFY(!shapes_b.count(sa.of(id)));
        for (int64_t id : c->origins_b()) QVERIFY(!shapes_a.count(sb.of(id)));
        checked++;
        break;
      }
      // the next match on both sides, then the next divergence
      size_t before = c->current().frame;
      c->step_frame(+1);
      QVERIFY(wait_idle(w, 30000));
      if (c->current().frame == before) {
        if (!c->next_divergence(+1)) break;
        QVERIFY(wait_idle(w, 30000));
      }
    }
    QVERIFY2(checked, "no compared frame pair differs in structure");
    // closing the comparison hides the tab and the deltas
    w.close_compare();
    QVERIFY(!c->active());
    QVERIFY(!w.tabs()->isTabVisible(MainWindow::CompareTab));
    QVERIFY(!w.stats()->delta_table()->isVisibleTo(w.stats()));
  }

  // the panes take the width (the window's own tree and panel step aside), zoom together, and their counts lines sit
  // under the graphs, whole or elided, never cut
  void the_panes_use_the_width_and_zoom_together() {
    MainWindow w(nullptr, false);
    QVERIFY(show_a(w, a_));
    QVERIFY(w.compare_with(b_));
    QVERIFY(wait_idle(w, 30000));
    CompareView* c = w.compare();
    QTRY_VERIFY(c->graph_a()->frame() && c->graph_b()->frame());
    QVERIFY(!w.tree()->isVisible());
    QVERIFY2(c->graph_a()->width() >= 550 && c->graph_b()->width() >= 550,
             qPrintable(QString("panes %1 and %2 px").arg(c->graph_a()->width()).arg(c->graph_b()->width())));
    double before = c->graph_b()->zoom();
    QPoint mid = c->graph_a()->viewport()->rect().center();
    QWheelEvent wheel(mid, c->graph_a()->viewport()->mapToGlobal(mid), QPoint(), QPoint(0, 240), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(c->graph_a()->viewport(), &wheel);
    QVERIFY(std::abs(c->graph_a()->zoom() - before) > 1e-6);
    QCOMPARE(c->graph_b()->zoom(), c->graph_a()->zoom());
    for (GraphView* g : {c->graph_a(), c->graph_b()}) {
      QVERIFY(g->footer_text().contains("nodes · "));
      QVERIFY(g->footer_rect().top() > g->viewport()->geometry().bottom());  // under the graph, not over it
    }
    // a node outlined for its label alone is paired with its counterpart: the same op, a different label
    for (const auto& d : c->label_diffs()) {
      QVERIFY(d.label_a != d.label_b);
      QCOMPARE(QString::fromStdString(d.label_a).section('\n', 0, 0), QString::fromStdString(d.label_b).section('\n', 0, 0));
    }
    // the words that differ between two labels, not the whole label
    std::vector<DiffLine> wd = word_diff("PROGRAM\nr_2_2_3 CPU", "PROGRAM\nr_2_2_4 CPU");
    QString minus, plus;
    for (const DiffLine& x : wd) (x.kind == '-' ? minus : x.kind == '+' ? plus : minus) += x.kind == ' ' ? QString() : QString::fromStdString(x.text);
    QCOMPARE(minus.trimmed(), QString("r_2_2_3"));
    QCOMPARE(plus.trimmed(), QString("r_2_2_4"));
    // back on the Graph tab the window's tree returns
    w.show_tab(MainWindow::GraphTab);
    QVERIFY(w.tree()->isVisible());
  }

  void a_missing_file_is_an_error_and_keeps_the_window() {
    MainWindow w(nullptr, false);
    w.show();
    QVERIFY(w.open_trace(a_));
    QSignalSpy err(&w, &MainWindow::error_shown);
    QVERIFY(!w.compare_with(dir_.filePath("nope.trace.db")));
    QCOMPARE(err.count(), 1);
    QVERIFY(err.front().front().toString().contains("nope.trace.db"));
    QVERIFY(!w.compare()->active());
    QVERIFY(w.session());
  }
};

int run_compare_tests(int argc, char** argv) {
  TestCompare t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_compare.moc"
