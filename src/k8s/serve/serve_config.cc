#include "k8s/serve/serve_config.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "k8s/api/json_util.h"
#include "model/topology_text.h"

namespace tessera::k8s {
namespace {

/// "file:line: key: message".
Error At(const std::string& file, const YAML::Node& node, const std::string& key,
         const std::string& message) {
  return Error{file + ":" + std::to_string(node.Mark().line + 1) + ": " + key + ": " + message};
}

std::string Describe(const YAML::Node& n) {
  if (n.IsScalar()) return QuoteForError(n.Scalar());
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

Status ReadString(const std::string& file, const YAML::Node& n, const std::string& key,
                  std::string* out) {
  if (!n.IsScalar()) return At(file, n, key, "expected a string, got " + Describe(n));
  *out = n.Scalar();
  return {};
}

Status ReadBool(const std::string& file, const YAML::Node& n, const std::string& key, bool* out) {
  if (n.IsScalar() && n.Tag() != "!") {  // a quoted "true" is a string, not a bool
    const std::string& v = n.Scalar();
    if (v == "true") return *out = true, Status{};
    if (v == "false") return *out = false, Status{};
  }
  return At(file, n, key, "expected true or false, got " + Describe(n));
}

Status ReadUnsigned(const std::string& file, const YAML::Node& n, const std::string& key,
                    uint64_t* out) {
  const std::string v = n.IsScalar() ? n.Scalar() : "";
  uint64_t value = 0;
  bool ok = n.IsScalar() && n.Tag() != "!" && !v.empty() && v.size() <= 20;
  for (char c : v) ok = ok && c >= '0' && c <= '9';
  if (ok) {
    for (char c : v) {
      const uint64_t digit = static_cast<uint64_t>(c - '0');
      if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) ok = false;
      value = value * 10 + digit;
    }
  }
  if (!ok) return At(file, n, key, "expected an unsigned integer, got " + Describe(n));
  *out = value;
  return {};
}

/// A number in [lo, hi] (YAML int or float; a quoted scalar is a string).
Status ReadNumber(const std::string& file, const YAML::Node& n, const std::string& key, double lo,
                  double hi, double* out) {
  const std::string v = n.IsScalar() ? n.Scalar() : "";
  double x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (!n.IsScalar() || n.Tag() == "!" || v.empty() || ec != std::errc() ||
      end != v.data() + v.size() || !std::isfinite(x)) {
    return At(file, n, key, "expected a number, got " + Describe(n));
  }
  if (x < lo || x > hi) {
    return At(file, n, key,
              "expected " + std::to_string(static_cast<int64_t>(lo)) + ".." +
                  std::to_string(static_cast<int64_t>(hi)) + ", got " + v);
  }
  *out = x;
  return {};
}

/// classes: [{name, priority, sloWaitSeconds, preemptible, useHeadroom}, ...].
Status ReadClasses(const std::string& file, const YAML::Node& v, QosClasses* out) {
  if (!v.IsSequence() || v.size() == 0) {
    return At(file, v, "classes", "expected a non-empty list of classes, got " + Describe(v));
  }
  QosClasses q;
  std::set<std::string> names;
  for (size_t i = 0; i < v.size(); ++i) {
    const YAML::Node c = v[i];
    const std::string path = "classes[" + std::to_string(i) + "]";
    if (!c.IsMap()) return At(file, c, path, "expected a mapping, got " + Describe(c));
    QosClass k;
    bool has_name = false;
    bool has_priority = false;
    for (const auto& kv : c) {
      const std::string sub = kv.first.Scalar();
      const std::string key = path + "." + sub;
      const YAML::Node& x = kv.second;
      if (sub == "name") {
        TESSERA_RETURN_IF_ERROR(ReadString(file, x, key, &k.name));
        if (k.name.empty()) return At(file, x, key, "must not be empty");
        if (!names.insert(k.name).second) {
          return At(file, x, key, "duplicate class " + QuoteForError(k.name));
        }
        has_name = true;
      } else if (sub == "priority") {
        double p = 0;
        TESSERA_RETURN_IF_ERROR(ReadNumber(file, x, key, std::numeric_limits<int32_t>::min(),
                                           std::numeric_limits<int32_t>::max(), &p));
        if (p != std::floor(p)) return At(file, x, key, "expected an integer, got " + x.Scalar());
        k.priority = static_cast<int>(p);
        has_priority = true;
      } else if (sub == "sloWaitSeconds") {
        TESSERA_RETURN_IF_ERROR(ReadNumber(file, x, key, 0, 1e9, &k.slo_wait_s));
      } else if (sub == "preemptible") {
        TESSERA_RETURN_IF_ERROR(ReadBool(file, x, key, &k.preemptible));
      } else if (sub == "useHeadroom") {
        TESSERA_RETURN_IF_ERROR(ReadBool(file, x, key, &k.use_headroom));
      } else {
        return At(file, kv.first, key,
                  "unknown key (known: name, priority, sloWaitSeconds, preemptible, "
                  "useHeadroom)");
      }
    }
    if (!has_name) return At(file, c, path + ".name", "missing (required)");
    if (!has_priority) return At(file, c, path + ".priority", "missing (required)");
    q.classes.push_back(std::move(k));
  }
  // Pods that name no class and sit below every band fall to the lowest class.
  for (size_t i = 0; i < q.classes.size(); ++i) {
    if (q.classes[i].priority < q.classes[q.fallback].priority) q.fallback = static_cast<int>(i);
  }
  *out = std::move(q);
  return {};
}

Status ReadStrings(const std::string& file, const YAML::Node& v, const std::string& key,
                   std::vector<std::string>* out) {
  if (!v.IsSequence()) return At(file, v, key, "expected a list of strings, got " + Describe(v));
  std::vector<std::string> list;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string s;
    TESSERA_RETURN_IF_ERROR(ReadString(file, v[i], key + "[" + std::to_string(i) + "]", &s));
    list.push_back(std::move(s));
  }
  *out = std::move(list);
  return {};
}

constexpr int kMaxHeadroomBuckets = 100000;

/// headroom.models: {MODEL: GPUS, ...}, the floors per GPU model.
Status ReadHeadroomModels(const std::string& file, const YAML::Node& v,
                          std::vector<std::pair<std::string, int64_t>>* out) {
  if (!v.IsMap()) {
    return At(file, v, "headroom.models",
              "expected a mapping of GPU model to GPUs (e.g. {A10: 4}), got " + Describe(v));
  }
  std::vector<std::pair<std::string, int64_t>> models;
  std::set<std::string> names;
  for (const auto& kv : v) {
    if (!kv.first.IsScalar() || kv.first.Scalar().empty()) {
      return At(file, kv.first, "headroom.models",
                "expected a GPU model name, got " + Describe(kv.first));
    }
    const std::string& name = kv.first.Scalar();
    const std::string key = "headroom.models." + name;
    if (!names.insert(name).second) {
      return At(file, kv.first, key, "duplicate GPU model " + QuoteForError(name));
    }
    uint64_t gpus = 0;
    TESSERA_RETURN_IF_ERROR(ReadUnsigned(file, kv.second, key, &gpus));
    if (gpus > static_cast<uint64_t>(kMaxHeadroomGpus)) {
      return At(file, kv.second, key, "expected 0..10000000, got " + kv.second.Scalar());
    }
    models.emplace_back(name, static_cast<int64_t>(gpus));
  }
  *out = std::move(models);
  return {};
}

/// headroom: {mode, gpus, windowSeconds, bucketSeconds, quantile, factor, yieldAfter, yieldKeep,
/// models}.
Status ReadHeadroom(const std::string& file, const YAML::Node& v, HeadroomOptions* out) {
  if (!v.IsMap()) return At(file, v, "headroom", "expected a mapping, got " + Describe(v));
  HeadroomOptions h = *out;
  YAML::Mark models_at = v.Mark();  // where the floors are given (else the headroom key)
  for (const auto& kv : v) {
    const std::string sub = kv.first.Scalar();
    const std::string key = "headroom." + sub;
    const YAML::Node& x = kv.second;
    if (sub == "mode") {
      std::string mode;
      TESSERA_RETURN_IF_ERROR(ReadString(file, x, key, &mode));
      if (mode == "none") {
        h.mode = HeadroomOptions::Mode::kNone;
      } else if (mode == "static") {
        h.mode = HeadroomOptions::Mode::kStatic;
      } else if (mode == "forecast") {
        h.mode = HeadroomOptions::Mode::kForecast;
      } else if (mode == "backlog") {
        h.mode = HeadroomOptions::Mode::kBacklog;
      } else {
        return At(file, x, key,
                  "expected none, static, forecast or backlog, got " + QuoteForError(mode));
      }
    } else if (sub == "gpus") {
      uint64_t gpus = 0;
      TESSERA_RETURN_IF_ERROR(ReadUnsigned(file, x, key, &gpus));
      if (gpus > static_cast<uint64_t>(kMaxHeadroomGpus)) {
        return At(file, x, key, "expected 0..10000000, got " + x.Scalar());
      }
      h.gpus = static_cast<int64_t>(gpus);
    } else if (sub == "windowSeconds") {
      TESSERA_RETURN_IF_ERROR(ReadNumber(file, x, key, 1, 1e9, &h.window_s));
    } else if (sub == "bucketSeconds") {
      TESSERA_RETURN_IF_ERROR(ReadNumber(file, x, key, 1, 1e9, &h.bucket_s));
    } else if (sub == "quantile") {
      TESSERA_RETURN_IF_ERROR(ReadNumber(file, x, key, 0, 1, &h.quantile));
    } else if (sub == "factor") {
      TESSERA_RETURN_IF_ERROR(ReadNumber(file, x, key, 0, 1000, &h.factor));
    } else if (sub == "yieldAfter") {
      TESSERA_RETURN_IF_ERROR(ReadNumber(file, x, key, -1, 1000, &h.yield_after));
    } else if (sub == "yieldKeep") {
      TESSERA_RETURN_IF_ERROR(ReadNumber(file, x, key, 0, 1, &h.yield_keep));
    } else if (sub == "models") {
      TESSERA_RETURN_IF_ERROR(ReadHeadroomModels(file, x, &h.model_gpus));
      models_at = x.Mark();
    } else {
      return At(file, kv.first, key,
                "unknown key (known: mode, gpus, windowSeconds, bucketSeconds, quantile, "
                "factor, yieldAfter, yieldKeep, models)");
    }
  }
  // Mode none keeps nothing, floors included: a floor given with it would silently not hold.
  if (h.mode == HeadroomOptions::Mode::kNone && !h.model_gpus.empty()) {
    return Error{file + ":" + std::to_string(models_at.line + 1) +
                 ": headroom.models: needs headroom.mode static, forecast or backlog (mode "
                 "none keeps nothing)"};
  }
  // The forecast keeps one figure per bucket of the window and sorts them at each bucket.
  if (h.window_s / h.bucket_s > kMaxHeadroomBuckets) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "windowSeconds / bucketSeconds is %.0f buckets; at most %d (raise "
                  "bucketSeconds)",
                  h.window_s / h.bucket_s, kMaxHeadroomBuckets);
    return At(file, v, "headroom", buf);
  }
  *out = h;
  return {};
}

