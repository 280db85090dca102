/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"strings"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseFlinkDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"10 min", 10 * time.Minute, false},
		{"30 s", 30 * time.Second, false},
		{"15s", 15 * time.Second, false},
		{"500 ms", 500 * time.Millisecond, false},
		{"1 h", time.Hour, false},
		{"2d", 48 * time.Hour, false},
		{"3 days", 72 * time.Hour, false},
		{"5 MIN", 5 * time.Minute, false},
		{"1200", 1200 * time.Millisecond, false},
		{"  0 ", 0, false},
		{"7 seconds", 7 * time.Second, false},
		{"2 µs", 2 * time.Microsecond, false},
		{"9 nanos", 9, false},
		{"1m30s", 90 * time.Second, false},
		{"1.5h", 90 * time.Minute, false},
		{"", 0, true},
		{"ten minutes", 0, true},
		{"10 fortnights", 0, true},
		{"-5s", 0, true},
		{"-5", 0, true},
		{"99999999999999999999 d", 0, true},
		{"300000 d", 0, true},
		{"1 day", 24 * time.Hour, false},
		{"min", 0, true},
		{"0s", 0, false},
		{"0h0m", 0, false},
		{"9223372036854775 us", 9223372036854775 * time.Microsecond, false},
		{"9223372036854775799 ns", 9223372036854775799, false},
		{"9223372036854775809 ns", 0, true},
	} {
		got, err := ParseFlinkDuration(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseFlinkDuration(%q) = %v, %v; want %v, err=%v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func win(schedule, dur, zone string) v1alpha1.RolloutWindow {
	d, err := time.ParseDuration(dur)
	if err != nil {
		panic(err)
	}
	return v1alpha1.RolloutWindow{Schedule: schedule, Duration: metav1.Duration{Duration: d}, TimeZone: zone}
}

func TestWindowState(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	at := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", s, berlin)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	nightly := []v1alpha1.RolloutWindow{win("0 2 * * *", "2h", "Europe/Berlin")}
	for _, tc := range []struct {
		name    string
		windows []v1alpha1.RolloutWindow
		now     time.Time
		open    bool
		opens   time.Time
		desc    string
	}{
		{"none configured", nil, at("2026-07-20 12:00"), true, time.Time{}, ""},
		{"before", nightly, at("2026-07-20 01:59"), false, at("2026-07-20 02:00"), "waiting for rollout window 02:00–04:00 Europe/Berlin"},
		{"at start", nightly, at("2026-07-20 02:00"), true, time.Time{}, "inside rollout window 02:00–04:00 Europe/Berlin"},
		{"inside", nightly, at("2026-07-20 03:59"), true, time.Time{}, "inside"},
		{"end is exclusive", nightly, at("2026-07-20 04:00"), false, at("2026-07-21 02:00"), "waiting"},
		{"after", nightly, at("2026-07-20 12:00"), false, at("2026-07-21 02:00"), "waiting"},
		{"spans midnight", []v1alpha1.RolloutWindow{win("0 23 * * *", "3h", "Europe/Berlin")}, at("2026-07-21 01:30"), true, time.Time{}, "23:00–02:00"},
		{"utc default", []v1alpha1.RolloutWindow{win("0 0 * * *", "1h", "")}, time.Date(2026, 7, 20, 0, 30, 0, 0, time.UTC), true, time.Time{}, "UTC"},
		{"weekdays only", []v1alpha1.RolloutWindow{win("0 9 * * 1-5", "8h", "Europe/Berlin")}, at("2026-07-25 10:00"), false, at("2026-07-27 09:00"), "09:00–17:00"},
		{"earliest of two", []v1alpha1.RolloutWindow{win("0 2 * * *", "1h", "Europe/Berlin"), win("0 14 * * *", "1h", "Europe/Berlin")}, at("2026-07-20 12:00"), false, at("2026-07-20 14:00"), "14:00–15:00"},
		{"second open", []v1alpha1.RolloutWindow{win("0 2 * * *", "1h", "Europe/Berlin"), win("0 14 * * *", "1h", "Europe/Berlin")}, at("2026-07-20 14:30"), true, time.Time{}, "14:00"},
		{"dst spring forward", []v1alpha1.RolloutWindow{win("0 1 * * *", "3h", "Europe/Berlin")}, at("2026-03-29 03:30"), true, time.Time{}, "01:00–05:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := WindowState(tc.windows, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if got.Open != tc.open || !got.OpensAt.Equal(tc.opens) || !strings.Contains(got.Description, tc.desc) {
				t.Fatalf("got %+v, want open=%v opens=%v desc~%q", got, tc.open, tc.opens, tc.desc)
			}
		})
	}
}

