#include "gui/stats_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include "gui/async.h"

namespace tv {

using namespace tg::viz;

namespace {
QString first_line(const std::string& s) { return QString::fromStdString(s.substr(0, s.find('\n'))); }
QString site_of(const RuleRow* r) {
  return r ? QFileInfo(QString::fromStdString(r->file)).fileName() + ":" + QString::number(r->line) : QString("?");
}

class StatsFilter : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;
  QString text;
  bool unmatched = false;
  void refresh() { invalidateFilter(); }

 protected:
  bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
    auto* m = static_cast<StatsModel*>(sourceModel());
    const RuleStatRow& r = m->rows()[row];
    if (unmatched && !(r.attempts > 0 && r.matches == 0)) return false;
    if (text.isEmpty()) return true;
    for (int c : {StatsModel::Site, StatsModel::Matcher, StatsModel::Source})
      if (m->data(m->index(row, c, parent), Qt::ToolTipRole).toString().contains(text, Qt::CaseInsensitive))
        return true;
    return false;
  }
};
}  // namespace

// ---------------------------------------------------------------------------------------------------------------

void StatsModel::set_rows(SessionPtr s, std::vector<RuleStatRow> rows) {
  beginResetModel();
  session_ = std::move(s);
  rows_ = std::move(rows);
  endResetModel();
}

QVariant StatsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return {};
  static const char* names[] = {"Rule",       "Matcher", "Matches", "Attempts", "Early rejects",
                                "Candidates", "Match %", "Excl ms", "Incl ms",  "Source"};
  static const char* tips[] = {
      "Where the rule is written (file:line)",
      "The PatternMatcher the rule belongs to",
      "Times the rule returned a replacement",
      "Times the rule's pattern was tried on a node (after the early-reject filter)",
      "Candidates skipped by the early-reject filter (the node lacked an op the pattern needs)",
      "Nodes the rule was a candidate for: attempts + early rejects",
      "Matches per attempt",
      "Time in the rule itself (pattern + callback), without nested rewrites",
      "Time including rewrites the rule started (nested graph_rewrite calls)",
      "The rule's source text (first line; hover for all of it)"};
  if (role == Qt::DisplayRole) return tr(names[section]);
  if (role == Qt::ToolTipRole) return tr(tips[section]);
  return {};
}

QVariant StatsModel::data(const QModelIndex& i, int role) const {
  if (!i.isValid() || i.row() >= (int)rows_.size()) return {};
  const RuleStatRow& r = rows_[i.row()];
  const RuleRow* rule = session_ ? session_->rule(r.rule) : nullptr;
  double rate = r.attempts ? 100.0 * r.matches / r.attempts : 0;
  if (role == RuleIdRole) return (qlonglong)r.rule;
  if (role == SortRole) {
    switch (i.column()) {
      case Site:
        return rule ? QString::fromStdString(rule->file) + QString("%1").arg(rule->line, 6, 10, QChar('0')) : "";
      case Matches:
        return (qulonglong)r.matches;
      case Attempts:
        return (qulonglong)r.attempts;
      case EarlyRejects:
        return (qulonglong)r.early_rejects;
      case Candidates:
        return (qulonglong)r.candidates;
      case Rate:
        return rate;
      case ExclMs:
        return (qlonglong)r.excl_ns;
      case InclMs:
        return (qlonglong)r.incl_ns;
      default:
        return data(i, Qt::DisplayRole);
    }
  }
  if (role == Qt::DisplayRole) {
    switch (i.column()) {
      case Site:
        return site_of(rule);
      case Matcher:
        return rule ? QString::fromStdString(rule->matcher) : QString();
      case Matches:
        return (qulonglong)r.matches;
      case Attempts:
        return (qulonglong)r.attempts;
      case EarlyRejects:
        return (qulonglong)r.early_rejects;
      case Candidates:
        return (qulonglong)r.candidates;
      case Rate:
        return r.attempts ? QString::number(rate, 'f', 1) : QString("–");
      case ExclMs:
        return QString::number(r.excl_ns / 1e6, 'f', 3);
      case InclMs:
        return QString::number(r.incl_ns / 1e6, 'f', 3);
      case Source:
        return rule ? first_line(rule->source) : QString();
    }
  }
  if (role == Qt::ToolTipRole && rule) {
    switch (i.column()) {
      case Site:
        return QString::fromStdString(rule->file) + ":" + QString::number(rule->line);
      case Matcher:
        return QString::fromStdString(rule->matcher);
      case Source:
        return QString::fromStdString(rule->source);
      default:
        return {};
    }
  }
  if (role == Qt::TextAlignmentRole && i.column() >= Matches && i.column() <= InclMs)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && r.attempts > 0 && r.matches == 0) return QColor(0xe0, 0xa0, 0x60);
  return {};
}

// ---------------------------------------------------------------------------------------------------------------

void RuleMatchesModel::set_rows(SessionPtr s, std::vector<MatchRow> rows) {
  beginResetModel();
  session_ = std::move(s);
  rows_ = std::move(rows);
  endResetModel();
}

