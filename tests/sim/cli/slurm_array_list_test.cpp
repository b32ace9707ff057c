// slurm_array_list: the --array list of the points a Slurm job array runs, as sbatch's manual
// writes it ("0-15", "1,3,5-7"). Pure.
#include <gtest/gtest.h>

#include "sim/cli/slurm_sweep.h"

namespace {

using dtsim::sim::slurm_array_list;

TEST(SlurmArrayList, ConsecutiveIndicesBecomeOneRange) {
  EXPECT_EQ(slurm_array_list({0, 1, 2, 3}), "0-3");
}

TEST(SlurmArrayList, GapsSplitRangesAndLoneIndicesStandAlone) {
  // The points left by a --resume after points 3, 4 and 6 ended.
  EXPECT_EQ(slurm_array_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(slurm_array_list({4}), "4");
}

}  // namespace
