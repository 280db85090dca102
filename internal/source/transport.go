/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// transport.go: boundedTransport, through which every http(s) request of
// go-git goes — response bodies cut at the fetch's limits, redirects
// refused, the ref listing kept for reuse (Listing).

package source

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// maxAdvertisementBytes bounds the ref advertisement of a server (the
// answer to ls-remote and the start of every fetch), which go-git keeps in
// memory whole: 16 MiB is some 200,000 refs.
const maxAdvertisementBytes = 16 << 20

// go-git reads some http responses whole into memory before any limit of
// ours could see them: the ref advertisement, and the body of an error
// response. So every http(s) request of go-git in this process goes
// through boundedTransport, which cuts each response body at the limit of
// the fetch that made it (found in the request's context). Requests made
// outside a Fetch or List (no limits in the context) go out unchanged.
//
// No redirect is followed: a server that answers with one could point
// the controller at another host or path (an address inside the cluster)
// with the tenant's credentials; the fetch fails with ReasonRedirected
// before the redirected request is made.
func init() {
	c := githttp.NewClientWithOptions(&http.Client{Transport: boundedTransport{}, CheckRedirect: refuseRedirect},
		&githttp.ClientOptions{RedirectPolicy: githttp.FollowRedirects}) // refuseRedirect decides
	client.InstallProtocol("http", c)
	client.InstallProtocol("https", c)
}

// redirectError: the server answered with a redirect to To.
type redirectError struct{ To string }

func (e *redirectError) Error() string { return "redirected to " + e.To }

func refuseRedirect(req *http.Request, _ []*http.Request) error {
	return &redirectError{To: scrubURLs(req.URL.String())}
}

// httpFetch is what boundedTransport needs to know about one Fetch.
type httpFetch struct {
	// transport trusts the fetch's CA bundle, or is http.DefaultTransport.
	transport http.RoundTripper
	own       *http.Transport // transport when made for this fetch
	maxPack   int64           // Limits.MaxFetchBytes; 0: no limit
	remote    string          // scrubbed URL, for messages
	// hit is the limit a response ran into: go-git may wrap the error in
	// a way errors.As cannot see through, so Fetch reports this one.
	hit atomic.Pointer[Error]
	// adv is the ref advertisement answered last (see Listing).
	adv atomic.Pointer[Listing]
}

// Listing is a ref advertisement as an HTTP(S) server sent it. A fetch
// lists the refs (to resolve its ref) and go-git lists them again before
// it downloads: the second listing is answered from the first; a fetch
// the controller's poll listed for answers its listing from the poll's
// (Target.Listing). One listing per change.
type Listing struct {
	URL    string
	Header http.Header
	Body   []byte
}

// maxCarriedListing bounds the listing a Target carries to a worker
// (whose request is bounded): a larger one is listed again there.
const maxCarriedListing = 1 << 20

type httpFetchKey struct{}

// withHTTPLimits puts the http settings of o into ctx (unless an outer
// Fetch already did). CA bundles are handled here and never handed to
// go-git, which could only apply them to an *http.Transport of its own.
// done releases what it set up.
func withHTTPLimits(ctx context.Context, o Options) (_ context.Context, _ *httpFetch, done func(), _ error) {
	if f, ok := ctx.Value(httpFetchKey{}).(*httpFetch); ok {
		return ctx, f, func() {}, nil
	}
	f := &httpFetch{transport: http.DefaultTransport, maxPack: o.Limits.effective().MaxFetchBytes, remote: scrubURLs(o.URL)}
	if o.Target != nil && o.Target.Listing != nil {
		f.adv.Store(o.Target.Listing)
	}
	if ca := o.Auth.caBundle(); len(ca) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(ca) {
			return ctx, nil, nil, &Error{Reason: ReasonTLS, Message: fmt.Sprintf("caFile in %s holds no PEM certificate", o.Auth.secretDesc())}
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		f.transport, f.own = t, t
	}
	return context.WithValue(ctx, httpFetchKey{}, f), f, func() {
		if f.own != nil {
			f.own.CloseIdleConnections()
		}
	}, nil
}

// cause is err, or the response limit the fetch ran into.
func (f *httpFetch) cause(err error) error {
	if err == nil || f == nil {
		return err
	}
	if h := f.hit.Load(); h != nil {
		return h
	}
	return err
}

// bodyLimit is how much of a response to req may be read, and the error
// past it. A GET is the ref advertisement (or an error page); a POST
// carries the pack, plus the protocol around it (sideband framing,
// shallow lines, acknowledgements): stagedPack names the pack's limit
// precisely, this is the backstop for everything else.
func (f *httpFetch) bodyLimit(req *http.Request) (int64, *Error) {
	if req.Method == http.MethodGet {
		return maxAdvertisementBytes, &Error{Reason: ReasonLimitExceeded, sentinel: ErrLimitExceeded, Message: fmt.Sprintf(
			"listing refs of %s: the server sent more than %s of refs: %v (a fixed limit, some 200,000 refs)",
			f.remote, humanSize(maxAdvertisementBytes), ErrLimitExceeded)}
	}
	if f.maxPack <= 0 {
		return 0, nil
	}
	max := f.maxPack + f.maxPack/64 + 1<<20
	e, _ := limitErr(fmt.Sprintf("fetching %s: the server sent more than %s", f.remote, humanSize(max)),
		"fetch size limit", f.maxPack, FlagMaxFetchSize).(*Error)
	return max, e
}

type boundedTransport struct{}

func (boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	f, _ := req.Context().Value(httpFetchKey{}).(*httpFetch)
	if f == nil {
		return http.DefaultTransport.RoundTrip(req)
	}
	if a := f.adv.Load(); isListing(req) && a != nil && a.URL == req.URL.String() {
		return a.response(req), nil
	}
	resp, err := f.transport.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if max, e := f.bodyLimit(req); max > 0 {
		resp.Body = &boundedBody{ReadCloser: resp.Body, left: max, f: f, err: e}
	}
	if isListing(req) && resp.StatusCode == http.StatusOK {
		return f.keep(req, resp)
	}
	return resp, nil
}

// isListing: req asks for the ref advertisement of a fetch.
func isListing(req *http.Request) bool {
	return req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/info/refs") &&
		req.URL.Query().Get("service") == "git-upload-pack"
}

// keep reads the advertisement resp carries (go-git reads it whole too),
// keeps it for the fetch's next listing, and answers it.
func (f *httpFetch) keep(req *http.Request, resp *http.Response) (*http.Response, error) {
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	a := &Listing{URL: req.URL.String(), Header: resp.Header.Clone(), Body: body}
	f.adv.Store(a)
	return a.response(req), nil
}

func (a *Listing) response(req *http.Request) *http.Response {
	return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: a.Header.Clone(), Body: io.NopCloser(bytes.NewReader(a.Body)), ContentLength: int64(len(a.Body)), Request: req}
}

// carried is the listing f read, for a Target; nil when there is none or
// it is too large to carry.
func (f *httpFetch) carried() *Listing {
	if a := f.adv.Load(); a != nil && len(a.Body) <= maxCarriedListing {
		return a
	}
	return nil
}

// boundedBody fails a read past its limit, and remembers why.
type boundedBody struct {
	io.ReadCloser
	left int64
	f    *httpFetch
	err  *Error
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 {
			return 0, err
		}
		b.f.hit.CompareAndSwap(nil, b.err)
		return 0, b.err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
