/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// webhook.go: Receiver, the http.Handler that verifies a push or
// pull-request webhook against its GitRepository and sets its
// reconcile-requested-at or plan-requested-at annotation.

package source

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// WebhookPathIndex is the field index on GitRepository status.webhookPath
// that a Receiver with Indexed set looks objects up by. Register it on the
// manager before it starts:
//
//	mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.GitRepository{},
//		source.WebhookPathIndex, source.IndexWebhookPath)
const WebhookPathIndex = ".status.webhookPath"

// WebhookTokenKey is the key of the webhook Secret holding the shared secret.
const WebhookTokenKey = "token"

// DefaultMaxBodyBytes bounds a webhook body when Receiver.MaxBodyBytes is 0.
// GitHub caps payloads at 25 MB but push events are far smaller.
const DefaultMaxBodyBytes = 1 << 20

// IndexWebhookPath is the indexer function of WebhookPathIndex.
func IndexWebhookPath(obj client.Object) []string {
	gr, ok := obj.(*v1alpha1.GitRepository)
	if !ok || gr.Status.WebhookPath == "" {
		return nil
	}
	return []string{gr.Status.WebhookPath}
}

// Receiver serves POST /hook/<id>: it verifies a forge's push webhook
// against the GitRepository whose status.webhookPath is the request path
// and, when the push concerns the watched ref, sets the
// bggitops.dev/reconcile-requested-at annotation with a merge patch. When
// spec.pullRequests is set, a pull-request event that changes what is
// planned for a pull request into the watched branch (see PlansFor) sets
// bggitops.dev/plan-requested-at instead, and leaves the sync alone.
// Anything else is answered 4xx without side effects. A delivery handled
// before (see replayMemo) is answered 200 without a second request.
//
// Wiring in the manager: register WebhookPathIndex, then serve
// &Receiver{Client: mgr.GetClient(), Indexed: true, Secrets: ..., Limits:
// ..., Log: ...} on --receiver-bind-address, mounted at WebhookPathPrefix
// (e.g. as a manager.RunnableFunc running an http.Server; see
// reconcile.setupReceiver). It needs RBAC to list,
// watch and patch gitrepositories and to get secrets. Responses: 200
// reconcile or plan requested (or the delivery was handled before), 202
// push to another ref or pull-request event that changes no plan, 400 not
// a push (nor, with spec.pullRequests, a pull-request event) or bad
// payload, 401 bad or missing
// signature, 404 unknown path, or a GitRepository whose webhook Secret (or
// its token key) is missing: the sender learns no more than for a path
// that does not exist, the log names the Secret; 405 not POST, 413 body
// too large, 429 too many requests on this path, 503 too many requests or
// bodies at once (both with Retry-After; see ReceiverLimits).
type Receiver struct {
	// Client reads GitRepositories and Secrets and patches GitRepositories.
	Client client.Client
	// Live, when set, reads a GitRepository again after a conflict (the
	// API server, not a cache that may lag behind the write that caused
	// it); Client otherwise.
	Live client.Reader
	// MaxBodyBytes bounds the body (413 beyond); 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Limits bound the requests and bodies handled at once and the
	// requests per path.
	Limits ReceiverLimits
	// Secrets reads a webhook Secret (fresh: from the API server, not a
	// memo); nil reads it with Client on every request.
	Secrets SecretReader
	Log     logr.Logger
	// Indexed looks GitRepositories up by WebhookPathIndex (a cached
	// manager client with the index registered) instead of listing all.
	Indexed bool
	// Now stamps the annotation; nil means time.Now.
	Now func() time.Time
	// ReplayMemoSize and ReplayMemoTTL bound the memo of handled
	// deliveries; 0 means DefaultReplayMemoSize and DefaultReplayMemoTTL.
	ReplayMemoSize int
	ReplayMemoTTL  time.Duration

	memoOnce sync.Once
	memo     *replayMemo
	gateOnce sync.Once
	gateway  *receiverGate
}

// SecretReader reads a Secret, from a memo unless fresh is set.
type SecretReader func(ctx context.Context, key client.ObjectKey, fresh bool) (*corev1.Secret, error)

// httpError is a response status with a message safe to send and log.
type httpError struct {
	code int
	msg  string
	// retryAfter, when set, is sent as Retry-After.
	retryAfter time.Duration
}

func (e *httpError) Error() string { return e.msg }

func fail(code int, format string, a ...any) error {
	return &httpError{code: code, msg: fmt.Sprintf(format, a...)}
}

