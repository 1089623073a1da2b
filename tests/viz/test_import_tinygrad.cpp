// tinyviz-cli import-tinygrad: the reference's own VIZ pickles (tests/data/tinygrad_*.pkl, recorded by
// tests/parity/gen_import_fixtures.py) become traces that pass `verify` and hold what the generator counted with the
// reference's classes; args come out in the engine's own encoding; pickles that name os.system, builtins.eval or a
// class the importer does not know are refused, naming it, and never run; truncated and mutated pickles give errors.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "lib/uop/serialize.h"
#include "tests/support/sql.h"
#include "viz/cli/cli.h"
#include "viz/reader/diff.h"
#include "viz/import/import_tinygrad.h"
#include "viz/import/pickle.h"
#include "viz/reader/reader.h"
#include "viz/reader/replay.h"

using namespace tg::viz;
using tg::test::sql_exec;
using tg::test::sql_int;

namespace {

std::string data(const std::string& name) { return std::string(TG_TEST_DATA) + "/" + name; }
std::string tmp_path(const std::string& name) {
  return std::string(::testing::TempDir()) + "tg_import_" + name + "_" + std::to_string(getpid());
}
std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
void spit(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}
// tests/data/tinygrad_import_counts.txt: fixture -> key -> value
std::map<std::string, std::map<std::string, int64_t>> counts() {
  std::map<std::string, std::map<std::string, int64_t>> r;
  std::ifstream f(data("tinygrad_import_counts.txt"));
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string fixture, key;
    int64_t v;
    ss >> fixture >> key >> v;
    r[fixture][key] = v;
  }
  return r;
}
int cli(std::vector<std::string> args) {
  std::vector<char*> argv;
  static std::string prog = "tinyviz-cli";
  argv.push_back(prog.data());
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return cli_main((int)argv.size() - 1, argv.data());
}
ImportSummary import(const std::string& rewrites, const std::string& profile, const std::string& out) {
  ImportOptions o;
  o.rewrites_path = rewrites, o.profile_path = profile, o.out_path = out;
  return import_tinygrad(o);
}

// a protocol 2 pickle calling module.name(arg) through GLOBAL + REDUCE (what a hostile pickle does)
std::string reduce_pickle(const std::string& module, const std::string& name, const std::string& arg) {
  std::string p = "\x80\x02";
  p += "c" + module + "\n" + name + "\n";
  p += "X";
  uint32_t n = (uint32_t)arg.size();
  for (int i = 0; i < 4; i++) p += (char)(n >> (8 * i));
  p += arg + "\x85R.";
  return p;
}
// the same through STACK_GLOBAL (protocol 4, what current Pythons write)
std::string stack_global_pickle(const std::string& module, const std::string& name, const std::string& arg) {
  std::string p = "\x80\x04";
  auto str = [&](const std::string& s) {
    p += '\x8c';
    p += (char)s.size();
    p += s;
  };
  str(module), str(name);
  p += '\x93';
  str(arg);
  p += "\x85R.";
  return p;
}

