/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"context"
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
// bggitops.dev/reconcile-requested-at annotation with a merge patch.
// Anything else is answered 4xx without side effects. A delivery handled
// before (see replayMemo) is answered 200 without a second request.
//
// Wiring in the manager: register WebhookPathIndex, then serve
// &Receiver{Client: mgr.GetClient(), Indexed: true, Log: ...} on
// --receiver-bind-address, mounted at WebhookPathPrefix (e.g. as a
// manager.RunnableFunc running an http.Server). It needs RBAC to list,
// watch and patch gitrepositories and to get secrets. Responses: 200
// reconcile requested (or the delivery was handled before), 202 push to
// another ref, 400 not a push or bad payload, 401 bad or missing
// signature, 404 unknown path, or a GitRepository whose webhook Secret (or
// its token key) is missing: the sender learns no more than for a path
// that does not exist, the log names the Secret; 405 not POST, 413 body
// too large.
type Receiver struct {
	// Client reads GitRepositories and Secrets and patches GitRepositories.
	Client client.Client
	// Live, when set, reads a GitRepository again after a conflict (the
	// API server, not a cache that may lag behind the write that caused
	// it); Client otherwise.
	Live client.Reader
	// MaxBodyBytes bounds the body (413 beyond); 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	Log          logr.Logger
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
}

// httpError is a response status with a message safe to send and log.
type httpError struct {
	code int
	msg  string
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
	gr, err := rc.lookup(r.Context(), r.URL.Path)
	if err != nil {
		return 0, "", err
	}
	body, err := rc.readBody(r)
	if err != nil {
		return 0, "", err
	}
	log = log.WithValues("gitrepository", client.ObjectKeyFromObject(gr).String())
	ev, err := rc.verify(r.Context(), gr, r.Header, body, log)
	if err != nil {
		return 0, "", err
	}
	log = log.WithValues("ref", ev.Ref)
	keys := deliveryKeys(gr.Status.WebhookPath, r.Header, body)
	if !rc.replays().begin(keys, rc.now()) {
		log.Info("push webhook: delivery handled before, not requested again")
		return http.StatusOK, "delivery already handled", nil
	}
	if !Concerns(gr.GetRef(), ev.Ref) {
		return http.StatusAccepted, fmt.Sprintf("push to %s ignored: not the watched ref", ev.Ref), nil
	}
	if err := rc.requestReconcile(r.Context(), gr); err != nil {
		rc.replays().forget(keys)
		return 0, "", err
	}
	log.Info("push webhook: reconcile requested")
	return http.StatusOK, "reconcile requested", nil
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

func (rc *Receiver) readBody(r *http.Request) ([]byte, error) {
	limit := rc.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	if r.ContentLength > limit {
		return nil, fail(http.StatusRequestEntityTooLarge, "body larger than %d bytes", limit)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, fail(http.StatusBadRequest, "reading body: %v", err)
	}
	if int64(len(body)) > limit {
		return nil, fail(http.StatusRequestEntityTooLarge, "body larger than %d bytes", limit)
	}
	return body, nil
}

// verify checks the signature before parsing, so an unauthenticated
// sender learns nothing about the payload rules. A missing Secret or token
// is answered as an unknown path: whether it exists is not the sender's
// business, the log and the GitRepository's condition say which it is.
func (rc *Receiver) verify(ctx context.Context, gr *v1alpha1.GitRepository, h http.Header, body []byte, log logr.Logger) (PushEvent, error) {
	var secret corev1.Secret
	key := client.ObjectKey{Namespace: gr.Namespace, Name: gr.Spec.Webhook.SecretRef.Name}
	if err := rc.Client.Get(ctx, key, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("push webhook refused: the webhook Secret does not exist", "secret", key.Name)
			return PushEvent{}, fail(http.StatusNotFound, "not found")
		}
		return PushEvent{}, fmt.Errorf("get webhook secret %s: %w", key, err)
	}
	token, err := SecretValue(&secret, WebhookTokenKey)
	if err != nil {
		log.Info("push webhook refused: "+err.Error(), "secret", key.Name)
		return PushEvent{}, fail(http.StatusNotFound, "not found")
	}
	if err := VerifySignature(h, body, token); err != nil {
		return PushEvent{}, fail(http.StatusUnauthorized, "%v", err)
	}
	ev, err := ParsePushEvent(h, body)
	if err != nil {
		return PushEvent{}, fail(http.StatusBadRequest, "%v", err)
	}
	return ev, nil
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
	key := client.ObjectKeyFromObject(gr)
	first := true
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			if err := rc.reader().Get(ctx, key, gr); err != nil {
				return err
			}
		}
		first = false
		ann := gr.GetAnnotations()
		if v := ann[v1alpha1.ReconcileRequestedAtAnnotation]; v != "" && v != gr.Status.LastHandledReconcileAt {
			return nil
		}
		patch := client.MergeFromWithOptions(gr.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if ann == nil {
			ann = map[string]string{}
		}
		ann[v1alpha1.ReconcileRequestedAtAnnotation] = rc.now().UTC().Format(time.RFC3339Nano)
		gr.SetAnnotations(ann)
		return rc.Client.Patch(ctx, gr, patch)
	})
	if err != nil {
		return fmt.Errorf("annotate gitrepository %s: %w", key, err)
	}
	return nil
}