/// topology: {pools: [{selector: {matchLabels: {k: v}}, kubeletPolicy}, ...]}.
Status ReadTopology(const std::string& file, const YAML::Node& v,
                    std::vector<NodePoolTopology>* out) {
  if (!v.IsMap()) return At(file, v, "topology", "expected a mapping, got " + Describe(v));
  std::vector<NodePoolTopology> pools;
  for (const auto& kv : v) {
    const std::string sub = kv.first.Scalar();
    if (sub != "pools") return At(file, kv.first, "topology." + sub, "unknown key (known: pools)");
    const YAML::Node& list = kv.second;
    if (!list.IsSequence()) {
      return At(file, list, "topology.pools", "expected a list of pools, got " + Describe(list));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node p = list[i];
      const std::string path = "topology.pools[" + std::to_string(i) + "]";
      if (!p.IsMap()) return At(file, p, path, "expected a mapping, got " + Describe(p));
      NodePoolTopology pool;
      bool has_policy = false;
      for (const auto& e : p) {
        const std::string k = e.first.Scalar();
        const std::string key = path + "." + k;
        const YAML::Node& x = e.second;
        if (k == "kubeletPolicy") {
          std::string name;
          TESSERA_RETURN_IF_ERROR(ReadString(file, x, key, &name));
          Result<KubeletTopologyPolicy> policy = ParseKubeletPolicy(name);
          if (!policy.ok()) return At(file, x, key, policy.error().message);
          pool.kubelet = *policy;
          has_policy = true;
        } else if (k == "selector") {
          if (!x.IsMap()) return At(file, x, key, "expected a mapping, got " + Describe(x));
          for (const auto& s : x) {
            const std::string skey = key + "." + s.first.Scalar();
            if (s.first.Scalar() != "matchLabels") {
              return At(file, s.first, skey, "unknown key (known: matchLabels)");
            }
            if (!s.second.IsMap()) {
              return At(file, s.second, skey,
                        "expected a mapping of labels, got " + Describe(s.second));
            }
            for (const auto& label : s.second) {
              std::string value;
              TESSERA_RETURN_IF_ERROR(
                  ReadString(file, label.second, skey + "." + label.first.Scalar(), &value));
              pool.match_labels[label.first.Scalar()] = value;
            }
          }
        } else {
          return At(file, e.first, key, "unknown key (known: selector, kubeletPolicy)");
        }
      }
      if (!has_policy) return At(file, p, path + ".kubeletPolicy", "missing (required)");
      pools.push_back(std::move(pool));
    }
  }
  *out = std::move(pools);
  return {};
}

}  // namespace