TEST(ImportTinygrad, FixturesMatchTheReferencesCounts) {
  auto c = counts();
  ASSERT_TRUE(c.count("tinygrad_small") && c.count("tinygrad_hcq2")) << "no tests/data/tinygrad_import_counts.txt";
  struct Case {
    const char* fixture;
    std::string profile;
  };
  for (const Case& k : {Case{"tinygrad_small", data("tinygrad_small.profile.pkl")},
                        Case{"tinygrad_hcq2", data("tinygrad_hcq2.profile.pkl")}}) {
    SCOPED_TRACE(k.fixture);
    auto& rw = c["tinygrad_small"];  // both import the small program's rewrites
    auto& pf = c[k.fixture];
    std::string out = tmp_path(std::string(k.fixture) + ".trace.db");
    ImportSummary s = import(data("tinygrad_small.rewrites.pkl"), k.profile, out);
    auto t = Trace::open(out);
    EXPECT_EQ(t->contexts().size(), (size_t)rw["contexts"]);
    EXPECT_EQ(t->steps().size(), (size_t)rw["steps"]);
    int64_t errors = sql_int(out, "SELECT COUNT(*) FROM rule_errors");
    EXPECT_EQ(errors, rw["rule_errors"]);
    EXPECT_EQ((int64_t)t->match_count() + errors, rw["matches"]);
    EXPECT_EQ((int64_t)(t->uop_count() - s.replay_uops), rw["uops"]);
    EXPECT_EQ((int64_t)s.uop_records, rw["uop_records"]);
    EXPECT_EQ((int64_t)t->programs().size(), rw["programs"]);
    EXPECT_EQ((int64_t)t->mem_events().size(), pf["profile_alloc"] + pf["profile_free"]);
    EXPECT_EQ((int64_t)t->markers().size(), pf["profile_markers"]);
    EXPECT_EQ((int64_t)t->devices().size(), pf["profile_devices"]);
    // USER ranges, and one "<DEV> Graph" span per graph
    EXPECT_EQ((int64_t)t->ranges().size(), pf["profile_user_ranges"] + pf["profile_graphs"]);
    // runs: the kernel and copy ranges, the graphs' entries, and the exec points of devices without either
    EXPECT_EQ((int64_t)t->kernel_events().size(),
              pf["profile_device_ranges"] + pf["profile_graph_entries"] + pf["profile_exec_untimed"]);
    // a buffer's size comes from its alloc, wherever the pickle has it
    EXPECT_EQ(sql_int(out, "SELECT COUNT(*) FROM mem_events WHERE kind=1 AND nbytes=0"), 0);
    auto meta = t->meta();
    EXPECT_EQ(meta["producer"], kImportedProducer);
    EXPECT_NE(meta["producer"], "tinygrad-cpp");
    // every step that finished reproduces its output root
    size_t replayed = 0;
    for (const StepRow& st : t->steps()) {
      if (!st.output_root) continue;
      StepReplay r(*t, st.id);
      EXPECT_TRUE(r.reproduces_output()) << "step " << st.id << " " << st.name;
      replayed++;
    }
    EXPECT_EQ((int64_t)replayed, rw["steps"] - rw["rule_errors"]);
    EXPECT_EQ(cli({"verify", out}), 0);
    EXPECT_EQ(cli({"verify", out, "--full"}), 0);
    std::remove(out.c_str());
  }
}

TEST(ImportTinygrad, ArgsAreInTheEnginesOwnEncoding) {
  std::string out = tmp_path("encoding.trace.db");
  import(data("tinygrad_small.rewrites.pkl"), "", out);
  auto t = Trace::open(out);
  std::set<std::string> dtypes;
  for (tg::DType d : tg::dtypes::every()) dtypes.insert(d.repr().substr(7));
  size_t checked = 0, reprs = 0, params = 0;
  for (int64_t id = 1; id <= (int64_t)t->uop_count(); id++) {
    const Node& n = t->node(id);
    EXPECT_TRUE(dtypes.count(t->dtype_name(n.dtype))) << t->dtype_name(n.dtype);
    for (int64_t s : {n.arg, n.tag}) {
      if (!s) continue;
      const std::string& enc = t->str(s);
      if (enc[0] == 'R') {  // a record the engine also stores by repr (ProgramInfo), or a kernel's binary
        EXPECT_TRUE(n.op_name == std::string_view("PROGRAM") || n.op_name == std::string_view("BINARY")) << n.op_name;
        reprs++;
        continue;
      }
      // the engine reads the arg and writes it back unchanged: what the port's writer stores for the same arg
      EXPECT_EQ(tg::encode_arg(tg::decode_arg(enc)), enc);
      checked++;
      params += n.op_name == std::string_view("PARAM");
    }
  }
  EXPECT_GT(checked, 300u);
  EXPECT_GT(params, 0u);
  EXPECT_GT(reprs, 0u);
  // a buffer PARAM of the reference reads as the engine writes it
  EXPECT_GT(
      sql_int(out, "SELECT COUNT(*) FROM uops_view WHERE op='PARAM' AND arg='P(i0,dfloat ,N,N,N,AGLOBAL ,N,s3:CPU,F)'"),
      0);
  std::remove(out.c_str());
}

