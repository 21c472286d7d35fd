// Scenarios compiled into the binary, so that `tessera` runs without any input files.

#include <string>
#include <string_view>
#include <vector>

#include "trace/scenario.h"

namespace tessera {
namespace {

// A hand-written description of the public Alibaba GPU cluster (the FGD paper's "openb"
// setting): the published composition of its 1213 GPU nodes (6212 GPUs), and a pod mix with
// rounded numbers that approximates the default trace (about 13 % CPU-only, 38 % GPU-sharing,
// 48 % one-GPU and 1 % multi-GPU pods). Not a copy of the trace.
constexpr std::string_view kOpenbLike =
    R"yaml(# openb-like: a description of the Alibaba GPU cluster (1213 nodes, 6212 GPUs).
name: openb-like
description: >-
  The 1213 GPU nodes of the public Alibaba GPU cluster (cluster-trace-gpu-v2023, 6212 GPUs)
  and a hand-written pod mix with rounded numbers approximating its default trace: about 13 %
  CPU-only, 38 % GPU-sharing, 48 % one-GPU and 1 % multi-GPU pods.
pods: 8152
seed: 1

nodes:
  - {name: g2-8g-96c,       model: G2,      gpus: 8, cpu_milli: 96000,  memory_mib: 393216,  count: 549}
  - {name: t4-2g-104c,      model: T4,      gpus: 2, cpu_milli: 104000, memory_mib: 524288,  count: 387}
  - {name: p100-2g-16c,     model: P100,    gpus: 2, cpu_milli: 16000,  memory_mib: 122880,  count: 107}
  - {name: g3-8g-128c,      model: G3,      gpus: 8, cpu_milli: 128000, memory_mib: 786432,  count: 39}
  - {name: v100m16-4g-32c,  model: V100M16, gpus: 4, cpu_milli: 32000,  memory_mib: 131072,  count: 28}
  - {name: p100-2g-64c,     model: P100,    gpus: 2, cpu_milli: 64000,  memory_mib: 262144,  count: 22}
  - {name: v100m32-8g-96c,  model: V100M32, gpus: 8, cpu_milli: 96000,  memory_mib: 786432,  count: 21}
  - {name: v100m16-1g-8c,   model: V100M16, gpus: 1, cpu_milli: 8000,   memory_mib: 32768,   count: 19}
  - {name: t4-4g-96c,       model: T4,      gpus: 4, cpu_milli: 96000,  memory_mib: 393216,  count: 17}
  - {name: v100m32-4g-48c,  model: V100M32, gpus: 4, cpu_milli: 48000,  memory_mib: 376832,  count: 9}
  - {name: v100m16-8g-64c,  model: V100M16, gpus: 8, cpu_milli: 64000,  memory_mib: 262144,  count: 7}
  - {name: p100-1g-8c,      model: P100,    gpus: 1, cpu_milli: 8000,   memory_mib: 61440,   count: 3}
  - {name: p100-2g-8c,      model: P100,    gpus: 2, cpu_milli: 8000,   memory_mib: 61440,   count: 2}
  - {name: a10-1g-128c,     model: A10,     gpus: 1, cpu_milli: 128000, memory_mib: 1048576, count: 2}
  - {name: v100m16-8g-82c,  model: V100M16, gpus: 8, cpu_milli: 82000,  memory_mib: 344064,  count: 1}

# Shares are percentages of all pods (they are renormalised, so they need not sum to 100).
classes:
  # CPU-only pods: 13 %.
  - {name: cpu-1c,     cpu_milli: 1000,  memory_mib: 4096,   qos: BE, share: 2}
  - {name: cpu-4c,     cpu_milli: 4000,  memory_mib: 16384,  qos: BE, share: 5}
  - {name: cpu-12c,    cpu_milli: 12000, memory_mib: 49152,  qos: LS, share: 6}
  # GPU-sharing pods (part of one GPU): 38 %.
  - {name: share-810,  cpu_milli: 4000,  memory_mib: 16384,  gpu_count: 1, gpu_milli: 810, qos: LS, share: 13}
  - {name: share-460,  cpu_milli: 8000,  memory_mib: 32768,  gpu_count: 1, gpu_milli: 460, qos: LS, share: 9}
  - {name: share-500,  cpu_milli: 12000, memory_mib: 49152,  gpu_count: 1, gpu_milli: 500, qos: BE, share: 5}
  - {name: share-300,  cpu_milli: 4000,  memory_mib: 16384,  gpu_count: 1, gpu_milli: 300, qos: BE, share: 5}
  - {name: share-250,  cpu_milli: 4000,  memory_mib: 16384,  gpu_count: 1, gpu_milli: 250, qos: BE, share: 2}
  - {name: share-200,  cpu_milli: 4000,  memory_mib: 16384,  gpu_count: 1, gpu_milli: 200, qos: LS, share: 2}
  - {name: share-100,  cpu_milli: 6000,  memory_mib: 24576,  gpu_count: 1, gpu_milli: 100, qos: BE, share: 2}
  # One whole GPU: 48 %.
  - {name: gpu1-12c,   cpu_milli: 12000, memory_mib: 49152,  gpu_count: 1, qos: LS, share: 24}
  - {name: gpu1-8c,    cpu_milli: 8000,  memory_mib: 32768,  gpu_count: 1, qos: BE, share: 7}
  - {name: gpu1-16c,   cpu_milli: 16000, memory_mib: 65536,  gpu_count: 1, qos: LS, share: 7}
  - {name: gpu1-t4,    cpu_milli: 8000,  memory_mib: 32768,  gpu_count: 1, models: [T4],   qos: LS, share: 4}
  - {name: gpu1-g2,    cpu_milli: 12000, memory_mib: 49152,  gpu_count: 1, models: [G2],   qos: LS, share: 3}
  - {name: gpu1-p100,  cpu_milli: 8000,  memory_mib: 32768,  gpu_count: 1, models: [P100], qos: BE, share: 2}
  - {name: gpu1-v100,  cpu_milli: 16000, memory_mib: 65536,  gpu_count: 1, models: [V100M16, V100M32], qos: LS, share: 1}
  # Several whole GPUs: 1 %.
  - {name: gpu2-16c,   cpu_milli: 16000, memory_mib: 65536,  gpu_count: 2, qos: LS, share: 0.2}
  - {name: gpu4-32c,   cpu_milli: 32000, memory_mib: 131072, gpu_count: 4, qos: LS, share: 0.2}
  - {name: gpu8-64c,   cpu_milli: 64000, memory_mib: 262144, gpu_count: 8, qos: LS, share: 0.3}
  - {name: gpu8-88c,   cpu_milli: 88000, memory_mib: 360448, gpu_count: 8, qos: LS, share: 0.3}
)yaml";

// A day of a shared inference + training cluster with a two-hour peak-sale spike of
// latency-sensitive traffic (12:00-14:00) over a steady best-effort load that alone exceeds
// the cluster. Used by `tessera replay` (the `pods` count and shares serve `tessera frag`).
constexpr std::string_view kPeakSale =
    R"yaml(# peak-sale: a burst of latency-sensitive pods over a steady best-effort load.
name: peak-sale
description: >-
  40 eight-GPU nodes (320 GPUs). Best-effort training keeps more work queued than the
  cluster holds; latency-sensitive inference follows a daily profile, and a two-hour
  peak-sale spike (12:00-14:00) adds 300 one-GPU inference pods per hour.
pods: 4000
seed: 7
horizon_h: 24

nodes:
  - {name: g8, model: A100, gpus: 8, cpu_milli: 96000, memory_mib: 786432, count: 40}

classes:
  - name: ls-infer-1gpu
    cpu_milli: 8000
    memory_mib: 32768
    gpu_count: 1
    qos: LS
    share: 30
    arrival:
      rate_per_h: 120
      profile: [0.5, 0.5, 0.5, 0.5, 0.5, 0.6, 0.8, 1.0, 1.2, 1.4, 1.5, 1.5,
                1.5, 1.5, 1.5, 1.4, 1.3, 1.2, 1.1, 1.0, 0.9, 0.8, 0.7, 0.6]
      bursts: [{start_h: 12, duration_h: 2, rate_per_h: 300}]
    duration: {dist: lognormal, mean_s: 1800, sigma: 1}
  - name: ls-infer-share
    cpu_milli: 4000
    memory_mib: 16384
    gpu_count: 1
    gpu_milli: 250
    qos: LS
    share: 15
    arrival: {rate_per_h: 120}
    duration: {dist: lognormal, mean_s: 1800, sigma: 1}
  - name: be-train-1gpu
    cpu_milli: 8000
    memory_mib: 65536
    gpu_count: 1
    qos: BE
    share: 30
    arrival: {rate_per_h: 300}
    duration: {dist: exponential, mean_s: 1800}
  - name: be-train-2gpu
    cpu_milli: 16000
    memory_mib: 131072
    gpu_count: 2
    qos: BE
    share: 10
    arrival: {rate_per_h: 60}
    duration: {dist: exponential, mean_s: 3600}
  - name: be-batch-share
    cpu_milli: 4000
    memory_mib: 16384
    gpu_count: 1
    gpu_milli: 500
    qos: BE
    share: 15
    arrival: {rate_per_h: 200}
    duration: {dist: exponential, mean_s: 1200}
)yaml";

