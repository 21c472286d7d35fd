#include "k8s/api/cluster_cache.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "k8s/api/json_util.h"
#include "k8s/api/log.h"
#include "k8s/api/objects.h"

namespace tessera::k8s {
namespace {

/// A string member of `obj`, or "" when absent or not a string.
std::string StringField(const nlohmann::json& obj, std::string_view field) {
  if (!obj.is_object()) return "";
  const nlohmann::json* v = FindField(obj, field);
  return v != nullptr && v->is_string() ? v->get<std::string>() : "";
}

/// metadata.<field> of an API object, or "".
std::string MetaString(const nlohmann::json& obj, std::string_view field) {
  if (!obj.is_object()) return "";
  const nlohmann::json* meta = FindField(obj, "metadata");
  return meta == nullptr ? "" : StringField(*meta, field);
}

}  // namespace

PodIdentity ReadPodIdentity(const nlohmann::json& obj) {
  PodIdentity id;
  id.uid = MetaString(obj, "uid");
  id.name = MetaString(obj, "name");
  id.namespace_name = MetaString(obj, "namespace");
  id.resource_version = MetaString(obj, "resourceVersion");
  if (obj.is_object()) {
    if (const nlohmann::json* spec = FindField(obj, "spec"))
      id.node_name = StringField(*spec, "nodeName");
    if (const nlohmann::json* status = FindField(obj, "status"))
      id.phase = StringField(*status, "phase");
  }
  if (id.uid.empty() && !id.name.empty()) {
    id.uid = ObjectKey(id.namespace_name, id.name);
  }
  return id;
}

/// One resource's list + watch loop. Runs on one thread; its sync state and counters are read
/// from others.
class ClusterCache::Reflector {
 public:
  struct Handlers {
    std::function<std::string(const nlohmann::json&)> key;  ///< "" = not an object we can use
    std::function<Status(const nlohmann::json&, const std::string& where)> upsert;
    std::function<void(const std::string& key)> remove;
    std::function<void()> begin_list;  ///< may be empty
    /// May be empty; gets the keys listed and the list's resourceVersion.
    std::function<void(const std::set<std::string>&, const std::string&)> end_list;
    /// May be empty (the resource is needed): for a failed list, why the cache goes on
    /// without the resource ("" = it does not), logged as a warning once per reason; the
    /// list is still retried with back-off.
    std::function<std::string(const ApiStatus&)> unavailable;
  };
  /// The metrics of one resource's reflector (no-ops without a registry).
  struct Metrics {
    prometheus::Counter* lists = nullptr;
    prometheus::Counter* watch_errors = nullptr;
    prometheus::Counter* not_applied = nullptr;
    prometheus::Gauge* last_event = nullptr;
  };

  /// `paths`: the collection, then the versions to fall back to when one answers 404.
  Reflector(std::string resource, std::vector<std::string> paths, KubeApi* api,
            const ClusterCacheOptions* o, Sleeper* sleeper, const Clock* clock, Handlers h,
            Metrics metrics, std::function<void()> sync_changed)
      : resource_(std::move(resource)),
        paths_(std::move(paths)),
        api_(api),
        options_(o),
        sleeper_(sleeper),
        clock_(clock),
        h_(std::move(h)),
        metrics_(metrics),
        sync_changed_(std::move(sync_changed)) {
    SetState(false, "initial list of " + resource_ + " in progress");
  }

