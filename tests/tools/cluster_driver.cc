// tessera_cluster_driver: plays the users of a real cluster for the real-cluster tests
// (tests/cluster/): it writes kwok nodes from a node list, creates the pods of a timeline at
// their arrival times against a real API server and records what became of each, and compares
// such a record with `tessera replay`'s per-pod output.
//
//   tessera_cluster_driver nodes --nodes NODES.csv [--family tessera|nvidia] [--count N]
//       prints a v1 List of kwok Nodes (JSON) for `kubectl create -f -`: each row of the openb
//       node list (sn, cpu_milli, memory_mib, gpu, model) becomes a node of that name with its
//       CPU, memory and GPUs as allocatable (`tessera.io/gpu` or `nvidia.com/gpu`), NVIDIA GPU
//       feature discovery's labels, `tessera.io/gpu-model`, and the labels the independent
//       checker reads (tests/tools/check_cluster.cc). --count N: the first N rows, repeated
//       with a numbered suffix when the list is shorter.
//   tessera_cluster_driver timeline --kubeconfig F --pods PODS.csv --namespace NS
//       [--scheduler-name S] [--family tessera|nvidia] [--priority-class QOS=NAME]...
//       [--settle-s S] [--recreate-victims] --out OUT.csv
//       creates each pod of the trace's pod list at its arrival (creation_time, the first at 0;
//       times as `tessera replay --pods` reads them) with the annotation
//       `tessera.test/run-for: <duration>s` (kwok ends it that long after it started), watches
//       the namespace, and writes per pod: arrival, first bind (seconds from the start, from
//       the watch), node and GPU indices of the first bind, times deleted before it ended
//       (preempted). With --recreate-victims a pod deleted before it ended is created again
//       (as its controller would; the replay re-queues victims). Ends when every pod has ended
//       or --settle-s seconds after the last arrival.
//   tessera_cluster_driver compare --real OUT.csv --replay PODS_OUT.csv [--policy P]
//       [--report FILE.md]
//       the share of pods on the same node (and the same GPUs) in both, each class's wait
//       percentiles side by side, and every pod that differs with the first difference in time.
//
// Exit codes: 0 done; 1 a comparison or run failed its own bar (see the message); 2 bad input.
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "k8s/api/kube_api.h"
#include "replay/timeline.h"
#include "trace/csv_reader.h"
#include "util/file.h"
#include "util/percentile.h"

namespace {

using Json = nlohmann::json;
using tessera::k8s::HttpKubeApi;
using tessera::k8s::KubeApiConfig;

[[noreturn]] void Die(int code, const std::string& what) {
  std::fprintf(stderr, "tessera_cluster_driver: %s\n", what.c_str());
  std::exit(code);
}

std::string Flag(const std::vector<std::string>& args, const std::string& name,
                 const std::string& fallback = "") {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == name) return args[i + 1];
  }
  return fallback;
}
std::vector<std::string> Flags(const std::vector<std::string>& args, const std::string& name) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == name) out.push_back(args[i + 1]);
  }
  return out;
}
bool Has(const std::vector<std::string>& args, const std::string& name) {
  return std::find(args.begin(), args.end(), name) != args.end();
}

std::string ReadOrDie(const std::string& path) {
  tessera::Result<std::string> text = tessera::ReadFile(path);
  if (!text.ok()) Die(2, text.error().message);
  return *text;
}

int Nodes(const std::vector<std::string>& args) {
  const std::string file = Flag(args, "--nodes");
  if (file.empty()) Die(2, "nodes: --nodes FILE is required");
  const std::string family = Flag(args, "--family", "tessera");
  if (family != "tessera" && family != "nvidia") Die(2, "nodes: --family is tessera or nvidia");
  auto nodes = tessera::ReadNodeCsv(ReadOrDie(file), file);
  if (!nodes.ok()) Die(2, nodes.error().message);
  const size_t count = std::stoul(Flag(args, "--count", std::to_string(nodes->size())));
  Json items = Json::array();
  for (size_t i = 0; i < count; ++i) {
    const tessera::NodeSpec& n = (*nodes)[i % nodes->size()];
    std::string name = n.name;
    if (i >= nodes->size()) name += "-" + std::to_string(i / nodes->size());
    Json labels = {{"type", "kwok"},
                   {"kubernetes.io/hostname", name},
                   {"tessera.test/gpus", std::to_string(n.gpu_count)},
                   {"tessera.test/model", n.gpu_model}};
    Json alloc = {{"cpu", std::to_string(n.cpu_milli) + "m"},
                  {"memory", std::to_string(n.memory_mib) + "Mi"},
                  {"pods", "110"}};
    if (n.gpu_count > 0) {
      const int64_t mem = n.gpu_memory_mib;  // the trace reader's model table
      labels["tessera.io/gpu-model"] = n.gpu_model;
      labels["nvidia.com/gpu.product"] = n.gpu_model;
      labels["nvidia.com/gpu.count"] = std::to_string(n.gpu_count);
      if (mem > 0) {
        labels["nvidia.com/gpu.memory"] = std::to_string(mem);
        labels["tessera.io/gpu-memory"] = std::to_string(mem);
        labels["tessera.test/gpu-memory-mib"] = std::to_string(mem);
      }
      alloc[family == "tessera" ? "tessera.io/gpu" : "nvidia.com/gpu"] =
          std::to_string(n.gpu_count);
    }
    items.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata",
          {{"name", name}, {"labels", labels}, {"annotations", {{"kwok.x-k8s.io/node", "fake"}}}}},
         {"status", {{"allocatable", alloc}, {"capacity", alloc}}}});
  }
  std::printf("%s\n",
              Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump(1).c_str());
  return 0;
}

