#include "replay/replay.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <deque>
#include <numeric>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include "model/cluster.h"
#include "model/fit.h"
#include "sched/cycle.h"
#include "sched/engine.h"
#include "sched/scheduler.h"
#include "sched/victims.h"
#include "util/check.h"
#include "util/clock.h"
#include "util/percentile.h"
#include "util/rng.h"

namespace tessera {
namespace {

enum class State : uint8_t {
  kNotArrived,
  kPending,
  kNominated,  // preempting: waits for its victims' grace period
  kRunning,
  kTerminating,  // a victim within its grace period (still holds its resources)
  kFinished,
  kRejected,
};

struct Pod {
  int cls = 0;
  int priority = 0;
  int key = 0;  // shape * classes + class
  PodRequest req;
  State state = State::kNotArrived;
  double arrival = 0;
  double enqueued = 0;  // when it (re-)entered the queue
  double first_start = -1;
  int first_node = -1;  // where it first started
  GpuSet first_gpus = 0;
  double start = 0;
  int node = -1;
  GpuSet gpus = 0;
  uint32_t run = 0;  // incremented per start; stale finish events carry an older value
  int times_preempted = 0;
  bool preempt_check_set = false;
  std::vector<int> victims;  // while kNominated
  std::string reason;
};

enum class EventKind : uint8_t {
  kFinish = 0,
  kGraceExpiry = 1,
  kArrival = 2,
  kPreemptCheck = 3,
  kHeadroomTick = 4,  // a forecast bucket boundary: the headroom may shrink
  kYield = 5,         // a held pod of a class with an SLO is at risk: the headroom yields
};

struct Event {
  double t;
  EventKind kind;
  uint64_t seq;
  int pod;
  uint32_t run;
  bool operator>(const Event& o) const {
    return std::tie(t, kind, seq) > std::tie(o.t, o.kind, o.seq);
  }
};

struct RequestHash {
  size_t operator()(const PodRequest& r) const {
    uint64_t h = 1469598103934665603ULL;
    for (uint64_t v : {static_cast<uint64_t>(r.cpu_milli), static_cast<uint64_t>(r.memory_mib),
                       static_cast<uint64_t>(r.gpu_count), static_cast<uint64_t>(r.gpu_milli),
                       static_cast<uint64_t>(r.gpu_memory_mib), r.models}) {
      h = (h ^ v) * 1099511628211ULL;
    }
    return h;
  }
};

enum Blocked : uint8_t { kFree = 0, kNoFit = 1, kNoHeadroom = 2 };

// One run; not thread-safe, used once.
class Replay {
 public:
  Replay(const std::vector<NodeSpec>& nodes, const Timeline& timeline, const Policy& placement,
         const TargetWorkload* workload, const ReplayOptions& options)
      : options_(options),
        timeline_(timeline),
        workload_(workload),
        engine_(Engine::Borrow(nodes, placement, workload, options.seed)),
        cluster_(engine_->cluster()),
        order_(engine_->order()),
        scheduler_(engine_->scheduler()),
        headroom_(options.headroom, &clock_),
        placer_(options.placer),
        num_classes_(static_cast<int>(options.qos.classes.size())) {
    TESSERA_CHECK(num_classes_ > 0 && options.qos.fallback >= 0 &&
                  options.qos.fallback < num_classes_);
    rank_.resize(nodes.size());
    for (int n = 0; n < cluster_.size(); ++n) rank_[n] = engine_->rank(n);
    on_node_.resize(nodes.size());
    nominated_.assign(nodes.size(), 0);
    headroom_.SetCluster(cluster_);
    min_victim_priority_ = INT32_MAX;
    for (const QosClass& c : options.qos.classes) {
      if (c.preemptible) min_victim_priority_ = std::min(min_victim_priority_, c.priority);
    }
    SetUpPods();
    horizon_ = options.horizon_s;
    if (horizon_ < 0) horizon_ = timeline.pods.empty() ? 0 : timeline.pods.back().arrival_s;
  }

  ReplayResult Run(std::string policy_name) {
    for (size_t i = 0; i < pods_.size(); ++i) {
      Push(timeline_.pods[i].arrival_s, EventKind::kArrival, static_cast<int>(i));
    }
    const int64_t every = std::max<int64_t>(1, options_.progress_every);
    int64_t handled = 0;
    while (!events_.empty()) {
      const Event e = events_.top();
      if (e.t > horizon_) break;
      events_.pop();
      Advance(e.t);
      Handle(e);
      if (options_.progress && ++handled % every == 0) options_.progress(now_, horizon_);
    }
    Advance(horizon_);
    if (options_.samples > 0 && next_sample_ <= options_.samples) Sample(horizon_);
    return Finish(std::move(policy_name));
  }