  void Run(const std::atomic<bool>& stop) {
    bool need_list = true;
    while (!stop.load()) {
      if (need_list) {
        ApiStatus s = List();
        if (stop.load()) return;
        if (s.http_status == 404 && path_index_ + 1 < paths_.size()) {
          Log("warn", "not served; trying the next API version",
              {{"path", paths_[path_index_]}, {"next", paths_[path_index_ + 1]}});
          ++path_index_;
          continue;
        }
        if (s.http_status == 404) {
          Log("warn", "not served by this API server; going on without it",
              {{"paths", paths_}, {"error", s.error}});
          SetState(false, resource_ + " not served by the API server");
          return;
        }
        if (!s.ok()) {
          SetState(false, (listed_ ? "relist of " : "initial list of ") + resource_ +
                              " failed: " + s.error);
          if (h_.unavailable) {
            std::string why = h_.unavailable(s);
            if (!why.empty() && why != unavailable_) Log("warn", why, {});
            unavailable_ = std::move(why);
          }
          if (!Failed("list failed", s.error)) return;
          continue;
        }
        need_list = false;
        delay_ = 0;
        listed_ = true;
        SetState(true, "");
      }
      ++watches_;
      int events = 0;
      bool gone = false;
      std::string bad;  // a bad event ends the stream; we resume from the last good one
      ApiStatus s = api_->Watch(
          paths_[path_index_], resource_version_, options_->watch_timeout_seconds,
          [&](std::string_view line) {
            if (stop.load()) return false;
            ++events;
            return HandleEvent(line, &gone, &bad);
          },
          [&] { SetState(true, ""); });
      if (stop.load()) return;
      if (gone || s.gone()) {
        Log("warn", "relist",
            {{"reason", "410 Gone: resourceVersion " + resource_version_ + " is too old"}});
        SetState(false, "relisting " + resource_ + ": resourceVersion " + resource_version_ +
                            " is gone (410)");
        need_list = true;
        continue;
      }
      if (!bad.empty()) s.error = bad;
      if (!s.ok()) {
        if (metrics_.watch_errors) metrics_.watch_errors->Increment();
        SetState(false, "watch of " + resource_ + " broken since " + Rfc3339Millis(Now()) + ": " +
                            s.error);
        if (events > 0) delay_ = 0;
        if (!Failed("watch failed; resuming from resourceVersion " + resource_version_, s.error)) {
          return;
        }
        continue;
      }
      // The server ended the watch (timeoutSeconds): resume at once, unless it ended empty
      // (a server closing every watch at once must not make us spin).
      if (events == 0 && !Failed("watch ended without events", "")) return;
      if (events > 0) delay_ = 0;
    }
  }

  Stats stats() const {
    return {lists_.load(), watches_.load(), errors_.load(), not_applied_.load(),
            last_event_.load()};
  }
  /// Whether this resource is listed and its watch is not known broken, and why not.
  std::pair<bool, std::string> state() const {
    std::lock_guard<std::mutex> lock(state_mutex_);
    return {healthy_, reason_};
  }

 private:
  double Now() const { return clock_->NowSeconds(); }

  void SetState(bool healthy, std::string reason) {
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      if (healthy_ == healthy && reason_ == reason) return;
      healthy_ = healthy;
      reason_ = std::move(reason);
    }
    if (sync_changed_) sync_changed_();
  }

  void Touch() {
    const double now = Now();
    last_event_.store(now);
    if (metrics_.last_event) metrics_.last_event->Set(now);
  }

  /// Lists every page, applies each item, then deletes what the list lacks.
  ApiStatus List() {
    std::set<std::string> listed;
    ListOptions request;
    request.limit = options_->page_size;
    ListPage page;
    size_t page_index = 0;
    if (h_.begin_list) h_.begin_list();
    do {
      ApiStatus s = api_->List(paths_[path_index_], request, &page);
      if (!s.ok()) return s;
      for (size_t i = 0; i < page.items.size(); ++i) {
        const std::string where = resource_ + ": list page " + std::to_string(page_index) +
                                  " items[" + std::to_string(i) + "]";
        const std::string key = h_.key(page.items[i]);
        if (key.empty()) {
          ++errors_;
          NotApplied(where, "no metadata.name/uid");
          continue;
        }
        listed.insert(key);
        Apply(key, page.items[i], where);
      }
      resource_version_ = page.resource_version;
      request.continue_token = page.continue_token;
      ++page_index;
    } while (!request.continue_token.empty());
    int deleted = 0;
    for (auto it = known_.begin(); it != known_.end();) {
      if (listed.count(*it)) {
        ++it;
        continue;
      }
      h_.remove(*it);
      it = known_.erase(it);
      ++deleted;
    }
    if (h_.end_list) h_.end_list(listed, resource_version_);
    ++lists_;
    if (metrics_.lists) metrics_.lists->Increment();
    Touch();
    Log("info", "list",
        {{"items", listed.size()}, {"deleted", deleted}, {"resourceVersion", resource_version_}});
    ApiStatus ok;
    ok.http_status = 200;
    return ok;
  }

