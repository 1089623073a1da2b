#include "gui/trace_model.h"

#include "gui/ansi_text.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>

namespace tv {

using namespace tg::viz;

namespace {
QString base_name(const std::string& file) { return QFileInfo(QString::fromStdString(file)).fileName(); }
QString ms(int64_t ns) { return ns > 0 ? QString::number(ns / 1e6, 'f', ns < 10'000'000 ? 3 : 1) : QString(); }
}  // namespace

TraceModel::TraceModel(QObject* parent) : QAbstractItemModel(parent) {}

void TraceModel::set_session(SessionPtr s) {
  beginResetModel();
  session_ = std::move(s);
  items_.clear(), roots_.clear(), ctx_item_.clear(), step_item_.clear(), matches_.clear(), ctx_matches_.clear();
  match_items_.clear();
  step_order_.clear(), hay_.clear();
  if (session_) {
    Trace& t = session_->ui();
    items_.reserve(t.contexts().size() + t.steps().size());
    for (const ContextRow& c : t.contexts()) {
      int ci = (int)items_.size();
      items_.push_back({Context, c.id, -1, (int)roots_.size(), {}});
      roots_.push_back(ci);
      ctx_item_[c.id] = ci;
      int64_t m = 0;
      for (int64_t sid : c.steps) {
        const StepRow& st = t.step(sid);
        m += st.n_matches;
        auto pit = step_item_.find(st.parent);
        int parent = st.parent && pit != step_item_.end() ? pit->second : ci;
        int si = (int)items_.size();
        items_.push_back(
            {Step, sid, parent, (int)items_[parent].children.size(), {}, st.n_matches == 0 && st.error.empty()});
        items_[parent].children.push_back(si);
        step_item_[sid] = si;
      }
      ctx_matches_[c.id] = m;
    }
    // the search text of every context and step (built with the session, off the UI thread)
    static const std::string none;
    hay_.assign(items_.size(), &none);
    for (size_t i = 0; i < items_.size(); i++)
      hay_[i] = items_[i].kind == Context ? &session_->context_hay(items_[i].id) : &session_->step_hay(items_[i].id);
    // pre-order of the steps, for up/down
    std::vector<int> st(roots_.rbegin(), roots_.rend());
    while (!st.empty()) {
      int i = st.back();
      st.pop_back();
      if (items_[i].kind == Step) step_order_.push_back(items_[i].id);
      for (size_t k = items_[i].children.size(); k-- > 0;)
        if (items_[items_[i].children[k]].kind != Match) st.push_back(items_[i].children[k]);
    }
  }
  endResetModel();
}

const std::vector<MatchRow>& TraceModel::matches_of(int64_t step) {
  auto it = matches_.find(step);
  if (it != matches_.end()) return it->second;
  try {
    return matches_[step] = session_->ui().matches(step);
  } catch (const std::exception& e) {  // a damaged row: no matches for this step, and the error is shown once
    emit load_failed(QString::fromStdString(e.what()));
    return matches_[step];
  }
}

size_t TraceModel::frames_of(int64_t step) {
  if (!session_) return 1;
  if (auto it = matches_.find(step); it != matches_.end()) return it->second.size() + 1;
  const StepRow& s = session_->ui().step(step);
  // rule errors are frames too (n_matches is bounded by the reader: the file cannot hold more)
  return s.error.empty() ? (size_t)s.n_matches + 1 : matches_of(step).size() + 1;
}

const MatchRow* TraceModel::match(int64_t step, size_t frame) {
  const auto& m = matches_of(step);
  return frame >= 1 && frame <= m.size() ? &m[frame - 1] : nullptr;
}

void TraceModel::load_matches(int ii) {
  Item& it = items_[ii];
  if (it.kind != Step || it.fetched) return;
  const auto& ms = matches_of(it.id);
  it.fetched = true;
  if (ms.empty()) return;
  QModelIndex parent = createIndex(it.row, 0, (quintptr)ii);
  int first = (int)items_[ii].children.size();
  std::vector<int>& by_ordinal = match_items_[it.id];
  by_ordinal.assign(ms.size(), -1);
  if (ms.size() <= group_above_) {
    beginInsertRows(parent, first, first + (int)ms.size() - 1);
    items_.reserve(items_.size() + ms.size());  // a step can hold 20,000 matches: no doubling
    items_[ii].children.reserve(items_[ii].children.size() + ms.size());
    for (size_t k = 0; k < ms.size(); k++) {
      int mi = (int)items_.size();
      items_.push_back({Match, (int64_t)k, ii, first + (int)k, {}});
      items_[ii].children.push_back(mi);
      by_ordinal[k] = mi;
    }
  } else {
    // a big step: one row per rule (in the order the rules first matched), its matches under it
    std::vector<int64_t> rules;
    std::unordered_map<int64_t, std::vector<size_t>> of_rule;
    for (size_t k = 0; k < ms.size(); k++) {
      auto [g, fresh] = of_rule.try_emplace(ms[k].rule);
      if (fresh) rules.push_back(ms[k].rule);
      g->second.push_back(k);
    }
    beginInsertRows(parent, first, first + (int)rules.size() - 1);
    items_.reserve(items_.size() + ms.size() + rules.size());
    for (size_t r = 0; r < rules.size(); r++) {
      int gi = (int)items_.size();
      items_.push_back({Group, rules[r], ii, first + (int)r, {}});
      items_[ii].children.push_back(gi);
      const std::vector<size_t>& ks = of_rule[rules[r]];
      items_[gi].children.reserve(ks.size());
      for (size_t j = 0; j < ks.size(); j++) {
        int mi = (int)items_.size();
        items_.push_back({Match, (int64_t)ks[j], gi, (int)j, {}});
        items_[gi].children.push_back(mi);
        by_ordinal[ks[j]] = mi;
      }
    }
  }
  static const std::string none;
  hay_.resize(items_.size(), &none);
  endInsertRows();
}

int TraceModel::step_item_of(int item) const {
  int p = items_[item].parent;
  return items_[item].kind == Match && p >= 0 && items_[p].kind == Group ? items_[p].parent : p;
}

int64_t TraceModel::match_rule(int item) const {
  const Item& it = items_[item];
  if (it.kind == Group) return it.id;
  auto m = matches_.find(items_[step_item_of(item)].id);
  return m == matches_.end() || it.id >= (int64_t)m->second.size() ? 0 : m->second[it.id].rule;
}

QModelIndex TraceModel::index_of(const Selection& s) {
  if (!session_) return {};
  if (s.step) {
    auto it = step_item_.find(s.step);
    if (it == step_item_.end()) return {};
    if (s.frame == 0) return createIndex(items_[it->second].row, 0, (quintptr)it->second);
    load_matches(it->second);
    auto mi = match_items_.find(s.step);
    if (mi == match_items_.end() || s.frame > mi->second.size() || mi->second[s.frame - 1] < 0) return {};
    int m = mi->second[s.frame - 1];
    return createIndex(items_[m].row, 0, (quintptr)m);
  }
  auto it = ctx_item_.find(s.context);
  return it == ctx_item_.end() ? QModelIndex() : createIndex(items_[it->second].row, 0, (quintptr)it->second);
}

Selection TraceModel::selection_of(const QModelIndex& i) const {
  if (!i.isValid() || !session_) return {};
  const Item& it = item(i);
  Trace& t = session_->ui();
  switch (it.kind) {
    case Context:
      return {it.id, 0, 0};
    case Step:
      return {t.step(it.id).context, it.id, 0};
    case Match: {
      const Item& st = items_[step_item_of((int)i.internalId())];
      return {t.step(st.id).context, st.id, (size_t)it.id + 1};
    }
    case Group: {  // its first match
      const Item& st = items_[it.parent];
      const Item& first = items_[it.children.front()];
      return {t.step(st.id).context, st.id, (size_t)first.id + 1};
    }
  }
  return {};
}

QModelIndex TraceModel::index(int row, int column, const QModelIndex& parent) const {
  if (row < 0 || column < 0 || column >= NumCols) return {};
  const std::vector<int>& kids = parent.isValid() ? item(parent).children : roots_;
  if (row >= (int)kids.size()) return {};
  return createIndex(row, column, (quintptr)kids[row]);
}

QModelIndex TraceModel::parent(const QModelIndex& child) const {
  if (!child.isValid()) return {};
  int p = item(child).parent;
  if (p < 0) return {};
  return createIndex(items_[p].row, 0, (quintptr)p);
}

int TraceModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return (int)roots_.size();
  if (parent.column() > 0) return 0;
  return (int)item(parent).children.size();
}