// ServeHTTP implements http.Handler.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := rc.Log.WithValues("path", r.URL.Path)
	code, msg, err := rc.handle(r, log)
	if err != nil {
		var he *httpError
		if !errors.As(err, &he) {
			log.Error(err, "webhook failed")
			he = &httpError{code: http.StatusInternalServerError, msg: "internal error"}
		}
		code, msg = he.code, he.msg
		// Close the connection rather than let the server read the rest
		// of a body refused unread (up to 256 KiB, as slowly as the
		// sender likes) before it answers.
		w.Header().Set("Connection", "close")
		if he.retryAfter > 0 {
			w.Header().Set("Retry-After", retryAfterSeconds(he.retryAfter))
		}
	}
	log.V(1).Info("webhook", "status", code, "message", msg)
	http.Error(w, msg, code)
}

func (rc *Receiver) handle(r *http.Request, log logr.Logger) (int, string, error) {
	if r.Method != http.MethodPost {
		return 0, "", fail(http.StatusMethodNotAllowed, "use POST")
	}
	if !strings.HasPrefix(r.URL.Path, WebhookPathPrefix) {
		return 0, "", fail(http.StatusNotFound, "not found")
	}
	release, err := rc.gate().enter()
	if err != nil {
		return 0, "", err
	}
	defer release()
	gr, err := rc.lookup(r.Context(), r.URL.Path)
	if err != nil {
		return 0, "", err
	}
	if err := rc.gate().allow(rateBucket(gr, r.Header), rc.now()); err != nil {
		return 0, "", err
	}
	log = log.WithValues("gitrepository", client.ObjectKeyFromObject(gr).String())
	body, free, err := rc.authenticate(r, gr, log)
	if err != nil {
		return 0, "", err
	}
	defer free()
	if gr.Spec.PullRequests != nil && IsPullRequestEvent(r.Header) {
		return rc.deliverPullRequest(r, gr, body, log)
	}
	ev, err := ParsePushEvent(r.Header, body)
	if err != nil {
		return 0, "", fail(http.StatusBadRequest, "%v", err)
	}
	return rc.deliver(r, gr, body, ev, log.WithValues("ref", ev.Ref))
}

// rateBucket is the rate-limit bucket of a delivery to gr: pull-request
// events have one of their own beside the path's, so that a busy pull
// request (every edit, label and review is an event) never gets the
// pushes of the watched branch answered 429.
func rateBucket(gr *v1alpha1.GitRepository, h http.Header) string {
	if gr.Spec.PullRequests != nil && IsPullRequestEvent(h) {
		return gr.Status.WebhookPath + " pull-requests"
	}
	return gr.Status.WebhookPath
}

// deliver requests a reconcile for a verified push, unless the delivery
// was handled before or concerns another ref.
func (rc *Receiver) deliver(r *http.Request, gr *v1alpha1.GitRepository, body []byte, ev PushEvent, log logr.Logger) (int, string, error) {
	return rc.once(r, gr, body, log, func() (int, string, error) {
		if !Concerns(gr.GetRef(), ev.Ref) {
			return http.StatusAccepted, fmt.Sprintf("push to %s ignored: not the watched ref", ev.Ref), nil
		}
		if err := rc.requestReconcile(r.Context(), gr); err != nil {
			return 0, "", err
		}
		log.Info("push webhook: reconcile requested")
		return http.StatusOK, "reconcile requested", nil
	})
}

// deliverPullRequest requests a plan for a verified pull-request event,
// unless the delivery was handled before or changes no plan of gr's.
func (rc *Receiver) deliverPullRequest(r *http.Request, gr *v1alpha1.GitRepository, body []byte, log logr.Logger) (int, string, error) {
	ev, err := ParsePullRequestEvent(r.Header, body)
	if err != nil {
		return 0, "", fail(http.StatusBadRequest, "%v", err)
	}
	log = log.WithValues("pullRequest", ev.Number, "action", truncate(ev.Action, 64))
	return rc.once(r, gr, body, log, func() (int, string, error) {
		if !PlansFor(gr.GetRef(), ev) {
			return http.StatusAccepted, fmt.Sprintf("pull request #%d (%s into %s) ignored: no plan of the watched branch changes",
				ev.Number, truncate(ev.Action, 64), truncate(ev.Base, 64)), nil
		}
		if err := rc.requestPlan(r.Context(), gr); err != nil {
			return 0, "", err
		}
		log.Info("pull request webhook: plan requested")
		return http.StatusOK, "plan requested", nil
	})
}

