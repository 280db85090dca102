/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// scenario.go: the scenario: the two repositories and four jobs, their
// rollout timers, the simulated faults a commit can carry, and the files a
// commit renders.

package chaos

import (
	"fmt"
	"sort"
	"strings"

	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

// repoDef is one Gitea repository and the GitRepository that applies it.
type repoDef struct {
	Name      string
	Namespace string
	// ViaGitServer: the controller fetches from the `git http-backend`
	// server (which serves Gitea's bare repositories), not from Gitea.
	ViaGitServer bool
}

// jobDef is one FlinkBlueGreenDeployment.
type jobDef struct {
	Name     string
	Repo     string
	Stateful bool
	Manual   bool
}

// The two repositories: alpha fetched from Gitea, beta from the git
// server, so that either outage leaves one repository able to fetch.
var repos = []repoDef{
	{Name: "alpha", Namespace: "team-a"},
	{Name: "beta", Namespace: "team-b", ViaGitServer: true},
}

// The four jobs: each repository has a stateful and a stateless one, one
// promoted automatically, one by a person.
var jobs = []jobDef{
	{Name: "orders", Repo: "alpha", Stateful: true},
	{Name: "clicks", Repo: "alpha", Manual: true},
	{Name: "payments", Repo: "beta", Stateful: true, Manual: true},
	{Name: "alerts", Repo: "beta"},
}

func repoOf(name string) repoDef {
	for _, r := range repos {
		if r.Name == name {
			return r
		}
	}
	panic("unknown repository " + name)
}

func jobsOf(repo string) []jobDef {
	var out []jobDef
	for _, j := range jobs {
		if j.Repo == repo {
			out = append(out, j)
		}
	}
	return out
}

// jobByName finds a job by namespace and name.
func jobByName(namespace, name string) (jobDef, bool) {
	for _, j := range jobs {
		if j.Name == name && repoOf(j.Repo).Namespace == namespace {
			return j, true
		}
	}
	return jobDef{}, false
}

// Rollout timers of every job (Flink durations), short so that an hour
// holds many rollouts and every abort.
const (
	gracePeriod      = "20 s"
	savepointTimeout = "15 s"
	deletionDelay    = "1 s"
	reschedule       = "5 s"
)

// Simulated faults a commit can put in a job's flinkConfiguration.
const (
	faultNone          = ""
	faultNeverReady    = "never-ready"
	faultFlap          = "flap"
	faultSavepointFail = "savepoint-fail"
	faultSavepointHang = "savepoint-hang"
	faultSavepointSlow = "savepoint-slow"
)

// faultConfig is the flinkConfiguration of a fault (flinksim keys). A
// savepoint fault bites the next savepoint of the colour that carries it
// (the colour the commit starts), once: a Git history holds it without
// holding every later rollout of the job.
var faultConfig = map[string]map[string]string{
	faultNeverReady:    {flinksim.FaultNeverReady: "true"},
	faultFlap:          {flinksim.FaultFlap: "4s"},
	faultSavepointFail: {flinksim.FaultSavepoint: "fail", flinksim.FaultSavepointTimes: "1"},
	faultSavepointHang: {flinksim.FaultSavepoint: "hang", flinksim.FaultSavepointTimes: "1"},
	faultSavepointSlow: {flinksim.FaultSavepointDelay: "8s"},
}

// jobSpec is what a commit asks of one job: the fields the driver changes.
type jobSpec struct {
	Image       int
	Parallelism int
	// Patch is a kubernetes.operator.* setting: changed in place.
	Patch     int
	Suspended bool
	Fault     string
}

// manifest renders the FlinkBlueGreenDeployment of j with spec s.
func (s jobSpec) manifest(j jobDef) string {
	mode, upgrade := "Automatic", "stateless"
	if j.Manual {
		mode = "Manual"
	}
	if j.Stateful {
		upgrade = "savepoint"
	}
	state := "running"
	if s.Suspended {
		state = "suspended"
	}
	conf := map[string]string{
		"taskmanager.numberOfTaskSlots":                   "2",
		"state.savepoints.dir":                            "file:///flink/" + j.Name + "/savepoints",
		"state.checkpoints.dir":                           "file:///flink/" + j.Name + "/checkpoints",
		"kubernetes.operator.periodic.savepoint.interval": fmt.Sprintf("%d h", s.Patch),
	}
	for k, v := range faultConfig[s.Fault] {
		conf[k] = v
	}
	return fmt.Sprintf(manifestTemplate, j.Name, gracePeriod, reschedule, deletionDelay, savepointTimeout,
		mode, s.Image, configYAML(conf), s.Parallelism, upgrade, state)
}

const manifestTemplate = `apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  name: %s
spec:
  configuration:
    kubernetes.operator.bluegreen.abort.grace-period: "%s"
    kubernetes.operator.bluegreen.reconciliation.reschedule-interval: "%s"
    kubernetes.operator.bluegreen.deployment-deletion.delay: "%s"
    bggitops.dev/savepoint-timeout: "%s"
  promotion:
    mode: %s
  template:
    spec:
      image: flink:1.20.%d-java17
      flinkVersion: v1_20
      mode: native
      serviceAccount: flink
      flinkConfiguration:
%s      jobManager:
        replicas: 1
        resource: {cpu: 0.5, memory: 1024m}
      taskManager:
        resource: {cpu: 1, memory: 2048m}
      job:
        jarURI: local:///opt/flink/examples/streaming/StateMachineExample.jar
        parallelism: %d
        upgradeMode: %s
        state: %s
`

func configYAML(conf map[string]string) string {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "        %s: %q\n", k, conf[k])
	}
	return b.String()
}

// repoFiles renders a repository: a kustomization naming every job and a
// settings ConfigMap (so that a commit can change the repository without
// changing a job); broken adds a resource that does not exist.
func repoFiles(r repoDef, specs map[string]jobSpec, settings int, broken bool) map[string]string {
	files := map[string]string{"settings.yaml": fmt.Sprintf(settingsTemplate, settings)}
	resources := []string{"settings.yaml"}
	for _, j := range jobsOf(r.Name) {
		files[j.Name+".yaml"] = specs[j.Name].manifest(j)
		resources = append(resources, j.Name+".yaml")
	}
	if broken {
		resources = append(resources, "missing.yaml")
	}
	files["kustomization.yaml"] = fmt.Sprintf(kustomizationTemplate, r.Namespace, "  - "+strings.Join(resources, "\n  - "))
	return files
}

const settingsTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: chaos-settings
data:
  round: "%d"
`

const kustomizationTemplate = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
%s
`
