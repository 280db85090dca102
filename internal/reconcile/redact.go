/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Secret values never reach a condition, an event, a log line or a commit
// status. Errors quote what they were given: the API server quotes an
// invalid field value (a Secret's value copied into a label by a kustomize
// replacement), a forge or proxy may echo the request's Authorization
// header. So every message the reconcilers publish passes one scrubber
// (gitOutcome and deploymentOutcome, the commit status reporter, the
// rejection of a blue/green decision) that replaces the values of
//
//   - the Secrets of the GitRepository's last rendered set (and, when a
//     build fails, the values its secretGenerators read), and
//   - the Secrets the controller read: git credentials, webhook and forge
//     tokens,
//
// in every spelling an error may use (raw, base64 as in a Secret's data,
// quoted and JSON-escaped, and line by line for multi-line values such as
// keys), with redacted, where they stand on their own (scrubber.string).
// Values shorter than minSecretLen are left alone: replacing "1" or "yes"
// everywhere would garble every message while hiding nothing; so are
// values that are public names anyway (noteRendered).
const (
	redacted     = "***"
	minSecretLen = 4
)

// secrets is the process's record of the values to scrub. It is shared by
// every manager in the process (tests run several): more values scrubbed
// only ever hides more.
var secrets = &secretRegistry{rendered: map[types.NamespacedName][]string{}, renderedIn: map[string]map[types.NamespacedName][]string{},
	generated: map[types.NamespacedName][]string{}, read: map[string]map[string][]string{}}

// secretRegistry remembers secret values by where they live, so that a
// message about an object is scrubbed of the values its readers could
// otherwise learn from it: a GitRepository's messages of the values of its
// render (in whatever namespace) and of the Secrets read in its namespace,
// a FlinkBlueGreenDeployment's of every known value in its namespace.
type secretRegistry struct {
	mu sync.RWMutex
	// rendered: GitRepository → the forms of the values of the Secrets of
	// its last render; replaced at every render. renderedIn: the same by
	// the namespace of each Secret.
	rendered   map[types.NamespacedName][]string
	renderedIn map[string]map[types.NamespacedName][]string
	// generated: GitRepository → the values its secretGenerators read,
	// known after a failed build (see noteBuild); cleared by a good one.
	generated map[types.NamespacedName][]string
	// read: namespace → Secret → the forms of its values; replaced at
	// every read.
	read map[string]map[string][]string
}

// noteSecret records the values of a Secret the controller read.
func (s *secretRegistry) noteSecret(sec *corev1.Secret) {
	forms := secretForms(sec.Data, sec.StringData)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read[sec.Namespace] == nil {
		s.read[sec.Namespace] = map[string][]string{}
	}
	s.read[sec.Namespace][sec.Name] = forms
}

// noteRendered records the values of the Secrets among the objects a
// GitRepository rendered (namespace set: they are stamped and defaulted).
//
// A value that is also the name or namespace of a rendered object, or of
// the GitRepository, is not scrubbed: whoever reads the message reads that
// name anyway, and scrubbing it would garble every message about the
// object (a Kafka user named after the job it belongs to, "state-machine",
// would turn "state-machine-blue active" into "***-blue active").
func (s *secretRegistry) noteRendered(source types.NamespacedName, objs []*unstructured.Unstructured) {
	public := map[string]bool{source.Name: true, source.Namespace: true}
	for _, u := range objs {
		public[u.GetName()], public[u.GetNamespace()] = true, true
	}
	byNamespace := map[string][]string{}
	for _, u := range objs {
		if u.GetKind() != "Secret" || u.GroupVersionKind().Group != "" {
			continue
		}
		data := map[string][]byte{}
		if m, ok := u.Object["data"].(map[string]any); ok {
			for k, v := range m {
				str, ok := v.(string)
				if !ok {
					continue
				}
				// Forms of the decoded value include its base64 spelling.
				if raw, err := base64.StdEncoding.DecodeString(str); err == nil {
					data[k] = raw
				} else {
					data[k] = []byte(str)
				}
			}
		}
		stringData := map[string]string{}
		if m, ok := u.Object["stringData"].(map[string]any); ok {
			for k, v := range m {
				if str, ok := v.(string); ok {
					stringData[k] = str
				}
			}
		}
		for k, v := range data {
			if public[strings.TrimSpace(string(v))] {
				delete(data, k)
			}
		}
		for k, v := range stringData {
			if public[strings.TrimSpace(v)] {
				delete(stringData, k)
			}
		}
		byNamespace[u.GetNamespace()] = append(byNamespace[u.GetNamespace()], secretForms(data, stringData)...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rendered, source)
	for ns, bySource := range s.renderedIn {
		delete(bySource, source)
		if len(bySource) == 0 {
			delete(s.renderedIn, ns)
		}
	}
	for ns, forms := range byNamespace {
		if len(forms) == 0 {
			continue
		}
		s.rendered[source] = append(s.rendered[source], forms...)
		if s.renderedIn[ns] == nil {
			s.renderedIn[ns] = map[types.NamespacedName][]string{}
		}
		s.renderedIn[ns][source] = forms
	}
}

// forSource is the scrubber of a GitRepository's messages: the values of
// its own render, wherever they landed, and all known in its namespace.
func (s *secretRegistry) forSource(source types.NamespacedName) scrubber {
	s.mu.RLock()
	defer s.mu.RUnlock()
	forms := append(s.inNamespace(source.Namespace), s.generated[source]...)
	return newScrubber(append(forms, s.rendered[source]...))
}

// forNamespace is the scrubber of the messages of an object in ns: the
// values of every Secret known in ns, rendered or read.
func (s *secretRegistry) forNamespace(ns string) scrubber {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return newScrubber(s.inNamespace(ns))
}

func (s *secretRegistry) inNamespace(ns string) []string {
	var forms []string
	for _, f := range s.renderedIn[ns] {
		forms = append(forms, f...)
	}
	for _, f := range s.read[ns] {
		forms = append(forms, f...)
	}
	return forms
}

// secretForms are the spellings of every value of a Secret.
func secretForms(data map[string][]byte, stringData map[string]string) []string {
	var forms []string
	add := func(v string) { forms = append(forms, valueForms(v)...) }
	for _, v := range data {
		add(string(v))
	}
	for _, v := range stringData {
		add(v)
	}
	return forms
}

// valueForms are the spellings of one value an error message may hold.
func valueForms(v string) []string {
	if len(strings.TrimSpace(v)) < minSecretLen {
		return nil
	}
	var out []string
	add := func(f string) {
		if len(f) >= minSecretLen {
			out = append(out, f)
		}
	}
	for _, x := range []string{v, strings.TrimSpace(v)} {
		add(x)
		add(base64.StdEncoding.EncodeToString([]byte(x)))
		if q := strconv.Quote(x); len(q) >= 2 {
			add(q[1 : len(q)-1])
		}
		if j, err := json.Marshal(x); err == nil && len(j) >= 2 {
			add(string(j[1 : len(j)-1]))
		}
	}
	if strings.ContainsAny(v, "\r\n") {
		for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
			add(strings.TrimSpace(line))
		}
	}
	return out
}

