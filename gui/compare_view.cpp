#include "gui/compare_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QSplitter>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <unordered_set>

#include "gui/async.h"
#include "gui/graph_view.h"
#include "gui/text_diff.h"
#include "gui/op_style.h"

namespace tv {

using namespace tg::viz;

namespace {

enum { CtxRole = Qt::UserRole + 1, StepRole };

QString status_text(const StepPair& p) {
  switch (p.status) {
    case DiffStatus::equal:
      return QStringLiteral("=");
    case DiffStatus::differs:
      return QStringLiteral("≠ match %1").arg(p.at);
    case DiffStatus::input_differs:
      return QStringLiteral("≠ input");
    case DiffStatus::only_a:
      return QStringLiteral("A only");
    case DiffStatus::only_b:
      return QStringLiteral("B only");
  }
  return {};
}

QColor status_color(DiffStatus s) {
  switch (s) {
    case DiffStatus::equal:
      return QColor(0x6a, 0x9a, 0x7a);
    case DiffStatus::differs:
      return mark::differs;
    case DiffStatus::input_differs:
      return mark::changed;
    default:
      return QColor(0x90, 0x94, 0xa8);
  }
}

QString step_name(Trace& t, int64_t id) {
  if (!id) return {};
  const StepRow& s = t.step(id);
  return QString(s.depth * 2, ' ') + QString::fromStdString(s.name);
}

}  // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 4, 4, 4);
  lay->setSpacing(4);
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  lay->addWidget(summary_);

  auto* split = new QSplitter(Qt::Horizontal, this);
  tree_ = new QTreeWidget(split);
  // pairs are aligned by name: one name column (B's name on B's rows), and the status
  tree_->setColumnCount(2);
  tree_->setHeaderLabels({tr("Context / step (A | B)"), tr("")});
  tree_->setUniformRowHeights(true);
  tree_->setRootIsDecorated(true);
  tree_->header()->setStretchLastSection(false);
  tree_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  tree_->header()->setSectionResizeMode(1, QHeaderView::Interactive);
  tree_->header()->resizeSection(1, 96);
  tree_->setTextElideMode(Qt::ElideMiddle);

  auto* right = new QWidget(split);
  auto* rl = new QVBoxLayout(right);
  rl->setContentsMargins(0, 0, 0, 0);
  rl->setSpacing(2);
  auto* bar = new QHBoxLayout();
  bar->setContentsMargins(6, 0, 6, 0);
  auto button = [&](const QString& text, const QString& tip, auto fn) {
    auto* b = new QToolButton(right);
    b->setText(text);
    b->setToolTip(tip);
    b->setAutoRaise(true);
    connect(b, &QToolButton::clicked, this, fn);
    bar->addWidget(b);
  };
  button(tr("First divergence"), tr("The first step and match where the traces part (Ctrl+F8)"),
         [this] { first_divergence(); });
  button(tr("◀◀"), tr("Previous divergent step (Shift+F8)"), [this] { next_divergence(-1); });
  button(tr("▶▶"), tr("Next divergent step (F8)"), [this] { next_divergence(+1); });
  bar->addSpacing(16);
  button(tr("◀"), tr("Previous match on both sides (Left)"), [this] { step_frame(-1); });
  frame_label_ = new QLabel(right);
  frame_label_->setMinimumWidth(120);
  frame_label_->setAlignment(Qt::AlignCenter);
  bar->addWidget(frame_label_);
  button(tr("▶"), tr("Next match on both sides (Right)"), [this] { step_frame(+1); });
  bar->addStretch(1);
  auto* legend = new QLabel(
      tr("<span style='color:%1'>▢</span> where the frames start to differ").arg(mark::differs.name()), right);
  bar->addWidget(legend);
  rl->addLayout(bar);

