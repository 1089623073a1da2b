// tinyviz as a profiler, on examples/hello_tensor recorded at test time (VIZ=-1): a kernel run's panel (its times,
// GFLOPS, buffers and the links from them), the keys that walk a lane's runs and fit the timeline, the right panel
// following the tab, a memory lane drawn as its buffers stacked, counted buffer tooltips, marker labels in a row of
// their own, and a long run drawn after short ones. Every expectation is read back from the trace with SQL or the
// reader.
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QAction>
#include <QCheckBox>
#include <QImage>
#include <QLineEdit>
#include <QMenuBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <QRegularExpression>
#include <algorithm>
#include <set>

#include "gui/ansi_text.h"
#include "gui/frame_graph.h"
#include "gui/graph_view.h"
#include "gui/main_window.h"
#include "gui/rule_panel.h"
#include "gui/run_panel.h"
#include "gui/screenshot.h"
#include "gui/stats_view.h"
#include "gui/trace_model.h"
#include "gui/trace_tree.h"
#include "gui/tests/demo_trace.h"
#include "gui/timeline_view.h"
#include "tests/support/sql.h"
#include "viz/reader/trace_profile.h"
#include "viz/reader/reader.h"

using namespace tv;
using namespace tg::viz;

namespace {
QAction* action(MainWindow& w, const QString& text) {
  for (QAction* a : w.findChildren<QAction*>())
    if (a->text() == text) return a;
  return nullptr;
}
}  // namespace

