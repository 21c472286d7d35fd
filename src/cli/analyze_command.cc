#include "cli/analyze_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "analyze/analyze_report.h"
#include "analyze/model.h"
#include "analyze/snapshot.h"
#include "cli/cli_util.h"
#include "k8s/api/kube_api.h"
#include "util/file.h"

namespace tessera {

void AddAnalyzeCommand(CLI::App& app, AnalyzeCliOptions& o, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "What a cluster snapshot wastes today and how to get it back: stranded GPUs per GPU pool "
      "(FGD's fragmentation against the cluster's own demand mix, split by cause), pending GPU "
      "pods and why, the offline repack bound, and a dry-run move plan <pod, from, to> ranked "
      "by benefit over disruption. Reads `kubectl get nodes,pods,pdb -A -o json` files or the "
      "live API (read-only). Never evicts anything.");
  cmd->footer(
      "\nExamples:\n"
      "  kubectl get nodes,pods,pdb -A -o json > snap.json && tessera analyze snap.json\n"
      "  tessera analyze nodes.json pods.json pdbs.json --max-moves 10\n"
      "  tessera analyze --kubeconfig ~/.kube/config --out results/today\n"
      "\nOutputs in --out: analyze.json (every figure), report.html (per-node GPU map before and\n"
      "after the plan); a summary table on stdout. docs/ANALYZE.md explains each figure.\n"
      "\nExit codes: 0 done; 2 bad input or options (the message names the file and JSON path);\n"
      "3 the API server refused to list nodes or pods (HTTP 401/403); 4 the API server could not\n"
      "be reached or failed. On 2, 3 and 4 nothing is written. PodDisruptionBudgets the account\n"
      "may not list are a warning: the report is written without them and says so.");
  cmd->add_option("files", o.files,
                  "kubectl JSON files: Lists of Node, Pod and PodDisruptionBudget objects");
  cmd->add_option("--kubeconfig", o.kubeconfig,
                  "Read the live API as the current context of this kubeconfig");
  cmd->add_flag("--in-cluster", o.in_cluster,
                "Read the live API with the pod's service account (in a cluster)");
  cmd->add_option("--out", o.out_dir, "Output folder (created if missing)")->capture_default_str();
  analyze::PlanOptions& p = o.analyze.plan;
  cmd->add_option("--max-moves", p.max_moves, "Moves in the plan at most")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--max-moves-per-node", p.max_moves_per_node, "Pods moved off one node at most")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--max-moves-per-namespace", p.max_moves_per_namespace,
                  "Pods moved in one namespace at most")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--max-moves-per-workload", p.max_moves_per_workload,
                  "Pods of one controller (ReplicaSet, StatefulSet, Job, ...) moved at most")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--closest", o.analyze.closest_nodes, "Closest nodes listed per pending pod")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_flag("--bound,!--no-bound", o.analyze.bound,
                "Solve the offline LP bounds (cluster and per pool)")
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o.quiet, "No progress on stderr");
  for (CLI::Option* opt : cmd->get_options()) {
    if (opt->get_name() != "files") opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  cmd->callback([&o, &exit_code] { exit_code = RunAnalyze(o); });
}

int RunAnalyze(const AnalyzeCliOptions& o) {
  auto fail = [](int code, const std::string& message) {
    std::cerr << "tessera analyze: error: " << message << "\n";
    return code;
  };
  const int modes =
      (o.files.empty() ? 0 : 1) + (o.kubeconfig.empty() ? 0 : 1) + (o.in_cluster ? 1 : 0);
  if (modes != 1) {
    return fail(2, "give exactly one of: snapshot FILE(s), --kubeconfig PATH or --in-cluster");
  }
  const auto start = std::chrono::steady_clock::now();
  analyze::Snapshot snapshot;
  std::string source;
  if (!o.files.empty()) {
    std::vector<analyze::SnapshotText> docs;
    for (const std::string& f : o.files) {
      Result<std::string> text = ReadFile(f);
      if (!text) return fail(2, text.error().message);
      docs.push_back({f, std::move(*text)});
      source += (source.empty() ? "" : " ") + f;
    }
    Result<analyze::Snapshot> s = analyze::ReadSnapshot(docs);
    if (!s) return fail(2, s.error().message);
    snapshot = std::move(*s);
  } else {
    Result<k8s::KubeApiConfig> config =
        o.in_cluster ? k8s::InClusterConfig() : k8s::KubeconfigConfig(o.kubeconfig);
    if (!config) return fail(2, config.error().message);
    source = config->server + " (" + config->source + ")";
    Result<std::unique_ptr<k8s::HttpKubeApi>> api = k8s::HttpKubeApi::Create(*config);
    if (!api) return fail(2, api.error().message);
    analyze::ApiSnapshot read = analyze::ListSnapshot(**api, config->server);
    if (read.api_error) {
      const int status = read.api_error->http_status;
      if (status == 401 || status == 403) {
        return fail(kAnalyzeApiRefused,
                    "the API server refused to list the cluster's objects (HTTP " +
                        std::to_string(status) +
                        "; analyze needs get/list on nodes and pods, and on "
                        "poddisruptionbudgets to respect them): " +
                        read.api_error->message + "; no report written");
      }
      return fail(kAnalyzeApiUnreachable,
                  (status == 0 ? "the API server could not be reached: "
                               : "the API server failed (HTTP " + std::to_string(status) + "): ") +
                      read.api_error->message + "; no report written");
    }
    if (read.input_error) return fail(2, read.input_error->message);
    snapshot = std::move(*read.snapshot);
    // Without budgets the plan goes on, and the report says so (as serve goes on).
    if (!snapshot.budgets_not_read.empty()) {
      std::cerr << "tessera analyze: warning: " << snapshot.budgets_not_read << "\n";
    }
  }
  if (Status s = CheckOutputDir(o.out_dir); !s) return fail(2, s.error().message);

  Result<std::unique_ptr<analyze::Model>> model = analyze::BuildModel(snapshot);
  if (!model) return fail(2, model.error().message);
  Result<analyze::Analysis> a = analyze::Analyze(**model, o.analyze);
  if (!a) return fail(1, a.error().message);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  analyze::ReportInfo info;
  info.source = source;
  info.generated_by = o.command_line;
  std::cout << analyze::AnalysisTable(*a);
  if (Status s = WriteFile(o.out_dir + "/analyze.json", analyze::AnalysisJson(*a, info)); !s) {
    return fail(2, s.error().message);
  }
  if (Status s = WriteFile(o.out_dir + "/report.html", analyze::AnalysisHtml(*a, info)); !s) {
    return fail(2, s.error().message);
  }
  std::cout << "Wrote " << o.out_dir << "/analyze.json, report.html\n";
  if (!o.quiet) std::fprintf(stderr, "tessera analyze: done in %.2f s\n", seconds);
  return 0;
}

}  // namespace tessera
