#include "k8s/api/cluster_cache.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/api/objects.h"
#include "k8s/serve/http_server.h"

namespace tessera::k8s {
namespace {

constexpr size_t kMaxEventBytes = size_t{64} << 20;

/// metadata.<field> of an API object, or "".
std::string MetaString(const nlohmann::json& obj, std::string_view field) {
  if (!obj.is_object()) return "";
  const nlohmann::json* meta = FindField(obj, "metadata");
  if (meta == nullptr || !meta->is_object()) return "";
  const nlohmann::json* v = FindField(*meta, field);
  return v != nullptr && v->is_string() ? v->get<std::string>() : "";
}

}  // namespace

/// One resource's list + watch loop. Runs on one thread; the counters are read from others.
class ClusterCache::Reflector {
 public:
  struct Handlers {
    std::function<std::string(const nlohmann::json&)> key;  ///< "" = not an object we can use
    std::function<Status(const nlohmann::json&, const std::string& where)> upsert;
    std::function<void(const std::string& key)> remove;
    std::function<void()> synced;  ///< after the first complete list
  };

  Reflector(std::string resource, std::string path, KubeApi* api, const ClusterCacheOptions* o,
            Sleeper* sleeper, Handlers h)
      : resource_(std::move(resource)),
        path_(std::move(path)),
        api_(api),
        options_(o),
        sleeper_(sleeper),
        h_(std::move(h)) {}

