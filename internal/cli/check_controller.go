/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The checks of `bg-gitops check` on the controller: its Deployment and version,
// the leader's Lease, and the endpoints of the webhook receiver.

package cli

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/manager"
)

// leaderElectionID names the Lease the controller's replicas compete for,
// in the namespace of their Deployment.
const leaderElectionID = manager.LeaderElectionID

// receiverService is the Service of config/manager in front of the push
// webhook receiver.
const receiverService = manager.ReceiverService

const installFix = "kubectl apply -k config/default (docs/install.md)"

// controllerDeployment is a controller Deployment and the flags its
// container runs with.
type controllerDeployment struct {
	d    *appsv1.Deployment
	args map[string]string
}

// flag is the value of --name in the controller's arguments ("true" for a
// bare boolean flag) and whether it is given.
func (c *controllerDeployment) flag(name string) (string, bool) {
	v, ok := c.args["--"+name]
	return v, ok
}

// boolFlags are the controller's boolean flags the checks read: given
// bare, the next argument is not their value.
var boolFlags = map[string]bool{"--leader-elect": true, "--receiver-only": true}

func newControllerDeployment(d *appsv1.Deployment) *controllerDeployment {
	c := &controllerDeployment{d: d, args: map[string]string{}}
	for _, ct := range d.Spec.Template.Spec.Containers {
		if ct.Name != "controller" && len(d.Spec.Template.Spec.Containers) > 1 {
			continue
		}
		args := append(slices.Clone(ct.Command), ct.Args...)
		for i, a := range args {
			if !strings.HasPrefix(a, "--") {
				continue
			}
			k, v, found := strings.Cut(a, "=")
			switch {
			case found:
			case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !boolFlags[k]:
				v = args[i+1] // --flag value
			default:
				v = "true"
			}
			c.args[k] = v
		}
	}
	return c
}

// controller: the controller's Deployments have an available replica.
func (k *checker) controller(ctx context.Context) []checkLine {
	list := &appsv1.DeploymentList{}
	opts := []client.ListOption{client.MatchingLabels{controllerLabel: controllerLabelValue}}
	where := "any namespace"
	if k.controllerNS != "" {
		opts, where = append(opts, client.InNamespace(k.controllerNS)), "namespace "+k.controllerNS
	}
	if err := k.c.List(ctx, list, opts...); err != nil {
		return []checkLine{cannotTell("controller", fmt.Errorf("list deployments: %w", err))}
	}
	if len(list.Items) == 0 {
		return []checkLine{failing(installFix, "controller: no Deployment labelled %s=%s in %s", controllerLabel, controllerLabelValue, where)}
	}
	sort.Slice(list.Items, func(i, j int) bool {
		return list.Items[i].Namespace+"/"+list.Items[i].Name < list.Items[j].Namespace+"/"+list.Items[j].Name
	})
	var lines []checkLine
	for i := range list.Items {
		c := newControllerDeployment(&list.Items[i])
		k.controllers = append(k.controllers, c)
		lines = append(lines, controllerLine(c.d))
	}
	return lines
}

func controllerLine(d *appsv1.Deployment) checkLine {
	what := fmt.Sprintf("controller %s/%s: %s (image %s)", d.Namespace, d.Name, availability(d), controllerImage(d))
	if d.Status.AvailableReplicas == 0 {
		return failing(describeFix(d), "%s", what)
	}
	if cli, ctl := cliVersion(), imageVersion(controllerImage(d)); versionsDiffer(cli, ctl) {
		return unsure("use the CLI of the controller's version (or upgrade the controller): their CRDs, flags and exit codes may differ",
			"%s; the CLI is %s, the controller %s", what, cli, ctl)
	}
	return passed("%s", what)
}

// versionsDiffer: both are release versions (vX.Y.Z…) and not the same.
// A development build or an image tagged otherwise (latest, a digest)
// says nothing to compare.
func versionsDiffer(cli, controller string) bool {
	a, errA := semver.StrictNewVersion(strings.TrimPrefix(cli, "v"))
	b, errB := semver.StrictNewVersion(strings.TrimPrefix(controller, "v"))
	return errA == nil && errB == nil && !a.Equal(b)
}

// leader: one replica of each controller holds the Lease and renews it.
func (k *checker) leader(ctx context.Context) []checkLine {
	var lines []checkLine
	for _, c := range k.controllers {
		if v, ok := c.flag("leader-elect"); !ok || v == "false" {
			if c.d.Spec.Replicas != nil && *c.d.Spec.Replicas > 1 {
				lines = append(lines, failing(fmt.Sprintf("add --leader-elect to its arguments, or scale it to 1: kubectl -n %s scale deployment/%s --replicas 1", c.d.Namespace, c.d.Name),
					"controller %s/%s: %d replicas without --leader-elect: each would reconcile and post every commit status", c.d.Namespace, c.d.Name, *c.d.Spec.Replicas))
				continue
			}
			lines = append(lines, passed("controller %s/%s: runs without --leader-elect (one replica, no Lease)", c.d.Namespace, c.d.Name))
			continue
		}
		ns := c.d.Namespace
		if v, ok := c.flag("leader-election-namespace"); ok && v != "" {
			ns = v
		}
		lines = append(lines, k.leaseLine(ctx, c, ns))
	}
	return lines
}