// --- timeline --------------------------------------------------------------------------------

struct PodRecord {
  std::string name;
  std::string qos;
  double arrival_s = 0;
  double duration_s = 0;
  double created_s = -1;  // when the create call returned
  double bound_s = -1;    // the first watch event with spec.nodeName
  std::string node;
  std::string gpus;
  int deleted_early = 0;  // times it was deleted before it ended (a preemption victim)
  bool ended = false;
  bool exists = false;
  std::string uid;
};

std::string DnsName(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out += ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.') ? c : '-';
  }
  return out;
}

// "0-2,5" -> "0 1 2 5" (the replay's pods.csv spelling); text that is not a list stays as is.
std::string ExpandIndices(const std::string& s) {
  std::string out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const size_t dash = part.find('-');
    try {
      const int a = std::stoi(part.substr(0, dash));
      const int b = dash == std::string::npos ? a : std::stoi(part.substr(dash + 1));
      for (int i = a; i <= b; ++i) out += (out.empty() ? "" : " ") + std::to_string(i);
    } catch (...) {
      return s;
    }
  }
  return out;
}

Json PodObject(const tessera::TimedPod& p, const std::string& name, const std::string& ns,
               const std::string& scheduler, const std::string& family,
               const std::map<std::string, std::string>& priority_classes) {
  Json limits = Json::object();
  Json requests = {{"cpu", std::to_string(std::max<int64_t>(p.spec.cpu_milli, 1)) + "m"},
                   {"memory", std::to_string(std::max<int64_t>(p.spec.memory_mib, 1)) + "Mi"}};
  if (p.spec.gpu_count > 0) {
    if (family == "tessera") {
      limits["tessera.io/gpu"] = std::to_string(p.spec.gpu_count);
      if (p.spec.gpu_milli < 1000)
        limits["tessera.io/gpu-milli"] = std::to_string(p.spec.gpu_milli);
      if (p.spec.gpu_memory_mib > 0) {
        limits["tessera.io/gpu-memory"] = std::to_string(p.spec.gpu_memory_mib);
      }
    } else {
      limits["nvidia.com/gpu"] = std::to_string(p.spec.gpu_count);
      if (p.spec.gpu_milli < 1000) {
        limits["nvidia.com/gpucores"] = std::to_string((p.spec.gpu_milli + 9) / 10);
      }
      if (p.spec.gpu_memory_mib > 0) {
        limits["nvidia.com/gpumem"] = std::to_string(p.spec.gpu_memory_mib);
      }
    }
  }
  Json annotations = {{"tessera.test/run-for",
                       std::to_string(static_cast<int64_t>(std::llround(p.duration_s))) + "s"}};
  if (!p.spec.gpu_spec.empty()) annotations["tessera.io/gpu-model"] = p.spec.gpu_spec;
  Json spec = {
      {"schedulerName", scheduler},
      {"terminationGracePeriodSeconds", 30},
      {"containers", Json::array({{{"name", "main"},
                                   {"image", "registry.k8s.io/pause:3.10"},
                                   {"resources", {{"requests", requests}, {"limits", limits}}}}})}};
  auto pc = priority_classes.find(p.spec.qos);
  if (pc != priority_classes.end()) spec["priorityClassName"] = pc->second;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"labels", {{"tessera.test/qos", DnsName(p.spec.qos.empty() ? "none" : p.spec.qos)}}},
            {"annotations", annotations}}},
          {"spec", spec}};
}