  auto* graphs = new QSplitter(Qt::Horizontal, right);
  auto side = [&](QLabel*& caption, GraphView*& graph) {
    auto* w = new QWidget(graphs);
    auto* v = new QVBoxLayout(w);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(2);
    caption = new QLabel(w);
    caption->setWordWrap(true);
    caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
    caption->setStyleSheet("padding: 2px 6px; background: #24263a;");
    graph = new GraphView(w);
    v->addWidget(caption);
    v->addWidget(graph, 1);
  };
  side(caption_a_, graph_a_);
  side(caption_b_, graph_b_);
  rl->addWidget(graphs, 1);
  split->addWidget(tree_);
  split->addWidget(right);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setSizes({280, 1400});  // the graphs take the width (the window's own tree is hidden on this tab)
  lay->addWidget(split, 1);
  // one zoom for both panes: the two frames are compared at the same scale
  connect(graph_a_, &GraphView::zoomed, graph_b_, &GraphView::set_zoom);
  connect(graph_b_, &GraphView::zoomed, graph_a_, &GraphView::set_zoom);

  loader_a_ = new FrameLoader(this);
  loader_b_ = new FrameLoader(this);
  connect(loader_a_, &FrameLoader::frame_ready, this, [this](FrameResultPtr r) { on_frame(false, r); });
  connect(loader_b_, &FrameLoader::frame_ready, this, [this](FrameResultPtr r) { on_frame(true, r); });
  connect(loader_a_, &FrameLoader::progress, graph_a_, &GraphView::set_progress);
  connect(loader_b_, &FrameLoader::progress, graph_b_, &GraphView::set_progress);
  connect(graph_a_, &GraphView::cancel_requested, loader_a_, &FrameLoader::cancel_layout);
  connect(graph_b_, &GraphView::cancel_requested, loader_b_, &FrameLoader::cancel_layout);
  for (auto [loader, graph, b] : {std::tuple{loader_a_, graph_a_, false}, std::tuple{loader_b_, graph_b_, true}}) {
    connect(loader, &FrameLoader::frame_failed, this, [this, graph, b](qint64 step, qulonglong frame, QString msg) {
      graph->show_message(tr("Frame %1 of step %2 cannot be built:\n%3").arg(frame).arg(step).arg(msg));
      (b ? want_b_ : want_a_) = 0;
      emit load_failed(
          tr("Frame %1 of step %2 of %3 cannot be built: %4").arg(frame).arg(step).arg(b ? "B" : "A").arg(msg));
      if (!loading()) emit frames_shown();
    });
    connect(graph, &GraphView::nav_key, this, [this](int key) {
      if (key == Qt::Key_Left || key == Qt::Key_Right) step_frame(key == Qt::Key_Left ? -1 : 1);
    });
  }
  connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* it) {
    if (syncing_ || !it || !diff_) return;
    size_t c = it->data(0, CtxRole).toULongLong();
    QVariant s = it->data(0, StepRole);
    if (s.isValid()) select_pair(c, s.toULongLong());
  });
  connect(tree_, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* it) {
    if (!it || !diff_ || !it->data(0, StepRole).isValid()) return;
    const StepPair& p = diff_->pairs[it->data(0, CtxRole).toULongLong()].steps[it->data(0, StepRole).toULongLong()];
    if (p.a) emit open_in_trace({a_->ui().step(p.a).context, p.a, std::min(cur_.frame, frames_of(false, p.a) - 1)});
  });
  clear();
}

CompareView::~CompareView() = default;

void CompareView::set_frame_options(const FrameOptions& given) {
  FrameOptions o = given;
  o.collapsed.clear(), o.expanded.clear();  // uop ids of the window's trace: they name other nodes in B
  loader_a_->set_options(o);
  loader_b_->set_options(o);
  if (diff_ && cur_.ctx != SIZE_MAX) request_frames();
}

