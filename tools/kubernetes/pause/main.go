// pause holds each pod's namespaces in the Kubernetes suite's test cluster (containerd's
// sandbox_image), since no registry is reachable to pull the usual one. It sleeps until SIGINT or
// SIGTERM, exiting 0, and reaps any child left to it, as pid 1 of a pod that shares its process
// namespace must.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for received := range signals {
		if received != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