class Timeline {
 public:
  Timeline(std::unique_ptr<HttpKubeApi> api, std::string ns)
      : api_(std::move(api)), ns_(std::move(ns)), start_(std::chrono::steady_clock::now()) {}

  double Now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  int Run(const tessera::Timeline& timeline, const std::vector<std::string>& args) {
    const std::string scheduler = Flag(args, "--scheduler-name", "tessera-scheduler");
    const std::string family = Flag(args, "--family", "tessera");
    const double settle_s = std::stod(Flag(args, "--settle-s", "600"));
    const bool recreate = Has(args, "--recreate-victims");
    std::map<std::string, std::string> priority_classes;
    for (const std::string& kv : Flags(args, "--priority-class")) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) Die(2, "--priority-class QOS=NAME, got '" + kv + "'");
      priority_classes[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const tessera::TimedPod& p : timeline.pods) {
        PodRecord r;
        r.name = DnsName(p.spec.name);
        r.qos = p.spec.qos;
        r.arrival_s = p.arrival_s;
        r.duration_s = p.duration_s;
        index_[r.name] = records_.size();
        records_.push_back(r);
        objects_.push_back(PodObject(p, r.name, ns_, scheduler, family, priority_classes).dump());
      }
    }
    std::thread watcher([this] { Watch(); });
    for (size_t i = 0; i < timeline.pods.size(); ++i) {
      const double due = timeline.pods[i].arrival_s;
      const double wait = due - Now();
      if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      Create(i);
      if (i % 200 == 199) {
        std::fprintf(stderr, "timeline: %zu of %zu pods created at %.1f s (due %.1f s)\n", i + 1,
                     timeline.pods.size(), Now(), due);
      }
    }
    const double last = timeline.pods.empty() ? 0 : timeline.pods.back().arrival_s;
    // Until every pod ended (or, without durations, was bound), re-creating victims if asked.
    while (Now() < last + settle_s) {
      std::vector<size_t> again;
      bool all_done = true;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        for (size_t i = 0; i < records_.size(); ++i) {
          PodRecord& r = records_[i];
          if (!r.ended) all_done = false;
          if (recreate && !r.ended && !r.exists && r.created_s >= 0 && r.deleted_early > 0 &&
              pending_recreate_.count(i) == 0) {
            pending_recreate_.insert(i);
            again.push_back(i);
          }
        }
      }
      for (size_t i : again) Create(i);
      if (all_done) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    stop_ = true;
    api_->CancelWatches();
    watcher.join();
    return 0;
  }

  void Write(const std::string& path) {
    std::ostringstream out;
    out << "pod,qos,arrival_s,created_s,bound_s,wait_s,node,gpus,preempted,ended\n";
    std::lock_guard<std::mutex> lock(mutex_);
    for (const PodRecord& r : records_) {
      char line[512];
      std::snprintf(line, sizeof line, "%s,%s,%.3f,%.3f,%.3f,%.3f,%s,%s,%d,%d\n", r.name.c_str(),
                    r.qos.c_str(), r.arrival_s, r.created_s, r.bound_s,
                    r.bound_s >= 0 ? r.bound_s - r.arrival_s : Now() - r.arrival_s, r.node.c_str(),
                    r.gpus.c_str(), r.deleted_early, r.ended ? 1 : 0);
      out << line;
    }
    if (auto s = tessera::WriteFile(path, out.str()); !s) Die(2, s.error().message);
  }

 private:
  void Create(size_t i) {
    const std::string path = "/api/v1/namespaces/" + ns_ + "/pods";
    for (int attempt = 0; attempt < 50; ++attempt) {
      auto res = client_->Post(path, objects_[i], "application/json");
      if (res && (res->status == 201 || res->status == 200)) {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_recreate_.erase(i);
        if (records_[i].created_s < 0) records_[i].created_s = Now();
        records_[i].exists = true;
        return;
      }
      // 409 AlreadyExists: a victim's old object is still being removed; try again shortly.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (attempt == 49) {
        std::fprintf(stderr, "timeline: create %s failed: %s\n", records_[i].name.c_str(),
                     res ? (std::to_string(res->status) + " " + res->body).c_str() : "no answer");
      }
    }
  }

  void Watch() {
    std::string rv;
    while (!stop_) {
      tessera::k8s::ListPage page;
      tessera::k8s::ListOptions lo;
      lo.limit = 0;
      auto st = api_->List("/api/v1/namespaces/" + ns_ + "/pods", lo, &page);
      if (!st.ok()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      for (const Json& item : page.items) Apply("ADDED", item);
      rv = page.resource_version;
      while (!stop_) {
        bool gone = false;
        auto ws = api_->Watch(
            "/api/v1/namespaces/" + ns_ + "/pods", rv, 60,
            [&](std::string_view line) {
              Json ev = Json::parse(line, nullptr, false);
              if (ev.is_discarded()) return true;
              const std::string type = ev.value("type", "");
              if (type == "ERROR") {
                gone = true;
                return false;
              }
              const Json& obj = ev["object"];
              if (obj.contains("metadata")) {
                rv = obj["metadata"].value("resourceVersion", rv);
              }
              if (type != "BOOKMARK") Apply(type, obj);
              return !stop_;
            },
            nullptr);
        if (gone || ws.gone() || !ws.ok()) break;
      }
    }
  }

  void Apply(const std::string& type, const Json& obj) {
    const Json& meta = obj.value("metadata", Json::object());
    const std::string name = meta.value("name", "");
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(name);
    if (it == index_.end()) return;
    PodRecord& r = records_[it->second];
    const std::string phase = obj.value("status", Json::object()).value("phase", "");
    const std::string node = obj.value("spec", Json::object()).value("nodeName", "");
    if (type == "DELETED") {
      if (r.exists && meta.value("uid", "") == r.uid) {
        r.exists = false;
        if (!r.ended) ++r.deleted_early;
      }
      return;
    }
    r.uid = meta.value("uid", "");
    r.exists = true;
    if (!node.empty() && r.bound_s < 0) {
      r.bound_s = Now();
      r.node = node;
      const Json ann = meta.value("annotations", Json::object());
      r.gpus = ExpandIndices(ann.value("tessera.io/gpu-indices", ""));
    }
    if (phase == "Succeeded" || phase == "Failed") r.ended = true;
  }

 public:
  std::unique_ptr<httplib::Client> client_;

 private:
  std::unique_ptr<HttpKubeApi> api_;
  std::string ns_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::vector<PodRecord> records_;
  std::vector<std::string> objects_;
  std::map<std::string, size_t> index_;
  std::set<size_t> pending_recreate_;
  std::atomic<bool> stop_{false};
};