void CompareView::clear() {
  diff_.reset();
  shapes_a_.reset(), shapes_b_.reset();
  a_.reset(), b_.reset();
  loader_a_->set_session(nullptr);
  loader_b_->set_session(nullptr);
  cur_ = {};
  want_a_ = want_b_ = 0;
  mark_gen_++, marking_ = false;
  shown_a_.reset(), shown_b_.reset();
  origins_a_.clear(), origins_b_.clear();
  differing_a_ = differing_b_ = 0;
  tree_->clear();
  summary_->setText(tr("File › Compare with… opens a second trace beside this one."));
  caption_a_->clear(), caption_b_->clear();
  frame_label_->clear();
  graph_a_->show_message(tr("No comparison"));
  graph_b_->show_message(QString());
}

void CompareView::set_compare(SessionPtr a, SessionPtr b, std::shared_ptr<const TraceDiff> d) {
  clear();
  a_ = std::move(a), b_ = std::move(b), diff_ = std::move(d);
  shapes_a_ = std::make_shared<std::unique_ptr<NodeShapes>>();
  shapes_b_ = std::make_shared<std::unique_ptr<NodeShapes>>();
  loader_a_->set_session(a_);
  loader_b_->set_session(b_);
  const TraceDiff& df = *diff_;
  QString s =
      tr("<b>A</b> %1 &nbsp;⇄&nbsp; <b>B</b> %2<br>")
          .arg(QString::fromStdString(a_->path()).toHtmlEscaped(), QString::fromStdString(b_->path()).toHtmlEscaped());
  s += tr("%1 of %2 aligned steps equal, in %3 aligned contexts")
           .arg(df.equal_steps)
           .arg(df.aligned_steps)
           .arg(df.aligned_contexts);
  if (!df.only_a.empty() || !df.only_b.empty())
    s += tr("; %1 contexts only in A, %2 only in B").arg(df.only_a.size()).arg(df.only_b.size());
  if (!df.compared_rules) s += tr("; matches compared by their nodes only (different producers)");
  int64_t at = df.first_a.ordinal ? df.first_a.ordinal : df.first_b.ordinal;
  if (df.diverged && at)
    s += tr("<br>First divergence: <b>%1</b> › <b>%2</b>, match %3 (A: %4, B: %5)")
             .arg(QString::fromStdString(df.context).toHtmlEscaped(), QString::fromStdString(df.step).toHtmlEscaped())
             .arg(at)
             .arg(QString::fromStdString(df.first_a.rule.empty() ? "-" : df.first_a.rule).toHtmlEscaped(),
                  QString::fromStdString(df.first_b.rule.empty() ? "-" : df.first_b.rule).toHtmlEscaped());
  else if (df.diverged)
    s += tr("<br>First divergence: <b>%1</b> › <b>%2</b>: its input graph differs (what ran before it, outside the "
            "rewrites, made different graphs)")
             .arg(QString::fromStdString(df.context).toHtmlEscaped(), QString::fromStdString(df.step).toHtmlEscaped());
  else
    s += tr("<br>No divergence: every aligned step has the same input and the same matches.");
  summary_->setText(s);
  fill_tree();
}

void CompareView::fill_tree() {
  QSignalBlocker block(tree_);
  tree_->clear();
  Trace &ta = a_->ui(), &tb = b_->ui();
  QList<QTreeWidgetItem*> tops;
  for (size_t c = 0; c < diff_->pairs.size(); c++) {
    const ContextPair& cp = diff_->pairs[c];
    auto* top = new QTreeWidgetItem();
    QString name = QString::fromStdString(cp.a ? ta.context(cp.a).name : tb.context(cp.b).name);
    top->setText(0, name);
    top->setToolTip(0, name);
    DiffStatus cs = !cp.a ? DiffStatus::only_b : !cp.b ? DiffStatus::only_a : DiffStatus::equal;
    QString st = cs == DiffStatus::only_a   ? tr("A only")
                 : cs == DiffStatus::only_b ? tr("B only")
                 : cp.differing             ? tr("≠ %n step(s)", nullptr, (int)cp.differing)
                                            : QStringLiteral("=");
    top->setText(1, st);
    top->setForeground(1, status_color(cs == DiffStatus::equal && cp.differing ? DiffStatus::differs : cs));
    top->setData(0, CtxRole, (qulonglong)c);
    for (size_t k = 0; k < cp.steps.size(); k++) {
      const StepPair& p = cp.steps[k];
      auto* it = new QTreeWidgetItem(top);
      it->setText(0, p.a ? step_name(ta, p.a) : step_name(tb, p.b));
      it->setToolTip(
          0, tr("A: step %1\nB: step %2").arg(p.a ? QString::number(p.a) : "-", p.b ? QString::number(p.b) : "-"));
      it->setText(1, status_text(p));
      it->setForeground(1, status_color(p.status));
      it->setData(0, CtxRole, (qulonglong)c);
      it->setData(0, StepRole, (qulonglong)k);
    }
    tops.push_back(top);
  }
  tree_->addTopLevelItems(tops);
}

