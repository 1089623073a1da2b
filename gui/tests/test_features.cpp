// tinyviz features on a demo trace recorded at test time: collapsing a node's sources (by hand, by key, through
// stepping, automatically on a big graph), the window layout kept across launches (QSettings), and a search that
// gives the same rows as the model's own search texts.
#include <QCheckBox>
#include <QLineEdit>
#include <QMenu>
#include <QProcess>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>

#include "gui/frame_builder.h"
#include "gui/graph_items.h"
#include "gui/graph_view.h"
#include "gui/main_window.h"
#include "gui/tests/demo_trace.h"
#include "gui/trace_tree.h"
#include "viz/reader/reader.h"
#include "viz/reader/replay.h"

using namespace tv;
using namespace tg::viz;

namespace {

std::unordered_set<int64_t> drawn_ids(const FrameGraph& g) {
  std::unordered_set<int64_t> s;
  for (const GNode& n : g.nodes)
    if (!n.hides) s.insert(n.key.id);
  return s;
}

const GNode* placeholder_of(const FrameGraph& g, int64_t id) {
  for (const GNode& n : g.nodes)
    if (n.key.id == id && n.key.via == kPlaceholderVia) return &n;
  return nullptr;
}

// every node reachable from n through its sources
std::unordered_set<int64_t> below(Trace& t, int64_t n) {
  std::unordered_set<int64_t> out;
  std::vector<int64_t> st(t.node(n).src.begin(), t.node(n).src.end());
  while (!st.empty()) {
    int64_t x = st.back();
    st.pop_back();
    if (!out.insert(x).second) continue;
    for (int64_t s : t.node(x).src) st.push_back(s);
  }
  return out;
}
}  // namespace

