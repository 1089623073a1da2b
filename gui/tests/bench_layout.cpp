// Layout timings on synthetic UOp-shaped graphs: Graphviz dot (with tinyviz's tuning), the layered fallback, and
// an incremental step (one node replaced). Usage: tinyviz_bench_layout [MAX_NODES]
#include <QApplication>
#include <QElapsedTimer>
#include <QPixmap>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "gui/graph_view.h"
#include "gui/layout.h"
#include "gui/op_style.h"
#include "gui/tests/synthetic.h"

using namespace tv;

// draws a synthetic graph laid out by both engines, to compare them by eye: DIR/layout_<n>_<engine>.png
static void render(int n, const char* dir, bool save = true) {
  static const char* ops[] = {"ADD", "MUL", "RANGE", "CMPLT", "WHERE", "LOAD", "INDEX", "AND", "FLOORDIV"};
  LayoutGraph lg = synthetic_graph(n);
  auto fg = std::make_shared<FrameGraph>();
  for (size_t i = 0; i < lg.nodes.size(); i++) {
    GNode g;
    g.key = lg.nodes[i].key;
    g.op = ops[i % 9];
    g.lines = {g.op, "dtypes.weakint", i % 3 ? "" : "(" + std::to_string(i) + ", AxisType.LOOP)"};
    if (g.lines.back().empty()) g.lines.pop_back();
    QSizeF sz = label_size(g.lines);
    g.w = lg.nodes[i].w = sz.width(), g.h = lg.nodes[i].h = sz.height();
    fg->nodes.push_back(g);
  }
  for (const LEdge& e : lg.edges) fg->edges.push_back({e.src, e.dst, e.port, 0, 1});
  for (int engine = 0; engine < 2; engine++) {
    if (engine == 0 && dot_work(lg) > kMaxDotWork) continue;
    auto r = std::make_shared<FrameResult>();
    r->graph = fg;
    r->layout = std::make_shared<Layout>(engine ? layout_layered(lg) : layout_dot(lg));
    r->family = engine + 1;
    GraphView v;
    v.resize(1600, 1000);
    v.show();
    QElapsedTimer t;
    t.start();
    v.show_frame(r);
    double build = t.nsecsElapsed() / 1e6;
    v.viewport()->grab();
    double paint = t.nsecsElapsed() / 1e6 - build;
    // a second frame on the same view, as when stepping (items are rebuilt, the view kept)
    auto r2 = std::make_shared<FrameResult>(*r);
    t.restart();
    v.show_frame(r2);
    v.viewport()->grab();
    double step = t.nsecsElapsed() / 1e6;
    std::printf("%5d nodes (%s): scene %.1f ms, first paint %.1f ms, next frame scene+paint %.1f ms\n", n,
                engine ? "layered" : "dot", build, paint, step);
    if (!save) continue;
    QApplication::processEvents();
    QString out = QString("%1/layout_%2_%3.png").arg(dir).arg(n).arg(engine ? "layered" : "dot");
    v.grab().save(out);
    std::printf("wrote %s\n", qPrintable(out));
  }
}

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--png") {
    QApplication app(argc, argv);
    for (int n : {60, 250}) render(n, argv[2]);
    for (int n : {100, 500, 2000}) render(n, argv[2], false);
    return 0;
  }
  int max_n = argc > 1 ? std::atoi(argv[1]) : 2000;
  std::printf("%7s %7s %7s %10s %10s %12s   %s\n", "nodes", "edges", "work", "dot ms", "layered ms", "incremental",
              "dot tuning");
  for (int n : {100, 250, 500, 1000, 1500, 2000, 5000, 20000}) {
    if (n > max_n) break;
    LayoutGraph g = synthetic_graph(n);
    double dot_ms = -1;
    size_t work = dot_work(g);
    if (work <= kMaxDotWork) {
      auto t0 = std::chrono::steady_clock::now();
      Layout d = layout_dot(g);
      dot_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    Layout l = layout_layered(g);
    LayoutGraph b = g;
    b.nodes[n / 2].key = {-1, 0};
    Layout inc = layout_incremental(b, g, l, {{-1, n / 2 + 1}}, {});
    std::printf("%7d %7zu %7zu %10.1f %10.1f %12.2f   %s\n", n, g.edges.size(), work, dot_ms, l.ms, inc.ms,
                dot_tuning(work).c_str());
  }
}