 private:
  int IdleGpus(int node) const {
    return tessera::IdleGpus(cluster_.state(node), cluster_.spec(node).gpu_count);
  }

  // The headroom's view of pod `p` now (sched/cycle.h), waited since its arrival (a
  // re-created victim counts from its first).
  HeadroomPod HeadroomOf(const Pod& p) const {
    return ClassifyForHeadroom(headroom_, options_.qos.classes[p.cls], now_ - p.arrival);
  }
  // The headroom gate of pod `p` on the cluster as it is now.
  HeadroomGate GateOf(const Pod& p) const {
    return HeadroomGate(headroom_, cluster_, HeadroomOf(p), scheduler_.idle_gpus(),
                        scheduler_.idle_gpus_by_model());
  }

  void SetUpPods() {
    std::unordered_map<PodRequest, int, RequestHash> shape_ids;
    pods_.resize(timeline_.pods.size());
    // The victim search's names of the pods (its last tie-break): the pod's name, made unique.
    ids_.resize(pods_.size());
    for (size_t i = 0; i < pods_.size(); ++i) {
      std::string id = timeline_.pods[i].spec.name;
      if (id.empty() || by_id_.count(id)) id += "#" + std::to_string(i);
      ids_[i] = id;
      by_id_.emplace(id, static_cast<int>(i));
    }
    for (size_t i = 0; i < pods_.size(); ++i) {
      Pod& p = pods_[i];
      const TimedPod& tp = timeline_.pods[i];
      p.cls = options_.qos.Find(tp.spec.qos);
      p.priority = options_.qos.classes[p.cls].priority;
      p.req = cluster_.MakeRequest(tp.spec);
      p.arrival = tp.arrival_s;
      auto [it, inserted] = shape_ids.emplace(p.req, static_cast<int>(shapes_.size()));
      if (inserted) shapes_.push_back(p.req);
      p.key = it->second * num_classes_ + p.cls;
    }
    blocked_.assign(shapes_.size() * num_classes_, kFree);
    queue_.resize(blocked_.size());
    queued_key_pos_.assign(blocked_.size(), -1);
    in_pass_.assign(blocked_.size(), 0);
    preempt_failed_epoch_.assign(blocked_.size(), UINT64_MAX);
    // Why a shape fits no node of the empty cluster, or empty if it fits one.
    const Cluster empty = cluster_;
    never_fits_.resize(shapes_.size());
    for (size_t s = 0; s < shapes_.size(); ++s) {
      std::array<int, kNumFitReasons> why{};
      bool fits = false;
      for (int n = 0; n < empty.size() && !fits; ++n) {
        const FitReason r = empty.Check(n, shapes_[s]);
        fits = r == FitReason::kFits;
        why[static_cast<int>(r)]++;
      }
      if (fits) continue;
      std::string reason = "fits no node of the empty cluster:";
      for (int r = 1; r < kNumFitReasons; ++r) {
        if (why[r] == 0) continue;
        reason += " " + std::string(FitReasonName(static_cast<FitReason>(r))) + ":" +
                  std::to_string(why[r]);
      }
      never_fits_[s] = reason;
    }
  }

  void Push(double t, EventKind kind, int pod, uint32_t run = 0) {
    events_.push(Event{t, kind, seq_++, pod, run});
  }

  void Record(ReplayEvent::Kind kind, int pod, int node, int by = -1, GpuSet gpus = 0) {
    if (options_.record_events) events_log_.push_back({now_, kind, pod, node, by, gpus});
  }

  // Moves the clock to `t`: accumulates allocation integrals and emits samples before t.
  void Advance(double t) {
    while (options_.samples > 0 && next_sample_ <= options_.samples) {
      const double ts = horizon_ * next_sample_ / options_.samples;
      if (ts >= t) break;
      Sample(ts);
    }
    const double dt = t - clock_.NowSeconds();
    if (dt > 0) {
      alloc_integral_ += dt * static_cast<double>(cluster_.allocated_gpu_milli());
      for (int c = 0; c < num_classes_; ++c) {
        class_alloc_integral_[c] += dt * static_cast<double>(class_alloc_milli_[c]);
      }
    }
    clock_.AdvanceTo(t);
    now_ = clock_.NowSeconds();
    if (placer_ != nullptr) placer_->SetTime(now_);
    bool shrank = false;
    if (headroom_.Update(&shrank)) {
      if (shrank) UnblockHeadroom();
      if (headroom_.NextTick() >= 0) Push(headroom_.NextTick(), EventKind::kHeadroomTick, -1);
    }
  }