bool TraceModel::hasChildren(const QModelIndex& parent) const {
  if (!parent.isValid()) return !roots_.empty();
  const Item& it = item(parent);
  return !it.children.empty() || !it.fetched;
}

bool TraceModel::canFetchMore(const QModelIndex& parent) const { return parent.isValid() && !item(parent).fetched; }

void TraceModel::fetchMore(const QModelIndex& parent) {
  if (parent.isValid()) load_matches((int)parent.internalId());
}

QVariant TraceModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case NameCol:
      return tr("Context / step / match");
    case MatchesCol:
      return tr("Matches");
    case TimeCol:
      return tr("ms");
  }
  return {};
}

QVariant TraceModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !session_) return {};
  const Item& it = item(index);
  Trace& t = session_->ui();
  auto* self = const_cast<TraceModel*>(this);
  switch (role) {
    case KindRole:
      return (int)it.kind;
    case ContextRole:
      return (qlonglong)self->selection_of(index).context;
    case StepRole:
      return (qlonglong)self->selection_of(index).step;
    case FrameRole:
      return (qulonglong)self->selection_of(index).frame;
    default:
      break;
  }
  if (it.kind == Context) {
    const ContextRow& c = t.context(it.id);
    if (role == Qt::DisplayRole) {
      if (index.column() == NameCol) return QString::fromStdString(c.name);
      if (index.column() == MatchesCol) return (qlonglong)ctx_matches_.at(c.id);
      if (index.column() == TimeCol) return c.t_end ? ms(c.t_end - c.t_start) : tr("open");
    }
    if (role == SearchRole) return QString::fromStdString(c.name).toLower();
    if (role == AnsiDelegate::kAnsiRole && index.column() == NameCol && has_ansi(c.name_ansi))
      return QString::fromStdString(c.name_ansi);
    if (role == Qt::ToolTipRole)
      return tr("context %1: %2\n%3 steps, %4 matches")
          .arg(c.id)
          .arg(QString::fromStdString(c.name))
          .arg(c.steps.size())
          .arg(ctx_matches_.at(c.id));
    if (role == Qt::TextAlignmentRole && index.column() > 0) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  }
  if (it.kind == Step) {
    const StepRow& s = t.step(it.id);
    if (role == Qt::DisplayRole) {
      if (index.column() == NameCol) return QString::fromStdString(s.name) + (s.error.empty() ? "" : "  ⚠");
      if (index.column() == MatchesCol) return (qlonglong)s.n_matches;
      if (index.column() == TimeCol) return s.t_end ? ms(s.t_end - s.t_start) : tr("open");
    }
    if (role == Qt::ForegroundRole) {
      if (!s.error.empty()) return QBrush(QColor(0xf0, 0x70, 0x70));
      if (s.n_matches == 0) return QBrush(QColor(0x88, 0x8c, 0xa0));
    }
    if (role == SearchRole)
      return (QString::fromStdString(s.name) + "\n" + QString::fromStdString(s.file) + ":" + QString::number(s.line))
          .toLower();
    if (role == Qt::ToolTipRole)
      return tr("step %1: %2\n%3:%4\n%5 matches%6")
          .arg(s.id)
          .arg(QString::fromStdString(s.name))
          .arg(QString::fromStdString(s.file))
          .arg(s.line)
          .arg(s.n_matches)
          .arg(s.error.empty() ? QString() : "\nerror: " + QString::fromStdString(s.error));
    if (role == Qt::TextAlignmentRole && index.column() > 0) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  }
  if (it.kind == Group) {  // a rule's matches under a big step
    int64_t step = items_[it.parent].id;
    const RuleRow* r = session_->rule(it.id);
    if (role == RuleRole) return (qlonglong)it.id;
    if (role == Qt::DisplayRole) {
      if (index.column() == NameCol) {
        QString site = r ? base_name(r->file) + ":" + QString::number(r->line) : tr("rule %1").arg(it.id);
        return tr("%1  %2 (%3 matches)").arg(site, r ? QString::fromStdString(r->matcher) : QString()).arg(it.children.size());
      }
      if (index.column() == MatchesCol) return (qlonglong)it.children.size();
      if (index.column() == TimeCol) {
        int64_t ns = 0;
        const auto& ms = self->matches_of(step);
        for (int c : it.children) ns += ms[(size_t)items_[c].id].dur_ns;
        return QString::number(ns / 1e6, 'f', 3);
      }
      return {};
    }
    if (role == Qt::ForegroundRole) return QBrush(QColor(0xc8, 0xb0, 0xf0));
    if (role == Qt::ToolTipRole && r)
      return tr("%1 matches of %2:%3 in this step\n%4")
          .arg(it.children.size())
          .arg(QString::fromStdString(r->file))
          .arg(r->line)
          .arg(QString::fromStdString(r->source).left(400));
    if (role == Qt::TextAlignmentRole && index.column() > 0) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  }
  // a match
  int64_t step = items_[step_item_of((int)index.internalId())].id;
  const MatchRow& m = self->matches_of(step)[it.id];
  const RuleRow* r = session_->rule(m.rule);
  if (role == RuleRole) return (qlonglong)m.rule;
  if (role == Qt::DisplayRole) {
    if (index.column() == NameCol) {
      QString site = r ? base_name(r->file) + ":" + QString::number(r->line) : tr("rule %1").arg(m.rule);
      // the ops the match turned into one another (labels read without the graphs under them)
      auto op = [&](int64_t n) {
        try {
          std::string l = t.shallow_label(n);
          return QString::fromStdString(l.substr(0, l.find('\n')));
        } catch (const std::exception&) {
          return QString("?");
        }
      };
      QString change = m.is_error ? tr("error") : op(m.before) + "→" + op(m.after);
      return QString("#%1  %2  %3").arg(it.id + 1).arg(site, change);
    }
    if (index.column() == TimeCol) return QString::number(m.dur_ns / 1e6, 'f', 4);
    return {};
  }
  if (role == Qt::ForegroundRole) return QBrush(m.is_error ? QColor(0xf0, 0x70, 0x70) : QColor(0xa8, 0xc8, 0xf0));
  if (role == SearchRole && r)
    return (QString::fromStdString(r->file) + ":" + QString::number(r->line) + "\n" +
            QString::fromStdString(r->matcher) + "\n" + QString::fromStdString(r->source))
        .toLower();
  if (role == Qt::ToolTipRole && r)
    return QString("%1\n%2:%3\n%4")
        .arg(data(index.siblingAtColumn(NameCol), Qt::DisplayRole).toString())
        .arg(QString::fromStdString(r->file))
        .arg(r->line)
        .arg(QString::fromStdString(r->source).left(400));
  if (role == Qt::TextAlignmentRole && index.column() > 0) return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

