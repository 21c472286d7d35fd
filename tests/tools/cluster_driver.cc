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
//       [--scheduler-name S] [--family tessera|nvidia|count] [--priority-class QOS=NAME]...
//       [--time-scale K] [--settle-s S] [--recreate-victims] [--end-from-arrival] --out OUT.csv
//       creates each pod of the trace's pod list at its arrival (creation_time, the first at 0;
//       times as `tessera replay --pods` reads them) with the annotation
//       `tessera.test/run-for: <duration>s` (kwok ends it that long after it started), watches
//       the namespace, and writes per pod: arrival, first bind (seconds from the start, from
//       the watch), node and GPU indices of the first bind, times deleted before it ended
//       (preempted). --family count asks for `tessera.io/gpu` alone (a share as one GPU): the pods
//       kube-scheduler alone can place, GPUs as a plain extended resource. With --recreate-victims
//       a pod deleted before it ended is created again (as its controller would; the replay
//       re-queues victims). --time-scale K divides the arrival times (not the durations) as
//       `tessera replay --time-scale` does. --end-from-arrival: instead of the run-for annotation,
//       each pod gets `tessera.test/end-at` once bound: its arrival (if bound within a second of
//       it; else its bind) plus its duration, less 0.1 s — its run as the replay counts it, so that
//       departures and arrivals come in the replay's order. Ends when every pod has ended or
//       --settle-s seconds after the last arrival.
//   tessera_cluster_driver compare --real OUT.csv --replay PODS_OUT.csv [--policy P]
//       [--report FILE.md] [--min-same-node-pct 99]
//       the share of pods on the same node (and the same GPUs) in both, each class's wait
//       percentiles side by side, and every pod that differs with the first difference in time.
//
//   tessera_cluster_driver demand --timeline PODS.csv [--time-scale K] --recorded REC.csv
//       [--max-gpu-hours-pct 5] [--max-arrival-shift-s 2]
//       the round trip of `tessera record`: the timeline a run played (at --time-scale, as the
//       driver played it) and what `tessera record` wrote of that run (read at scale 1: it
//       was recorded in real time), both read as `tessera replay` reads them. Per class: the
//       pods (recorded pods by name, without namespace; a victim re-created under its name is
//       one pod), the GPU-hours asked for (GPUs x duration; the recording's sum every
//       incarnation) and the share of pods whose recorded arrival, counted from the first, is
//       within --max-arrival-shift-s of the timeline's. Exit 1 when a class's pods differ, a
//       class's GPU-hours differ by more than --max-gpu-hours-pct, a pod of either is missing
//       from the other, or fewer than 99 % of the pods arrive within the shift.
//
//   tessera_cluster_driver quantiles --metrics FILE --name METRIC [--label K=V]...
//       p50 and p99 of a Prometheus histogram in a /metrics text, over the series whose labels
//       match, as PromQL's histogram_quantile computes them (linear within a bucket).
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
#include <ctime>
#include <deque>
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
  std::string bound_uid;  // the object (UID) whose bind was last seen
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
               const std::map<std::string, std::string>& priority_classes, bool run_for) {
  Json limits = Json::object();
  Json requests = {{"cpu", std::to_string(std::max<int64_t>(p.spec.cpu_milli, 1)) + "m"},
                   {"memory", std::to_string(std::max<int64_t>(p.spec.memory_mib, 1)) + "Mi"}};
  if (p.spec.gpu_count > 0) {
    if (family == "count") {  // kube-scheduler alone: GPUs as a plain count, a share as one
      limits["tessera.io/gpu"] = std::to_string(p.spec.gpu_count);
    } else if (family == "tessera") {
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
  Json annotations = Json::object();
  if (run_for) {
    annotations["tessera.test/run-for"] =
        std::to_string(static_cast<int64_t>(std::llround(p.duration_s))) + "s";
  }
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
    end_from_arrival_ = Has(args, "--end-from-arrival");
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
        objects_.push_back(
            PodObject(p, r.name, ns_, scheduler, family, priority_classes, !end_from_arrival_)
                .dump());
      }
    }
    std::thread watcher([this] { Watch(); });
    std::thread ender([this] { EndPods(); });
    // Pod i is created by creator i mod N, each on its own connection, at its arrival time.
    const size_t creators = std::max<size_t>(1, std::stoul(Flag(args, "--creators", "1")));
    std::vector<std::thread> threads;
    for (size_t t = 0; t < creators; ++t) {
      threads.emplace_back([&, t] {
        std::unique_ptr<httplib::Client> client = NewClient();
        for (size_t i = t; i < timeline.pods.size(); i += creators) {
          const double due = timeline.pods[i].arrival_s;
          const double wait = due - Now();
          if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
          Create(*client, i);
          if (i % 500 == 499) {
            std::fprintf(stderr, "timeline: pod %zu of %zu created at %.1f s (due %.1f s)\n", i + 1,
                         timeline.pods.size(), Now(), due);
          }
        }
      });
    }
    for (std::thread& th : threads) th.join();
    std::unique_ptr<httplib::Client> client = NewClient();
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
      for (size_t i : again) Create(*client, i);
      if (all_done) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    stop_ = true;
    api_->CancelWatches();
    watcher.join();
    ending_.notify_all();
    ender.join();
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
  /// A client of its own for one thread: the kubeconfig's server and credentials, keep-alive.
  std::unique_ptr<httplib::Client> NewClient() const {
    auto cli = std::make_unique<httplib::Client>(config_.server, config_.client_cert_file,
                                                 config_.client_key_file);
    if (!config_.ca_file.empty()) cli->set_ca_cert_path(config_.ca_file.c_str());
    cli->set_keep_alive(true);
    cli->set_connection_timeout(5);
    cli->set_read_timeout(30);
    if (!config_.token.empty()) cli->set_bearer_token_auth(config_.token);
    return cli;
  }

  void Create(httplib::Client& client, size_t i) {
    const std::string path = "/api/v1/namespaces/" + ns_ + "/pods";
    for (int attempt = 0; attempt < 50; ++attempt) {
      auto res = client.Post(path, objects_[i], "application/json");
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

  /// Writes each bound pod's end (tessera.test/end-at, an RFC 3339 time kwok's stage waits for).
  void EndPods() {
    std::unique_ptr<httplib::Client> client = NewClient();
    for (;;) {
      PendingEnd e;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ending_.wait(lock, [&] { return stop_ || !to_end_.empty(); });
        if (to_end_.empty()) return;
        e = to_end_.front();
        to_end_.pop_front();
      }
      const auto wall = std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(e.at_s - Now()));
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch());
      const time_t secs = static_cast<time_t>(ns.count() / 1000000000);
      std::tm utc{};
      gmtime_r(&secs, &utc);
      char text[96];
      std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", utc.tm_year + 1900,
                    utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                    static_cast<long long>(ns.count() % 1000000000));
      std::string name;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        name = records_[e.index].name;
      }
      const Json patch = {
          {"metadata", {{"uid", e.uid}, {"annotations", {{"tessera.test/end-at", text}}}}}};
      auto res = client->Patch("/api/v1/namespaces/" + ns_ + "/pods/" + name, patch.dump(),
                               "application/merge-patch+json");
      if (!res || res->status != 200) {
        std::fprintf(stderr, "timeline: setting the end of %s failed: %s\n", name.c_str(),
                     res ? std::to_string(res->status).c_str() : "no answer");
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
    if (!node.empty() && r.bound_uid != r.uid) {
      const double now = Now();
      r.bound_uid = r.uid;
      const bool first = r.bound_s < 0;
      if (first) {
        r.bound_s = now;
        r.node = node;
        const Json ann = meta.value("annotations", Json::object());
        r.gpus = ExpandIndices(ann.value("tessera.io/gpu-indices", ""));
      }
      if (end_from_arrival_) {
        // Its run as the replay counts it: from its arrival when it was bound at once (within
        // a second), else from its bind; 0.1 s early, so that it leaves before a pod that
        // arrives at the same instant of the replay comes (the replay takes finishes first).
        const double from = first && now - r.arrival_s <= 1.0 ? r.arrival_s : now;
        to_end_.push_back({it->second, r.uid, from + r.duration_s - 0.1});
        ending_.notify_one();
      }
    }
    if (phase == "Succeeded" || phase == "Failed") r.ended = true;
  }

 public:
  KubeApiConfig config_;

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
  bool end_from_arrival_ = false;
  struct PendingEnd {
    size_t index = 0;
    std::string uid;
    double at_s = 0;  // on Now()'s clock
  };
  std::deque<PendingEnd> to_end_;  // GUARDED_BY(mutex_)
  std::condition_variable ending_;
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
  const double time_scale = std::stod(Flag(args, "--time-scale", "1"));
  if (!(time_scale > 0)) Die(2, "timeline: --time-scale must be > 0");
  const tessera::Timeline timeline =
      tessera::TimelineFromTrace(*pods, pods_file, tessera::CsvDataLines(text), time_scale);

  const KubeApiConfig c = *config;
  auto api = HttpKubeApi::Create(c);
  if (!api.ok()) Die(2, api.error().message);
  Timeline t(std::move(*api), ns);
  t.config_ = c;
  t.Run(timeline, args);
  t.Write(out);
  std::fprintf(stderr, "timeline: %zu pods, record in %s\n", timeline.pods.size(), out.c_str());
  return 0;
}