func TestWindowStateErrors(t *testing.T) {
	now := time.Date(2026, 7, 20, 12, 0, 0, 0, time.UTC)
	for _, w := range []v1alpha1.RolloutWindow{
		win("not cron", "1h", ""),
		win("0 2 * * *", "1h", "Mars/Olympus"),
		win("0 2 * * *", "0s", ""),
		win("0 2 * * *", "9000h", ""),
		win("CRON_TZ=UTC 0 2 * * *", "1h", ""),
		win("@every 1h", "1h", ""),
		win("0 2 30 2 *", "1h", ""), // 30 February never comes
		win("0 2 * * *", "1h", "Local"),
	} {
		if _, err := WindowState([]v1alpha1.RolloutWindow{w}, now); err == nil {
			t.Errorf("WindowState(%+v): want an error", w)
		}
	}
}

func TestClassify(t *testing.T) {
	type edit func(s *v1alpha1.FlinkBlueGreenDeploymentSpec)
	job := func(f func(j *v1alpha1.JobSpec)) edit {
		return func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { f(s.Template.Spec.Job) }
	}
	conf := func(js string) edit {
		return func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.FlinkConfiguration = rawJSON(js) }
	}
	const baseConf = `{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp"}`
	for _, tc := range []struct {
		name   string
		edit   edit
		want   DiffType
		fields []string
	}{
		{"nothing", func(*v1alpha1.FlinkBlueGreenDeploymentSpec) {}, DiffIgnore, nil},
		{"top-level configuration", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Configuration["x"] = "y" }, DiffIgnore, []string{"spec.configuration.x"}},
		{"promotion", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Promotion = &v1alpha1.Promotion{Mode: "Manual"} }, DiffIgnore, []string{"spec.promotion.mode"}},
		{"template metadata", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
			s.Template.Metadata = &v1alpha1.TemplateMetadata{Labels: map[string]string{"a": "b"}}
		}, DiffIgnore, []string{"spec.template.metadata.labels.a"}},
		{"defaults spelled out", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
			s.Template.Spec.Job.State = "running"
			s.Template.Spec.Mode = "native"
		}, DiffIgnore, nil},
		{"nested config equals flat", conf(`{"taskmanager":{"numberOfTaskSlots":2},"state.savepoints.dir":"file:///sp"}`), DiffIgnore, nil},
		{"suspend", job(func(j *v1alpha1.JobSpec) { j.State = "suspended" }), DiffSuspend, []string{"job.state"}},
		{"suspend wins over image", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
			s.Template.Spec.Job.State = "suspended"
			s.Template.Spec.Image = "x"
			s.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(3))
		}, DiffSuspend, []string{"job.state"}},
		{"savepoint redeploy", job(func(j *v1alpha1.JobSpec) { j.SavepointRedeployNonce = ptr(int64(1)) }), DiffSavepointRedeploy, []string{"job.savepointRedeployNonce"}},
		{"redeploy wins over image and parallelism", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
			s.Template.Spec.Image = "x"
			s.Template.Spec.Job.Parallelism = ptr(int32(9))
			s.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
		}, DiffSavepointRedeploy, []string{"job.savepointRedeployNonce"}},
		{"image", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.Image = "flink:2" }, DiffTransition, []string{"image"}},
		{"job parallelism", job(func(j *v1alpha1.JobSpec) { j.Parallelism = ptr(int32(8)) }), DiffTransition, []string{"job.parallelism"}},
		{"restart nonce", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.RestartNonce = ptr(int64(1)) }, DiffTransition, []string{"restartNonce"}},
		{"task manager replicas", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
			s.Template.Spec.TaskManager = rawJSON(`{"resource":{"memory":"1g","cpu":1},"replicas":3}`)
		}, DiffTransition, []string{"taskManager.replicas"}},
		{"vertex parallelism overrides", conf(`{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp","pipeline.jobvertex-parallelism-overrides":"a:2"}`),
			DiffTransition, []string{"flinkConfiguration.pipeline.jobvertex-parallelism-overrides"}},
		{"transition wins over patch", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
			s.Template.Spec.Image = "flink:2"
			s.Template.Spec.Job.UpgradeMode = "last-state"
		}, DiffTransition, []string{"image"}},
		{"upgrade mode", job(func(j *v1alpha1.JobSpec) { j.UpgradeMode = "stateless" }), DiffPatchChild, []string{"job.upgradeMode"}},
		{"initial savepoint path", job(func(j *v1alpha1.JobSpec) { j.InitialSavepointPath = "/x" }), DiffPatchChild, []string{"job.initialSavepointPath"}},
		{"nonces", job(func(j *v1alpha1.JobSpec) {
			j.SavepointTriggerNonce, j.CheckpointTriggerNonce, j.AutoscalerResetNonce = ptr(int64(1)), ptr(int64(1)), ptr(int64(1))
			j.AllowNonRestoredState = ptr(true)
		}), DiffPatchChild, []string{"job.allowNonRestoredState", "job.autoscalerResetNonce", "job.checkpointTriggerNonce", "job.savepointTriggerNonce"}},
		{"patchable config keys", conf(`{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp","parallelism.default":"4","job.autoscaler.enabled":"true","kubernetes.operator.periodic.savepoint.interval":"1h"}`),
			DiffPatchChild, []string{"flinkConfiguration.job.autoscaler.enabled", "flinkConfiguration.kubernetes.operator.periodic.savepoint.interval", "flinkConfiguration.parallelism.default"}},
		{"other config key", conf(baseConf[:len(baseConf)-1] + `,"execution.checkpointing.interval":"10s"}`), DiffTransition, []string{"flinkConfiguration.execution.checkpointing.interval"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := baseSpec(v1alpha1.UpgradeModeSavepoint)
			new := old.DeepCopy()
			tc.edit(new)
			got := Classify(&old, new)
			if got.Type != tc.want || strings.Join(got.Fields, ",") != strings.Join(tc.fields, ",") {
				t.Fatalf("Classify = %+v, want %s %v", got, tc.want, tc.fields)
			}
		})
	}
}

