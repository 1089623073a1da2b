#include "gui/run_panel.h"

#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

#include "gui/ansi_text.h"
#include "gui/code_view.h"
#include "gui/timeline_view.h"
#include "viz/reader/trace_profile.h"

namespace tv {

using namespace tg::viz;

namespace {
QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }
// a time since the trace's first event, to the microsecond
QString at_text(int64_t ns) { return QString::number(ns / 1e9, 'f', 6) + " s"; }
const char* kCss =
    "body{color:#d8dae6;} h3{color:#ffffff;margin:6px 0 2px 0;} h4{color:#9fb4ff;margin:10px 0 2px 0;}"
    "pre{font-family:'DejaVu Sans Mono',monospace;font-size:9pt;margin:2px 0;white-space:pre-wrap;}"
    "td{padding:0 8px 0 0;} .k{color:#8a90a8;} .r{color:#6cc4ff;} .w{color:#ffb86c;} .rw{color:#e08cff;}"
    "a{color:#8fb8ff;}";
QString row(const QString& k, const QString& v) { return "<tr><td class='k'>" + k + "</td><td>" + v + "</td></tr>"; }
}  // namespace

RunPanel::RunPanel(const TimelineView* timeline, QWidget* parent) : QWidget(parent), timeline_(timeline) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 4, 4, 4);
  body_ = new QTextBrowser(this);
  body_->document()->setDefaultStyleSheet(kCss);
  body_->setOpenLinks(false);
  lay->addWidget(body_, 1);
  connect(body_, &QTextBrowser::anchorClicked, this, [this](const QUrl& u) {
    qlonglong v = u.path().toLongLong();
    if (u.scheme() == "buffer") emit open_buffer(v);
    if (u.scheme() == "source") emit open_source(v);
    if (u.scheme() == "graph") emit open_graph(v);
    if (u.scheme() == "run") emit open_run(v);
  });
}

void RunPanel::set_session(SessionPtr s) {
  session_ = std::move(s);
  run_ = -1;
  body_->clear();
}

QString RunPanel::text() const { return body_->toPlainText(); }

void RunPanel::show_hint(const QString& text) {
  run_ = -1;
  body_->setHtml("<p class='k'>" + text.toHtmlEscaped() + "</p>");
}

// every run of the program: how many, their total, mean and spread, and links to the first ones
QString RunPanel::runs_html(int64_t program, int64_t current) const {
  const auto& evs = session_->ui().kernel_events();
  std::vector<size_t> runs;
  for (size_t i = 0; i < evs.size(); i++)
    if (evs[i].program == program) runs.push_back(i);
  if (runs.empty()) return "<p class='k'>" + tr("No recorded runs (run with PROFILE=1 or VIZ to time them).") + "</p>";
  double total = 0, lo = 1e300, hi = 0;
  for (size_t i : runs) {
    double d = (double)(evs[i].t_end - evs[i].t_start);
    total += d, lo = std::min(lo, d), hi = std::max(hi, d);
  }
  QString h = "<h4>" + tr("Runs of this kernel") + "</h4><table>";
  h += row(tr("runs"), QString::number(runs.size()));
  if (total <= 0) {
    h += row(tr("time"), tr("not timed"));
  } else {
    h += row(tr("total"), duration_text(total));
    h += row(tr("mean"), duration_text(total / (double)runs.size()));
    h += row(tr("min … max"), duration_text(lo) + " … " + duration_text(hi));
  }
  h += "</table><p>";
  int64_t t0 = session_->time_origin();
  for (size_t j = 0; j < runs.size() && j < 24; j++) {
    size_t i = runs[j];
    double d = (double)(evs[i].t_end - evs[i].t_start);
    QString label = QString("#%1 %2").arg(j + 1).arg(d > 0 ? duration_text(d) : tr("not timed"));
    h += (int64_t)i == current ? "<b>" + label + "</b>"
                               : QString("<a href='run:%1' title='%2'>%3</a>").arg(i).arg(at_text(evs[i].t_start - t0), label);
    h += j + 1 < runs.size() ? " · " : "";
  }
  if (runs.size() > 24) h += tr("… %1 more").arg(runs.size() - 24);
  return h + "</p>";
}