// once runs handle for a delivery not handled before. A delivery whose
// handling fails is forgotten: the forge's retry is handled.
func (rc *Receiver) once(r *http.Request, gr *v1alpha1.GitRepository, body []byte, log logr.Logger, handle func() (int, string, error)) (int, string, error) {
	keys := deliveryKeys(gr.Status.WebhookPath, r.Header, body)
	if !rc.replays().begin(keys, rc.now()) {
		log.Info("webhook: delivery handled before, not requested again")
		return http.StatusOK, "delivery already handled", nil
	}
	code, msg, err := handle()
	if err != nil {
		rc.replays().forget(keys)
	}
	return code, msg, err
}

func (rc *Receiver) gate() *receiverGate {
	rc.gateOnce.Do(func() { rc.gateway = newReceiverGate(rc.Limits) })
	return rc.gateway
}

func (rc *Receiver) replays() *replayMemo {
	rc.memoOnce.Do(func() { rc.memo = newReplayMemo(rc.ReplayMemoSize, rc.ReplayMemoTTL) })
	return rc.memo
}

func (rc *Receiver) now() time.Time {
	if rc.Now != nil {
		return rc.Now()
	}
	return time.Now()
}

func (rc *Receiver) lookup(ctx context.Context, path string) (*v1alpha1.GitRepository, error) {
	var list v1alpha1.GitRepositoryList
	var opts []client.ListOption
	if rc.Indexed {
		opts = append(opts, client.MatchingFields{WebhookPathIndex: path})
	}
	if err := rc.Client.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("list gitrepositories: %w", err)
	}
	for i := range list.Items {
		gr := &list.Items[i]
		if gr.Status.WebhookPath == path && gr.Spec.Webhook != nil {
			return gr, nil
		}
	}
	return nil, fail(http.StatusNotFound, "not found")
}

// authenticate reads and verifies the body of a delivery for gr. The
// token is checked before the body is read: a request without a signature
// header, or with a wrong GitLab token, is refused without reading it. The
// body is read within the byte budget (free gives its share back) and
// through the HMAC, and the signature is checked before the caller
// parses it, so an unauthenticated sender learns nothing about the
// payload rules.
func (rc *Receiver) authenticate(r *http.Request, gr *v1alpha1.GitRepository, log logr.Logger) (body []byte, free func(), err error) {
	token, err := rc.webhookToken(r.Context(), gr, log)
	if err != nil {
		return nil, nil, err
	}
	if err := verifyToken(r.Header, token); err != nil {
		return nil, nil, fail(http.StatusUnauthorized, "%v", err)
	}
	body, sum, free, err := rc.readBody(r, token)
	if err != nil {
		return nil, nil, err
	}
	if err := verifyMAC(r.Header, sum); err != nil {
		free()
		return nil, nil, fail(http.StatusUnauthorized, "%v", err)
	}
	return body, free, nil
}

