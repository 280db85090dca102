/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// duration.go: ParseFlinkDuration, which parses durations as Flink's
// configuration spells them ("10 min", "30 s", a bare number of ms).

package bluegreen

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// flinkUnits maps the unit labels of Flink's TimeUtils.parseDuration to
// their length.
var flinkUnits = map[string]time.Duration{
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"min": time.Minute, "m": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"µs": time.Microsecond, "us": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond,
	"microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond,
	"nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
}

// ParseFlinkDuration parses a duration as Flink's configuration does: an
// integer, optional blanks and an optional unit ("10 min", "30 s", "15s",
// "500 ms", "1 h", "2d"); a bare number means milliseconds. Go durations
// ("1m30s", "1.5h") are accepted too. Negative durations are rejected.
func ParseFlinkDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty duration")
	}
	digits := len(t) - len(strings.TrimLeft(t, "0123456789"))
	if digits > 0 {
		unit := strings.ToLower(strings.TrimSpace(t[digits:]))
		if mult, ok := flinkUnit(unit); ok {
			return scale(t[:digits], mult, s)
		}
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want a Flink duration such as \"10 min\", \"30 s\", \"500\" (ms), or a Go duration", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("invalid duration %q: negative", s)
	}
	return d, nil
}

func flinkUnit(unit string) (time.Duration, bool) {
	if unit == "" {
		return time.Millisecond, true
	}
	d, ok := flinkUnits[unit]
	return d, ok
}

func scale(num string, mult time.Duration, orig string) (time.Duration, error) {
	var n int64
	for _, r := range num {
		if n > (math.MaxInt64-9)/10 {
			return 0, fmt.Errorf("invalid duration %q: too large", orig)
		}
		n = n*10 + int64(r-'0')
	}
	if n > math.MaxInt64/int64(mult) {
		return 0, fmt.Errorf("invalid duration %q: too large", orig)
	}
	return time.Duration(n) * mult, nil
}
