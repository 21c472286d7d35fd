// Restart and failover under load, over real HTTP: threads play kube-scheduler (filter every
// node, bind to a passing one, retry what failed), an extender binds until it is stopped, and a
// second one takes over — started cold (a restart) or already running beside it (the standby
// sidecar of the HA layout in deploy/, whose kube-scheduler wins the leader election). What
// counts is the API server's objects: no GPU over-allocated, every pod bound or still pending.

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "k8s/extender/extender_protocol.h"
#include "k8s/fake_apiserver.h"
#include "k8s/live.h"
#include "k8s/serve/http_server.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;
using testing::ApiOverAllocation;
using testing::FakeApiServer;
using testing::Live;
using testing::NodeObject;
using testing::PodObject;
using testing::Shape;
using testing::WaitFor;

/// An extender serving HTTP on a free port.
struct Served {
  explicit Served(FakeApiServer& fake) : live(fake) {
    HttpServerOptions so;
    so.port = 0;
    server = std::make_unique<HttpServer>(live.extender.get(), so);
    EXPECT_TRUE(server->Start().ok());
    live.cache->Start();
  }
  void Stop() {
    server->Stop();  // in-flight binds finish first
    live.cache->Stop();
  }
  Live live;
  std::unique_ptr<HttpServer> server;
};

/// kube-scheduler for the test: a queue of pending pods, each filtered over every node and
/// bound to the first that passes, through whichever extender `port` names now. A pod whose
/// filter passes nothing or whose bind fails goes back to the queue (at most kTries times).
class Scheduler {
 public:
  static constexpr int kTries = 200;
  Scheduler(FakeApiServer* fake, std::vector<std::string> nodes, std::vector<std::string> pods)
      : fake_(fake), nodes_(std::move(nodes)), queue_(pods.begin(), pods.end()) {}

  void Run(const std::atomic<int>& port) {
    std::unique_ptr<httplib::Client> client;
    int client_port = 0;
    for (;;) {
      std::string name;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (queue_.empty()) return;
        name = queue_.front();
        queue_.pop_front();
        if (++tries_[name] > kTries) continue;  // gives up on it: stays pending
      }
      if (client_port != port.load()) {
        client_port = port.load();
        client = std::make_unique<httplib::Client>("127.0.0.1", client_port);
        client->set_read_timeout(5);
      }
      const Json pod = fake_->GetPod("ml", name);
      if (Attempt(*client, pod)) {
        ++bound_;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(name);
      }
    }
  }
  int bound() const { return bound_.load(); }

 private:
  bool Attempt(httplib::Client& client, const Json& pod) {
    const Json body = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", nodes_}};
    auto f = client.Post("/filter", body.dump(), "application/json");
    if (!f || f->status != 200) return false;
    Result<ExtenderFilterResult> filtered = DecodeExtenderFilterResult(f->body);
    if (!filtered.ok() || filtered->node_names.empty()) return false;
    const Json& m = pod["metadata"];
    const std::string bind =
        EncodeExtenderBindingArgs({m["name"].get<std::string>(), m["namespace"].get<std::string>(),
                                   m["uid"].get<std::string>(), filtered->node_names.front()});
    auto b = client.Post("/bind", bind, "application/json");
    if (!b || b->status != 200) return false;
    Result<ExtenderBindingResult> r = DecodeExtenderBindingResult(b->body);
    return r.ok() && r->error.empty();
  }

  FakeApiServer* fake_;
  const std::vector<std::string> nodes_;
  std::mutex mutex_;
  std::deque<std::string> queue_;     // GUARDED_BY(mutex_)
  std::map<std::string, int> tries_;  // GUARDED_BY(mutex_)
  std::atomic<int> bound_{0};
};

class Takeover : public ::testing::TestWithParam<bool> {};

TEST_P(Takeover, NoGpuIsOverAllocatedWhenTheExtenderChangesUnderLoad) {
  const bool standby = GetParam();  // false: a restart (cold); true: a running standby
  FakeApiServer fake;
  ASSERT_TRUE(fake.Start());
  std::vector<std::string> nodes;
  for (int n = 0; n < 4; ++n) {
    nodes.push_back("n" + std::to_string(n));
    fake.AddNode(NodeObject(nodes.back(), 4));
  }
  // 16 GPUs; 48 GPUs' worth of whole-GPU pods and shares: most stay pending.
  std::vector<std::string> pods;
  for (int i = 0; i < 40; ++i) {
    pods.push_back("p" + std::to_string(i));
    fake.AddPod(PodObject(pods.back(), i % 4 == 0   ? Shape(2)
                                       : i % 4 == 1 ? Shape(1, 500)
                                                    : Shape(1)));
  }
  auto first = std::make_unique<Served>(fake);
  std::unique_ptr<Served> second;
  if (standby) second = std::make_unique<Served>(fake);
  ASSERT_TRUE(WaitFor([&] { return first->live.extender->ready(); }));
  std::atomic<int> port{first->server->port()};

  Scheduler kube(&fake, nodes, pods);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([&] { kube.Run(port); });
  ASSERT_TRUE(WaitFor([&] { return kube.bound() >= 6; }));
  // The first extender goes away mid-load (its in-flight binds finish), and the scheduler
  // turns to the second at once: a restart starts it now; a standby has been syncing.
  first->Stop();
  const int bound_by_first = kube.bound();
  if (!standby) second = std::make_unique<Served>(fake);
  port.store(second->server->port());
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(ApiOverAllocation(fake), "");
  EXPECT_GT(kube.bound(), bound_by_first) << "the second extender bound nothing";
  // Every GPU is bound, the shares packed: nothing more fits, and the second extender's model
  // says what the API says.
  int bound_pods = 0;
  for (const Json& p : fake.Objects("pods")) bound_pods += p["spec"].contains("nodeName");
  EXPECT_EQ(bound_pods, kube.bound());
  ASSERT_TRUE(WaitFor([&] { return second->live.extender->assumed_pods() == 0; }));
  EXPECT_EQ(second->live.extender->bound_pods(), bound_pods);
  EXPECT_EQ(second->live.extender->gpu_allocated_milli(), 16000);
  second->Stop();
}

INSTANTIATE_TEST_SUITE_P(RestartOrStandby, Takeover, ::testing::Values(false, true));

}  // namespace
}  // namespace tessera::k8s
