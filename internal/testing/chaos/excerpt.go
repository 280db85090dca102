/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// excerpt.go: controllerExcerpt, the lines of the controllers' logs around
// a violation that name its jobs or are about leader election.

package chaos

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// controllerExcerpt returns the lines of every replica's log from 20 s
// before at to 5 s after it that name one of the subjects' jobs or are
// about leader election, oldest first, each prefixed with its replica.
func (e *env) controllerExcerpt(subjects []string, at time.Time, max int) []string {
	var names []string
	for _, s := range subjects {
		if _, name := splitKey(s); name != "" {
			names = append(names, `"name":"`+name+`"`, name+"-blue", name+"-green")
		}
	}
	from, to := at.Add(-20*time.Second), at.Add(5*time.Second)
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	for _, r := range e.replicas {
		f, err := os.Open(filepath.Join(e.dir, r.name+".log"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 256<<10), 4<<20)
		for sc.Scan() {
			text := sc.Text()
			ts, rest, ok := strings.Cut(text, "\t")
			t, err := time.Parse(time.RFC3339, ts)
			if !ok || err != nil || t.Before(from) || t.After(to) || !mentions(rest, names) {
				continue
			}
			if len(text) > 300 {
				text = text[:300] + "…"
			}
			lines = append(lines, line{at: t, text: r.name + " " + text})
		}
		f.Close()
	}
	sort.SliceStable(lines, func(a, b int) bool { return lines[a].at.Before(lines[b].at) })
	if len(lines) > max {
		lines = lines[len(lines)-max:]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

func mentions(text string, names []string) bool {
	if strings.Contains(text, "leaderelection") || strings.Contains(text, "leader election") {
		return true
	}
	for _, n := range names {
		if strings.Contains(text, n) {
			return true
		}
	}
	return false
}
