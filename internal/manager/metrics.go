/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The controller's metrics endpoint: over HTTPS, only to callers the API server
// authenticates and authorizes, with a bounded cache of its decisions.

package manager

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// metricsOptions serve metrics on addr: with secure, over HTTPS (a
// self-signed certificate unless certDir holds tls.crt and tls.key) and
// only to callers the API server authenticates (a bearer token, checked
// with a TokenReview) and authorizes to get the path (a
// SubjectAccessReview; config/rbac's bg-gitops-metrics-reader ClusterRole
// grants GET /metrics). Without secure, plain HTTP for anyone who reaches
// it: a local setup, or a cluster whose network policy guards the port.
func metricsOptions(addr string, secure bool, certDir string) metricsserver.Options {
	o := metricsserver.Options{BindAddress: addr}
	if secure {
		o.SecureServing = true
		o.CertDir = certDir
		o.FilterProvider = withAuthenticationAndAuthorization
	}
	return o
}

// Flags of the metrics endpoint's protection, named in its errors.
const (
	FlagMetricsSecure  = "metrics-secure"
	FlagMetricsCertDir = "metrics-cert-dir"
)

// Decision cache and review bounds: a Prometheus scraping every few seconds
// costs one TokenReview and one SubjectAccessReview a minute; a flood of
// bad tokens costs at most metricsReviewRate reviews a second (beyond it:
// 429 without asking the API server), and never evicts a cached decision
// that has not expired.
const (
	metricsAllowTTL    = time.Minute
	metricsDenyTTL     = 10 * time.Second
	metricsCacheSize   = 1024
	metricsReviewRate  = 5
	metricsReviewBurst = 20
)

// withAuthenticationAndAuthorization is a metricsserver.FilterProvider
// that does what controller-runtime's filters.WithAuthenticationAndAuthorization
// does (delegated authentication and authorization to the API server,
// decisions cached), with the API clients of client-go alone: that one
// pulls in k8s.io/apiserver and its OpenTelemetry and gRPC dependencies.
func withAuthenticationAndAuthorization(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authnclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authzclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	g := &metricsGuard{authn: authn.TokenReviews(), authz: authz.SubjectAccessReviews(), now: time.Now,
		reviews: rate.NewLimiter(metricsReviewRate, metricsReviewBurst)}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			code, msg := g.decide(r, log)
			if code != http.StatusOK {
				http.Error(w, msg, code)
				return
			}
			next.ServeHTTP(w, r)
		}), nil
	}, nil
}

type metricsGuard struct {
	authn authnclient.TokenReviewInterface
	authz authzclient.SubjectAccessReviewInterface
	now   func() time.Time
	// reviews bounds the reviews asked of the API server.
	reviews *rate.Limiter

	mu    sync.Mutex
	cache map[[sha256.Size]byte]metricsDecision
}

type metricsDecision struct {
	code    int
	msg     string
	expires time.Time
}

// decide answers 200 (serve), 401 (no or bad token), 403 (not allowed) or
// 500 (the API server could not be asked; not cached).
func (g *metricsGuard) decide(r *http.Request, log logr.Logger) (int, string) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	if !ok || token == "" {
		return http.StatusUnauthorized, "Unauthorized"
	}
	verb := strings.ToLower(r.Method)
	key := sha256.Sum256([]byte(verb + "\x00" + r.URL.Path + "\x00" + token))
	now := g.now()
	g.mu.Lock()
	d, hit := g.cache[key]
	g.mu.Unlock()
	if hit && now.Before(d.expires) {
		return d.code, d.msg
	}
	if g.reviews != nil && !g.reviews.Allow() {
		return http.StatusTooManyRequests, "Too many requests"
	}
	d, cacheable := g.review(r, token, verb, log)
	if cacheable {
		ttl := metricsDenyTTL
		if d.code == http.StatusOK {
			ttl = metricsAllowTTL
		}
		d.expires = now.Add(ttl)
		g.store(key, d, now)
	}
	return d.code, d.msg
}

// store caches d unless the cache is full of decisions that have not
// expired: a flood of new tokens does not push out Prometheus's.
func (g *metricsGuard) store(key [sha256.Size]byte, d metricsDecision, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cache == nil {
		g.cache = map[[sha256.Size]byte]metricsDecision{}
	}
	if len(g.cache) >= metricsCacheSize {
		for k, old := range g.cache {
			if !now.Before(old.expires) {
				delete(g.cache, k)
			}
		}
	}
	if len(g.cache) < metricsCacheSize {
		g.cache[key] = d
	}
}

func (g *metricsGuard) review(r *http.Request, token, verb string, log logr.Logger) (metricsDecision, bool) {
	ctx := r.Context()
	tr, err := g.authn.Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}},
		metav1.CreateOptions{})
	if err != nil {
		log.Error(err, "metrics: token review failed")
		return metricsDecision{code: http.StatusInternalServerError, msg: "Authentication failed"}, false
	}
	if !tr.Status.Authenticated {
		log.V(4).Info("metrics: unauthenticated request")
		return metricsDecision{code: http.StatusUnauthorized, msg: "Unauthorized"}, true
	}
	u := tr.Status.User
	extra := map[string]authzv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	sar, err := g.authz.Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authzv1.NonResourceAttributes{Path: r.URL.Path, Verb: verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		msg := fmt.Sprintf("Authorization for user %s failed", u.Username)
		log.Error(err, "metrics: "+msg)
		return metricsDecision{code: http.StatusInternalServerError, msg: msg}, false
	}
	if !sar.Status.Allowed {
		log.V(4).Info("metrics: denied", "user", u.Username, "reason", sar.Status.Reason)
		return metricsDecision{code: http.StatusForbidden, msg: fmt.Sprintf("Authorization denied for user %s", u.Username)}, true
	}
	return metricsDecision{code: http.StatusOK}, true
}
