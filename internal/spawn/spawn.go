/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package spawn starts child processes from one locked OS thread that
// never exits. Linux sends a child its parent-death signal
// (SysProcAttr.Pdeathsig) when the thread that started it ends, not the
// process, and the Go runtime may end a thread; started from this one, a
// child gets the signal only when this process dies.
package spawn

import (
	"os/exec"
	"runtime"
	"sync"
)

var spawner struct {
	once sync.Once
	reqs chan request
}

type request struct {
	cmd  *exec.Cmd
	errc chan error
}

// Start is cmd.Start, run on the spawning thread.
func Start(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan request)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives on
			for r := range spawner.reqs {
				r.errc <- r.cmd.Start()
			}
		}()
	})
	errc := make(chan error, 1)
	spawner.reqs <- request{cmd: cmd, errc: errc}
	return <-errc
}