// The GPU-memory scenario family (docs/GPU_MEMORY.md): one pod mix of memory shares — 9.2 GiB
// SLAM pods, 4.3 GiB and 3.8 GiB vision pods (the last memory-only, HAMi's plainest vGPU
// request) — and whole-GPU trainers, on three clusters. GiB here are 1024 MiB: 9.2 GiB =
// 9421 MiB, 4.3 GiB = 4403 MiB, 3.8 GiB = 3891 MiB.
constexpr std::string_view kMemV100 =
    R"yaml(# mem-v100: GPU memory shares on 16 and 32 GiB V100s.
name: mem-v100
description: >-
  GPU memory shares (9.2 GiB SLAM pods, 4.3 GiB and memory-only 3.8 GiB vision pods) and
  whole-GPU trainers on 32 four-GPU V100M16 nodes (16 GiB) and 16 eight-GPU V100M32 nodes
  (32 GiB): 256 GPUs.
pods: 400
seed: 1

nodes:
  - {name: v100m16-4g, model: V100M16, gpus: 4, gpu_memory_mib: 16384, cpu_milli: 48000, memory_mib: 262144, count: 32}
  - {name: v100m32-8g, model: V100M32, gpus: 8, gpu_memory_mib: 32768, cpu_milli: 96000, memory_mib: 786432, count: 16}

