/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// gcNilFault is how a worker of Go 1.26 died once in twenty-five under its
// memory limit: the garbage collector's span queue, allocated under
// RLIMIT_DATA, dereferenced nil.
const gcNilFault = `SIGSEGV: segmentation violation
PC=0xd8a93d m=6 sigcode=1 addr=0x0

goroutine 0 gp=0x3415e0497680 m=6 mp=0x3415e048d808 [idle]:
runtime.(*spanQueue).tryDrain(0x707080700000800?, 0x807070707080005?, 0x7070707?)
	/usr/local/go/src/runtime/mgcmark_greenteagc.go:520 +0x5d fp=0x7f01dd5dac08 sp=0x7f01dd5dabe8 pc=0xd8a93d
`

// TestRuntimeNilFaultUnderAMemoryLimitIsTheMemoryLimit: a nil dereference
// inside the Go runtime of a worker with a memory limit is that limit;
// one in the build's own code, or of a worker without one, is not.
func TestRuntimeNilFaultUnderAMemoryLimitIsTheMemoryLimit(t *testing.T) {
	assert.True(t, runtimeNilFault(gcNilFault))
	inBuild := `SIGSEGV: segmentation violation
PC=0x12 m=0 sigcode=1 addr=0x0

goroutine 1 gp=0x1 m=0 mp=0x2 [running]:
sigs.k8s.io/kustomize/api/krusty.(*Kustomizer).Run(0x0)
`
	assert.False(t, runtimeNilFault(inBuild), "a fault in the build's code")
	assert.False(t, runtimeNilFault("SIGSEGV: segmentation violation\nPC=0x1 m=0 sigcode=1 addr=0x28\n\ngoroutine 0 [idle]:\nruntime.foo()\n"), "not nil")
	assert.False(t, runtimeNilFault("fatal error: stack overflow\n"))
}
