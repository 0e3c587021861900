// The flag grammar: every fault parses, every bad setting is one error line.
#include <gtest/gtest.h>

#include "fault_spec.h"
#include "options.h"

using namespace tlsproxy;

TEST(FaultSpec, EveryCatalogueFaultParsesWithItsRequiredSettings) {
  for (const FaultInfo& info : fault_catalogue()) {
    std::string settings;
    for (const Setting& s : info.settings)
      if (s.required) settings += (settings.empty() ? "" : ",") + std::string(s.key) + "=" + std::to_string(s.lo + 1);
    std::string error;
    auto specs = parse_fault(std::string("downstream:") + info.name + (settings.empty() ? "" : ":" + settings), &error);
    ASSERT_EQ(specs.size(), 1u) << info.name << ": " << error;
    EXPECT_EQ(specs[0].kind, info.kind);
    EXPECT_EQ(specs[0].direction, Direction::downstream);
  }
}

TEST(FaultSpec, SettingsFillTheirFields) {
  std::string error;
  auto specs = parse_fault("upstream:slicer:size=3,variation=1,delay_ms=7,conn=2", &error);
  ASSERT_EQ(specs.size(), 1u) << error;
  EXPECT_EQ(specs[0].size, 3);
  EXPECT_EQ(specs[0].variation, 1);
  EXPECT_EQ(specs[0].delay_ms, 7);
  EXPECT_EQ(specs[0].conn, 2);
  EXPECT_TRUE(specs[0].conn_given);
}

TEST(FaultSpec, BothIsOneSpecEachWay) {
  std::string error;
  auto specs = parse_fault("both:latency:ms=10", &error);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].direction, Direction::upstream);
  EXPECT_EQ(specs[1].direction, Direction::downstream);
}

TEST(FaultSpec, BadSpecsSayWhatIsWrong) {
  const std::pair<const char*, const char*> bad[] = {
      {"downstream:teleport", "unknown fault 'teleport'"},
      {"sideways:slicer:size=1", "direction must be"},
      {"downstream:slicer", "size= is required"},
      {"downstream:slicer:size=0", "size expects a whole number in 1.."},
      {"downstream:slicer:size=1x", "got '1x'"},
      {"downstream:slicer:size=-1", "got '-1'"},
      {"downstream:slicer:speed=1", "unknown setting 'speed=1'"},
      {"downstream:blackhole:at=3", "unknown setting 'at=3'"},
      {"downstream", "expected DIRECTION:NAME"},
      {"downstream:reset_peer:at=99999999999999999999", "got '99999999999999999999'"},
  };
  for (const auto& [text, why] : bad) {
    std::string error;
    EXPECT_TRUE(parse_fault(text, &error).empty()) << text;
    EXPECT_NE(error.find(why), std::string::npos) << text << " -> " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "one line: " << error;
  }
}

TEST(FlowPlan, PicksTheFaultsOfOneDirectionAndConnection) {
  ParseResult r = parse_options({"--upstream", "127.0.0.1:9", "--fault", "downstream:slicer:size=1", "--fault",
                                 "upstream:reset_peer:at=5,conn=1"});
  ASSERT_TRUE(r.options.has_value()) << r.error;
  FlowPlan down0(r.options->faults, 0, Direction::downstream);
  FlowPlan up0(r.options->faults, 0, Direction::upstream);
  FlowPlan up1(r.options->faults, 1, Direction::upstream);
  EXPECT_TRUE(down0.has(FaultKind::slicer));
  EXPECT_TRUE(up0.empty());
  EXPECT_TRUE(up1.has(FaultKind::reset_peer));
  EXPECT_FALSE(up1.has(FaultKind::slicer));
}