func TestClassifyResumeAndFirst(t *testing.T) {
	old := baseSpec(v1alpha1.UpgradeModeSavepoint)
	old.Template.Spec.Job.State = "suspended"
	new := baseSpec(v1alpha1.UpgradeModeSavepoint)
	new.Template.Spec.Image = "other" // applied in the same patch
	if d := Classify(&old, &new); d.Type != DiffResume {
		t.Fatalf("resume: %+v", d)
	}
	if d := Classify(nil, &new); d.Type != DiffTransition {
		t.Fatalf("first deployment: %+v", d)
	}
	a, b := baseSpec(""), baseSpec(v1alpha1.UpgradeModeStateless)
	if d := Classify(&a, &b); d.Type != DiffIgnore {
		t.Fatalf("default upgrade mode: %+v", d)
	}
	n2 := new.DeepCopy()
	new.Template.Spec.Job.SavepointRedeployNonce = ptr(int64(1))
	if d := Classify(&new, n2); d.Type != DiffPatchChild {
		t.Fatalf("nonce removed: %+v", d)
	}
}

func TestSnapshotNameIsADNSLabel(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	w.parent.Name = strings.Repeat("Very.Long_Name", 10)
	d := &decider{p: w.parent, spec: &w.parent.Spec}
	name := d.snapshotName(&Child{Name: "x", JobID: "j"})
	if len(name) > 63 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || strings.HasPrefix(name, "-") {
		t.Fatalf("bad name %q", name)
	}
	if name != d.snapshotName(&Child{Name: "x", JobID: "j"}) || name == d.snapshotName(&Child{Name: "x", JobID: "k"}) {
		t.Fatalf("name must be a function of the inputs")
	}
}

