/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// git.go: Commit, and pusher, which commits in a working copy per
// repository and pushes to Gitea as a user would, again and again while
// Gitea is down.

package chaos

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// Commit is a pushed commit.
type Commit struct {
	*Push
	SHA string
	// Revision is how bg-gitops names it: main@sha1:<sha>.
	Revision string
	Pushed   time.Time
}

// pusher commits in a working copy per repository and pushes to Gitea,
// as a user would; a push waits while Gitea is down.
type pusher struct {
	forge *gitea.Server
	dir   string
	env   []string

	mu      sync.Mutex
	commits []*Commit
}

// commitEpoch is the date of commit 0; commit n is n minutes later, so
// that the same schedule makes the same SHAs.
var commitEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (p *pusher) push(ctx context.Context, push *Push) (*Commit, error) {
	work := filepath.Join(p.dir, push.Repo)
	if err := p.ensureWorktree(ctx, work); err != nil {
		return nil, err
	}
	for name, content := range push.Files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	date := fmt.Sprintf("%d +0000", commitEpoch.Add(time.Duration(push.Seq)*time.Minute).Unix())
	if _, err := p.git(ctx, work, []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date},
		"add", "-A"); err != nil {
		return nil, err
	}
	if _, err := p.git(ctx, work, []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date},
		"commit", "--allow-empty", "-q", "-m", push.message()); err != nil {
		return nil, err
	}
	sha, err := p.git(ctx, work, nil, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	if err := p.pushUntilAccepted(ctx, work, push.Repo); err != nil {
		return nil, err
	}
	c := &Commit{Push: push, SHA: strings.TrimSpace(sha), Pushed: time.Now()}
	c.Revision = "main@sha1:" + c.SHA
	p.mu.Lock()
	p.commits = append(p.commits, c)
	p.mu.Unlock()
	return c, nil
}

// pushUntilAccepted pushes until Gitea takes it: a stopped Gitea delays
// the commit, as it would a user's.
func (p *pusher) pushUntilAccepted(ctx context.Context, work, repo string) error {
	for {
		_, err := p.git(ctx, work, nil, "push", "-q", p.forge.AuthCloneURL(repo), "HEAD:refs/heads/main")
		if err == nil {
			return nil
		}
		if !sleep(ctx, 2*time.Second) {
			return fmt.Errorf("push to %s: %w", repo, err)
		}
	}
}

func (p *pusher) ensureWorktree(ctx context.Context, work string) error {
	if _, err := os.Stat(filepath.Join(work, ".git")); err == nil {
		return nil
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	_, err := p.git(ctx, work, nil, "init", "-q", "-b", "main")
	return err
}

// git runs git in the run's isolated environment.
func (p *pusher) git(ctx context.Context, dir string, extraEnv []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(p.env, "GIT_AUTHOR_NAME=chaos", "GIT_AUTHOR_EMAIL=chaos@example.invalid",
		"GIT_COMMITTER_NAME=chaos", "GIT_COMMITTER_EMAIL=chaos@example.invalid"), extraEnv...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := process.StartCommand(cmd); err != nil {
		return "", err
	}
	if err := cmd.Wait(); err != nil {
		// The push URL carries the password: never echo the arguments.
		return "", fmt.Errorf("git %s: %w: %s", args[0], err,
			strings.ReplaceAll(errOut.String(), p.forge.AdminPassword, "***"))
	}
	return out.String(), nil
}

// pushed returns the commits pushed so far, in order.
func (p *pusher) pushed() []*Commit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Commit{}, p.commits...)
}

// byRevision finds a pushed commit by revision.
func (p *pusher) byRevision(rev string) *Commit {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.commits {
		if c.Revision == rev {
			return c
		}
	}
	return nil
}

// head is the last commit pushed to repo.
func (p *pusher) head(repo string) *Commit {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.commits) - 1; i >= 0; i-- {
		if p.commits[i].Repo == repo {
			return p.commits[i]
		}
	}
	return nil
}
