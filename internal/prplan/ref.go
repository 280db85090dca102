/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// ref.go: HeadRef, the ref that fetches a pull request's head.

package prplan

import (
	"fmt"
	"strconv"
	"strings"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// HeadRef is the ref that fetches pull request n's head from the
// GitRepository's repository: spec.pullRequests.refPattern with n for its
// '*', else GitLab's refs/merge-requests/n/head for a gitlab commit-status
// provider, else refs/pull/n/head (GitHub, Gitea). A refPattern without
// exactly one '*' (the CRD's pattern asks one; an object stored before
// that rule is not checked again) would fetch the same ref for every pull
// request, and is refused.
func HeadRef(gr *v1alpha1.GitRepository, n int64) (string, error) {
	num := strconv.FormatInt(n, 10)
	if pr := gr.Spec.PullRequests; pr != nil && pr.RefPattern != "" {
		if c := strings.Count(pr.RefPattern, "*"); c != 1 {
			return "", fmt.Errorf("gitrepository %s/%s: spec.pullRequests.refPattern %q has %d '*', want exactly one for the pull request's number", gr.Namespace, gr.Name, pr.RefPattern, c)
		}
		return strings.Replace(pr.RefPattern, "*", num, 1), nil
	}
	if cs := gr.Spec.CommitStatus; cs != nil && cs.Provider == "gitlab" {
		return "refs/merge-requests/" + num + "/head", nil
	}
	return "refs/pull/" + num + "/head", nil
}