TEST(ImportTinygrad, RefusesGlobalsOutsideTheAllowList) {
  std::string marker = tmp_path("executed");
  std::remove(marker.c_str());
  std::string cmd = "touch " + marker;
  struct Case {
    std::string bytes, names;
  };
  std::vector<Case> cases = {
      {reduce_pickle("os", "system", cmd), "os.system"},
      {stack_global_pickle("os", "system", cmd), "os.system"},
      {stack_global_pickle("builtins", "eval", "__import__('os').system('" + cmd + "')"), "builtins.eval"},
      {reduce_pickle("subprocess", "getoutput", cmd), "subprocess.getoutput"},
      {stack_global_pickle("tinygrad.tensor", "Tensor", "x"),
       "tinygrad.tensor.Tensor"},  // a tinygrad class, not a record
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.names);
    std::string pkl = tmp_path("hostile.pkl"), out = tmp_path("hostile.trace.db");
    spit(pkl, c.bytes);
    try {
      import(pkl, "", out);
      ADD_FAILURE() << "imported";
    } catch (const tg::Error& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("refused global " + c.names), std::string::npos) << m;
      EXPECT_NE(m.find(pkl), std::string::npos) << m;      // the file
      EXPECT_NE(m.find("byte "), std::string::npos) << m;  // and where
    }
    // the same through the command: exit status 2, the class named on stderr, no trace left behind
    std::string err = tmp_path("stderr.txt");
    std::string run = std::string(TG_CLI_BIN) + " import-tinygrad " + pkl + " " + out + " 2> " + err;
    EXPECT_EQ(WEXITSTATUS(std::system(run.c_str())), 2);
    EXPECT_NE(slurp(err).find(c.names), std::string::npos) << slurp(err);
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_FALSE(std::filesystem::exists(marker)) << "the pickle's payload ran";
    std::remove(pkl.c_str()), std::remove(err.c_str());
  }
  // the payload does run when Python unpickles it (the test's pickle is a real attack), when python3 is there
  if (std::system("command -v python3 > /dev/null 2>&1") == 0) {
    std::string pkl = tmp_path("hostile.pkl");
    spit(pkl, cases[1].bytes);
    std::system(("python3 -c \"import pickle; pickle.load(open('" + pkl + "', 'rb'))\" > /dev/null 2>&1").c_str());
    EXPECT_TRUE(std::filesystem::exists(marker)) << "the hostile pickle does nothing even in Python";
    std::remove(marker.c_str()), std::remove(pkl.c_str());
  }
}

// a small file whose 20,000 UOp records all name one list of 100,000 items as their arg: reading it as a trace would
// encode that list 20,000 times. The importer stops, saying why, instead of working for minutes
TEST(ImportTinygrad, SharedValuesDoNotMultiplyTheWork) {
  std::string p = "\x80\x04";
  auto str = [&](const std::string& x) {
    p += '\x8c';
    p += (char)x.size();
    p += x;
  };
  auto i32 = [&](int32_t v) {
    p += 'J';
    for (int k = 0; k < 4; k++) p += (char)((uint32_t)v >> (8 * k));
  };
  auto put = [&](int k) { p += 'q', p += (char)k; };
  auto get = [&](int k) { p += 'h', p += (char)k; };
  str("tinygrad.uop.ops"), str("RewriteTrace"), p += "\x93)\x81}(";
  str("keys"), p += "]";
  str("rewrites"), p += "]";
  str("uop_fields"), p += "}(";
  for (int n = 1; n <= 20000; n++) {
    i32(n);
    p += "(";
    if (n == 1) {
      str("tinygrad.uop"), str("Ops"), p += "\x93K\x01\x85R", put(0);
      str("tinygrad.dtype"), str("DType"), p += "\x93(", i32(-1), i32(0), str("void"), p += "NtR", put(1);
      p += ")";
      p += "](";
      for (int k = 0; k < 100000; k++) p += "K\x07";
      p += "e", put(2);
    } else {
      get(0), get(1), p += ")", get(2);
    }
    p += "Nt";
  }
  p += "uub.";
  std::string pkl = tmp_path("shared.pkl"), out = tmp_path("shared.trace.db");
  spit(pkl, p);
  ASSERT_NO_THROW(pickle::load(p, "shared.pkl"));  // a well-formed pickle
  try {
    import(pkl, "", out);
    ADD_FAILURE() << "imported";
  } catch (const tg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("over and over"), std::string::npos) << e.what();
  }
  std::remove(pkl.c_str());
}

TEST(ImportTinygrad, RefusesWhatIsNotATraceAsOutput) {
  std::string out = tmp_path("not_a_trace.txt");
  spit(out, "keep me");
  EXPECT_THROW(import(data("tinygrad_small.rewrites.pkl"), "", out), tg::Error);
  EXPECT_EQ(slurp(out), "keep me");
  std::remove(out.c_str());
}