  void Sample(double t) {
    TimePoint p;
    p.t_s = t;
    p.pending = pending_by_class_;
    p.preempting = preempting_by_class_;
    p.allocated_milli = cluster_.allocated_gpu_milli();
    p.idle_gpus = scheduler_.idle_gpus();
    p.headroom_gpus = headroom_.target();
    if (workload_) {
      double frag = 0, idle = 0;
      for (int n = 0; n < cluster_.size(); ++n) {
        frag += workload_->NodeFragmentation(cluster_, n);
        const NodeState& s = cluster_.state(n);
        for (int i = 0; i < cluster_.spec(n).gpu_count; ++i) idle += s.gpu_free[i];
      }
      p.frag_ratio = idle > 0 ? frag / idle : 0;
    }
    series_.push_back(std::move(p));
    ++next_sample_;
  }

  void UnblockHeadroom() {
    ++headroom_unblocks_;
    for (auto& b : blocked_) {
      if (b == kNoHeadroom) b = kFree;
    }
    dirty_ = true;
  }

  void Handle(const Event& e) {
    if (e.kind == EventKind::kHeadroomTick) {  // Advance() updated the headroom
      if (dirty_) Pass();
      return;
    }
    Pod& p = pods_[e.pod];
    switch (e.kind) {
      case EventKind::kArrival: {
        const std::string& never = never_fits_[p.key / num_classes_];
        if (!never.empty()) {
          p.state = State::kRejected;
          p.reason = never;
          Record(ReplayEvent::Kind::kReject, e.pod, -1);
          break;
        }
        if (placer_ != nullptr) placer_->Created(e.pod);
        Enqueue(e.pod);
        scheduler_.Observe(p.req);  // counted once per pod, as the extender counts a UID
        if (const double slo = options_.qos.classes[p.cls].slo_wait_s;
            Held(p) && slo >= 0 && headroom_.options().yield_after >= 0) {
          Push(p.arrival + headroom_.options().yield_after * slo, EventKind::kYield, e.pod);
        }
        TryPod(e.pod);
        break;
      }
      case EventKind::kFinish:
        if ((p.state != State::kRunning && p.state != State::kTerminating) || p.run != e.run) break;
        Record(ReplayEvent::Kind::kFinish, e.pod, p.node);
        // A victim that ends within its grace period leaves its GPUs to its preemptor.
        Stop(e.pod, /*preempted=*/false, /*victim=*/p.state == State::kTerminating);
        if (placer_ != nullptr) placer_->Deleted(e.pod);
        p.state = State::kFinished;
        break;
      case EventKind::kGraceExpiry:
        GraceExpired(e.pod);
        break;
      case EventKind::kPreemptCheck:
        if (p.state == State::kPending) TryPod(e.pod);
        break;
      case EventKind::kHeadroomTick:
        break;
      case EventKind::kYield:  // held back so far: it may take more of the idle GPUs now
        if (p.state == State::kPending) {
          if (blocked_[p.key] == kNoHeadroom) blocked_[p.key] = kFree;
          TryPod(e.pod);
        }
        break;
    }
    if (dirty_) Pass();
  }

  void Enqueue(int id) {
    Pod& p = pods_[id];
    p.state = State::kPending;
    p.enqueued = now_;
    p.preempt_check_set = false;  // the preemption delay counts from (re-)entering the queue
    TESSERA_CHECK(!passing_);     // a pass walks a queue that only shrinks (Pass)
    std::set<std::pair<double, int>>& q = queue_[p.key];
    if (q.empty()) {
      queued_key_pos_[p.key] = static_cast<int>(queued_keys_.size());
      queued_keys_.push_back(p.key);
    }
    q.insert({now_, id});
    ++queued_;
    pending_by_class_[p.cls]++;
  }

  void Dequeue(int id) {
    Pod& p = pods_[id];
    std::set<std::pair<double, int>>& q = queue_[p.key];
    const size_t erased = q.erase({p.enqueued, id});
    TESSERA_CHECK(erased == 1);
    if (q.empty()) {
      const int pos = queued_key_pos_[p.key];
      queued_key_pos_[queued_keys_.back()] = pos;
      queued_keys_[pos] = queued_keys_.back();
      queued_keys_.pop_back();
      queued_key_pos_[p.key] = -1;
    }
    --queued_;
    pending_by_class_[p.cls]--;
  }

  // Whether pod `p` is held to the headroom (below the protected priority; pods of
  // non-preemptible classes only with hold_non_preemptible).
  bool Held(const Pod& p) const { return HeadroomOf(p).held; }

