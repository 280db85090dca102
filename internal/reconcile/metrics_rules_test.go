/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

const (
	rulesFile     = "../../config/prometheus/prometheusrule.yaml"
	rulesTestFile = "../../config/prometheus/rules_test.yaml"
	dashboardFile = "../../config/grafana/bg-gitops.json"
)

// ruleGroups is the part of a PrometheusRule promtool reads.
type ruleGroups struct {
	Groups []ruleGroup `json:"groups"`
}

type ruleGroup struct {
	Name  string     `json:"name"`
	Rules []promRule `json:"rules"`
}

type promRule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// TestMetricsRules checks the PrometheusRule with promtool (check rules,
// then the unit tests of rules_test.yaml: one per alert), and that every
// alert queries existing metrics and names a command to act.
func TestMetricsRules(t *testing.T) {
	var rule struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       ruleGroups     `json:"spec"`
	}
	data, err := os.ReadFile(rulesFile)
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(data, &rule))
	require.Equal(t, "monitoring.coreos.com/v1/PrometheusRule", rule.APIVersion+"/"+rule.Kind)
	dir := t.TempDir()
	writeRules(t, filepath.Join(dir, "rules.yaml"), rule.Spec)
	tests, err := os.ReadFile(rulesTestFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rules_test.yaml"), tests, 0o600))
	promtool(t, dir, "check", "rules", "rules.yaml")
	promtool(t, dir, "test", "rules", "rules_test.yaml")

	var alerts []string
	for _, r := range rule.Spec.Groups[0].Rules {
		alerts = append(alerts, r.Alert)
		assertKnownMetrics(t, r.Alert, r.Expr)
		assert.Regexp(t, "`(bg-gitops|kubectl) [^`]+`", r.Annotations["description"], "%s names a command", r.Alert)
		assert.Contains(t, string(tests), "alertname: "+r.Alert, "%s has a unit test", r.Alert)
	}
	assert.ElementsMatch(t, []string{"BgGitopsRolloutAborted", "BgGitopsStalled", "BgGitopsWaitingForPromotion",
		"BgGitopsRepositoryNotReady", "BgGitopsCommitStatusesFailing"}, alerts)
}

// TestMetricsDashboard checks that the Grafana dashboard parses, that its
// queries are PromQL promtool accepts (as recording rules, Grafana's
// variables replaced) and that every bggitops_ metric it queries exists.
func TestMetricsDashboard(t *testing.T) {
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	data, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &dash))
	require.NotEmpty(t, dash.Panels)
	group := ruleGroup{Name: "dashboard"}
	for i, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for j, q := range p.Targets {
			assertKnownMetrics(t, p.Title, q.Expr)
			group.Rules = append(group.Rules, promRule{Record: fmt.Sprintf("dashboard:panel%d_%d", i, j), Expr: grafanaVars.Replace(q.Expr)})
		}
	}
	dir := t.TempDir()
	writeRules(t, filepath.Join(dir, "dashboard.yaml"), ruleGroups{Groups: []ruleGroup{group}})
	promtool(t, dir, "check", "rules", "dashboard.yaml")
}

// TestMetricsDocumented: the metrics table of
// docs/operations/metrics-and-alerts.md lists exactly the
// registered metrics, and its alerts table the PrometheusRule's alerts.
func TestMetricsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../docs/operations/metrics-and-alerts.md")
	require.NoError(t, err)
	rows := regexp.MustCompile("(?m)^\\| `((?:bggitops_|BgGitops)[A-Za-z_]+)` \\|").FindAllStringSubmatch(string(readme), -1)
	var documented []string
	for _, r := range rows {
		documented = append(documented, r[1])
	}
	rules, err := os.ReadFile(rulesFile)
	require.NoError(t, err)
	want := registeredNames()
	for _, m := range regexp.MustCompile(`alert: (\w+)`).FindAllStringSubmatch(string(rules), -1) {
		want = append(want, m[1])
	}
	assert.ElementsMatch(t, want, documented)
}

// grafanaVars stand for the dashboard's variables in a query promtool
// parses.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__range", "1d", "$namespace", ".*")

var metricName = regexp.MustCompile(`bggitops_[a-z_]+`)

// assertKnownMetrics: every bggitops_ metric expr names is registered.
func assertKnownMetrics(t *testing.T, where, expr string) {
	t.Helper()
	known := registeredNames()
	for _, name := range metricName.FindAllString(expr, -1) {
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(known, base) {
				name = base
			}
		}
		assert.Contains(t, known, name, "%s queries %s", where, name)
	}
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func registeredNames() []string {
	var names []string
	for _, c := range collectors {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			names = append(names, fqName.FindStringSubmatch(d.String())[1])
		}
	}
	return names
}

func writeRules(t *testing.T, path string, g ruleGroups) {
	t.Helper()
	out, err := yaml.Marshal(g)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, out, 0o600))
}

// promtool runs bin/promtool (make tools builds it from hack/tools/promtool).
func promtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	bin, err := testenv.BinDir()
	require.NoError(t, err)
	path := filepath.Join(bin, "promtool")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is missing: run make tools", path)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
}
