//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// auditPolicy logs every request's metadata once it is answered (and once
// a watch starts), which is enough to count requests by user and verb.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// controllerUser is the user of testenv's kubeconfig (env.Kubeconfig),
// which only the controller processes use; the benchmark's own client
// and the simulator are the user bench-driver.
const controllerUser = "admin"

type auditEvent struct {
	AuditID    string `json:"auditID"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	Received time.Time `json:"requestReceivedTimestamp"`
	Stage    string    `json:"stage"`
	StageAt  time.Time `json:"stageTimestamp"`
}

// auditLog reads the API server's audit log.
type auditLog struct{ path string }

// offset is the log's current size: every request received from now on is
// logged after it.
func (a auditLog) offset() int64 {
	st, err := os.Stat(a.path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// requestCounts are the controller's API requests received in a window.
type requestCounts struct {
	Total int `json:"total"`
	// ByVerb counts requests by verb; dry-run patches are "patch (dry-run)".
	ByVerb map[string]int `json:"by_verb"`
	// ByResource counts requests by "verb resource[/subresource]".
	ByResource map[string]int `json:"by_resource"`
	// Writes excludes dry-runs; LeaseWrites are the part of Writes on
	// coordination.k8s.io leases (leader election).
	Writes      int `json:"writes"`
	LeaseWrites int `json:"lease_writes"`
	Leases      int `json:"lease_requests"`
}

var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// count reads the log from offset and counts the requests of user received
// in [from, to).
func (a auditLog) count(offset int64, user string, from, to time.Time) (requestCounts, error) {
	rc := requestCounts{ByVerb: map[string]int{}, ByResource: map[string]int{}}
	seen := map[string]bool{}
	err := a.each(offset, user, from, to, func(ev auditEvent) {
		if !seen[ev.AuditID] {
			seen[ev.AuditID] = true
			rc.add(ev)
		}
	})
	return rc, err
}

// each calls f for every event of user whose request was received in [from, to).
func (a auditLog) each(offset int64, user string, from, to time.Time, f func(auditEvent)) error {
	file, err := os.Open(a.path)
	if err != nil {
		return err
	}
	defer file.Close()
	if st, err := file.Stat(); err != nil {
		return err
	} else if st.Size() < offset {
		return fmt.Errorf("audit log %s is shorter (%d bytes) than the offset read before (%d): rotated", a.path, st.Size(), offset)
	}
	if _, err := file.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(file, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var ev auditEvent
			if json.Unmarshal(line, &ev) == nil && ev.User.Username == user &&
				!ev.Received.Before(from) && ev.Received.Before(to) {
				f(ev)
			}
		}
		if err != nil {
			return nil
		}
	}
}

// serverTime is the API server's time answering the user's requests in
// [from, to), by "verb resource", largest total first: where a scenario's
// API time went.
func (a auditLog) serverTime(offset int64, user string, from, to time.Time) string {
	type agg struct {
		n     int
		total time.Duration
	}
	by := map[string]*agg{}
	var all time.Duration
	err := a.each(offset, user, from, to, func(ev auditEvent) {
		if ev.Stage != "ResponseComplete" || ev.Verb == "watch" {
			return
		}
		rc := requestCounts{ByVerb: map[string]int{}, ByResource: map[string]int{}}
		rc.add(ev)
		key := sortedKeys(rc.ByResource)[0]
		if by[key] == nil {
			by[key] = &agg{}
		}
		d := ev.StageAt.Sub(ev.Received)
		by[key].n++
		by[key].total += d
		all += d
	})
	if err != nil {
		return "not measured: " + err.Error()
	}
	keys := sortedKeys(by)
	sort.SliceStable(keys, func(i, j int) bool { return by[keys[i]].total > by[keys[j]].total })
	var parts []string
	for i, k := range keys {
		if i == 6 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d × %.1f ms = %.1f s", k, by[k].n, float64(by[k].total.Microseconds())/1000/float64(by[k].n), by[k].total.Seconds()))
	}
	return fmt.Sprintf("%.1f s in total; %s", all.Seconds(), strings.Join(parts, "; "))
}

func (rc *requestCounts) add(ev auditEvent) {
	rc.Total++
	verb := ev.Verb
	dryRun := strings.Contains(ev.RequestURI, "dryRun=")
	if dryRun {
		verb += " (dry-run)"
	}
	rc.ByVerb[verb]++
	res := "(non-resource)"
	lease := false
	if ev.ObjectRef != nil {
		res = ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		lease = ev.ObjectRef.Resource == "leases"
	}
	rc.ByResource[verb+" "+res]++
	if lease {
		rc.Leases++
	}
	if writeVerbs[ev.Verb] && !dryRun {
		rc.Writes++
		if lease {
			rc.LeaseWrites++
		}
	}
}

// scaled multiplies every count by f (per-minute rates from a window).
func (rc requestCounts) scaled(f float64) requestCounts {
	out := requestCounts{ByVerb: map[string]int{}, ByResource: map[string]int{}}
	r := func(n int) int { return int(float64(n)*f + 0.5) }
	out.Total, out.Writes, out.LeaseWrites, out.Leases = r(rc.Total), r(rc.Writes), r(rc.LeaseWrites), r(rc.Leases)
	for k, v := range rc.ByVerb {
		out.ByVerb[k] = r(v)
	}
	for k, v := range rc.ByResource {
		out.ByResource[k] = r(v)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
