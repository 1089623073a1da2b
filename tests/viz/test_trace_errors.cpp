// A trace is untrusted input: each damaged file below once crashed, hung or drowned tinyviz-cli (a dtypes id of -1,
// an arg nested 200,000 deep, a string length that wraps the parser's position, a uop that is its own src, a depth
// of 10^9, a match count of -1, a table turned into an endless view, ...). Now each is one TraceError naming the file,
// the table, the row and what is wrong, and the CLI prints it and exits 2.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/sql.h"
#include "viz/reader/argfmt.h"
#include "viz/cli/cli.h"
#include "viz/reader/reader.h"
#include "viz/reader/replay.h"

using namespace tg::viz;
namespace fs = std::filesystem;

namespace {

// a copy of the sample trace (one file: the WAL folded in), changed by SQL
std::string damaged(const std::string& name, const std::string& sql) {
  std::string path = ::testing::TempDir() + "tg_bad_" + name + "_" + std::to_string(getpid()) + ".trace.db";
  fs::copy_file(TG_SAMPLE_TRACE, path, fs::copy_options::overwrite_existing);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, ("PRAGMA journal_mode=DELETE; " + sql).c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
  return path;
}

// one value by SQL from the sample trace
int64_t sample_int(const std::string& q) { return tg::test::sql_int(TG_SAMPLE_TRACE, q); }

// the message names the file and says each of these
void expect_names(const std::string& message, const std::string& path, std::initializer_list<std::string> parts) {
  EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
  for (const std::string& p : parts) EXPECT_NE(message.find(p), std::string::npos) << "no '" << p << "' in: " << message;
}

std::string open_error(const std::string& path) {
  try {
    Trace::open(path);
  } catch (const TraceError& e) {
    return e.what();
  }
  ADD_FAILURE() << "opened " << path;
  return "";
}

// runs tinyviz-cli in-process: (exit status, stderr)
std::pair<int, std::string> cli(std::vector<std::string> args) {
  args.insert(args.begin(), "tinyviz-cli");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  int saved = dup(1);
  FILE* sink = std::fopen("/dev/null", "w");
  dup2(fileno(sink), 1);
  ::testing::internal::CaptureStderr();
  int rc = cli_main((int)args.size(), argv.data());
  std::string err = ::testing::internal::GetCapturedStderr();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::fclose(sink);
  return {rc, err};
}

int64_t a_step_with_matches() { return sample_int("SELECT step FROM matches GROUP BY step ORDER BY step LIMIT 1"); }

}  // namespace

TEST(TraceErrors, DtypeIdMinusOne) {
  // Trace::load resized the name table to 0 and wrote index -1
  std::string p = damaged("dtype", "UPDATE dtypes SET id=-1 WHERE id=3");
  expect_names(open_error(p), p, {"table dtypes", "row -1", "out of range"});
  std::string huge = damaged("dtype_huge", "INSERT INTO dtypes VALUES(4000000000000, 'x')");
  expect_names(open_error(huge), huge, {"table dtypes", "row 4000000000000"});
}

TEST(TraceErrors, DeeplyNestedArgIsAnErrorNotARecursion) {
  // 200,000 levels overflowed the stack in argfmt's item(); 20,000 took 16.7 s
  for (size_t depth : {200'000u, 20'000u}) {
    std::string arg = std::string(depth, '(') + "i1" + std::string(depth, ')');
    int64_t uop = sample_int("SELECT id FROM uops WHERE op=60 LIMIT 1");  // a CONST
    std::string p = damaged("nested" + std::to_string(depth),
                            "UPDATE strings SET value='" + arg + "' WHERE id=(SELECT arg FROM uops WHERE id=" +
                                std::to_string(uop) + ")");
    auto t = Trace::open(p);
    try {
      t->label(uop);
      ADD_FAILURE() << "an arg nested " << depth << " deep was displayed";
    } catch (const TraceError& e) {
      expect_names(e.what(), p, {"table uops", "row " + std::to_string(uop), "nested deeper than"});
    }
  }
  EXPECT_THROW(arg_display(std::string(kMaxArgNesting + 1, '(') + "N" + std::string(kMaxArgNesting + 1, ')')),
               ArgFormatError);
  EXPECT_EQ(arg_display(std::string(kMaxArgNesting - 1, '(') + "N" + std::string(kMaxArgNesting - 1, ')')).size(),
            4 + 3 * (kMaxArgNesting - 1));  // "(((None,),),)": 3 characters per level
}

