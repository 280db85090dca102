/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// restart.go: StartEtcd and StartAPIServer, which start a stopped component
// again, and WaitEtcd and WaitAPIServer.

package plane

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/rest"

	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// WaitEtcd waits until etcd answers /health.
func (p *Plane) WaitEtcd(ctx context.Context) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	return p.wait(ctx, p.Etcd, func() bool { return httpOK(hc, p.etcdURL+"/health") })
}

// WaitAPIServer waits until kube-apiserver answers /readyz, which it does
// only once it reaches etcd.
func (p *Plane) WaitAPIServer(ctx context.Context) error {
	tr, err := rest.TransportFor(p.Config)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	return p.wait(ctx, p.APIServer, func() bool { return httpOK(hc, p.Config.Host+"/readyz") })
}

func (p *Plane) wait(ctx context.Context, proc *process.Process, ok func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	for {
		if !proc.Running() {
			return fmt.Errorf("%s exited: %v (log in %s)", proc.Name(), proc.ExitErr(), p.dir)
		}
		if ok() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (log in %s)", proc.Name(), ctx.Err(), p.dir)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// StartEtcd starts etcd again on its data directory and ports.
func (p *Plane) StartEtcd(ctx context.Context) error {
	if err := p.Etcd.Restart(); err != nil {
		return err
	}
	return p.WaitEtcd(ctx)
}

// StartAPIServer starts kube-apiserver again with its port and
// credentials, and waits until it serves (etcd must be up).
func (p *Plane) StartAPIServer(ctx context.Context) error {
	if err := p.APIServer.Restart(); err != nil {
		return err
	}
	return p.WaitAPIServer(ctx)
}

func httpOK(hc *http.Client, url string) bool {
	resp, err := hc.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