int RunTimeline(const std::vector<std::string>& args) {
  const std::string kubeconfig = Flag(args, "--kubeconfig");
  const std::string pods_file = Flag(args, "--pods");
  const std::string ns = Flag(args, "--namespace", "default");
  const std::string out = Flag(args, "--out");
  if (kubeconfig.empty() || pods_file.empty() || out.empty()) {
    Die(2, "timeline: --kubeconfig, --pods and --out are required");
  }
  auto config = tessera::k8s::KubeconfigConfig(kubeconfig);
  if (!config.ok()) Die(2, config.error().message);
  const std::string text = ReadOrDie(pods_file);
  auto pods = tessera::ReadPodCsv(text, pods_file);
  if (!pods.ok()) Die(2, pods.error().message);
  const tessera::Timeline timeline =
      tessera::TimelineFromTrace(*pods, pods_file, tessera::CsvDataLines(text), 1.0);
  const KubeApiConfig c = *config;
  auto api = HttpKubeApi::Create(c);
  if (!api.ok()) Die(2, api.error().message);
  Timeline t(std::move(*api), ns);
  // The creating client: its own keep-alive connection, the kubeconfig's credentials.
  t.client_ = std::make_unique<httplib::Client>(c.server, c.client_cert_file, c.client_key_file);
  if (!c.ca_file.empty()) t.client_->set_ca_cert_path(c.ca_file.c_str());
  t.client_->set_keep_alive(true);
  t.client_->set_connection_timeout(5);
  t.client_->set_read_timeout(30);
  if (!c.token.empty()) t.client_->set_bearer_token_auth(c.token);
  t.Run(timeline, args);
  t.Write(out);
  std::fprintf(stderr, "timeline: %zu pods, record in %s\n", timeline.pods.size(), out.c_str());
  return 0;
}

// --- compare ---------------------------------------------------------------------------------

struct Row {
  std::map<std::string, std::string> f;
  double Num(const std::string& k) const {
    auto it = f.find(k);
    return it == f.end() || it->second.empty() ? -1 : std::stod(it->second);
  }
  std::string Str(const std::string& k) const {
    auto it = f.find(k);
    return it == f.end() ? "" : it->second;
  }
};

std::vector<Row> ReadCsv(const std::string& path) {
  std::istringstream in(ReadOrDie(path));
  std::string line;
  std::vector<std::string> header;
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    if (header.empty()) {
      header = cells;
      continue;
    }
    Row r;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) r.f[header[i]] = cells[i];
    rows.push_back(r);
  }
  return rows;
}