// ---------------------------------------------------------------------------------------------------------------

TraceFilter::TraceFilter(QObject* parent) : QSortFilterProxyModel(parent) {
  setRecursiveFilteringEnabled(true);
  setDynamicSortFilter(false);
}

void TraceFilter::set_text(const QString& text) {
  QString t = text.trimmed().toLower();
  // a narrower text only hides rows; anything else may bring back a hundred thousand, which the view takes one row
  // insertion at a time (a second on a big trace): a reset is cheap, the caller restores expansion and selection
  bool narrower = !text_.isEmpty() && t.contains(text_);
  if (narrower) {
    text_ = t;
    rule_steps_.clear(), rules_.clear();
    match_rules();
    invalidateFilter();
  } else {
    beginResetModel();
    text_ = t;
    rule_steps_.clear(), rules_.clear();
    match_rules();
    endResetModel();
  }
}

void TraceFilter::match_rules() {
  needle_ = text_.toStdString();
  text_rules_.clear();
  if (needle_.empty()) return;
  if (auto* m = static_cast<TraceModel*>(sourceModel()))
    for (const auto& [id, hay] : m->rule_hay())
      if (hay.find(needle_) != std::string::npos) text_rules_.insert(id);
}

void TraceFilter::set_rule_hits(const QString& text, std::unordered_set<int64_t> steps,
                                std::unordered_set<int64_t> rules) {
  if (text.trimmed().toLower() != text_) return;  // an old query
  rule_steps_ = std::move(steps), rules_ = std::move(rules);
  invalidateFilter();
}

