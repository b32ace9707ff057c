// The kinds exposed communication is charged to (sim/report/exposure.h), by communicator name.
#include "sim/report/exposure.h"

#include <gtest/gtest.h>

namespace dtsim::sim {
namespace {

TEST(CommunicationKind, NamesTheKindOfEachCommunicator) {
  // The hybrid engine's names (hybrid.cpp): "KIND" or "KIND.K".
  EXPECT_EQ(communication_kind("tp.3"), "tp");
  EXPECT_EQ(communication_kind("dp"), "dp");
  EXPECT_EQ(communication_kind("cp.0"), "cp");
  EXPECT_EQ(communication_kind("pp_act.2"), "pp");
  EXPECT_EQ(communication_kind("pp_grad"), "pp");
  for (const char* dp : {"dp_gather.1", "edp", "edp_gather.2", "emb", "dp_replica.4"}) {
    EXPECT_EQ(communication_kind(dp), "dp") << dp;
  }
  // A CNN's spatial split: its group, and its halo pairs in every direction as one kind.
  EXPECT_EQ(communication_kind("spatial.7"), "spatial");
  for (const char* halo : {"halo_h+", "halo_h-.12", "halo_w+.3", "halo_d-.0"}) {
    EXPECT_EQ(communication_kind(halo), "halo") << halo;
  }
}

}  // namespace
}  // namespace dtsim::sim