class TestProfiler : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString hello_;

  QString trace(const QString& name) {
    QString out = dir_.filePath(name);
    QFile::remove(out);
    return QFile::copy(hello_, out) ? out : QString();
  }
  // the reference's pickles in tests/data imported by tinyviz-cli into `name` ("" when the import failed)
  QString import_trace(const QString& name, const QStringList& pickles) {
    QString out = dir_.filePath(name);
    QFile::remove(out);
    QStringList args{"import-tinygrad"};
    for (const QString& p : pickles) args << QString(TV_DATA_DIR) + "/" + p;
    QProcess p;
    p.start(TV_CLI_BIN, args << out);
    return p.waitForFinished(60000) && p.exitCode() == 0 ? out : QString();
  }
    static bool open_window(MainWindow& w, const QString& path) {
    w.resize(1400, 900);
    w.show();
    return w.open_trace(path) && wait_idle(w);
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    hello_ = dir_.filePath("hello.trace.db");
    QString err = record_trace(TV_TENSOR_BIN, hello_);
    QVERIFY2(err.isEmpty(), qPrintable(err));
  }

  // a click on a run fills the run panel with the run's facts, its buffers (dtype, size, mode) and links
  void a_clicked_run_shows_its_details() {
    QString path = trace("run.trace.db");
    MainWindow w;
    QVERIFY(open_window(w, path));
    w.show_tab(MainWindow::TimelineTab);
    auto t = Trace::open(path.toStdString());
    // the kernel run with the most buffers, that has a program
    size_t ev = 0, most = 0;
    for (size_t i = 0; i < t->kernel_events().size(); i++) {
      const auto& k = t->kernel_events()[i];
      size_t n = parse_bufs(*t, k).size();
      if (k.program && n > most) most = n, ev = i;
    }
    QVERIFY(most >= 2);
    const KernelEventRow& k = t->kernel_events()[ev];
    TimelineView* tl = w.timeline();
    tl->reveal_kernel(ev);
    auto pt = tl->point_of_kernel(ev);
    QVERIFY(pt);
    QCOMPARE(tl->selected_run(), (int64_t)-1);
    QTest::mouseClick(tl, Qt::LeftButton, {}, *pt);
    QVERIFY(wait_idle(w));
    QCOMPARE(tl->selected_run(), (int64_t)ev);
    QCOMPARE(w.side_panel(), (QWidget*)w.run_panel());
    QString text = w.run_panel()->text();
    QVERIFY2(text.contains(QString::fromStdString(k.name)), qPrintable(text));
    QVERIFY(text.contains("duration"));
    QVERIFY(text.contains("GFLOPS"));
    QVERIFY(text.contains(QString::fromStdString(k.device)));
    const ProgramRow* p = t->program(k.program);
    QVERIFY(text.contains(QString::fromStdString(p->global_size)));
    // every argument in order, with its mode and the dtype its allocation recorded
    Profile prof = build_profile(*t, false);
    std::vector<BufferArg> args = parse_bufs(*t, k);
    for (size_t i = 0; i < args.size(); i++) {
      const BufferLife* life = w.timeline()->buffer_life(args[i].buffer);
      QVERIFY(life);
      // an argument that is part of a bigger buffer (the JIT's arena) is a view of it
      QString dtype = life->nbytes == args[i].nbytes ? QString::fromStdString(life->dtype) : QString("view");
      QString row =
          QString("data%1\n%2\n%3\n%4").arg(i).arg(mode_name(args[i].mode)).arg(args[i].buffer).arg(dtype);
      QVERIFY2(text.contains(row), qPrintable("no row '" + row + "' in:\n" + text));
    }
    // the run's place among the runs of its name
    int64_t runs = tg::test::sql_int(path.toStdString(),
                                     "SELECT COUNT(*) FROM kernel_events k JOIN strings s ON s.id=k.name WHERE "
                                     "s.value='" + k.name + "'");
    QVERIFY2(text.contains(QString("of %1 of a kernel of this name").arg(runs)), qPrintable(text));
    // a buffer's link marks it on its memory lane; the source link opens the Code tab on the kernel
    emit w.run_panel()->open_buffer(args[0].buffer);
    QVERIFY(w.timeline()->selected_buffer());
    QCOMPARE(w.timeline()->selected_buffer()->buffer, args[0].buffer);
    emit w.run_panel()->open_source(p->context);
    QCOMPARE(w.tabs()->currentIndex(), (int)MainWindow::CodeTab);
    QCOMPARE(w.selection().context, p->context);
    // and the Code tab's panel is the kernel's: its name and every run of it
    QCOMPARE(w.side_panel(), (QWidget*)w.run_panel());
    QVERIFY(w.run_panel()->text().contains(QString::fromStdString(p->name)));
    QVERIFY(w.run_panel()->text().contains("Runs of this kernel"));
  }

  // Left/Right walk the selected run's lane, Home/End jump to its ends, F fits the timeline, Esc clears the marks
  void keys_walk_a_lanes_runs_and_fit_the_timeline() {
    QString path = trace("keys.trace.db");
    MainWindow w;
    QVERIFY(open_window(w, path));
    w.show_tab(MainWindow::TimelineTab);
    TimelineView* tl = w.timeline();
    tl->setFocus();
    auto t = Trace::open(path.toStdString());
    // the runs on the first kernel lane (lanes go by device name), in order
    std::string dev = t->kernel_events().front().device;
    for (const auto& k : t->kernel_events()) dev = std::min(dev, k.device);
    std::vector<int64_t> lane;
    for (size_t i = 0; i < t->kernel_events().size(); i++)
      if (t->kernel_events()[i].device == dev) lane.push_back((int64_t)i);
    QVERIFY(lane.size() >= 3);
    QTest::keyClick(tl, Qt::Key_Right);  // nothing selected: the first run in view
    QCOMPARE(tl->selected_run(), lane[0]);
    QCOMPARE(w.side_panel(), (QWidget*)w.run_panel());
    QVERIFY(w.run_panel()->text().contains(QString::fromStdString(t->kernel_events()[(size_t)lane[0]].name)));
    QTest::keyClick(tl, Qt::Key_Right);
    QCOMPARE(tl->selected_run(), lane[1]);
    QVERIFY(w.run_panel()->text().contains(QString::fromStdString(t->kernel_events()[(size_t)lane[1]].name)));
    QTest::keyClick(tl, Qt::Key_End);
    QCOMPARE(tl->selected_run(), lane.back());
    QTest::keyClick(tl, Qt::Key_Right);  // past the end: stays
    QCOMPARE(tl->selected_run(), lane.back());
    QTest::keyClick(tl, Qt::Key_Home);
    QCOMPARE(tl->selected_run(), lane.front());
    QTest::keyClick(tl, Qt::Key_Left);
    QCOMPARE(tl->selected_run(), lane.front());
    // zoomed far in, F (the window's Fit, on the timeline tab) brings every event back into view
    tl->show_range(0, 1000);
    QAction* fit = action(w, "&Fit");
    QVERIFY(fit);
    fit->trigger();
    auto [l, r] = tl->visible_range();
    int64_t t0 = w.session()->time_origin();
    for (const auto& k : t->kernel_events()) QVERIFY(l <= k.t_start - t0 && k.t_end - t0 <= r);
    QVERIFY(r - l < 1.2 * tl->total_ns());
    // +/- zoom the timeline there, not the graph
    QAction* zin = action(w, "Zoom &in");
    QVERIFY(zin);
    zin->trigger();
    auto [l2, r2] = tl->visible_range();
    QVERIFY(r2 - l2 < (r - l) * 0.9);
    // a click on a step's span lets the run go: the panel explains the selection again
    tl->show_all();
    int64_t step = t->steps().front().id;
    tl->reveal(step);
    auto sp = tl->point_of(step);
    QVERIFY(sp);
    QTest::mouseClick(tl, Qt::LeftButton, {}, *sp);
    QVERIFY(wait_idle(w));
    QCOMPARE(tl->selected_run(), (int64_t)-1);
    QCOMPARE(w.side_panel(), (QWidget*)w.panel());
  }

  // the right panel shows what the tab shown is about
  void the_side_panel_follows_the_tab() {
    QString path = trace("side.trace.db");
    MainWindow w;
    QVERIFY(open_window(w, path));
    auto t = Trace::open(path.toStdString());
    int64_t step = 0;
    for (const auto& s : t->steps())
      if (s.n_matches > 0) {
        step = s.id;
        break;
      }
    QVERIFY(step);
    w.select({0, step, 1});
    QVERIFY(wait_idle(w));
    w.show_tab(MainWindow::GraphTab);
    QCOMPARE(w.side_panel(), (QWidget*)w.panel());
    QVERIFY(w.panel()->text().contains("Match 1"));
    // Stats: the rule selected in the table (none yet: says how to pick one)
    w.show_tab(MainWindow::StatsTab);
    QCOMPARE(w.side_panel(), (QWidget*)w.stats_panel());
    QVERIFY(!w.stats_panel()->text().contains("Match 1"));
    int64_t rule = t->matches(step)[0].rule;
    w.stats()->show_rule(rule);
    auto r = t->rule(rule);
    QVERIFY(r);
    QCOMPARE(w.stats_panel()->site(), QString::fromStdString(r->file + ":" + std::to_string(r->line)));
    QVERIFY(w.stats_panel()->text().contains(QString::fromStdString(r->matcher)));
    // Code: the kernel of the selected codegen context
    const ProgramRow* p = nullptr;
    for (const auto& x : t->programs())
      if (x.context) p = &x;
    QVERIFY(p);
    w.select({p->context, 0, 0});
    w.show_tab(MainWindow::CodeTab);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.side_panel(), (QWidget*)w.run_panel());
    QVERIFY(w.run_panel()->text().contains(QString::fromStdString(p->name)));
    QVERIFY(w.run_panel()->text().contains(QString::fromStdString(p->global_size)));
    // Timeline with nothing of it clicked: what a click there shows, not the graph's selection
    w.show_tab(MainWindow::TimelineTab);
    QCOMPARE(w.side_panel(), (QWidget*)w.run_panel());
    QVERIFY(w.run_panel()->text().contains("Click a kernel run"));
    // a step's span clicked: its panel, without the graph's node pane
    w.timeline()->reveal(step);
    auto sp = w.timeline()->point_of(step);
    QVERIFY(sp);
    QTest::mouseClick(w.timeline(), Qt::LeftButton, {}, *sp);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.side_panel(), (QWidget*)w.panel());
    QVERIFY(!w.panel()->node_pane_shown());
    w.show_tab(MainWindow::GraphTab);
    QCOMPARE(w.side_panel(), (QWidget*)w.panel());
    QVERIFY(w.panel()->node_pane_shown());
  }

  // a memory lane drawn as its buffers stacked: at any time the stack's top is the live bytes, each buffer is hit at
  // its band, and a click on the lane's name switches the view
  void a_memory_lane_stacks_its_buffers() {
    QString path = trace("mem.trace.db");
    MainWindow w;
    QVERIFY(open_window(w, path));
    w.show_tab(MainWindow::TimelineTab);
    TimelineView* tl = w.timeline();
    size_t cpu = 0;
    while (cpu < tl->memory_lanes().size() && tl->memory_lanes()[cpu].device != "CPU") cpu++;
    QVERIFY(cpu < tl->memory_lanes().size());
    const MemoryLane& m = tl->memory_lanes()[cpu];
    QVERIFY(m.buffers.size() >= 3);
    QVERIFY(!tl->memory_expanded(cpu));
    auto lane_y = [&] {  // the y of the lane's name, from the lane summary's order
      auto pt = tl->point_of_buffer(m.buffers.front().buffer, true);
      return pt ? pt->y() : -1;
    };
    tl->show_all();
    int y = lane_y();
    QVERIFY(y > 0);
    QTest::mouseClick(tl, Qt::LeftButton, {}, QPoint(20, y));  // the lane's name
    QVERIFY(tl->memory_expanded(cpu));
    // the biggest buffer, hit in the middle of its life at the middle of its band
    const BufferLife* big = &m.buffers.front();
    for (const BufferLife& b : m.buffers)
      if (b.nbytes > big->nbytes) big = &b;
    int64_t t0 = w.session()->time_origin();
    tl->show_range((double)(big->t_alloc - t0), (double)(big->t_free - t0));
    QVERIFY(tl->memory_expanded(cpu));
    auto pt = tl->point_of_buffer(big->buffer, true);
    QVERIFY(pt);
    // within the lane, whose height spans 0..peak: find the band's middle by probing up the lane at the alloc + 1 px
    const BufferLife* hit = nullptr;
    for (int dy = -110; dy <= 110 && !hit; dy++) {
      const BufferLife* b = tl->buffer_at(QPoint(pt->x() + 2, pt->y() + dy));
      if (b == big) hit = b;
    }
    QVERIFY2(hit == big, "the biggest buffer is not hit anywhere along its allocation");
    // the tooltip counts repeated uses instead of listing each
    const BufferLife* reused = nullptr;
    for (const BufferLife& b : m.buffers)
      for (size_t i = 0; i < b.users.size() && !reused; i++)
        for (size_t j = i + 1; j < b.users.size(); j++)
          if (b.users[i].name == b.users[j].name && b.users[i].mode == b.users[j].mode &&
              b.users[i].num == b.users[j].num)
            reused = &b;
    if (reused) {
      QString tip = tl->buffer_tooltip(*reused, (double)reused->t_alloc);
      QVERIFY2(tip.contains(" ×"), qPrintable(tip));
      QVERIFY(tip.count(QString::fromStdString(reused->users[0].name) + " ") <= 2);
    }
    // back to the step chart
    tl->show_all();
    QTest::mouseClick(tl, Qt::LeftButton, {}, QPoint(20, lane_y()));
    QVERIFY(!tl->memory_expanded(cpu));
  }

  // a buffer used by the same kernel argument many times reads as one counted line
  void buffer_tooltips_count_repeated_uses() {
    BufferLife b;
    b.buffer = 7, b.nbytes = 64, b.size = 16, b.dtype = "dtypes.float", b.t_alloc = 0, b.t_free = 10, b.freed = true;
    for (int i = 0; i < 10; i++) b.users.push_back({i + 1, "E_2", 0, 1});
    b.users.push_back({11, "r_4", 2, 0});
    TimelineView tl;
    QString tip = tl.buffer_tooltip(b, 5);
    QVERIFY2(tip.contains("E_2 write@data0 ×10"), qPrintable(tip));
    QVERIFY2(tip.contains("r_4 read@data2"), qPrintable(tip));
    QVERIFY(!tip.contains("r_4 read@data2 ×"));
    QCOMPARE(tip.count("E_2"), 1);
    QVERIFY(tip.contains("11 runs used it"));
  }

  // a long run that starts in the pixel column of short runs before it is drawn, not merged into that column
  void a_long_run_after_short_ones_is_drawn() {
    QString path = trace("long.trace.db");
    auto t = Trace::open(path.toStdString());
    std::string dev = t->kernel_events().front().device;
    std::vector<int64_t> ids;
    for (const auto& k : t->kernel_events())
      if (k.device == dev) ids.push_back(k.id);
    QVERIFY(ids.size() >= 4);
    t.reset();
    // three runs of 1 µs back to back, then one of 50 ms right after them, then the rest far later
    int64_t base = tg::test::sql_int(path.toStdString(), "SELECT MIN(t_start) FROM kernel_events");
    auto set = [&](int64_t id, int64_t a, int64_t z) {
      tg::test::sql_exec(path.toStdString(), "UPDATE kernel_events SET t_start=" + std::to_string(base + a) +
                                                 ", t_end=" + std::to_string(base + z) +
                                                 " WHERE id=" + std::to_string(id));
    };
    for (int i = 0; i < 3; i++) set(ids[(size_t)i], i * 1000, i * 1000 + 1000);
    set(ids[3], 3000, 50'003'000);
    for (size_t i = 4; i < ids.size(); i++) set(ids[i], 60'000'000 + (int64_t)i * 1000, 60'000'500 + (int64_t)i * 1000);
    MainWindow w;
    QVERIFY(open_window(w, path));
    w.show_tab(MainWindow::TimelineTab);
    TimelineView* tl = w.timeline();
    t = Trace::open(path.toStdString());
    size_t ev = 0;
    while (t->kernel_events()[ev].id != ids[3]) ev++;
    // zoomed out so far that the short runs and the long run's start share a pixel
    int64_t t0 = w.session()->time_origin();
    double a = (double)(base - t0);
    tl->show_range(a - 2e6, a + 300e6);
    auto pt = tl->point_of_kernel(ev);
    QVERIFY(pt);
    QImage img = tl->grab().toImage();
    QColor c = img.pixelColor(*pt);
    QColor bg = img.pixelColor(QPoint(pt->x(), 4));  // the axis row's background
    QVERIFY2(c != bg && c.value() > 60,
             qPrintable(QString("the long run's middle is background (%1)").arg(c.name())));
  }

  // marker labels sit in a row of their own under the tick labels: the first lane starts below both
  void marker_labels_leave_the_axis_readable() {
    QString path = trace("markers.trace.db");
    MainWindow w;
    QVERIFY(open_window(w, path));
    w.show_tab(MainWindow::TimelineTab);
    TimelineView* tl = w.timeline();
    QVERIFY(tl->marker_count() >= 1);
    auto t = Trace::open(path.toStdString());
    tl->reveal_kernel(0);
    auto pt = tl->point_of_kernel(0);
    QVERIFY(pt);
    QVERIFY2(pt->y() - 10 >= 24 + 16, qPrintable(QString("first lane at y %1").arg(pt->y() - 10)));
  }

  // labels carry the reference's compiler facts: the ranges a node lies in, an INDEX's expression and range sizes,
  // what an END closes, the address space; the Drawing menu turns them off
  void labels_carry_the_compiler_facts() {
    QString path = trace("facts.trace.db");
    auto t = Trace::open(path.toStdString());
    // a kernel step whose input holds an INDEX of a PARAM and an END (hello_tensor's r_2_2_3 after its opts)
    int64_t step = 0;
    for (const auto& s : t->steps())
      if (s.name == "postopt symbolic" && t->context(s.context).name == "r_2_2_3") step = s.id;
    QVERIFY(step);
    MainWindow w;
    QVERIFY(open_window(w, path));
    w.select({0, step, 0});
    QVERIFY(wait_idle(w));
    auto find_op = [&](const char* op) -> std::vector<const GNode*> {
      std::vector<const GNode*> out;
      for (const GNode& g : w.graph()->frame()->graph->nodes)
        if (g.op == op) out.push_back(&g);
      return out;
    };
    auto has_line = [](const GNode* g, const QString& re) {
      QRegularExpression r(re);
      for (const std::string& l : g->lines)
        if (r.match(QString::fromStdString(l)).hasMatch()) return true;
      return false;
    };
    auto bound = [&](int64_t range) {  // the RANGE's bound: its CONST source's value
      return QString::fromStdString(t->arg_text(t->node(range).src[0]));
    };
    // every RANGE lies in itself: "(N)" with N its axis number
    auto ranges = find_op("RANGE");
    QVERIFY(!ranges.empty());
    for (const GNode* g : ranges) {
      QString arg = QString::fromStdString(t->arg_text(g->key.id));
      QString axis = arg.mid(1, arg.indexOf(',') - 1);
      QVERIFY2(has_line(g, "^\\(([0-9_,]+,)?" + axis + "(,[0-9_,]+)?\\)$"), qPrintable(arg));
      QCOMPARE(g->addrspace, 'A');
    }
    // an INDEX of a PARAM: dataN[expr] and each range it reads with its bound
    int checked = 0;
    for (const GNode* g : find_op("INDEX")) {
      const auto& n = t->node(g->key.id);
      if (t->node(n.src[0]).op_name != "PARAM") continue;
      QVERIFY2(has_line(g, "^data[0-9]+\\[.*r[0-9]+.*\\]$"), "no rendered index");
      QCOMPARE(g->addrspace, 'G');
      // the ranges named with sizes are the RANGE nodes under the index, each with its bound
      std::vector<int64_t> st{n.src[1]};
      std::set<int64_t> seen;
      while (!st.empty()) {
        int64_t x = st.back();
        st.pop_back();
        if (!seen.insert(x).second) continue;
        if (t->node(x).op_name == "RANGE") {
          QString arg = QString::fromStdString(t->arg_text(x));
          QString name = "r" + arg.mid(1, arg.indexOf(',') - 1);
          QVERIFY2(has_line(g, "(^| )" + name + "=" + bound(x) + "( |$)"), qPrintable(name));
        }
        for (int64_t s : t->node(x).src) st.push_back(s);
      }
      checked++;
    }
    QVERIFY(checked >= 2);
    // an END names the ranges it closes, with their bounds
    auto ends = find_op("END");
    QVERIFY(!ends.empty());
    for (const GNode* g : ends) {
      const auto& n = t->node(g->key.id);
      for (size_t i = 1; i < n.src.size(); i++) {
        QString arg = QString::fromStdString(t->arg_text(n.src[i]));
        QString axis = arg.mid(1, arg.indexOf(',') - 1);
        QVERIFY2(has_line(g, "(^| )" + axis + "\\(" + bound(n.src[i]) + "\\)"), qPrintable(axis));
      }
    }
    // off: no fact lines and no squares
    w.facts_box()->setChecked(false);
    QVERIFY(wait_idle(w));
    for (const GNode& g : w.graph()->frame()->graph->nodes) {
      QCOMPARE(g.facts_from, -1);
      QCOMPARE(g.addrspace, (char)0);
    }
    for (const GNode* g : find_op("INDEX")) QVERIFY(!has_line(g, "=[0-9]"));
  }

  // labels carry each node's shape as the engine computed it when recording ("(2,3)", "()" for a scalar); a trace
  // from before schema 7 opens without them
  void labels_carry_the_recorded_shapes() {
    QString path = trace("shapes.trace.db");
    auto t = Trace::open(path.toStdString());
    // a step over a tensor graph (Callify) with a node of two or more dims (hello_tensor's 2x3 tensors)
    auto has_multi_dim = [&](int64_t root) {
      std::vector<int64_t> st{root};
      std::set<int64_t> seen;
      while (!st.empty()) {
        int64_t x = st.back();
        st.pop_back();
        if (!seen.insert(x).second) continue;
        const auto& n = t->node(x);
        if (n.shape && t->str(n.shape).find(',') != std::string::npos) return true;
        st.insert(st.end(), n.src.begin(), n.src.end());
      }
      return false;
    };
    int64_t step = 0;
    for (const auto& s : t->steps())
      if (!step && t->context(s.context).name.rfind("Callify", 0) == 0 && has_multi_dim(s.input_root)) step = s.id;
    QVERIFY(step);
    std::map<int64_t, std::vector<std::string>> without_shape;  // each drawn node's lines less its shape line
    {
      MainWindow w;
      QVERIFY(open_window(w, path));
      w.select({0, step, 0});
      QVERIFY(wait_idle(w));
      int shaped = 0, multi = 0;
      for (const GNode& g : w.graph()->frame()->graph->nodes) {
        std::vector<std::string> lines = g.lines;
        if (int64_t id = t->node(g.key.id).shape) {
          std::string sh = t->str(id);
          auto it = std::find(lines.begin(), lines.end(), sh);
          QVERIFY2(it != lines.end(), sh.c_str());
          lines.erase(it);
          shaped++;
          multi += sh.find(',') != std::string::npos;
        }
        without_shape[g.key.id] = lines;
      }
      QVERIFY(shaped >= 3);
      QVERIFY(multi >= 1);  // hello_tensor's 2x3 tensors
    }
    // the same trace as schema 6 wrote it: no shape column, no shape lines, and nothing else missing
    QString old = trace("shapes6.trace.db");
    QCOMPARE(QString::fromStdString(
                 tg::test::sql_exec(old.toStdString(), "ALTER TABLE uops DROP COLUMN shape; PRAGMA user_version=6")),
             QString());
    auto t6 = Trace::open(old.toStdString());
    QCOMPARE(t6->schema_version(), 6);
    MainWindow w;
    QVERIFY(open_window(w, old));
    w.select({0, step, 0});
    QVERIFY(wait_idle(w));
    QVERIFY(!w.graph()->frame()->graph->nodes.empty());
    QCOMPARE(w.graph()->frame()->graph->nodes.size(), without_shape.size());
    for (const GNode& g : w.graph()->frame()->graph->nodes) {
      QCOMPARE(t6->node(g.key.id).shape, (int64_t)0);
      QVERIFY(without_shape.count(g.key.id));
      QVERIFY(g.lines == without_shape[g.key.id]);  // the same label, without the shape line
    }
  }

  // kernel names keep the reference's colours (its VIZ palette for codes 30-37 and 90-97): in the tree, the run
  // panel and the CALL labels; View › Kernel-name colours turns them off
  void kernel_names_keep_their_colours() {
    std::vector<AnsiRun> r = ansi_runs("r\x1b[90m_\x1b[0m\x1b[34m16\x1b[0m\x1b[31m4\x1b[0m");
    QCOMPARE((int)r.size(), 4);
    QCOMPARE(r[0].text, QString("r"));
    QVERIFY(!r[0].color.isValid());
    QCOMPARE(r[1].color.name(), QString("#d9d9d9"));  // 90: the light palette's first
    QCOMPARE(r[2].text, QString("16"));
    QCOMPARE(r[2].color.name(), QString("#6666ff"));  // 34: blue, a global dimension
    QCOMPARE(r[3].color.name(), QString("#ff6666"));  // 31: red, a reduce dimension
    QCOMPARE(ansi_html("a\x1b[33m<b\x1b[0m"), QString("a<span style='color:#ffff66'>&lt;b</span>"));
    QCOMPARE((int)ansi_runs("cut\x1b[3").size(), 1);  // a cut escape is dropped, not shown
    QString path = trace("colors.trace.db");
    MainWindow w;
    QVERIFY(open_window(w, path));
    auto t = Trace::open(path.toStdString());
    const ContextRow* kernel = nullptr;
    for (const auto& c : t->contexts())
      if (c.name_ansi != c.name) kernel = &c;
    QVERIFY(kernel);
    QModelIndex i = w.model()->index_of({kernel->id, 0, 0});
    QCOMPARE(i.data(AnsiDelegate::kAnsiRole).toString(), QString::fromStdString(kernel->name_ansi));
    QCOMPARE(i.data(Qt::DisplayRole).toString(), QString::fromStdString(kernel->name));
    QAction* colors = action(w, "&Kernel-name colours");
    QVERIFY(colors && colors->isChecked());
    colors->setChecked(false);
    QVERIFY(!kernel_colors());
    for (const AnsiRun& x : ansi_runs(kernel->name_ansi)) QVERIFY(!x.color.isValid());
    QVERIFY(!ansi_html(kernel->name_ansi).contains("span"));
    colors->setChecked(true);
    QVERIFY(ansi_html(kernel->name_ansi).contains("span"));
  }

  // a match that folded a node into a constant boxes the constant's users and marks the constant in their labels; the
  // side panel leads with the match in one line
  void a_match_folded_into_a_constant_is_boxed_at_its_users() {
    QString path = trace("fold.trace.db");
    auto first = [&](const char* what) {
      return tg::test::sql_int(path.toStdString(), std::string("SELECT ") + what +
                                                       " FROM matches m JOIN uops u ON u.id=m.after JOIN ops o ON "
                                                       "o.id=u.op WHERE o.name='CONST' ORDER BY m.step, m.ordinal "
                                                       "LIMIT 1");
    };
    int64_t step = first("m.step"), frame = first("m.ordinal + 1");
    QVERIFY(step > 0 && frame > 0);
    MainWindow w;
    QVERIFY(open_window(w, path));
    w.select({0, step, (size_t)frame});
    QVERIFY(wait_idle(w));
    const FrameGraph& g = *w.graph()->frame()->graph;
    QVERIFY(g.folded_result);
    auto t = Trace::open(path.toStdString());
    std::string value = t->graph_arg_text(g.match->after);
    int boxed = 0;
    for (const GNode& n : g.nodes) {
      if (!n.in_match) continue;
      boxed++;
      const auto& node = t->node(n.key.id);
      QVERIFY(std::count(node.src.begin(), node.src.end(), g.match->after) > 0);
      QVERIFY(n.result_line >= n.folded_from && n.result_line < (int)n.lines.size());
      QVERIFY2(n.lines[(size_t)n.result_line].find(value) != std::string::npos, n.lines[(size_t)n.result_line].c_str());
    }
    QVERIFY(boxed >= 1);
    // the one-line match right under the heading, ending in the constant
    QStringList lines = w.panel()->text().split('\n');
    QVERIFY(lines.size() > 3);
    QVERIFY2(lines[2].contains("→") && lines[2].trimmed().endsWith(QString::fromStdString(value)), qPrintable(lines[2]));
  }

  // a trace still being recorded grows in the window: the tree, the timeline and the status follow the file, keeping
  // the selection and the open rows, until the program marks it complete
  void a_trace_being_recorded_grows_in_the_window() {
    QString full = trace("live_full.trace.db"), path = trace("live.trace.db");
    auto ft = Trace::open(full.toStdString());
    int64_t all = (int64_t)ft->contexts().size(), half = all / 2;
    QVERIFY(half >= 2);
    // the first half of the recording: what a reader sees while the program is still at it
    std::string k = std::to_string(half), p = path.toStdString();
    for (const std::string& q : std::vector<std::string>{
             "DELETE FROM matches WHERE step IN (SELECT id FROM steps WHERE context > " + k + ")",
          "DELETE FROM step_uops WHERE step IN (SELECT id FROM steps WHERE context > " + k + ")",
          "DELETE FROM steps WHERE context > " + k, "DELETE FROM context_rule_stats WHERE context > " + k,
          "DELETE FROM kernel_events WHERE program IN (SELECT id FROM programs WHERE context > " + k + ")",
          "DELETE FROM programs WHERE context > " + k, "DELETE FROM contexts WHERE id > " + k,
          "UPDATE meta SET value='recording' WHERE key='status'"})
      QCOMPARE(QString::fromStdString(tg::test::sql_exec(p, q)), QString());
    MainWindow w;
    w.set_follow(false, 100);  // (the window follows on its own: the trace is not complete)
    QVERIFY(open_window(w, path));
    QVERIFY(w.following());
    QCOMPARE((int64_t)w.model()->rowCount(), half);
    int64_t step = ft->context(2).steps.front();
    w.select({2, step, 0});
    QModelIndex ctx = w.filter()->mapFromSource(w.model()->index_of({2, 0, 0}));
    w.tree()->expand(ctx);
    size_t kernels = w.timeline()->span_count();
    w.search_box()->setText(QString::fromStdString(ft->context(2).name));  // a search typed while it records
    // the program records the rest and finishes the trace
    for (const char* table : {"contexts", "steps", "matches", "step_uops", "context_rule_stats", "programs",
                              "kernel_events"})
      QCOMPARE(QString::fromStdString(tg::test::sql_exec(
                   p, "ATTACH '" + full.toStdString() + "' AS f; INSERT OR IGNORE INTO " + table +
                          " SELECT * FROM f." + table + "; DETACH f")),
               QString());
    QCOMPARE(QString::fromStdString(tg::test::sql_exec(p, "UPDATE meta SET value='complete' WHERE key='status'")),
             QString());
    QTRY_COMPARE_WITH_TIMEOUT((int64_t)w.model()->rowCount(), all, 10000);
    QVERIFY(wait_idle(w));
    QCOMPARE(w.selection().step, step);
    QVERIFY(w.tree()->isExpanded(w.filter()->mapFromSource(w.model()->index_of({2, 0, 0}))));
    QVERIFY(w.timeline()->span_count() > kernels);
    QCOMPARE(w.timeline()->span_count(), ft->steps().size() + ft->contexts().size() + ft->kernel_events().size() +
                                             ft->ranges().size());
    QCOMPARE(w.search_box()->text(), QString::fromStdString(ft->context(2).name));  // kept through the reading
    QTRY_VERIFY_WITH_TIMEOUT(!w.following(), 5000);  // complete: nothing more to follow
  }

  // a trace whose recording stopped on a full disk (status 'truncated') opens with what it holds, says so and why in
  // the status bar, and is not followed: no program is writing it any more
  void a_truncated_trace_says_so_and_is_not_followed() {
    QString path = trace("truncated.trace.db");
    std::string p = path.toStdString();
    QCOMPARE(QString::fromStdString(tg::test::sql_exec(
                 p, "UPDATE meta SET value='truncated' WHERE key='status'; INSERT OR REPLACE INTO meta(key, value) "
                    "VALUES('stopped', 'trace file ''t.db'': database or disk is full')")),
             QString());
    MainWindow w;
    w.set_follow(false, 100);
    QVERIFY(open_window(w, path));
    QVERIFY(!w.following());
    QVERIFY(w.model()->rowCount() > 0);
    QVERIFY2(w.status_text().contains("truncated: recording stopped early (trace file 't.db': database or disk is full)"),
             qPrintable(w.status_text()));
  }

  // A trace's strings can be any length: a context named by 1,000,000 characters and a 900,000-character arg on a
  // node many frames share open, select and draw like any other (before, Qt's layout of the side panel's million-
  // character line kept the window busy for minutes); what the views show of them is cut, saying how much is left out
  void million_character_strings_are_cut_where_they_are_shown() {
    QString path = trace("long.trace.db");
    std::string p = path.toStdString();
    std::string name(1000000, 'x'), arg = "s900000:" + std::string(900000, 'y');
    QCOMPARE(QString::fromStdString(tg::test::sql_exec(
                 p, "UPDATE strings SET value='r_" + name + "' WHERE id=(SELECT name FROM contexts WHERE id=3); "
                    "INSERT INTO strings(id, value) VALUES((SELECT MAX(id) + 1 FROM strings), '" + arg + "'); "
                    "UPDATE uops SET arg=(SELECT MAX(id) FROM strings) WHERE op=(SELECT id FROM ops WHERE name='COPY')")),
             QString());
    auto t = Trace::open(path.toStdString());
    auto shown = [](const QString& s) { return s.size() <= (int)kShownTextLimit + 40; };
    MainWindow w;
    QVERIFY(open_window(w, path));
    // the context: its row in the tree and the side panel
    w.select({3, 0, 0});
    QVERIFY(wait_idle(w));
    QString row = w.model()->index_of({3, 0, 0}).data(Qt::DisplayRole).toString();
    QVERIFY2(shown(row) && row.startsWith("r_xxx") && row.endsWith("more characters)"), qPrintable(row.right(60)));
    QVERIFY2(w.panel()->text().contains("more characters)") && w.panel()->text().size() < 20000, qPrintable(w.panel()->text().left(300)));
    QVERIFY(shown(w.windowTitle()));
    // a step of the context, drawn, and the first step's frames, whose COPY nodes carry the long arg
    w.select({3, t->context(3).steps.front(), 0});
    QVERIFY(wait_idle(w));
    for (int64_t step : {t->steps().front().id}) {
      for (size_t k = 0; k < std::min<size_t>(w.model()->frames_of(step), 4); k++) {
        w.select({t->step(step).context, step, k});
        QVERIFY(wait_idle(w));
        QVERIFY(w.graph()->frame());
        int copies = 0;
        for (const GNode& g : w.graph()->frame()->graph->nodes) {
          size_t chars = 0;
          for (const std::string& l : g.lines) chars += l.size();
          QVERIFY2(chars < kShownTextLimit + 400, g.op.c_str());
          copies += g.op == "COPY";
        }
        QVERIFY(copies >= 1);
        QVERIFY(w.panel()->text().size() < 20000);
      }
    }
    // the timeline and the statistics show them cut too
    w.tabs()->setCurrentIndex(2);
    QVERIFY(wait_idle(w));
    w.tabs()->setCurrentIndex(1);
    QVERIFY(wait_idle(w));
    // cut is what the views see; the trace's own text stays whole for the command line (tinyviz-cli) and replay
    tg::viz::set_display_text_limit(0);
    QCOMPARE(Trace::open(p)->context(3).name.size(), name.size() + 2);
    tg::viz::set_display_text_limit(kShownTextLimit);
  }

  // a big step's matches are grouped by rule: one row per rule with its count, its matches under it; selecting a
  // match opens its group
  void a_big_steps_matches_are_grouped_by_rule() {
    QString path = trace("groups.trace.db");
    std::string q = "SELECT step FROM matches GROUP BY step HAVING COUNT(DISTINCT rule) >= 3 ORDER BY COUNT(*) DESC";
    int64_t step = tg::test::sql_int(path.toStdString(), q);
    QVERIFY(step > 0);
    int64_t n = tg::test::sql_int(path.toStdString(), "SELECT COUNT(*) FROM matches WHERE step=" + std::to_string(step));
    MainWindow w;
    w.model()->set_group_above((size_t)n - 1);  // (a real big step has 200+; this one is made to count as big)
    QVERIFY(open_window(w, path));
    auto t = Trace::open(path.toStdString());
    QModelIndex si = w.model()->index_of({0, step, 0});
    QVERIFY(si.isValid());
    w.model()->index_of({0, step, 1});  // reads the step's matches
    int nested = 0, groups = 0;
    int64_t in_groups = 0;
    for (int r = 0; r < w.model()->rowCount(si); r++) {
      QModelIndex g = w.model()->index(r, 0, si);
      if (g.data(TraceModel::KindRole).toInt() == TraceModel::Step) {
        nested++;
        continue;
      }
      QCOMPARE(g.data(TraceModel::KindRole).toInt(), (int)TraceModel::Group);
      groups++;
      int64_t rule = g.data(TraceModel::RuleRole).toLongLong();
      int64_t count = tg::test::sql_int(path.toStdString(), "SELECT COUNT(*) FROM matches WHERE step=" +
                                                                 std::to_string(step) + " AND rule=" + std::to_string(rule));
      QCOMPARE((int64_t)w.model()->rowCount(g), count);
      QCOMPARE(w.model()->index(r, TraceModel::MatchesCol, si).data().toLongLong(), count);
      in_groups += count;
      for (int k = 0; k < w.model()->rowCount(g); k++)
        QCOMPARE(w.model()->index(k, 0, g).data(TraceModel::RuleRole).toLongLong(), rule);
    }
    QVERIFY(groups >= 3);
    QCOMPARE(in_groups, n);
    // the last match: its row is in its rule's group, and selecting it shows it in the tree
    Selection last{0, step, (size_t)n};
    QModelIndex mi = w.model()->index_of(last);
    QVERIFY(mi.isValid());
    QCOMPARE(mi.parent().data(TraceModel::KindRole).toInt(), (int)TraceModel::Group);
    QCOMPARE(mi.parent().data(TraceModel::RuleRole).toLongLong(), t->matches(step).back().rule);
    QCOMPARE(w.model()->selection_of(mi).frame, (size_t)n);
    w.select({t->step(step).context, step, (size_t)n});
    QVERIFY(wait_idle(w));
    // its group closed, the group's row stands for it (no group of thousands opened per step); open, its own row
    QCOMPARE(w.filter()->mapToSource(w.tree()->currentIndex()), mi.parent());
    QVERIFY(!w.tree()->isExpanded(w.filter()->mapFromSource(mi.parent())));
    w.tree()->expand(w.filter()->mapFromSource(mi.parent()));
    w.select({t->step(step).context, step, (size_t)n - 1});
    w.select({t->step(step).context, step, (size_t)n});
    QVERIFY(wait_idle(w));
    QCOMPARE(w.filter()->mapToSource(w.tree()->currentIndex()), mi);
    Q_UNUSED(nested);
  }

  // an imported tinygrad trace records where its rules are, not their text: the panel reads them from the recorded
  // checkout when the file is there, and says so when it is not
  void imported_rules_show_their_source_from_the_checkout() {
    QString out = import_trace("imported.trace.db", {"tinygrad_small.rewrites.pkl"});
    QVERIFY(!out.isEmpty());
    std::string o = out.toStdString();
    int64_t rule = tg::test::sql_int(o, "SELECT m.rule FROM matches m JOIN rules r ON r.id=m.rule JOIN strings s ON "
                                        "s.id=r.source WHERE s.value='' AND r.line > 0 LIMIT 1");
    QVERIFY(rule > 0);
    auto t = Trace::open(o);
    auto r = t->rule(rule);
    QVERIFY(r && r->source.empty());
    int64_t step = tg::test::sql_int(o, "SELECT step FROM matches WHERE rule=" + std::to_string(rule) + " LIMIT 1");
    int64_t ord = tg::test::sql_int(o, "SELECT ordinal FROM matches WHERE rule=" + std::to_string(rule) +
                                           " AND step=" + std::to_string(step) + " LIMIT 1");
    // a checkout with the rule's file: the rule spans three lines from its line
    QString root = dir_.filePath("checkout");
    QString file = QDir(root).filePath(QString::fromStdString(r->file));
    QVERIFY(QDir().mkpath(QFileInfo(file).path()));
    {
      QFile f(file);
      QVERIFY(f.open(QIODevice::WriteOnly));
      for (int i = 1; i < r->line; i++) f.write("# filler\n");
      f.write("  (UPat(Ops.ADD, src=(UPat.var(\"x\"), UPat.cvar(\"c\"))),\n   lambda x,c: x if c.arg == 0 else None),  # "
              "the rule\n  (UPat(Ops.MUL), lambda: None),\n");
    }
    QCOMPARE(QString::fromStdString(tg::test::sql_exec(o, "UPDATE meta SET value='" + root.toStdString() +
                                                             "' WHERE key='source_root'")),
             QString());
    MainWindow w;
    QVERIFY(open_window(w, out));
    w.select({0, step, (size_t)ord + 1});
    QVERIFY(wait_idle(w));
    QString text = w.panel()->text();
    QVERIFY2(text.contains("read from " + file), qPrintable(text));
    QVERIFY(text.contains("lambda x,c: x if c.arg == 0 else None),  # the rule"));
    QVERIFY(!text.contains("UPat(Ops.MUL)"));  // the rule ends where its brackets close
    // without the file: said, not left blank
    QVERIFY(QFile::remove(file));
    w.select({0, step, 0});
    w.select({0, step, (size_t)ord + 1});
    QVERIFY(wait_idle(w));
    QVERIFY2(w.panel()->text().contains("is not on this machine"), qPrintable(w.panel()->text()));
  }

  // an imported tinygrad trace: its kernel runs have the same panel (the reference's DEV=CPU times nothing: "not
  // timed"), their buffers with the dtypes its allocations recorded
  void an_imported_traces_runs_have_their_panel() {
    QString out = import_trace("imported_profile.trace.db", {"tinygrad_small.rewrites.pkl", "tinygrad_small.profile.pkl"});
    QVERIFY(!out.isEmpty());
    auto t = Trace::open(out.toStdString());
    int64_t ev = -1;
    for (size_t i = 0; i < t->kernel_events().size() && ev < 0; i++)
      if (t->kernel_events()[i].program && parse_bufs(*t, t->kernel_events()[i]).size() >= 2) ev = (int64_t)i;
    QVERIFY(ev >= 0);
    MainWindow w;
    QVERIFY(open_window(w, out));
    w.show_tab(MainWindow::TimelineTab);
    w.timeline()->select_run(ev);
    QCOMPARE(w.side_panel(), (QWidget*)w.run_panel());
    QString text = w.run_panel()->text();
    const KernelEventRow& k = t->kernel_events()[(size_t)ev];
    QVERIFY2(text.contains(QString::fromStdString(k.name)), qPrintable(text));
    if (k.t_end <= k.t_start) QVERIFY(text.contains("not timed") && !text.contains(" 0 ns"));
    for (const BufferArg& a : parse_bufs(*t, k)) {
      const BufferLife* life = w.timeline()->buffer_life(a.buffer);
      QVERIFY(life);
      QVERIFY(text.contains(QString::fromStdString(life->dtype)) || text.contains("view"));
    }
  }

  // --run and --memory: the command line opens the timeline on a run and a stacked memory lane
  void the_command_line_opens_a_run_and_a_memory_lane() {
    QString path = trace("cli.trace.db");
    auto t = Trace::open(path.toStdString());
    QString err;
    QCOMPARE(find_run(*t, "1", &err), (int64_t)0);
    QVERIFY(find_run(*t, "100000", &err) < 0 && err.contains("kernel runs"));
    std::string name = t->kernel_events()[2].name;
    int64_t first = -1;
    for (size_t i = 0; i < t->kernel_events().size() && first < 0; i++)
      if (t->kernel_events()[i].name == name) first = (int64_t)i;
    QCOMPARE(find_run(*t, QString::fromStdString(name), &err), first);
    QVERIFY(find_run(*t, "no_such_kernel", &err) < 0 && err.contains("no kernel run named"));
    QVERIFY(find_run(*t, QString::fromStdString(name) + "@x", &err) < 0);
    Options o = parse_options({"--run", "2", "--memory", "CPU", path});
    QVERIFY(o.error.isEmpty());
    MainWindow w;
    QVERIFY(open_window(w, path));
    QVERIFY(apply_options(w, o));
    QCOMPARE(w.tabs()->currentIndex(), (int)MainWindow::TimelineTab);
    QCOMPARE(w.timeline()->selected_run(), (int64_t)1);
    QCOMPARE(w.side_panel(), (QWidget*)w.run_panel());
    size_t cpu = 0;
    while (w.timeline()->memory_lanes()[cpu].device != "CPU") cpu++;
    QVERIFY(w.timeline()->memory_expanded(cpu));
    QVERIFY(!apply_options(w, parse_options({"--memory", "NOPE", path})));
  }
};

int run_profiler_tests(int argc, char** argv) {
  TestProfiler t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_profiler.moc"