func TestWindowDurationLimits(t *testing.T) {
	now := time.Date(2026, 7, 20, 12, 0, 0, 0, time.UTC)
	for dur, ok := range map[string]bool{"24h": true, "8784h": true, "8785h": false} {
		if _, err := WindowState([]v1alpha1.RolloutWindow{win("0 2 * * *", dur, "")}, now); (err == nil) != ok {
			t.Errorf("window of %s: err = %v, want ok=%v", dur, err, ok)
		}
	}
	// A window that never opens does not hide one that does.
	got, err := WindowState([]v1alpha1.RolloutWindow{win("0 14 * * *", "1h", ""), win("0 2 30 2 *", "1h", "")}, now)
	if err != nil || got.Open || !got.OpensAt.Equal(time.Date(2026, 7, 20, 14, 0, 0, 0, time.UTC)) {
		t.Errorf("WindowState = %+v, %v; want closed until 14:00", got, err)
	}
	if _, err := WindowState([]v1alpha1.RolloutWindow{win("TZ=UTC 0 2 * * *", "1h", "")}, now); err == nil ||
		!strings.Contains(err.Error(), "set timeZone instead") {
		t.Errorf("TZ= prefix: err = %v", err)
	}
}

// The cron parser panics on some input (robfig/cron#554); parseCron
// returns an error instead.
func TestParseCronTurnsAPanicIntoAnError(t *testing.T) {
	if _, err := parseCron("TZ=0"); err == nil || !strings.Contains(err.Error(), "unparsable") {
		t.Fatalf("err = %v", err)
	}
}

func TestClassifyEdgeCases(t *testing.T) {
	base := baseSpec(v1alpha1.UpgradeModeSavepoint)

	// Removing restartNonce restarts nothing: patched in place.
	old := base.DeepCopy()
	old.Template.Spec.RestartNonce = ptr(int64(1))
	if d := Classify(old, &base); d.Type != DiffPatchChild {
		t.Errorf("restartNonce removed: %+v", d)
	}

	// A template without job compares as a job with the defaults.
	old = base.DeepCopy()
	old.Template.Spec.Job = nil
	cur := base.DeepCopy()
	cur.Template.Spec.Job = &v1alpha1.JobSpec{}
	if d := Classify(old, cur); d.Type != DiffIgnore {
		t.Errorf("no job vs empty job: %+v", d)
	}

	// Integers compare exactly, beyond float64 precision.
	old = base.DeepCopy()
	old.Template.Spec.Job.SavepointTriggerNonce = ptr(int64(9007199254740992))
	cur = base.DeepCopy()
	cur.Template.Spec.Job.SavepointTriggerNonce = ptr(int64(9007199254740993))
	if d := Classify(old, cur); d.Type != DiffPatchChild {
		t.Errorf("large nonce changed: %+v", d)
	}

	// A key spelled both flat and nested: the same spec never differs from
	// itself.
	cur = base.DeepCopy()
	cur.Template.Spec.FlinkConfiguration = rawJSON(`{"parallelism.default":"2","parallelism":{"default":"4"}}`)
	for i := 0; i < 100; i++ {
		if d := Classify(cur, cur); d.Type != DiffIgnore {
			t.Fatalf("a spec differs from itself: %+v", d)
		}
	}
}

func TestSnapshotNames(t *testing.T) {
	for in, want := range map[string]string{
		"orders": "orders", "Orders_Blue.az09": "orders-blue-az09", "a": "a", "z": "z", "0": "0", "9": "9",
		"-x-": "x", "__": "fbgd", "abcdef": "abc",
	} {
		max := 63
		if in == "abcdef" {
			max = 3
		}
		if got := dnsPrefix(in, max); got != want {
			t.Errorf("dnsPrefix(%q, %d) = %q, want %q", in, max, got, want)
		}
	}
	// The parts of a name do not run into each other.
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	d := &decider{p: w.parent, spec: &w.parent.Spec}
	w.parent.Annotations[v1alpha1.RetryRequestedAtAnnotation] = "c"
	n1 := d.snapshotName(&Child{Name: "orders-blue", JobID: "ab"})
	w.parent.Annotations[v1alpha1.RetryRequestedAtAnnotation] = "bc"
	if n2 := d.snapshotName(&Child{Name: "orders-blue", JobID: "a"}); n1 == n2 {
		t.Errorf("job ab with retry c and job a with retry bc share the name %s", n1)
	}
}