ExtenderOptions ToExtenderOptions(const ServeConfig& c) {
  ExtenderOptions eo;
  eo.policy = c.policy;
  eo.seed = c.seed;
  eo.spin_us = c.spin_us;
  eo.filter_pass_seconds = static_cast<double>(c.filter_pass_seconds);
  eo.classes = c.classes;
  eo.headroom = c.headroom;
  eo.scheduler_names = c.scheduler_names;
  eo.topology_pools = c.topology_pools;
  eo.preemption = c.preemption == "verb"  ? PreemptionMode::kVerb
                  : c.preemption == "off" ? PreemptionMode::kOff
                                          : PreemptionMode::kEvict;
  return eo;
}

Status ParseServeConfig(std::string_view text, const std::string& file, ServeConfig* config) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Error{file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
  if (root.IsNull()) return {};
  if (!root.IsMap()) {
    return Error{file + ":" + std::to_string(root.Mark().line + 1) +
                 ": expected a mapping of settings, got " + Describe(root)};
  }
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& v = entry.second;
    if (key == "listen") {
      TESSERA_RETURN_IF_ERROR(ReadString(file, v, key, &config->listen));
    } else if (key == "policy") {
      TESSERA_RETURN_IF_ERROR(ReadString(file, v, key, &config->policy));
    } else if (key == "seed") {
      TESSERA_RETURN_IF_ERROR(ReadUnsigned(file, v, key, &config->seed));
    } else if (key == "logRequests") {
      TESSERA_RETURN_IF_ERROR(ReadBool(file, v, key, &config->log_requests));
    } else if (key == "spinMicroseconds") {
      uint64_t spin = 0;
      TESSERA_RETURN_IF_ERROR(ReadUnsigned(file, v, key, &spin));
      if (spin > static_cast<uint64_t>(kMaxSpinMicroseconds)) {
        return At(file, v, key,
                  "expected 0.." + std::to_string(kMaxSpinMicroseconds) + ", got " + v.Scalar());
      }
      config->spin_us = static_cast<int>(spin);
    } else if (key == "probeListen") {
      TESSERA_RETURN_IF_ERROR(ReadString(file, v, key, &config->probe_listen));
    } else if (key == "metricsListen") {
      TESSERA_RETURN_IF_ERROR(ReadString(file, v, key, &config->metrics_listen));
    } else if (key == "bindRequiresFilterSeconds") {
      TESSERA_RETURN_IF_ERROR(ReadUnsigned(file, v, key, &config->filter_pass_seconds));
    } else if (key == "classes") {
      TESSERA_RETURN_IF_ERROR(ReadClasses(file, v, &config->classes));
    } else if (key == "headroom") {
      TESSERA_RETURN_IF_ERROR(ReadHeadroom(file, v, &config->headroom));
    } else if (key == "schedulerNames") {
      TESSERA_RETURN_IF_ERROR(ReadStrings(file, v, key, &config->scheduler_names));
    } else if (key == "topology") {
      TESSERA_RETURN_IF_ERROR(ReadTopology(file, v, &config->topology_pools));
    } else if (key == "workload") {
      TESSERA_RETURN_IF_ERROR(ReadString(file, v, key, &config->workload_file));
    } else if (key == "preemption") {
      std::string mode;
      TESSERA_RETURN_IF_ERROR(ReadString(file, v, key, &mode));
      if (mode != "evict" && mode != "verb" && mode != "off") {
        return At(file, v, key, "expected evict, verb or off, got " + QuoteForError(mode));
      }
      config->preemption = mode;
    } else if (key == "tls") {
      if (v.IsNull()) continue;
      if (!v.IsMap()) return At(file, v, key, "expected a mapping, got " + Describe(v));
      for (const auto& k : v) {
        const std::string sub = k.first.Scalar();
        const std::string path = "tls." + sub;
        if (sub == "certFile") {
          TESSERA_RETURN_IF_ERROR(ReadString(file, k.second, path, &config->tls_cert_file));
        } else if (sub == "keyFile") {
          TESSERA_RETURN_IF_ERROR(ReadString(file, k.second, path, &config->tls_key_file));
        } else if (sub == "clientCAFile") {
          TESSERA_RETURN_IF_ERROR(ReadString(file, k.second, path, &config->tls_client_ca_file));
        } else {
          return At(file, k.first, path, "unknown key (known: certFile, keyFile, clientCAFile)");
        }
      }
    } else if (key == "kubernetes") {
      if (v.IsNull()) continue;
      if (!v.IsMap()) return At(file, v, key, "expected a mapping, got " + Describe(v));
      for (const auto& k : v) {
        const std::string sub = k.first.Scalar();
        const std::string path = "kubernetes." + sub;
        if (sub == "inCluster") {
          TESSERA_RETURN_IF_ERROR(ReadBool(file, k.second, path, &config->in_cluster));
        } else if (sub == "kubeconfig") {
          TESSERA_RETURN_IF_ERROR(ReadString(file, k.second, path, &config->kubeconfig));
        } else if (sub == "readNodeBeforeBind") {
          TESSERA_RETURN_IF_ERROR(ReadBool(file, k.second, path, &config->read_node_before_bind));
        } else {
          return At(file, k.first, path,
                    "unknown key (known: inCluster, kubeconfig, readNodeBeforeBind)");
        }
      }
    } else {
      return At(
          file, entry.first, key,
          "unknown key (known: listen, probeListen, metricsListen, policy, seed, logRequests, "
          "spinMicroseconds, bindRequiresFilterSeconds, classes, headroom, schedulerNames, "
          "topology, workload, preemption, tls, kubernetes)");
    }
  }
  return {};
}

}  // namespace tessera::k8s
