/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// flinkJobRules is what the Flink Kubernetes Operator's Helm chart grants
// the `flink` ServiceAccount of a job namespace (helm/flink-kubernetes-
// operator/templates/rbac, "flink-operator.jobRbacRules", the same from
// release 1.10 to 1.15): the JobManager creates its TaskManager pods, keeps
// its HA metadata in ConfigMaps and sets owner references to its
// Deployment.
var flinkJobRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods", "configmaps"}, Verbs: flinkJobVerbs},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments", "deployments/finalizers"}, Verbs: flinkJobVerbs},
}

var flinkJobVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// The state directories a job needs, from its flinkConfiguration.
var stateDirKeys = []string{"state.checkpoints.dir", "state.savepoints.dir", "high-availability.storageDir"}

// TestExampleOverlaysHaveWhatTheJobNeeds checks, for every overlay of
// examples/repo-layout, what the Flink operator simulator never looks at
// and a real operator needs: the namespace, the ServiceAccount the pods
// run as with the operator chart's job rules bound to it, every object the
// pod template names (ConfigMaps, Secrets and keys, volume claims), state
// directories the stock Flink image can write (a claimed volume mounted
// there, or S3 with the plugin of the image's Flink version and
// credentials), and job arguments that all come from the job's ConfigMap.
func TestExampleOverlaysHaveWhatTheJobNeeds(t *testing.T) {
	for _, overlay := range exampleOverlays(t) {
		t.Run(overlay, func(t *testing.T) {
			objs, err := Build(examples, "overlays/"+overlay, Options{})
			require.NoError(t, err)
			set := exampleSet(objs)
			fbgd := set.only(t, "FlinkBlueGreenDeployment")
			ns := fbgd.GetNamespace()
			set.get(t, "Namespace", "", ns)
			spec, _, _ := unstructured.NestedMap(fbgd.Object, "spec", "template", "spec")

			image, _, _ := unstructured.NestedString(spec, "image")
			flinkVersion, _, _ := unstructured.NestedString(spec, "flinkVersion")
			version, ok := strings.CutPrefix(image, "flink:")
			require.True(t, ok, "the stock Flink image, got %s", image)
			version, _, _ = strings.Cut(version, "-")
			assert.True(t, strings.HasPrefix(version, strings.ReplaceAll(strings.TrimPrefix(flinkVersion, "v"), "_", ".")+"."),
				"flinkVersion %s does not match image %s", flinkVersion, image)

			sa, _, _ := unstructured.NestedString(spec, "serviceAccount")
			require.NotEmpty(t, sa, "spec.template.spec.serviceAccount")
			set.get(t, "ServiceAccount", ns, sa)
			assertJobRules(t, set, ns, sa)

			pod := podTemplate(t, spec)
			main := mainContainer(t, pod)
			data := assertReferences(t, set, ns, pod)

			conf, _, _ := unstructured.NestedMap(spec, "flinkConfiguration")
			for _, key := range stateDirKeys {
				dir, _ := conf[key].(string)
				require.NotEmpty(t, dir, key)
				switch {
				case strings.HasPrefix(dir, "file:///"):
					assertOnClaimedVolume(t, set, ns, pod, main, strings.TrimPrefix(dir, "file://"))
				case strings.HasPrefix(dir, "s3://"):
					assert.Contains(t, strings.Split(envValue(main, "ENABLE_BUILT_IN_PLUGINS"), ";"), "flink-s3-fs-presto-"+version+".jar",
						"%s is in S3: the pods enable the S3 plugin of %s", key, image)
					assert.NotNil(t, envVar(main, "AWS_ACCESS_KEY_ID"), "S3 credentials")
					assert.NotNil(t, envVar(main, "AWS_SECRET_ACCESS_KEY"), "S3 credentials")
				default:
					t.Errorf("%s: %s is neither a mounted volume nor S3", key, dir)
				}
			}

			args, _, _ := unstructured.NestedStringSlice(spec, "job", "args")
			require.Len(t, args, 4, "--kafka-topic T --brokers B")
			assert.Equal(t, []string{"--kafka-topic", data["KAFKA_TOPIC"], "--brokers", data["KAFKA_BOOTSTRAP_SERVERS"]}, args,
				"the job's arguments are its ConfigMap's values")
			assert.NotEmpty(t, data["KAFKA_BOOTSTRAP_SERVERS"])
		})
	}
}

// TestExampleArgumentsFollowTheConfigMap: the job's arguments are copied
// from the ConfigMap at render time, not merely equal to it: a commit that
// changes an overlay's ConfigMap changes the job.
func TestExampleArgumentsFollowTheConfigMap(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(examples)))
	servers := regexp.MustCompile(`(?m)^(\s+KAFKA_BOOTSTRAP_SERVERS:).*$`)
	topic := regexp.MustCompile(`(?m)^(\s+KAFKA_TOPIC:).*$`)
	changed := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "configmap") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b = servers.ReplaceAll(b, []byte("$1 kafka.changed.example:9093"))
		b = topic.ReplaceAll(b, []byte("$1 changed-topic"))
		changed++
		return os.WriteFile(path, b, 0o644)
	}))
	require.Positive(t, changed)
	for _, overlay := range exampleOverlays(t) {
		objs, err := Build(dir, "overlays/"+overlay, Options{})
		require.NoError(t, err, overlay)
		args, _, _ := unstructured.NestedStringSlice(exampleSet(objs).only(t, "FlinkBlueGreenDeployment").Object,
			"spec", "template", "spec", "job", "args")
		assert.Equal(t, []string{"--kafka-topic", "changed-topic", "--brokers", "kafka.changed.example:9093"}, args, overlay)
	}
}

type objectSet []*unstructured.Unstructured

