// The planner's enumeration, counted by hand on small cases.
#include "sim/planner/search_space.h"

#include <gtest/gtest.h>

namespace dtsim::sim {
namespace {

// 4 blocks, 4 heads (and KV heads), FFN 256: every tp of 1, 2, 4 divides them.
workloads::TransformerArch tiny_arch() {
  return {.name = "tiny",
          .layers = 4,
          .hidden = 64,
          .heads = 4,
          .kv_heads = 4,
          .ffn_hidden = 256,
          .vocab = 1000,
          .max_seq_len = 128};
}

TEST(EnumerateCandidates, CountsTpPpDpByHand) {
  // 4 GPUs on one node, global batch 4; only tp, pp, dp. Per (tp, pp, dp): micro-batches
  // mb | 4/dp, m = 4/(mb dp); schedules: pp = 1 one; pp > 1 gpipe, 1f1b, and interleaved:2 when
  // 2 | 4/pp and pp | m.
  //   tp1 pp1 dp4: mb 1                                        -> 1
  //   tp1 pp2 dp2: mb 1 (m 2: gpipe 1f1b il2), mb 2 (m 1: 2)   -> 5
  //   tp1 pp4 dp1: mb 1, 2, 4 (4/pp = 1 chunk: gpipe, 1f1b)    -> 6
  //   tp2 pp1 dp2: mb 1, 2                                     -> 2
  //   tp2 pp2 dp1: mb 1 (m 4: 3), mb 2 (m 2: 3), mb 4 (m 1: 2) -> 8
  //   tp4 pp1 dp1: mb 1, 2, 4                                  -> 3
  // 25 in all.
  const SearchSpace space{
      .arch = tiny_arch(),
      .gpus = 4,
      .global_batch = 4,
      .seq_len = 128,
      .gpus_per_node = 4,
      .strategies = {.cp = false, .zero = false, .recompute = false, .sp = false}};
  const std::vector<PlanCandidate> all = enumerate_candidates(space);
  EXPECT_EQ(all.size(), 25u);
  EXPECT_EQ(candidate_name(all.front()), "tp1 pp1 dp4 cp1 mb1 1f1b z0 none");
  EXPECT_EQ(candidate_name(all.back()), "tp4 pp1 dp1 cp1 mb4 1f1b z0 none");
}

TEST(EnumerateCandidates, CountsEveryKnobByHand) {
  // 2 GPUs, global batch 2, every strategy. ZeRO 0-3 when dp*cp > 1, recompute x3, SP x2 when
  // tp > 1:
  //   tp1 cp1 pp1 dp2: mb 1; ZeRO 4; recompute 3                        -> 12
  //   tp1 cp1 pp2 dp1: mb 1 (m 2: gpipe 1f1b il2), mb 2 (m 1: 2); x3   -> 15
  //   tp1 cp2 pp1 dp1: mb 1, 2; ZeRO 4 (dp*cp = 2); x3                  -> 24
  //   tp2 cp1 pp1 dp1: mb 1, 2; ZeRO 1; x3; SP x2                       -> 12
  // 63 in all.
  const SearchSpace space{
      .arch = tiny_arch(), .gpus = 2, .global_batch = 2, .seq_len = 128, .gpus_per_node = 2};
  EXPECT_EQ(enumerate_candidates(space).size(), 63u);
}

TEST(EnumerateCandidates, OverlappedTpIsTriedWithSequenceParallelismWhenAskedFor) {
  // The space above: of its 63, the 6 tp2 candidates with sequence parallelism each come again
  // with TP overlapped when tp-overlap is asked for: 69; named "... sp ov", run with
  // --sequence-parallel --tp-overlap.
  SearchSpace space{
      .arch = tiny_arch(), .gpus = 2, .global_batch = 2, .seq_len = 128, .gpus_per_node = 2};
  space.strategies.tp_overlap = true;
  const std::vector<PlanCandidate> all = enumerate_candidates(space);
  EXPECT_EQ(all.size(), 69u);
  int overlapped = 0;
  for (const PlanCandidate& c : all) {
    if (c.tp_overlap) {
      ++overlapped;
      EXPECT_TRUE(c.sequence_parallel && c.degrees.tp == 2) << candidate_name(c);
      EXPECT_TRUE(candidate_name(c).ends_with(" sp ov")) << candidate_name(c);
      const std::vector<std::string> flags = candidate_flags(c);
      EXPECT_EQ(flags.back(), "--tp-overlap");
    }
  }
  EXPECT_EQ(overlapped, 6);
}

TEST(EnumerateCandidates, LlamaBlocksAddTorchtitansSelectiveOp) {
  // The same space as above with Llama's blocks (SwiGLU, no biases): recompute x4 (none,
  // selective, selective-op, full) instead of x3, so 63 / 3 * 4 = 84 candidates, and each
  // selective-op candidate sits between selective and full.
  workloads::TransformerArch llama = tiny_arch();
  llama.mlp = workloads::MlpKind::kSwiGlu;
  const SearchSpace space{
      .arch = llama, .gpus = 2, .global_batch = 2, .seq_len = 128, .gpus_per_node = 2};
  const std::vector<PlanCandidate> all = enumerate_candidates(space);
  EXPECT_EQ(all.size(), 84u);
  EXPECT_EQ(all[2].recompute, workloads::Recompute::kSelectiveOp);  // tp1 pp1 dp2 mb1 z0
  EXPECT_EQ(candidate_name(all[2]), "tp1 pp1 dp2 cp1 mb1 1f1b z0 sel-op");
  // GeLU blocks (GPT's) never get it.
  for (const PlanCandidate& c : enumerate_candidates({.arch = tiny_arch(),
                                .gpus = 2,
                                .global_batch = 2,
                                .seq_len = 128,
                                .gpus_per_node = 2})) {
    EXPECT_NE(c.recompute, workloads::Recompute::kSelectiveOp) << candidate_name(c);
  }
}

TEST(EnumerateCandidates, TensorParallelismStaysInANodeUnlessAsked) {
  // 4 GPUs of 2 per node, global batch 1 (so dp = 1): tp4 needs tp_across_nodes.
  SearchSpace space{
      .arch = tiny_arch(),
      .gpus = 4,
      .global_batch = 1,
      .seq_len = 128,
      .gpus_per_node = 2,
      .strategies = {.pp = false, .cp = false, .zero = false, .recompute = false, .sp = false}};
  // dp = 4 / tp must divide 1: only tp = 4, which does not fit a node.
  EXPECT_TRUE(enumerate_candidates(space).empty());
  space.tp_across_nodes = true;
  ASSERT_EQ(enumerate_candidates(space).size(), 1u);
  EXPECT_EQ(candidate_name(enumerate_candidates(space)[0]), "tp4 pp1 dp1 cp1 mb1 1f1b z0 none");
}

TEST(EnumerateCandidates, ContextParallelismNeedsTwiceItsDegreeToDivideTheSequence) {
  // seq_len 6: cp = 3 would cut it into 6 chunks (fine), cp = 2 into 4 (no): with 6 GPUs,
  // global batch 1, only cp and tp = 1: cp 1 (dp 6: batch 1 % 6 != 0), cp 2 (no), cp 3 (dp 2:
  // no), cp 6 (12 chunks: no). Nothing; with 3 GPUs: cp 3, dp 1.
  SearchSpace space{
      .arch = tiny_arch(),
      .gpus = 6,
      .global_batch = 1,
      .seq_len = 6,
      .gpus_per_node = 8,
      .strategies = {.tp = false, .pp = false, .zero = false, .recompute = false, .sp = false}};
  EXPECT_TRUE(enumerate_candidates(space).empty());
  space.gpus = 3;
  ASSERT_EQ(enumerate_candidates(space).size(), 1u);
  EXPECT_EQ(enumerate_candidates(space)[0].degrees.cp, 3);
}

TEST(ParseStrategies, ReadsAnySubsetAndRejectsUnknownNames) {
  std::string why;
  const auto set = parse_strategies("dp,tp,zero", &why);
  ASSERT_TRUE(set);
  EXPECT_EQ(*set, (StrategySet{.tp = true,
                               .pp = false,
                               .cp = false,
                               .zero = true,
                               .recompute = false,
                               .sp = false,
                               .spatial = false,
                               .filter = false,
                               .channel = false}));
  const auto cnn = parse_strategies("pp,filter", &why);
  ASSERT_TRUE(cnn);
  EXPECT_TRUE(cnn->pp && cnn->filter && !cnn->spatial && !cnn->channel && !cnn->tp);
  EXPECT_FALSE(parse_strategies("tp,fsdp", &why));
  EXPECT_EQ(why,
            "unknown strategy \"fsdp\" (expected tp, pp, dp, cp, zero, recompute, sp, tp-overlap; "
            "for a CNN dp, pp, spatial, filter, channel)");
  const auto overlap = parse_strategies("tp,sp,tp-overlap", &why);
  ASSERT_TRUE(overlap);
  EXPECT_TRUE(overlap->tp && overlap->sp && overlap->tp_overlap && !overlap->zero);
  EXPECT_FALSE(StrategySet{}.tp_overlap);  // asked for only (dtsim's overlap is free)
  EXPECT_FALSE(parse_strategies("tp,tp", &why));
  EXPECT_EQ(why, "strategy \"tp\" given twice");
}

}  // namespace
}  // namespace dtsim::sim