// --- demand ----------------------------------------------------------------------------------

tessera::Timeline ReadTimelineOrDie(const std::string& file, double time_scale) {
  const std::string text = ReadOrDie(file);
  auto pods = tessera::ReadPodCsv(text, file);
  if (!pods.ok()) Die(2, pods.error().message);
  return tessera::TimelineFromTrace(*pods, file, tessera::CsvDataLines(text), time_scale);
}

/// A recorded pod's name as the timeline had it: "default/tl-pod-0001~UID" -> "tl-pod-0001".
std::string TimelineName(std::string name) {
  if (const size_t slash = name.find('/'); slash != std::string::npos) name.erase(0, slash + 1);
  if (const size_t tilde = name.find('~'); tilde != std::string::npos) name.erase(tilde);
  return name;
}

int Demand(const std::vector<std::string>& args) {
  const std::string timeline_file = Flag(args, "--timeline");
  const std::string recorded_file = Flag(args, "--recorded");
  if (timeline_file.empty() || recorded_file.empty()) {
    Die(2, "demand: --timeline and --recorded are required");
  }
  const double time_scale = std::stod(Flag(args, "--time-scale", "1"));
  const double max_pct = std::stod(Flag(args, "--max-gpu-hours-pct", "5"));
  const double max_shift = std::stod(Flag(args, "--max-arrival-shift-s", "2"));
  if (!(time_scale > 0)) Die(2, "demand: --time-scale must be > 0");
  const tessera::Timeline want = ReadTimelineOrDie(timeline_file, time_scale);
  const tessera::Timeline got = ReadTimelineOrDie(recorded_file, 1);
  bool ok = true;
  for (const auto* t : {&want, &got}) {
    for (const tessera::SkippedPod& s : t->skipped) {
      std::printf("skipped %s (%s): %s\n", s.name.c_str(), s.where.c_str(), s.reason.c_str());
      ok = false;
    }
  }
  struct ClassDemand {
    std::set<std::string> pods;
    int rows = 0;
    double gpu_hours = 0;
  };
  std::map<std::string, ClassDemand> a, b;
  std::map<std::string, double> arrival_a, arrival_b;  // by timeline name: the first arrival
  std::map<std::string, std::string> class_a, class_b;
  const auto add = [](const tessera::TimedPod& p, const std::string& name, ClassDemand& d,
                      std::map<std::string, double>& arrival,
                      std::map<std::string, std::string>& cls) {
    d.pods.insert(name);
    ++d.rows;
    d.gpu_hours += static_cast<double>(p.spec.TotalGpuMilli()) / 1000.0 * p.duration_s / 3600.0;
    auto [it, fresh] = arrival.emplace(name, p.arrival_s);
    if (!fresh) it->second = std::min(it->second, p.arrival_s);
    cls[name] = p.spec.qos;
  };
  for (const tessera::TimedPod& p : want.pods) {
    add(p, p.spec.name, a[p.spec.qos], arrival_a, class_a);
  }
  for (const tessera::TimedPod& p : got.pods) {
    add(p, TimelineName(p.spec.name), b[p.spec.qos], arrival_b, class_b);
  }
  std::set<std::string> classes;
  for (const auto& [c, d] : a) classes.insert(c);
  for (const auto& [c, d] : b) classes.insert(c);
  std::printf(
      "class,timeline_pods,recorded_pods,recorded_rows,timeline_gpu_hours,"
      "recorded_gpu_hours,gpu_hours_diff_pct\n");
  for (const std::string& c : classes) {
    const ClassDemand& x = a[c];
    const ClassDemand& y = b[c];
    const double diff = x.gpu_hours > 0 ? 100.0 * (y.gpu_hours - x.gpu_hours) / x.gpu_hours
                                        : (y.gpu_hours > 0 ? 100 : 0);
    std::printf("%s,%zu,%zu,%d,%.3f,%.3f,%+.2f\n", c.c_str(), x.pods.size(), y.pods.size(), y.rows,
                x.gpu_hours, y.gpu_hours, diff);
    if (x.pods.size() != y.pods.size() || std::abs(diff) > max_pct) ok = false;
  }
  int missing = 0, extra = 0, other_class = 0, within = 0;
  for (const auto& [name, t] : arrival_a) {
    auto it = arrival_b.find(name);
    if (it == arrival_b.end()) {
      if (++missing <= 5) std::printf("not recorded: %s\n", name.c_str());
      continue;
    }
    if (class_b[name] != class_a[name]) {
      if (++other_class <= 5) {
        std::printf("recorded in another class: %s (%s, recorded %s)\n", name.c_str(),
                    class_a[name].c_str(), class_b[name].c_str());
      }
    }
    within += std::abs(it->second - t) <= max_shift;
  }
  for (const auto& [name, t] : arrival_b) extra += arrival_a.count(name) == 0;
  const double within_pct = arrival_a.empty() ? 100 : 100.0 * within / arrival_a.size();
  std::printf(
      "pods not recorded: %d; recorded pods not in the timeline: %d; in another class: "
      "%d; arrivals within %.1f s: %.2f %%\n",
      missing, extra, other_class, max_shift, within_pct);
  ok = ok && missing == 0 && extra == 0 && other_class == 0 && within_pct >= 99;
  std::printf(
      "%s: the recorded history %s the timeline's per-class demand (GPU-hours within "
      "%.1f %%)\n",
      ok ? "OK" : "FAIL", ok ? "has" : "does not have", max_pct);
  return ok ? 0 : 1;
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

// --- quantiles -------------------------------------------------------------------------------

/// The labels of a Prometheus text sample line `name{a="x",b="y"} value`, as a map.
std::map<std::string, std::string> LabelsOf(const std::string& line, size_t open, size_t close) {
  std::map<std::string, std::string> labels;
  size_t i = open + 1;
  while (i < close) {
    const size_t eq = line.find('=', i);
    if (eq == std::string::npos || eq > close) break;
    const size_t q1 = line.find('"', eq);
    size_t q2 = q1 + 1;
    while (q2 < close && (line[q2] != '"' || line[q2 - 1] == '\\')) ++q2;
    labels[line.substr(i, eq - i)] = line.substr(q1 + 1, q2 - q1 - 1);
    i = q2 + 2;  // past '",'
  }
  return labels;
}

int Quantiles(const std::vector<std::string>& args) {
  const std::string file = Flag(args, "--metrics");
  const std::string name = Flag(args, "--name");
  if (file.empty() || name.empty())
    Die(2, "quantiles: --metrics FILE and --name METRIC are required");
  std::map<std::string, std::string> want;
  for (const std::string& kv : Flags(args, "--label")) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) Die(2, "--label k=v, got '" + kv + "'");
    want[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  // Cumulative counts by upper bound, summed over the series whose labels match.
  std::map<double, double> buckets;
  std::istringstream in(ReadOrDie(file));
  std::string line;
  const std::string prefix = name + "_bucket{";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    const size_t open = name.size() + 7;
    const size_t close = line.find('}', open);
    if (close == std::string::npos) continue;
    std::map<std::string, std::string> labels = LabelsOf(line, open, close);
    bool match = true;
    for (const auto& [k, v] : want) match = match && labels[k] == v;
    if (!match || labels.count("le") == 0) continue;
    const double le = labels["le"] == "+Inf" ? INFINITY : std::stod(labels["le"]);
    buckets[le] += std::stod(line.substr(close + 1));
  }
  const double total = buckets.empty() ? 0 : buckets.rbegin()->second;
  std::printf("count=%.0f", total);
  for (const std::string& qs : {std::string("0.5"), std::string("0.99")}) {
    const double q = std::stod(qs);
    double value = NAN;
    if (total > 0) {
      // histogram_quantile: the bucket the rank falls in, linear within it.
      const double rank = q * total;
      double lower = 0, below = 0;
      for (const auto& [le, count] : buckets) {
        if (count >= rank) {
          value = std::isinf(le)
                      ? lower
                      : lower + (le - lower) * (rank - below) / std::max(count - below, 1e-12);
          break;
        }
        lower = le;
        below = count;
      }
    }
    std::printf(" p%s=%.6f", qs == "0.5" ? "50" : "99", value);
  }
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A connection the API server closed must be an error of that call, not the end of the process.
  signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty())
    Die(2,
        "usage: tessera_cluster_driver nodes|timeline|compare|demand|quantiles ... (see the "
        "source's header)");
  const std::string cmd = args[0];
  if (cmd == "nodes") return Nodes(args);
  if (cmd == "timeline") return RunTimeline(args);
  if (cmd == "compare") return Compare(args);
  if (cmd == "demand") return Demand(args);
  if (cmd == "quantiles") return Quantiles(args);
  Die(2, "unknown command '" + cmd + "'");
}
