// etcd for the real-cluster tests: the etcd server of go.etcd.io/etcd/server/v3, at the version
// k8s.io/kubernetes requires (tests/cluster/go.mod), built by tests/cluster/build.sh.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
