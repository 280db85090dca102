/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// simulator.go: runSimulator, the simulator role, which journals its
// lineage to a file, and readJournalFile, which reads it.

package chaos

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// runSimulator is the Flink operator simulator as a process of its own:
// the lineage goes to a journal file the checker reads, and a restarted
// simulator goes on from it.
func runSimulator(args []string) error {
	fs := flag.NewFlagSet(roleSimulator, flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the API server")
	journalPath := fs.String("journal", "", "lineage journal (JSON lines), appended to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	lineage, err := readJournalFile(*journalPath)
	if err != nil {
		return err
	}
	journal, err := os.OpenFile(*journalPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer journal.Close()
	lineage.JournalTo(journal)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: testenv.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if err := flinksim.New(flinksim.Options{Lineage: lineage}).SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// readJournalFile reads a lineage journal; a missing file is an empty
// lineage.
func readJournalFile(path string) (*flinksim.Lineage, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return flinksim.ReadJournal(strings.NewReader(""))
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return flinksim.ReadJournal(f)
}
