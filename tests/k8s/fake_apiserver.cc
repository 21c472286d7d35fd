#include "k8s/fake_apiserver.h"

#include <httplib.h>

#include <chrono>
#include <ctime>
#include <utility>

namespace tessera::k8s::testing {
namespace {

using Json = nlohmann::json;

Json StatusBody(int code, const std::string& reason, const std::string& message) {
  return Json{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason},
              {"code", code}};
}

void Reply(httplib::Response& res, int code, const std::string& reason,
           const std::string& message) {
  res.status = code;
  res.set_content(StatusBody(code, reason, message).dump(), "application/json");
}

std::string ResourceOf(const std::string& path) {
  if (path.rfind("/apis/policy/", 0) == 0) return "poddisruptionbudgets";
  return path == "/api/v1/nodes" ? "nodes" : "pods";
}

std::string ListKind(const std::string& resource) {
  if (resource == "nodes") return "NodeList";
  return resource == "pods" ? "PodList" : "PodDisruptionBudgetList";
}

}  // namespace

FakeApiServer::FakeApiServer() : server_(std::make_unique<httplib::Server>()) {
  // Each open watch holds a thread: room for many clients (tests restart extenders).
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  Route();
}

FakeApiServer::~FakeApiServer() { Stop(); }

bool FakeApiServer::Start() {
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) return false;
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return server_->is_running();
}

void FakeApiServer::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  server_->stop();
  thread_.join();
}

std::string FakeApiServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::string FakeApiServer::Key(const std::string& resource, const Json& object) {
  const Json& meta = object.at("metadata");
  if (resource == "nodes") return meta.at("name").get<std::string>();
  return meta.value("namespace", "default") + "/" + meta.at("name").get<std::string>();
}

void FakeApiServer::Change(const std::string& resource, const std::string& type, Json* object) {
  // Called with mutex_ held.
  ++rv_;
  (*object)["metadata"]["resourceVersion"] = std::to_string(rv_);
  events_.push_back({rv_, resource, Json{{"type", type}, {"object", *object}}.dump() + "\n"});
  changed_.notify_all();
}

void FakeApiServer::AddNode(Json node) {
  std::lock_guard<std::mutex> lock(mutex_);
  Change("nodes", "ADDED", &node);
  objects_["nodes"][Key("nodes", node)] = node;
}

void FakeApiServer::ModifyNode(Json node) {
  std::lock_guard<std::mutex> lock(mutex_);
  Change("nodes", "MODIFIED", &node);
  objects_["nodes"][Key("nodes", node)] = node;
}

void FakeApiServer::DeleteNode(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = objects_["nodes"].find(name);
  if (it == objects_["nodes"].end()) return;
  Json node = it->second;
  objects_["nodes"].erase(it);
  Change("nodes", "DELETED", &node);
}

void FakeApiServer::AddPod(Json pod) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!pod["metadata"].contains("namespace")) pod["metadata"]["namespace"] = "default";
  Change("pods", "ADDED", &pod);
  objects_["pods"][Key("pods", pod)] = pod;
}

void FakeApiServer::ModifyPod(Json pod) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!pod["metadata"].contains("namespace")) pod["metadata"]["namespace"] = "default";
  Change("pods", "MODIFIED", &pod);
  objects_["pods"][Key("pods", pod)] = pod;
}

void FakeApiServer::PutDisruptionBudget(Json pdb) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string key = Key("poddisruptionbudgets", pdb);
  const bool known = objects_["poddisruptionbudgets"].count(key) > 0;
  Change("poddisruptionbudgets", known ? "MODIFIED" : "ADDED", &pdb);
  objects_["poddisruptionbudgets"][key] = pdb;
}

void FakeApiServer::DeleteDisruptionBudget(const std::string& namespace_name,
                                           const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = objects_["poddisruptionbudgets"].find(namespace_name + "/" + name);
  if (it == objects_["poddisruptionbudgets"].end()) return;
  Json pdb = it->second;
  objects_["poddisruptionbudgets"].erase(it);
  Change("poddisruptionbudgets", "DELETED", &pdb);
}

void FakeApiServer::DeletePod(const std::string& namespace_name, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = objects_["pods"].find(namespace_name + "/" + name);
  if (it == objects_["pods"].end()) return;
  Json pod = it->second;
  objects_["pods"].erase(it);
  Change("pods", "DELETED", &pod);
}