// readBody reads the body into one buffer and through the HMAC keyed by
// token at once, after reserving its size in the byte budget; it stops
// (413) as soon as the body passes the limit. free gives the reserved
// bytes back. A body larger than the whole budget could never be held:
// the budget bounds it too (413, not a 503 to retry).
func (rc *Receiver) readBody(r *http.Request, token []byte) (body, sum []byte, free func(), err error) {
	limit := rc.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	if whole := rc.gate().maxBuffered; whole >= 0 {
		limit = min(limit, whole)
	}
	if r.ContentLength > limit {
		return nil, nil, nil, fail(http.StatusRequestEntityTooLarge, "body larger than %d bytes", limit)
	}
	size := limit
	if r.ContentLength >= 0 {
		size = r.ContentLength
	}
	if free, err = rc.gate().reserve(size); err != nil {
		return nil, nil, nil, err
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	mac := hmac.New(sha256.New, token)
	n, err := io.Copy(io.MultiWriter(buf, mac), io.LimitReader(r.Body, limit+1))
	switch {
	case err != nil:
		free()
		return nil, nil, nil, fail(http.StatusBadRequest, "reading body: %v", err)
	case n > limit:
		free()
		return nil, nil, nil, fail(http.StatusRequestEntityTooLarge, "body larger than %d bytes", limit)
	}
	return buf.Bytes(), mac.Sum(nil), free, nil
}

// webhookToken is the token of gr's webhook Secret. A missing Secret or
// token is answered as an unknown path: whether it exists is not the
// sender's business, the log and the GitRepository's condition say which
// it is. A token read from the memo that does not give gr's webhook path
// was rotated since: it is read afresh.
func (rc *Receiver) webhookToken(ctx context.Context, gr *v1alpha1.GitRepository, log logr.Logger) ([]byte, error) {
	token, err := rc.readToken(ctx, gr, false, log)
	if err == nil && WebhookPath(token, gr.Namespace, gr.Name) != gr.Status.WebhookPath {
		token, err = rc.readToken(ctx, gr, true, log)
	}
	return token, err
}

func (rc *Receiver) readToken(ctx context.Context, gr *v1alpha1.GitRepository, fresh bool, log logr.Logger) ([]byte, error) {
	key := client.ObjectKey{Namespace: gr.Namespace, Name: gr.Spec.Webhook.SecretRef.Name}
	secret, err := rc.readSecret(ctx, key, fresh)
	if err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("push webhook refused: the webhook Secret does not exist", "secret", key.Name)
			return nil, fail(http.StatusNotFound, "not found")
		}
		return nil, fmt.Errorf("get webhook secret %s: %w", key, err)
	}
	token, err := SecretValue(secret, WebhookTokenKey)
	if err != nil {
		log.Info("push webhook refused: "+err.Error(), "secret", key.Name)
		return nil, fail(http.StatusNotFound, "not found")
	}
	return token, nil
}

func (rc *Receiver) readSecret(ctx context.Context, key client.ObjectKey, fresh bool) (*corev1.Secret, error) {
	if rc.Secrets != nil {
		return rc.Secrets(ctx, key, fresh)
	}
	var secret corev1.Secret
	if err := rc.Client.Get(ctx, key, &secret); err != nil {
		return nil, err
	}
	return &secret, nil
}

func (rc *Receiver) reader() client.Reader {
	if rc.Live != nil {
		return rc.Live
	}
	return rc.Client
}

// requestReconcile asks for a reconcile now, unless a request is already
// pending: overwriting one not yet handled (a `bg-gitops reconcile
// --wait` waiting for it) would erase it, and the pending one fetches the
// pushed commit as well. The patch is fenced by the resourceVersion read:
// a request made since (a conflict) is seen on a fresh read and kept.
func (rc *Receiver) requestReconcile(ctx context.Context, gr *v1alpha1.GitRepository) error {
	return rc.annotate(ctx, gr, v1alpha1.ReconcileRequestedAtAnnotation, func(gr *v1alpha1.GitRepository) bool {
		v := gr.GetAnnotations()[v1alpha1.ReconcileRequestedAtAnnotation]
		return v != "" && v != gr.Status.LastHandledReconcileAt
	})
}

// requestPlan asks for the pull requests to be planned now, unless a
// request is already pending: overwriting one not yet handled would
// erase what a `bg-gitops plan` waits for, and make every PR event a
// write; the pending one lists the heads, the new one's included.
func (rc *Receiver) requestPlan(ctx context.Context, gr *v1alpha1.GitRepository) error {
	return rc.annotate(ctx, gr, v1alpha1.PlanRequestedAtAnnotation, func(gr *v1alpha1.GitRepository) bool {
		v := gr.GetAnnotations()[v1alpha1.PlanRequestedAtAnnotation]
		return v != "" && v != gr.Status.LastHandledPlanAt
	})
}

// annotate sets annotation key to the current time, unless pending says a
// request is still to be handled, with a merge patch fenced by the
// resourceVersion read; on a conflict it reads gr afresh and decides again.
func (rc *Receiver) annotate(ctx context.Context, gr *v1alpha1.GitRepository, key string, pending func(*v1alpha1.GitRepository) bool) error {
	name := client.ObjectKeyFromObject(gr)
	first := true
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			if err := rc.reader().Get(ctx, name, gr); err != nil {
				return err
			}
		}
		first = false
		if pending(gr) {
			return nil
		}
		patch := client.MergeFromWithOptions(gr.DeepCopy(), client.MergeFromWithOptimisticLock{})
		ann := gr.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[key] = rc.now().UTC().Format(time.RFC3339Nano)
		gr.SetAnnotations(ann)
		return rc.Client.Patch(ctx, gr, patch)
	})
	if err != nil {
		return fmt.Errorf("annotate gitrepository %s: %w", name, err)
	}
	return nil
}
