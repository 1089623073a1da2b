#include "gui/rule_panel.h"

#include <QApplication>
#include <QClipboard>
#include <QCursor>
#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QToolButton>
#include <QToolTip>
#include <QUrl>
#include <QVBoxLayout>

#include "gui/text_diff.h"

namespace tv {

using namespace tg::viz;

namespace {
QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }
QString pre(const std::string& s) { return "<pre>" + esc(s) + "</pre>"; }
QString dur(int64_t ns) {
  return ns >= 1'000'000 ? QString::number(ns / 1e6, 'f', 2) + " ms" : QString::number(ns / 1e3, 'f', 2) + " µs";
}
const char* kCss =
    "body{color:#d8dae6;} h3{color:#ffffff;margin:6px 0 2px 0;} h4{color:#9fb4ff;margin:10px 0 2px 0;}"
    "pre{font-family:'DejaVu Sans Mono',monospace;font-size:9pt;margin:2px 0;white-space:pre-wrap;}"
    "td{padding:0 8px 0 0;} .k{color:#8a90a8;} pre.one{color:#ffffff;background:#262a3a;padding:3px;} .add{color:#3aa56d;} .del{color:#d14b4b;} .err{color:#ff7070;}";
// A rule with no recorded source (an imported tinygrad trace records where its rules are, not their text): its lines
// from the recorded checkout when the file is there, from its line until the brackets opened there close (at most 40
// lines). Empty when the file is not on this machine.
QString source_from_checkout(const SessionPtr& s, const RuleRow& r, QString* path_out) {
  if (!s || r.file.empty() || r.line <= 0) return {};
  QString file = QString::fromStdString(r.file), root = QString::fromStdString(s->source_root());
  QString path = QFileInfo(file).isAbsolute() || root.isEmpty() ? file : QDir(root).filePath(file);
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
  QStringList out;
  int depth = 0, n = 0;
  bool opened = false;
  while (!f.atEnd() && out.size() < 40) {
    QString l = QString::fromUtf8(f.readLine());
    if (l.endsWith('\n')) l.chop(1);
    if (++n < r.line) continue;
    out << l;
    bool quoted = false;
    QChar q;
    for (QChar c : l) {
      if (quoted) {
        if (c == q) quoted = false;
        continue;
      }
      if (c == '"' || c == '\'') quoted = true, q = c;
      else if (c == '#') break;
      else if (c == '(' || c == '[' || c == '{') depth++, opened = true;
      else if (c == ')' || c == ']' || c == '}') depth--;
    }
    if (!opened || depth <= 0) break;
  }
  if (out.isEmpty()) return {};
  if (path_out) *path_out = path;
  return out.join('\n');
}
}  // namespace

RulePanel::RulePanel(QWidget* parent) : QWidget(parent) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 4, 4, 4);
  auto* row = new QHBoxLayout();
  site_ = new QLineEdit(this);
  site_->setReadOnly(true);
  site_->setMinimumWidth(60);
  site_->setPlaceholderText(tr("rule file:line"));
  site_->setToolTip(tr("Where the rule is written: select and copy, or press Copy"));
  auto* copy = new QToolButton(this);
  copy->setText(tr("Copy"));
  connect(copy, &QToolButton::clicked, this, [this] {
    if (!site_->text().isEmpty()) QApplication::clipboard()->setText(site_->text());
  });
  auto* open = new QToolButton(this);
  open->setText(tr("Open"));
  open->setToolTip(tr("Open the rule's file at its line in $VISUAL or $EDITOR (else the desktop's editor)"));
  connect(open, &QToolButton::clicked, this, [this] {
    QString msg;
    if (!open_site(&msg)) QToolTip::showText(QCursor::pos(), msg, this);
  });
  row->addWidget(site_, 1);
  row->addWidget(copy);
  row->addWidget(open);
  lay->addLayout(row);
  auto* split = new QSplitter(Qt::Vertical, this);
  main_ = new QTextBrowser(split);
  node_ = new QTextBrowser(split);
  for (QTextBrowser* b : {main_, node_}) {
    b->document()->setDefaultStyleSheet(kCss);
    b->setOpenLinks(false);
  }
  node_->setHtml("<p class='k'>" + tr("Click a node in the graph to see its full text, sources and users.") + "</p>");
  connect(main_, &QTextBrowser::anchorClicked, this, [this](const QUrl& u) {
    if (u.scheme() == "list") show_list(frame_, u.path());
  });
  connect(node_, &QTextBrowser::anchorClicked, this, [this](const QUrl& u) {
    if (u.scheme() == "node") emit node_link(u.path().toLongLong());
  });
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  lay->addWidget(split, 1);
}