QTreeWidgetItem* CompareView::item_of(size_t ctx, size_t step) const {
  QTreeWidgetItem* top = tree_->topLevelItem((int)ctx);
  return top ? top->child((int)step) : nullptr;
}

size_t CompareView::frames_of(bool side_b, int64_t step) const {
  if (!step) return 1;
  Trace& t = (side_b ? b_ : a_)->ui();
  const StepRow& s = t.step(step);
  return s.error.empty() ? (size_t)s.n_matches + 1 : t.matches(step).size() + 1;
}

void CompareView::select_pair(size_t ctx, size_t step, std::optional<size_t> frame) {
  if (!diff_ || ctx >= diff_->pairs.size() || step >= diff_->pairs[ctx].steps.size()) return;
  const StepPair& p = diff_->pairs[ctx].steps[step];
  cur_.ctx = ctx, cur_.step = step;
  cur_.frame = frame ? *frame : p.status == DiffStatus::differs ? (size_t)p.at : 0;
  if (QTreeWidgetItem* it = item_of(ctx, step); it && tree_->currentItem() != it) {
    syncing_ = true;
    it->parent()->setExpanded(true);
    tree_->setCurrentItem(it);
    tree_->scrollToItem(it);
    syncing_ = false;
  }
  request_frames();
}

void CompareView::request_frames() {
  const StepPair& p = diff_->pairs[cur_.ctx].steps[cur_.step];
  size_t na = frames_of(false, p.a), nb = frames_of(true, p.b);
  size_t most = std::max(p.a ? na : 0, p.b ? nb : 0);
  if (most) cur_.frame = std::min(cur_.frame, most - 1);
  frame_a_ = std::min(cur_.frame, na - 1), frame_b_ = std::min(cur_.frame, nb - 1);
  frame_label_->setText(cur_.frame ? tr("match %1 of %2").arg(cur_.frame).arg(most - 1) : tr("input graph"));
  shown_a_.reset(), shown_b_.reset();
  origins_a_.clear(), origins_b_.clear();
  differing_a_ = differing_b_ = 0;
  mark_gen_++, marking_ = false;
  want_a_ = p.a, want_b_ = p.b;
  caption_a_->setText(caption(false, p.a, frame_a_));
  caption_b_->setText(caption(true, p.b, frame_b_));
  if (p.a)
    loader_a_->request(p.a, frame_a_);
  else
    graph_a_->show_message(tr("A has no such step"));
  if (p.b)
    loader_b_->request(p.b, frame_b_);
  else
    graph_b_->show_message(tr("B has no such step"));
  if (!loading()) emit frames_shown();
}