// kernel names carry terminal colours: as ESC characters in a string, and spelled \x1b[..m in a repr the engine made
// (a PROGRAM's ProgramInfo); neither reaches a label
TEST(TraceErrors, KernelNameColoursAreNotShown) {
  std::string esc = "E\x1b[90m_\x1b[0m8";
  EXPECT_EQ(arg_display("s" + std::to_string(esc.size()) + ":" + esc), "'E_8'");
  std::string repr = "ProgramInfo(name='E\\x1b[90m_\\x1b[0m\\x1b[97m8\\x1b[0m', global_size=(1, 1, 1))";
  EXPECT_EQ(arg_display("R" + std::to_string(repr.size()) + ":" + repr), "ProgramInfo(name='E_8', global_size=(1, 1, 1))");
}

// a graph labels a float CONST as the reference's VIZ does, f"{x:g}"; the arg's repr stays exact
TEST(TraceErrors, FloatConstsAreLabelledAsPythonsG) {
  auto enc = [](double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    char buf[20];
    std::snprintf(buf, sizeof buf, "f%016llx", (unsigned long long)bits);
    return std::string(buf);
  };
  EXPECT_EQ(arg_display(enc(0.0010000000000000009)), "0.0010000000000000009");
  EXPECT_EQ(float_arg_g(enc(0.0010000000000000009)), "0.001");
  EXPECT_EQ(float_arg_g(enc(1.0 / 6)), "0.166667");
  EXPECT_EQ(float_arg_g(enc(1e-5)), "1e-05");
  EXPECT_EQ(float_arg_g(enc(1e6)), "1e+06");
  EXPECT_EQ(float_arg_g(enc(100000.0)), "100000");
  EXPECT_EQ(float_arg_g(enc(3.0)), "3");
  EXPECT_EQ(float_arg_g(enc(-0.0)), "-0");
  EXPECT_EQ(float_arg_g(enc(-INFINITY)), "-inf");
  EXPECT_EQ(float_arg_g(enc(-NAN)), "nan");
  EXPECT_EQ(float_arg_g("i3"), std::nullopt);
  EXPECT_EQ(float_arg_g("(f3ff0000000000000,)"), std::nullopt);
  EXPECT_THROW(float_arg_g("fZZZZZZZZZZZZZZZZ"), ArgFormatError);
}

TEST(TraceErrors, StringLengthThatWrapsTheParserIsAnError) {
  // the position colon + 1 + length wrapped around to the 's' and the tuple parser read it forever, growing
  EXPECT_THROW(arg_display("(s18446744073709551594:x"), ArgFormatError);
  EXPECT_THROW(arg_display("s18446744073709551615:ab"), ArgFormatError);
  EXPECT_THROW(arg_display("s99999999999999999999999:a"), ArgFormatError);
  EXPECT_THROW(arg_display("s3:ab"), ArgFormatError);
  EXPECT_EQ(arg_display("s2:ab"), "'ab'");
  EXPECT_EQ(arg_display("(s2:ab,i-3,dfloat ,aLOOP )"), "('ab', -3, dtypes.float, AxisType.LOOP)");
  // no raw std::stoull text: a float that is not hex
  try {
    arg_display("fZZZZZZZZZZZZZZZZ");
    ADD_FAILURE();
  } catch (const ArgFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("non-hex"), std::string::npos) << e.what();
  }
}