void RulePanel::set_session(SessionPtr s) {
  session_ = std::move(s);
  sel_ = {};
  frame_.reset();
  site_->clear();
  main_->clear();
}

QString RulePanel::site() const { return site_->text(); }

bool RulePanel::open_site(QString* message) {
  auto fail = [&](const QString& m) {
    if (message) *message = m;
    return false;
  };
  QString site = site_->text();
  int colon = site.lastIndexOf(':');
  if (site.isEmpty() || colon <= 0) return fail(tr("No rule selected"));
  QString file = site.left(colon), line = site.mid(colon + 1);
  QString path = file;
  if (QFileInfo(file).isRelative()) {
    QString root = session_ ? QString::fromStdString(session_->source_root()) : QString();
    path = !root.isEmpty() && QFileInfo::exists(QDir(root).filePath(file)) ? QDir(root).filePath(file)
                                                                          : QDir::current().filePath(file);
  }
  if (!QFileInfo::exists(path)) return fail(tr("%1 is not on this machine").arg(path));
  for (const char* var : {"VISUAL", "EDITOR"}) {
    QString cmd = qEnvironmentVariable(var).trimmed();
    if (cmd.isEmpty()) continue;
    QStringList args = QProcess::splitCommand(cmd);
    QString program = args.takeFirst();
    if (QProcess::startDetached(program, args << "+" + line << path)) return true;
    return fail(tr("$%1 (%2) could not be started").arg(var, cmd));
  }
  if (QDesktopServices::openUrl(QUrl::fromLocalFile(path))) return true;
  return fail(tr("No editor: set $VISUAL or $EDITOR"));
}
QString RulePanel::text() const { return site_->text() + "\n" + main_->toPlainText() + "\n" + node_->toPlainText(); }

QString RulePanel::source_html(const RuleRow& r) const {
  if (!r.source.empty()) return pre(r.source);
  QString path, src = source_from_checkout(session_, r, &path);
  if (src.isEmpty())
    return "<p class='k'>" + tr("The trace holds no source for this rule, and %1 is not on this machine.")
                                 .arg(QString::fromStdString(r.file).toHtmlEscaped()) +
           "</p>";
  return "<p class='k'>" + tr("read from %1 (the trace holds no rule source):").arg(path.toHtmlEscaped()) + "</p>" +
         "<pre>" + src.toHtmlEscaped() + "</pre>";
}

QString RulePanel::step_html(int64_t step) const {
  Trace& t = session_->ui();
  const StepRow& s = t.step(step);
  QStringList flags;
  if (s.bottom_up) flags << "bottom_up";
  if (s.walk) flags << "walk";
  if (s.enter_calls) flags << "enter_calls";
  QString h = "<h4>" + tr("Step %1: %2").arg(s.id).arg(esc(s.name)) + "</h4><table>";
  auto row = [&](const QString& k, const QString& v) {
    h += "<tr><td class='k'>" + k + "</td><td>" + v + "</td></tr>";
  };
  row(tr("called at"), esc(s.file) + ":" + QString::number(s.line));
  row(tr("flags"), flags.isEmpty() ? tr("top-down") : flags.join(", "));
  row(tr("depth"), QString::number(s.depth) + (s.parent ? tr(" (inside step %1)").arg(s.parent) : QString()));
  row(tr("matches"), QString::number(s.n_matches));
  row(tr("time"), s.t_end ? dur(s.t_end - s.t_start) : tr("did not finish"));
  row(tr("input root"), QString::number(s.input_root));
  row(tr("output root"), s.output_root ? QString::number(s.output_root) : tr("none (unfinished)"));
  const ContextRow& c = t.context(s.context);
  row(tr("context"), QString("%1 (%2)").arg(esc(c.name)).arg(c.id));
  h += "</table>";
  if (!s.error.empty()) h += "<p class='err'>" + esc(s.error) + "</p>";
  return h;
}