int Compare(const std::vector<std::string>& args) {
  const std::string real_file = Flag(args, "--real");
  const std::string replay_file = Flag(args, "--replay");
  const std::string policy = Flag(args, "--policy");
  if (real_file.empty() || replay_file.empty()) Die(2, "compare: --real and --replay are required");
  std::map<std::string, Row> replay;
  for (const Row& r : ReadCsv(replay_file)) {
    if (!policy.empty() && r.Str("policy") != policy) continue;
    replay[DnsName(r.Str("pod"))] = r;
  }
  std::vector<Row> real = ReadCsv(real_file);
  int n = 0, same_node = 0, same_gpus = 0, missing = 0;
  std::map<std::string, std::vector<double>> wait_real, wait_replay;
  std::vector<std::string> differ;
  for (const Row& r : real) {
    auto it = replay.find(r.Str("pod"));
    if (it == replay.end()) {
      ++missing;
      continue;
    }
    const Row& p = it->second;
    ++n;
    const std::string qos = r.Str("qos");
    wait_real[qos].push_back(std::max(0.0, r.Num("wait_s")));
    wait_replay[qos].push_back(std::max(0.0, p.Num("wait_s")));
    const bool node_eq = r.Str("node") == p.Str("node");
    if (node_eq) ++same_node;
    if (node_eq && r.Str("gpus") == p.Str("gpus")) ++same_gpus;
    if (!node_eq) {
      char line[512];
      std::snprintf(
          line, sizeof line,
          "%s (%s, arrival %.1f s): real %s [%s] after %.2f s; replay %s [%s] after %.2f s",
          r.Str("pod").c_str(), qos.c_str(), r.Num("arrival_s"), r.Str("node").c_str(),
          r.Str("gpus").c_str(), r.Num("wait_s"), p.Str("node").c_str(), p.Str("gpus").c_str(),
          p.Num("wait_s"));
      differ.push_back(line);
    }
  }
  std::ostringstream rep;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "pods compared: %d (%d of the real record not in the replay)\n"
                "same node: %d (%.2f %%); same node and GPUs: %d (%.2f %%)\n",
                n, missing, same_node, n ? 100.0 * same_node / n : 0.0, same_gpus,
                n ? 100.0 * same_gpus / n : 0.0);
  rep << buf;
  rep << "class,pods,real_p50_s,replay_p50_s,real_p95_s,replay_p95_s,real_p99_s,replay_p99_s,"
         "p99_within\n";
  bool waits_ok = true;
  for (auto& [qos, w] : wait_real) {
    std::vector<double>& v = wait_replay[qos];
    std::sort(w.begin(), w.end());
    std::sort(v.begin(), v.end());
    const double r99 = tessera::Percentile(w, 99), p99 = tessera::Percentile(v, 99);
    const bool within = std::fabs(r99 - p99) <= std::max(1.0, 0.1 * std::max(r99, p99));
    waits_ok = waits_ok && within;
    std::snprintf(buf, sizeof buf, "%s,%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%s\n", qos.c_str(),
                  w.size(), tessera::Percentile(w, 50), tessera::Percentile(v, 50),
                  tessera::Percentile(w, 95), tessera::Percentile(v, 95), r99, p99,
                  within ? "yes" : "NO");
    rep << buf;
  }
  rep << "pods on another node (" << differ.size() << "):\n";
  for (const std::string& d : differ) rep << "  " << d << "\n";
  std::fputs(rep.str().c_str(), stdout);
  if (!Flag(args, "--report").empty()) {
    if (auto s = tessera::WriteFile(Flag(args, "--report"), rep.str()); !s)
      Die(2, s.error().message);
  }
  const double share = n ? 100.0 * same_node / n : 0;
  const double bar = std::stod(Flag(args, "--min-same-node-pct", "99"));
  if (n == 0 || share < bar || !waits_ok) {
    std::printf("FAILED: same node %.2f %% (bar %.0f %%), waits %s\n", share, bar,
                waits_ok ? "within" : "NOT within 10 % or 1 s");
    return 1;
  }
  std::printf("OK: same node %.2f %%, every class's p99 wait within 10 %% or 1 s\n", share);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A connection the API server closed must be an error of that call, not the end of the process.
  signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty())
    Die(2, "usage: tessera_cluster_driver nodes|timeline|compare ... (see the source's header)");
  const std::string cmd = args[0];
  if (cmd == "nodes") return Nodes(args);
  if (cmd == "timeline") return RunTimeline(args);
  if (cmd == "compare") return Compare(args);
  Die(2, "unknown command '" + cmd + "'");
}
