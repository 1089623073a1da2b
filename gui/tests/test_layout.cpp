// Layout engines on synthetic graphs: every node placed, no overlaps in the layered layout, sources below users,
// the incremental layout keeps what it can, Graphviz runs (plugins present) and agrees on the node count.
#include <QtTest>
#include <unordered_map>

#include "gui/layout.h"
#include "gui/tests/synthetic.h"

using namespace tv;

class TestLayout : public QObject {
  Q_OBJECT
 private slots:
  void layered_places_without_overlap() {
    LayoutGraph g = synthetic_graph(300);
    Layout L = layout_layered(g);
    QCOMPARE(L.pos.size(), g.nodes.size());
    QCOMPARE(L.edges.size(), g.edges.size());
    for (size_t i = 0; i < g.nodes.size(); i++)
      for (size_t j = i + 1; j < g.nodes.size(); j++) {
        bool overlap = std::abs(L.pos[i].x - L.pos[j].x) < (g.nodes[i].w + g.nodes[j].w) / 2 - 0.5 &&
                       std::abs(L.pos[i].y - L.pos[j].y) < (g.nodes[i].h + g.nodes[j].h) / 2 - 0.5;
        QVERIFY2(!overlap, qPrintable(QString("nodes %1 and %2 overlap").arg(i).arg(j)));
      }
    for (const LEdge& e : g.edges) QVERIFY(L.pos[e.src].y > L.pos[e.dst].y);  // sources are drawn below users
  }

  void layered_is_fast_on_big_graphs() {
    LayoutGraph g = synthetic_graph(20000);
    QElapsedTimer t;
    t.start();
    Layout L = layout_layered(g);
    QCOMPARE(L.pos.size(), g.nodes.size());
    qInfo("layered layout of 20000 nodes: %lld ms", (long long)t.elapsed());
  }

  void dot_lays_out() {
    LayoutGraph g = synthetic_graph(60);
    Layout L = layout_dot(g);
    QCOMPARE(L.engine, std::string("dot"));
    QCOMPARE(L.pos.size(), g.nodes.size());
    for (const EdgePath& p : L.edges) QVERIFY(p.pts.size() >= 2);
    for (const LEdge& e : g.edges) QVERIFY(L.pos[e.src].y > L.pos[e.dst].y);  // rankdir BT after the y flip
  }

  void incremental_keeps_positions() {
    LayoutGraph a = synthetic_graph(80);
    Layout La = layout_layered(a);
    // b: a with node 40 replaced by a new node 1000 (its users rewired) and one new node on top
    LayoutGraph b = a;
    b.nodes[40].key = {1000, 0};
    b.nodes.push_back({{2000, 0}, 100, 30});
    b.edges.push_back({79, (int)b.nodes.size() - 1, 0});
    std::unordered_map<int64_t, int64_t> inherit{{1000, 41}};
    Layout Lb = layout_incremental(b, a, La, inherit, {});
    QCOMPARE(Lb.engine, std::string("incremental"));
    for (size_t i = 0; i < a.nodes.size(); i++) {
      QCOMPARE(Lb.pos[i].x, La.pos[i].x);  // kept, and 1000 took 41's place
      QCOMPARE(Lb.pos[i].y, La.pos[i].y);
    }
    QVERIFY(Lb.pos.back().y < La.pos[79].y);  // the new user sits above its source
    // too different: gives up
    LayoutGraph c = synthetic_graph(80, 7);
    for (auto& n : c.nodes) n.key.id += 5000;
    QVERIFY(layout_incremental(c, a, La, {}, {}).engine.empty());
  }

  // a rebuilt node four times wider than the node whose place it takes, and a new node: no box covers another
  void incremental_places_without_overlap() {
    LayoutGraph a = synthetic_graph(120);
    Layout La = layout_layered(a);
    LayoutGraph b = a;
    b.nodes[60].key = {9000, 0};
    b.nodes[60].w *= 4;
    b.nodes.push_back({{9001, 0}, 300, 30});
    b.edges.push_back({60, (int)b.nodes.size() - 1, 0});
    Layout Lb = layout_incremental(b, a, La, {{9000, a.nodes[60].key.id}}, {});
    QCOMPARE(Lb.engine, std::string("incremental"));
    QCOMPARE(Lb.pos[60].y, La.pos[60].y);  // it took the old node's row
    for (size_t i = 0; i < b.nodes.size(); i++)
      for (size_t j = i + 1; j < b.nodes.size(); j++) {
        bool overlap = std::abs(Lb.pos[i].x - Lb.pos[j].x) < (b.nodes[i].w + b.nodes[j].w) / 2 - 0.5 &&
                       std::abs(Lb.pos[i].y - Lb.pos[j].y) < (b.nodes[i].h + b.nodes[j].h) / 2 - 0.5;
        QVERIFY2(!overlap, qPrintable(QString("nodes %1 and %2 overlap").arg(i).arg(j)));
      }
  }
};

int run_layout_tests(int argc, char** argv) {
  TestLayout t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_layout.moc"