QString CompareView::caption(bool side_b, int64_t step, size_t frame) const {
  const char* side = side_b ? "B" : "A";
  if (!step) return QStringLiteral("<b>%1</b> —").arg(side);
  Trace& t = (side_b ? b_ : a_)->ui();
  const StepRow& s = t.step(step);
  QString text = QStringLiteral("<b>%1</b> step %2 <b>%3</b>")
                     .arg(side)
                     .arg(step)
                     .arg(QString::fromStdString(s.name).toHtmlEscaped());
  if (!frame) return text + tr(" · input graph");
  auto ms = t.matches(step);
  if (frame > ms.size()) return text;
  const MatchRow& m = ms[frame - 1];
  QString rule = QStringLiteral("?");
  if (auto r = t.rule(m.rule))
    rule = QString::fromStdString(r->file.substr(r->file.rfind('/') + 1)) + ":" + QString::number(r->line);
  auto first_line = [](std::string l) { return QString::fromStdString(l.substr(0, l.find('\n'))).toHtmlEscaped(); };
  return text + tr(" · match %1/%2 · %3<br>%4 → %5")
                    .arg(frame)
                    .arg(ms.size())
                    .arg(rule.toHtmlEscaped(), first_line(t.label(m.before)), first_line(t.label(m.after)));
}

bool CompareView::loading() const { return want_a_ || want_b_ || marking_; }

void CompareView::on_frame(bool side_b, FrameResultPtr r) {
  if (!diff_ || !r || !r->graph) return;
  int64_t& want = side_b ? want_b_ : want_a_;
  size_t frame = side_b ? frame_b_ : frame_a_;
  if (!want || r->graph->step != want || r->graph->frame != frame) return;  // stale
  want = 0;
  (side_b ? graph_b_ : graph_a_)->show_frame(r);
  (side_b ? shown_b_ : shown_a_) = r;
  if (loading()) return;
  mark_differences();
}