classes:
  # GPU memory shares (HAMi's vGPU requests: nvidia.com/gpu 1 with nvidia.com/gpumem, and
  # nvidia.com/gpucores where a core share is given).
  - {name: slam-9.2g,    cpu_milli: 4000,  memory_mib: 16384,  gpu_count: 1, gpu_milli: 500, gpu_memory_mib: 9421, qos: LS, share: 25}
  - {name: vision-4.3g,  cpu_milli: 2000,  memory_mib: 8192,   gpu_count: 1, gpu_milli: 250, gpu_memory_mib: 4403, qos: LS, share: 25}
  # Memory only (gpumem without gpucores): 1 milli of compute, the least a GPU must have free.
  - {name: vision-3.8g,  cpu_milli: 2000,  memory_mib: 8192,   gpu_count: 1, gpu_milli: 1,   gpu_memory_mib: 3891, qos: BE, share: 20}
  # Whole-GPU trainers (the whole GPU, its memory included).
  - {name: train-1gpu,   cpu_milli: 8000,  memory_mib: 65536,  gpu_count: 1, qos: BE, share: 20}
  - {name: train-2gpu,   cpu_milli: 16000, memory_mib: 131072, gpu_count: 2, qos: BE, share: 5})yaml";

constexpr std::string_view kMemV100M16 =
    R"yaml(# mem-v100m16: GPU memory shares on 16 GiB V100s only.
