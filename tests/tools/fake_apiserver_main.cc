// The test suite's fake Kubernetes API server as a process, for the e2e scripts that drive
// real clients (kubectl) against an API server: prints its URL on the first line of stdout,
// serves until stdin closes (or it is killed). `--forbid RESOURCE` (repeatable: nodes, pods,
// poddisruptionbudgets) answers every list and watch of it with 403, as RBAC would.

#include <iostream>
#include <string>

#include "k8s/fake_apiserver.h"

int main(int argc, char** argv) {
  tessera::k8s::testing::FakeApiServer fake;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--forbid" && i + 1 < argc) {
      fake.Forbid(argv[++i]);
    } else {
      std::cerr << "usage: tessera_fake_apiserver [--forbid RESOURCE]...\n";
      return 2;
    }
  }
  if (!fake.Start()) {
    std::cerr << "fake_apiserver: cannot bind 127.0.0.1\n";
    return 1;
  }
  std::cout << fake.url() << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  fake.Stop();
  return 0;
}