Json FakeApiServer::GetPod(const std::string& namespace_name, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto r = objects_.find("pods");
  if (r == objects_.end()) return nullptr;
  auto it = r->second.find(namespace_name + "/" + name);
  return it == r->second.end() ? Json(nullptr) : it->second;
}

std::vector<Json> FakeApiServer::Objects(const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Json> out;
  auto r = objects_.find(resource);
  if (r == objects_.end()) return out;
  for (const auto& [key, object] : r->second) out.push_back(object);
  return out;
}

void FakeApiServer::GracefulDeletes(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  graceful_deletes_ = on;
}

std::vector<Json> FakeApiServer::RecordedEvents() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_events_;
}

int64_t FakeApiServer::resource_version() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rv_;
}

void FakeApiServer::HoldWatches(bool hold) {
  std::lock_guard<std::mutex> lock(mutex_);
  hold_ = hold;
  changed_.notify_all();
}

void FakeApiServer::HoldLists(bool hold) {
  std::lock_guard<std::mutex> lock(mutex_);
  hold_lists_ = hold;
  changed_.notify_all();
}

void FakeApiServer::DropWatches() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++drop_generation_;
  changed_.notify_all();
}

void FakeApiServer::SendBookmarks() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++rv_;
  for (const char* resource : {"nodes", "pods"}) {
    const Json object = {{"kind", resource == std::string("nodes") ? "Node" : "Pod"},
                         {"apiVersion", "v1"},
                         {"metadata", {{"resourceVersion", std::to_string(rv_)}}}};
    events_.push_back(
        {rv_, resource, Json{{"type", "BOOKMARK"}, {"object", object}}.dump() + "\n"});
  }
  changed_.notify_all();
}

void FakeApiServer::Compact() {
  std::lock_guard<std::mutex> lock(mutex_);
  compacted_rv_ = rv_;
  events_.clear();
}

void FakeApiServer::SetGoneAsEvent(bool as_event) {
  std::lock_guard<std::mutex> lock(mutex_);
  gone_as_event_ = as_event;
}

void FakeApiServer::FailNext(const std::string& method, const std::string& path_prefix, int times,
                             int status, bool watches) {
  std::lock_guard<std::mutex> lock(mutex_);
  failures_.push_back({method, path_prefix, times, status, watches});
}

void FakeApiServer::ClearFailures() {
  std::lock_guard<std::mutex> lock(mutex_);
  failures_.clear();
}

void FakeApiServer::Forbid(const std::string& resource) {
  std::lock_guard<std::mutex> lock(mutex_);
  forbidden_.insert(resource);
}

void FakeApiServer::Allow(const std::string& resource) {
  std::lock_guard<std::mutex> lock(mutex_);
  forbidden_.erase(resource);
}

std::vector<std::string> FakeApiServer::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

int FakeApiServer::open_watches() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_watches_;
}

