#include "lib/codegen/opt/opt.h"

namespace tg {

ContextVar NOOPT("NOOPT", 0, 0, 1), NOLOCALS("NOLOCALS", 0, 0, 1), BEAM("BEAM", 0, 0, INT64_MAX), USE_TC("TC", 1, 0, 2),
    TC_SELECT("TC_SELECT", -1, -1, INT64_MAX), TC_OPT("TC_OPT", 0, 0, 2), IMAGE("IMAGE", 0, 0, 2),
    TRANSCENDENTAL("TRANSCENDENTAL", 1, 0, 2), DISABLE_FAST_IDIV("DISABLE_FAST_IDIV", 1, 0, 1), NO_COLOR("NO_COLOR", 0, 0, 1);

static const char* kNames[] = {"?",     "TC",       "UPCAST",   "UNROLL", "LOCAL", "THREAD",
                               "GROUP", "GROUPTOP", "NOLOCALS", "PADTO",  "SWAP"};

const char* optops_name(OptOps o) { return kNames[(int)o]; }
std::optional<OptOps> optops_from_name(const std::string& name) {
  for (int i = 1; i <= 10; i++)
    if (name == kNames[i]) return (OptOps)i;
  return std::nullopt;
}

Arg Opt::to_arg() const { return Arg::tup(Arg(optops_name(op)), axis ? Arg((long long)*axis) : Arg(), arg); }
Opt Opt::from_arg(const Arg& a) {
  auto op = optops_from_name(a[0].as_str());
  if (!op) throw Error("unknown OptOps " + a[0].as_str());
  return Opt(*op, a[1].is_none() ? std::nullopt : std::optional<int64_t>((int64_t)a[1].as_int()), a[2]);
}
std::string Opt::repr() const {
  return std::string("Opt(op=OptOps.") + optops_name(op) + ", axis=" + (axis ? std::to_string(*axis) : "None") +
         ", arg=" + arg.repr() + ")";
}
std::string opts_repr(const std::vector<Opt>& opts) {
  std::string r = "(";
  for (size_t i = 0; i < opts.size(); i++) r += (i ? ", " : "") + opts[i].repr();
  return r + (opts.size() == 1 ? ",)" : ")");
}

std::string colored(const std::string& st, const std::string& color) {
  if (NO_COLOR.value() || color.empty()) return st;
  static const char* colors[] = {"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"};
  std::string lower;
  bool upper = true;
  for (char c : color) {
    lower += (char)std::tolower((unsigned char)c);
    if (std::islower((unsigned char)c)) upper = false;
  }
  int idx = 0;
  for (int i = 0; i < 8; i++)
    if (lower == colors[i]) idx = i;
  return "\x1b[" + std::to_string(60 * upper + 30 + idx) + "m" + st + "\x1b[0m";
}

}  // namespace tg