  // For a held pod whose best node would eat the headroom (a share, or a pod refused for its
  // node's model floor, which other models' nodes may not break): the best-scored node (ties:
  // node order) among those that keep it (HeldMayUse), with the GPUs PlaceHeld gives it there
  // — what serve's filter, prioritize and bind do. Returns a failed Decision if there is none.
  Decision BestKeepingNode(const Pod& p, const HeadroomGate& gate) {
    const PodRequest& req = p.req;
    candidates_.clear();
    for (int n = 0; n < cluster_.size(); ++n) {
      if (cluster_.Check(n, req) == FitReason::kFits &&
          gate.MayUse(n, req) == Headroom::Shortfall::kNone) {
        candidates_.push_back(n);
      }
    }
    Decision best;
    int best_rank = 0;
    for (const auto& [node, score] : scheduler_.ScoreNodes(req, candidates_)) {
      if (!best.ok() || PicksBefore(score, rank_[node], best.score, best_rank)) {
        best.node = node;
        best.score = score;
        best_rank = rank_[node];
      }
    }
    if (best.ok()) {
      best.gpus = scheduler_.ChooseGpus(best.node, req);
      if (gate.Place(best.node, req, &best.gpus) != Headroom::Shortfall::kNone) best = Decision{};
    }
    return best;
  }

  // Whether pending pod `p` fits some node of the cluster now (the headroom aside).
  bool FitsSomewhere(const Pod& p) const {
    for (int n = 0; n < cluster_.size(); ++n) {
      if (cluster_.Check(n, p.req) == FitReason::kFits) return true;
    }
    return false;
  }

  // Tries to place pending pod `id`; on failure marks its key blocked and may preempt.
  // Returns whether it left the queue.
  bool TryPod(int id) {
    Pod& p = pods_[id];
    if (blocked_[p.key] == kFree) {
      // A held pod refused for the headroom waits for idle GPUs (kNoHeadroom); a held share
      // also for a used GPU with room, which any departure from a node that fits it may make
      // (kNoFit).
      Decision d;
      bool fits = false;
      if (placer_ != nullptr) {  // it keeps the headroom itself
        d.node = placer_->ChooseNode(id, rank_);
        fits =
            d.ok() || (Held(p) && headroom_.keeps_some() && !p.req.IsSharing() && FitsSomewhere(p));
      } else {
        d = scheduler_.Decide(p.req, /*observe=*/false);  // counted when it arrived
        fits = d.ok();
        const HeadroomGate gate = GateOf(p);
        Headroom::Shortfall why = Headroom::Shortfall::kNone;
        if (d.ok() && (why = gate.Place(d.node, p.req, &d.gpus)) != Headroom::Shortfall::kNone) {
          // A whole-GPU pod short of H is short of it on every node whose GPUs count toward
          // H; short of a model's floor, or where some models do not count, it may keep the
          // headroom on a node of another model.
          d = p.req.IsSharing() || why == Headroom::Shortfall::kModel ||
                      !headroom_.ProtectsEveryModel()
                  ? BestKeepingNode(p, gate)
                  : Decision{};
          fits = !p.req.IsSharing();
        }
      }
      if (d.ok()) {
        Dequeue(id);
        Start(id, d.node, d.gpus);
        return true;
      }
      blocked_[p.key] = fits ? kNoHeadroom : kNoFit;
    }
    if (blocked_[p.key] == kNoFit || PreemptsForHeadroom(p)) return MaybePreempt(id);
    return false;
  }

  // Whether a pod held back by the headroom makes room by preemption instead (taking the GPUs
  // of lower-priority pods, not the idle ones): a pod of a class with an SLO.
  bool PreemptsForHeadroom(const Pod& p) const {
    return blocked_[p.key] == kNoHeadroom && HeadroomOf(p).preempts;
  }

  bool MaybePreempt(int id) {
    Pod& p = pods_[id];
    if (!options_.preemption || p.priority <= min_victim_priority_) return false;
    const double eligible = p.enqueued + options_.preempt_delay_s;
    if (now_ < eligible) {
      if (!p.preempt_check_set) {
        p.preempt_check_set = true;
        Push(eligible, EventKind::kPreemptCheck, id);
      }
      return false;
    }
    if (preempt_failed_epoch_[p.key] == victim_epoch_) return false;
    if (!Preempt(id)) {
      preempt_failed_epoch_[p.key] = victim_epoch_;
      return false;
    }
    return true;
  }