void FakeApiServer::Route() {
  httplib::Server& s = *server_;
  // Records every request and answers the injected failures before routing.
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    std::string line = req.method + " " + req.path;
    if (req.has_param("watch")) {
      line += "?watch";
    } else if (req.has_param("limit")) {
      line += "?limit=" + req.get_param_value("limit");
      if (req.has_param("continue")) line += "&continue=" + req.get_param_value("continue");
      if (req.has_param("fieldSelector")) {
        line += "&fieldSelector=" + req.get_param_value("fieldSelector");
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(line);
    const bool collection = req.path == "/api/v1/nodes" || req.path == "/api/v1/pods" ||
                            req.path.rfind("/apis/policy/", 0) == 0;
    if (collection && req.method == "GET" && forbidden_.count(ResourceOf(req.path)) > 0) {
      const std::string resource = ResourceOf(req.path);
      const bool policy = resource == "poddisruptionbudgets";
      Reply(res, 403, "Forbidden",
            resource + (policy ? ".policy" : "") +
                " is forbidden: User \"system:serviceaccount:tessera:tessera\" cannot " +
                (req.has_param("watch") ? "watch" : "list") + " resource \"" + resource +
                "\" in API group \"" + (policy ? "policy" : "") + "\" at the cluster scope");
      return httplib::Server::HandlerResponse::Handled;
    }
    for (Failure& f : failures_) {
      if (f.times > 0 && f.method == req.method && req.path.rfind(f.prefix, 0) == 0 &&
          (f.watches || !req.has_param("watch"))) {
        --f.times;
        Reply(res, f.status, "InternalError", "injected failure");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  auto list_or_watch = [this](const httplib::Request& req, httplib::Response& res) {
    const std::string resource = ResourceOf(req.path);
    if (req.get_param_value("watch") == "true") {
      int64_t from = 0;
      try {
        from = std::stoll(req.get_param_value("resourceVersion"));
      } catch (...) {
        from = 0;
      }
      std::unique_lock<std::mutex> lock(mutex_);
      if (from == 0) from = rv_;
      if (from < compacted_rv_) {
        if (!gone_as_event_) {
          Reply(res, 410, "Expired", "too old resource version: " + std::to_string(from));
          return;
        }
        const std::string line =
            Json{{"type", "ERROR"},
                 {"object", StatusBody(410, "Expired", "too old resource version")}}
                .dump() +
            "\n";
        res.set_content(line, "application/json");
        return;
      }
      ++open_watches_;
      const int generation = drop_generation_;
      auto sent = std::make_shared<int64_t>(from);
      auto idle = std::make_shared<int>(0);
      res.set_chunked_content_provider("application/json", [this, resource, generation, sent, idle](
                                                               size_t, httplib::DataSink& sink) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait_for(lock, std::chrono::milliseconds(20));
        if (stopping_) {
          --open_watches_;
          lock.unlock();
          sink.done();
          return true;
        }
        if (drop_generation_ != generation) {
          --open_watches_;
          return false;  // cut: no terminating chunk
        }
        std::string out;
        if (!hold_) {
          for (const Event& e : events_) {
            if (e.rv > *sent && e.resource == resource) out += e.line;
          }
          if (!events_.empty()) *sent = std::max(*sent, events_.back().rv);
        }
        // About once a second without events a blank line (watch clients skip them), so
        // that a stream whose client went away fails its write and frees its thread.
        if (out.empty() && ++*idle >= 50) out = "\n";
        if (!out.empty()) *idle = 0;
        lock.unlock();
        if (!out.empty() && !sink.write(out.data(), out.size())) {
          std::lock_guard<std::mutex> relock(mutex_);
          --open_watches_;
          return false;
        }
        return true;
      });
      return;
    }
    // List: items in key order after the continue token.
    size_t limit = 0;
    try {
      limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 0;
    } catch (...) {
      Reply(res, 400, "BadRequest", "bad limit");
      return;
    }
    const std::string after = req.get_param_value("continue");
    // The only field selector served: spec.nodeName=NAME, on pods.
    std::string on_node;
    bool by_node = false;
    if (req.has_param("fieldSelector")) {
      const std::string selector = req.get_param_value("fieldSelector");
      constexpr std::string_view kNodeName = "spec.nodeName=";
      if (resource != "pods" || selector.rfind(kNodeName, 0) != 0) {
        Reply(res, 400, "BadRequest", "unsupported field selector: " + selector);
        return;
      }
      on_node = selector.substr(kNodeName.size());
      by_node = true;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !hold_lists_ || stopping_; });
    Json items = Json::array();
    std::string next;
    const auto& objects = objects_[resource];
    for (auto it = after.empty() ? objects.begin() : objects.upper_bound(after);
         it != objects.end(); ++it) {
      if (by_node && it->second["spec"].value("nodeName", "") != on_node) continue;
      if (limit > 0 && items.size() == limit) {
        next = std::prev(it)->first;
        break;
      }
      items.push_back(it->second);
    }
    Json list = {{"kind", ListKind(resource)},
                 {"apiVersion", resource == "poddisruptionbudgets" ? "policy/v1" : "v1"},
                 {"metadata", {{"resourceVersion", std::to_string(rv_)}}},
                 {"items", items}};
    if (!next.empty()) list["metadata"]["continue"] = next;
    res.set_content(list.dump(), "application/json");
  };
  // Discovery (the legacy, non-aggregated form), so that kubectl can map kinds to resources
  // against this server (`kubectl apply --dry-run=client` in tests/e2e/deploy_kubectl_test.sh).
  struct Resource {
    const char* name;
    const char* kind;
    bool namespaced;
  };
  struct GroupVersion {
    const char* group;  // "" for the core group
    const char* version;
    std::vector<Resource> resources;
  };
  static const std::vector<GroupVersion> kDiscovery = {
      {"",
       "v1",
       {{"namespaces", "Namespace", false},
        {"nodes", "Node", false},
        {"pods", "Pod", true},
        {"services", "Service", true},
        {"serviceaccounts", "ServiceAccount", true},
        {"configmaps", "ConfigMap", true},
        {"secrets", "Secret", true},
        {"persistentvolumeclaims", "PersistentVolumeClaim", true}}},
      {"apps", "v1", {{"deployments", "Deployment", true}, {"daemonsets", "DaemonSet", true}}},
      {"batch", "v1", {{"jobs", "Job", true}, {"cronjobs", "CronJob", true}}},
      {"policy", "v1", {{"poddisruptionbudgets", "PodDisruptionBudget", true}}},
      {"rbac.authorization.k8s.io",
       "v1",
       {{"clusterroles", "ClusterRole", false},
        {"clusterrolebindings", "ClusterRoleBinding", false},
        {"roles", "Role", true},
        {"rolebindings", "RoleBinding", true}}},
      {"coordination.k8s.io", "v1", {{"leases", "Lease", true}}},
      {"scheduling.k8s.io", "v1", {{"priorityclasses", "PriorityClass", false}}},
      // The Prometheus Operator's CRDs, as a cluster with kube-prometheus-stack serves them
      // (deploy/monitoring/prometheus-operator/).
      {"monitoring.coreos.com",
       "v1",
       {{"servicemonitors", "ServiceMonitor", true}, {"prometheusrules", "PrometheusRule", true}}},
  };
  const auto resource_list = [](const GroupVersion& gv) {
    const std::string group_version =
        std::string(gv.group).empty() ? gv.version : std::string(gv.group) + "/" + gv.version;
    Json resources = Json::array();
    for (const Resource& r : gv.resources) {
      resources.push_back(
          {{"name", r.name},
           {"singularName", ""},
           {"namespaced", r.namespaced},
           {"kind", r.kind},
           {"verbs", {"create", "delete", "get", "list", "patch", "update", "watch"}}});
    }
    return Json{{"kind", "APIResourceList"},
                {"apiVersion", "v1"},
                {"groupVersion", group_version},
                {"resources", resources}};
  };
  s.Get("/api", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(Json{{"kind", "APIVersions"}, {"versions", {"v1"}}}.dump(), "application/json");
  });
  s.Get("/apis", [](const httplib::Request&, httplib::Response& res) {
    Json groups = Json::array();
    for (const GroupVersion& gv : kDiscovery) {
      if (std::string(gv.group).empty()) continue;
      const Json version = {{"groupVersion", std::string(gv.group) + "/" + gv.version},
                            {"version", gv.version}};
      groups.push_back(
          {{"name", gv.group}, {"versions", {version}}, {"preferredVersion", version}});
    }
    res.set_content(Json{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}}.dump(),
                    "application/json");
  });
  for (const GroupVersion& gv : kDiscovery) {
    const std::string path = std::string(gv.group).empty()
                                 ? std::string("/api/") + gv.version
                                 : std::string("/apis/") + gv.group + "/" + gv.version;
    const std::string body = resource_list(gv).dump();
    s.Get(path, [body](const httplib::Request&, httplib::Response& res) {
      res.set_content(body, "application/json");
    });
  }
  // Anything else is not found, as a Status (kubectl reads the reason).
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404 && res.body.empty()) {
      Reply(res, 404, "NotFound", "the server could not find " + req.path);
    }
  });

  s.Get("/api/v1/nodes", list_or_watch);
  s.Get("/api/v1/pods", list_or_watch);
  s.Get("/apis/policy/v1/poddisruptionbudgets", list_or_watch);
  s.Get("/apis/policy/v1beta1/poddisruptionbudgets", list_or_watch);

  s.Patch(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+))",
          [this](const httplib::Request& req, httplib::Response& res) {
            const std::string key = std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
            if (req.get_header_value("Content-Type") != "application/merge-patch+json") {
              Reply(res, 415, "UnsupportedMediaType", "expected a merge patch");
              return;
            }
            Json patch = Json::parse(req.body, nullptr, false);
            if (!patch.is_object()) {
              Reply(res, 400, "BadRequest", "patch is not a JSON object");
              return;
            }
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = objects_["pods"].find(key);
            if (it == objects_["pods"].end()) {
              Reply(res, 404, "NotFound", "pods \"" + key + "\" not found");
              return;
            }
            Json pod = it->second;
            const Json meta = patch.value("metadata", Json::object());
            if (meta.contains("uid") && meta["uid"] != pod["metadata"].value("uid", "")) {
              Reply(res, 409, "Conflict", "Precondition failed: UID in precondition");
              return;
            }
            if (meta.contains("annotations")) {
              for (auto& [k, v] : meta["annotations"].items()) {
                if (v.is_null()) {
                  pod["metadata"]["annotations"].erase(k);
                } else {
                  pod["metadata"]["annotations"][k] = v;
                }
              }
            }
            Change("pods", "MODIFIED", &pod);
            it->second = pod;
            res.set_content(pod.dump(), "application/json");
          });

  // A pod's status, as kube-scheduler (and tessera serve's preemption) patch it: a strategic
  // merge patch of status.nominatedNodeName and status.conditions (merged by type).
  s.Patch(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/status)",
          [this](const httplib::Request& req, httplib::Response& res) {
            const std::string key = std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
            if (req.get_header_value("Content-Type") != "application/strategic-merge-patch+json") {
              Reply(res, 415, "UnsupportedMediaType", "expected a strategic merge patch");
              return;
            }
            Json patch = Json::parse(req.body, nullptr, false);
            if (!patch.is_object()) {
              Reply(res, 400, "BadRequest", "patch is not a JSON object");
              return;
            }
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = objects_["pods"].find(key);
            if (it == objects_["pods"].end()) {
              Reply(res, 404, "NotFound", "pods \"" + key + "\" not found");
              return;
            }
            Json pod = it->second;
            const Json status = patch.value("status", Json::object());
            for (auto& [k, v] : status.items()) {
              if (k != "conditions") {
                pod["status"][k] = v;
                continue;
              }
              Json& conditions = pod["status"]["conditions"];
              if (!conditions.is_array()) conditions = Json::array();
              for (const Json& c : v) {
                bool merged = false;
                for (Json& have : conditions) {
                  if (have.value("type", "") == c.value("type", "")) {
                    have = c;
                    merged = true;
                  }
                }
                if (!merged) conditions.push_back(c);
              }
            }
            Change("pods", "MODIFIED", &pod);
            it->second = pod;
            res.set_content(pod.dump(), "application/json");
          });
  // Events (events.k8s.io/v1), kept in order for the tests (Events()).
  s.Post(R"(/apis/events.k8s.io/v1/namespaces/([^/]+)/events)", [this](const httplib::Request& req,
                                                                       httplib::Response& res) {
    Json event = Json::parse(req.body, nullptr, false);
    if (!event.is_object() || !event.contains("metadata") || !event["metadata"].contains("name")) {
      Reply(res, 400, "BadRequest", "expected an events.k8s.io/v1 Event with metadata.name");
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    recorded_events_.push_back(event);
    res.status = 201;
    res.set_content(event.dump(), "application/json");
  });

  // Create and delete, as kubectl create / delete (and curl in the e2e scripts) call them. As
  // the real API server does, a created pod gets a UID and a creationTimestamp when it lacks
  // them.
  s.Post("/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
    Json node = Json::parse(req.body, nullptr, false);
    if (!node.is_object() || !node.contains("metadata") || !node["metadata"].contains("name")) {
      Reply(res, 400, "BadRequest", "expected a v1 Node with metadata.name");
      return;
    }
    AddNode(node);
    res.status = 201;
    res.set_content(node.dump(), "application/json");
  });
  s.Post(R"(/api/v1/namespaces/([^/]+)/pods)",
         [this](const httplib::Request& req, httplib::Response& res) {
           Json pod = Json::parse(req.body, nullptr, false);
           if (!pod.is_object() || !pod.contains("metadata") || !pod["metadata"].contains("name") ||
               !pod["metadata"]["name"].is_string()) {
             Reply(res, 400, "BadRequest", "expected a v1 Pod with metadata.name");
             return;
           }
           const std::string ns = req.matches[1];
           pod["metadata"]["namespace"] = ns;
           const std::string name = pod["metadata"]["name"];
           if (!pod["metadata"].contains("uid")) pod["metadata"]["uid"] = "uid-" + ns + "-" + name;
           if (!pod["metadata"].contains("creationTimestamp")) {
             const std::time_t now = std::time(nullptr);
             std::tm utc{};
             gmtime_r(&now, &utc);
             char text[32];
             std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
             pod["metadata"]["creationTimestamp"] = text;
           }
           if (!pod.contains("status")) pod["status"] = {{"phase", "Pending"}};
           {
             std::lock_guard<std::mutex> lock(mutex_);
             if (objects_["pods"].count(ns + "/" + name) != 0) {
               Reply(res, 409, "AlreadyExists", "pods \"" + name + "\" already exists");
               return;
             }
             Change("pods", "ADDED", &pod);
             objects_["pods"][ns + "/" + name] = pod;
           }
           res.status = 201;
           res.set_content(pod.dump(), "application/json");
         });
  s.Delete(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+))", [this](const httplib::Request& req,
                                                                httplib::Response& res) {
    const std::string ns = req.matches[1];
    const std::string name = req.matches[2];
    const Json pod = GetPod(ns, name);
    if (pod.is_null()) {
      Reply(res, 404, "NotFound", "pods \"" + name + "\" not found");
      return;
    }
    // DeleteOptions.preconditions.uid, as the API server checks it.
    const Json options = Json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
    if (options.is_object() && options.contains("preconditions") &&
        options["preconditions"].value("uid", "") != pod["metadata"].value("uid", "")) {
      Reply(res, 409, "Conflict", "Precondition failed: UID in precondition");
      return;
    }
    if (graceful_deletes_) {
      // As the API server does for a pod with a grace period: marked, not removed
      // (the kubelet removes it when its containers are gone; the test does).
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = objects_["pods"].find(ns + "/" + name);
      if (it != objects_["pods"].end() && !it->second["metadata"].contains("deletionTimestamp")) {
        Json marked = it->second;
        marked["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
        Change("pods", "MODIFIED", &marked);
        it->second = marked;
      }
      res.set_content(StatusBody(200, "", "").dump(), "application/json");
      return;
    }
    DeletePod(ns, name);
    res.set_content(StatusBody(200, "", "").dump(), "application/json");
  });

  s.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)",
         [this](const httplib::Request& req, httplib::Response& res) {
           const std::string key = std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
           Json b = Json::parse(req.body, nullptr, false);
           if (!b.is_object() || b.value("kind", "") != "Binding" || !b.contains("target") ||
               !b["target"].contains("name")) {
             Reply(res, 400, "BadRequest", "expected a v1 Binding with target.name");
             return;
           }
           std::lock_guard<std::mutex> lock(mutex_);
           auto it = objects_["pods"].find(key);
           if (it == objects_["pods"].end()) {
             Reply(res, 404, "NotFound", "pods \"" + key + "\" not found");
             return;
           }
           Json pod = it->second;
           const std::string uid = b["metadata"].value("uid", "");
           if (!uid.empty() && uid != pod["metadata"].value("uid", "")) {
             Reply(res, 409, "Conflict", "Precondition failed: UID in precondition");
             return;
           }
           if (!pod["spec"].value("nodeName", "").empty()) {
             Reply(res, 409, "Conflict",
                   "pod " + key + " is already assigned to node " +
                       pod["spec"]["nodeName"].get<std::string>());
             return;
           }
           pod["spec"]["nodeName"] = b["target"]["name"];
           // As the API server's binding storage does: the Binding's annotations land on the
           // pod in the same write.
           if (b.contains("metadata") && b["metadata"].contains("annotations") &&
               b["metadata"]["annotations"].is_object()) {
             for (auto& [k, v] : b["metadata"]["annotations"].items()) {
               pod["metadata"]["annotations"][k] = v;
             }
           }
           Change("pods", "MODIFIED", &pod);
           it->second = pod;
           res.status = 201;
           res.set_content(StatusBody(201, "", "").dump(), "application/json");
         });
}

}  // namespace tessera::k8s::testing
