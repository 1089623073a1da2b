// The schedule's kernel graph on a trace of a real tensor program (examples/hello_tensor under VIZ=-1), drawn as the
// reference's VIZ draws it: every CALL names its kernel and links to its codegen context, kernel bodies hidden until
// asked (c, or X on one CALL), a SINK nothing uses hidden (s), indexing shown or not (r), no terminal escapes in any
// label; Enter on a CALL opens its kernel's codegen and Alt+Left comes back; the status bar counts what the reader
// counts.
#include <QCheckBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>
#include <set>

#include <unordered_map>

#include "gui/graph_items.h"
#include "viz/reader/replay.h"
#include "gui/graph_view.h"
#include "gui/main_window.h"
#include "gui/tests/demo_trace.h"
#include "gui/rule_panel.h"
#include "gui/timeline_view.h"
#include "viz/reader/argfmt.h"
#include "viz/reader/reader.h"

using namespace tv;
using namespace tg::viz;

namespace {

bool is_call(const GNode& g) { return g.op == "CALL" || g.op == "FUNCTION"; }
}  // namespace

class TestKernelGraph : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString trace_;
  std::unique_ptr<Trace> t_;
  int64_t kernel_graph_ = 0;  // the "View Kernel Graph" step with the biggest graph
  size_t calls_ = 0;          // its CALL nodes

  const FrameGraph& frame(MainWindow& w) { return *w.graph()->frame()->graph; }
  void show_kernel_graph(MainWindow& w) {
    w.select({t_->step(kernel_graph_).context, kernel_graph_, 0});
    QVERIFY(wait_idle(w));
    QVERIFY(w.graph()->frame());
    QCOMPARE(frame(w).step, kernel_graph_);
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings("tinygrad-cpp", "tinyviz").clear();
    QVERIFY(dir_.isValid());
    trace_ = dir_.filePath("tensor.trace.db");
    QString err = record_trace(TV_TENSOR_BIN, trace_);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    t_ = Trace::open(trace_.toStdString());
    size_t best = 0;
    for (const StepRow& s : t_->steps()) {
      if (s.name != "View Kernel Graph") continue;
      StepReplay r(*t_, s.id);
      size_t calls = 0;
      for (int64_t n : r.nodes(0)) calls += t_->node(n).op_name == "CALL";
      if (calls > best) best = calls, kernel_graph_ = s.id, calls_ = calls;
    }
    QVERIFY2(kernel_graph_ && calls_ >= 2, "hello_tensor's trace has no kernel graph with two CALLs");
  }
  void cleanupTestCase() { QSettings("tinygrad-cpp", "tinyviz").clear(); }

  void every_call_names_its_kernel_and_bodies_start_hidden() {
    MainWindow w(nullptr, false);
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_trace(trace_));
    show_kernel_graph(w);
    const FrameGraph& g = frame(w);
    size_t calls = 0;
    for (const GNode& n : g.nodes) {
      for (const std::string& l : n.lines) {
        // escapes only as the colours of a kernel's name (drawn as colours, never as text), never escaped text
        QVERIFY2(l.find("\\x1b") == std::string::npos, l.c_str());
        QVERIFY2(l.find('\x1b') == std::string::npos || l.rfind("codegen@", 0) == 0, l.c_str());
        QVERIFY2(!l.empty() && l != "?", n.op.c_str());
      }
      if (!is_call(n)) continue;
      calls++;
      // the kernel's name and device, and the link to its codegen context (a context that compiled a program)
      QVERIFY(n.ref_context);
      const ContextRow& c = t_->context(n.ref_context);
      // (the name in the reference's colours: the recorded name with its ANSI escapes)
      QCOMPARE(QString::fromStdString(n.lines.at(1)).section("  ", 0, 0), QString::fromStdString("codegen@" + c.name_ansi));
      QCOMPARE(QString::fromStdString(tg::viz::strip_ansi(n.lines.at(1))).section("  ", 0, 0),
               QString::fromStdString("codegen@" + c.name));
      QVERIFY2(n.lines.at(1).find("CPU") != std::string::npos, n.lines.at(1).c_str());
      QVERIFY(n.body_hidden);
      QVERIFY(w.graph()->is_collapsed(n.key.id));
    }
    QCOMPARE(calls, calls_);
    QCOMPARE(g.bodies_hidden.size(), calls_);
    // no kernel body drawn: nothing of a kernel's AST (its SINK, STOREs, RANGEs)
    for (const GNode& n : g.nodes) QVERIFY2(n.op != "STORE" && n.op != "RANGE" && n.op != "SINK", n.op.c_str());
  }

  // a node with many drawn sources draws no edge to a source another of them reaches (its label counts them), and a
  // LINEAR's sources stand in a column linked by dashed "runs after" edges. hello_tensor's graphs are small: the
  // threshold is lowered to 2 sources
  void wide_nodes_leave_out_implied_edges_and_linear_is_a_column() {
    MainWindow w(nullptr, false);
    QVERIFY(w.open_trace(trace_));
    FrameOptions o = w.loader()->options();
    o.wide_srcs = 2, o.show_sink = true;
    w.set_frame_options(o);
    auto first_step = [&](const std::string& name) {
      for (const StepRow& s : t_->steps())
        if (s.name == name) return s.id;
      return int64_t(0);
    };
    auto in_edges = [](const FrameGraph& g, int64_t id, bool order) {
      size_t n = 0;
      for (const GEdge& e : g.edges) n += g.nodes[e.dst].key.id == id && e.order == order;
      return n;
    };
    auto node = [](const FrameGraph& g, int64_t id) -> const GNode* {
      for (const GNode& n : g.nodes)
        if (n.key.id == id && !n.key.via) return &n;
      return nullptr;
    };
    // a kernel graph whose root is a SINK over the AFTERs of several kernels: a later kernel's AFTER reaches the
    // earlier ones
    int64_t kg = 0;
    for (const StepRow& s : t_->steps())
      if (s.name == "View Kernel Graph" && !kg) {
        const Node& root = t_->node(StepReplay(*t_, s.id).root(0));
        if (std::set<int64_t>(root.src.begin(), root.src.end()).size() >= 3) kg = s.id;
      }
    QVERIFY(kg);
    w.select({0, kg, 0});
    QVERIFY(wait_idle(w));
    {
      const FrameGraph& g = frame(w);
      const GNode* root = node(g, g.root);
      QVERIFY(root);
      QVERIFY2(root->lines.back().find("srcs reached through others") != std::string::npos, root->lines.back().c_str());
      size_t left_out = std::stoul(root->lines.back().substr(root->lines.back().find(' ') + 1));
      std::set<int64_t> srcs(t_->node(g.root).src.begin(), t_->node(g.root).src.end());
      QVERIFY(left_out >= 1);
      QCOMPARE(in_edges(g, g.root, false) + left_out, srcs.size());
    }
    // a LINEAR of three CALLs: one edge to the first, then "runs after" edges between the calls
    int64_t linear_step = first_step("resolve linear call");
    QVERIFY(linear_step);
    o.show_call_src = true;  // the LINEAR is the body of the CALL that runs the schedule
    w.set_frame_options(o);
    w.select({0, linear_step, 0});
    QVERIFY(wait_idle(w));
    int64_t linear = 0;
    for (const GNode& n : frame(w).nodes)
      if (n.op == "LINEAR") linear = n.key.id;
    QVERIFY(linear);
    size_t calls = std::set<int64_t>(t_->node(linear).src.begin(), t_->node(linear).src.end()).size();
    QVERIFY(calls >= 2);
    QCOMPARE(in_edges(frame(w), linear, false), size_t(1));
    size_t order = 0;
    for (const GEdge& e : frame(w).edges)
      if (e.order) {
        order++;
        QCOMPARE(frame(w).nodes[e.src].op, std::string("CALL"));
        QCOMPARE(frame(w).nodes[e.dst].op, std::string("CALL"));
      }
    QCOMPARE(order, calls - 1);
    QVERIFY(node(frame(w), linear)->lines.back().find("srcs in order") != std::string::npos);
    // both off: every source edge is drawn
    o.hide_implied_edges = false, o.linear_as_column = false;
    w.set_frame_options(o);
    QVERIFY(wait_idle(w));
    QCOMPARE(in_edges(frame(w), linear, false), calls);
    QCOMPARE(in_edges(frame(w), linear, true), size_t(0));
  }

  void the_reference_toggles_with_its_keys() {
    MainWindow w(nullptr, false);
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QVERIFY(w.open_trace(trace_));
    show_kernel_graph(w);
    size_t hidden_bodies = frame(w).nodes.size();
    w.graph()->setFocus();
    // c: every CALL's kernel body
    QTest::keyClick(w.graph(), Qt::Key_C);
    QVERIFY(w.call_src_box()->isChecked());
    QVERIFY(wait_idle(w));
    size_t with_bodies = frame(w).nodes.size();
    QVERIFY(frame(w).bodies_hidden.empty());
    QVERIFY2(with_bodies > hidden_bodies + calls_, qPrintable(QString("%1 -> %2").arg(hidden_bodies).arg(with_bodies)));
    bool store = false, weakint = false;
    for (const GNode& n : frame(w).nodes) {
      store = store || n.op == "STORE";
      for (const std::string& l : n.lines) weakint = weakint || l == "dtypes.weakint";
    }
    QVERIFY(store);
    QVERIFY(weakint);
    // r: indexing hidden, then shown again
    QTest::keyClick(w.graph(), Qt::Key_R);
    QVERIFY(!w.indexing_box()->isChecked());
    QVERIFY(wait_idle(w));
    for (const GNode& n : frame(w).nodes)
      for (const std::string& l : n.lines) QVERIFY2(l != "dtypes.weakint", n.op.c_str());
    QVERIFY(frame(w).n_filtered > 0);
    QTest::keyClick(w.graph(), Qt::Key_R);
    QVERIFY(wait_idle(w));
    QCOMPARE(frame(w).nodes.size(), with_bodies);
    // s: the SINK nothing uses (the kernel graph's root)
    auto root_drawn = [&] {
      for (const GNode& n : frame(w).nodes)
        if (n.key.id == frame(w).root) return true;
      return false;
    };
    QVERIFY(!root_drawn());
    QTest::keyClick(w.graph(), Qt::Key_S);
    QVERIFY(wait_idle(w));
    QVERIFY(root_drawn());
    // c again: bodies hidden; X on one CALL shows that body alone
    QTest::keyClick(w.graph(), Qt::Key_C);
    QVERIFY(wait_idle(w));
    QCOMPARE(frame(w).bodies_hidden.size(), calls_);
    int64_t call = frame(w).bodies_hidden.front();
    w.graph()->select_node(call);
    QTest::keyClick(w.graph(), Qt::Key_X);
    QVERIFY(wait_idle(w));
    QCOMPARE(frame(w).bodies_hidden.size(), calls_ - 1);
    QVERIFY(!w.graph()->is_collapsed(call));
    QTest::keyClick(w.graph(), Qt::Key_X);
    QVERIFY(wait_idle(w));
    QCOMPARE(frame(w).bodies_hidden.size(), calls_);
  }

  void enter_on_a_call_opens_its_codegen_and_alt_left_comes_back() {
    MainWindow w(nullptr, false);
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_trace(trace_));
    show_kernel_graph(w);
    const GNode* call = nullptr;
    for (const GNode& n : frame(w).nodes)
      if (is_call(n) && n.ref_context) call = &n;
    QVERIFY(call);
    int64_t ctx = call->ref_context, ast = t_->node(call->key.id).src.at(0);
    w.graph()->select_node(call->key.id);
    QTest::keyClick(w.graph(), Qt::Key_Return);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().context, ctx);
    QCOMPARE(w.selection().step, t_->context(ctx).steps.front());
    // the codegen context starts from the kernel's AST: the CALL's first source
    QCOMPARE(t_->step(w.selection().step).input_root, ast);
    w.back();
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().step, kernel_graph_);
    // a double click does the same
    const GNode* again = nullptr;
    for (const GNode& n : frame(w).nodes)
      if (n.ref_context == ctx) again = &n;
    QVERIFY(again);
    int index = (int)(again - frame(w).nodes.data());
    w.graph()->centerOn(w.graph()->node_items().at((size_t)index));
    QTest::mouseDClick(w.graph()->viewport(), Qt::LeftButton, {}, w.graph()->node_viewport_pos(index));
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().context, ctx);
  }

  void the_timeline_opens_on_the_whole_run() {
    auto whole_run = [](MainWindow& w) {
      auto [l, r] = w.timeline()->visible_range();
      return l <= 0 && r >= w.timeline()->total_ns() &&
             r <= 1.2 * w.timeline()->total_ns();  // the run fills the view, not a corner of it
    };
    {  // the lanes built on a later turn, while the tab is hidden
      MainWindow w(nullptr, false);
      w.resize(1400, 900);
      w.show();
      QVERIFY(w.open_trace(trace_));
      QVERIFY(wait_idle(w));
      w.show_tab(MainWindow::TimelineTab);
      QCoreApplication::processEvents();
      QVERIFY(whole_run(w));
    }
    {  // the tab shown and resized before the lanes are built (a screenshot of the timeline)
      MainWindow w(nullptr, false);
      w.show_tab(MainWindow::TimelineTab);
      w.show();
      QVERIFY(w.open_trace(trace_));
      w.resize(1500, 950);
      QVERIFY(wait_idle(w));
      QVERIFY(whole_run(w));
    }
  }

  void every_removed_node_drawn_before_stays_in_sight_as_a_ghost() {
    // stepping through the first matches of steps with several matches: whatever the previous frame drew and the
    // match removed is drawn as a ghost, where it stood or, when a node took that place, beside it; never under one
    MainWindow w(nullptr, false);
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    size_t frames_checked = 0, ghosts = 0, moved = 0;
    for (const StepRow& s : t_->steps()) {
      if (s.n_matches < 3 || frames_checked >= 60) continue;
      StepReplay rep(*t_, s.id);
      if (rep.num_frames() < 3) continue;
      w.select({s.context, s.id, 0});
      QVERIFY(wait_idle(w));
      for (size_t k = 1; k < std::min<size_t>(rep.num_frames(), 6); k++) {
        std::unordered_map<int64_t, QRectF> before;
        for (NodeItem* n : w.graph()->node_items())
          if (!n->node().hides) before[n->node().key.id] = n->sceneBoundingRect();
        w.navigate(Qt::Key_Right);
        QVERIFY(wait_idle(w));
        QCOMPARE(w.graph()->frame()->graph->frame, k);
        std::unordered_map<int64_t, QRectF> ghost;
        for (NodeItem* g : w.graph()->ghost_items()) ghost[g->node().key.id] = g->sceneBoundingRect();
        for (int64_t id : rep.delta(k).removed) {
          if (!before.count(id)) continue;
          QVERIFY2(ghost.count(id), qPrintable(QString("step %1 frame %2: node %3 has no ghost").arg(s.id).arg(k).arg(id)));
          ghosts++;
          moved += ghost[id].center() != before[id].center();
        }
        for (auto& [id, gr] : ghost)
          for (NodeItem* n : w.graph()->node_items()) {
            QRectF o = gr.intersected(n->sceneBoundingRect());
            QVERIFY2(o.width() * o.height() < 1, qPrintable(QString("step %1 frame %2: ghost %3 under node %4")
                                                               .arg(s.id).arg(k).arg(id).arg(n->node().key.id)));
          }
        frames_checked++;
      }
    }
    QVERIFY(frames_checked >= 20);
    QVERIFY(ghosts > 0);
    QVERIFY2(moved > 0, "no ghost had its place taken: the case is not covered");
  }

  void a_search_counts_its_hits_and_selects_the_first() {
    MainWindow w(nullptr, false);
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    auto search = [&](const QString& text) {
      w.search_box()->setText(text);
      QElapsedTimer t;
      t.start();
      while (t.elapsed() < 600) QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
      QVERIFY(wait_idle(w));
    };
    // by step name: the count of contexts and steps that name it, and the first such step selected
    search("view kernel graph");
    size_t steps = 0;
    int64_t first = 0;
    for (const StepRow& s : t_->steps())
      if (s.name == "View Kernel Graph") steps++, first = first ? first : s.id;
    QVERIFY(w.search_hits()->isVisible());
    QVERIFY2(w.search_hits()->text().contains(QString("0 contexts, %1 steps").arg(steps)),
             qPrintable(w.search_hits()->text()));
    QCOMPARE(w.selection().step, first);
    // by a rule's file:line: the first match of the rule, in the first step that holds one, selected
    std::unordered_map<int64_t, uint64_t> n_matches;
    for (const RuleStatRow& st : t_->rule_stats()) n_matches[st.rule] = st.matches;
    std::vector<RuleRow> rules = t_->rules();
    const RuleRow* rule = nullptr;
    for (const RuleRow& r : rules)
      if (n_matches[r.id] > 0 && r.file.find("symbolic") != std::string::npos) rule = &r;
    QVERIFY(rule);
    QString where = QString("%1:%2").arg(QString::fromStdString(rule->file).section('/', -1)).arg(rule->line);
    search(where);
    QTRY_VERIFY(w.search_hits()->text().contains("rules matched"));
    QTRY_VERIFY2(w.selection().frame > 0, qPrintable(QString("%1 -> step %2: %3").arg(where).arg(w.selection().step).arg(w.search_hits()->text())));
    const MatchRow* m = w.model()->match(w.selection().step, w.selection().frame);
    QVERIFY(m);
    std::optional<RuleRow> got = t_->rule(m->rule);
    QVERIFY(got);
    QVERIFY2((QString::fromStdString(got->file) + ":" + QString::number(got->line)).contains(where), qPrintable(where));
    w.search_box()->clear();
    QTRY_VERIFY(!w.search_hits()->isVisible());
  }

  void a_rules_site_opens_in_the_users_editor() {
    MainWindow w(nullptr, false);
    w.show();
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    int64_t step = 0;
    for (const StepRow& s : t_->steps())
      if (s.n_matches > 0 && !t_->matches(s.id).empty()) {
        step = s.id;
        break;
      }
    QVERIFY(step);
    w.select({t_->step(step).context, step, 1});
    QVERIFY(wait_idle(w));
    QString site = w.panel()->site();
    QVERIFY(!site.isEmpty());
    // $VISUAL gets +LINE and the file, found under the recording's source root
    QString out = dir_.filePath("editor.args"), script = dir_.filePath("editor.sh");
    QFile f(script);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QString("#!/bin/sh\necho \"$@\" > '%1'\n").arg(out).toUtf8());
    f.close();
    f.setPermissions(f.permissions() | QFile::ExeUser);
    qputenv("VISUAL", script.toUtf8());
    QString msg;
    bool ok = w.panel()->open_site(&msg);
    qunsetenv("VISUAL");
    QVERIFY2(ok, qPrintable(msg));
    QTRY_VERIFY(QFileInfo(out).size() > 0);
    QFile r(out);
    QVERIFY(r.open(QIODevice::ReadOnly));
    QStringList args = QString::fromUtf8(r.readAll()).trimmed().split(' ');
    QCOMPARE(args.size(), 2);
    QCOMPARE(args[0], "+" + site.section(':', -1));
    QVERIFY2(QFileInfo(args[1]).isAbsolute() && QFileInfo::exists(args[1]), qPrintable(args[1]));
    QVERIFY(args[1].endsWith(site.section(':', 0, -2)));
  }

  // a float constant reads as the reference's VIZ prints it, f"{x:g}" ("0.166667"), drawn or folded into its user;
  // the exact repr ("0.16666666666666666") stays in the node's details
  void float_constants_are_labelled_as_pythons_g() {
    int64_t step = 0, konst = 0;
    size_t smallest = SIZE_MAX;
    for (const StepRow& s : t_->steps()) {
      StepReplay r(*t_, s.id);
      std::vector<int64_t> nodes = r.nodes(0);
      if (nodes.size() >= smallest) continue;
      for (int64_t n : nodes)
        // a repr of 10 characters or more: no other line of the frame contains it by chance
        if (t_->node(n).op_name == "CONST" && t_->graph_arg_text(n) != t_->arg_text(n) &&
            t_->arg_text(n).size() >= 10) {
          step = s.id, konst = n, smallest = nodes.size();
          break;
        }
    }
    QVERIFY2(step, "hello_tensor's trace has no float constant whose repr is longer than its :g");
    const std::string g = t_->graph_arg_text(konst), repr = t_->arg_text(konst);
    QVERIFY2(t_->graph_label(konst).find("\n" + g) != std::string::npos, t_->graph_label(konst).c_str());
    QVERIFY(t_->label(konst).find(repr) != std::string::npos);
    MainWindow w(nullptr, false);
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_trace(trace_));
    w.select({t_->step(step).context, step, 0});
    QVERIFY(wait_idle(w));
    QVERIFY(w.graph()->frame());
    bool shown = false;
    for (const GNode& n : frame(w).nodes)
      for (const std::string& l : n.lines) {
        QVERIFY2(l.find(repr) == std::string::npos, l.c_str());
        shown = shown || l == g || (l.size() > g.size() && l.compare(l.size() - g.size(), g.size(), g) == 0);
      }
    QVERIFY2(shown, qPrintable(QString("no line shows %1").arg(QString::fromStdString(g))));
  }

  void status_bar_counts_what_the_reader_counts() {
    MainWindow w(nullptr, false);
    w.show();
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    QString want = QString("%1 matches").arg(t_->match_count());
    bool found = false;
    for (QLabel* l : w.statusBar()->findChildren<QLabel*>()) found = found || l->text().contains(want);
    QVERIFY2(found, qPrintable(want));
    QVERIFY(t_->match_count() > 0);
  }
};

int run_kernel_graph_tests(int argc, char** argv) {
  TestKernelGraph t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_kernel_graph.moc"
