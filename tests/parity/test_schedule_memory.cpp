// The TLSFAllocator the memory planner suballocates arenas with, against the reference's (runtime/support/memory.py)
// on random alloc/free sequences (tests/data/tlsf_goldens.txt, from gen_tlsf_goldens.py): every offset and every
// out-of-memory refusal is the reference's.
#include <gtest/gtest.h>

#include <sstream>

#include "lib/helpers.h"
#include "lib/runtime/support/memory.h"
#include "tests/support/golden_file.h"

using namespace tg;

TEST(TLSFAllocator, MatchesReference) {
  test::GoldenFile f(TG_TEST_DATA "/tlsf_goldens.txt");
  std::unique_ptr<TLSFAllocator> a;
  int seqs = 0, allocs = 0, frees = 0, ooms = 0;
  while (f.next()) {
    size_t ln = f.line_no();
    std::istringstream in(f.line());
    std::string k;
    in >> k;
    if (k == "seq") {
      int64_t size, base, bs, lv2;
      in >> size >> base >> bs >> lv2;
      a = std::make_unique<TLSFAllocator>(size, base, bs, lv2);
      seqs++;
    } else if (k == "a") {
      int64_t req, align;
      std::string want;
      in >> req >> align >> want;
      std::string got;
      try {
        got = std::to_string(a->alloc(req, align));
      } catch (const Error& e) {
        got = "E";
        EXPECT_NE(std::string(e.what()).find("Can't allocate"), std::string::npos) << e.what();
      }
      ASSERT_EQ(got, want) << "line " << ln << ": alloc(" << req << ", " << align << ")";
      allocs++, ooms += want == "E";
    } else if (k == "f") {
      int64_t off;
      in >> off;
      a->free(off);
      frees++;
    }
  }
  std::printf("[ tlsf ] %d sequences: %d allocs (%d refused) and %d frees as the reference\n", seqs, allocs, ooms,
              frees);
  EXPECT_GE(seqs, 40);
  EXPECT_GT(ooms, 0);
}