  void NotApplied(const std::string& where, const std::string& error) {
    ++not_applied_;
    if (metrics_.not_applied) metrics_.not_applied->Increment();
    Log("error", "object not applied", {{"where", where}, {"error", error}});
  }

  void Apply(const std::string& key, const nlohmann::json& obj, const std::string& where) {
    known_.insert(key);
    Status s = h_.upsert(obj, where);
    if (!s.ok()) {
      ++errors_;
      NotApplied(where, s.error().message);
    }
  }

  /// One watch event line. Returns false to end the stream (410, ERROR or a bad line).
  bool HandleEvent(std::string_view line, bool* gone, std::string* bad) {
    const std::string where =
        resource_ + ": watch event after resourceVersion " + resource_version_;
    Result<nlohmann::json> event = ParseJson(line, kMaxWatchEventBytes, where);
    if (!event.ok() || !event->is_object()) {
      *bad = event.ok() ? where + ": expected an object" : event.error().message;
      return false;
    }
    std::string type;
    Status s = ReadString(FindField(*event, "type"), where + ".type", &type);
    const nlohmann::json* object = FindField(*event, "object");
    if (!s.ok() || object == nullptr || !object->is_object()) {
      *bad = s.ok() ? where + ".object: expected an object" : s.error().message;
      return false;
    }
    if (type == "ERROR") {
      int64_t code = 0;
      (void)ReadInt64(FindField(*object, "code"), "code", 0, 999, &code);
      if (code == 410) {
        *gone = true;
      } else {
        std::string message;
        (void)ReadString(FindField(*object, "message"), "message", &message);
        *bad = where + ": ERROR event, code " + std::to_string(code) + ": " +
               QuoteForError(message, 300);
      }
      return false;
    }
    Touch();
    const std::string rv = MetaString(*object, "resourceVersion");
    if (type == "BOOKMARK") {
      if (!rv.empty()) resource_version_ = rv;
      return true;
    }
    const std::string key = h_.key(*object);
    if (key.empty()) {
      *bad = where + ": " + type + " object without metadata.name/uid";
      return false;
    }
    if (type == "ADDED" || type == "MODIFIED") {
      Apply(key, *object, where + " (" + type + " " + key + ")");
    } else if (type == "DELETED") {
      known_.erase(key);
      h_.remove(key);
    } else {
      ++errors_;
      Log("warn", "unknown watch event type", {{"where", where}, {"type", type}});
    }
    if (!rv.empty()) resource_version_ = rv;
    return true;
  }

  /// Logs an error and waits the back-off. False when stopping.
  bool Failed(const std::string& what, const std::string& error) {
    if (!error.empty()) ++errors_;
    delay_ = delay_ == 0 ? options_->backoff_initial_seconds
                         : std::min(delay_ * 2, options_->backoff_max_seconds);
    nlohmann::json f = {{"retry_in_seconds", delay_}};
    if (!error.empty()) f["error"] = error;
    Log(error.empty() ? "info" : "error", what, f);
    return sleeper_->Sleep(delay_);
  }

  void Log(std::string_view level, std::string_view msg, nlohmann::json fields) {
    fields["resource"] = resource_;
    if (options_->log) {
      options_->log(level, msg, fields);
    } else {
      LogJson(level, msg, fields.dump());
    }
  }

  const std::string resource_;
  const std::vector<std::string> paths_;
  size_t path_index_ = 0;
  std::string unavailable_;  // the last reason Handlers::unavailable gave ("" = none)
  KubeApi* api_;
  const ClusterCacheOptions* options_;
  Sleeper* sleeper_;
  const Clock* clock_;
  Handlers h_;
  Metrics metrics_;
  std::function<void()> sync_changed_;
  std::string resource_version_;
  std::set<std::string> known_;  // keys of the objects applied and not deleted
  double delay_ = 0;             // the last back-off, seconds
  bool listed_ = false;          // a list has completed
  std::atomic<int> lists_{0};
  std::atomic<int> watches_{0};
  std::atomic<int> errors_{0};
  std::atomic<int> not_applied_{0};
  std::atomic<double> last_event_{0};
  mutable std::mutex state_mutex_;
  bool healthy_ = false;  // GUARDED_BY(state_mutex_)
  std::string reason_;    // GUARDED_BY(state_mutex_)
};