// every prefix of a real pickle: an error naming the file, never a crash; a few through the whole import
TEST(ImportTinygrad, TruncatedPicklesGiveErrors) {
  std::string bytes = slurp(data("tinygrad_small.rewrites.pkl"));
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t n = 0; n < bytes.size(); n++) {
    try {
      pickle::load(std::string_view(bytes).substr(0, n), "cut.pkl");
      ADD_FAILURE() << "a prefix of " << n << " bytes loaded";
    } catch (const pickle::PickleError& e) {
      EXPECT_NE(std::string(e.what()).find("cut.pkl"), std::string::npos);
    }
  }
  std::string pkl = tmp_path("cut.pkl"), out = tmp_path("cut.trace.db");
  for (size_t n : {(size_t)0, (size_t)1, (size_t)2, bytes.size() / 3, bytes.size() - 1}) {
    spit(pkl, bytes.substr(0, n));
    EXPECT_THROW(import(pkl, "", out), tg::Error) << n;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  // garbage, and a pickle of the wrong thing
  for (std::string g : {std::string("not a pickle at all"), std::string("\x80\x04K\x05.", 5),
                        std::string("\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\x7f", 11),
                        std::string("\x80\x04\x8b\xff\xff\xff\x7f", 7), std::string("\x80\x04j\xff\xff\xff\xff.", 8)}) {
    spit(pkl, g);
    EXPECT_THROW(import(pkl, "", out), tg::Error);
  }
  std::remove(pkl.c_str());
}

// the importer's limits on a pickled arg (gen_import_fixtures.py --damaged): 100 tuples deep, and 1.1 million parts
// that the pickle's memo keeps in 38 KB; each is one error naming the file and the UOp's record, and no trace is left
TEST(ImportTinygrad, ArgsPastTheLimitsAreErrors) {
  std::string out = tmp_path("limits.trace.db");
  for (auto [fixture, what] : {std::pair<std::string, std::string>{"tinygrad_deep_arg.rewrites.pkl",
                                                                   "an arg nested deeper than 64 levels"},
                               {"tinygrad_wide_arg.rewrites.pkl", "an arg with more than a million parts"}}) {
    try {
      import(std::string(TG_TEST_DATA) + "/" + fixture, "", out);
      ADD_FAILURE() << fixture << " imported";
    } catch (const tg::Error& e) {
      std::string m = e.what();
      EXPECT_NE(m.find(fixture), std::string::npos) << m;
      EXPECT_NE(m.find("RewriteTrace.uop_fields["), std::string::npos) << m;
      EXPECT_NE(m.find(what), std::string::npos) << m;
    }
    EXPECT_FALSE(std::filesystem::exists(out)) << fixture;
  }
}

// seeded mutants (byte flips, cut ranges, duplicated ranges) of both pickles: every one imports or gives a tg::Error
// (a crash or any other exception fails the test)
TEST(ImportTinygrad, MutatedPicklesNeverCrash) {
  std::string rw = slurp(data("tinygrad_small.rewrites.pkl")), pf = slurp(data("tinygrad_small.profile.pkl"));
  std::mt19937_64 rng(20261128);
  std::string pkl = tmp_path("mut.pkl"), prof = tmp_path("mut_profile.pkl"), out = tmp_path("mut.trace.db");
  int imported = 0, refused = 0;
  for (int i = 0; i < 300; i++) {
    bool on_profile = i % 3 == 2;
    std::string m = on_profile ? pf : rw;
    int edits = 1 + (int)(rng() % 4);
    for (int e = 0; e < edits; e++) {
      size_t at = rng() % m.size();
      switch (rng() % 4) {
        case 0:
          m[at] = (char)rng();
          break;
        case 1:
          m[at] ^= (char)(1 << (rng() % 8));
          break;
        case 2:
          m.erase(at, 1 + rng() % 16);
          break;
        case 3:
          m.insert(at, m.substr(rng() % m.size(), 1 + rng() % 32));
          break;
      }
      if (m.empty()) m = "x";
    }
    spit(pkl, on_profile ? rw : m);
    spit(prof, on_profile ? m : pf);
    try {
      import(pkl, prof, out);
      imported++;
    } catch (const tg::Error&) {
      refused++;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "mutant " << i << ": not a tg::Error: " << e.what();
    }
  }
  EXPECT_GT(refused, 0);
  std::printf("mutants: %d imported, %d refused\n", imported, refused);
  // many more through the unpickler alone (fast): each loads or gives a PickleError
  int loaded = 0;
  for (int i = 0; i < 20000; i++) {
    std::string m = i % 2 ? rw : pf;
    for (int e = 1 + (int)(rng() % 3); e > 0; e--) {
      size_t at = rng() % m.size();
      if (rng() % 2)
        m[at] = (char)rng();
      else
        m.erase(at, 1 + rng() % 8);
      if (m.empty()) m = ".";
    }
    try {
      pickle::load(m, "mutant");
      loaded++;
    } catch (const pickle::PickleError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unpickler mutant " << i << ": not a PickleError: " << e.what();
    }
  }
  EXPECT_GT(loaded, 0);
  std::remove(pkl.c_str()), std::remove(prof.c_str()), std::remove(out.c_str());
}

