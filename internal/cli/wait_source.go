/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Refusing at once a --for-revision that names a commit of the local
// repository the GitRepository can never fetch: a clone of another
// repository, or a commit not pushed.

package cli

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/source"
)

// isLocalRef reports whether --for-revision names a ref of the local
// repository rather than a commit hash or a status revision.
func isLocalRef(arg string) bool {
	return arg != "" && !shaPrefix.MatchString(arg) && !strings.Contains(arg, ":")
}

// refuseUnreachable returns an exit-2 error when want, resolved in the local
// repository repoDir, cannot become live for obj: the repository is not the
// one obj's GitRepository fetches, or that remote does not have the commit.
// What it cannot decide (no GitRepository, a remote it cannot list) it lets
// through to the wait.
func refuseUnreachable(ctx context.Context, c client.Client, obj client.Object, repoDir string, want commitRef) error {
	gr := sourceOf(ctx, c, obj)
	if gr == nil {
		return nil
	}
	repo, err := git.PlainOpenWithOptions(repoDir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil
	}
	remote, ok := matchingRemote(repo, repoDir, gr.Spec.URL)
	if !ok {
		return &exitError{code: exitCannotAct, err: fmt.Errorf(
			"%s is a commit of %s, whose remotes are not %s, the url of gitrepository %s/%s: it can never go live (pass --repo with a clone of %[3]s, or a commit hash)",
			want, repoDir, gr.Spec.URL, gr.Namespace, gr.Name)}
	}
	if remote == "" || remoteHas(ctx, repo, remote, gr.GetRef(), plumbing.NewHash(string(want))) {
		return nil
	}
	return &exitError{code: exitCannotAct, err: fmt.Errorf(
		"%s is not on %s, which gitrepository %s/%s fetches, under the ref it follows: push it first", want, gr.Spec.URL, gr.Namespace, gr.Name)}
}

// sourceOf is the GitRepository obj is, or the one that applied it (its
// bggitops.dev/source annotation); nil when there is none to read.
func sourceOf(ctx context.Context, c client.Client, obj client.Object) *v1alpha1.GitRepository {
	if gr, ok := obj.(*v1alpha1.GitRepository); ok {
		return gr
	}
	ns, name, ok := strings.Cut(obj.GetAnnotations()[v1alpha1.SourceAnnotation], "/")
	if !ok {
		return nil
	}
	gr := &v1alpha1.GitRepository{}
	if c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, gr) != nil {
		return nil
	}
	return gr
}

// matchingRemote finds the URL of repo's remote that is sourceURL. ok
// without a URL means repo itself is sourceURL (a file:// URL of its
// directory), which has every commit it has.
func matchingRemote(repo *git.Repository, repoDir, sourceURL string) (remoteURL string, ok bool) {
	want := normalizeGitURL(sourceURL)
	if normalizeGitURL(repoDir) == want {
		return "", true
	}
	if wt, err := repo.Worktree(); err == nil && normalizeGitURL(wt.Filesystem.Root()) == want {
		return "", true
	}
	remotes, err := repo.Remotes()
	if err != nil {
		return "", false
	}
	for _, r := range remotes {
		for _, u := range r.Config().URLs {
			if normalizeGitURL(u) == want {
				return u, true
			}
		}
	}
	return "", false
}

// listTimeout bounds listing the remote's refs: a remote that does not
// answer leaves the question to the wait.
const listTimeout = 15 * time.Second

// remoteHas reports whether the remote at remoteURL has the commit under a
// ref that follow names (source.Concerns, the rule push webhooks go by):
// such a ref points at it or at a commit the local repository knows
// descends from it. Other refs (a forge's refs/pull/*, others' branches)
// cannot bring it live, and their tips are seldom fetched. When it cannot
// tell (the remote cannot be listed, the ref points at a commit not
// fetched here, follow pins a commit) it answers yes, leaving it to the
// wait.
func remoteHas(ctx context.Context, repo *git.Repository, remoteURL string, follow v1alpha1.GitRepositoryRef, want plumbing.Hash) bool {
	if follow.Commit != "" {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	r := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{remoteURL}})
	refs, err := r.ListContext(ctx, &git.ListOptions{})
	if err != nil {
		return true
	}
	for _, ref := range refs {
		if ref.Type() != plumbing.HashReference || !source.Concerns(follow, ref.Name().String()) {
			continue
		}
		if descends(repo, ref.Hash(), want) {
			return true
		}
	}
	return false
}

// descends reports whether tip is want or has it as an ancestor; a tip not
// in the local repository counts as yes, as it may.
func descends(repo *git.Repository, tip, want plumbing.Hash) bool {
	if tip == want {
		return true
	}
	tc, err := repo.CommitObject(tip)
	if err != nil {
		return true
	}
	wc, err := repo.CommitObject(want)
	if err != nil {
		return true
	}
	ok, err := wc.IsAncestor(tc)
	return err != nil || ok
}

// scpLike is the user@host:path form of an SSH URL.
var scpLike = regexp.MustCompile(`^(?:[^@/]+@)?([^:/]+):(.+)$`)

// normalizeGitURL reduces a Git URL or a local path to host/path, so that
// https://host/o/r, ssh://git@host:22/o/r.git and git@host:o/r compare
// equal, and file:///d and /d too. The path of a remote is compared
// without case, as forges (GitHub, GitLab, Gitea) name repositories: a
// refusal there would stop a wait that can succeed.
func normalizeGitURL(raw string) string {
	if !strings.Contains(raw, "://") {
		if m := scpLike.FindStringSubmatch(raw); m != nil && !filepath.IsAbs(raw) {
			return strings.ToLower(m[1] + "/" + trimRepoPath(m[2]))
		}
		return localPath(raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Scheme == "file" {
		return localPath(u.Path)
	}
	return strings.ToLower(u.Hostname() + "/" + trimRepoPath(u.Path))
}

// localPath is a directory as an absolute path, symbolic links resolved.
func localPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return "file:" + trimRepoPath(filepath.ToSlash(p))
}

func trimRepoPath(p string) string {
	p = strings.Trim(p, "/")
	p = strings.TrimSuffix(p, "/.git")
	return strings.TrimSuffix(p, ".git")
}
