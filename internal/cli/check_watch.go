/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The check of `bg-gitops check` that the Flink operator watches the namespace
// (its watched-namespaces option, read from the ConfigMaps its pods mount).

package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// watchedKey is the operator's option listing the namespaces it watches;
// unset, empty or allNamespaces is every namespace.
const (
	watchedKey    = "kubernetes.operator.watched.namespaces"
	allNamespaces = "JOSDK_ALL_NAMESPACES"
)

// operatorConfigFiles are the keys of the operator's ConfigMap that hold
// its configuration, in the order Flink reads them: config.yaml (Flink
// 1.19 and later), else the legacy flink-conf.yaml. The Helm chart writes
// both and mounts the one its Flink version reads.
var operatorConfigFiles = []string{"config.yaml", "flink-conf.yaml"}

var errNoOperatorConfig = errors.New("no flink-conf.yaml or config.yaml in the ConfigMaps its pods mount")

// operatorWatches: a Flink operator found watches -n (with one operator
// per group of namespaces, the others need not).
func (k *checker) operatorWatches(ctx context.Context) []checkLine {
	if len(k.operators) == 0 {
		return []checkLine{unsure("", "Flink operator watches %s: unknown (no operator found)", k.ns)}
	}
	var watching, others []checkLine
	for _, o := range k.operators {
		name := o.d.Namespace + "/" + o.d.Name
		watched, err := k.watchedNamespaces(ctx, o)
		switch {
		case err != nil:
			others = append(others, cannotTell(fmt.Sprintf("Flink operator %s watches %s", name, k.ns), err))
		case watched == nil:
			watching = append(watching, passed("Flink operator %s watches every namespace", name))
		case slices.Contains(watched, k.ns):
			watching = append(watching, passed("Flink operator %s watches %s", name, k.ns))
		default:
			fix := fmt.Sprintf("add %s to the operator's watchNamespaces (helm upgrade --reuse-values --set 'watchNamespaces={%s}' ...; "+
				"the chart then also creates the flink ServiceAccount there)", k.ns, strings.Join(append(watched, k.ns), ","))
			others = append(others, failing(fix, "Flink operator %s watches %s, not %s", name, strings.Join(watched, ", "), k.ns))
		}
	}
	if len(watching) > 0 {
		return watching
	}
	return others
}

// watchedNamespaces reads the operator's configuration from the ConfigMaps
// its pods mount; nil is every namespace.
func (k *checker) watchedNamespaces(ctx context.Context, o *flinkOperator) ([]string, error) {
	conf, err := k.operatorConfig(ctx, o)
	if err != nil {
		return nil, err
	}
	return parseWatched(conf), nil
}

// operatorConfig is the configuration file the operator reads, from the
// ConfigMaps its pods mount.
func (k *checker) operatorConfig(ctx context.Context, o *flinkOperator) (string, error) {
	for _, v := range o.d.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := k.c.Get(ctx, types.NamespacedName{Namespace: o.d.Namespace, Name: v.ConfigMap.Name}, cm); err != nil {
			return "", fmt.Errorf("read ConfigMap %s/%s: %w", o.d.Namespace, v.ConfigMap.Name, err)
		}
		for _, file := range operatorConfigFiles {
			if conf, ok := cm.Data[file]; ok && mounted(v.ConfigMap, file) {
				return conf, nil
			}
		}
	}
	return "", errNoOperatorConfig
}

// operatorOption reads key from a Flink configuration file: a flat "key:
// value" file (flink-conf.yaml) or nested YAML (config.yaml).
func operatorOption(conf, key string) string {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(conf), &m); err == nil {
		return flatValue(m, key)
	}
	return scanValue(conf, key)
}

// mounted: a ConfigMap volume without items mounts every key, with items
// only those.
func mounted(v *corev1.ConfigMapVolumeSource, key string) bool {
	return len(v.Items) == 0 || slices.ContainsFunc(v.Items, func(i corev1.KeyToPath) bool { return i.Key == key })
}

// parseWatched reads watchedKey from a Flink configuration file: a flat
// "key: value" file (flink-conf.yaml) or nested YAML (config.yaml), the
// value a comma-separated string or a list. nil is every namespace.
func parseWatched(conf string) []string {
	var out []string
	for _, n := range strings.Split(operatorOption(conf, watchedKey), ",") {
		n = strings.Trim(strings.TrimSpace(n), `"'`)
		if n == allNamespaces {
			return nil
		}
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// flatValue finds key in m, its dots standing for either a flat key or
// nesting ("a.b: x" and "a: {b: x}").
func flatValue(m map[string]any, key string) string {
	if v, ok := m[key]; ok {
		return valueString(v)
	}
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok && strings.HasPrefix(key, k+".") {
			if s := flatValue(sub, strings.TrimPrefix(key, k+".")); s != "" {
				return s
			}
		}
	}
	return ""
}

func valueString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case bool:
		return fmt.Sprint(t)
	case []any:
		parts := make([]string, 0, len(t))
		for _, p := range t {
			parts = append(parts, fmt.Sprint(p))
		}
		return strings.Join(parts, ",")
	}
	return ""
}

// scanValue is the value of a "key: value" line, for a file that is not
// valid YAML (Flink's legacy parser is more lenient).
func scanValue(conf, key string) string {
	s := bufio.NewScanner(strings.NewReader(conf))
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