// a trace of another producer (the port's rules are C++ files) compares by node structure: the same matches with
// other rule names are equal there, and only there; a changed node is a divergence in both modes
TEST(ImportTinygrad, DiffAcrossProducersComparesNodes) {
  std::string a = tmp_path("diff_a.trace.db"), b = tmp_path("diff_b.trace.db");
  import(data("tinygrad_small.rewrites.pkl"), "", a);
  import(data("tinygrad_small.rewrites.pkl"), "", b);
  {
    auto ta = Trace::open(a), tb = Trace::open(b);
    TraceDiff d = diff_traces(*ta, *tb);
    EXPECT_TRUE(d.compared_rules);
    EXPECT_FALSE(d.diverged);
    EXPECT_EQ(d.equal_steps, ta->steps().size());
  }
  // b's rules now live in C++ files, as a port's recording of the same program would have them
  EXPECT_EQ(sql_exec(b,
                     "UPDATE strings SET value=replace(replace(value, 'tinygrad/', 'lib/'), '.py', '.cpp') WHERE id IN "
                     "(SELECT file FROM rules); UPDATE rules SET line=line+1000;"),
            "");
  {
    auto ta = Trace::open(a), tb = Trace::open(b);
    TraceDiff same = diff_traces(*ta, *tb);  // one producer: by rule, every step with a match differs
    EXPECT_TRUE(same.diverged);
    EXPECT_LT(same.equal_steps, ta->steps().size());
    TraceDiff by_nodes = diff_traces(*ta, *tb, DiffOptions{false});
    EXPECT_FALSE(by_nodes.compared_rules);
    EXPECT_FALSE(by_nodes.diverged);
    EXPECT_EQ(by_nodes.equal_steps, ta->steps().size());
  }
  EXPECT_EQ(sql_exec(b, "UPDATE meta SET value='tinygrad-cpp' WHERE key='producer'"), "");
  {
    auto ta = Trace::open(a), tb = Trace::open(b);
    TraceDiff d = diff_traces(*ta, *tb);  // different producers: by nodes without being asked
    EXPECT_FALSE(d.compared_rules);
    EXPECT_FALSE(d.diverged);
    EXPECT_TRUE(d.rules.empty());  // the counts per module (symbolic.py and symbolic.cpp are one) agree
  }
  // a match whose replacement differs is a divergence, named by its step and match
  int64_t step = sql_int(b, "SELECT step FROM matches ORDER BY step, ordinal LIMIT 1");
  EXPECT_EQ(sql_exec(b, "UPDATE matches SET after=before WHERE step=" + std::to_string(step) +
                            " AND ordinal=(SELECT MIN(ordinal) "
                            "FROM matches WHERE step=" +
                            std::to_string(step) + ")"),
            "");
  {
    auto ta = Trace::open(a), tb = Trace::open(b);
    TraceDiff d = diff_traces(*ta, *tb);
    EXPECT_TRUE(d.diverged);
    EXPECT_EQ(d.first_b.step, step);
    EXPECT_EQ(d.first_b.ordinal, 1);
  }
  std::remove(a.c_str()), std::remove(b.c_str());
}

TEST(ImportTinygrad, CliJsonSummary) {
  std::string out = tmp_path("cli.trace.db"), js = tmp_path("cli.json");
  std::string run = std::string(TG_CLI_BIN) + " import-tinygrad --json " + data("tinygrad_small.rewrites.pkl") + " " +
                    data("tinygrad_small.profile.pkl") + " " + out + " > " + js;
  ASSERT_EQ(std::system(run.c_str()), 0);
  auto j = nlohmann::json::parse(slurp(js));
  auto c = counts()["tinygrad_small"];
  EXPECT_EQ(j["contexts"].get<int64_t>(), c["contexts"]);
  EXPECT_EQ(j["steps"].get<int64_t>(), c["steps"]);
  EXPECT_EQ(j["matches"].get<int64_t>() + j["rule_errors"].get<int64_t>(), c["matches"]);
  // a usage error: exit status 2
  EXPECT_EQ(WEXITSTATUS(std::system((std::string(TG_CLI_BIN) + " import-tinygrad only_one.pkl 2> /dev/null").c_str())),
            2);
  std::remove(out.c_str()), std::remove(js.c_str());
}

}  // namespace
