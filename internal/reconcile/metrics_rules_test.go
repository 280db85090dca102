/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

const (
	rulesFile     = "../../config/prometheus/prometheusrule.yaml"
	rulesTestFile = "../../config/prometheus/rules_test.yaml"
	dashboardFile = "../../config/grafana/bg-gitops.json"
)

// ruleGroups is the part of a PrometheusRule Prometheus reads: a rule file.
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

// TestMetricsRules: the PrometheusRule is a rule file Prometheus loads
// (checked as `promtool check rules` checks it), every alert queries
// registered metrics, names a command to act and has a unit test in
// rules_test.yaml.
func TestMetricsRules(t *testing.T) {
	spec, _ := prometheusRule(t)
	checkRules(t, spec)
	tests, err := os.ReadFile(rulesTestFile)
	require.NoError(t, err)

	var alerts []string
	for _, r := range spec.Groups[0].Rules {
		alerts = append(alerts, r.Alert)
		assertKnownMetrics(t, r.Alert, r.Expr)
		assert.Regexp(t, "`(bg-gitops|kubectl) [^`]+`", r.Annotations["description"], "%s names a command", r.Alert)
		assert.Contains(t, string(tests), "alertname: "+r.Alert, "%s has a unit test", r.Alert)
	}
	assert.ElementsMatch(t, []string{"BgGitopsRolloutAborted", "BgGitopsStalled", "BgGitopsWaitingForPromotion",
		"BgGitopsRepositoryNotReady", "BgGitopsCommitStatusesFailing"}, alerts)
}

// TestAlertsFireAsRulesTestSays: each alert of the PrometheusRule fires,
// with the labels and annotations rules_test.yaml expects, at the
// evaluation times it names, and not at the others. rules_test.yaml is in
// promtool's unit-test format (`promtool test rules` runs it as it is);
// the test evaluates it as promtool does, with Prometheus's own rule
// manager and PromQL engine.
func TestAlertsFireAsRulesTestSays(t *testing.T) {
	_, path := prometheusRule(t)
	data, err := os.ReadFile(rulesTestFile)
	require.NoError(t, err)
	var file rulesTest
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // a field this runner does not know would go unchecked
	require.NoError(t, dec.Decode(&file))
	require.Equal(t, []string{"rules.yaml"}, file.RuleFiles, "rules_test.yaml tests the PrometheusRule's spec")
	if file.EvaluationInterval == 0 {
		file.EvaluationInterval = model.Duration(time.Minute)
	}
	require.NotEmpty(t, file.Tests)
	for i, g := range file.Tests {
		name := g.Name
		if name == "" {
			name = fmt.Sprintf("tests[%d]", i)
		}
		t.Run(name, func(t *testing.T) {
			if g.Interval == 0 {
				g.Interval = file.EvaluationInterval
			}
			g.run(t, path, time.Duration(file.EvaluationInterval))
		})
	}
}

// prometheusRule reads config/prometheus/prometheusrule.yaml and writes its
// spec as the rule file rules.yaml, which rules_test.yaml names.
func prometheusRule(t *testing.T) (ruleGroups, string) {
	t.Helper()
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
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, marshalRules(t, rule.Spec), 0o600))
	return rule.Spec, path
}

// TestMetricsDashboard checks that the Grafana dashboard parses, that its
// queries are PromQL Prometheus accepts (as recording rules, Grafana's
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
	checkRules(t, ruleGroups{Groups: []ruleGroup{group}})
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

// grafanaVars stand for the dashboard's variables in a query Prometheus
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

func marshalRules(t *testing.T, g ruleGroups) []byte {
	t.Helper()
	out, err := yaml.Marshal(g)
	require.NoError(t, err)
	return out
}

// promqlParser parses PromQL as Prometheus and promtool do without
// feature flags.
var promqlParser = parser.NewParser(parser.Options{})

// checkRules fails unless g is a rule file Prometheus loads: what
// `promtool check rules` checks, with the same parser (strict YAML, valid
// rule and label names, expressions that parse, templates that parse).
func checkRules(t *testing.T, g ruleGroups) {
	t.Helper()
	_, errs := rulefmt.Parse(marshalRules(t, g), false, model.UTF8Validation, promqlParser, slog.New(slog.DiscardHandler))
	for _, err := range errs {
		t.Errorf("rule file: %v", err)
	}
}

// rulesTest is the part of promtool's unit-test file format
// (https://prometheus.io/docs/prometheus/latest/configuration/unit_testing_rules/)
// that rules_test.yaml uses. A field it leaves out fails the decoding, so
// nothing rules_test.yaml says goes unchecked.
type rulesTest struct {
	RuleFiles          []string         `yaml:"rule_files"`
	EvaluationInterval model.Duration   `yaml:"evaluation_interval"`
	Tests              []rulesTestGroup `yaml:"tests"`
}

