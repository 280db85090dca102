/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The checks of `bg-gitops check` on the Flink Kubernetes Operator: its CRDs,
// its Deployment and its version.

package cli

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// The Flink Kubernetes Operator as its Helm chart installs it.
const (
	operatorLabelValue = "flink-kubernetes-operator" // app.kubernetes.io/name, and the image's name
	installOperatorFix = "install the Flink Kubernetes Operator, 1.10 or later (FlinkStateSnapshot came with 1.10): " +
		"helm repo add flink-operator-repo https://downloads.apache.org/flink/flink-kubernetes-operator-<VERSION>/ && " +
		"helm install flink-kubernetes-operator flink-operator-repo/flink-kubernetes-operator"
)

// flinkOperator is a Deployment that runs the Flink operator.
type flinkOperator struct {
	d     *appsv1.Deployment
	image string
}

// version is the image's tag, else the Helm chart's version label, else
// the image's digest.
func (o *flinkOperator) version() string {
	v := imageVersion(o.image)
	if label := o.d.Labels["app.kubernetes.io/version"]; label != "" && (v == "unknown" || strings.Contains(v, ":")) {
		return label
	}
	return v
}

// flinkCRDs: the kinds the controller creates are served.
func (k *checker) flinkCRDs(context.Context) []checkLine {
	var missing []string
	for _, gvk := range []schema.GroupVersionKind{v1alpha1.FlinkDeploymentGVK, v1alpha1.FlinkStateSnapshotGVK} {
		_, err := k.c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		switch {
		case meta.IsNoMatchError(err):
			missing = append(missing, gvk.Kind)
		case err != nil:
			return []checkLine{cannotTell("Flink CRDs", err)}
		}
	}
	gv := v1alpha1.FlinkDeploymentGVK.GroupVersion()
	if len(missing) > 0 {
		return []checkLine{failing(installOperatorFix, "Flink CRDs: %s not served (%s)", strings.Join(missing, ", "), gv)}
	}
	return []checkLine{passed("Flink CRDs: FlinkDeployment and FlinkStateSnapshot served (%s)", gv)}
}

// flinkOperator finds the operator's Deployments, best effort: by the Helm
// chart's label, else by image name, in any namespace.
func (k *checker) flinkOperator(ctx context.Context) []checkLine {
	ops, err := k.findOperators(ctx)
	if err != nil {
		return []checkLine{cannotTell("Flink operator", err)}
	}
	k.operators = ops
	if len(ops) == 0 {
		return []checkLine{unsure(installOperatorFix+" (or, if it runs, ignore this: it was looked for by its Helm chart's label and image name)",
			"Flink operator: no Deployment labelled app.kubernetes.io/name=%s or running its image found; version unknown", operatorLabelValue)}
	}
	var lines []checkLine
	for _, o := range ops {
		what := fmt.Sprintf("Flink operator %s: deployment %s/%s, %s", o.version(), o.d.Namespace, o.d.Name, availability(o.d))
		if o.d.Status.AvailableReplicas == 0 {
			lines = append(lines, failing(describeFix(o.d), "%s", what))
			continue
		}
		lines = append(lines, passed("%s", what))
	}
	return lines
}

func (k *checker) findOperators(ctx context.Context) ([]*flinkOperator, error) {
	list := &appsv1.DeploymentList{}
	if err := k.c.List(ctx, list, client.MatchingLabels{"app.kubernetes.io/name": operatorLabelValue}); err != nil {
		return nil, fmt.Errorf("list deployments: %w", err)
	}
	if len(list.Items) == 0 {
		if err := k.c.List(ctx, list); err != nil {
			return nil, fmt.Errorf("list deployments: %w", err)
		}
	}
	var out []*flinkOperator
	for i := range list.Items {
		d := &list.Items[i]
		image := operatorImage(d)
		if image != "" || d.Labels["app.kubernetes.io/name"] == operatorLabelValue {
			out = append(out, &flinkOperator{d: d, image: image})
		}
	}
	return out, nil
}

// operatorImage is the image of d's container that runs the operator
// (ghcr.io/apache/flink-kubernetes-operator:1.10.0), "" when none does.
func operatorImage(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		name, _, _ := strings.Cut(c.Image, "@")
		if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
			name = name[:i]
		}
		if strings.HasSuffix(name, "/"+operatorLabelValue) || name == operatorLabelValue {
			return c.Image
		}
	}
	return ""
}

// describeFix says where to look when a Deployment has no available pod.
func describeFix(d *appsv1.Deployment) string {
	return fmt.Sprintf("kubectl -n %[1]s describe deployment %[2]s; kubectl -n %[1]s logs deployment/%[2]s", d.Namespace, d.Name)
}

// availability is "1/1 available".
func availability(d *appsv1.Deployment) string {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return fmt.Sprintf("%d/%d available", d.Status.AvailableReplicas, want)
}

// operatorSnapshots: the operator reconciles FlinkStateSnapshots, through
// which every savepoint of a stateful rollout is taken. With
// kubernetes.operator.snapshot.resource.enabled false in its own
// configuration it registers no snapshot controller, and a rollout's
// snapshot would never be taken (the controller fails it after
// bggitops.dev/snapshot-pickup-timeout).
func (k *checker) operatorSnapshots(ctx context.Context) []checkLine {
	var lines []checkLine
	for _, o := range k.operators {
		what := fmt.Sprintf("Flink operator %s/%s reconciles FlinkStateSnapshots", o.d.Namespace, o.d.Name)
		conf, err := k.operatorConfig(ctx, o)
		if err != nil {
			lines = append(lines, cannotTell(what, err))
			continue
		}
		v := strings.Trim(strings.TrimSpace(operatorOption(conf, bluegreen.SnapshotResourceEnabledKey)), `"'`)
		if strings.EqualFold(v, "false") {
			lines = append(lines, failing(snapshotsFix, "Flink operator %s/%s: %s is false, its snapshot controller is off: "+
				"no savepoint of a stateful rollout can be taken", o.d.Namespace, o.d.Name, bluegreen.SnapshotResourceEnabledKey))
			continue
		}
		lines = append(lines, passed("%s", what))
	}
	return lines
}

const snapshotsFix = "remove " + bluegreen.SnapshotResourceEnabledKey + ": false from the operator's configuration " +
	"(the Helm chart's defaultConfiguration) and restart the operator: it registers its snapshot controller only at start"
