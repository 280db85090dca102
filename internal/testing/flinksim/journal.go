/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// journal.go: the lineage as JSON lines: Lineage.JournalTo writes it,
// ReadJournal rebuilds a Lineage from it.

package flinksim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// The journal is the lineage as JSON lines, one per change (a job started,
// a job stopped, a savepoint taken), written in the order of the changes.
// It lets a process other than the simulator's read the lineage
// (internal/testing/chaos runs the simulator as a process of its own), and a
// restarted simulator go on from it (Options.Lineage).
type journal struct {
	w   io.Writer
	err error // the first write error; later writes are dropped
}

// entry is one line: exactly one field is set.
type entry struct {
	Job       *Job       `json:"job,omitempty"`
	Stop      *stopEntry `json:"stop,omitempty"`
	Savepoint *Savepoint `json:"savepoint,omitempty"`
}

type stopEntry struct {
	JobID string `json:"jobID"`
	Stop
}

// write appends one line in one Write call, so a reader of the file sees
// whole lines only, but for the last one while it is being written.
func (j *journal) write(e entry) {
	if j == nil || j.err != nil {
		return
	}
	data, err := json.Marshal(e)
	if err == nil {
		_, err = j.w.Write(append(data, '\n'))
	}
	j.err = err
}

// JournalTo makes l write every later change to w (see ReadJournal).
func (l *Lineage) JournalTo(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.journal = &journal{w: w}
}

// JournalErr is the first error writing the journal.
func (l *Lineage) JournalErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.journal == nil {
		return nil
	}
	return l.journal.err
}

// ReadJournal rebuilds a lineage from a journal. A last line without its
// newline (being written) is ignored; any other line that does not parse
// is an error.
func ReadJournal(r io.Reader) (*Lineage, error) {
	l := newLineage()
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return l, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("journal line %d: %w", n, err)
		}
		l.replay(e)
	}
}

func (l *Lineage) replay(e entry) {
	switch {
	case e.Job != nil:
		l.jobs[e.Job.ID] = e.Job
	case e.Stop != nil:
		if j, ok := l.jobs[e.Stop.JobID]; ok {
			j.applyStop(e.Stop.Stop)
		}
	case e.Savepoint != nil:
		l.savepoints[normalizePath(e.Savepoint.Path)] = *e.Savepoint
	}
}