// A frame's node "differs" when the other frame has no node of its structure; it is where the difference starts when
// all its sources have twins there (its users differ only because of it). Folded and filtered nodes count too (a
// frame's info holds every node of the frame; the removed ones it also holds are left out). Hashed on the query thread
// with the sessions' frame-side traces, which know the nodes the replay built.
void CompareView::mark_differences() {
  if (!shown_a_ || !shown_b_) return;
  struct Marks {
    std::vector<int64_t> origins[2];
    size_t differing[2] = {0, 0};
    std::vector<LabelDiff> labels;
  };
  const uint64_t gen = ++mark_gen_;
  SessionPtr sa = a_, sb = b_;
  FrameGraphPtr ga = shown_a_->graph, gb = shown_b_->graph;
  auto shapes_a = shapes_a_, shapes_b = shapes_b_;
  run_async<Marks>(
      this,
      [sa, sb, ga, gb, shapes_a, shapes_b] {
        auto frame_nodes = [](const FrameGraph& g) {
          std::unordered_set<int64_t> removed(g.removed.begin(), g.removed.end());
          std::vector<int64_t> out;
          for (auto& [id, info] : g.info)
            if (!removed.count(id)) out.push_back(id);
          return out;
        };
        std::vector<int64_t> na = frame_nodes(*ga), nb = frame_nodes(*gb);
        // the structure of each node of a frame, and of its sources
        auto hash = [](TraceSession& s, std::unique_ptr<NodeShapes>& sh, const std::vector<int64_t>& nodes) {
          return s.with_frames([&](TraceSession::Frames& fr) {
            if (!sh) sh = std::make_unique<NodeShapes>(fr.trace);
            std::vector<std::pair<uint64_t, std::vector<uint64_t>>> out;
            for (int64_t id : nodes) {
              std::vector<uint64_t> srcs;
              for (int64_t x : fr.trace.node(id).src) srcs.push_back(sh->of(x));
              out.push_back({sh->of(id), std::move(srcs)});
            }
            return out;
          });
        };
        auto ha = hash(*sa, *shapes_a, na), hb = hash(*sb, *shapes_b, nb);
        Marks m;
        auto side = [&](const std::vector<int64_t>& nodes, const decltype(ha)& mine, const decltype(ha)& theirs,
                        int k) {
          std::unordered_set<uint64_t> other;
          for (auto& h : theirs) other.insert(h.first);
          for (size_t i = 0; i < nodes.size(); i++) {
            if (other.count(mine[i].first)) continue;
            m.differing[k]++;
            bool sources_shared = true;
            for (uint64_t x : mine[i].second) sources_shared &= other.count(x) > 0;
            if (sources_shared) m.origins[k].push_back(nodes[i]);
          }
          std::sort(m.origins[k].begin(), m.origins[k].end());
        };
        side(na, ha, hb, 0);
        side(nb, hb, ha, 1);
        // an origin of A with a node of B of the same op over the same sources: they differ in their labels (dtype,
        // arg), which a word diff shows better than an outline
        auto op_key = [](TraceSession& s, const std::vector<int64_t>& ids, const decltype(ha)& h,
                         const std::vector<int64_t>& all) {
          std::unordered_map<int64_t, size_t> at;
          for (size_t i = 0; i < all.size(); i++) at[all[i]] = i;
          return s.with_frames([&](TraceSession::Frames& fr) {
            std::vector<std::string> keys;
            for (int64_t id : ids) {
              std::string k(fr.trace.node(id).op_name);
              for (uint64_t x : h[at[id]].second) k += ":" + std::to_string(x);
              keys.push_back(std::move(k));
            }
            return keys;
          });
        };
        std::vector<std::string> kb = op_key(*sb, nb, hb, nb);
        std::unordered_map<std::string, int64_t> b_by_key;
        for (size_t i = 0; i < nb.size(); i++) b_by_key.emplace(kb[i], nb[i]);
        std::vector<std::string> ko = op_key(*sa, m.origins[0], ha, na);
        for (size_t i = 0; i < m.origins[0].size() && m.labels.size() < 8; i++)
          if (auto it = b_by_key.find(ko[i]); it != b_by_key.end()) m.labels.push_back({m.origins[0][i], it->second, "", ""});
        sa->with_frames([&](TraceSession::Frames& fr) {
          for (LabelDiff& d : m.labels) d.label_a = fr.trace.label(d.a);
        });
        sb->with_frames([&](TraceSession::Frames& fr) {
          for (LabelDiff& d : m.labels) d.label_b = fr.trace.label(d.b);
        });
        return m;
      },
      [this, gen](Marks m, QString error) {
        if (gen != mark_gen_) return;  // the selection moved on
        marking_ = false;
        if (!error.isEmpty()) {
          emit load_failed(tr("Comparing the frames: %1").arg(error));
        } else {
          origins_a_ = std::move(m.origins[0]), origins_b_ = std::move(m.origins[1]);
          label_diffs_ = std::move(m.labels);
          differing_a_ = m.differing[0], differing_b_ = m.differing[1];
          // an origin that is not drawn (a const folded into its users' labels, a filtered node): its drawn users
          auto drawn_marks = [](const FrameResultPtr& r, const std::vector<int64_t>& origins) {
            std::unordered_set<int64_t> drawn;
            for (const GNode& n : r->graph->nodes) drawn.insert(n.key.id);
            std::vector<int64_t> out;
            for (int64_t id : origins) {
              if (drawn.count(id)) {
                out.push_back(id);
                continue;
              }
              if (auto it = r->graph->info.find(id); it != r->graph->info.end())
                for (int64_t u : it->second.users)
                  if (drawn.count(u)) out.push_back(u);
            }
            return out;
          };
          int drawn_a = graph_a_->mark_differing(drawn_marks(shown_a_, origins_a_));
          int drawn_b = graph_b_->mark_differing(drawn_marks(shown_b_, origins_b_));
          auto note = [this](QLabel* caption, size_t differing, size_t origins, int drawn) {
            caption->setText(caption->text() +
                             (differing ? tr("<br><span style='color:%1'>%2 nodes have no twin on the other side; "
                                             "the difference starts at %3 (outlined: %4)</span>")
                                              .arg(mark::differs.name())
                                              .arg(differing)
                                              .arg(origins)
                                              .arg(drawn)
                                        : tr("<br>every node has a twin on the other side")));
          };
          note(caption_a_, differing_a_, origins_a_.size(), drawn_a);
          note(caption_b_, differing_b_, origins_b_.size(), drawn_b);
          // where an outlined node differs from its counterpart only in its label, the words that differ
          QString words;
          for (size_t i = 0; i < label_diffs_.size() && i < 3; i++) {
            const LabelDiff& d = label_diffs_[i];
            QString h;
            for (const DiffLine& w : word_diff(d.label_a, d.label_b)) {
              QString t = QString::fromStdString(w.text).toHtmlEscaped();
              if (t.size() > 80) t = t.left(38) + "…" + t.right(38);
              h += w.kind == '-'   ? "<span style='color:#ff7070;text-decoration:line-through'>" + t + "</span>"
                   : w.kind == '+' ? "<span style='color:#5fd08a'>" + t + "</span>"
                                   : t;
            }
            words += tr("<br>node %1 (A) and %2 (B), same op and sources: %3").arg(d.a).arg(d.b).arg(h);
          }
          if (!words.isEmpty()) caption_a_->setText(caption_a_->text() + words);
        }
        emit frames_shown();
      });
  marking_ = true;
}