name: mem-v100m16
description: >-
  The mem-v100 pod mix on 64 four-GPU V100M16 nodes (16 GiB per GPU, 256 GPUs), where the
  memory of the shares, not their compute, runs out first.
pods: 400
seed: 1

nodes:
  - {name: v100m16-4g, model: V100M16, gpus: 4, gpu_memory_mib: 16384, cpu_milli: 48000, memory_mib: 262144, count: 64}

classes:
  # GPU memory shares (HAMi's vGPU requests: nvidia.com/gpu 1 with nvidia.com/gpumem, and
  # nvidia.com/gpucores where a core share is given).
  - {name: slam-9.2g,    cpu_milli: 4000,  memory_mib: 16384,  gpu_count: 1, gpu_milli: 500, gpu_memory_mib: 9421, qos: LS, share: 25}
  - {name: vision-4.3g,  cpu_milli: 2000,  memory_mib: 8192,   gpu_count: 1, gpu_milli: 250, gpu_memory_mib: 4403, qos: LS, share: 25}
  # Memory only (gpumem without gpucores): 1 milli of compute, the least a GPU must have free.
  - {name: vision-3.8g,  cpu_milli: 2000,  memory_mib: 8192,   gpu_count: 1, gpu_milli: 1,   gpu_memory_mib: 3891, qos: BE, share: 20}
  # Whole-GPU trainers (the whole GPU, its memory included).
  - {name: train-1gpu,   cpu_milli: 8000,  memory_mib: 65536,  gpu_count: 1, qos: BE, share: 20}
  - {name: train-2gpu,   cpu_milli: 16000, memory_mib: 131072, gpu_count: 2, qos: BE, share: 5})yaml";

// The openb-like node pools with each model's GPU memory: V100M16 16 GiB, V100M32 32 GiB,
// P100 16 GiB, A10 24 GiB (the vendors' specifications), T4 15360 MiB (its 16 GB as the
// driver reports it; KnownGpuMemoryMib). G2 and G3 are models the trace leaves unnamed:
// assumed 32 GiB (G2: the eight-GPU, 96-core shape of the V100M32 nodes) and 40 GiB (G3: the
// eight-GPU, 128-core shape of an A100 40 GB server) — assumptions, not facts.
constexpr std::string_view kMemOpenb =
    R"yaml(# mem-openb: GPU memory shares on the openb-like nodes with their GPU memory.
name: mem-openb
description: >-
  The mem-v100 pod mix on the 1213 openb-like nodes (6212 GPUs) with each model's GPU
  memory: V100M16, P100 16 GiB; T4 15360 MiB; A10 24 GiB; V100M32 32 GiB; and, assumed
  (the trace does not name these models), G2 32 GiB and G3 40 GiB.
pods: 8000
seed: 1

