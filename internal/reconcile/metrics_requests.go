/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// metrics_requests.go: counting commit status rounds and the webhook
// receiver's answers.

package reconcile

import (
	"net/http"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// countCommitStatus counts one round of commit-status calls through gr's
// forge; its result is the reason the CommitStatusFailed condition shows.
func countCommitStatus(gr *v1alpha1.GitRepository, err error) {
	result := "Succeeded"
	if err != nil {
		result = forgeReason(err)
	}
	commitStatusTotal.WithLabelValues(gr.Namespace, gr.Name, gr.Spec.CommitStatus.Provider, result).Inc()
}

// countWebhooks counts the receiver's answers by result. The counter
// names no GitRepository: the receiver runs on every replica, while only
// the leader sees a GitRepository deleted (forgetMetrics).
func countWebhooks(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		webhookTotal.WithLabelValues(webhookResult(rec.code)).Inc()
	})
}

// webhookResult names a receiver answer (see source.Receiver).
func webhookResult(code int) string {
	switch {
	case code == http.StatusOK:
		return "Requested" // or handled before, as a retried delivery
	case code == http.StatusAccepted:
		return "Ignored" // a push to another ref
	case code == http.StatusUnauthorized:
		return "Unauthorized"
	case code == http.StatusNotFound:
		return "NotFound"
	case code == http.StatusTooManyRequests, code == http.StatusServiceUnavailable:
		return "Throttled" // the receiver's limits (source.ReceiverLimits)
	case code >= 500:
		return "Error"
	}
	return "Rejected"
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}