TEST(TraceErrors, SelfAndCyclicSrcsAreErrors) {
  // a uop whose src is itself (one flipped byte in a varint makes one): replay looped while memory grew
  int64_t step = a_step_with_matches();
  int64_t root = sample_int("SELECT input_root FROM steps WHERE id=" + std::to_string(step));
  std::string self = damaged("self", "UPDATE uops SET src=x'00' WHERE id=" + std::to_string(root));
  {
    auto t = Trace::open(self);
    try {
      StepReplay r(*t, step);
      r.nodes(0);
      ADD_FAILURE() << "replayed a uop that is its own src";
    } catch (const TraceError& e) {
      expect_names(e.what(), self, {"table uops", "row " + std::to_string(root), "names the uop itself as src 0"});
    }
  }
  // two uops that are each other's src: the earlier one points forward
  int64_t a = root - 2;
  std::string cyc = damaged("cycle", "UPDATE uops SET src=x'03' WHERE id=" + std::to_string(a) +  // zigzag(-2): a + 2
                                         "; UPDATE uops SET src=x'04' WHERE id=" + std::to_string(root));
  auto t = Trace::open(cyc);
  try {
    t->node(root);
    ADD_FAILURE() << "loaded a cycle";
  } catch (const TraceError& e) {
    expect_names(e.what(), cyc, {"table uops", "a later uop"});
  }
  // and the CLI says so and exits 2, it does not loop
  auto [rc, err] = cli({"frame", self, std::to_string(step), "0"});
  EXPECT_EQ(rc, 2);
  expect_names(err, self, {"tinyviz-cli: ", "itself"});
}

TEST(TraceErrors, HugeDepthAndMatchCountsAreErrors) {
  int64_t step = a_step_with_matches();
  std::string s = std::to_string(step);
  // depth 10^9 printed a 2 GB listing
  std::string deep = damaged("depth", "UPDATE steps SET depth=1000000000 WHERE id=" + s);
  expect_names(open_error(deep), deep, {"table steps", "row " + s, "depth 1000000000 is out of range"});
  // a match count of -1 or 2^62 sized an allocation (vector::reserve) and aborted the GUI
  for (const char* n : {"-1", "4611686018427387904"}) {
    std::string p = damaged(std::string("nmatches") + (n[0] == '-' ? "neg" : "huge"),
                            std::string("UPDATE steps SET n_matches=") + n + " WHERE id=" + s);
    expect_names(open_error(p), p, {"table steps", "row " + s, std::string("n_matches ") + n});
    auto [rc, err] = cli({"matches", p, s});
    EXPECT_EQ(rc, 2);
    EXPECT_EQ(err.find("vector::reserve"), std::string::npos) << err;
    expect_names(err, p, {"tinyviz-cli: ", "n_matches"});
  }
}

// a nested step is one level below its parent: any other depth is damage
TEST(TraceErrors, AStepDeeperThanOneBelowItsParent) {
  int64_t step = sample_int("SELECT id FROM steps WHERE parent <> 0 ORDER BY id LIMIT 1");
  ASSERT_GT(step, 0);
  std::string s = std::to_string(step);
  std::string p = damaged("child_depth", "UPDATE steps SET depth=depth+1 WHERE id=" + s);
  expect_names(open_error(p), p, {"table steps", "row " + s, "is not one more than its parent's"});
}

TEST(TraceErrors, RowsNamingRowsThatDoNotExist) {
  int64_t step = a_step_with_matches();
  std::string s = std::to_string(step);
  // a step in a context that does not exist aborted the GUI
  std::string ctx = damaged("ctx", "UPDATE steps SET context=999999 WHERE id=" + s);
  expect_names(open_error(ctx), ctx, {"table steps", "row " + s, "context 999999 does not exist"});
  std::string root = damaged("root", "UPDATE steps SET input_root=999999999 WHERE id=" + s);
  auto t = Trace::open(root);
  try {
    StepReplay r(*t, step);
    ADD_FAILURE();
  } catch (const TraceError& e) {
    expect_names(e.what(), root, {"table steps", "row " + s, "input_root", "999999999"});
  }
  std::string str = damaged("strings", "DELETE FROM strings WHERE id=(SELECT name FROM steps WHERE id=" + s + ")");
  expect_names(open_error(str), str, {"table steps", "name refers to string"});
}