// the same decisions as the model's SearchRole texts, read from the precomputed lower-case texts
bool TraceFilter::filterAcceptsRow(int row, const QModelIndex& parent) const {
  if (text_.isEmpty()) return true;
  auto* m = static_cast<TraceModel*>(sourceModel());
  QModelIndex i = m->index(row, 0, parent);
  if (!i.isValid()) return false;
  int item = (int)i.internalId();
  TraceModel::ItemInfo info = m->item_info(item);
  switch (info.kind) {
    case TraceModel::Context:
      return m->hay(item).find(needle_) != std::string::npos;
    case TraceModel::Step:
      return m->hay(item).find(needle_) != std::string::npos || rule_steps_.count(info.id);
    case TraceModel::Match: {
      // a match is shown where its rule's text matches, wherever its rule is searched for, and under a step whose
      // name matched
      int64_t rule = m->match_rule(item);
      if (text_rules_.count(rule) || rules_.count(rule)) return true;
      return m->hay(m->step_item_of(item)).find(needle_) != std::string::npos;
    }
    case TraceModel::Group: {
      int64_t rule = m->match_rule(item);
      if (text_rules_.count(rule) || rules_.count(rule)) return true;
      return m->hay(info.parent).find(needle_) != std::string::npos;
    }
  }
  return false;
}

}  // namespace tv