  // Kubernetes-style preemption with the extender's victim search (sched/victims.h): on each
  // node the victims SelectVictims chooses, then the node kube-scheduler would pick among them
  // (ChoosePreemptionNode); victims terminate over their grace period, the preemptor is
  // placed after.
  bool Preempt(int id) {
    Pod& p = pods_[id];
    std::vector<NodeVictims> answers;
    if (placer_ != nullptr) {
      std::vector<int> nodes;
      for (int n = 0; n < cluster_.size(); ++n) {
        if (nominated_[n] > 0) continue;
        for (int v : on_node_[n]) {
          if (IsVictimFor(p, v)) {
            nodes.push_back(n);
            break;
          }
        }
      }
      for (const PlacerVictims& a : placer_->Victims(id, nodes)) {
        NodeVictims nv{a.node, rank_[a.node], {}};
        nv.victims.num_pdb_violations = a.pdb_violations;
        // kube-scheduler reads the victims' priority and status.startTime (whole seconds).
        for (int v : a.pods) {
          AddVictim(&nv.victims, ids_[v], pods_[v].priority,
                    static_cast<int64_t>(std::floor(pods_[v].start)));
        }
        answers.push_back(std::move(nv));
      }
    }
    PreemptionNode node;
    for (int n = 0; n < cluster_.size() && placer_ == nullptr; ++n) {
      if (nominated_[n] > 0) continue;  // one preemption per node at a time
      node.pods.clear();
      for (int v : on_node_[n]) {
        const Pod& q = pods_[v];
        if (!IsVictimFor(p, v)) continue;
        VictimCandidate c;
        c.id = ids_[v];
        c.priority = q.priority;
        c.modelled = true;
        c.request = q.req;
        c.gpus = q.gpus;
        c.start_s = static_cast<int64_t>(std::floor(q.start));  // status.startTime: seconds
        node.pods.push_back(std::move(c));
      }
      if (node.pods.empty()) continue;
      node.gpu_count = cluster_.spec(n).gpu_count;
      node.model_id = cluster_.model_id(n);
      node.state = cluster_.state(n);
      node.topology = cluster_.topology(n);
      std::optional<VictimSet> set = SelectVictims(node, {}, p.req, p.priority, {});
      if (!set || set->ids.empty()) continue;
      answers.push_back(NodeVictims{n, rank_[n], std::move(*set)});
    }
    const int chosen = ChoosePreemptionNode(answers);
    if (chosen < 0) return false;
    const int best_node = answers[chosen].node;
    std::vector<int> best_victims;
    for (const std::string& v : answers[chosen].victims.ids) best_victims.push_back(by_id_.at(v));
    Dequeue(id);
    if (placer_ != nullptr) placer_->Nominated(id, best_node);
    p.state = State::kNominated;
    p.node = best_node;
    p.victims = best_victims;
    nominated_[best_node]++;
    preempting_by_class_[p.cls]++;
    stats_preemptors_[p.cls]++;
    Record(ReplayEvent::Kind::kNominate, id, best_node);
    double grace = 0;
    for (int v : best_victims) {
      Pod& q = pods_[v];
      q.state = State::kTerminating;
      q.times_preempted++;
      stats_preempted_[q.cls]++;
      grace = std::max(grace, options_.qos.classes[q.cls].grace_s);
      Record(ReplayEvent::Kind::kPreempt, v, best_node, id);
    }
    Push(now_ + grace, EventKind::kGraceExpiry, id);
    return true;
  }

  // Whether pod `v` may be a victim of preemptor `p`: running, lower priority, preemptible.
  bool IsVictimFor(const Pod& p, int v) const {
    const Pod& q = pods_[v];
    return q.state == State::kRunning && q.priority < p.priority &&
           options_.qos.classes[q.cls].preemptible;
  }

  void GraceExpired(int id) {
    Pod& p = pods_[id];
    const int node = p.node;
    nominated_[node]--;
    preempting_by_class_[p.cls]--;
    for (int v : p.victims) {
      Pod& q = pods_[v];
      if (q.state != State::kTerminating) continue;  // it finished on its own meanwhile
      Stop(v, /*preempted=*/true, /*victim=*/true);
      if (placer_ != nullptr) {
        placer_->Deleted(v);
        placer_->Created(v);
      }
      Enqueue(v);                 // re-created by its controller: it starts over
      scheduler_.Observe(q.req);  // a new pod object, seen once more
    }
    p.victims.clear();
    p.node = -1;
    // The preemptor takes its victims' GPUs: no headroom check (sched/headroom.h).
    if (placer_ != nullptr ? placer_->FitsOn(id, node)
                           : cluster_.Check(node, p.req) == FitReason::kFits) {
      Start(id, node, placer_ != nullptr ? 0 : scheduler_.ChooseGpus(node, p.req));
    } else {
      Enqueue(id);  // someone else took the room: back to the queue
    }
    if (placer_ != nullptr) placer_->Nominated(id, -1);
    dirty_ = true;
  }

