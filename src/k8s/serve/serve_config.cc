#include "k8s/serve/serve_config.h"

#include <yaml-cpp/yaml.h>

#include <limits>

#include "k8s/api/json_util.h"

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

}  // namespace

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
    } else if (key == "bindRequiresFilterSeconds") {
      TESSERA_RETURN_IF_ERROR(ReadUnsigned(file, v, key, &config->filter_pass_seconds));
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
      return At(file, entry.first, key,
                "unknown key (known: listen, probeListen, policy, seed, logRequests, "
                "spinMicroseconds, bindRequiresFilterSeconds, tls, kubernetes)");
    }
  }
  return {};
}

}  // namespace tessera::k8s