void RunPanel::show_run(int64_t event) {
  if (!session_) return;
  const Trace& t = session_->ui();
  const auto& evs = t.kernel_events();
  if (event < 0 || (size_t)event >= evs.size()) return show_hint(tr("Click a kernel run on the timeline."));
  run_ = event;
  const KernelEventRow& k = evs[(size_t)event];
  const ProgramRow* p = k.program ? t.program(k.program) : nullptr;
  double ns = (double)(k.t_end - k.t_start);
  int64_t t0 = session_->time_origin();
  // which run of its kernel this is
  size_t nth = 0, of = 0;
  for (size_t i = 0; i < evs.size(); i++)
    if (evs[i].name == k.name) {
      of++;
      if ((int64_t)i <= event) nth = of;
    }
  std::string ansi = k.name;  // the name in the reference's colours when its codegen context recorded them
  try {
    if (p && p->context) ansi = t.context(p->context).name_ansi;
  } catch (const std::exception&) {  // a trace still being written may name a context it has not written yet
  }
  QString h = "<h3>" + ansi_html(ansi) + "</h3><p class='k'>" +
              (p ? tr("run %1 of %2 of a kernel of this name").arg(nth).arg(of) : tr("a copy or an unrecorded program")) +
              " · " + tr("←/→ previous/next run on the lane, Home/End first/last, F fit, Esc clears marks") +
              "</p><table>";
  h += row(tr("device"), esc(k.device));
  h += row(tr("start"), at_text(k.t_start - t0));
  h += row(tr("duration"), ns > 0 ? duration_text(ns) : tr("not timed"));
  h += row(tr("end"), at_text(k.t_end - t0));
  if (p) {
    // the kernel's work in the unit it reads in: a tiny kernel's 12 FLOP, not 0.000 GFLOP
    QString work = p->ops >= 100'000'000 ? tr("%1 GFLOP").arg(p->ops / 1e9, 0, 'f', 3)
                   : p->ops >= 100'000   ? tr("%1 MFLOP").arg(p->ops / 1e6, 0, 'f', 3)
                                         : tr("%1 FLOP").arg(p->ops);
    if (p->ops >= 0)
      h += row(tr("GFLOPS"), ns > 0 ? QString::number(p->ops / ns, 'f', p->ops / ns < 0.1 ? 4 : 2) + " (" + work + ")"
                                     : work);
    else
      h += row(tr("GFLOPS"), tr("symbolic (depends on the variables)"));
    if (p->mem >= 0)
      h += row(tr("GB/s"), ns > 0 ? QString::number(p->mem / ns, 'f', 2) + " (" + fmt_bytes((double)p->mem) + ")"
                                   : fmt_bytes((double)p->mem));
    h += row(tr("global"), esc(p->global_size.empty() ? "-" : p->global_size));
    h += row(tr("local"), esc(p->local_size.empty() ? "-" : p->local_size));
  }
  if (!k.var_vals.empty() && k.var_vals != "{}") h += row(tr("variables"), esc(k.var_vals));
  h += "</table>";
  // the buffers, in argument order
  std::vector<BufferArg> args;
  QString bad;
  try {
    args = parse_bufs(t, k);
  } catch (const std::exception& e) {
    bad = QString::fromUtf8(e.what());
  }
  h += "<h4>" + tr("Buffers") + "</h4>";
  if (!bad.isEmpty()) h += "<p class='k'>" + bad.toHtmlEscaped() + "</p>";
  if (args.empty() && bad.isEmpty()) h += "<p class='k'>" + tr("none recorded") + "</p>";
  if (!args.empty()) {
    h += "<table><tr><td class='k'>" + tr("arg") + "</td><td class='k'>" + tr("mode") + "</td><td class='k'>" +
         tr("buffer") + "</td><td class='k'>" + tr("dtype") + "</td><td class='k'>" + tr("size") + "</td></tr>";
    int64_t read = 0, written = 0;
    for (size_t i = 0; i < args.size(); i++) {
      const BufferArg& a = args[i];
      const BufferLife* life = timeline_ ? timeline_->buffer_life(a.buffer) : nullptr;
      const char* cls = a.mode == 0 ? "r" : a.mode == 1 ? "w" : "rw";
      QString buf = life ? QString("<a href='buffer:%1'>%1</a>").arg(a.buffer) : QString::number(a.buffer);
      // a kernel argument can be a view into a bigger buffer (the JIT's arena): then its bytes are the view's
      bool whole = life && life->nbytes == a.nbytes;
      QString dtype = !life ? QString("?") : whole ? esc(life->dtype) : tr("view");
      QString size = fmt_bytes((double)a.nbytes);
      if (whole && life->size > 0) size = QString::number(life->size) + " × " + size;
      if (life && !whole) size += tr(" of %1 (%2)").arg(fmt_bytes((double)life->nbytes), esc(life->dtype));
      h += QString("<tr><td>data%1</td><td class='%2'>%3</td><td>%4</td><td>%5</td><td>%6</td></tr>")
               .arg(i)
               .arg(cls, mode_name(a.mode), buf, dtype, size);
      if (a.mode != 1) read += a.nbytes;
      if (a.mode != 0) written += a.nbytes;
    }
    h += "</table><p class='k'>" + tr("%1 read, %2 written").arg(fmt_bytes((double)read), fmt_bytes((double)written)) +
         (timeline_ && !timeline_->memory_lanes().empty() ? tr(" · a buffer's id marks its life on the memory lane")
                                                          : QString()) +
         "</p>";
  }
  if (p && p->context)
    h += QString("<p><a href='source:%1'>%2</a> · <a href='graph:%1'>%3</a></p>")
             .arg(p->context)
             .arg(tr("source and machine code"), tr("codegen graph"));
  if (p) h += runs_html(k.program, event);
  body_->setHtml(h);
}

void RunPanel::show_program(int64_t context) {
  run_ = -1;
  if (!session_) return;
  const Trace& t = session_->ui();
  const ProgramRow* p = nullptr;
  for (const ProgramRow& x : t.programs())
    if (x.context == context) p = &x;
  if (!p) return show_hint(tr("This context compiled no kernel: the Code tab shows its steps' graphs as text."));
  QString h = "<h3>" + ansi_html(t.context(context).name_ansi) + "</h3><table>";
  h += row(tr("device"), esc(p->device));
  h += row(tr("global"), esc(p->global_size.empty() ? "-" : p->global_size));
  h += row(tr("local"), esc(p->local_size.empty() ? "-" : p->local_size));
  h += row(tr("FLOP"), p->ops >= 0 ? QString::number(p->ops) : tr("symbolic"));
  h += row(tr("memory"), p->mem >= 0 ? fmt_bytes((double)p->mem) : tr("symbolic"));
  if (p->lds >= 0) h += row(tr("loads"), fmt_bytes((double)p->lds));
  h += row(tr("codegen context"), QString("<a href='graph:%1'>%1</a>").arg(p->context));
  h += "</table>";
  h += runs_html(p->id, -1);
  body_->setHtml(h);
}

}  // namespace tv