// diff and matches read a step's nodes without replaying it: an id that is not a uop names the row it came from, and
// a uop's missing or malformed arg string names table strings
TEST(TraceErrors, DiffAndMatchesNameTheRowsTheirNodesCameFrom) {
  int64_t step = a_step_with_matches();
  std::string s = std::to_string(step);
  std::string root = damaged("diff_root", "UPDATE steps SET input_root=999999999 WHERE id=" + s);
  auto [rc, err] = cli({"diff", TG_SAMPLE_TRACE, root});
  EXPECT_EQ(rc, 2);
  expect_names(err, root, {"table steps", "row " + s, "input_root refers to uop 999999999"});
  std::string after = damaged("matches_after", "UPDATE matches SET after=999999999 WHERE step=" + s);
  for (std::vector<std::string> args : {std::vector<std::string>{"matches", after, s},
                                        std::vector<std::string>{"diff", TG_SAMPLE_TRACE, after}}) {
    auto [rc2, err2] = cli(args);
    EXPECT_EQ(rc2, 2) << args[0];
    expect_names(err2, after, {"table matches", "step " + s, "after refers to uop 999999999"});
  }
  int64_t uop = sample_int("SELECT id FROM uops WHERE op=60 LIMIT 1");  // a CONST
  std::string arg_row = std::to_string(sample_int("SELECT arg FROM uops WHERE id=" + std::to_string(uop)));
  std::string gone = damaged("diff_arg", "UPDATE uops SET arg=999999999 WHERE id=" + std::to_string(uop));
  auto [rc3, err3] = cli({"diff", TG_SAMPLE_TRACE, gone});
  EXPECT_EQ(rc3, 2);
  expect_names(err3, gone, {"table uops", "row " + std::to_string(uop), "arg refers to string 999999999",
                            "table strings"});
  std::string bad = damaged("bad_arg", "UPDATE strings SET value='x' WHERE id=" + arg_row);
  auto t = Trace::open(bad);
  try {
    t->label(uop);
    ADD_FAILURE() << "a malformed arg was displayed";
  } catch (const TraceError& e) {
    expect_names(e.what(), bad, {"table uops", "row " + std::to_string(uop), "strings row " + arg_row});
  }
}

TEST(TraceErrors, SchemaDamage) {
  // meta without its value column aborted the GUI (an exception from the UI thread)
  std::string meta = damaged("meta", "ALTER TABLE meta RENAME COLUMN value TO v");
  expect_names(open_error(meta), meta, {"table meta has no column value"});
  std::string dropped = damaged("dropped", "DROP TABLE matches");
  expect_names(open_error(dropped), dropped, {"table matches is missing"});
  // a table turned into a view that never ends: the reader reads tables only
  std::string view = damaged("view",
                             "ALTER TABLE steps RENAME TO steps_old; CREATE VIEW steps AS WITH RECURSIVE r(n) AS "
                             "(SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT o.* FROM r, steps_old o");
  expect_names(open_error(view), view, {"table steps is a view, not a table"});
  // text where an integer belongs
  std::string text = damaged("text", "UPDATE steps SET depth='abc'");
  expect_names(open_error(text), text, {"table steps", "depth holds text, not an integer"});
}