ClusterCache::ClusterCache(KubeApi* api, ClusterEventSink* sink, ClusterCacheOptions options)
    : api_(api), sink_(sink), options_(std::move(options)) {
  Sleeper* sleeper = options_.sleeper;
  if (sleeper == nullptr) {
    own_sleeper_ = std::make_unique<RealSleeper>();
    sleeper = own_sleeper_.get();
  }
  options_.sleeper = sleeper;
  const Clock* clock = ClockOrSystem(options_.clock);
  sync_ = {false, "initial lists of nodes and pods in progress"};

  prometheus::Family<prometheus::Counter>* lists = nullptr;
  prometheus::Family<prometheus::Counter>* watch_errors = nullptr;
  prometheus::Family<prometheus::Counter>* not_applied = nullptr;
  prometheus::Family<prometheus::Gauge>* last_event = nullptr;
  if (options_.metrics != nullptr) {
    prometheus::Registry& r = *options_.metrics;
    lists = &prometheus::BuildCounter()
                 .Name("tessera_cache_lists_total")
                 .Help(
                     "Complete lists of a resource from the API server (the initial list and "
                     "each relist).")
                 .Register(r);
    watch_errors = &prometheus::BuildCounter()
                        .Name("tessera_cache_watch_errors_total")
                        .Help("Watches of a resource that failed or were cut.")
                        .Register(r);
    not_applied = &prometheus::BuildCounter()
                       .Name("tessera_cache_objects_not_applied_total")
                       .Help("API objects that did not decode or that the model rejected.")
                       .Register(r);
    last_event = &prometheus::BuildGauge()
                      .Name("tessera_cache_last_event_timestamp_seconds")
                      .Help(
                          "Unix time of the last watch event or list of a resource "
                          "(time() minus this is the last event's age).")
                      .Register(r);
  }
  const auto metrics_of = [&](const std::string& resource) {
    Reflector::Metrics m;
    if (lists == nullptr) return m;
    const prometheus::Labels labels = {{"resource", resource}};
    m.lists = &lists->Add(labels);
    m.watch_errors = &watch_errors->Add(labels);
    m.not_applied = &not_applied->Add(labels);
    m.last_event = &last_event->Add(labels);
    return m;
  };
  const auto sync_changed = [this] { UpdateSync(); };

  Reflector::Handlers nodes;
  nodes.key = [](const nlohmann::json& obj) { return MetaString(obj, "name"); };
  nodes.upsert = [this](const nlohmann::json& obj, const std::string& where) -> Status {
    Result<Node> node = DecodeNode(obj, where);
    if (!node.ok()) return node.error();
    return sink_->UpsertNode(*node);
  };
  nodes.remove = [this](const std::string& name) { sink_->DeleteNode(name); };

  Reflector::Handlers pods;
  pods.key = [](const nlohmann::json& obj) { return ReadPodIdentity(obj).uid; };
  pods.upsert = [this](const nlohmann::json& obj, const std::string& where) -> Status {
    Result<Pod> pod = DecodePod(obj, where);
    if (!pod.ok()) {
      const PodIdentity id = ReadPodIdentity(obj);
      if (!id.uid.empty()) sink_->UndecodablePod(id, pod.error().message);
      return pod.error();
    }
    return sink_->UpsertPod(*pod);
  };
  pods.remove = [this](const std::string& uid) { sink_->DeletePod(uid); };
  pods.begin_list = [this] { sink_->BeginPodList(); };
  pods.end_list = [this](const std::set<std::string>& uids, const std::string& version) {
    sink_->EndPodList(uids, version);
  };

  if (options_.watch_disruption_budgets) {
    Reflector::Handlers pdbs;
    pdbs.key = [](const nlohmann::json& obj) {
      const std::string name = MetaString(obj, "name");
      const std::string ns = MetaString(obj, "namespace");
      return name.empty() ? name : ObjectKey(ns, name);
    };
    const auto publish = [this] {
      std::vector<PodDisruptionBudget> all;
      all.reserve(budgets_.size());
      for (const auto& [key, pdb] : budgets_) all.push_back(pdb);
      sink_->SetDisruptionBudgets(std::move(all));
    };
    pdbs.upsert = [this, publish](const nlohmann::json& obj, const std::string& where) -> Status {
      Result<PodDisruptionBudget> pdb = DecodePodDisruptionBudget(obj, where);
      if (!pdb.ok()) return pdb.error();
      budgets_[ObjectKey(MetaString(obj, "namespace"), MetaString(obj, "name"))] = std::move(*pdb);
      publish();
      return {};
    };
    pdbs.remove = [this, publish](const std::string& key) {
      budgets_.erase(key);
      publish();
    };
    pdbs.unavailable = [](const ApiStatus& s) {
      return BudgetsUnavailable(s.http_status, s.error);
    };
    pdbs_ = std::make_unique<Reflector>("poddisruptionbudgets", DisruptionBudgetPaths(), api_,
                                        &options_, sleeper, clock, std::move(pdbs),
                                        metrics_of("poddisruptionbudgets"), nullptr);
  }
  nodes_ = std::make_unique<Reflector>("nodes", std::vector<std::string>{"/api/v1/nodes"}, api_,
                                       &options_, sleeper, clock, std::move(nodes),
                                       metrics_of("nodes"), sync_changed);
  pods_ = std::make_unique<Reflector>("pods", std::vector<std::string>{"/api/v1/pods"}, api_,
                                      &options_, sleeper, clock, std::move(pods),
                                      metrics_of("pods"), sync_changed);
}

