/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package health

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"
)

// integrations is config/integrations, relative to this package.
const integrations = "../../config/integrations"

// verdict is what each tool says of one version of an object.
type verdict struct {
	// Argo is the status of the Argo CD health check (Healthy, Progressing,
	// Degraded, Suspended, Missing), ArgoMessage its message.
	Argo, ArgoMessage string
	// Flux is what Flux concludes from healthCheckExprs (Current,
	// InProgress, Failed); FluxErr an evaluation error (Flux then keeps
	// polling until its timeout).
	Flux    kstatus.Status
	FluxErr error
	// Kstatus is kstatus.Compute's: what Flux, kubectl and cli-utils
	// conclude without expressions.
	Kstatus kstatus.Status
}

func (v verdict) String() string {
	flux := string(v.Flux)
	if v.FluxErr != nil {
		flux = "error: " + v.FluxErr.Error()
	}
	return fmt.Sprintf("Argo CD %s (%q), Flux %s, kstatus %s", v.Argo, v.ArgoMessage, flux, v.Kstatus)
}

func judge(t *testing.T, u *unstructured.Unstructured) verdict {
	t.Helper()
	var v verdict
	var err error
	v.Argo, v.ArgoMessage, err = argoHealth(u)
	if err != nil {
		t.Fatalf("Argo CD health of %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	v.Flux, v.FluxErr = fluxHealth(t, u)
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatalf("kstatus of %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	v.Kstatus = res.Status
	return v
}

// expect pins the three verdicts on u.
func expect(t *testing.T, what string, u *unstructured.Unstructured, argo string, flux, ks kstatus.Status) verdict {
	t.Helper()
	v := judge(t, u)
	if v.Argo != argo || v.FluxErr != nil || v.Flux != flux || v.Kstatus != ks {
		t.Errorf("%s: %s %s: got %s; want Argo CD %s, Flux %s, kstatus %s; status: %v",
			what, u.GetKind(), u.GetName(), v, argo, flux, ks, u.Object["status"])
	} else {
		t.Logf("%s: %s", what, v)
	}
	return v
}

// agree checks what must hold between the verdicts of any version of an
// object: the tools differ only where this package's README says so (a
// job or repository suspended as asked, a build failure that kstatus
// leaves in progress, an object the controller has not written yet).
func agree(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	v := judge(t, u)
	fail := func(rule string) {
		t.Errorf("%s %s: %s: %s; status: %v", u.GetKind(), u.GetName(), rule, v, u.Object["status"])
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "conditions"); !found {
		// Before the controller's first status write.
		if v.Argo != "Progressing" {
			fail("an object without conditions is Progressing in Argo CD")
		}
		return
	}
	if v.FluxErr != nil {
		fail("Flux's expressions evaluate on every object with conditions")
		return
	}
	ready, _ := condition(u, "Ready")
	switch {
	case (v.Argo == "Healthy") != (v.Flux == kstatus.CurrentStatus && ready == "True"):
		fail("Argo CD Healthy when and only when Flux is Current with Ready=True")
	case v.Argo == "Healthy" && v.Kstatus != kstatus.CurrentStatus:
		fail("Argo CD Healthy is kstatus Current")
	case v.Kstatus == kstatus.FailedStatus && (v.Argo != "Degraded" || v.Flux != kstatus.FailedStatus):
		fail("kstatus Failed is Argo CD Degraded and Flux Failed")
	case v.Flux == kstatus.FailedStatus && v.Argo != "Degraded":
		fail("Flux Failed is Argo CD Degraded")
	case v.Kstatus == kstatus.InProgressStatus && v.Argo == "Healthy":
		fail("kstatus InProgress is never Argo CD Healthy")
	case v.Argo == "Progressing" && v.Flux != kstatus.InProgressStatus:
		fail("Argo CD Progressing is Flux InProgress")
	case u.GetKind() == "FlinkBlueGreenDeployment" && (v.Argo == "Degraded") != (v.Flux == kstatus.FailedStatus):
		fail("a FlinkBlueGreenDeployment is Degraded in Argo CD when and only when Flux says Failed")
	}
}

// argoHealth runs the Argo CD health check of u's kind as Argo CD runs a
// resource.customizations.health script of argocd-cm (util/lua): no
// standard libraries beyond package, base and table, the object as the
// global obj (numbers as Lua numbers), a one-second budget, a returned
// table whose status must be a known health status.
func argoHealth(u *unstructured.Unstructured) (status, message string, err error) {
	script, err := os.ReadFile(filepath.Join(integrations, "argocd", u.GroupVersionKind().Group, u.GetKind(), "health.lua"))
	if err != nil {
		return "", "", err
	}
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return "", "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", luaValue(l, u.Object))
	if err := l.DoString(string(script)); err != nil {
		return "", "", err
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("health.lua returned %s, not a table", l.Get(-1).Type())
	}
	status, message = lua.LVAsString(ret.RawGetString("status")), lua.LVAsString(ret.RawGetString("message"))
	switch status {
	case "Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown":
		return status, message, nil
	}
	return "", "", fmt.Errorf("health.lua returned the status %q, which Argo CD does not know", status)
}

// luaValue converts as Argo CD's decodeValue does.
func luaValue(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(luaValue(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetH(lua.LString(k), luaValue(l, item))
		}
		return t
	}
	return lua.LNil
}

// fluxExprs are the healthCheckExprs of config/integrations/flux, by kind.
type fluxExprs struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	InProgress string `json:"inProgress"`
	Failed     string `json:"failed"`
	Current    string `json:"current"`
}

var loadFlux = sync.OnceValues(func() (map[string]fluxExprs, error) {
	data, err := os.ReadFile(filepath.Join(integrations, "flux", "healthcheckexprs.yaml"))
	if err != nil {
		return nil, err
	}
	var k unstructured.Unstructured
	if err := yaml.Unmarshal(data, &k.Object); err != nil {
		return nil, err
	}
	if k.GetAPIVersion() != "kustomize.toolkit.fluxcd.io/v1" || k.GetKind() != "Kustomization" {
		return nil, fmt.Errorf("healthcheckexprs.yaml is a %s %s, not a Flux Kustomization", k.GetAPIVersion(), k.GetKind())
	}
	list, _, _ := unstructured.NestedSlice(k.Object, "spec", "healthCheckExprs")
	raw, err := yaml.Marshal(list)
	if err != nil {
		return nil, err
	}
	var exprs []fluxExprs // strict: a misspelt field is an error here, as in Flux's CRD
	if err := yaml.UnmarshalStrict(raw, &exprs); err != nil {
		return nil, err
	}
	out := map[string]fluxExprs{}
	for _, e := range exprs {
		out[e.APIVersion+"/"+e.Kind] = e
	}
	return out, nil
})

// fluxHealth evaluates the healthCheckExprs of u's kind as Flux's
// kustomize-controller does (fluxcd/pkg/runtime/cel StatusEvaluator, RFC
// 0009): a status.observedGeneration behind metadata.generation is in
// progress; then inProgress, failed and current, in that order, each
// parsed (not type-checked: the object's top-level fields are its
// variables) in Flux's CEL environment, the first true deciding; none
// true is in progress.
func fluxHealth(t *testing.T, u *unstructured.Unstructured) (kstatus.Status, error) {
	t.Helper()
	all, err := loadFlux()
	if err != nil {
		t.Fatalf("config/integrations/flux: %v", err)
	}
	e, ok := all[u.GetAPIVersion()+"/"+u.GetKind()]
	if !ok {
		t.Fatalf("config/integrations/flux has no healthCheckExprs for %s %s", u.GetAPIVersion(), u.GetKind())
	}
	if g, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); found && g != u.GetGeneration() {
		return kstatus.InProgressStatus, nil
	}
	for _, step := range []struct {
		expr   string
		status kstatus.Status
	}{{e.InProgress, kstatus.InProgressStatus}, {e.Failed, kstatus.FailedStatus}, {e.Current, kstatus.CurrentStatus}} {
		if step.expr == "" {
			continue
		}
		ok, err := celBool(step.expr, u.Object)
		if err != nil {
			return "", err
		}
		if ok {
			return step.status, nil
		}
	}
	return kstatus.InProgressStatus, nil
}

// celEnv is Flux's (fluxcd/pkg/runtime/cel NewExpression).
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Sets(),
		ext.Encoders(),
	)
})

func celBool(expr string, obj map[string]any) (bool, error) {
	env, err := celEnv()
	if err != nil {
		return false, err
	}
	ast, iss := env.Parse(expr)
	if iss.Err() != nil {
		return false, fmt.Errorf("parse %q: %w", expr, iss.Err())
	}
	prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(100))
	if err != nil {
		return false, err
	}
	val, _, err := prg.Eval(obj)
	if err != nil {
		return false, fmt.Errorf("evaluate %q: %w", expr, err)
	}
	b, ok := val.(types.Bool)
	if !ok {
		return false, fmt.Errorf("%q is a %s, not a bool", expr, val.Type())
	}
	return bool(b), nil
}
