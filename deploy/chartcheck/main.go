// Command chartcheck checks rendered Kubernetes manifests (the output of
// helm template) against the Kubernetes API's Go types, strictly: each
// YAML document is decoded into the typed object of its apiVersion and
// kind (k8s.io/api, and the Prometheus Operator's monitoring.coreos.com
// types), and a field that type does not have, a duplicated key or a kind
// it does not know is an error, where kubectl apply would drop the field
// with a warning at best. It then checks what the feedd chart promises
// across objects: selectors that select, named ports that exist, hardened
// containers, and a termination grace longer than feedd's shutdown.
//
// Usage: chartcheck FILE... (- reads stdin). It prints one line per object
// and exits 1 on the first file with a problem, listing every problem in it.
//
// It lives in a module of its own (deploy/chartcheck/go.mod), so that the
// Kubernetes modules stay out of feedd's go.mod.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: chartcheck FILE... (helm template output; - reads stdin)")
		return 2
	}
	for _, name := range args {
		data, err := readInput(name, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "chartcheck: %v\n", err)
			return 1
		}
		objs, err := Check(data)
		if err != nil {
			fmt.Fprintf(stderr, "chartcheck: %s: %v\n", name, err)
			return 1
		}
		for _, o := range objs {
			fmt.Fprintf(stdout, "%s: %s %s/%s ok\n", name, o.APIVersion, o.Kind, o.Name)
		}
		fmt.Fprintf(stdout, "%s: %d objects, strict decoding and chart checks passed\n", name, len(objs))
	}
	return 0
}

func readInput(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read stdin: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	return b, nil
}