  // Places pod `id` on `node`, on `gpus` (the placer's choice when there is one).
  void Start(int id, int node, GpuSet gpus) {
    Pod& p = pods_[id];
    if (placer_ != nullptr) gpus = placer_->Bind(id, node);
    const int idle_before = IdleGpus(node);
    scheduler_.Bind(node, p.req, gpus);
    const int idle_after = IdleGpus(node);
    // Protected demand is what protected pods take from the idle GPUs (a share on a used GPU
    // takes none).
    if (headroom_.NoteDemand(p.priority, int64_t{idle_before - idle_after} * kMilliPerGpu,
                             p.req.models)) {
      UnblockHeadroom();
    }
    if (options_.qos.classes[p.cls].preemptible) {
      ++victim_epoch_;  // a new possible victim: failed preemptions may succeed now
      dirty_ = dirty_ || queued_ > 0;
    }
    p.state = State::kRunning;
    p.node = node;
    p.gpus = gpus;
    p.start = now_;
    if (p.first_start < 0) {
      p.first_start = now_;
      p.first_node = node;
      p.first_gpus = gpus;
    }
    ++p.run;
    on_node_[node].push_back(id);
    class_alloc_milli_[p.cls] += p.req.TotalGpuMilli();
    Record(ReplayEvent::Kind::kStart, id, node, -1, gpus);
    Push(now_ + timeline_.pods[id].duration_s, EventKind::kFinish, id, p.run);
  }

  // Ends the current run of `id` and frees its resources; unblocks what may now fit.
  // `preempted`: the run was cut short (lost GPU-hours); `victim`: a preemption victim, whose
  // GPUs go to its preemptor.
  void Stop(int id, bool preempted, bool victim) {
    Pod& p = pods_[id];
    const int node = p.node;
    const int idle_before = IdleGpus(node);
    scheduler_.Unbind(node, p.req, p.gpus);
    const int idle_after = IdleGpus(node);
    // A victim's GPUs go to its preemptor: no refill (serve knows a victim by its
    // DisruptionTarget condition).
    if (!victim) headroom_.NoteRelease(idle_after - idle_before, p.priority);
    auto& list = on_node_[node];
    list.erase(std::find(list.begin(), list.end(), id));
    class_alloc_milli_[p.cls] -= p.req.TotalGpuMilli();
    const double gpu_hours =
        static_cast<double>(p.req.TotalGpuMilli()) / kMilliPerGpu * (now_ - p.start) / 3600.0;
    (preempted ? lost_gpu_hours_ : gpu_hours_)[p.cls] += gpu_hours;
    p.node = -1;
    p.gpus = 0;
    // Keys blocked for want of room may fit now, but only on this node.
    for (size_t k = 0; k < blocked_.size(); ++k) {
      if (blocked_[k] == kNoFit &&
          cluster_.Check(node, shapes_[k / num_classes_]) == FitReason::kFits) {
        blocked_[k] = kFree;
        dirty_ = true;
      }
      if (blocked_[k] == kNoHeadroom && idle_after > idle_before) {
        blocked_[k] = kFree;
        dirty_ = true;
      }
    }
  }

  // Tries every pending pod in queue order (class priority, then time it entered the queue);
  // pods that do not fit are skipped (no head-of-line blocking), as kube-scheduler does.
  //
  // Whether a pod is skipped depends only on its key's state and, through the preemption
  // delay, on when it entered the queue, which comes later for each next pod of the key. So
  // once a pod is skipped, so is the rest of its key until a try changes that state: a start
  // that gives a preemption a new possible victim (victim_epoch_), or headroom given back
  // (UnblockHeadroom). The pass therefore merges the keys' queues, leaves a key at its first
  // skipped pod and takes it back, after the pod being tried, when such a try happens: it tries
  // the very pods, in the very order, of a walk of the whole queue, at a cost in the pods tried
  // and the keys queued instead of the pods queued (the walk made a replay whose queue keeps
  // growing quadratic in its horizon: issue 40). The queue only shrinks during a pass (Enqueue
  // checks it).
  void Pass() {
    dirty_ = false;
    passing_ = true;
    cursor_ = PassEntry{INT_MIN, 0, -1, -1};  // before every pod
    for (int k : queued_keys_) Offer(k);
    while (!pass_heap_.empty()) {
      cursor_ = pass_heap_.top();
      pass_heap_.pop();
      const Pod& p = pods_[cursor_.id];
      if (Skipped(p)) {
        Leave(p);
        continue;
      }
      const uint64_t epoch = victim_epoch_;
      const uint64_t unblocks = headroom_unblocks_;
      TryPod(cursor_.id);  // may erase the pod, never another
      if (victim_epoch_ != epoch) Retake(&wait_epoch_);
      if (headroom_unblocks_ != unblocks) Retake(&wait_headroom_);
      Offer(cursor_.key);
    }
    wait_epoch_.clear();
    wait_headroom_.clear();
    passing_ = false;
  }

  // A pass's place in the queue: a pod with its key.
  struct PassEntry {
    int neg_priority;
    double enqueued;
    int id;
    int key;
    bool operator>(const PassEntry& o) const {
      return std::tie(neg_priority, enqueued, id) > std::tie(o.neg_priority, o.enqueued, o.id);
    }
  };

