// The hybrid-parallel graph builder on hand-made models, without SimGrid: equivalence with
// data parallelism, validity (the graph validator, deadlock check included) for every kind of
// parallelism, and each communicator's bytes per iteration against closed forms.
#include "sim/strategies/hybrid.h"

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "sim/graph/graph_validate.h"
#include "sim/strategies/data_parallel.h"
#include "sim/strategies/model_pieces.h"

namespace dtsim::sim {
namespace {

// Three layers, gradients of 3 MiB, none and 1 MiB (fp32), as tests/testdata/sim_three_layers.
workloads::Workload three_layers() {
  constexpr std::uint64_t kMiB = 1 << 20;
  workloads::Workload w{.model = "three", .precision = "fp32", .optimizer_sec = 0.5e-3};
  w.layers = {{.name = "l0", .forward_sec = 1e-3, .backward_sec = 0.3e-3, .param_bytes = 3 * kMiB},
              {.name = "l1", .forward_sec = 1e-3, .backward_sec = 0.5e-3},
              {.name = "l2", .forward_sec = 1e-3, .backward_sec = 2e-3, .param_bytes = kMiB}};
  return w;
}

// `blocks` transformer-like units of two pieces each between an embedding and a head, with
// every communication field set (bytes in round numbers, so sums are easy by hand).
HybridModel toy_model(int blocks) {
  HybridModel m{.first_units = 1, .last_units = 1, .optimizer_sec = 1e-3};
  m.pieces.push_back({.name = "embedding",
                      .unit = 0,
                      .forward_sec = 1e-4,
                      .backward_sec = 1e-4,
                      .grad_bytes = 4000,
                      .weight_bytes = 4000,
                      .output_bytes = 1000,
                      .tp_out_bytes = 100});
  for (int b = 0; b < blocks; ++b) {
    for (const char* part : {"attention", "mlp"}) {
      m.pieces.push_back({.name = "layers." + std::to_string(b) + "." + part,
                          .unit = 1 + b,
                          .forward_sec = 1e-3,
                          .backward_sec = 2e-3,
                          .recompute_sec = part == std::string("attention") ? 5e-4 : 0,
                          .grad_bytes = 8000,
                          .weight_bytes = 8000,
                          .output_bytes = 1000,
                          .tp_in_bytes = 100,
                          .tp_out_bytes = 100,
                          .cp_kv_bytes = part == std::string("attention") ? 50u : 0u});
    }
  }
  m.pieces.push_back({.name = "head",
                      .unit = blocks + 1,
                      .forward_sec = 1e-4,
                      .backward_sec = 1e-4,
                      .grad_bytes = 4000,
                      .weight_bytes = 4000,
                      .tp_in_bytes = 100,
                      .tp_loss_bytes = 10});
  return m;
}

// toy_model with a 0.2 ms GEMM beside each TP collective of its blocks (what --tp-overlap runs
// beside).
HybridModel toy_model_with_gemms(int blocks) {
  HybridModel model = toy_model(blocks);
  for (ModelPiece& p : model.pieces) {
    if (p.name.starts_with("layers.")) {
      p.tp_in_gemm_sec = p.tp_out_gemm_sec = 2e-4;
    }
  }
  return model;
}

void expect_valid(const ExecutionGraph& g) {
  const std::vector<std::string> problems = validate_execution_graph(g);
  EXPECT_TRUE(problems.empty()) << problems.front();
}

// Per communicator kind (its name up to the first '.'), summed over every rank's nodes of
// iteration 0: collective bytes by op, and send bytes.
std::map<std::string, std::uint64_t> bytes_by(const ExecutionGraph& g, NodeKind kind,
                                              CollectiveOp op = CollectiveOp::kAllReduce) {
  std::map<std::string, std::uint64_t> bytes;
  for (int r = 0; r < g.rank_count(); ++r) {
    for (const Node& n : g.program_of(r).nodes) {
      if (n.kind == kind && n.iteration == 0 && (kind != NodeKind::kCollective || n.op == op)) {
        const std::string& name = g.communicator_of(r, n).name;
        bytes[name.substr(0, name.find('.'))] += n.bytes;
      }
    }
  }
  return bytes;
}

TEST(Hybrid, DataParallelOnlyIsTheDataParallelGraph) {
  // tp = cp = pp = ep = 1, ZeRO 0, 1F1B: the same graph build_data_parallel builds, node for
  // node, with and without gradient accumulation.
  const workloads::Workload w = three_layers();
  for (int steps : {1, 3}) {
    const ExecutionGraph dp =
        build_data_parallel(w, {.ranks = 4, .iterations = 2, .accumulation_steps = steps});
    const HybridJob job{.degrees = {.dp = 4}, .micro_batches = steps, .iterations = 2};
    const HybridModel model = model_from_trace(w);
    ASSERT_EQ(check_hybrid(model, job), "");
    EXPECT_EQ(build_hybrid(model, job), dp) << steps << " micro-batches";
  }
}

TEST(Hybrid, EveryKindOfParallelismBuildsAValidGraph) {
  const HybridModel model = toy_model(4);
  const PipelineSchedule one_f_one_b;
  const PipelineSchedule gpipe{.kind = PipelineScheduleKind::kGpipe};
  const PipelineSchedule interleaved{.kind = PipelineScheduleKind::kInterleaved,
                                     .virtual_stages = 2};
  const std::vector<HybridJob> jobs{
      {.degrees = {.tp = 2, .dp = 2}, .micro_batches = 2},
      {.degrees = {.tp = 2, .dp = 2}, .micro_batches = 2, .sequence_parallel = true},
      {.degrees = {.tp = 2, .dp = 2, .pp = 2}, .micro_batches = 4, .schedule = gpipe},
      {.degrees = {.dp = 2, .pp = 4}, .micro_batches = 8, .schedule = one_f_one_b},
      {.degrees = {.pp = 2}, .micro_batches = 4, .schedule = interleaved},
      {.degrees = {.cp = 2, .dp = 2}, .micro_batches = 1},
      {.degrees = {.cp = 4}, .micro_batches = 1, .full_recompute = true},
      {.degrees = {.dp = 4}, .micro_batches = 2, .zero_stage = 1},
      {.degrees = {.dp = 4, .pp = 2}, .micro_batches = 2, .zero_stage = 3},
      {.degrees = {.tp = 2, .cp = 2, .dp = 2, .pp = 2},
       .micro_batches = 4,
       .schedule = interleaved,
       .zero_stage = 1,
       .sequence_parallel = true}};
  for (const HybridJob& job : jobs) {
    SCOPED_TRACE(parallel_name(job.degrees) + " " + pipeline_schedule_name(job.schedule) +
                 " zero " + std::to_string(job.zero_stage));
    ASSERT_EQ(check_hybrid(model, job), "");
    const ExecutionGraph g = build_hybrid(model, job);
    EXPECT_EQ(g.rank_count(), job.degrees.ranks());
    EXPECT_EQ(g.programs.size(), static_cast<std::size_t>(job.degrees.pp));
    expect_valid(g);
  }
  // Overlapped TP beside every other kind: its ring sends and receives match and nothing waits
  // in a cycle (the validator's deadlock check), with full or selective recomputation.
  const HybridModel gemms = toy_model_with_gemms(4);
  for (HybridJob job : jobs) {
    if (job.degrees.tp < 2) {
      continue;
    }
    job.sequence_parallel = job.tp_overlap = true;
    for (bool full : {false, true}) {
      job.full_recompute = full;
      SCOPED_TRACE(parallel_name(job.degrees) + " overlapped, full recompute " +
                   std::to_string(full));
      ASSERT_EQ(check_hybrid(gemms, job), "");
      expect_valid(build_hybrid(gemms, job));
    }
  }
  const HybridJob zero3{.degrees = {.tp = 2, .dp = 2, .pp = 2},
                        .micro_batches = 2,
                        .zero_stage = 3,
                        .sequence_parallel = true,
                        .tp_overlap = true};
  ASSERT_EQ(check_hybrid(gemms, zero3), "");
  expect_valid(build_hybrid(gemms, zero3));
}

TEST(Hybrid, TensorParallelAllReducesPerBlock) {
  // Megatron-LM (Shoeybi et al. 2019, fig. 3): per block two all-reduces forward (after the
  // attention and MLP outputs) and two backward (their inputs); the embedding one forward, the
  // head one backward and its loss's one forward. 4 blocks, 3 micro-batches, tp = 2, 2 ranks:
  // per rank 3 * (4 * 4 * 100 + 100 + 100 + 10) bytes.
  const HybridJob job{.degrees = {.tp = 2}, .micro_batches = 3};
  const ExecutionGraph g = build_hybrid(toy_model(4), job);
  EXPECT_EQ(bytes_by(g, NodeKind::kCollective)["tp"], 2u * 3 * (4 * 4 * 100 + 210));
  // With sequence parallelism the same tensors are all-gathered and reduce-scattered instead:
  // per block and micro-batch, 2 gathers + 2 scatters forward and 2 + 2 backward (the
  // embedding: a scatter forward, a gather backward; the head: a gather forward, a scatter
  // backward).
  HybridJob sp = job;
  sp.sequence_parallel = true;
  const ExecutionGraph s = build_hybrid(toy_model(4), sp);
  EXPECT_EQ(bytes_by(s, NodeKind::kCollective, CollectiveOp::kAllGather)["tp"],
            2u * 3 * (4 * 4 * 100 + 200));
  EXPECT_EQ(bytes_by(s, NodeKind::kCollective, CollectiveOp::kReduceScatter)["tp"],
            2u * 3 * (4 * 4 * 100 + 200));
  EXPECT_EQ(bytes_by(s, NodeKind::kCollective)["tp"], 2u * 3 * 10);  // the loss only
}

TEST(Hybrid, Fp8GathersMoveHalfTheBytesAndTheScattersStay) {
  // torchao's float8 TP plan (workloads/TRANSFORMER.md, "Float8"): a block piece's forward
  // gather of its input and backward gather of its output gradient move fp8 copies of the
  // 16-bit tensors, 50 of the 100 bytes; the reduce-scatters stay 16-bit, and the embedding's
  // and head's gathers (bf16 pieces) too. So per rank and micro-batch 4 blocks * 4 gathers * 50
  // + 200 (TensorParallelAllReducesPerBlock's 4 * 4 * 100 + 200 otherwise), with and without
  // overlapping the gathers beside their GEMMs.
  HybridModel model = toy_model(4);
  for (ModelPiece& p : model.pieces) {
    p.tp_gathers_fp8 = p.unit >= 1 && p.unit <= 4;
    p.tp_in_gemm_sec = p.tp_out_gemm_sec = p.tp_gathers_fp8 ? 2e-4 : 0;
  }
  for (bool overlap : {false, true}) {
    const HybridJob sp{
        .degrees = {.tp = 2}, .micro_batches = 3, .sequence_parallel = true, .tp_overlap = overlap};
    ASSERT_EQ(check_hybrid(model, sp), "");
    const ExecutionGraph g = build_hybrid(model, sp);
    expect_valid(g);
    // Overlapped, a gather goes round the ring in tp - 1 = 1 step of the whole tensor.
    EXPECT_EQ(bytes_by(g, NodeKind::kCollective, CollectiveOp::kAllGather)["tp"],
              2u * 3 * (4 * 4 * 50 + 200))
        << overlap;
    EXPECT_EQ(bytes_by(g, NodeKind::kCollective, CollectiveOp::kReduceScatter)["tp"],
              2u * 3 * (4 * 4 * 100 + 200))
        << overlap;
  }
}

TEST(Hybrid, FullRecomputeRedoesTheForwardAllReducesUnlessItStopsEarly) {
  // Every block piece recomputed: the whole forward again redoes both of a block's forward
  // all-reduces (Megatron-LM's full recomputation), per block and micro-batch 2 * 100 bytes
  // more on each of the 2 ranks; PyTorch's early stop ends before the MLP's down projection,
  // so only the attention's is redone, 100 bytes. Over the 4 * 4 * 100 + 210 of no
  // recomputation (TensorParallelAllReducesPerBlock), 3 micro-batches.
  HybridModel model = toy_model(4);
  for (ModelPiece& p : model.pieces) {
    p.recompute_sec = p.unit >= 1 && p.unit <= 4 ? 5e-4 : 0;
  }
  HybridJob job{.degrees = {.tp = 2}, .micro_batches = 3, .full_recompute = true};
  EXPECT_EQ(bytes_by(build_hybrid(model, job), NodeKind::kCollective)["tp"],
            2u * 3 * (4 * 4 * 100 + 210 + 4 * 2 * 100));
  for (ModelPiece& p : model.pieces) {
    p.recompute_skips_output = p.name.ends_with(".mlp");
  }
  const ExecutionGraph early = build_hybrid(model, job);
  expect_valid(early);
  EXPECT_EQ(bytes_by(early, NodeKind::kCollective)["tp"],
            2u * 3 * (4 * 4 * 100 + 210 + 4 * 1 * 100));
  // Overlapped TP: the reduce-scatter beside the down projection is not redone either, only
  // the gathers before the pieces' first GEMMs and the attention's scatter (each 100 bytes in
  // tp - 1 = 1 ring step of 100): 3 per block recomputed, against 4 without early stop.
  HybridModel gemms = toy_model_with_gemms(4);
  for (ModelPiece& p : gemms.pieces) {
    p.recompute_sec = p.unit >= 1 && p.unit <= 4 ? 5e-4 : 0;
  }
  job.sequence_parallel = job.tp_overlap = true;
  const std::uint64_t full_bytes =
      bytes_by(build_hybrid(gemms, job), NodeKind::kCollective, CollectiveOp::kReduceScatter)["tp"];
  for (ModelPiece& p : gemms.pieces) {
    p.recompute_skips_output = p.name.ends_with(".mlp");
  }
  const ExecutionGraph overlapped = build_hybrid(gemms, job);
  expect_valid(overlapped);
  EXPECT_EQ(bytes_by(overlapped, NodeKind::kCollective, CollectiveOp::kReduceScatter)["tp"],
            full_bytes - 2u * 3 * 4 * 100);
}

// The compute seconds of iteration 0 in `g`'s first program.
double compute_sec(const ExecutionGraph& g) {
  double sec = 0;
  for (const Node& n : g.programs.front().nodes) {
    sec += n.kind == NodeKind::kCompute && n.iteration == 0 ? n.duration_sec : 0;
  }
  return sec;
}

// Per kind of communicator, the count of `op` collectives in iteration 0 over every rank.
std::map<std::string, int> count_by(const ExecutionGraph& g, CollectiveOp op) {
  std::map<std::string, int> count;
  for (int r = 0; r < g.rank_count(); ++r) {
    for (const Node& n : g.program_of(r).nodes) {
      if (n.kind == NodeKind::kCollective && n.iteration == 0 && n.op == op) {
        const std::string& name = g.communicator_of(r, n).name;
        ++count[name.substr(0, name.find('.'))];
      }
    }
  }
  return count;
}

TEST(Hybrid, OverlappedTensorParallelismStepsAroundTheRing) {
  // toy_model's blocks with a 0.2 ms GEMM beside each TP collective. Overlapped, a block
  // piece's forward gather and reduce-scatter and its backward gather become tp - 1 ring steps,
  // each a collective of 100 / (tp - 1) bytes (bytes / tp per rank to the next); its backward
  // reduce-scatter stays one collective (beside the weight gradient's GEMM); the embedding and
  // the head, with no such GEMM, keep theirs. The bytes are the plain job's: per rank and
  // micro-batch 16 gathers and 16 reduce-scatters of 100 in the blocks, 2 of each outside.
  const HybridModel model = toy_model_with_gemms(4);
  for (int tp : {2, 5}) {
    SCOPED_TRACE("tp " + std::to_string(tp));
    const HybridJob plain{.degrees = {.tp = tp}, .micro_batches = 3, .sequence_parallel = true};
    HybridJob job = plain;
    job.tp_overlap = true;
    ASSERT_EQ(check_hybrid(model, job), "");
    const ExecutionGraph g = build_hybrid(model, job);
    expect_valid(g);
    const int ranks = tp, steps = tp - 1;
    for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
      EXPECT_EQ(bytes_by(g, NodeKind::kCollective, op)["tp"],
                static_cast<std::uint64_t>(ranks) * 3 * (16 * 100 + 200));
    }
    // Per rank and micro-batch, 8 block pieces: 2 gathers of tp - 1 steps; a reduce-scatter of
    // tp - 1 steps and one whole; and the embedding's and the head's 2 of each.
    EXPECT_EQ(count_by(g, CollectiveOp::kAllGather)["tp"], ranks * 3 * (8 * 2 * steps + 2));
    EXPECT_EQ(count_by(g, CollectiveOp::kReduceScatter)["tp"], ranks * 3 * (8 * (steps + 1) + 2));
    // The GEMMs run in tp chunks; the compute is the same.
    EXPECT_NEAR(compute_sec(g), compute_sec(build_hybrid(model, plain)), 1e-12);
  }
  // Overlapping needs sequence parallelism's gathers and reduce-scatters.
  EXPECT_TRUE(
      check_hybrid(model, {.degrees = {.tp = 2}, .tp_overlap = true}).starts_with("tp_overlap:"));
}

TEST(Hybrid, OverlappedGathersWaitForTheGradientTheyPassOn) {
  // A backward step of stage 0 starts with the gradient from stage 1, which the first piece's
  // overlapped gather passes around the TP ring: its first step waits for the receive, also
  // when a selective recomputation (toy_model's attention) runs first on the compute stream.
  const HybridJob job{.degrees = {.tp = 2, .pp = 2},
                      .micro_batches = 4,
                      .sequence_parallel = true,
                      .tp_overlap = true,
                      .iterations = 1};
  const HybridModel model = toy_model_with_gemms(4);
  ASSERT_EQ(check_hybrid(model, job), "");
  const ExecutionGraph g = build_hybrid(model, job);
  expect_valid(g);
  const Program& stage0 = g.programs.front();
  std::int32_t received = -1;  // the last gradient received, until a gather passes it on
  int checked = 0;
  for (std::size_t i = 0; i < stage0.nodes.size(); ++i) {
    const Node& n = stage0.nodes[i];
    const std::string& role = n.comm >= 0 ? stage0.comms[static_cast<std::size_t>(n.comm)] : "";
    if (n.kind == NodeKind::kRecv && role == "pp_grad_in") {
      received = static_cast<std::int32_t>(i);
    } else if (n.kind == NodeKind::kCollective && n.op == CollectiveOp::kAllGather &&
               role == "tp" && received >= 0) {
      const auto deps = stage0.deps_of(n);
      EXPECT_NE(std::find(deps.begin(), deps.end(), received), deps.end()) << "node " << i;
      received = -1;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);  // one per micro-batch's backward
}

TEST(Hybrid, PipelineSendsTwoActivationsPerMicroBatchAndBoundary) {
  // The closed form: 2 * m * (b * s * h * dtype) per stage boundary (activations
  // forward, their gradients backward). 4 stages (3 boundaries), m = 8, boundary 1000 bytes,
  // dp = 2 pipelines.
  for (const PipelineSchedule& schedule :
       {PipelineSchedule{}, PipelineSchedule{.kind = PipelineScheduleKind::kGpipe}}) {
    const HybridJob job{.degrees = {.dp = 2, .pp = 4}, .micro_batches = 8, .schedule = schedule};
    const ExecutionGraph g = build_hybrid(toy_model(4), job);
    const auto sent = bytes_by(g, NodeKind::kSend);
    EXPECT_EQ(sent.at("pp_act") + sent.at("pp_grad"), 2u * 3 * 2 * 8 * 1000);
    EXPECT_EQ(bytes_by(g, NodeKind::kRecv), sent);
  }
  // Interleaved with V = 2 on 2 devices: 4 virtual stages, 3 boundaries, one of which wraps
  // from the last device to the first.
  const HybridJob v2{.degrees = {.pp = 2},
                     .micro_batches = 4,
                     .schedule = {.kind = PipelineScheduleKind::kInterleaved, .virtual_stages = 2}};
  const auto sent = bytes_by(build_hybrid(toy_model(4), v2), NodeKind::kSend);
  EXPECT_EQ(sent.at("pp_act") + sent.at("pp_grad"), 2u * 3 * 4 * 1000);
}

TEST(Hybrid, PipelineTransfersScatterOverTensorParallelRanksAndGatherAfter) {
  // Megatron-LM's scatter/gather (Narayanan et al. 2021, section 4.1): with tp = 2 and no
  // sequence parallelism, each TP rank sends its half of the 1000-byte boundary, and the
  // receiver all-gathers the whole 1000 bytes over its TP group. 4 stages (3 boundaries), m = 8,
  // two directions, 2 TP ranks per stage: 2 * 3 * 8 * 2 * 500 bytes sent, and as many
  // all-gathers of 1000 bytes (one per receive) beside the 3 blocks' TP all-reduces, which stay.
  HybridModel model = toy_model(4);
  model.scatter_gather_boundary = true;
  const HybridJob job{.degrees = {.tp = 2, .pp = 4}, .micro_batches = 8};
  ASSERT_EQ(check_hybrid(model, job), "");
  const ExecutionGraph g = build_hybrid(model, job);
  expect_valid(g);
  const auto sent = bytes_by(g, NodeKind::kSend);
  EXPECT_EQ(sent.at("pp_act") + sent.at("pp_grad"), 2u * 3 * 8 * 2 * 500);
  EXPECT_EQ(bytes_by(g, NodeKind::kRecv), sent);
  EXPECT_EQ(bytes_by(g, NodeKind::kCollective, CollectiveOp::kAllGather)["tp"],
            2u * 3 * 8 * 2 * 1000);
  // Without it (the model's default), each TP rank sends all 1000 bytes and nothing gathers.
  const ExecutionGraph whole = build_hybrid(toy_model(4), job);
  const auto sent_whole = bytes_by(whole, NodeKind::kSend);
  EXPECT_EQ(sent_whole.at("pp_act") + sent_whole.at("pp_grad"), 2u * 3 * 8 * 2 * 1000);
  EXPECT_EQ(bytes_by(whole, NodeKind::kCollective, CollectiveOp::kAllGather).count("tp"), 0U);
  // A boundary that does not split evenly goes whole (as Megatron-LM's override): 1001 bytes.
  for (ModelPiece& piece : model.pieces) {
    piece.output_bytes = piece.output_bytes == 0 ? 0 : 1001;
  }
  const auto sent_odd = bytes_by(build_hybrid(model, job), NodeKind::kSend);
  EXPECT_EQ(sent_odd.at("pp_act") + sent_odd.at("pp_grad"), 2u * 3 * 8 * 2 * 1001);
}

// Ring bytes per rank of a collective of nccl-tests size S on p ranks (Patarasuk and Yuan):
// all-reduce 2 (p-1)/p S, all-gather and reduce-scatter (p-1)/p S.
double ring_bytes(const ExecutionGraph& g, int p) {
  double bytes = 0;
  for (const Node& n : g.program_of(0).nodes) {
    if (n.kind == NodeKind::kCollective && n.iteration == 0) {
      bytes += (n.op == CollectiveOp::kAllReduce ? 2.0 : 1.0) * (p - 1) / p * n.bytes;
    }
  }
  return bytes;
}

TEST(Hybrid, StagesSendTheOutputOfTheirLastPiece) {
  // Pieces output 1000 + 10 * i bytes. pp = 2, stage_units {2, 2}: stage 0 = embedding (piece
  // 0) + blocks 0, 1 (pieces 1-4), so it sends piece 4's output, 1040 bytes, per micro-batch
  // forward, and stage 1 sends back a gradient of the same size.
  HybridModel model = toy_model(4);
  for (std::size_t i = 0; i < model.pieces.size(); ++i) {
    model.pieces[i].output_bytes = 1000 + 10 * i;
  }
  const HybridJob job{.degrees = {.pp = 2}, .micro_batches = 3, .stage_units = {2, 2}};
  ASSERT_EQ(check_hybrid(model, job), "");
  const auto sent = bytes_by(build_hybrid(model, job), NodeKind::kSend);
  EXPECT_EQ(sent.at("pp_act"), 3u * 1040);
  EXPECT_EQ(sent.at("pp_grad"), 3u * 1040);
  model.pieces[4].output_bytes = 0;  // unknown: a stage cannot end there
  EXPECT_TRUE(
      check_hybrid(model, job).starts_with("pp: a pipeline stage ending with layers.1.mlp"));
}

TEST(Hybrid, ATraceWithActivationBytesPipelines) {
  // Trace format 3: l0, l1, l2 output 100, 200, 300 bytes. Split 2 + 1 layers over 2 stages:
  // stage 0 sends l1's output (200 bytes) per micro-batch, and gets its gradient back.
  workloads::Workload w = three_layers();
  w.layers[0].activation_bytes = 100;
  w.layers[1].activation_bytes = 200;
  w.layers[2].activation_bytes = 300;
  const HybridJob job{.degrees = {.pp = 2}, .micro_batches = 4, .stage_units = {2, 1}};
  const HybridModel model = model_from_trace(w);
  ASSERT_EQ(check_hybrid(model, job), "");
  const auto sent = bytes_by(build_hybrid(model, job), NodeKind::kSend);
  EXPECT_EQ(sent.at("pp_act"), 4u * 200);
  EXPECT_EQ(sent.at("pp_grad"), 4u * 200);
}

TEST(Hybrid, TiedEmbeddingsAreReducedBetweenFirstAndLastStage) {
  // Megatron-LM (finalize_model_grads, embedding group): with a pipeline the last stage keeps a
  // copy of the tied embedding, its gradient goes into that stage's data-parallel buckets, and
  // the two copies are all-reduced once per iteration. pp = 4, dp = 2: 2 embedding groups of 2.
  HybridModel model = toy_model(4);
  model.tied_grad_bytes = 3000;
  model.tied_weight_bytes = 3000;
  const HybridJob job{.degrees = {.dp = 2, .pp = 4}, .micro_batches = 4};
  const ExecutionGraph g = build_hybrid(model, job);
  expect_valid(g);
  EXPECT_EQ(bytes_by(g, NodeKind::kCollective)["emb"], 4u * 3000);  // 4 ranks, once each
  // Stage 3's gradients: 1 block (16000) + head (4000) + the copy (3000), each of its 2 ranks.
  std::uint64_t last_stage_dp = 0;
  for (const Node& n : g.programs[3].nodes) {
    if (n.kind == NodeKind::kCollective && n.iteration == 0 && n.label >= 0) {
      last_stage_dp += n.bytes;
    }
  }
  EXPECT_EQ(last_stage_dp, 16000u + 4000 + 3000);
  // Without a pipeline the head uses the embedding's own weight: nothing extra.
  const ExecutionGraph flat = build_hybrid(model, {.degrees = {.dp = 2}, .micro_batches = 1});
  EXPECT_EQ(bytes_by(flat, NodeKind::kCollective).count("emb"), 0u);
}

TEST(Hybrid, ZeroThreeMovesOneAndAHalfTimesTheBytesOfDataParallel) {
  // ZeRO (Rajbhandari et al. 2020, sec. 7.2.2): all-gather the parameters forward and backward
  // and reduce-scatter the gradients = 3 (p-1)/p Psi against all-reduce's 2 (p-1)/p Psi, with
  // weights as large as gradients (fp32 here). ZeRO-1/2 reduce-scatter gradients and gather the
  // parameters after the step: the same volume as the all-reduce.
  const HybridModel model = toy_model(3);
  const HybridJob dp{.degrees = {.dp = 8}, .micro_batches = 1};
  HybridJob zero1 = dp;
  zero1.zero_stage = 1;
  HybridJob zero3 = dp;
  zero3.zero_stage = 3;
  const double plain = ring_bytes(build_hybrid(model, dp), 8);
  EXPECT_DOUBLE_EQ(ring_bytes(build_hybrid(model, zero3), 8), 1.5 * plain);
  EXPECT_DOUBLE_EQ(ring_bytes(build_hybrid(model, zero1), 8), plain);
  // Plain DP: every gradient once, 2 (p-1)/p of (4000 + 3 * 16000 + 4000) bytes.
  EXPECT_DOUBLE_EQ(plain, 2.0 * 7 / 8 * 56000);
}

// toy_model with its MLP pieces as experts (an MoE model's expert pieces).
HybridModel toy_moe_model(int blocks) {
  HybridModel model = toy_model(blocks);
  for (ModelPiece& p : model.pieces) {
    p.expert = p.name.ends_with(".mlp");
  }
  return model;
}

TEST(Hybrid, ZeroThreeGathersAndReducesExpertsOverTheExpertDataGroup) {
  // toy_moe_model(2), dp = 4, ep = 2, one micro-batch, summed over the 4 ranks of iteration 0.
  // Dense weights and gradients: embedding 4000 + 2 attention 8000 + head 4000 = 24000 bytes;
  // experts: 2 MLP 8000 = 16000 (HYBRID.md, "ZeRO-3 / FSDP"): each unit gathered before its
  // forward and its backward, the dense part on dp_gather, the experts' on edp_gather; its
  // gradients reduce-scattered once, on dp and edp.
  const HybridModel model = toy_moe_model(2);
  const HybridJob job{.degrees = {.dp = 4, .ep = 2}, .micro_batches = 1, .zero_stage = 3};
  ASSERT_EQ(check_hybrid(model, job), "");
  const ExecutionGraph g = build_hybrid(model, job);
  expect_valid(g);
  const auto gathered = bytes_by(g, NodeKind::kCollective, CollectiveOp::kAllGather);
  EXPECT_EQ(gathered.at("dp_gather"), 4u * 2 * 24000);
  EXPECT_EQ(gathered.at("edp_gather"), 4u * 2 * 16000);
  const auto reduced = bytes_by(g, NodeKind::kCollective, CollectiveOp::kReduceScatter);
  EXPECT_EQ(reduced.at("dp"), 4u * 24000);
  EXPECT_EQ(reduced.at("edp"), 4u * 16000);
  // With tensor parallelism, a pipeline and several micro-batches too, the graph is valid.
  expect_valid(build_hybrid(
      toy_moe_model(4),
      {.degrees = {.tp = 2, .dp = 4, .pp = 2, .ep = 2}, .micro_batches = 4, .zero_stage = 3}));
  // Each expert gather has 2 ranks (dp / ep), each dense one 4.
  for (int r = 0; r < g.rank_count(); ++r) {
    for (const Node& n : g.program_of(r).nodes) {
      if (n.kind == NodeKind::kCollective && n.op == CollectiveOp::kAllGather) {
        const Communicator& c = g.communicator_of(r, n);
        EXPECT_EQ(c.ranks.size(), c.name.starts_with("edp_gather") ? 2u : 4u) << c.name;
      }
    }
  }
}

TEST(Hybrid, ZeroThreeGathersFollowTheStepAndEachOtherOnOneStream) {
  // FSDP gathers the weights the last optimizer step updated, and runs all its gathers (and
  // all its reduce-scatters) on one stream: the dense collectives wait for the expert ones
  // before them, which are on another communicator (HYBRID.md, "ZeRO-3 / FSDP").
  const HybridModel model = toy_moe_model(2);
  HybridJob job{.degrees = {.dp = 4, .ep = 2}, .micro_batches = 2, .zero_stage = 3};
  job.iterations = 2;
  const ExecutionGraph g = build_hybrid(model, job);
  for (int r = 0; r < g.rank_count(); ++r) {
    const Program& p = g.program_of(r);
    std::int32_t optimizer = -1, expert_gather = -1, expert_reduce = -1;
    bool first_of_step = true;
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(p.nodes.size()); ++i) {
      const Node& n = p.nodes[static_cast<std::size_t>(i)];
      const auto deps = p.deps_of(n);
      const auto waits_for = [&](std::int32_t d) {
        return std::find(deps.begin(), deps.end(), d) != deps.end();
      };
      if (n.kind == NodeKind::kCompute && n.phase == Phase::kOptimizer) {
        optimizer = i;
        first_of_step = true;
      }
      if (n.kind != NodeKind::kCollective) {
        continue;
      }
      const std::string& comm = g.communicator_of(r, n).name;
      const std::string& piece = g.layers[static_cast<std::size_t>(n.layer)];
      if (n.op == CollectiveOp::kAllGather) {
        if (first_of_step && optimizer >= 0) {
          EXPECT_TRUE(waits_for(optimizer)) << "rank " << r << " node " << i;
        }
        first_of_step = false;
        if (comm.starts_with("edp_gather")) {
          EXPECT_TRUE(piece.ends_with(".mlp")) << piece;  // tagged with the expert piece
          expert_gather = i;
        } else if (expert_gather >= 0 && expert_gather > optimizer) {
          EXPECT_TRUE(waits_for(expert_gather)) << "rank " << r << " node " << i;
        }
      }
      if (n.op == CollectiveOp::kReduceScatter) {
        if (comm.starts_with("edp")) {
          EXPECT_TRUE(piece.ends_with(".mlp")) << piece;
          expert_reduce = i;
        } else if (expert_reduce > optimizer) {
          EXPECT_TRUE(waits_for(expert_reduce)) << "rank " << r << " node " << i;
        }
      }
    }
    EXPECT_GE(optimizer, 0);
    EXPECT_GE(expert_gather, 0);
    EXPECT_GE(expert_reduce, 0);
  }
}

TEST(Hybrid, ZeroOneGathersEachGroupsOwnWeightsAfterTheStep) {
  // The same model under ZeRO-1: after the optimizer step each bucket's updated weights are
  // gathered on its own group, the dense 24000 bytes on dp and the experts' 16000 on edp,
  // none twice (a bucket's range of pieces spans pieces of the other kind).
  const HybridModel model = toy_moe_model(2);
  const HybridJob job{.degrees = {.dp = 4, .ep = 2}, .micro_batches = 1, .zero_stage = 1};
  ASSERT_EQ(check_hybrid(model, job), "");
  const auto gathered =
      bytes_by(build_hybrid(model, job), NodeKind::kCollective, CollectiveOp::kAllGather);
  EXPECT_EQ(gathered.at("dp"), 4u * 24000);
  EXPECT_EQ(gathered.at("edp"), 4u * 16000);
  // The next step's forward of each piece waits for the gather of its own kind's weights.
  HybridJob two = job;
  two.iterations = 2;
  const ExecutionGraph g = build_hybrid(model, two);
  for (int r = 0; r < g.rank_count(); ++r) {
    const Program& p = g.program_of(r);
    for (const Node& n : p.nodes) {
      if (n.kind != NodeKind::kCompute || n.iteration != 1 || n.phase != Phase::kForward) {
        continue;
      }
      const bool expert = g.layers[static_cast<std::size_t>(n.layer)].ends_with(".mlp");
      for (const std::int32_t d : p.deps_of(n)) {
        const Node& dep = p.nodes[static_cast<std::size_t>(d)];
        if (dep.kind == NodeKind::kCollective && dep.op == CollectiveOp::kAllGather) {
          const std::string& comm = g.communicator_of(r, dep).name;
          EXPECT_EQ(comm.starts_with("edp"), expert) << g.layers[static_cast<std::size_t>(n.layer)];
        }
      }
    }
  }
}

TEST(Hybrid, FsdpUnshardSetsHowOftenWeightsAreGatheredAndGradientsReduced) {
  // pp = 2 over 4 blocks, dp = 4, 4 micro-batches: each stage holds 36000 weight bytes (the
  // embedding's 4000 or the head's and two blocks of 16000) and as many gradient bytes; summed
  // over the 8 ranks of iteration 0 (HYBRID.md, "ZeRO-3 / FSDP"):
  //   unit: gathered for every forward and backward, 8 * 2 * 4 * 36000; reduced every
  //         micro-batch, 8 * 4 * 36000
  //   micro-batch: gathered for every forward, 8 * 4 * 36000; reduced as unit
  //   step: gathered and reduced once, 8 * 36000 each
  using Moved = std::pair<std::uint64_t, std::uint64_t>;  // all-gathered, reduce-scattered
  const HybridModel model = toy_model(4);
  HybridJob job{.degrees = {.dp = 4, .pp = 2}, .micro_batches = 4, .zero_stage = 3};
  const auto moved = [&](FsdpUnshard u, const PipelineSchedule& schedule = {}) {
    job.fsdp_unshard = u;
    job.schedule = schedule;
    EXPECT_EQ(check_hybrid(model, job), "");
    const ExecutionGraph g = build_hybrid(model, job);
    expect_valid(g);
    return std::pair{bytes_by(g, NodeKind::kCollective, CollectiveOp::kAllGather)["dp_gather"],
                     bytes_by(g, NodeKind::kCollective, CollectiveOp::kReduceScatter)["dp"]};
  };
  EXPECT_EQ(moved(FsdpUnshard::kUnit), Moved(8u * 2 * 4 * 36000, 8u * 4 * 36000));
  EXPECT_EQ(moved(FsdpUnshard::kMicroBatch), Moved(8u * 4 * 36000, 8u * 4 * 36000));
  EXPECT_EQ(moved(FsdpUnshard::kStep), Moved(8u * 36000, 8u * 36000));
  // auto is step with pipeline stages (torchtitan's apply_fsdp), and with two chunks per device
  // each chunk's weights are still gathered once.
  EXPECT_EQ(moved(FsdpUnshard::kAuto), Moved(8u * 36000, 8u * 36000));
  EXPECT_EQ(
      moved(FsdpUnshard::kStep, {.kind = PipelineScheduleKind::kInterleaved, .virtual_stages = 2}),
      Moved(8u * 36000, 8u * 36000));
  // Without a pipeline auto is FSDP's default, node for node; and only ZeRO-3 takes the policy.
  HybridJob flat{.degrees = {.dp = 4}, .micro_batches = 2, .zero_stage = 3};
  const ExecutionGraph automatic = build_hybrid(model, flat);
  flat.fsdp_unshard = FsdpUnshard::kUnit;
  EXPECT_EQ(build_hybrid(model, flat), automatic);
  flat.zero_stage = 1;
  EXPECT_TRUE(check_hybrid(model, flat).starts_with("fsdp_unshard:"));
  for (FsdpUnshard u :
       {FsdpUnshard::kAuto, FsdpUnshard::kUnit, FsdpUnshard::kMicroBatch, FsdpUnshard::kStep}) {
    EXPECT_EQ(parse_fsdp_unshard(fsdp_unshard_name(u)), u) << fsdp_unshard_name(u);
  }
  EXPECT_EQ(fsdp_unshard_name(FsdpUnshard::kMicroBatch), "micro-batch");
  EXPECT_FALSE(parse_fsdp_unshard("layer"));
}

TEST(Hybrid, HybridShardingGathersInsideGroupsAndReducesShardsAcross) {
  // FSDP's HYBRID_SHARD (Zhao et al. 2023, sec. 3.2.2): dp = 8 as 2 groups of 4. Parameters
  // are gathered and gradients reduce-scattered inside a group of 4; each gradient shard (a
  // quarter of the unit) is then all-reduced between the 2 ranks holding it.
  const HybridModel model = toy_model(3);
  const HybridJob job{.degrees = {.dp = 8}, .micro_batches = 1, .zero_stage = 3, .dp_shard = 4};
  ASSERT_EQ(check_hybrid(model, job), "");
  const ExecutionGraph g = build_hybrid(model, job);
  expect_valid(g);
  std::map<std::string, std::size_t> members;
  for (std::int32_t c : g.ranks[5].comms) {
    const Communicator& comm = g.communicators[static_cast<std::size_t>(c)];
    members[comm.name.substr(0, comm.name.find('.'))] = comm.ranks.size();
    if (comm.name.starts_with("dp_replica")) {
      EXPECT_EQ(comm.ranks, (std::vector<int>{1, 5}));  // position 1 of both groups
    }
  }
  EXPECT_EQ(members["dp"], 4u);
  EXPECT_EQ(members["dp_gather"], 4u);
  EXPECT_EQ(members["dp_replica"], 2u);
  // Units of 4000, 16000 x 3, 4000 bytes: reduce-scatters of them, then all-reduces of their
  // quarters, per rank of 8.
  EXPECT_EQ(bytes_by(g, NodeKind::kCollective, CollectiveOp::kReduceScatter)["dp"], 8u * 56000);
  EXPECT_EQ(bytes_by(g, NodeKind::kCollective)["dp_replica"], 8u * 56000 / 4);
  EXPECT_TRUE(check_hybrid(model, {.degrees = {.dp = 8}, .zero_stage = 3, .dp_shard = 3})
                  .starts_with("dp_shard:"));
  EXPECT_TRUE(check_hybrid(model, {.degrees = {.dp = 8}, .zero_stage = 1, .dp_shard = 4})
                  .starts_with("dp_shard:"));
}

TEST(Hybrid, ContextParallelRingPassesKeyValueBlocks) {
  // Ring attention (Liu et al. 2023; TransformerEngine's attn_with_cp): cp - 1 key/value blocks
  // forward; backward cp - 1 blocks with their gradients (twice the bytes), then the gradient
  // block once more to its owner; per attention piece and micro-batch, 4 ranks.
  const HybridJob job{.degrees = {.cp = 4}, .micro_batches = 2};
  const ExecutionGraph g = build_hybrid(toy_model(3), job);
  EXPECT_EQ(bytes_by(g, NodeKind::kSend)["cp"], 4u * 2 * 3 * (3 * 50 + 3 * 100 + 50));
}

TEST(Hybrid, StageSplitKeepsEmbeddingFirstAndHeadLast) {
  EXPECT_EQ(split_units(10, 4), (std::vector<int>{3, 3, 2, 2}));
  EXPECT_EQ(split_units(8, 4), (std::vector<int>{2, 2, 2, 2}));
  const HybridJob job{.degrees = {.pp = 2}, .micro_batches = 2, .stage_units = {1, 3}};
  ASSERT_EQ(check_hybrid(toy_model(4), job), "");
  const ExecutionGraph g = build_hybrid(toy_model(4), job);
  // Stage 0: embedding + block 0; stage 1: blocks 1-3 + head.
  std::map<int, std::vector<std::string>> layers;
  for (int s = 0; s < 2; ++s) {
    for (const Node& n : g.programs[static_cast<std::size_t>(s)].nodes) {
      if (n.kind == NodeKind::kCompute && n.phase == Phase::kForward && n.micro_batch == 0 &&
          n.iteration == 0) {
        layers[s].push_back(g.layers[static_cast<std::size_t>(n.layer)]);
      }
    }
  }
  EXPECT_EQ(layers[0],
            (std::vector<std::string>{"embedding", "layers.0.attention", "layers.0.mlp"}));
  EXPECT_EQ(layers[1].front(), "layers.1.attention");
  EXPECT_EQ(layers[1].back(), "head");
}

TEST(Hybrid, RefusesWhatCannotRun) {
  const HybridModel model = toy_model(4);
  auto why = [&](HybridJob job) {
    return check_hybrid(model, job);
  };
  EXPECT_TRUE(why({.degrees = {.pp = 5}}).starts_with("pp:"));  // 4 blocks on 5 stages
  EXPECT_TRUE(why({.degrees = {.dp = 3, .ep = 2}}).starts_with("ep:"));
  EXPECT_TRUE(why({.degrees = {.dp = 2, .ep = 2}}).starts_with("ep:"));  // no experts
  EXPECT_TRUE(why({.degrees = {.dp = 2}, .zero_stage = 4}).starts_with("zero:"));
  EXPECT_TRUE(why({.degrees = {.pp = 2}, .stage_units = {1, 2}}).starts_with("stage_units:"));
  EXPECT_TRUE(why({.degrees = {.pp = 2}, .stage_units = {4, 0}}).starts_with("stage_units:"));
  EXPECT_TRUE(why({.degrees = {.pp = 2},
                   .micro_batches = 3,
                   .schedule = {.kind = PipelineScheduleKind::kInterleaved, .virtual_stages = 2}})
                  .starts_with("schedule:"));
  EXPECT_TRUE(check_hybrid(model_from_trace(three_layers()), {.degrees = {.pp = 2}})
                  .starts_with("pp:"));  // a trace without activation bytes
  // Hybrid sharding of an MoE model: its experts would shard over a group of their own.
  EXPECT_EQ(check_hybrid(toy_moe_model(4),
                         {.degrees = {.dp = 4, .ep = 2}, .zero_stage = 3, .dp_shard = 2}),
            "dp_shard: 2: hybrid sharding of a model with experts is not modelled");
  HybridModel long_gemms = toy_model(4);
  long_gemms.pieces[1].tp_in_gemm_sec = long_gemms.pieces[1].tp_out_gemm_sec = 6e-4;
  EXPECT_EQ(check_hybrid(long_gemms, {.degrees = {.tp = 2}}),
            "pieces: piece 1 (layers.0.attention): the GEMMs beside its TP collectives take "
            "0.001200 s, expected >= 0 and at most its forward and its backward");
}

}  // namespace
}  // namespace dtsim::sim
