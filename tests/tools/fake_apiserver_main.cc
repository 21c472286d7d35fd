// The test suite's fake Kubernetes API server as a process, for the e2e scripts that drive
// real clients (kubectl) against an API server: prints its URL on the first line of stdout,
// serves until stdin closes (or it is killed).

#include <iostream>
#include <string>

#include "k8s/fake_apiserver.h"

int main() {
  tessera::k8s::testing::FakeApiServer fake;
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
