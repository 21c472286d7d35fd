#include "k8s/extender/evictor.h"

#include <sys/time.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <utility>

#include "k8s/api/json_util.h"
#include "k8s/api/log.h"
#include "k8s/api/objects.h"

namespace tessera::k8s {
namespace {

using OrderedJson = nlohmann::ordered_json;

/// Now as the API writes a MicroTime ("2026-12-07T01:02:03.123456Z").
std::string MicroTimeNow() {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  std::tm utc{};
  const time_t seconds = tv.tv_sec;
  gmtime_r(&seconds, &utc);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long>(tv.tv_usec));
  return text;
}

/// Now as the API writes a Time ("2026-12-07T01:02:03Z").
std::string TimeNow() {
  const time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

OrderedJson PodFields(const PodRef& p) {
  OrderedJson f;
  f["pod"] = ObjectKey(p.namespace_name, p.name);
  f["uid"] = p.uid;
  return f;
}

void LogFailure(std::string_view what, const PodRef& pod, const Eviction& e,
                const std::string& error) {
  OrderedJson f = PodFields(pod);
  f["preemptor"] = ObjectKey(e.preemptor.namespace_name, e.preemptor.name);
  f["node"] = e.node;
  f["error"] = error;
  LogJson("error", what, DumpJson(f));
}

}  // namespace

Evictor::Evictor(KubeApi* api, std::string scheduler_name,
                 std::function<void(const Eviction&, const std::string&)> on_failed)
    : api_(api), scheduler_name_(std::move(scheduler_name)), on_failed_(std::move(on_failed)) {
  worker_ = std::thread([this] { Run(); });
}

Evictor::~Evictor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  worker_.join();
}

void Evictor::Enqueue(Eviction e) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    queue_.push_back(std::move(e));
  }
  wake_.notify_one();
}

void Evictor::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void Evictor::Run() {
  for (;;) {
    Eviction e;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      e = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    CarryOut(e);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
    }
    idle_.notify_all();
  }
}

void Evictor::CarryOut(const Eviction& e) {
  OrderedJson nominate;
  nominate["status"]["nominatedNodeName"] = e.node;
  if (ApiStatus s = api_->PatchPodStatus(e.preemptor.namespace_name, e.preemptor.name, nominate);
      !s.ok()) {
    // The preemptor is gone or cannot be nominated: its victims are left alone.
    LogFailure("preemption: nominating the preemptor failed; no victim evicted", e.preemptor, e,
               s.error);
    if (on_failed_) on_failed_(e, s.error);
    return;
  }
  const std::string message = scheduler_name_ + ": preempting to accommodate a higher priority pod";
  for (const PodRef& v : e.victims) {
    OrderedJson condition;
    condition["type"] = "DisruptionTarget";
    condition["status"] = "True";
    condition["lastTransitionTime"] = TimeNow();
    condition["reason"] = "PreemptionByScheduler";
    condition["message"] = message;
    OrderedJson patch;
    patch["status"]["conditions"] = OrderedJson::array({condition});
    if (ApiStatus s = api_->PatchPodStatus(v.namespace_name, v.name, patch); !s.ok()) {
      // kube-scheduler goes on to the deletion when the condition cannot be written.
      LogFailure("preemption: marking a victim failed", v, e, s.error);
    }
    if (ApiStatus s = api_->DeletePod(v.namespace_name, v.name, v.uid); !s.ok()) {
      LogFailure("preemption: deleting a victim failed", v, e, s.error);
      continue;
    }
    OrderedJson event;
    event["apiVersion"] = "events.k8s.io/v1";
    event["kind"] = "Event";
    // Named as client-go's recorder names events: "<object>.<nanoseconds in hex>".
    char suffix[32];
    std::snprintf(
        suffix, sizeof suffix, ".%llx",
        static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count()));
    event["metadata"]["name"] = v.name + suffix;
    event["metadata"]["namespace"] = v.namespace_name;
    event["eventTime"] = MicroTimeNow();
    event["reportingController"] = "tessera.io/extender";
    event["reportingInstance"] = "tessera";
    event["action"] = "Preempting";
    event["reason"] = "Preempted";
    event["type"] = "Normal";
    event["note"] = "Preempted by pod " + e.preemptor.uid + " (" +
                    ObjectKey(e.preemptor.namespace_name, e.preemptor.name) + ") on node " + e.node;
    event["regarding"] = {{"apiVersion", "v1"},
                          {"kind", "Pod"},
                          {"namespace", v.namespace_name},
                          {"name", v.name},
                          {"uid", v.uid}};
    event["related"] = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"namespace", e.preemptor.namespace_name},
                        {"name", e.preemptor.name},
                        {"uid", e.preemptor.uid}};
    if (ApiStatus s = api_->CreateEvent(v.namespace_name, event); !s.ok()) {
      LogFailure("preemption: recording the Preempted event failed", v, e, s.error);
    }
  }
  OrderedJson f = PodFields(e.preemptor);
  f["node"] = e.node;
  OrderedJson victims = OrderedJson::array();
  for (const PodRef& v : e.victims) victims.push_back(ObjectKey(v.namespace_name, v.name));
  f["victims"] = victims;
  LogJson("info", "preempted", DumpJson(f));
}

}  // namespace tessera::k8s
