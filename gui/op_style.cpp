#include "gui/op_style.h"

#include "viz/reader/argfmt.h"

#include <cmath>
#include <string>
#include <unordered_map>

namespace tv {

namespace {
constexpr std::string_view kAlu[] = {"EXP2",     "LOG2",  "SIN",    "SQRT", "RECIPROCAL", "NEG",  "TRUNC", "ADD",
                                     "MUL",      "SHL",   "SHR",    "CDIV", "MAX",        "CMOD", "CMPLT", "CMPNE",
                                     "CMPEQ",    "XOR",   "OR",     "AND",  "SUB",        "FDIV", "POW",   "FLOORDIV",
                                     "FLOORMOD", "WHERE", "MULACC", "CAST", "BITCAST"};
constexpr std::string_view kMovement[] = {"RESHAPE", "PERMUTE", "EXPAND", "PAD", "FLIP", "SHRINK"};

const std::unordered_map<std::string_view, QRgb>& palette() {
  static const std::unordered_map<std::string_view, QRgb> p = {
      {"LOAD", 0xffc0c0},      {"STORE", 0x87ceeb},           {"CONST", 0xe0e0e0},  {"REDUCE", 0xff5b5b},
      {"RANGE", 0xc8a0e0},     {"BARRIER", 0xff8080},         {"IF", 0xc8b0c0},     {"SPECIAL", 0xc0c0ff},
      {"INDEX", 0xcef9b7},     {"STACK", 0xd8f9e4},           {"WMMA", 0xefefc0},   {"UNSHARD", 0xf6ccff},
      {"INS", 0xeec4ff},       {"THREEFRY", 0xffff80},        {"BUFFER", 0xb0bdff}, {"GETADDR", 0x9db1f0},
      {"COPY", 0xa040a0},      {"CUSTOM_FUNCTION", 0xbf71b6}, {"CALL", 0x00b7c8},   {"FUNCTION", 0xc07788},
      {"PARAM", 0x14686f},     {"SOURCE", 0xc0c0c0},          {"BINARY", 0x404040}, {"LINEAR", 0x7df4ff},
      {"ALLREDUCE", 0xff40a0}, {"MSELECT", 0xd040a0},         {"MSTACK", 0xd040a0}, {"CONTIGUOUS", 0xffc14d},
      {"STAGE", 0xac640d},     {"REWRITE_ERROR", 0xff6060},   {"AFTER", 0x8a7866},  {"END", 0x524c46},
      {"SINK", 0xb8c4d8},
  };
  return p;
}
}  // namespace

bool is_alu_op(std::string_view op) {
  for (auto a : kAlu)
    if (a == op) return true;
  return false;
}
bool is_movement_op(std::string_view op) {
  for (auto m : kMovement)
    if (m == op) return true;
  return false;
}

QColor op_color(std::string_view op) {
  auto it = palette().find(op);
  if (it != palette().end()) return QColor::fromRgb(it->second);
  if (is_movement_op(op)) return QColor::fromRgb(0xd8f9e4);
  if (op == "CMPLT" || op == "CMPNE" || op == "CMPEQ" || op == "AND" || op == "OR" || op == "XOR")
    return QColor::fromRgb(0xf3f0b0);  // comparisons and logic: a shade off the ALU yellow, to tell bools apart
  if (op == "WHERE") return QColor::fromRgb(0xf5e6a8);
  if (is_alu_op(op)) return QColor::fromRgb(0xffffc0);
  return QColor::fromRgb(0xffffff);
}

}  // namespace tv

#include <QFontMetricsF>

namespace tv {

QFont graph_font(bool bold) {
  QFont f(QStringLiteral("DejaVu Sans"));
  f.setStyleHint(QFont::SansSerif);
  f.setPointSizeF(8.5);
  f.setBold(bold);
  return f;
}

QSizeF label_size(const std::vector<std::string>& lines) {
  thread_local QFontMetricsF fm(graph_font(false)), fb(graph_font(true));
  double w = 0;
  for (size_t i = 0; i < lines.size(); i++)
    w = std::max(w, (i ? fm : fb).horizontalAdvance(QString::fromStdString(tg::viz::strip_ansi(lines[i]))));
  double h = fm.height() * (double)std::max<size_t>(lines.size(), 1);
  return {std::ceil(w + 2 * kNodePadX), std::ceil(h + 2 * kNodePadY)};
}

}  // namespace tv