TEST(TraceErrors, MalformedStepStatisticsNameTheStep) {
  int64_t step = a_step_with_matches();
  std::string s = std::to_string(step);
  // each damage with the problem its check names
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"[[1,-,3,4]]", "not JSON"},
      {"[", "not JSON"},
      {"{}", "not an array"},
      {"[1]", "entry 0 is not an array"},
      {"[[1]]", "entry 0 has 1 numbers, not 4 to 6"},
      {"[[1,2,3,4],[1,2,3,4,5,6,7]]", "entry 1 has 7 numbers, not 4 to 6"},
      {"[[99999999999999999999999,1,1,1]]", "not a 64-bit integer"},
      {"[[18446744073709551615,1,1,1]]", "not a 64-bit integer"},
      {"[[1,2.5,3,4]]", "not a 64-bit integer: 2.5"},
      {"[[1,2,3,-4]]", "entry 0 has a negative count or time"},
  };
  for (const auto& [j, problem] : cases) {
    std::string p = damaged("stats", std::string("UPDATE steps SET stats='") + j + "' WHERE id=" + s);
    auto t = Trace::open(p);
    try {
      t->rule_stats(step);
      ADD_FAILURE() << j;
    } catch (const TraceError& e) {
      expect_names(e.what(), p, {"table steps", "row " + s, "stats", problem});
    }
    auto [rc, err] = cli({"stats", p, "--step", s});
    EXPECT_EQ(rc, 2);
    EXPECT_EQ(err.find("stoll"), std::string::npos) << err;
    expect_names(err, p, {"tinyviz-cli: "});
  }
}

TEST(TraceErrors, UnfinishedTraceIsCheckedByQuickCheck) {
  // a run that did not finish, with a damaged page: SQLite's quick_check reports it on open
  std::string p = damaged("unfinished", "UPDATE meta SET value='recording' WHERE key='status'");
  {
    // the header of the steps table's root page
    int64_t page = sample_int("SELECT rootpage FROM sqlite_master WHERE name='steps'");
    ASSERT_GT(page, 1);
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((page - 1) * 4096);
    std::string junk(16, '\xa5');
    f.write(junk.data(), (std::streamsize)junk.size());
  }
  expect_names(open_error(p), p, {"is corrupt (SQLite's quick_check"});
  // the sample itself is fine either way
  EXPECT_NO_THROW(Trace::open(TG_SAMPLE_TRACE));
}

TEST(TraceErrors, CliNeverAbortsAndNamesTheFile) {
  std::string p = damaged("cli", "UPDATE dtypes SET id=-1 WHERE id=3");
  for (const char* cmd : {"info", "contexts", "steps", "stats", "verify", "kernels"}) {
    auto [rc, err] = cli({cmd, p});
    EXPECT_EQ(rc, 2) << cmd;
    expect_names(err, p, {"tinyviz-cli: ", "table dtypes"});
  }
}

// what a viewer shows of a long string (viz/reader/reader.h display_text): cut at the limit, on a whole UTF-8 character and
// outside a colour code, saying how much is left out; no limit, or a short string, leaves it as it is
TEST(DisplayText, LongStringsAreCutOnCharacterBoundaries) {
  set_display_text_limit(0);
  std::string big(5000, 'a');
  EXPECT_EQ(display_text(big), big);
  set_display_text_limit(10);
  EXPECT_EQ(display_text("short"), "short");
  EXPECT_EQ(display_text("abcdefghijKLMNOP"), "abcdefghij… (6 more characters)");
  // "é" is two bytes: a cut at byte 10 would split the one at bytes 9-10
  EXPECT_EQ(display_text("abcdefghi\xc3\xa9xyz"), "abcdefghi… (4 more characters)");
  // a kernel name's colour code is not split (the cut at byte 10 falls in the ESC [ 0 m at bytes 9-12), and a cut
  // coloured name ends its colour
  EXPECT_EQ(display_text("r_\x1b[34m16\x1b[0m_\x1b[31m4444\x1b[0m"), "r_\x1b[34m16\x1b[0m… (18 more characters)");
  set_display_text_limit(0);
}