nodes:
  - {name: g2-8g-96c,       model: G2,      gpus: 8, gpu_memory_mib: 32768, cpu_milli: 96000,  memory_mib: 393216,  count: 549}
  - {name: t4-2g-104c,      model: T4,      gpus: 2, gpu_memory_mib: 15360, cpu_milli: 104000, memory_mib: 524288,  count: 387}
  - {name: p100-2g-16c,     model: P100,    gpus: 2, gpu_memory_mib: 16384, cpu_milli: 16000,  memory_mib: 122880,  count: 107}
  - {name: g3-8g-128c,      model: G3,      gpus: 8, gpu_memory_mib: 40960, cpu_milli: 128000, memory_mib: 786432,  count: 39}
  - {name: v100m16-4g-32c,  model: V100M16, gpus: 4, gpu_memory_mib: 16384, cpu_milli: 32000,  memory_mib: 131072,  count: 28}
  - {name: p100-2g-64c,     model: P100,    gpus: 2, gpu_memory_mib: 16384, cpu_milli: 64000,  memory_mib: 262144,  count: 22}
  - {name: v100m32-8g-96c,  model: V100M32, gpus: 8, gpu_memory_mib: 32768, cpu_milli: 96000,  memory_mib: 786432,  count: 21}
  - {name: v100m16-1g-8c,   model: V100M16, gpus: 1, gpu_memory_mib: 16384, cpu_milli: 8000,   memory_mib: 32768,   count: 19}
  - {name: t4-4g-96c,       model: T4,      gpus: 4, gpu_memory_mib: 15360, cpu_milli: 96000,  memory_mib: 393216,  count: 17}
  - {name: v100m32-4g-48c,  model: V100M32, gpus: 4, gpu_memory_mib: 32768, cpu_milli: 48000,  memory_mib: 376832,  count: 9}
  - {name: v100m16-8g-64c,  model: V100M16, gpus: 8, gpu_memory_mib: 16384, cpu_milli: 64000,  memory_mib: 262144,  count: 7}
  - {name: p100-1g-8c,      model: P100,    gpus: 1, gpu_memory_mib: 16384, cpu_milli: 8000,   memory_mib: 61440,   count: 3}
  - {name: p100-2g-8c,      model: P100,    gpus: 2, gpu_memory_mib: 16384, cpu_milli: 8000,   memory_mib: 61440,   count: 2}
  - {name: a10-1g-128c,     model: A10,     gpus: 1, gpu_memory_mib: 24576, cpu_milli: 128000, memory_mib: 1048576, count: 2}
  - {name: v100m16-8g-82c,  model: V100M16, gpus: 8, gpu_memory_mib: 16384, cpu_milli: 82000,  memory_mib: 344064,  count: 1}

classes:
  # GPU memory shares (HAMi's vGPU requests: nvidia.com/gpu 1 with nvidia.com/gpumem, and
  # nvidia.com/gpucores where a core share is given).
  - {name: slam-9.2g,    cpu_milli: 4000,  memory_mib: 16384,  gpu_count: 1, gpu_milli: 500, gpu_memory_mib: 9421, qos: LS, share: 25}
  - {name: vision-4.3g,  cpu_milli: 2000,  memory_mib: 8192,   gpu_count: 1, gpu_milli: 250, gpu_memory_mib: 4403, qos: LS, share: 25}
  # Memory only (gpumem without gpucores): 1 milli of compute, the least a GPU must have free.
  - {name: vision-3.8g,  cpu_milli: 2000,  memory_mib: 8192,   gpu_count: 1, gpu_milli: 1,   gpu_memory_mib: 3891, qos: BE, share: 20}
  # Whole-GPU trainers (the whole GPU, its memory included).
  - {name: train-1gpu,   cpu_milli: 8000,  memory_mib: 65536,  gpu_count: 1, qos: BE, share: 20}
  - {name: train-2gpu,   cpu_milli: 16000, memory_mib: 131072, gpu_count: 2, qos: BE, share: 5})yaml";

}  // namespace

std::string_view EmbeddedScenario(std::string_view name) {
  if (name == "openb-like") return kOpenbLike;
  if (name == "peak-sale") return kPeakSale;
  if (name == "mem-v100") return kMemV100;
  if (name == "mem-v100m16") return kMemV100M16;
  if (name == "mem-openb") return kMemOpenb;
  return {};
}

std::vector<std::string> EmbeddedScenarioNames() {
  return {"openb-like", "peak-sale", "mem-v100", "mem-v100m16", "mem-openb"};
}

}  // namespace tessera
