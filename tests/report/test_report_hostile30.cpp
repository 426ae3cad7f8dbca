// Issue 19, session 30's hostile pass over `report`: a bench database is a file report --db takes from anyone, and
// --fit-json any JSON document; neither may crash the report or write to the terminal what the terminal obeys.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "bench/store.hpp"
#include "../test_support.hpp"
#include "bench_db_support.hpp"

using namespace preflight;

using pftest::make_db;
using pftest::request;

// Issue 19 (hard30): report --html --fit-json read the document with nlohmann's operator[] and value(), which throw on a
// document of another shape: '[1]', a string, a number where "device" or "total_gib" goes ended the report with
// std::terminate (exit 134, "terminate called after throwing ... type_error"). Each is bad input naming the file and
// the field, exit 2, and no report is written; the document fit --json writes still works.
TEST(ReportHostile30, Issue19_FitJsonOfAnotherShapeIsBadInputNotACrash) {
  const std::string dir = pftest::scratch_dir("report-fit-json");
  const std::string db = make_db(dir, "Qwen/Qwen3-8B");
  struct Case {
    std::string document, message;
  };
  const std::vector<Case> cases = {
      {"[1, 2]", "expected the output of preflight fit --json (memory_per_device.terms)"},
      {"\"text\"", "expected the output of preflight fit --json (memory_per_device.terms)"},
      {R"({"memory_per_device": {"terms": []}, "device": 5})", "device: expected a string, found integer"},
      {R"({"memory_per_device": {"terms": []}, "model": ["x"]})", "model: expected a string, found array"},
      {R"({"memory_per_device": {"terms": [], "total_gib": "a"}})", "memory_per_device.total_gib: expected a number, found string"},
  };
  for (const auto& c : cases) {
    std::ofstream(dir + "/fit.json") << c.document;
    std::filesystem::remove(dir + "/r.html");
    const auto r = pftest::run_cli("report --html " + dir + "/r.html --db " + db + " --fit-json " + dir + "/fit.json");
    EXPECT_EQ(r.code, 2) << c.document << "\n" << r.out;
    EXPECT_NE(r.out.find(dir + "/fit.json: " + c.message), std::string::npos) << c.document << "\n" << r.out;
    EXPECT_EQ(r.out.find("terminate"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir + "/r.html")) << c.document;
  }
  std::ofstream(dir + "/fit.json") << R"({"device": "H100-SXM", "model": "Qwen/Qwen3-8B", "memory_per_device": {"total_gib": 70.5, "terms": [{"name": "weights", "gib": 15.3}]}})";
  const auto ok = pftest::run_cli("report --html " + dir + "/r.html --db " + db + " --fit-json " + dir + "/fit.json");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(pftest::read_all(dir + "/r.html").find("H100-SXM (Qwen/Qwen3-8B)"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard31): fit --json writes each key once, so a key the --fit-json document repeats is a hand edit; the
// report drew the last "total_gib" silently. Bad input naming the file and the key's path, exit 2, no report.
TEST(ReportHostile30, Issue19_FitJsonWithARepeatedKeyIsRefused) {
  const std::string dir = pftest::scratch_dir("report-fit-json-repeat");
  const std::string db = make_db(dir, "Qwen/Qwen3-8B");
  std::ofstream(dir + "/fit.json") << R"({"device": "H100-SXM", "memory_per_device": {"total_gib": 70.5, "terms": [], "total_gib": 7.5}})";
  const auto r = pftest::run_cli("report --html " + dir + "/r.html --db " + db + " --fit-json " + dir + "/fit.json");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir + "/fit.json: memory_per_device.total_gib: key appears twice in one object"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.html"));
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard30): report --compare's table printed the database's model name as it is stored: an OSC sequence in it
// retitled the terminal and a CSI one coloured or cleared it. The texts are shown without escape sequences or control
// characters; the JSON form keeps the stored text (escaped by the writer).
TEST(ReportHostile30, Issue19_CompareTableStripsEscapeSequencesFromTheDatabase) {
  const std::string dir = pftest::scratch_dir("report-compare-escapes");
  const std::string db = make_db(dir, "m\x1b]0;OWNED\x07\x1b[2J\x1b[31mRED\xc2\x9b");
  const auto r = pftest::run_cli("report --compare 1 2 --db " + db);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("preflight A/B: mRED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model mRED, sweep s1"), std::string::npos) << r.out;
  const auto j = pftest::run_cli("report --compare 1 2 --json --db " + db, {.with_stderr = false});
  ASSERT_EQ(j.code, 0) << j.out;
  const Json doc = Json::parse(j.out);
  EXPECT_EQ(doc["arms"][0]["model"].get<std::string>().substr(0, 2), "m\x1b");
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard30): a stored time no run writes (t_send_ns 2^63 - 1, a token offset of 2^62 us) was summed and
// subtracted as it was read (UBSan: signed integer overflow in bench/store.cpp; the release build printed numbers from
// wrapped values, exit 0). Reading the requests refuses it, naming the database, run, request and field (exit 2); a
// time at the bound, 2^62 ns, is still read.
TEST(ReportHostile30, Issue19_StoredTimesOutsideTheirRangeAreACorruptDatabase) {
  const std::string dir = pftest::scratch_dir("report-stored-range");
  const std::string db = make_db(dir, "Qwen/Qwen3-8B");
  {
    auto store = bench::BenchStore::open(db);
    ASSERT_TRUE(store);
    bench::RunInfo info;
    info.started_at = "2026-12-06T00:00:00Z";
    info.url = "http://127.0.0.1:8000";
    info.model = "Qwen/Qwen3-8B";
    info.endpoint = "chat";
    info.mode = "concurrency";
    info.concurrency = 1;
    for (const int64_t send_ns : {INT64_MAX, int64_t{1} << 62}) {
      info.sweep_id = send_ns == INT64_MAX ? "s3" : "s4";
      auto id = store->begin_run(info, 0);
      ASSERT_TRUE(id);
      bench::RequestRecord r = request(0, 100.0);
      r.t_send_ns = send_ns;
      r.token_event_ns = {send_ns == INT64_MAX ? INT64_MAX : send_ns + 1000000};
      ASSERT_TRUE(store->add_request(*id, r));
      ASSERT_TRUE(store->finish_run(*id, Json::object(), "2026-12-06T00:01:00Z"));
    }
  }
  const auto bad = pftest::run_cli("report --compare 3 1 --db " + db);
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find(db + ": run 3 request 0: t_send_ns 9223372036854775807 is outside [-1, 4611686018427387904]"), std::string::npos) << bad.out;
  const auto html = pftest::run_cli("report --html " + dir + "/r.html --run 3 --db " + db);
  EXPECT_EQ(html.code, 2) << html.out;
  const auto edge = pftest::run_cli("report --compare 4 1 --db " + db);
  EXPECT_EQ(edge.code, 0) << edge.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard31): report --fit-json read the document with read_text_file's 64 MiB default and parsed it whole (a
// tree about 18 times the text); fit --json writes 25-37 KB. It is read within the owned-document bound of 4 MiB, bad
// input naming the file, exit 2.
TEST(ReportHostile30, Issue19_FitJsonIsReadWithinFourMiB) {
  const std::string dir = pftest::scratch_dir("report-fit-json-big");
  const std::string db = make_db(dir, "Qwen/Qwen3-8B");
  {
    std::ofstream out(dir + "/fit.json");
    out << R"({"device": "H100-SXM", "memory_per_device": {"total_gib": 70.5, "terms": []}, "pad": ")" << std::string(5u << 20, 'x') << "\"}";
  }
  const auto r = pftest::run_cli("report --html " + dir + "/r.html --db " + db + " --fit-json " + dir + "/fit.json");
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find(dir + "/fit.json"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.html"));
  std::filesystem::remove_all(dir);
}
