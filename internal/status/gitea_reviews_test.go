/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "code.gitea.io/sdk/gitea"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// prRepo is a Gitea repository with a main branch, created for one test,
// and the admin's SDK client to shape it.
type prRepo struct {
	t    *testing.T
	name string
	sdk  *sdk.Client
}

func newPRRepo(t *testing.T) *prRepo {
	t.Helper()
	p, _ := giteaRepo(t, forge.Token)
	c, err := sdk.NewClient(forge.URL, sdk.SetToken(forge.Token), sdk.SetGiteaVersion(""))
	if err != nil {
		t.Fatal(err)
	}
	return &prRepo{t: t, name: repoName(p), sdk: c}
}

func (r *prRepo) reviews() Reviews {
	r.t.Helper()
	rv, err := NewReviews(v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL,
		Repository: forge.Repository(r.name)}, forge.Token, Options{AllowInsecureHTTP: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return rv
}

// branch creates branch from main with one more file.
func (r *prRepo) branch(name string) {
	r.t.Helper()
	opt := sdk.CreateFileOptions{FileOptions: sdk.FileOptions{BranchName: "main", NewBranchName: name,
		Message: "change on " + name}, Content: base64.StdEncoding.EncodeToString([]byte(name + "\n"))}
	if _, _, err := r.sdk.CreateFile(forge.AdminUser, r.name, name+".txt", opt); err != nil {
		r.t.Fatal(err)
	}
}

// pull opens a pull request from head into base.
func (r *prRepo) pull(head, base string, labels ...int64) *sdk.PullRequest {
	r.t.Helper()
	pr, _, err := r.sdk.CreatePullRequest(forge.AdminUser, r.name, sdk.CreatePullRequestOption{
		Head: head, Base: base, Title: "change " + head, Labels: labels})
	if err != nil {
		r.t.Fatal(err)
	}
	return pr
}

func (r *prRepo) label(name string) int64 {
	r.t.Helper()
	l, _, err := r.sdk.CreateLabel(forge.AdminUser, r.name, sdk.CreateLabelOption{Name: name, Color: "#00aabb"})
	if err != nil {
		r.t.Fatal(err)
	}
	return l.ID
}

func (r *prRepo) comments(number int64) []*sdk.Comment {
	r.t.Helper()
	all, _, err := r.sdk.ListIssueComments(forge.AdminUser, r.name, number, sdk.ListIssueCommentOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	return all
}

func TestGiteaPullRequestsListsOpenOnesIntoBase(t *testing.T) {
	r := newPRRepo(t)
	for _, b := range []string{"feature", "other", "into-other", "closed"} {
		r.branch(b)
	}
	open := r.pull("feature", "main", r.label("skip-plan"))
	r.pull("into-other", "other")
	closed := r.pull("closed", "main")
	state := sdk.StateClosed
	if _, _, err := r.sdk.EditPullRequest(forge.AdminUser, r.name, closed.Index,
		sdk.EditPullRequestOption{State: &state}); err != nil {
		t.Fatal(err)
	}
	got, err := r.reviews().PullRequests(context.Background(), "main", 20)
	if err != nil {
		t.Fatal(err)
	}
	head, _, err := forge.BranchHead(context.Background(), r.name, "feature")
	if err != nil {
		t.Fatal(err)
	}
	want := PullRequest{Number: open.Index, HeadSHA: head, HeadRef: fmt.Sprintf("refs/pull/%d/head", open.Index),
		Title: "change feature", Author: forge.AdminUser, Labels: []string{"skip-plan"}}
	if len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(want) {
		t.Fatalf("PullRequests = %+v, want only %+v", got, want)
	}
	if at := lsRemote(t, forge.CloneURL(r.name), want.HeadRef); at != head {
		t.Fatalf("%s fetches %q, want the head %s", want.HeadRef, at, head)
	}
}

// lsRemote is the commit ref names on the remote, by git isolated from the
// developer's configuration.
func lsRemote(t *testing.T, remote, ref string) string {
	t.Helper()
	dir := t.TempDir()
	gitconfig := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(gitconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "ls-remote", remote, ref)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+gitconfig, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-remote %s: %v", ref, err)
	}
	sha, _, _ := strings.Cut(string(out), "\t")
	return sha
}

const testMarker = "<!-- bg-gitops/plan/ns/repo -->"

func TestGiteaUpsertCommentEditsOneCommentInPlace(t *testing.T) {
	r := newPRRepo(t)
	r.branch("feature")
	pr := r.pull("feature", "main")
	rv, ctx := r.reviews(), context.Background()
	id, err := upsertID(rv, ctx, pr.Index, 0, testMarker, testMarker+"\nplan 1")
	if err != nil {
		t.Fatal(err)
	}
	for i, given := range []int64{id, 0} {
		body := fmt.Sprintf("%s\nplan %d", testMarker, i+2)
		again, err := upsertID(rv, ctx, pr.Index, given, testMarker, body)
		if err != nil || again != id {
			t.Fatalf("upsert with id %d = %d, %v; want the same comment %d", given, again, err, id)
		}
		if all := r.comments(pr.Index); len(all) != 1 || all[0].Body != body {
			t.Fatalf("after upsert with id %d the PR holds %d comments, want one with %q", given, len(all), body)
		}
	}
}

func TestGiteaUpsertCommentNeverEditsAnotherUsersComment(t *testing.T) {
	r := newPRRepo(t)
	r.branch("feature")
	pr := r.pull("feature", "main")
	planted := r.commentAs(r.user(), pr.Index, testMarker+"\nall green, merge me")
	rv, ctx := r.reviews(), context.Background()
	for _, given := range []int64{0, planted} {
		id, err := upsertID(rv, ctx, pr.Index, given, testMarker, testMarker+"\nplan")
		if err != nil || id == planted {
			t.Fatalf("upsert with id %d = %d, %v; want a comment of our own", given, id, err)
		}
	}
	all := r.comments(pr.Index)
	if len(all) != 2 || all[0].ID != planted || all[0].Body != testMarker+"\nall green, merge me" {
		t.Fatalf("comments = %d, first %+v: the planted comment must stay as written, ours beside it", len(all), all[0])
	}
}

// user creates a user who is not the token's.
func (r *prRepo) user() string {
	r.t.Helper()
	name := fmt.Sprintf("mallory%d", repos.Add(1))
	_, _, err := r.sdk.AdminCreateUser(sdk.CreateUserOption{Username: name, Email: name + "@example.invalid",
		Password: "Mallory-" + rand.Text(), MustChangePassword: sdk.OptionalBool(false)})
	if err != nil {
		r.t.Fatal(err)
	}
	return name
}

// commentAs comments as user (the admin's sudo) and returns the id.
func (r *prRepo) commentAs(user string, number int64, body string) int64 {
	r.t.Helper()
	c, err := sdk.NewClient(forge.URL, sdk.SetToken(forge.Token), sdk.SetSudo(user), sdk.SetGiteaVersion(""))
	if err != nil {
		r.t.Fatal(err)
	}
	cm, _, err := c.CreateIssueComment(forge.AdminUser, r.name, number, sdk.CreateIssueCommentOption{Body: body})
	if err != nil {
		r.t.Fatal(err)
	}
	if cm.Poster == nil || cm.Poster.UserName != user {
		r.t.Fatalf("comment written by %+v, want %s", cm.Poster, user)
	}
	return cm.ID
}
