#include "sim/report/memory_report.h"

#include "workloads/parsing/units.h"

namespace dtsim::sim {

using nlohmann::ordered_json;
using parsing::format_number;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string gib(std::uint64_t bytes) {
  return format_number("%.2f", static_cast<double>(bytes) / kGiB);
}

const StageMemory& worst(const MemoryReport& m) {
  return m.stages[static_cast<std::size_t>(m.worst_stage)];
}

}  // namespace

ordered_json memory_json(const MemoryReport& memory) {
  ordered_json stages = ordered_json::array();
  for (const StageMemory& s : memory.stages) {
    stages.push_back({{"stage", s.stage},
                      {"micro_batches_in_flight", s.micro_batches_in_flight},
                      {"parameters_bytes", s.parameters_bytes},
                      {"gradients_bytes", s.gradients_bytes},
                      {"optimizer_bytes", s.optimizer_bytes},
                      {"activations_bytes", s.activations_bytes},
                      {"fsdp_buffers_bytes", s.fsdp_buffers_bytes},
                      {"communication_buffers_bytes", s.communication_buffers_bytes},
                      {"framework_reserve_bytes", s.framework_reserve_bytes},
                      {"peak_bytes", s.peak_bytes}});
  }
  return {{"device", memory.device},
          {"capacity_bytes", memory.capacity_bytes},
          {"worst_stage", memory.worst_stage},
          {"peak_bytes", worst(memory).peak_bytes},
          {"oom", memory.oom},
          {"rules", "sim/strategies/MEMORY.md"},
          {"stages", std::move(stages)}};
}

std::string memory_verdict(const MemoryReport& memory) {
  return gib(worst(memory).peak_bytes) + " GiB on stage " + std::to_string(memory.worst_stage) +
         " (of " + gib(memory.capacity_bytes) + " GiB, " + memory.device +
         "): " + (memory.oom ? "OOM" : "fits");
}

std::string memory_table(const MemoryReport& memory) {
  // Right-aligned in columns as wide as their headers.
  const auto cell = [](const std::string& text, std::size_t width) {
    return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
  };
  std::string s =
      "  stage  in flight  parameters  gradients  optimizer  activations  fsdp buffers  "
      "comm buffers  reserve     peak  (GiB per rank)\n";
  for (const StageMemory& m : memory.stages) {
    s += "  " + cell(std::to_string(m.stage), 5) +
         cell(std::to_string(m.micro_batches_in_flight), 11) + cell(gib(m.parameters_bytes), 12) +
         cell(gib(m.gradients_bytes), 11) + cell(gib(m.optimizer_bytes), 11) +
         cell(gib(m.activations_bytes), 13) + cell(gib(m.fsdp_buffers_bytes), 14) +
         cell(gib(m.communication_buffers_bytes), 14) + cell(gib(m.framework_reserve_bytes), 9) +
         cell(gib(m.peak_bytes), 9) + "\n";
  }
  return s + "  worst rank: " + memory_verdict(memory) + "\n";
}

}  // namespace dtsim::sim