void RulePanel::show_selection(const Selection& s, const MatchRow* m) {
  sel_ = s;
  site_->clear();
  if (!session_) return;
  Trace& t = session_->ui();
  QString h;
  if (!s.step) {
    if (s.context) {
      const ContextRow& c = t.context(s.context);
      int64_t matches = 0;
      for (int64_t st : c.steps) matches += t.step(st).n_matches;
      h = "<h3>" + esc(c.name) + "</h3><table>" + "<tr><td class='k'>" + tr("context") + "</td><td>" +
          QString::number(c.id) + "</td></tr><tr><td class='k'>" + tr("steps") + "</td><td>" +
          QString::number(c.steps.size()) + "</td></tr><tr><td class='k'>" + tr("matches") + "</td><td>" +
          QString::number(matches) + "</td></tr><tr><td class='k'>" + tr("time") + "</td><td>" +
          (c.t_end ? dur(c.t_end - c.t_start) : tr("did not finish")) + "</td></tr></table>";
    }
    head_html_ = h;
    main_->setHtml(h);
    return;
  }
  const StepRow& st = t.step(s.step);
  if (s.frame == 0 || !m) {
    h = "<h3>" + tr("Input of %1").arg(esc(st.name)) + "</h3><p class='k'>" +
        tr("Frame 0: the graph the step started from. Right arrow steps through its %1 matches.").arg(st.n_matches) +
        "</p>";
  } else {
    const RuleRow* r = session_->rule(m->rule);
    h = "<h3>" + tr("Match %1 of %2").arg(s.frame).arg(st.n_matches) + "</h3>";
    if (m->is_error) h += "<p class='err'>" + tr("The rule raised: ") + esc(t.str(m->error)) + "</p>";
    if (r) {
      site_->setText(QString::fromStdString(r->file) + ":" + QString::number(r->line));
      h += "<table><tr><td class='k'>" + tr("rule") + "</td><td><b>" + esc(r->file) + ":" + QString::number(r->line) +
           "</b></td></tr><tr><td class='k'>" + tr("matcher") + "</td><td>" + esc(r->matcher) + "</td></tr>" +
           "<tr><td class='k'>" + tr("duration") + "</td><td>" + dur(m->dur_ns) + "</td></tr></table>" + source_html(*r);
    }
  }
  h += step_html(s.step);
  head_html_ = h;
  main_->setHtml(h);
}

void RulePanel::show_frame(const FrameResultPtr& r) {
  if (!r || !session_) return;
  const FrameGraph& g = *r->graph;
  if (g.step != sel_.step || g.frame != sel_.frame) return;
  frame_ = r;
  QString h = head_html_;
  QString extra;
  if (g.match) {
    extra += "<h4>" + tr("Before → after") + "</h4><pre>";
    for (const DiffLine& d : line_diff(g.before_text, g.after_text)) {
      QString line = QString(QChar(d.kind)) + " " + QString::fromStdString(d.text).toHtmlEscaped();
      extra += d.kind == '+'   ? "<span class='add'>" + line + "</span>\n"
               : d.kind == '-' ? "<span class='del'>" + line + "</span>\n"
                               : line + "\n";
    }
    auto link = [](const char* which, const QString& text) {
      return QString("<a href='list:%1'>%2</a>").arg(which, text);
    };
    extra += "</pre><p class='k'>" + link("added", tr("%1 nodes added").arg(g.n_added)) + ", " +
             link("removed", tr("%1 removed").arg(g.n_removed)) + ", " +
             link("rebuilt", tr("%1 rebuilt").arg(g.n_changed)) + "</p>";
  }
  if (!g.error.empty()) extra += "<p class='err'>" + tr("Replay stopped: ") + esc(g.error) + "</p>";
  // the diff goes right under the rule, before the step table
  int at = h.indexOf("<h4>" + tr("Step %1").arg(g.step));
  if (at < 0) at = h.size();
  h.insert(at, extra);
  // the match in one line comes first, under its heading
  if (g.match && !g.match_line.empty()) {
    QString top = "<pre class='one'>" + esc(g.match_line) + "</pre>";
    if (g.folded_result)
      top += "<p class='k'>" + tr("The result is a constant, drawn in its users' labels: the users are boxed and "
                                  "the constant is marked green in them.") +
             "</p>";
    int h3 = h.indexOf("</h3>");
    h.insert(h3 < 0 ? 0 : h3 + 5, top);
  }
  main_->setHtml(h);
}