// scrubber replaces known secret values in messages.
type scrubber struct {
	forms []string // longest first
}

// newScrubber replaces the longest forms first, so that a value holding
// another is replaced whole.
func newScrubber(forms []string) scrubber {
	if len(forms) == 0 {
		return scrubber{}
	}
	forms = slices.Clone(forms)
	slices.SortFunc(forms, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) })
	return scrubber{forms: slices.Compact(forms)}
}

// and is a scrubber of the values of both.
func (s scrubber) and(other scrubber) scrubber {
	return newScrubber(append(slices.Clone(s.forms), other.forms...))
}

// string replaces every occurrence of a form that is not part of a longer
// word: a value that begins (ends) with a letter or digit is replaced
// where it is not preceded (followed) by one, so that the password "test"
// leaves "latest" alone while "test", "user:test@" and `"test"` lose it.
// Where an error glues a value to letters or digits it is no longer that
// value's spelling: kustomize, the API server and forges quote or
// delimit what they echo.
func (s scrubber) string(msg string) string {
	for _, f := range s.forms {
		msg = replaceDelimited(msg, f)
	}
	return msg
}

func replaceDelimited(msg, form string) string {
	var b strings.Builder
	copied := 0 // msg[copied:] is not in b yet
	for from := 0; ; {
		i := strings.Index(msg[from:], form)
		if i < 0 {
			break
		}
		start, end := from+i, from+i+len(form)
		if !delimited(msg, start, end, form) {
			from = start + 1
			continue
		}
		b.WriteString(msg[copied:start])
		b.WriteString(redacted)
		copied, from = end, end
	}
	if copied == 0 {
		return msg
	}
	b.WriteString(msg[copied:])
	return b.String()
}

func delimited(msg string, before, after int, form string) bool {
	if before > 0 && alnum(form[0]) && alnum(msg[before-1]) {
		return false
	}
	if after < len(msg) && alnum(form[len(form)-1]) && alnum(msg[after]) {
		return false
	}
	return true
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// error is err with a scrubbed message; errors.Is and errors.As still see
// err (classification is by type, never by text).
func (s scrubber) error(err error) error {
	if err == nil || len(s.forms) == 0 {
		return err
	}
	msg := err.Error()
	if clean := s.string(msg); clean != msg {
		return &scrubbedError{msg: clean, err: err}
	}
	return err
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// secretClient reads Secrets from the API server and records their
// values, so that the credentials in use are scrubbed whatever reads them.
// Read through the manager's cached client, one Secret would make it
// list and watch every Secret in the cluster and keep them in memory; the
// controller needs a few, now and then (see ClientOptions, which makes
// the manager's client read Secrets directly too).
type secretClient struct {
	client.Client
	// Live reads Secrets; Client when nil.
	Live client.Reader
}

func (c secretClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	sec, ok := obj.(*corev1.Secret)
	if !ok {
		return c.Client.Get(ctx, key, obj, opts...)
	}
	var reader client.Reader = c.Client
	if c.Live != nil {
		reader = c.Live
	}
	if err := reader.Get(ctx, key, sec, opts...); err != nil {
		return err
	}
	if sec.Type == corev1.SecretTypeServiceAccountToken {
		// A tenant may create such a Secret for any account of its
		// namespace; used as a forge token or git credential, it would
		// send that account's token wherever the spec points.
		*sec = corev1.Secret{}
		return fmt.Errorf("Secret %s is a ServiceAccount token (type %s): it is never used as a credential", key.Name, corev1.SecretTypeServiceAccountToken)
	}
	secrets.noteSecret(sec)
	return nil
}

// ClientOptions are the client options of a manager that runs the
// reconcilers: Secrets are never cached (no list or watch of Secrets; the
// controller's role grants only get).
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}

// secretReading is mgr's client reading Secrets as secretClient does.
func secretReading(mgr manager.Manager) client.Client {
	return secretClient{Client: mgr.GetClient(), Live: mgr.GetAPIReader()}
}
