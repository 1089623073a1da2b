// Layout engines on synthetic graphs: every node placed, no overlaps in the layered layout, sources below users,
// the incremental layout keeps what it can, Graphviz runs (plugins present) and agrees on the node count.
#include <QtTest>
#include <unordered_map>

#include "gui/graph_items.h"
#include "gui/graph_view.h"
#include "gui/layout.h"
#include "gui/op_style.h"
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

  // A crowded frame's plain edges are drawn by one item as pixel runs (EdgeLines): where it applies, the lines Qt
  // draws for the edges one by one, each pixel within a pixel of one of Qt's; at a closer zoom the edges draw
  // themselves; without that item nearly no line is drawn (the edges do leave their lines to it)
  void edge_lines_draw_what_the_edges_would() {
    LayoutGraph lg = synthetic_graph(1200, 7);
    Layout L = layout_layered(lg);
    auto g = std::make_shared<FrameGraph>();
    for (const LNode& n : lg.nodes) {
      GNode gn;
      gn.key = n.key, gn.op = "ADD", gn.lines = {"ADD"}, gn.w = n.w, gn.h = n.h;
      g->nodes.push_back(gn);
    }
    for (const LEdge& e : lg.edges) g->edges.push_back({e.src, e.dst, e.port, 0, 1, false});
    QVERIFY(g->edges.size() > EdgeItem::kCrowdedEdges);
    auto r = std::make_shared<FrameResult>();
    r->graph = g, r->layout = std::make_shared<Layout>(L), r->family = 1;
    GraphView v;
    v.resize(900, 700);
    v.show();
    v.show_frame(r);
    QGraphicsItem* lines = nullptr;
    for (QGraphicsItem* it : v.scene()->items())
      if (it->type() == EdgeLines::Type) lines = it;
    QVERIFY(lines);
    auto draw = [&](bool batched) {
      EdgeLines::enabled = batched;
      QImage img = v.viewport()->grab().toImage().convertToFormat(QImage::Format_RGB32);
      EdgeLines::enabled = true;
      return img;
    };
    const QRgb edge = QColor(mark::edge).rgb();
    auto line_pixels = [&](const QImage& img) {
      int n = 0;
      for (int y = 0; y < img.height(); y++)
        for (int x = 0; x < img.width(); x++) n += img.pixel(x, y) == edge;
      return n;
    };
    // the edge's colour within two pixels of (x, y) (a pixel, and the antialiased border of a node over it)
    auto near_line = [&](const QImage& img, int x, int y) {
      for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++)
          if (img.valid(x + dx, y + dy) && img.pixel(x + dx, y + dy) == edge) return true;
      return false;
    };
    for (double zoom : {0.9, 0.6, 0.3, 1.2}) {
      v.setTransform(QTransform::fromScale(zoom, zoom));
      v.centerOn(QPointF(L.pos[lg.nodes.size() / 2].x, L.pos[lg.nodes.size() / 2].y));
      QImage qt = draw(false), ours = draw(true);
      QCOMPARE(qt.size(), ours.size());
      if (const char* dir = std::getenv("TV_TEST_SHOTS")) {
        qt.save(QString("%1/edges-qt-%2.png").arg(dir).arg(zoom));
        ours.save(QString("%1/edges-ours-%2.png").arg(dir).arg(zoom));
      }
      int n = line_pixels(qt), differ = 0, far = 0;
      QVERIFY2(n > 2000, qPrintable(QString("zoom %1: %2 line pixels in view").arg(zoom).arg(n)));
      for (int y = 0; y < qt.height(); y++)
        for (int x = 0; x < qt.width(); x++) {
          QRgb a = qt.pixel(x, y), b = ours.pixel(x, y);
          if (a == b) continue;
          differ++;
          // a line's pixel that the other draws a pixel away (or the antialiased border of a node over such a
          // pixel); anything else is a real difference
          bool explained = near_line(ours, x, y) && near_line(qt, x, y);
          far += !explained;
        }
      qInfo("zoom %.1f: %d line pixels, %d differ (%d not within a pixel)", zoom, n, differ, far);
      // (a handful: a line's step a column off where the line runs under a node's antialiased border)
      QVERIFY2(far <= n / 1000, qPrintable(QString("zoom %1: %2 pixels differ beyond a pixel").arg(zoom).arg(far)));
      QVERIFY2(differ <= n / 5,
               qPrintable(QString("zoom %1: %2 of %3 line pixels moved").arg(zoom).arg(differ).arg(n)));
      if (zoom * 1.1 > 1.0) QCOMPARE(differ, 0);  // the edges draw themselves
      if (zoom == 0.9) {                          // without the item, its lines are gone
        lines->setVisible(false);
        int left = line_pixels(draw(true));
        lines->setVisible(true);
        QVERIFY2(left < n / 2, qPrintable(QString("%1 of %2 line pixels drawn without EdgeLines").arg(left).arg(n)));
      }
    }
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
