/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The checks of `bg-gitops check` on the namespace: it exists, and the service
// accounts its jobs and its applier run as.

package cli

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// jobServiceAccount is the account the Flink operator's Helm chart
// creates, with its Role, for the jobs of every namespace it watches.
const jobServiceAccount = "flink"

// namespace: what the jobs and GitRepositories of -n need there.
func (k *checker) namespace(ctx context.Context) []checkLine {
	err := k.c.Get(ctx, types.NamespacedName{Name: k.ns}, &corev1.Namespace{})
	if apierrors.IsNotFound(err) {
		return []checkLine{failing("kubectl create namespace "+k.ns, "namespace %s does not exist", k.ns)}
	}
	lines := k.operatorWatches(ctx)
	lines = append(lines, k.serviceAccounts(ctx)...)
	return append(lines, k.webhooks(ctx)...)
}

// serviceAccounts: the accounts the namespace's jobs run as (those its
// FlinkBlueGreenDeployments name; flink, the operator chart's, for one
// that names none or while there is none) and the accounts its
// GitRepositories apply as (spec.serviceAccountName, else the controller's
// --default-service-account) exist. An account nothing here uses yet is
// "?" when missing, not ✗: a namespace that only receives jobs from a
// GitRepository elsewhere needs no applier of its own.
func (k *checker) serviceAccounts(ctx context.Context) []checkLine {
	jobs, err := k.jobAccounts(ctx)
	if err != nil {
		return []checkLine{cannotTell("ServiceAccounts of "+k.ns, err)}
	}
	appliers, err := k.applierAccounts(ctx)
	if err != nil {
		return []checkLine{cannotTell("ServiceAccounts of "+k.ns, err)}
	}
	var lines []checkLine
	for _, name := range sortedKeys(jobs) {
		lines = append(lines, k.accountLine(ctx, name, "the jobs' account", jobAccountFix, jobs[name]))
	}
	for _, name := range sortedKeys(appliers) {
		lines = append(lines, k.accountLine(ctx, name, "GitRepositories apply as it", onboardFix, appliers[name]))
	}
	return lines
}

const (
	jobAccountFix = "create it in %[1]s with the Role the Flink operator's Helm chart gives it (examples/repo-layout/base/flink-serviceaccount.yaml has both), " +
		"or add %[1]s to the operator's watchNamespaces, which makes its chart create them"
	onboardFix = "onboard the namespace: (cd config/tenant && kustomize edit set namespace %[1]s) && kubectl apply -k config/tenant"
)

// jobAccounts maps each account to whether a FlinkBlueGreenDeployment of
// the namespace uses it (false: flink, expected for jobs to come).
func (k *checker) jobAccounts(ctx context.Context) (map[string]bool, error) {
	list := &v1alpha1.FlinkBlueGreenDeploymentList{}
	if err := k.c.List(ctx, list, client.InNamespace(k.ns)); err != nil {
		return nil, fmt.Errorf("list flinkbluegreendeployments: %w", err)
	}
	names := map[string]bool{}
	for _, p := range list.Items {
		sa := p.Spec.Template.Spec.ServiceAccount
		if sa == "" {
			sa = jobServiceAccount
		}
		names[sa] = true
	}
	if len(names) == 0 {
		names[jobServiceAccount] = false
	}
	return names, nil
}

// applierAccounts maps each account to whether a GitRepository of the
// namespace applies as it (false: the controller's default, for
// GitRepositories to come).
func (k *checker) applierAccounts(ctx context.Context) (map[string]bool, error) {
	list := &v1alpha1.GitRepositoryList{}
	if err := k.c.List(ctx, list, client.InNamespace(k.ns)); err != nil {
		return nil, fmt.Errorf("list gitrepositories: %w", err)
	}
	var defaults []string
	for _, c := range k.controllers {
		if v, ok := c.flag("default-service-account"); ok && v != "" {
			defaults = append(defaults, v)
		}
	}
	names := map[string]bool{}
	for _, gr := range list.Items {
		if gr.Spec.ServiceAccountName != "" {
			names[gr.Spec.ServiceAccountName] = true
			continue
		}
		for _, d := range defaults {
			names[d] = true
		}
	}
	for _, d := range defaults {
		if _, ok := names[d]; !ok {
			names[d] = false
		}
	}
	return names, nil
}

func (k *checker) accountLine(ctx context.Context, name, role, fix string, used bool) checkLine {
	err := k.c.Get(ctx, types.NamespacedName{Namespace: k.ns, Name: name}, &corev1.ServiceAccount{})
	switch {
	case apierrors.IsNotFound(err) && used:
		return failing(fmt.Sprintf(fix, k.ns), "ServiceAccount %s/%s (%s) does not exist", k.ns, name, role)
	case apierrors.IsNotFound(err):
		return unsure(fmt.Sprintf(fix, k.ns), "ServiceAccount %s/%s (%s) does not exist; nothing here uses it yet", k.ns, name, role)
	case err != nil:
		return cannotTell("ServiceAccount "+k.ns+"/"+name, err)
	}
	return passed("ServiceAccount %s/%s (%s) exists", k.ns, name, role)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
