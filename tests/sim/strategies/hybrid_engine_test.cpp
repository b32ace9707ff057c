// Hybrid-parallel iterations on SimGrid against closed forms and a hand-computed timeline.
// Every TEST runs in its own process (one SimGrid engine per process).
#include <gtest/gtest.h>

#include "sim/run/hybrid_run.h"

namespace dtsim::sim {
namespace {

// `units` single-piece units with forward tf and backward tb seconds each; activations of 1 kB
// between stages; no optimizer work, so an iteration is the pipeline alone.
HybridModel uniform_model(int units, double tf, double tb) {
  HybridModel m;
  for (int u = 0; u < units; ++u) {
    m.pieces.push_back({.name = "l" + std::to_string(u),
                        .unit = u,
                        .forward_sec = tf,
                        .backward_sec = tb,
                        .grad_bytes = 1000,
                        .weight_bytes = 1000,
                        .output_bytes = 1000});
  }
  return m;
}

// 10^21 bytes/s and no latency (tests/testdata/sim_star8_infinite.json): communication takes
// ~1e-18 s, so only the schedule shapes the iteration.
HybridReport run_on_infinite_network(const HybridModel& model, const HybridJob& job) {
  const RunOptions run{.platform_path = "tests/testdata/sim_star8_infinite.json",
                       .ranks = static_cast<int>(job.degrees.ranks())};
  EXPECT_EQ(check_hybrid(model, job), "");
  return replay_hybrid(model, job, run, "uniform", {.micro_batch = 1});
}

struct BubbleCase {
  PipelineSchedule schedule;
  int stages;
  int micro_batches;
};

class PipelineBubble : public testing::TestWithParam<BubbleCase> {};

TEST_P(PipelineBubble, MatchesTheClosedForm) {
  // Narayanan et al. (SC'21), sec. 2.2: with t_f + t_b per micro-batch and stage, GPipe and 1F1B
  // take (m + p - 1)(t_f + t_b) and idle (p - 1)/(m + p - 1) of it; interleaving with V chunks
  // shrinks the bubble to (p - 1)/(V m + p - 1) (chunks of (t_f + t_b)/V each).
  const BubbleCase& c = GetParam();
  const int v = c.schedule.virtual_stages;
  const double tf = 1e-3, tb = 2e-3;  // per stage and micro-batch, over its V chunks
  const HybridModel model = uniform_model(c.stages * v, tf / v, tb / v);
  const HybridJob job{.degrees = {.pp = c.stages},
                      .micro_batches = c.micro_batches,
                      .schedule = c.schedule,
                      .iterations = 2};
  const HybridReport r = run_on_infinite_network(model, job);
  const double p = c.stages, m = c.micro_batches;
  const double bubble = (p - 1) / (v * m + p - 1);
  EXPECT_NEAR(r.replay.iteration_time_sec, m * (tf + tb) / (1 - bubble), 1e-9);
  EXPECT_NEAR(r.bubble_fraction, bubble, 1e-6);
  for (const StageResult& s : r.stages) {
    EXPECT_NEAR(s.compute_sec, m * (tf + tb), 1e-9) << "stage " << s.stage;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, PipelineBubble,
    testing::Values(
        BubbleCase{{.kind = PipelineScheduleKind::kGpipe}, 4, 8}, BubbleCase{{}, 4, 8},
        BubbleCase{{}, 2, 1}, BubbleCase{{}, 8, 3},
        BubbleCase{{.kind = PipelineScheduleKind::kInterleaved, .virtual_stages = 2}, 4, 8},
        BubbleCase{{.kind = PipelineScheduleKind::kInterleaved, .virtual_stages = 3}, 2, 4}));

TEST(Pipeline, TheBubbleIsChargedToThePipelineBehindTensorParallelGathers) {
  // With sequence parallelism every piece's backward starts with a TP all-gather, which waits for
  // the pipeline's gradient; on an infinitely fast network the gathers take no time, so all of a
  // stage's waiting is the pipeline's: the 1F1B bubble (p-1)/(m+p-1) = 1/5, none of it TP.
  HybridModel model = uniform_model(4, 1e-3, 2e-3);
  for (ModelPiece& p : model.pieces) {
    p.tp_in_bytes = p.tp_out_bytes = 1000;
  }
  const HybridJob job{.degrees = {.tp = 2, .pp = 2},
                      .micro_batches = 4,
                      .sequence_parallel = true,
                      .iterations = 1};
  const HybridReport r = run_on_infinite_network(model, job);
  EXPECT_NEAR(r.bubble_fraction, 0.2, 1e-6);
  for (const StageResult& s : r.stages) {
    EXPECT_NEAR(s.waiting_sec.count("tp") ? s.waiting_sec.at("tp") : 0.0, 0.0, 1e-9);
  }
}

TEST(Pipeline, TwoStagesOfOneFOneBByHand) {
  // Stage s: forward 1 ms, backward 2 ms per micro-batch; 4 micro-batches. Stage 0 runs
  // F0 F1 B0 F2 B1 F3 B2 B3, stage 1 F0 B0 F1 B1 F2 B2 F3 B3. By hand (ms):
  //   s0 F0 0-1, F1 1-2; s1 F0 1-2, B0 2-4; s0 B0 4-6; s1 F1 4-5, B1 5-7; s0 F2 6-7, B1 7-9;
  //   s1 F2 7-8, B2 8-10; s0 F3 9-10, B2 10-12; s1 F3 10-11, B3 11-13; s0 B3 13-15.
  // The iteration ends at 15 ms; each stage computes 12 ms and idles 3 (bubble 1/5): stage 0
  // waits for gradients 2 ms before B0 and 1 ms before B3; stage 1 waits 1 ms for its first
  // activation and is idle for the last 2 ms, waiting for nothing of its own.
  const HybridJob job{.degrees = {.pp = 2}, .micro_batches = 4, .iterations = 1};
  const HybridReport r = run_on_infinite_network(uniform_model(2, 1e-3, 2e-3), job);
  EXPECT_NEAR(r.replay.iteration_time_sec, 15e-3, 1e-12);
  ASSERT_EQ(r.stages.size(), 2u);
  for (const StageResult& s : r.stages) {
    EXPECT_NEAR(s.compute_sec, 12e-3, 1e-12);
  }
  EXPECT_NEAR(r.stages[0].waiting_sec.at("pp"), 3e-3, 1e-9);
  EXPECT_NEAR(r.stages[0].idle_sec, 0, 1e-9);
  EXPECT_NEAR(r.stages[1].waiting_sec.at("pp"), 1e-3, 1e-9);
  EXPECT_NEAR(r.stages[1].idle_sec, 2e-3, 1e-9);
  EXPECT_NEAR(r.bubble_fraction, 0.2, 1e-9);
}

// One iteration of a one-piece model on `tp` ranks of `platform`, sequence parallelism with TP
// overlapped.
HybridReport replay_one_block(int tp, const std::string& platform, const ModelPiece& block) {
  HybridModel model;
  model.pieces.push_back(block);
  const HybridJob job{
      .degrees = {.tp = tp}, .sequence_parallel = true, .tp_overlap = true, .iterations = 1};
  EXPECT_EQ(check_hybrid(model, job), "");
  const RunOptions run{.platform_path = platform, .ranks = tp};
  return replay_hybrid(model, job, run, "block", {.micro_batch = 1});
}

TEST(OverlappedTensorParallelism, HidesTheRingStepsBehindTheGemmChunksByHand) {
  // One block piece on tp = 2 ranks of a star with 1 GB/s and 1 us per (split-duplex) link:
  // forward 10 ms, backward 20 ms, a 2 ms GEMM beside each TP collective; gathered input
  // 2 MB, reduce-scattered output 8 MB. A ring step moves half: T_in = 2 us + 1 MB / 1 GB/s =
  // 1.002 ms, T_out = 4.002 ms; both ranks' steps run at once on separate directions.
  // By hand (ms), forward: input GEMM chunks [0, 1] beside the step [0, 1.002], then
  // [1.002, 2.002]; the rest of the forward, 10 - 2 - 2 = 6: [2.002, 8.002]; output GEMM chunks
  // [8.002, 9.002] and [9.002, 10.002], the first one's partial sums on their way [9.002,
  // 13.004]; the reduced output at 13.004. Backward: the output gradient's gather beside the
  // output GEMM's input-gradient chunks: [13.004, 14.004], the step [13.004, 17.006], the second
  // chunk [17.006, 18.006]; the rest, 20 - 2 - 2 = 16: [18.006, 34.006]; the input gradient's
  // reduce-scatter (a 1 MB ring step, ~1 ms) beside the weight-gradient GEMM [34.006, 36.006].
  // The iteration ends at 36.006 ms; the compute stream waited 0.002 + 3.002 + 3.002 ms for TP.
  const HybridReport r = replay_one_block(2, "tests/testdata/sim_star2_1GBps.json",
                                          {.name = "block",
                                           .forward_sec = 10e-3,
                                           .backward_sec = 20e-3,
                                           .output_bytes = 1000,
                                           .tp_in_bytes = 2000000,
                                           .tp_out_bytes = 8000000,
                                           .tp_in_gemm_sec = 2e-3,
                                           .tp_out_gemm_sec = 2e-3});
  EXPECT_NEAR(r.replay.iteration_time_sec, 36.006e-3, 1e-9);
  ASSERT_EQ(r.stages.size(), 1u);
  EXPECT_NEAR(r.stages[0].compute_sec, 30e-3, 1e-12);
  EXPECT_NEAR(r.stages[0].waiting_sec.at("tp"), 6.006e-3, 1e-9);
}

TEST(OverlappedTensorParallelism, FourRanksStepAroundTheRingByHand) {
  // tp = 4 on a star with 1 GB/s and 1 us per link: forward 20 ms, backward 40 ms, a 4 ms GEMM
  // (chunks of 1 ms) beside each TP collective; gathered input 3 MB, reduce-scattered output
  // 12 MB. A ring step is a collective of bytes / 3: its 3 sub-steps each move a quarter of that
  // to the next rank, 2 us + B / 12 / 1 GB/s each: 0.756 ms per input step, 3.006 ms per
  // output step. By hand (ms), forward: the input steps [0, 0.756], [0.756, 1.512],
  // [1.512, 2.268] end before the chunks that need them, [0, 4] with no wait; the rest,
  // 20 - 8 = 12: [4, 16]; output chunks [16, 20], the steps after the first chunk and each after
  // the previous: [17, 20.006], [20.006, 23.012], [23.012, 26.018]: the output at 26.018.
  // Backward: the output gradient's chunks [26.018, 27.018], then each after its step: steps
  // [26.018, 29.024], [29.024, 32.030], [32.030, 35.036], chunks ending 30.024, 33.030,
  // 36.036; the rest, 40 - 8 = 32: [36.036, 68.036]; the input gradient's reduce-scatter (3
  // sub-steps of 0.75 MB, 2.256 ms) beside the 4 ms weight-gradient GEMM: the iteration ends at
  // 72.036 ms, the compute stream having waited 6.018 + 3 * 2.006 = 12.036 ms for TP.
  const HybridReport r = replay_one_block(4, "tests/testdata/sim_star4_1GBps.json",
                                          {.name = "block",
                                           .forward_sec = 20e-3,
                                           .backward_sec = 40e-3,
                                           .output_bytes = 1000,
                                           .tp_in_bytes = 3000000,
                                           .tp_out_bytes = 12000000,
                                           .tp_in_gemm_sec = 4e-3,
                                           .tp_out_gemm_sec = 4e-3});
  EXPECT_NEAR(r.replay.iteration_time_sec, 72.036e-3, 1e-9);
  ASSERT_EQ(r.stages.size(), 1u);
  EXPECT_NEAR(r.stages[0].compute_sec, 60e-3, 1e-12);
  EXPECT_NEAR(r.stages[0].waiting_sec.at("tp"), 12.036e-3, 1e-9);
}

}  // namespace
}  // namespace dtsim::sim
