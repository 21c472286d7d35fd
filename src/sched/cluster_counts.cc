#include "sched/cluster_counts.h"

#include <algorithm>

namespace tessera {

ClusterCounts::ClusterCounts(const Cluster& cluster, bool by_model)
    : cluster_(&cluster), by_model_(by_model) {
  summary_.total_gpu_milli = cluster_->total_gpu_milli();
  idle_gpus_by_model_.assign(cluster_->models().size(), 0);
}

void ClusterCounts::MarkStart() {
  summary_.start_idle_nodes_by_gpus = summary_.idle_nodes_by_gpus;
  RefreshFree();
  summary_.start_free_gpu_milli = summary_.free_gpu_milli;
}

void ClusterCounts::Observe(const PodRequest& pod) {
  summary_.seen_gpu_milli_by_count[std::clamp(pod.gpu_count, 0, kMaxGpusPerNode)] +=
      static_cast<int64_t>(pod.gpu_milli) * pod.gpu_count;
  ++summary_.seen_pods;
}

void ClusterCounts::RefreshFree() {
  summary_.free_gpu_milli = cluster_->total_gpu_milli() - cluster_->allocated_gpu_milli();
}

}  // namespace tessera
