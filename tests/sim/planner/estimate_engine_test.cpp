// The planner's estimate against the simulation (SimGrid) on uncontended cases, where both
// should give the closed form. Every TEST runs in its own process (one engine per process).
#include <gtest/gtest.h>

#include "platforms/platform_spec.h"
#include "sim/planner/estimate.h"
#include "sim/run/hybrid_run.h"

namespace dtsim::sim {
namespace {

// `units` single-piece units with forward tf and backward tb seconds each (as
// hybrid_engine_test's), `grad_bytes` of gradients each.
HybridModel uniform_model(int units, double tf, double tb, std::uint64_t grad_bytes = 1000) {
  HybridModel m;
  for (int u = 0; u < units; ++u) {
    m.pieces.push_back({.name = "l" + std::to_string(u),
                        .unit = u,
                        .forward_sec = tf,
                        .backward_sec = tb,
                        .grad_bytes = grad_bytes,
                        .weight_bytes = grad_bytes / 2,
                        .output_bytes = 1000});
  }
  return m;
}

struct Both {
  double simulated_sec = 0;
  double estimated_sec = 0;
};

Both simulate_and_estimate(const HybridModel& model, const HybridJob& job,
                           const std::string& platform) {
  EXPECT_EQ(check_hybrid(model, job), "");
  const RunOptions run{.platform_path = platform, .ranks = static_cast<int>(job.degrees.ranks())};
  const PlannerNetwork net = planner_network(platforms::read_platform_spec(platform));
  return {
      .simulated_sec =
          replay_hybrid(model, job, run, "uniform", {.micro_batch = 1}).replay.iteration_time_sec,
      .estimated_sec = estimate_step(model, job, net).iteration_sec};
}

struct BubbleCase {
  PipelineSchedule schedule;
  int stages;
  int micro_batches;
};

class EstimatedBubble : public testing::TestWithParam<BubbleCase> {};

TEST_P(EstimatedBubble, MatchesTheClosedFormAndTheSimulation) {
  // On an infinitely fast network (10^21 bytes/s, no latency) a step is the pipeline alone:
  // (m V + p - 1) (t_f + t_b) / V with t_f + t_b per stage and micro-batch over its V chunks
  // (Narayanan et al. SC'21, sec. 2.2), bubble (p - 1)/(m V + p - 1).
  const BubbleCase& c = GetParam();
  const int v = c.schedule.virtual_stages;
  const double tf = 1e-3, tb = 2e-3;
  const HybridJob job{.degrees = {.pp = c.stages},
                      .micro_batches = c.micro_batches,
                      .schedule = c.schedule,
                      .iterations = 2};
  const Both r = simulate_and_estimate(uniform_model(c.stages * v, tf / v, tb / v), job,
                                       "tests/testdata/sim_star8_infinite.json");
  const double p = c.stages, m = c.micro_batches;
  const double closed_form = (m * v + p - 1) * (tf + tb) / v;
  EXPECT_NEAR(r.estimated_sec, closed_form, 1e-9);
  EXPECT_NEAR(r.simulated_sec, closed_form, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, EstimatedBubble,
    testing::Values(BubbleCase{{.kind = PipelineScheduleKind::kGpipe}, 4, 8}, BubbleCase{{}, 4, 8},
                    BubbleCase{{}, 8, 3},
                    BubbleCase{
                        {.kind = PipelineScheduleKind::kInterleaved, .virtual_stages = 2}, 4, 8}));

TEST(Estimate, PureDataParallelWithOneBucketIsComputeThenTheRing) {
  // dp = 8 on a star of 25 GB/s, 1 us links (2 us per route), one unit of 100 MB of gradients
  // in one bucket (caps above it): the all-reduce starts when the backward ends and nothing
  // overlaps it. Step = t_f + t_b + 2(n-1) alpha + 2(n-1)/n S/B
  //                  = 3 ms + 14 * 2 us + 14/8 * 1e8 / 25e9 s = 3 ms + 28 us + 7 ms.
  const HybridJob job{.degrees = {.dp = 8},
                      .micro_batches = 1,
                      .bucket_cap_bytes = 1'000'000'000,
                      .first_bucket_cap_bytes = 1'000'000'000,
                      .iterations = 2};
  const Both r = simulate_and_estimate(uniform_model(1, 1e-3, 2e-3, 100'000'000), job,
                                       "tests/testdata/sim_star16_25GBps.json");
  const double closed_form = 3e-3 + 28e-6 + 7e-3;
  EXPECT_NEAR(r.estimated_sec, closed_form, 1e-9);
  EXPECT_NEAR(r.simulated_sec, closed_form, 1e-6 * closed_form);
}

TEST(Estimate, BlockingTensorParallelAllReducesAddToEveryMicroBatch) {
  // tp = 4 on the same star, 2 pieces with 10 MB TP all-reduces at output (forward) and input
  // (backward), 2 micro-batches, no DP. Each all-reduce takes 6 * 2 us + 6/4 * 1e7 / 25e9 s =
  // 612 us. Per micro-batch the compute after piece 0's forward waits for its all-reduce, and
  // piece 0's backward for piece 1's input all-reduce; the step's last collectives (piece 1's
  // forward output, piece 0's backward input) hold back nothing, as no pipeline send follows
  // (HYBRID.md). Step = 2 * (2 * 3 ms + 2 * 612 us).
  HybridModel model = uniform_model(2, 1e-3, 2e-3);
  for (ModelPiece& p : model.pieces) {
    p.tp_in_bytes = p.tp_out_bytes = 10'000'000;
  }
  const HybridJob job{.degrees = {.tp = 4}, .micro_batches = 2, .iterations = 2};
  const Both r = simulate_and_estimate(model, job, "tests/testdata/sim_star16_25GBps.json");
  const double closed_form = 2 * (2 * 3e-3 + 2 * 612e-6);
  EXPECT_NEAR(r.estimated_sec, closed_form, 1e-9);
  EXPECT_NEAR(r.simulated_sec, closed_form, 1e-6 * closed_form);
}

TEST(Estimate, FullRecomputeRedoesTheForwardAllReducesUnlessItStopsEarly) {
  // The blocking case above with a full recomputation before each piece's backward: piece 1
  // (backward first) redoes 0.5 ms, piece 0 1 ms. Per micro-batch the compute is 2 * 3 ms +
  // 1.5 ms; the forward's all-reduce after piece 0 holds piece 1, the backward input's of piece
  // 1 holds piece 0's recomputation, and each recomputation's output all-reduce holds its own
  // backward: 4 all-reduces of 612 us. With piece 1's recomputation stopping early (no output
  // reduced, PyTorch's early stop) 3. Step = 2 * (7.5 ms + n * 612 us) by the estimate. The
  // simulation also queues piece 1's recomputed all-reduce behind the forward's last one on the
  // same TP stream (it starts 612 us after the forward ended, not 500): 112 us more per
  // micro-batch without early stop, which the estimate leaves out.
  for (const bool early : {false, true}) {
    HybridModel model = uniform_model(2, 1e-3, 2e-3);
    for (ModelPiece& p : model.pieces) {
      p.tp_in_bytes = p.tp_out_bytes = 10'000'000;
    }
    model.pieces[0].recompute_sec = 1e-3;
    model.pieces[1].recompute_sec = 0.5e-3;
    model.pieces[1].recompute_skips_output = early;
    const HybridJob job{
        .degrees = {.tp = 4}, .micro_batches = 2, .full_recompute = true, .iterations = 2};
    const Both r = simulate_and_estimate(model, job, "tests/testdata/sim_star16_25GBps.json");
    const double closed_form = 2 * (7.5e-3 + (early ? 3 : 4) * 612e-6);
    EXPECT_NEAR(r.estimated_sec, closed_form, 1e-9) << early;
    const double queued = early ? 0 : 2 * (612e-6 - 500e-6);
    EXPECT_NEAR(r.simulated_sec, closed_form + queued, 1e-6 * closed_form) << early;
  }
}
TEST(Estimate, Fp8GathersTakeHalfTheBytesInTheEstimateAndTheSimulation) {
  // tp = 4 on the same star, sequence parallelism, blocking: 2 pieces with 12 MB of 16-bit
  // activations at input and output, 1 micro-batch. In fp8 (workloads/TRANSFORMER.md, "Float8")
  // each gather moves 6 MB: 3 * 2 us + 3/4 * 6e6 / 25e9 s = 186 us against 366 us in bf16; the
  // reduce-scatters stay 366 us. Every gather is waited for by the compute after it (a piece's
  // input forward, its output gradient backward): 4 gathers, 4 * 180 us shorter, by the
  // estimate and by the simulation alike. (The two differ here by the step's last forward and
  // backward reduce-scatters, which the simulation waits for and the estimate does not, in bf16
  // as in fp8.)
  HybridModel bf16 = uniform_model(2, 1e-3, 2e-3);
  for (ModelPiece& p : bf16.pieces) {
    p.tp_in_bytes = p.tp_out_bytes = 12'000'000;
  }
  HybridModel fp8 = bf16;
  for (ModelPiece& p : fp8.pieces) {
    p.tp_gathers_fp8 = true;
  }
  const HybridJob job{
      .degrees = {.tp = 4}, .micro_batches = 1, .sequence_parallel = true, .iterations = 2};
  const Both full = simulate_and_estimate(bf16, job, "tests/testdata/sim_star16_25GBps.json");
  const Both half = simulate_and_estimate(fp8, job, "tests/testdata/sim_star16_25GBps.json");
  EXPECT_NEAR(full.estimated_sec - half.estimated_sec, 4 * 180e-6, 1e-9);
  EXPECT_NEAR(full.simulated_sec - half.simulated_sec, 4 * 180e-6, 1e-6 * full.simulated_sec);
}

// Two pieces (forward 1 ms, backward 2 ms): piece 0 reduce-scatters a 30 MB output (as an
// embedding does), piece 1 gathers a 30 MB input (as a head does), each beside a 0.4 ms GEMM.
HybridModel scatter_then_gather_model() {
  HybridModel model = uniform_model(2, 1e-3, 2e-3);
  model.pieces[0].tp_out_bytes = model.pieces[1].tp_in_bytes = 30'000'000;
  model.pieces[0].tp_out_gemm_sec = model.pieces[1].tp_in_gemm_sec = 0.4e-3;
  return model;
}

// Sequence parallelism with TP overlapped, two iterations (the second is measured).
HybridJob overlapped_job(ParallelDegrees degrees, int micro_batches) {
  return {.degrees = degrees,
          .micro_batches = micro_batches,
          .sequence_parallel = true,
          .tp_overlap = true,
          .iterations = 2};
}

TEST(Estimate, OverlappedTensorParallelismShowsTheStepsBeyondTheirChunks) {
  // tp = 4 on the same star, sequence parallelism with TP overlapped (HYBRID.md): piece 0
  // reduce-scatters its output (as an embedding does), piece 1 gathers its input (as a head
  // does), each 30 MB beside a 0.4 ms GEMM (chunks of 0.1 ms); forward 1 ms, backward 2 ms
  // each; 2 micro-batches. A ring step is a 10 MB collective: 3 sub-steps of 2 us + 2.5 MB /
  // 25 GB/s = 306 us, so each overlapped gather or scatter shows 3 * (306 - 100) us = 618 us
  // beyond its GEMM: piece 0's forward scatter, piece 1's forward gather and piece 0's backward
  // gather. Piece 1's backward reduce-scatter, 3 * (2 us + 7.5 MB / 25 GB/s) = 906 us beside
  // its 0.4 ms weight-gradient GEMM, holds piece 0's backward 506 us. Step = 2 * (6 ms +
  // 3 * 618 us + 506 us) = 16.72 ms, by the estimate and by the simulation.
  HybridModel model = scatter_then_gather_model();
  const Both r = simulate_and_estimate(model, overlapped_job({.tp = 4}, 2),
                                       "tests/testdata/sim_star16_25GBps.json");
  const double closed_form = 2 * (6e-3 + 3 * 618e-6 + 506e-6);
  EXPECT_NEAR(r.estimated_sec, closed_form, 1e-9);
  EXPECT_NEAR(r.simulated_sec, closed_form, 1e-6 * closed_form);
}

TEST(Estimate, RingAttentionHidesBehindWhatOverlappedTpLeavesOfThePass) {
  // tp = 2, cp = 2 on the same star, TP overlapped; pieces as above (forward 1 ms, backward
  // 2 ms; a 0.4 ms GEMM beside piece 0's 30 MB output and piece 1's 30 MB input), piece 1 also
  // passing 9 MB key/value blocks around the CP ring; one micro-batch. A TP step (30 MB on 2
  // ranks) takes 2 us + 15 MB / 25 GB/s = 602 us beside a 0.2 ms chunk: 402 us shows for piece
  // 0's forward scatter, piece 1's forward gather and piece 0's backward gather. Ring attention
  // splits what overlapped TP leaves of piece 1's pass: forward (1 - 0.4) / 2 = 0.3 ms per part
  // against a block's 2 us + 9 MB / 25 GB/s = 362 us: 62 us show (none if the whole 0.5 ms
  // forward were split); backward (2 - 0.4) / 2 = 0.8 ms against the block and its gradient's
  // 722 us: hidden; then the gradient home, 362 us. Piece 1's backward input scatter, 602 us
  // beside its 0.4 ms weight-gradient GEMM, holds piece 0's backward 202 us. The step ends with
  // the 2 x 1000 B of gradients all-reduced over the context pair (data x context, HYBRID.md):
  // 2 * 2 us + 2000 B / 25 GB/s = 4.08 us.
  // Step = 6 ms + 3 * 402 us + 62 us + 362 us + 202 us + 4.08 us = 7.83608 ms.
  HybridModel model = scatter_then_gather_model();
  model.pieces[1].cp_kv_bytes = 9'000'000;
  const Both r = simulate_and_estimate(model, overlapped_job({.tp = 2, .cp = 2}, 1),
                                       "tests/testdata/sim_star16_25GBps.json");
  const double closed_form = 6e-3 + 3 * 402e-6 + 62e-6 + 362e-6 + 202e-6 + 4.08e-6;
  EXPECT_NEAR(r.estimated_sec, closed_form, 1e-9);
  EXPECT_NEAR(r.simulated_sec, closed_form, 1e-6 * closed_form);
}

TEST(Estimate, CnnHalosAndSpatialCollectivesAddToEveryPass) {
  // A spatial grid of 2 x 1 (cp = 2) on the 25 GB/s, 1 us star, two pieces (t_f 1 ms, t_b 2 ms
  // each, no gradients); the second all-reduces 10 MB over the grid before its forward (a batch
  // norm's statistics of the first one's output) and sends 10 MB of halo rows each way along
  // the height. Each rank has one neighbour: a halo pass is one transfer, alpha + S/B =
  // 2 us + 1e7 / 25e9 s = 402 us, forward and (the gradients back, which the first piece's
  // backward waits for) backward; the all-reduce on 2 ranks 2(n-1) alpha + 2(n-1)/n S/B =
  // 4 us + 400 us. Each waits for the compute before it (stage_passes.cpp, with_input) and holds
  // the one after: step = 6 ms + 2 * 402 us + 404 us.
  HybridModel model = uniform_model(2, 1e-3, 2e-3, 0);
  ModelPiece& p = model.pieces[1];
  p.halo_down_bytes = p.halo_up_bytes = {10'000'000, 0, 0};
  p.collectives = {{.step = PieceStep::kBeforeForward,
                    .op = CollectiveOp::kAllReduce,
                    .group = PieceGroup::kSpatial,
                    .bytes = 10'000'000}};
  const HybridJob job{
      .degrees = {.cp = 2}, .micro_batches = 1, .spatial_grid = {2, 1, 1}, .iterations = 2};
  const Both r = simulate_and_estimate(model, job, "tests/testdata/sim_star16_25GBps.json");
  const double closed_form = 6e-3 + 2 * 402e-6 + 404e-6;
  EXPECT_NEAR(r.estimated_sec, closed_form, 1e-9);
  EXPECT_NEAR(r.simulated_sec, closed_form, 1e-6 * closed_form);
}

}  // namespace
}  // namespace dtsim::sim