func (k *checker) leaseLine(ctx context.Context, c *controllerDeployment, ns string) checkLine {
	name := ns + "/" + leaderElectionID
	logs := fmt.Sprintf("kubectl -n %s logs deployment/%s", c.d.Namespace, c.d.Name)
	l := &coordinationv1.Lease{}
	err := k.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: leaderElectionID}, l)
	switch {
	case apierrors.IsNotFound(err):
		return failing(logs, "leader: no Lease %s: no replica has become leader yet", name)
	case err != nil:
		return cannotTell("leader", err)
	}
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	if holder == "" || l.Spec.RenewTime == nil {
		return failing(logs, "leader: Lease %s is held by no replica", name)
	}
	age := k.now.Sub(l.Spec.RenewTime.Time).Round(time.Second)
	if age > leaseStaleAfter(l) {
		return failing(logs, "leader: Lease %s held by %s, last renewed %s ago: the leader stopped renewing it", name, holder, age)
	}
	return passed("leader: %s (Lease %s renewed %s ago)", holder, name, max(age, 0))
}

// leaseStaleAfter is how old a renewal may look before the leader is
// taken for gone: twice the Lease's duration, and at least 30 s, for the
// clocks of this machine and the controller's.
func leaseStaleAfter(l *coordinationv1.Lease) time.Duration {
	d := 15 * time.Second
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return max(2*d, 30*time.Second)
}

// receiver: the receiver's Service exists and routes to a ready replica.
func (k *checker) receiver(ctx context.Context) []checkLine {
	var lines []checkLine
	for _, c := range k.controllers {
		v, _ := c.flag("receiver-bind-address")
		if v == "0" {
			lines = append(lines, k.splitReceiverLine(ctx, c))
			continue
		}
		if loopback(v) {
			lines = append(lines, k.localReceiverLine(ctx, c, v))
			continue
		}
		lines = append(lines, k.receiverLine(ctx, c))
	}
	return lines
}

// splitReceiverLine is the receiver line of a controller that serves no
// webhook: a Deployment of its namespace that runs the receiver alone
// (`controller --receiver-only`, config/receiver, the chart's
// receiver.separate) serves them, behind the same Service; without one
// there are no push webhooks.
func (k *checker) splitReceiverLine(ctx context.Context, c *controllerDeployment) checkLine {
	r, err := k.receiverOnly(ctx, c.d.Namespace)
	switch {
	case err != nil:
		return cannotTell("receiver", err)
	case r == nil:
		return passed("receiver of %s/%s: off (--receiver-bind-address=0): no push webhooks", c.d.Namespace, c.d.Name)
	}
	line := k.receiverLine(ctx, c)
	line.text = fmt.Sprintf("%s (served by Deployment %s/%s, --receiver-only: %s)", line.text, r.d.Namespace, r.d.Name, availability(r.d))
	return line
}

// receiverOnly is the Deployment of namespace ns whose container runs
// `controller --receiver-only`; nil when there is none.
func (k *checker) receiverOnly(ctx context.Context, ns string) (*controllerDeployment, error) {
	list := &appsv1.DeploymentList{}
	if err := k.c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list deployments: %w", err)
	}
	for i := range list.Items {
		d := &list.Items[i]
		for _, ct := range d.Spec.Template.Spec.Containers {
			r := newControllerDeployment(&appsv1.Deployment{ObjectMeta: d.ObjectMeta, Status: d.Status,
				Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{ct}}}}})
			if v, ok := r.flag("receiver-only"); ok && v != "false" {
				r.d = d
				return r, nil
			}
		}
	}
	return nil, nil
}

func (k *checker) receiverLine(ctx context.Context, c *controllerDeployment) checkLine {
	ns := c.d.Namespace
	name := ns + "/" + receiverService
	err := k.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: receiverService}, &corev1.Service{})
	switch {
	case apierrors.IsNotFound(err):
		return failing(installFix, "receiver: no Service %s", name)
	case err != nil:
		return cannotTell("receiver", err)
	}
	ready, err := k.readyEndpoints(ctx, ns, receiverService)
	if err != nil {
		return cannotTell("receiver", err)
	}
	if ready == 0 {
		return failing(fmt.Sprintf("kubectl -n %s get pods -l %s=%s: a replica is ready once its receiver listens", ns, controllerLabel, controllerLabelValue),
			"receiver: Service %s has no ready endpoint", name)
	}
	ext, _ := c.flag("receiver-external-url")
	if ext == "" {
		ext = "none (no --receiver-external-url: GitRepositories show status.webhookPath only)"
	}
	return passed("receiver: Service %s has %d ready endpoint(s); external URL %s", name, ready, ext)
}

// loopback: addr (host:port) is on this machine's loopback only, as a
// controller run by `bg-gitops dev` binds it.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// localReceiverLine: a receiver on the loopback has no Service (endpoints
// may not name a loopback address); it is checked by asking it directly,
// which works only on the machine it runs on.
func (k *checker) localReceiverLine(ctx context.Context, c *controllerDeployment, addr string) checkLine {
	what := fmt.Sprintf("receiver of %s/%s: listens on %s only (a controller on this machine)", c.d.Namespace, c.d.Name, addr)
	if err := k.probe(ctx, "http://"+addr+"/"); err != nil {
		return failing(fmt.Sprintf("kubectl -n %s describe deployment %s: is the controller still running?", c.d.Namespace, c.d.Name),
			"%s: %v", what, err)
	}
	return passed("%s, and answers", what)
}

// readyEndpoints counts the ready endpoints of a Service's EndpointSlices.
func (k *checker) readyEndpoints(ctx context.Context, ns, service string) (int, error) {
	slices := &discoveryv1.EndpointSliceList{}
	if err := k.c.List(ctx, slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
		return 0, fmt.Errorf("list endpointslices: %w", err)
	}
	n := 0
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n++
			}
		}
	}
	return n, nil
}
