/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command chart generates the Helm chart charts/bg-gitops from
// config/default, so that the chart and `kubectl apply -k config/default`
// install the same objects: it renders config/default with kustomize (the
// controller's own in-process build, internal/render), leaves out the
// Namespace (Helm installs into the release's namespace), and writes each
// object as a template in which only the release's namespace, the image,
// the controller's resources and a few pod settings are values. It writes
// Chart.yaml (appVersion: the image tag of config/default) and values.yaml
// too; templates/_helpers.tpl, templates/NOTES.txt and README.md are
// written by hand. It renders config/receiver too: what only it has (the
// receiver's Deployment) is rendered with receiver.separate, and the
// strings it sets otherwise in config/default's objects choose between
// the two by that value.
//
//	go run ./hack/chart [-root DIR] [-check]
//
// make chart and make manifests run it. -check writes nothing and fails
// when the chart on disk differs; the test of this package does the same,
// and test/install checks what `helm template` renders against
// config/default.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	check := flag.Bool("check", false, "write nothing; fail when the chart on disk is stale")
	flag.Parse()
	files, err := generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate chart:", err)
		os.Exit(2)
	}
	if *check {
		stale, err := staleFiles(*root, files)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if len(stale) > 0 {
			fmt.Fprintf(os.Stderr, "%s is stale (run make chart): %v\n", chartDir, stale)
			os.Exit(1)
		}
		return
	}
	if err := write(*root, files); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