  // Whether the pass skips pending pod `p` without trying it (its key found no room, and a
  // preemption cannot succeed where the key's last one failed).
  bool Skipped(const Pod& p) const {
    if (blocked_[p.key] == kNoHeadroom) return !(PreemptsForHeadroom(p) && MayPreemptNow(p));
    if (blocked_[p.key] == kNoFit) return !MayPreemptNow(p);
    return false;
  }

  // Puts key `key`'s first pod after the pass's cursor in the pass, if it has one.
  void Offer(int key) {
    const std::set<std::pair<double, int>>& q = queue_[key];
    in_pass_[key] = 0;
    if (q.empty()) return;
    auto it = q.begin();
    const int neg_priority = -pods_[it->second].priority;
    if (neg_priority < cursor_.neg_priority) return;  // the whole key lies behind it
    if (neg_priority == cursor_.neg_priority) it = q.upper_bound({cursor_.enqueued, cursor_.id});
    if (it == q.end()) return;
    pass_heap_.push(PassEntry{neg_priority, it->first, it->second, key});
    in_pass_[key] = 1;
  }

  // Key of skipped pod `p` leaves the pass, to be taken back by what may let it be tried.
  void Leave(const Pod& p) {
    in_pass_[p.key] = 0;
    if (blocked_[p.key] == kNoHeadroom) wait_headroom_.push_back(p.key);
    // A new victim lets it preempt again, unless it may not preempt at all, or its pods have
    // not waited the preemption delay (which no try changes: the clock stands still).
    if ((blocked_[p.key] == kNoFit || PreemptsForHeadroom(p)) && options_.preemption &&
        p.priority > min_victim_priority_ && now_ >= p.enqueued + options_.preempt_delay_s) {
      wait_epoch_.push_back(p.key);
    }
  }

  // Takes the keys of `waiting` back into the pass, each at its first pod after the cursor.
  void Retake(std::vector<int>* waiting) {
    for (int k : *waiting) {
      if (!in_pass_[k]) Offer(k);
    }
    waiting->clear();
  }

  // Whether a preemption attempt by `p` could succeed where the last one for its key failed.
  bool MayPreemptNow(const Pod& p) const {
    return options_.preemption && p.priority > min_victim_priority_ &&
           now_ >= p.enqueued + options_.preempt_delay_s &&
           preempt_failed_epoch_[p.key] != victim_epoch_;
  }

  ReplayResult Finish(std::string policy_name) {
    ReplayResult r;
    r.policy = std::move(policy_name);
    r.horizon_s = horizon_;
    r.capacity_milli = cluster_.total_gpu_milli();
    r.series = std::move(series_);
    r.events = std::move(events_log_);
    r.mean_alloc_pct =
        horizon_ > 0 && r.capacity_milli > 0
            ? alloc_integral_ / horizon_ / static_cast<double>(r.capacity_milli) * 100
            : 0;
    std::vector<std::vector<double>> waits(num_classes_);
    std::vector<int> within(num_classes_, 0), eligible(num_classes_, 0);
    r.classes.resize(num_classes_);
    for (int c = 0; c < num_classes_; ++c) {
      r.classes[c].name = options_.qos.classes[c].name;
      r.classes[c].slo_wait_s = options_.qos.classes[c].slo_wait_s;
    }
    r.pods.resize(pods_.size());
    for (size_t i = 0; i < pods_.size(); ++i) {
      Pod& p = pods_[i];
      ClassStats& s = r.classes[p.cls];
      PodOutcome& o = r.pods[i];
      o.qos_class = p.cls;
      o.times_preempted = p.times_preempted;
      o.wait_s = p.first_start >= 0 ? p.first_start - p.arrival : -1;
      o.first_node = p.first_node;
      o.first_gpus = p.first_gpus;
      o.reason = p.reason;
      if (p.state != State::kNotArrived) s.arrived++;
      s.started += p.first_start >= 0;
      double wait = -1;
      switch (p.state) {
        case State::kNotArrived:
          o.status = PodOutcome::Status::kNotArrived;
          break;
        case State::kPending:
        case State::kNominated:
          o.status = PodOutcome::Status::kPending;
          s.pending++;
          wait = p.first_start >= 0 ? o.wait_s : horizon_ - p.arrival;
          break;
        case State::kRunning:
        case State::kTerminating:
          o.status = PodOutcome::Status::kRunning;
          s.running++;
          wait = o.wait_s;
          gpu_hours_[p.cls] += static_cast<double>(p.req.TotalGpuMilli()) / kMilliPerGpu *
                               (horizon_ - p.start) / 3600.0;
          break;
        case State::kFinished:
          o.status = PodOutcome::Status::kFinished;
          s.finished++;
          wait = o.wait_s;
          break;
        case State::kRejected:
          o.status = PodOutcome::Status::kRejected;
          s.rejected++;
          break;
      }
      if (wait >= 0) {
        waits[p.cls].push_back(wait);
        eligible[p.cls]++;
        const double slo = options_.qos.classes[p.cls].slo_wait_s;
        within[p.cls] += slo < 0 || wait <= slo;
      }
    }
    for (int c = 0; c < num_classes_; ++c) {
      ClassStats& s = r.classes[c];
      std::sort(waits[c].begin(), waits[c].end());
      s.wait_p50_s = Percentile(waits[c], 50);
      s.wait_p95_s = Percentile(waits[c], 95);
      s.wait_p99_s = Percentile(waits[c], 99);
      s.wait_max_s = waits[c].empty() ? 0 : waits[c].back();
      s.slo_pct = eligible[c] > 0 ? 100.0 * within[c] / eligible[c] : 100.0;
      s.preempted = stats_preempted_[c];
      s.preemptors = stats_preemptors_[c];
      s.gpu_hours = gpu_hours_[c];
      s.lost_gpu_hours = lost_gpu_hours_[c];
      s.mean_alloc_gpus = horizon_ > 0 ? class_alloc_integral_[c] / horizon_ / kMilliPerGpu : 0;
      r.preemptions += s.preempted;
    }
    return r;
  }