type rulesTestGroup struct {
	Name        string           `yaml:"name"`
	Interval    model.Duration   `yaml:"interval"`
	InputSeries []inputSeries    `yaml:"input_series"`
	AlertTests  []alertRulesTest `yaml:"alert_rule_test"`
}

type inputSeries struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

type alertRulesTest struct {
	EvalTime  model.Duration `yaml:"eval_time"`
	Alertname string         `yaml:"alertname"`
	ExpAlerts []struct {
		ExpLabels      map[string]string `yaml:"exp_labels"`
		ExpAnnotations map[string]string `yaml:"exp_annotations"`
	} `yaml:"exp_alerts"`
}

// run evaluates the rule file at path over the group's input series as
// promtool's RulesUnitTest does: the series loaded as a promqltest load
// command, the rule groups evaluated by Prometheus's rule manager every
// evalInterval from time 0, and at each eval_time the firing alerts of
// the evaluation at or just before it (ts <= eval_time < ts+evalInterval)
// compared with the expected ones.
func (g rulesTestGroup) run(t *testing.T, path string, evalInterval time.Duration) {
	var load strings.Builder
	fmt.Fprintf(&load, "load %s\n", g.Interval)
	for _, s := range g.InputSeries {
		fmt.Fprintf(&load, "  %s %s\n", s.Series, s.Values)
	}
	suite, err := promqltest.NewLazyLoader(load.String(), promqltest.LazyLoaderOpts{
		EnableAtModifier: true, EnableNegativeOffset: true, Parser: promqlParser,
	})
	require.NoError(t, err)
	defer func() { assert.NoError(t, suite.Close()) }()
	suite.SubqueryInterval = evalInterval

	m := rules.NewManager(&rules.ManagerOptions{
		QueryFunc:    rules.EngineQueryFunc(suite.QueryEngine(), suite.Storage()),
		AppendableV2: suite.Storage(),
		Context:      context.Background(),
		NotifyFunc:   func(context.Context, string, ...*rules.Alert) {},
		Logger:       slog.New(slog.DiscardHandler),
		Parser:       promqlParser,
	})
	groups, errs := m.LoadGroups(time.Duration(g.Interval), labels.EmptyLabels(), "", nil, false, path)
	require.Empty(t, errs, "load %s", path)
	for _, rg := range groups {
		for _, r := range rg.Rules() {
			if a, ok := r.(*rules.AlertingRule); ok {
				// As promtool: the ALERTS series is written from the first evaluation.
				a.SetRestored(true)
			}
		}
	}

	byTime := map[time.Duration][]alertRulesTest{}
	for _, a := range g.AlertTests {
		require.NotEmpty(t, a.Alertname, "an alert_rule_test at %s names no alert", a.EvalTime)
		byTime[time.Duration(a.EvalTime)] = append(byTime[time.Duration(a.EvalTime)], a)
	}
	require.NotEmpty(t, byTime, "the group tests no alert")
	times := slices.Sorted(maps.Keys(byTime))
	start := time.Unix(0, 0).UTC()
	next := 0
	for ts := start; !ts.After(start.Add(times[len(times)-1])); ts = ts.Add(evalInterval) {
		suite.WithSamplesTill(ts, func(err error) {
			require.NoError(t, err)
			for _, rg := range groups {
				rg.Eval(suite.Context(), ts)
				for _, r := range rg.Rules() {
					require.NoError(t, r.LastError(), "rule %s at %s", r.Name(), ts.Sub(start))
				}
			}
		})
		for next < len(times) && ts.Sub(start) <= times[next] && times[next] < ts.Sub(start)+evalInterval {
			for _, at := range byTime[times[next]] {
				var want []string
				for _, e := range at.ExpAlerts {
					l := maps.Clone(e.ExpLabels)
					if l == nil {
						l = map[string]string{}
					}
					l[labels.AlertName] = at.Alertname
					want = append(want, alertString(labels.FromMap(l), labels.FromMap(e.ExpAnnotations)))
				}
				slices.Sort(want)
				assert.Equal(t, want, firing(groups, at.Alertname), "%s at %s", at.Alertname, at.EvalTime)
			}
			next++
		}
	}
	require.Equal(t, len(times), next, "every eval_time was checked")
}

// firing lists the alerts named name that fire, in every group, sorted.
func firing(groups map[string]*rules.Group, name string) []string {
	var got []string
	for _, g := range groups {
		for _, r := range g.Rules() {
			if a, ok := r.(*rules.AlertingRule); ok && a.Name() == name {
				for _, alert := range a.ActiveAlerts() {
					if alert.State == rules.StateFiring {
						got = append(got, alertString(alert.Labels, alert.Annotations))
					}
				}
			}
		}
	}
	slices.Sort(got)
	return got
}

func alertString(l, annotations labels.Labels) string {
	return "labels: " + l.String() + "\nannotations: " + annotations.String()
}
