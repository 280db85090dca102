/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

func TestAuthFromSecret(t *testing.T) {
	key, _ := gittest.NewKey(t)
	known := []byte("[127.0.0.1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
	for _, tc := range []struct {
		name string
		data map[string][]byte
		url  string
		err  string
		kind any
	}{
		{"anonymous https", nil, "https://h/r.git", "", nil},
		{"basic", map[string][]byte{"username": []byte("u"), "password": []byte("p")}, "https://h/r.git", "", &githttp.BasicAuth{}},
		{"token", map[string][]byte{"bearerToken": []byte("t")}, "http://h/r.git", "", &githttp.TokenAuth{}},
		{"token and basic", map[string][]byte{"bearerToken": []byte("t"), "username": []byte("u"), "password": []byte("p")}, "https://h/r.git", "keep one", nil},
		{"username only", map[string][]byte{"username": []byte("u")}, "https://h/r.git", "both username and password", nil},
		{"ssh key on https", map[string][]byte{"identity": key}, "https://h/r.git", "use an ssh:// url", nil},
		{"ssh", map[string][]byte{"identity": key, "known_hosts": known}, "ssh://git@h:2222/r.git", "", &gitssh.PublicKeys{}},
		{"ssh without known_hosts", map[string][]byte{"identity": key}, "ssh://h/r.git", "no known_hosts", nil},
		{"ssh without key", map[string][]byte{"known_hosts": known}, "ssh://h/r.git", "needs the keys identity", nil},
		{"ssh bad key", map[string][]byte{"identity": []byte("nope"), "known_hosts": known}, "ssh://h/r.git", "not a valid private key", nil},
		{"bad known_hosts", map[string][]byte{"identity": key, "known_hosts": []byte("h ssh-ed25519 !!!\n")}, "ssh://h/r.git", "known_hosts in the Secret is malformed", nil},
		{"file", nil, "file:///tmp/x", "", nil},
		{"bad scheme", nil, "ftp://h/r", `url scheme "ftp" is not supported`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := AuthFromSecret(tc.data, tc.url)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			if tc.kind == nil {
				assert.Nil(t, a.Method)
			} else {
				assert.IsType(t, tc.kind, a.Method)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	a := &Auth{secrets: []string{"hunter22"}}
	for in, want := range map[string]string{
		`Get "https://bob:hunter22@h/x": eof`:   `Get "https://h/x": eof`,
		"token hunter22 rejected":               "token *** rejected",
		"ssh://git@h:22/r and http://a:b@c/d e": "ssh://h:22/r and http://c/d e",
		"no url here":                           "no url here",
		"http://h/x?p=hunter22":                 "http://h/x?p=***",
	} {
		assert.Equal(t, want, a.scrub(in), in)
	}
}