void RulePanel::show_list(const FrameResultPtr& r, const QString& which) {
  if (!r) return;
  const FrameGraph& g = *r->graph;
  std::vector<int64_t> ids;
  if (which == "added") ids = g.added;
  if (which == "removed") ids = g.removed;
  if (which == "rebuilt")
    for (auto& [old, now] : g.changed) ids.push_back(now);
  // a node of this frame has its info; a removed one its ghost, when it is drawn
  auto line = [&](int64_t id) {
    std::string l;
    if (auto f = g.info.find(id); f != g.info.end()) l = f->second.label();
    for (const GNode& gh : g.ghosts)
      if (l.empty() && gh.key.id == id)
        for (const std::string& x : gh.lines) l += (l.empty() ? "" : " ") + x;
    for (char& c : l)
      if (c == '\n') c = ' ';
    return QString("<a href='node:%1'>%1</a>  ").arg(id) + esc(l);
  };
  QString title = which == "added" ? tr("Added") : which == "removed" ? tr("Removed") : tr("Rebuilt");
  QString h = "<h4>" + tr("%1 by match %2: %3 nodes").arg(title).arg(g.frame).arg(ids.size()) + "</h4><pre>";
  for (int64_t id : ids) h += line(id) + "\n";
  h += "</pre><p class='k'>" + tr("Click an id to show the node in the graph.") + "</p>";
  node_->setHtml(h);
}

QString RulePanel::node_text() const { return node_->toPlainText(); }

void RulePanel::set_node_pane(bool on) { node_->setVisible(on); }
bool RulePanel::node_pane_shown() const { return !node_->isHidden(); }

void RulePanel::show_rule(int64_t rule) {
  site_->clear();
  const RuleRow* r = session_ ? session_->rule(rule) : nullptr;
  if (!r) {
    main_->setHtml("<p class='k'>" + tr("Select a rule in the table to see its source here.") + "</p>");
    return;
  }
  site_->setText(QString::fromStdString(r->file) + ":" + QString::number(r->line));
  main_->setHtml("<h3>" + esc(r->file) + ":" + QString::number(r->line) + "</h3><table><tr><td class='k'>" +
                 tr("matcher") + "</td><td>" + esc(r->matcher) + "</td></tr></table>" + source_html(*r) +
                 "<p class='k'>" + tr("Its matches are listed under the table; double-click one to open its frame.") +
                 "</p>");
}

void RulePanel::show_node(const FrameResultPtr& r, int64_t id) {
  if (!r || !id) {
    node_->setHtml("<p class='k'>" + tr("Click a node in the graph to see its full text, sources and users.") + "</p>");
    return;
  }
  const FrameGraph& g = *r->graph;
  auto it = g.info.find(id);
  if (it == g.info.end()) return;
  const NodeInfo& inf = it->second;
  auto first_line = [&](int64_t n) {
    auto f = g.info.find(n);
    if (f == g.info.end()) return QString::number(n);
    std::string l = f->second.label();
    for (char& c : l)
      if (c == '\n') c = ' ';
    return QString::number(n) + "  " + esc(l);
  };
  QString h = "<h4>" + tr("Node %1").arg(id) + "</h4>" + pre(inf.label()) + "<p class='k'>" + tr("expression") +
              "</p>" + pre(inf.expr()) + "<p class='k'>" + tr("sources") + "</p><pre>";
  for (size_t i = 0; i < inf.src.size(); i++) h += QString("[%1] ").arg(i) + first_line(inf.src[i]) + "\n";
  h += "</pre><p class='k'>" + tr("users") + "</p><pre>";
  for (int64_t u : inf.users) h += first_line(u) + "\n";
  h += "</pre>";
  node_->setHtml(h);
}

}  // namespace tv
