/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// limits.go: Limits of one fetch, their defaults and flags, and the
// LimitExceeded errors that name them.

package source

import (
	"errors"
	"fmt"
)

// Defaults of Limits (fields left at zero). A repository of Kubernetes
// manifests needs a small fraction of each (kustomize reads at most 32 MiB
// of it, see internal/render). What they bound, per repository:
//
//   - disk: the cache directory keeps at most two fetches' worth of packs
//     (2 × MaxFetchBytes) and one checkout (MaxCheckoutBytes), 192 MiB; a
//     fetch stages up to 2 × MaxFetchBytes more while it runs and a
//     checkout replaces files one by one, so a fetch peaks at about 320
//     MiB of bytes, plus a block (4 KiB) per file and directory, 40 MiB
//     for MaxFiles: 360 MiB. config/manager sizes the cache volume for
//     four at once, plus the checkouts at rest that Cache keeps within its
//     budget (512 MiB + 4 × 360 MiB < 2 GiB).
//   - memory: go-git indexes a received pack by reading each object whole
//     (at most MaxFileBytes, twice over for a delta) and caches delta bases
//     (at most 96 MiB, and never more than the pack unpacks to, which
//     MaxCheckoutBytes bounds): under 100 MiB per fetch.
const (
	DefaultMaxFetchBytes    = 64 << 20
	DefaultMaxFileBytes     = 8 << 20
	DefaultMaxCheckoutBytes = 64 << 20
	DefaultMaxFiles         = 10000
	// DefaultMaxObjects bounds the objects of one received pack: go-git
	// keeps an index entry and more for each while it indexes the pack
	// (2 million tiny blobs in a 40 MiB pack took it to 793 MiB). A
	// shallow fetch of a checkout within MaxFiles has at most about
	// that many blobs and trees; the rest is history.
	DefaultMaxObjects = 50000
)

// Controller flags that set the limits and the URL policy. The error
// messages name them, so that whoever reads a condition knows what a
// cluster administrator can change.
const (
	FlagMaxFetchSize      = "git-max-fetch-size"
	FlagMaxFileSize       = "git-max-file-size"
	FlagMaxCheckoutSize   = "git-max-checkout-size"
	FlagMaxFiles          = "git-max-files"
	FlagMaxObjects        = "git-max-objects"
	FlagAllowFileURLs     = "allow-file-urls"
	FlagAllowInsecureHTTP = "allow-insecure-http"
)

// Limits bound what one Fetch may download, hold in memory and write, so
// that no repository (a hostile tenant's, or one that grew a huge file)
// can exhaust the memory or the cache volume of the controller that every
// other repository shares. A field left at zero takes its default; a
// negative one is no limit. Time is bounded by Options.Timeout.
type Limits struct {
	// MaxFetchBytes bounds the packfile one fetch receives (compressed, as
	// sent on the wire). Default DefaultMaxFetchBytes.
	MaxFetchBytes int64
	// MaxFileBytes bounds the size of every file checked out, and of every
	// object of a received pack once unpacked (files, directory listings,
	// commits), checked from the pack's headers before anything is
	// unpacked: memory stays proportional to it. Default
	// DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxCheckoutBytes bounds the total size of the files of a checkout
	// (each path counted, however many share one blob), and the unpacked
	// size of all objects of a received pack. Default
	// DefaultMaxCheckoutBytes.
	MaxCheckoutBytes int64
	// MaxFiles bounds the entries (files, symbolic links, directories) of
	// a checkout. Default DefaultMaxFiles.
	MaxFiles int
	// MaxObjects bounds the objects of a received pack, read from its
	// header before anything is unpacked. Default DefaultMaxObjects.
	MaxObjects int
}

// effective returns the limits with defaults applied; 0 in the result
// means no limit.
func (l Limits) effective() Limits {
	pick := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return Limits{
		MaxFetchBytes:    pick(l.MaxFetchBytes, DefaultMaxFetchBytes),
		MaxFileBytes:     pick(l.MaxFileBytes, DefaultMaxFileBytes),
		MaxCheckoutBytes: pick(l.MaxCheckoutBytes, DefaultMaxCheckoutBytes),
		MaxFiles:         int(pick(int64(l.MaxFiles), DefaultMaxFiles)),
		MaxObjects:       int(pick(int64(l.MaxObjects), DefaultMaxObjects)),
	}
}

// LargestFile is the largest file a fetch within l writes (its pack, or
// one checked-out file); 0 when either is unbounded.
func (l Limits) LargestFile() int64 {
	e := l.effective()
	if e.MaxFetchBytes == 0 || e.MaxFileBytes == 0 {
		return 0
	}
	return max(e.MaxFetchBytes, e.MaxFileBytes)
}

// over reports whether n exceeds the limit max (0: no limit).
func over(n, max int64) bool { return max > 0 && n > max }

// ErrLimitExceeded is matched (errors.Is) by every *Error of reason
// ReasonLimitExceeded.
var ErrLimitExceeded = errors.New("limit exceeded")

const raiseLimit = "make the repository smaller, or ask the cluster administrator to raise the limit"

// limitErr is the terminal error of a limit hit: what went over, the
// limit's name, value and flag.
func limitErr(what, limit string, max int64, flag string) error {
	return &Error{Reason: ReasonLimitExceeded, sentinel: ErrLimitExceeded,
		Message: fmt.Sprintf("%s: %v: %s (--%s=%s); %s", what, ErrLimitExceeded, limit, flag, byteSize(max), raiseLimit)}
}

func fileCountErr(what string, max int64) error {
	return &Error{Reason: ReasonLimitExceeded, sentinel: ErrLimitExceeded,
		Message: fmt.Sprintf("%s: %v: file count limit (--%s=%d); %s", what, ErrLimitExceeded, FlagMaxFiles, max, raiseLimit)}
}

// byteSize formats n in the largest binary unit that divides it.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGi", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMi", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKi", n>>10)
	}
	return fmt.Sprintf("%d", n)
}

// humanSize formats an observed size for a message (256.0 MiB).
func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
