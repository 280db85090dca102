/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package process

import (
	"os/exec"
	"runtime"
	"sync"
)

// spawner forks every child from one locked OS thread that never exits, so
// that a parent-death signal fires only when this process dies.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

func spawn(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives on
			for r := range spawner.reqs {
				r.errc <- r.cmd.Start()
			}
		}()
	})
	errc := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, errc: errc}
	return <-errc
}

// StartCommand starts cmd from the spawning thread, in its own process
// group with a parent-death signal, and remembers its group for Leaks; the
// caller waits for it. For short-lived helpers that are not a Process.
func StartCommand(cmd *exec.Cmd) error {
	cmd.SysProcAttr = sysProcAttr()
	if err := spawn(cmd); err != nil {
		return err
	}
	remember(cmd.Process.Pid)
	return nil
}