QVariant RuleMatchesModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Step", "Step name", "Context", "Match", "µs", "Before → after"};
  return tr(names[section]);
}

QVariant RuleMatchesModel::data(const QModelIndex& i, int role) const {
  if (!i.isValid() || i.row() >= (int)rows_.size() || !session_) return {};
  const MatchRow& m = rows_[i.row()];
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  Trace& t = session_->ui();
  try {
    switch (i.column()) {
      case Step:
        return (qlonglong)m.step;
      case StepName:
        return QString::fromStdString(t.step(m.step).name);
      case Context:
        return QString::fromStdString(t.context(t.step(m.step).context).name);
      case MatchNo:
        return (qlonglong)m.ordinal + 1;
      case Dur:
        return QString::number(m.dur_ns / 1e3, 'f', 2);
      case Change: {  // read lazily, only for the rows on screen
        auto one = [&](int64_t n) {
          std::string l = t.shallow_label(n);
          for (char& c : l)
            if (c == '\n') c = ' ';
          return QString::fromStdString(l);
        };
        return one(m.before) + "  →  " + one(m.after);
      }
    }
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

// ---------------------------------------------------------------------------------------------------------------

StatsView::StatsView(QWidget* parent) : QWidget(parent) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout();
  scope_box_ = new QComboBox(this);
  scope_box_->addItems({tr("Whole trace"), tr("Selected context"), tr("Selected step")});
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter rules by file:line, matcher or source"));
  filter_->setClearButtonEnabled(true);
  unmatched_ = new QCheckBox(tr("Attempted, never matched"), this);
  summary_ = new QLabel(this);
  bar->addWidget(new QLabel(tr("Scope:"), this));
  bar->addWidget(scope_box_);
  bar->addWidget(filter_, 1);
  bar->addWidget(unmatched_);
  bar->addWidget(summary_);
  lay->addLayout(bar);

  model_ = new StatsModel(this);
  auto* filter = new StatsFilter(this);
  proxy_ = filter;
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(StatsModel::SortRole);
  table_ = new QTableView(this);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(StatsModel::InclMs, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(20);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setWordWrap(false);
  const int widths[] = {150, 130, 70, 70, 90, 80, 65, 70, 70};
  for (int c = 0; c < 9; c++) table_->setColumnWidth(c, widths[c]);

  matches_ = new RuleMatchesModel(this);
  match_table_ = new QTableView(this);
  match_table_->setModel(matches_);
  match_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  match_table_->verticalHeader()->hide();
  match_table_->verticalHeader()->setDefaultSectionSize(20);
  match_table_->horizontalHeader()->setStretchLastSection(true);
  match_table_->setWordWrap(false);
  rule_label_ =
      new QLabel(tr("Select a rule to list every match of it; double-click a match to open its frame."), this);

  auto* split = split_ = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  auto* lower = new QWidget(split);
  auto* ll = new QVBoxLayout(lower);
  ll->setContentsMargins(0, 4, 0, 0);
  ll->addWidget(rule_label_);
  ll->addWidget(match_table_, 1);
  split->addWidget(lower);
  delta_box_ = new QWidget(split);
  auto* dl = new QVBoxLayout(delta_box_);
  dl->setContentsMargins(0, 4, 0, 0);
  delta_label_ = new QLabel(delta_box_);
  delta_table_ = new QTableView(delta_box_);
  delta_table_->setModel(new QStandardItemModel(delta_table_));
  delta_table_->setSortingEnabled(true);
  delta_table_->verticalHeader()->hide();
  delta_table_->verticalHeader()->setDefaultSectionSize(20);
  delta_table_->horizontalHeader()->setStretchLastSection(true);
  delta_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  dl->addWidget(delta_label_);
  dl->addWidget(delta_table_, 1);
  split->addWidget(delta_box_);
  delta_box_->hide();
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setStretchFactor(2, 2);
  lay->addWidget(split, 1);

  connect(scope_box_, &QComboBox::currentIndexChanged, this, [this](int i) {
    scope_ = (Scope)i;
    reload();
  });
  connect(filter_, &QLineEdit::textChanged, this, [this] { refilter(); });
  connect(unmatched_, &QCheckBox::toggled, this, [this] { refilter(); });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (cur.isValid()) show_rule(cur.data(StatsModel::RuleIdRole).toLongLong());
  });
  connect(match_table_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    if (!i.isValid() || !session_) return;
    const MatchRow& m = matches_->rows()[i.row()];
    try {
      const StepRow& st = session_->ui().step(m.step);
      emit jump({st.context, m.step, (size_t)m.ordinal + 1});
    } catch (const std::exception& e) {
      emit load_failed(QString::fromStdString(e.what()));
    }
  });
}

void StatsView::set_session(SessionPtr s) {
  session_ = std::move(s);
  sel_ = {};
  shown_ctx_ = shown_step_ = -1;
  shown_rule_ = 0;
  matches_->set_rows(session_, {});
  reload();
}

