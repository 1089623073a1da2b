// The kernel-count assertions of the reference's test/null/test_schedule.py (check_schedule(t, allowed)), on the big
// SINK each assertion scheduled in the reference (tests/parity/schedule_count_goldens.txt, from
// gen_schedule_count_goldens.py; DEV=NULL as that file runs). Our create_linear_with_vars must give the reference's
// count (which is the asserted one except for the cases that assert a KernelCountException), and the reference's whole
// LINEAR (kernel ASTs, buffer args, memory plan; new_buffer numbers renumbered as in test_schedule_goldens).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "lib/helpers.h"
#include "lib/schedule/schedule.h"
#include "lib/uop/serialize.h"
#include "tests/parity/schedule_goldens.h"

using namespace tg;

namespace {

struct CountCase {
  int id = 0;
  std::string test;
  int nth = 0;
  int allowed = 0;
  std::string ref;  // the reference's count, or "error"
  bool filter = true;
  std::vector<std::pair<std::string, int64_t>> ctx;  // the scheduler's ContextVars when the check ran
  UOp big_sink;
  UOp linear;  // the reference's LINEAR (memory planned)
};

std::vector<CountCase> load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open golden file " + path);
  Context no_spec({{"SPEC", 0}});  // SPEC=2 tests the scheduler, not the decoding of the reference's graphs
  std::vector<CountCase> cs;
  std::vector<UOp> pool;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("+ ", 0) == 0) {
      pool.push_back(decode_node(line.substr(2), pool));
      continue;
    }
    if (line.rfind("case ", 0) == 0) {
      pool.clear();
      cs.emplace_back();
      size_t a = line.find(' ', 5), b = line.rfind(' ');
      cs.back().id = std::stoi(line.substr(5, a - 5));
      cs.back().test = line.substr(a + 1, b - a - 1);
      cs.back().nth = std::stoi(line.substr(b + 1));
    } else if (line.rfind("allowed ", 0) == 0) {
      char ref[32] = {0};
      int filter = 1;
      std::sscanf(line.c_str(), "allowed %d ref %31s filter %d", &cs.back().allowed, ref, &filter);
      cs.back().ref = ref;
      cs.back().filter = filter != 0;
    } else if (line.rfind("ctx", 0) == 0) {
      std::istringstream in(line.substr(3));
      std::string kv;
      while (in >> kv) {
        size_t e = kv.find('=');
        cs.back().ctx.emplace_back(kv.substr(0, e), std::stoll(kv.substr(e + 1)));
      }
    } else if (line.rfind("big_sink @", 0) == 0) {
      cs.back().big_sink = pool.at(std::stoul(line.substr(10)));
    } else if (line.rfind("linear @", 0) == 0) {
      cs.back().linear = pool.at(std::stoul(line.substr(8)));
    }
  }
  return cs;
}

const std::vector<CountCase>& cases() {
  static const std::vector<CountCase> c = load(TG_TEST_DATA "/schedule_count_goldens.txt");
  return c;
}

// multi-device graphs (sharded PARAMs, UNSHARD, MSELECT/MSTACK, ALLREDUCE, tuple devices) are out of scope: the
// scheduler ports one device only (schedule/multi.py as one device needs it, no allreduce.py)
bool multi_device(const UOp& sink) {
  for (const UOp& u : sink.toposort()) {
    Ops o = u.op();
    if (o == Ops::UNSHARD || o == Ops::MSELECT || o == Ops::MSTACK || o == Ops::ALLREDUCE) return true;
    if ((o == Ops::PARAM || o == Ops::BUFFER) && u.param_arg() && u.param_arg()->device.is_tuple()) return true;
  }
  return false;
}

int kernel_count(const UOp& linear, bool filter_sink) {
  int n = 0;
  for (const UOp& call : linear.src()) {
    if (filter_sink && call.src(0).op() != Ops::SINK) continue;
    Arg d = call.device();
    n += d.is_tuple() ? (int)d.size() : 1;
  }
  return n;
}

}  // namespace

TEST(ScheduleCounts, Loaded) { ASSERT_GE(cases().size(), 250u); }

// every check_schedule of test_schedule.py: our kernel count is the reference's
TEST(ScheduleCounts, KernelCounts) {
  int total = 0, ok = 0, errors = 0, asserted = 0, multi = 0, same_linear = 0;
  std::map<std::string, int> failed_tests;
  for (const auto& c : cases()) {
    if (c.ref == "error") continue;
    SCOPED_TRACE(c.test + " #" + std::to_string(c.nth));
    if (multi_device(c.big_sink)) {
      multi++;
      continue;
    }
    total++;
    asserted += std::stoi(c.ref) == c.allowed;
    std::vector<std::pair<ContextVar*, int64_t>> saved;
    for (const auto& [k, v] : c.ctx) {
      ContextVar* cv = ContextVar::find(k);
      ASSERT_NE(cv, nullptr) << k;
      saved.emplace_back(cv, cv->value());
      cv->set(v);
    }
    try {
      LinearWithVars lv = create_linear_with_vars(c.big_sink);
      int n = kernel_count(lv.linear, c.filter);
      if (c.linear && normalized(lv.linear, c.big_sink) == normalized(c.linear, c.big_sink))
        same_linear++;
      else
        ADD_FAILURE() << "LINEAR differs from the reference's";
      if (n == std::stoi(c.ref))
        ok++;
      else
        ADD_FAILURE() << "kernels: reference " << c.ref << " (asserted " << c.allowed << "), ours " << n;
    } catch (const std::exception& e) {
      errors++;
      ADD_FAILURE() << "error: " << e.what();
    }
    for (auto& [cv, v] : saved) cv->set(v);
  }
  std::printf(
      "[ counts ] %d/%d check_schedule cases give the reference's kernel count (%d errors; %d cases where the "
      "reference met the asserted count; %d multi-device cases out of scope)\n"
      "[ counts ] %d/%d give the reference's whole LINEAR (kernel ASTs, buffers, memory plan)\n",
      ok, total, errors, asserted, multi, same_linear, total);
  EXPECT_GE(total, 250);
}