  const ReplayOptions& options_;
  const Timeline& timeline_;
  const TargetWorkload* workload_;
  std::unique_ptr<Engine> engine_;  // the tie order (TieOrder) and the scheduler over the cluster
  Cluster& cluster_;
  const std::vector<int>& order_;
  std::vector<int> candidates_;  // scratch of BestKeepingNode
  Scheduler& scheduler_;
  Headroom headroom_;
  ReplayPlacer* placer_;  // null: the scheduler decides
  const int num_classes_;
  std::vector<int> rank_;
  std::vector<Pod> pods_;
  std::vector<std::string> ids_;                // by pod: its name in the victim search
  std::unordered_map<std::string, int> by_id_;  // the inverse
  std::vector<PodRequest> shapes_;
  std::vector<std::string> never_fits_;  // by shape
  std::vector<uint8_t> blocked_;         // by key
  std::vector<uint64_t> preempt_failed_epoch_;
  uint64_t victim_epoch_ = 0;  // bumped by every start of a preemptible pod
  std::vector<std::vector<int>> on_node_;
  std::vector<int> nominated_;  // preemptions in progress per node
  // The queue: by key, its pending pods as (enqueued, id); a key's pods share a priority.
  std::vector<std::set<std::pair<double, int>>> queue_;
  int64_t queued_ = 0;               // pods in queue_
  std::vector<int> queued_keys_;     // the keys with pods in queue_, in no order
  std::vector<int> queued_key_pos_;  // by key: its index in queued_keys_, or -1
  // Pass's state: the pod being tried (or skipped), the keys' next pods after it, whether a
  // key has one there or is being tried (by key), and keys left, by what may take them back.
  bool passing_ = false;
  PassEntry cursor_{};
  std::priority_queue<PassEntry, std::vector<PassEntry>, std::greater<PassEntry>> pass_heap_;
  std::vector<uint8_t> in_pass_;
  std::vector<int> wait_epoch_, wait_headroom_;
  uint64_t headroom_unblocks_ = 0;  // calls of UnblockHeadroom
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  VirtualClock clock_;
  double now_ = 0;  // clock_.NowSeconds(), cached for the many readers
  double horizon_ = 0;
  bool dirty_ = false;
  int min_victim_priority_ = 0;
  int next_sample_ = 0;
  double alloc_integral_ = 0;
  std::vector<double> class_alloc_integral_ = std::vector<double>(num_classes_, 0.0);
  std::vector<int64_t> class_alloc_milli_ = std::vector<int64_t>(num_classes_, 0);
  std::vector<int> pending_by_class_ = std::vector<int>(num_classes_, 0);
  std::vector<int> preempting_by_class_ = std::vector<int>(num_classes_, 0);
  std::vector<int> stats_preempted_ = std::vector<int>(num_classes_, 0);
  std::vector<int> stats_preemptors_ = std::vector<int>(num_classes_, 0);
  std::vector<double> gpu_hours_ = std::vector<double>(num_classes_, 0.0);
  std::vector<double> lost_gpu_hours_ = std::vector<double>(num_classes_, 0.0);
  std::vector<TimePoint> series_;
  std::vector<ReplayEvent> events_log_;
};

}  // namespace

ReplayResult RunReplay(const std::vector<NodeSpec>& nodes, const Timeline& timeline,
                       const Policy& placement, const TargetWorkload* workload,
                       const ReplayOptions& options) {
  Replay replay(nodes, timeline, placement, workload, options);
  return replay.Run(std::string(placement.name()));
}

}  // namespace tessera