void StatsView::set_selection(const Selection& s) {
  sel_ = s;
  if ((scope_ == ThisContext && s.context != shown_ctx_) || (scope_ == ThisStep && s.step != shown_step_)) reload();
}

void StatsView::set_scope(Scope s) { scope_box_->setCurrentIndex((int)s); }

void StatsView::refilter() {
  auto* f = static_cast<StatsFilter*>(proxy_);
  f->text = filter_->text().trimmed();
  f->unmatched = unmatched_->isChecked();
  f->refresh();
  summary_->setText(tr("%1 of %2 rules").arg(proxy_->rowCount()).arg(model_->rowCount()));
}

void StatsView::reload() {
  if (!session_) {
    model_->set_rows(nullptr, {});
    return;
  }
  int64_t step = scope_ == ThisStep ? sel_.step : 0, ctx = scope_ == ThisContext ? sel_.context : 0;
  shown_ctx_ = ctx, shown_step_ = step;
  if ((scope_ == ThisStep && !step) || (scope_ == ThisContext && !ctx)) {
    model_->set_rows(session_, {});
    summary_->setText(scope_ == ThisStep ? tr("select a step") : tr("select a context"));
    return;
  }
  uint64_t gen = ++gen_;
  pending_++;
  summary_->setText(tr("loading…"));
  SessionPtr s = session_;
  run_async<std::vector<RuleStatRow>>(
      this, [s, step, ctx] { return s->with_queries([&](Trace& t) { return t.rule_stats(step, ctx); }); },
      [this, s, gen](std::vector<RuleStatRow> rows, QString err) {
        pending_--;
        if (gen != gen_ || s != session_) return;
        if (!err.isEmpty()) {
          summary_->setText(err);
          emit load_failed(err);
          return;
        }
        model_->set_rows(s, std::move(rows));
        refilter();
        if (want_rule_) select_rule(want_rule_);
      });
}

void StatsView::select_rule(int64_t rule) {
  want_rule_ = rule;
  for (int r = 0; r < proxy_->rowCount(); r++) {
    QModelIndex i = proxy_->index(r, 0);
    if (i.data(StatsModel::RuleIdRole).toLongLong() == rule) {
      want_rule_ = 0;
      table_->setCurrentIndex(i);
      table_->scrollTo(i);
      return;
    }
  }
}

void StatsView::show_rule(int64_t rule) {
  if (!session_) return;
  shown_rule_ = rule;
  emit rule_shown(rule);
  const RuleRow* r = session_->rule(rule);
  rule_label_->setText(
      tr("Matches of %1 (loading…)")
          .arg(r ? QString::fromStdString(r->file) + ":" + QString::number(r->line) : QString::number(rule)));
  uint64_t gen = ++rule_gen_;
  pending_++;
  SessionPtr s = session_;
  run_async<std::vector<MatchRow>>(
      this, [s, rule] { return s->with_queries([&](Trace& t) { return t.matches_of_rule(rule); }); },
      [this, s, gen, r](std::vector<MatchRow> rows, QString err) {
        pending_--;
        if (gen != rule_gen_ || s != session_) return;
        QString site = r ? QString::fromStdString(r->file) + ":" + QString::number(r->line) : QString();
        rule_label_->setText(err.isEmpty()
                                 ? tr("%1 matches of %2 across the trace (double-click one to open its frame)")
                                       .arg(rows.size())
                                       .arg(site)
                                 : err);
        if (!err.isEmpty()) emit load_failed(err);
        matches_->set_rows(s, std::move(rows));
        for (int c : {0, 3, 4}) match_table_->setColumnWidth(c, 70);
        match_table_->setColumnWidth(1, 160);
        match_table_->setColumnWidth(2, 160);
      });
}

}  // namespace tv

namespace tv {

void StatsView::set_compare(const tg::viz::TraceDiff* d) {
  auto* m = static_cast<QStandardItemModel*>(delta_table_->model());
  m->clear();
  delta_box_->setVisible(d != nullptr);
  if (!d) return;
  m->setHorizontalHeaderLabels({tr("rule"), tr("matches in A"), tr("in B"), tr("B − A")});
  for (const auto& r : d->rules) {
    QList<QStandardItem*> row;
    row << new QStandardItem(QString::fromStdString(r.rule));
    for (int64_t v : {r.a, r.b, r.b - r.a}) {
      auto* it = new QStandardItem();
      it->setData((qlonglong)v, Qt::DisplayRole);
      it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      row << it;
    }
    m->appendRow(row);
  }
  delta_label_->setText(
      d->rules.empty()
          ? tr("Compared with B: every rule matched as often in both traces.")
          : tr("Compared with B: %n rule(s) whose match counts differ, biggest difference first%1", nullptr,
               (int)d->rules.size())
                .arg(d->compared_rules ? QString() : tr(" (different producers: their rules are their own)")));
  for (int c = 0; c < 3; c++) delta_table_->setColumnWidth(c, c == 0 ? 200 : 100);
}

}  // namespace tv