  void Run(const std::atomic<bool>& stop) {
    bool need_list = true;
    bool first = true;
    while (!stop.load()) {
      if (need_list) {
        ApiStatus s = List();
        if (stop.load()) return;
        if (!s.ok()) {
          if (!Failed("list failed", s.error)) return;
          continue;
        }
        need_list = false;
        delay_ = 0;
        if (first) h_.synced();
        first = false;
      }
      ++watches_;
      int events = 0;
      bool gone = false;
      std::string bad;  // a bad event ends the stream; we resume from the last good one
      ApiStatus s = api_->Watch(path_, resource_version_, options_->watch_timeout_seconds,
                                [&](std::string_view line) {
                                  if (stop.load()) return false;
                                  ++events;
                                  return HandleEvent(line, &gone, &bad);
                                });
      if (stop.load()) return;
      if (gone || s.gone()) {
        Log("warn", "relist",
            {{"reason", "410 Gone: resourceVersion " + resource_version_ + " is too old"}});
        need_list = true;
        continue;
      }
      if (!bad.empty()) s.error = bad;
      if (!s.ok()) {
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

  Stats stats() const { return {lists_.load(), watches_.load(), errors_.load()}; }

 private:
  /// Lists every page, applies each item, then deletes what the list lacks.
  ApiStatus List() {
    std::set<std::string> listed;
    std::string continue_token;
    ListPage page;
    size_t page_index = 0;
    do {
      ApiStatus s = api_->List(path_, options_->page_size, continue_token, &page);
      if (!s.ok()) return s;
      for (size_t i = 0; i < page.items.size(); ++i) {
        const std::string where = resource_ + ": list page " + std::to_string(page_index) +
                                  " items[" + std::to_string(i) + "]";
        const std::string key = h_.key(page.items[i]);
        if (key.empty()) {
          ++errors_;
          Log("error", "bad object", {{"where", where}, {"error", "no metadata.name/uid"}});
          continue;
        }
        listed.insert(key);
        Apply(key, page.items[i], where);
      }
      resource_version_ = page.resource_version;
      continue_token = page.continue_token;
      ++page_index;
    } while (!continue_token.empty());
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
    ++lists_;
    Log("info", "list",
        {{"items", listed.size()}, {"deleted", deleted}, {"resourceVersion", resource_version_}});
    ApiStatus ok;
    ok.http_status = 200;
    return ok;
  }

  void Apply(const std::string& key, const nlohmann::json& obj, const std::string& where) {
    known_.insert(key);
    Status s = h_.upsert(obj, where);
    if (!s.ok()) {
      ++errors_;
      Log("error", "object not applied", {{"where", where}, {"error", s.error().message}});
    }
  }

  /// One watch event line. Returns false to end the stream (410, ERROR or a bad line).
  bool HandleEvent(std::string_view line, bool* gone, std::string* bad) {
    const std::string where =
        resource_ + ": watch event after resourceVersion " + resource_version_;
    Result<nlohmann::json> event = ParseJson(line, kMaxEventBytes, where);
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
  const std::string path_;
  KubeApi* api_;
  const ClusterCacheOptions* options_;
  Sleeper* sleeper_;
  Handlers h_;
  std::string resource_version_;
  std::set<std::string> known_;  // keys of the objects applied and not deleted
  double delay_ = 0;             // the last back-off, seconds
  std::atomic<int> lists_{0};
  std::atomic<int> watches_{0};
  std::atomic<int> errors_{0};
};

ClusterCache::ClusterCache(KubeApi* api, Extender* extender, ClusterCacheOptions options)
    : api_(api), extender_(extender), options_(std::move(options)) {
  Sleeper* sleeper = options_.sleeper;
  if (sleeper == nullptr) {
    own_sleeper_ = std::make_unique<RealSleeper>();
    sleeper = own_sleeper_.get();
  }
  options_.sleeper = sleeper;
  auto synced = [this] {
    if (synced_count_.fetch_add(1) + 1 == 2) {
      extender_->MarkSynced();
      nlohmann::json f = nlohmann::json::object();
      if (options_.log) {
        options_.log("info", "synced", f);
      } else {
        LogJson("info", "synced");
      }
    }
  };
  Reflector::Handlers nodes;
  nodes.key = [](const nlohmann::json& obj) { return MetaString(obj, "name"); };
  nodes.upsert = [this](const nlohmann::json& obj, const std::string& where) -> Status {
    Result<Node> node = DecodeNode(obj, where);
    if (!node.ok()) return node.error();
    return extender_->UpsertNode(*node);
  };
  nodes.remove = [this](const std::string& name) { extender_->DeleteNode(name); };
  nodes.synced = synced;
  Reflector::Handlers pods;
  pods.key = [](const nlohmann::json& obj) {
    std::string uid = MetaString(obj, "uid");
    if (!uid.empty()) return uid;
    const std::string name = MetaString(obj, "name");
    const std::string ns = MetaString(obj, "namespace");
    return name.empty() ? name : (ns.empty() ? name : ns + "/" + name);
  };
  pods.upsert = [this](const nlohmann::json& obj, const std::string& where) -> Status {
    Result<Pod> pod = DecodePod(obj, where);
    if (!pod.ok()) return pod.error();
    return extender_->UpsertPod(*pod);
  };
  pods.remove = [this](const std::string& uid) { extender_->DeletePod(uid); };
  pods.synced = synced;
  if (options_.watch_disruption_budgets) {
    Reflector::Handlers pdbs;
    pdbs.key = [](const nlohmann::json& obj) {
      const std::string name = MetaString(obj, "name");
      const std::string ns = MetaString(obj, "namespace");
      return name.empty() ? name : ns + "/" + name;
    };
    const auto publish = [this] {
      std::vector<PodDisruptionBudget> all;
      all.reserve(budgets_.size());
      for (const auto& [key, pdb] : budgets_) all.push_back(pdb);
      extender_->SetDisruptionBudgets(std::move(all));
    };
    pdbs.upsert = [this, publish](const nlohmann::json& obj, const std::string& where) -> Status {
      Result<PodDisruptionBudget> pdb = DecodePodDisruptionBudget(obj, where);
      if (!pdb.ok()) return pdb.error();
      budgets_[MetaString(obj, "namespace") + "/" + MetaString(obj, "name")] = std::move(*pdb);
      publish();
      return {};
    };
    pdbs.remove = [this, publish](const std::string& key) {
      budgets_.erase(key);
      publish();
    };
    pdbs.synced = [] {};
    pdbs_ =
        std::make_unique<Reflector>("poddisruptionbudgets", "/apis/policy/v1/poddisruptionbudgets",
                                    api_, &options_, sleeper, std::move(pdbs));
  }
  nodes_ = std::make_unique<Reflector>("nodes", "/api/v1/nodes", api_, &options_, sleeper,
                                       std::move(nodes));
  pods_ = std::make_unique<Reflector>("pods", "/api/v1/pods", api_, &options_, sleeper,
                                      std::move(pods));
}

ClusterCache::~ClusterCache() { Stop(); }

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

ClusterCache::Stats ClusterCache::stats(std::string_view resource) const {
  if (resource == "poddisruptionbudgets") return pdbs_ ? pdbs_->stats() : Stats{};
  return resource == "nodes" ? nodes_->stats() : pods_->stats();
}

}  // namespace tessera::k8s