bool CompareView::first_divergence() {
  if (!diff_ || !diff_->diverged) return false;
  for (size_t c = 0; c < diff_->pairs.size(); c++)
    for (size_t k = 0; k < diff_->pairs[c].steps.size(); k++)
      if (diff_->pairs[c].steps[k].a == diff_->first_a.step && diff_->pairs[c].steps[k].b == diff_->first_b.step) {
        select_pair(c, k);
        return true;
      }
  return false;
}

bool CompareView::select_a_step(int64_t step, size_t frame) {
  if (!diff_) return false;
  for (size_t c = 0; c < diff_->pairs.size(); c++)
    for (size_t k = 0; k < diff_->pairs[c].steps.size(); k++)
      if (diff_->pairs[c].steps[k].a == step) {
        select_pair(c, k, frame);
        return true;
      }
  return false;
}

bool CompareView::next_divergence(int dir) {
  if (!diff_) return false;
  // the pairs in order, flattened; start next to the selected one (or before the first / after the last)
  std::vector<std::pair<size_t, size_t>> order;
  for (size_t c = 0; c < diff_->pairs.size(); c++)
    for (size_t k = 0; k < diff_->pairs[c].steps.size(); k++) order.push_back({c, k});
  long pos = dir > 0 ? -1 : (long)order.size();
  for (size_t i = 0; i < order.size(); i++)
    if (order[i] == std::pair{cur_.ctx, cur_.step}) pos = (long)i;
  for (long i = pos + dir; i >= 0 && i < (long)order.size(); i += dir) {
    const StepPair& p = diff_->pairs[order[i].first].steps[order[i].second];
    if (p.a && p.b && p.status != DiffStatus::equal) {
      select_pair(order[i].first, order[i].second);
      return true;
    }
  }
  return false;
}

void CompareView::step_frame(int delta) {
  if (!diff_ || cur_.ctx == SIZE_MAX) return;
  if (delta < 0 && cur_.frame == 0) return;
  const StepPair& p = diff_->pairs[cur_.ctx].steps[cur_.step];
  size_t most = std::max(p.a ? frames_of(false, p.a) : 0, p.b ? frames_of(true, p.b) : 0);
  if (delta > 0 && cur_.frame + 1 >= most) return;
  cur_.frame += delta;
  request_frames();
}

void CompareView::keyPressEvent(QKeyEvent* e) {
  if (e->key() == Qt::Key_Left || e->key() == Qt::Key_Right) {
    step_frame(e->key() == Qt::Key_Left ? -1 : 1);
    return;
  }
  QWidget::keyPressEvent(e);
}

}  // namespace tv