func exampleSet(objs []*unstructured.Unstructured) objectSet { return objs }

func (s objectSet) find(kind, ns, name string) *unstructured.Unstructured {
	for _, u := range s {
		if u.GetKind() == kind && u.GetNamespace() == ns && u.GetName() == name {
			return u
		}
	}
	return nil
}

func (s objectSet) get(t *testing.T, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := s.find(kind, ns, name)
	require.NotNil(t, u, "the overlay has no %s %s/%s", kind, ns, name)
	return u
}

func (s objectSet) only(t *testing.T, kind string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, u := range s {
		if u.GetKind() == kind {
			found = append(found, u)
		}
	}
	require.Len(t, found, 1, kind)
	return found[0]
}

func convert[T any](t *testing.T, obj map[string]any) *T {
	t.Helper()
	out := new(T)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, out, true))
	return out
}

// assertJobRules: a RoleBinding of the namespace binds the ServiceAccount
// to a Role that allows everything flinkJobRules does.
func assertJobRules(t *testing.T, set objectSet, ns, sa string) {
	t.Helper()
	var roles []string
	for _, u := range set {
		if u.GetKind() != "RoleBinding" || u.GetNamespace() != ns {
			continue
		}
		rb := convert[rbacv1.RoleBinding](t, u.Object)
		if rb.RoleRef.Kind == "Role" && slices.ContainsFunc(rb.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && (s.Namespace == ns || s.Namespace == "")
		}) {
			roles = append(roles, rb.RoleRef.Name)
		}
	}
	require.NotEmpty(t, roles, "no RoleBinding in %s binds ServiceAccount %s to a Role", ns, sa)
	var rules []rbacv1.PolicyRule
	for _, name := range roles {
		rules = append(rules, convert[rbacv1.Role](t, set.get(t, "Role", ns, name).Object).Rules...)
	}
	for _, want := range flinkJobRules {
		for _, group := range want.APIGroups {
			for _, resource := range want.Resources {
				for _, verb := range want.Verbs {
					assert.True(t, allows(rules, group, resource, verb), "ServiceAccount %s may not %s %s.%s", sa, verb, resource, group)
				}
			}
		}
	}
}

func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, r := range rules {
		if has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func podTemplate(t *testing.T, spec map[string]any) *corev1.PodTemplateSpec {
	t.Helper()
	m, ok, _ := unstructured.NestedMap(spec, "podTemplate")
	require.True(t, ok, "spec.template.spec.podTemplate")
	return convert[corev1.PodTemplateSpec](t, m)
}

// mainContainer is the container the Flink operator merges its own into.
func mainContainer(t *testing.T, pod *corev1.PodTemplateSpec) *corev1.Container {
	t.Helper()
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == "flink-main-container" })
	require.GreaterOrEqual(t, i, 0, "podTemplate has no flink-main-container")
	return &pod.Spec.Containers[i]
}

// assertReferences checks that every ConfigMap, Secret, key and claim the
// pod template names is an object of the overlay, and returns the data of
// the ConfigMap the pods read through envFrom.
func assertReferences(t *testing.T, set objectSet, ns string, pod *corev1.PodTemplateSpec) map[string]string {
	t.Helper()
	data := map[string]string{}
	for _, c := range pod.Spec.Containers {
		for _, from := range c.EnvFrom {
			switch {
			case from.ConfigMapRef != nil:
				cm := convert[corev1.ConfigMap](t, set.get(t, "ConfigMap", ns, from.ConfigMapRef.Name).Object)
				for k, v := range cm.Data {
					data[k] = v
				}
			case from.SecretRef != nil:
				set.get(t, "Secret", ns, from.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom == nil:
			case e.ValueFrom.SecretKeyRef != nil:
				s := convert[corev1.Secret](t, set.get(t, "Secret", ns, e.ValueFrom.SecretKeyRef.Name).Object)
				assert.Contains(t, s.Data, e.ValueFrom.SecretKeyRef.Key, "env %s", e.Name)
			case e.ValueFrom.ConfigMapKeyRef != nil:
				cm := convert[corev1.ConfigMap](t, set.get(t, "ConfigMap", ns, e.ValueFrom.ConfigMapKeyRef.Name).Object)
				assert.Contains(t, cm.Data, e.ValueFrom.ConfigMapKeyRef.Key, "env %s", e.Name)
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			set.get(t, "PersistentVolumeClaim", ns, v.PersistentVolumeClaim.ClaimName)
		}
	}
	require.NotEmpty(t, data, "the pods read no ConfigMap")
	return data
}

// assertOnClaimedVolume: path lies under a mount of the main container
// whose volume is a claim of the overlay, which every pod of both colours
// mounts and which outlives them (an emptyDir would do neither).
func assertOnClaimedVolume(t *testing.T, set objectSet, ns string, pod *corev1.PodTemplateSpec, main *corev1.Container, path string) {
	t.Helper()
	for _, m := range main.VolumeMounts {
		if path != m.MountPath && !strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			continue
		}
		i := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		require.GreaterOrEqual(t, i, 0, "mount %s names no volume", m.MountPath)
		claim := pod.Spec.Volumes[i].PersistentVolumeClaim
		require.NotNil(t, claim, "%s is on volume %s, which is not a PersistentVolumeClaim", path, m.Name)
		set.get(t, "PersistentVolumeClaim", ns, claim.ClaimName)
		assert.False(t, m.ReadOnly, "%s is mounted read-only", m.MountPath)
		return
	}
	t.Errorf("%s is on no volume of flink-main-container", path)
}

func envVar(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func envValue(c *corev1.Container, name string) string {
	if e := envVar(c, name); e != nil {
		return e.Value
	}
	return ""
}
