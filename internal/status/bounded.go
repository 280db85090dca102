/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// bounded.go: boundedTransport, which bounds every forge answer to
// maxForgeBody bytes, whichever client (an SDK or net/http) reads it.

package status

import (
	"fmt"
	"io"
	"net/http"
)

// maxForgeBody bounds a forge's answer: the address may be any service
// the tenant names, and a page of pull requests or comments is far
// smaller.
const maxForgeBody = 4 << 20

var errAnswerTooLarge = fmt.Errorf("forge answer larger than %d bytes", maxForgeBody)

// boundedTransport fails a response body's read past maxForgeBody bytes.
type boundedTransport struct{ next http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxForgeBody}
	return resp, nil
}

type boundedBody struct {
	io.ReadCloser
	left int64
}

// Read reads at most one byte past the bound, to tell a body of exactly
// maxForgeBody bytes from a longer one.
func (b *boundedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errAnswerTooLarge
	}
	return n, err
}
