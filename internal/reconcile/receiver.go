/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// receiver.go: the webhook receiver's http.Server and its limits.

package reconcile

import (
	"net/http"
	"time"
)

// receiverLimits bound what one webhook sender can hold on the receiver:
// a connection that sends its headers or body slowly (the body is at most
// source.DefaultMaxBodyBytes), one that never reads the answer, and an
// idle keep-alive connection. The write timeout covers the handler too
// (a lookup, a Secret read and a patch), well under a forge's own
// delivery timeout (GitHub: 10 s; Gitea: 5 s by default) plus margin for a
// slow API server.
var receiverLimits = struct {
	readHeader, read, write, idle time.Duration
	maxHeaderBytes                int
}{
	readHeader:     10 * time.Second,
	read:           30 * time.Second,
	write:          30 * time.Second,
	idle:           60 * time.Second,
	maxHeaderBytes: 64 << 10,
}

// receiverServer is the webhook receiver's http.Server; it counts the
// answers (bggitops_webhook_requests_total).
func receiverServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           countWebhooks(h),
		ReadHeaderTimeout: receiverLimits.readHeader,
		ReadTimeout:       receiverLimits.read,
		WriteTimeout:      receiverLimits.write,
		IdleTimeout:       receiverLimits.idle,
		MaxHeaderBytes:    receiverLimits.maxHeaderBytes,
	}
}