ClusterCache::~ClusterCache() { Stop(); }

void ClusterCache::UpdateSync() {
  if (!nodes_ || !pods_) return;  // still constructing
  SyncStatus next;
  {
    // The reflectors' states are read under the lock: two reflector threads calling this at
    // once must not let the one that read first (a stale "initial list in progress") write
    // last, which would leave the cache out of sync with both reflectors healthy. (Lock
    // order: sync_mutex_, then a reflector's state_mutex_; SetState calls here without it.)
    std::lock_guard<std::mutex> lock(sync_mutex_);
    const auto [nodes_ok, nodes_why] = nodes_->state();
    const auto [pods_ok, pods_why] = pods_->state();
    next.synced = nodes_ok && pods_ok;
    if (!nodes_ok) next.reason = nodes_why;
    if (!pods_ok) next.reason += (next.reason.empty() ? "" : "; ") + pods_why;
    if (next == sync_) return;
    sync_ = next;
    // Told under the lock, so that the sink sees the changes in the order they were made.
    sink_->SyncChanged(next);
  }
  nlohmann::json f = nlohmann::json::object();
  if (!next.synced) f["reason"] = next.reason;
  if (options_.log) {
    options_.log(next.synced ? "info" : "warn", next.synced ? "synced" : "out of sync", f);
  } else {
    LogJson(next.synced ? "info" : "warn", next.synced ? "synced" : "out of sync", f.dump());
  }
}

void ClusterCache::Start() {
  if (nodes_thread_.joinable()) return;
  nodes_thread_ = std::thread([this] { nodes_->Run(stop_); });
  pods_thread_ = std::thread([this] { pods_->Run(stop_); });
  if (pdbs_) pdbs_thread_ = std::thread([this] { pdbs_->Run(stop_); });
}

void ClusterCache::Stop() {
  if (!nodes_thread_.joinable()) return;
  stop_.store(true);
  api_->CancelWatches();
  options_.sleeper->Wake();
  nodes_thread_.join();
  pods_thread_.join();
  if (pdbs_thread_.joinable()) pdbs_thread_.join();
}

SyncStatus ClusterCache::sync_status() const {
  std::lock_guard<std::mutex> lock(sync_mutex_);
  return sync_;
}

ClusterCache::Stats ClusterCache::stats(std::string_view resource) const {
  if (resource == "poddisruptionbudgets") return pdbs_ ? pdbs_->stats() : Stats{};
  return resource == "nodes" ? nodes_->stats() : pods_->stats();
}

}  // namespace tessera::k8s