class TestFeatures : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString trace_;
  std::unique_ptr<Trace> t_;
  int64_t big_ = 0;  // the step with the biggest input graph among those with a few matches

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings("tinygrad-cpp", "tinyviz").clear();
    QVERIFY(dir_.isValid());
    trace_ = dir_.filePath("demo.trace.db");
    QString err = record_demo_trace(trace_);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    t_ = Trace::open(trace_.toStdString());
    size_t most = 0;
    for (const auto& s : t_->steps())
      if (s.n_matches >= 5) {
        StepReplay r(*t_, s.id);
        if (r.nodes(0).size() > most) most = r.nodes(0).size(), big_ = s.id;
      }
    QVERIFY(big_ > 0);
  }

  void cleanupTestCase() { QSettings("tinygrad-cpp", "tinyviz").clear(); }

  // C on a selected node folds what lies below it into one placeholder; C on it again brings back the same graph
  void collapse_and_expand_a_node() {
    MainWindow w(nullptr, false);
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_trace(trace_));
    w.select({0, big_, 0});
    QVERIFY(wait_idle(w));
    FrameResultPtr before = w.graph()->frame();
    QVERIFY(before && before->graph->collapsed.empty());
    std::unordered_set<int64_t> all = drawn_ids(*before->graph);
    // the drawn node with the most drawn nodes below it (not the root)
    int64_t pick = 0;
    size_t most = 0;
    for (const GNode& n : before->graph->nodes) {
      if (n.key.via || n.is_root) continue;
      size_t k = 0;
      for (int64_t x : below(*t_, n.key.id)) k += all.count(x);
      if (k > most) most = k, pick = n.key.id;
    }
    QVERIFY2(most >= 2, "the demo's biggest graph has no subtree to collapse");
    // by key: click the node, press C
    int index = -1;
    for (size_t i = 0; i < before->graph->nodes.size(); i++)
      if (before->graph->nodes[i].key == NodeKey{pick, 0}) index = (int)i;
    QVERIFY(index >= 0);
    w.graph()->centerOn(w.graph()->node_items()[index]);
    QTest::mouseClick(w.graph()->viewport(), Qt::LeftButton, {}, w.graph()->node_viewport_pos(index));
    QCOMPARE(w.graph()->selected_node(), pick);
    QTest::keyClick(w.graph(), Qt::Key_X);
    QVERIFY(wait_idle(w));
    FrameResultPtr after = w.graph()->frame();
    QCOMPARE(after->graph->collapsed, std::vector<int64_t>{pick});
    QVERIFY(after->graph->auto_collapsed.empty());
    const GNode* ph = placeholder_of(*after->graph, pick);
    QVERIFY(ph);
    // what disappeared lies below the node, the placeholder counts it (and folded consts it took along)
    std::unordered_set<int64_t> now = drawn_ids(*after->graph), under = below(*t_, pick);
    size_t gone = 0;
    for (int64_t x : all)
      if (!now.count(x)) {
        QVERIFY2(under.count(x), qPrintable(QString("node %1 vanished but is not below %2").arg(x).arg(pick)));
        gone++;
      }
    for (int64_t x : now) QVERIFY(all.count(x));
    // frame 0 has no match to keep open: everything drawn below it folds (but copies of a shared leaf drawn for
    // users elsewhere)
    QVERIFY(gone > 0 && gone <= most);
    QVERIFY(ph->hides >= gone);
    QVERIFY(QString::fromStdString(ph->lines[0]).contains(QString::number(ph->hides)));
    // the placeholder feeds the collapsed node
    int ph_index = (int)(ph - after->graph->nodes.data());
    bool feeds = false;
    for (const GEdge& e : after->graph->edges)
      feeds |= e.src == ph_index && after->graph->nodes[e.dst].key == NodeKey{pick, 0};
    QVERIFY(feeds);
    QVERIFY(w.graph()->is_collapsed(pick));
    // C again: expanded, the same nodes as before
    w.toggle_collapse(pick);
    QVERIFY(wait_idle(w));
    QVERIFY(w.graph()->frame()->graph->collapsed.empty());
    QVERIFY(drawn_ids(*w.graph()->frame()->graph) == all);
  }

  // the collapsed state follows the node through the step's frames, wherever it still exists
  void collapse_survives_stepping() {
    MainWindow w(nullptr, false);
    QVERIFY(w.open_trace(trace_));
    w.select({0, big_, 0});
    QVERIFY(wait_idle(w));
    StepReplay rep(*t_, big_);
    // a node of frame 0 with something below it that is still there in frame 2
    auto f2 = rep.nodes(2);
    std::unordered_set<int64_t> in2(f2.begin(), f2.end());
    int64_t pick = 0;
    for (const GNode& n : w.graph()->frame()->graph->nodes)
      if (!n.key.via && !n.is_root && in2.count(n.key.id) && below(*t_, n.key.id).size() >= 2 &&
          !t_->node(n.key.id).src.empty()) {
        pick = n.key.id;
        break;
      }
    if (!pick) QSKIP("no node survives two matches in the demo's biggest step");
    w.toggle_collapse(pick);
    QVERIFY(wait_idle(w));
    bool had = placeholder_of(*w.graph()->frame()->graph, pick) != nullptr;
    w.navigate(Qt::Key_Right);
    QVERIFY(wait_idle(w));
    w.navigate(Qt::Key_Right);
    QVERIFY(wait_idle(w));
    const FrameGraph& g = *w.graph()->frame()->graph;
    QCOMPARE(g.frame, size_t(2));
    QVERIFY(std::find(g.collapsed.begin(), g.collapsed.end(), pick) != g.collapsed.end() || !had);
    if (had) QVERIFY(placeholder_of(g, pick));
    // Shift+X's action: everything open again
    w.expand_all();
    QVERIFY(wait_idle(w));
    QVERIFY(w.graph()->frame()->graph->collapsed.empty());
  }

  // a frame jumped to (a fresh window: its replay computes every frame up to it in one go) is the frame stepped to one
  // match at a time: the same nodes with the same marks, the same ghosts, the same counts
  void deep_jump_equals_stepping() {
    int64_t deep = 0;
    size_t most = 0;
    for (const auto& s : t_->steps())
      if (t_->matches(s.id).size() > most) most = t_->matches(s.id).size(), deep = s.id;
    QVERIFY(most >= 10);
    size_t k = std::min<size_t>(most, 60);
    MainWindow jumped(nullptr, false), stepped(nullptr, false);
    QVERIFY(jumped.open_trace(trace_));
    jumped.select({0, deep, k});
    QVERIFY(wait_idle(jumped));
    QVERIFY(stepped.open_trace(trace_));
    stepped.select({0, deep, 0});
    QVERIFY(wait_idle(stepped));
    for (size_t i = 0; i < k; i++) {
      stepped.navigate(Qt::Key_Right);
      QVERIFY(wait_idle(stepped));
    }
    const FrameGraph &a = *jumped.graph()->frame()->graph, &b = *stepped.graph()->frame()->graph;
    QCOMPARE(a.frame, k);
    QCOMPARE(b.frame, k);
    auto marks = [](const std::vector<GNode>& nodes) {
      std::map<std::pair<int64_t, int64_t>, std::pair<int, bool>> m;
      for (const GNode& n : nodes) m[{n.key.id, n.key.via}] = {(int)n.mark, n.in_match};
      return m;
    };
    QVERIFY(!a.nodes.empty());
    QVERIFY(marks(a.nodes) == marks(b.nodes));
    QVERIFY(marks(a.ghosts) == marks(b.ghosts));
    QCOMPARE(a.root, b.root);
    QCOMPARE(a.n_uops, b.n_uops);
    QCOMPARE(a.n_added, b.n_added);
    QCOMPARE(a.n_removed, b.n_removed);
    QCOMPARE(a.n_changed, b.n_changed);
    QVERIFY(a.changed == b.changed);
  }

  // a launch that started the replay before the window (tinyviz's main) opens on the frame asked for, with the
  // same graph as a window that did not; a prepared replay of another frame is dropped, not used
  void a_prepared_launch_opens_on_its_frame() {
    size_t last = StepReplay(*t_, big_).num_frames() - 1;
    auto shown = [&](bool prepare, size_t prepared_frame, size_t frame) {
      if (prepare) TraceSession::prepare(trace_.toStdString(), big_, prepared_frame);
      MainWindow w(nullptr, false);
      [&] { QVERIFY(w.open_trace(trace_, {0, big_, frame})); }();
      [&] { QVERIFY(wait_idle(w)); }();
      FrameResultPtr f = w.graph()->frame();
      std::vector<NodeKey> keys;
      if (f) {
        [&] { QCOMPARE(f->graph->step, big_); }();
        [&] { QCOMPARE(f->graph->frame, frame); }();
        for (const GNode& n : f->graph->nodes) keys.push_back(n.key);
      }
      return keys;
    };
    std::vector<NodeKey> plain = shown(false, 0, last);
    QVERIFY(!plain.empty());
    QVERIFY(shown(true, last, last) == plain);
    std::vector<NodeKey> other = shown(false, 0, last - 1);
    QVERIFY(!other.empty());
    QVERIFY(shown(true, last, last - 1) == other);
  }

  // a collapsed subtree that other drawn nodes use too: with split leaves its placeholder is drawn once per user
  // (one edge each, nothing crossing the graph); without, one placeholder feeds them all
  void a_shared_placeholder_is_drawn_once_per_user() {
    auto session = TraceSession::open(trace_.toStdString());
    auto build = [&](const FrameOptions& o) {
      return session->with_frames([&](TraceSession::Frames& fr) { return build_frame(fr, big_, 0, o); });
    };
    FrameOptions base;
    base.auto_collapse = false;
    FrameGraphPtr open = build(base);
    auto placeholders = [](const FrameGraph& g, int64_t c) {
      std::vector<int> out;
      for (size_t i = 0; i < g.nodes.size(); i++)
        if (g.nodes[i].hides && g.nodes[i].key.id == c) out.push_back((int)i);
      return out;
    };
    auto out_edges = [](const FrameGraph& g, int n) {
      std::vector<int> dst;
      for (const GEdge& e : g.edges)
        if (e.src == n) dst.push_back(e.dst);
      return dst;
    };
    size_t shared = 0;
    for (const GNode& cand : open->nodes) {
      if (cand.key.via || cand.is_root) continue;
      int64_t c = cand.key.id;
      FrameOptions one = base, joined = base;
      one.collapsed = joined.collapsed = {c};
      joined.split_leaves = false;
      FrameGraphPtr a = build(one), b = build(joined);
      std::vector<int> pa = placeholders(*a, c), pb = placeholders(*b, c);
      if (pb.empty()) continue;  // nothing to hide below it
      QCOMPARE(pb.size(), size_t(1));
      std::vector<int> users = out_edges(*b, pb[0]);
      if (users.size() < 3) {
        QCOMPARE(pa.size(), size_t(1));
        continue;
      }
      shared++;
      // one copy per user, each with the count and the one edge to its user, the first under the collapsed node
      QCOMPARE(pa.size(), users.size());
      std::set<NodeKey, bool (*)(const NodeKey&, const NodeKey&)> fed(
          [](const NodeKey& x, const NodeKey& y) { return std::tie(x.id, x.via) < std::tie(y.id, y.via); });
      for (int u : users) fed.insert(b->nodes[u].key);
      for (int p : pa) {
        QCOMPARE(a->nodes[p].hides, b->nodes[pb[0]].hides);
        std::vector<int> to = out_edges(*a, p);
        QCOMPARE(to.size(), size_t(1));
        QVERIFY(fed.erase(a->nodes[to[0]].key));
        if (a->nodes[p].key.via == kPlaceholderVia)
          QCOMPARE(a->nodes[to[0]].key, (NodeKey{c, 0}));
        else
          QCOMPARE(a->nodes[p].key.via, a->nodes[to[0]].key.id);
      }
      QVERIFY(fed.empty());
    }
    QVERIFY2(shared > 0, "no collapse in the demo's biggest graph hides a subtree that three nodes use");
  }

  // a graph above the threshold starts collapsed; what the match put in stays drawn; unticking the box restores it
  void big_graphs_start_collapsed() {
    MainWindow w(nullptr, false);
    QVERIFY(w.open_trace(trace_));
    StepReplay rep(*t_, big_);
    size_t k = std::min<size_t>(3, rep.num_frames() - 1);
    w.select({0, big_, k});
    QVERIFY(wait_idle(w));
    size_t full = w.graph()->frame()->graph->nodes.size();
    QVERIFY(w.graph()->frame()->graph->auto_collapsed.empty());  // the demo's graphs are small
    FrameOptions o = w.loader()->options();
    o.auto_collapse_above = full / 2, o.auto_collapse_target = full / 4, o.auto_collapse_min = 2;
    w.set_frame_options(o);
    QVERIFY(wait_idle(w));
    const FrameGraph& g = *w.graph()->frame()->graph;
    QVERIFY2(!g.auto_collapsed.empty(), qPrintable(QString("%1 nodes").arg(full)));
    QVERIFY(g.nodes.size() < full);
    // the replacement is still drawn (unless it is a folded const), and each placeholder says what it hides
    FrameDelta d = rep.delta(k);
    if (t_->node(d.after).op_name != "CONST") QVERIFY(drawn_ids(g).count(d.after));
    size_t hidden = 0;
    for (const GNode& n : g.nodes) hidden += n.hides;
    QVERIFY(hidden > 0);
    w.auto_collapse_box()->setChecked(false);
    QVERIFY(wait_idle(w));
    QVERIFY(w.graph()->frame()->graph->collapsed.empty());
    QCOMPARE(w.graph()->frame()->graph->nodes.size(), full);
  }

  // window geometry, splitter sizes, the last tab, view options and recent files come back at the next launch
  void window_layout_persists() {
    QSettings("tinygrad-cpp", "tinyviz").clear();
    QList<int> sizes;
    {
      MainWindow w;
      w.resize(1111, 777);
      w.show();
      QVERIFY(w.open_trace(trace_));
      QVERIFY(wait_idle(w));
      w.splitter()->setSizes({300, 600, 211});
      sizes = w.splitter()->sizes();
      w.show_tab(MainWindow::TimelineTab);
      QCheckBox* fold = nullptr;
      for (QCheckBox* c : w.findChildren<QCheckBox*>())
        if (c->text().contains("Fold")) fold = c;
      QVERIFY(fold);
      fold->setChecked(false);
      QVERIFY(wait_idle(w));
      w.close();
    }
    MainWindow w2;
    w2.show();
    QVERIFY2(std::abs(w2.width() - 1111) <= 2 && std::abs(w2.height() - 777) <= 2,  // offscreen rounds a pixel
             qPrintable(QString("%1x%2").arg(w2.width()).arg(w2.height())));
    QCOMPARE(w2.splitter()->sizes(), sizes);
    QCOMPARE(w2.tabs()->currentIndex(), (int)MainWindow::TimelineTab);
    QVERIFY(!w2.loader()->options().fold_consts);
    QStringList recent = QSettings("tinygrad-cpp", "tinyviz").value("recent").toStringList();
    QVERIFY(!recent.isEmpty());
    QCOMPARE(recent.front(), QFileInfo(trace_).absoluteFilePath());
    bool listed = false;
    for (QAction* a : w2.recent_menu()->actions()) listed |= a->text() == recent.front();
    QVERIFY(listed);
    // and the defaults again for whoever comes next
    QSettings("tinygrad-cpp", "tinyviz").clear();
    MainWindow w3;
    QVERIFY(w3.loader()->options().fold_consts);
  }

  // the search reads precomputed texts: its rows are exactly those whose search text (SearchRole) contains the needle
  void search_rows_equal_the_search_texts() {
    MainWindow w(nullptr, false);
    QVERIFY(w.open_trace(trace_));
    QVERIFY(wait_idle(w));
    for (QString needle : {"rewrite", "symbolic", "ADD", "zzz-nothing"}) {
      w.search_box()->setText(needle);
      QElapsedTimer t;
      t.start();
      while (t.elapsed() < 400) QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
      QVERIFY(wait_idle(w));
      QString n = needle.toLower();
      // contexts shown = contexts whose name matches or that hold a shown step
      for (int r = 0; r < w.model()->rowCount(); r++) {
        QModelIndex ci = w.model()->index(r, 0);
        bool name = ci.data(TraceModel::SearchRole).toString().contains(n);
        QModelIndex pi = w.filter()->mapFromSource(ci);
        if (name) QVERIFY2(pi.isValid(), qPrintable(needle));
        if (!pi.isValid()) continue;
        // its steps: shown when their text matches (or a shown descendant / rule hit needs them)
        for (int s = 0; s < w.model()->rowCount(ci); s++) {
          QModelIndex si = w.model()->index(s, 0, ci);
          if (si.data(TraceModel::SearchRole).toString().contains(n))
            QVERIFY2(w.filter()->mapFromSource(si).isValid(), qPrintable(needle));
        }
      }
      if (needle == "zzz-nothing") QCOMPARE(w.filter()->rowCount(), 0);
    }
    w.search_box()->clear();
  }
};

int run_feature_tests(int argc, char** argv) {
  TestFeatures t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_features.moc"
