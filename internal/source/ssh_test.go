/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"context"
	"encoding/pem"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

func TestFetchSSH(t *testing.T) {
	gittest.Isolate(t)
	root := t.TempDir()
	r := gittest.NewRepo(t, root, "app")
	c1 := r.Commit(map[string]string{"f": "1"}, "one")
	r.AnnotatedTag("v1.0.0", c1)
	r.Push("main", "v1.0.0")
	clientKey, clientPub := gittest.NewKey(t)
	srv := gittest.ServeSSH(t, root, clientPub)
	otherKey, otherPub := gittest.NewKey(t)

	secret := func(identity, known []byte) map[string][]byte {
		return map[string][]byte{"identity": identity, "known_hosts": known}
	}
	opts := func(t *testing.T, data map[string][]byte) Options {
		a, err := AuthFromSecret(data, srv.URL("app.git"))
		require.NoError(t, err)
		return Options{URL: srv.URL("app.git"), Auth: a, Timeout: 10 * time.Second, Dir: t.TempDir(),
			Ref: v1alpha1.GitRepositoryRef{Branch: "main"}}
	}

	t.Run("good key and known host", func(t *testing.T) {
		o := opts(t, secret(clientKey, srv.KnownHosts()))
		res := fetchOK(t, &o)
		assert.Equal(t, "main@sha1:"+c1, res.Revision)
		assert.Equal(t, "1", readFile(t, res, "f"))
		assert.False(t, fetchOK(t, &o).Fetched)
		o.Ref = v1alpha1.GitRepositoryRef{SemVer: "1.x"}
		assert.Equal(t, "v1.0.0@sha1:"+c1, fetchOK(t, &o).Revision)
	})
	t.Run("encrypted key with passphrase", func(t *testing.T) {
		enc := encryptKey(t, clientKey, "key-passphrase")
		_, err := AuthFromSecret(secret(enc, srv.KnownHosts()), srv.URL("app.git"))
		require.ErrorContains(t, err, "set password to its passphrase")
		data := secret(enc, srv.KnownHosts())
		data["password"] = []byte("wrong")
		_, err = AuthFromSecret(data, srv.URL("app.git"))
		require.ErrorContains(t, err, "could not be decrypted")
		data["password"] = []byte("key-passphrase")
		o := opts(t, data)
		assert.Equal(t, c1, fetchOK(t, &o).Commit)
	})
	t.Run("unknown host", func(t *testing.T) {
		known := []byte(knownhosts.Line([]string{"[127.0.0.1]:1"}, srv.HostKey) + "\n")
		_, err := Fetch(context.Background(), opts(t, secret(clientKey, known)))
		assertFetchErr(t, err, ReasonHostKeyUnknown, "is not in known_hosts: refusing to connect")
	})
	t.Run("changed host key", func(t *testing.T) {
		known := []byte(knownhosts.Line([]string{knownhosts.Normalize(srv.Addr)}, otherPub) + "\n")
		_, err := Fetch(context.Background(), opts(t, secret(clientKey, known)))
		assertFetchErr(t, err, ReasonHostKeyChanged, "does not match known_hosts")
	})
	t.Run("key not authorized", func(t *testing.T) {
		_, err := Fetch(context.Background(), opts(t, secret(otherKey, srv.KnownHosts())))
		assertFetchErr(t, err, ReasonAuthenticationFailed, "SSH authentication")
	})
}

func encryptKey(t *testing.T, pemKey []byte, pass string) []byte {
	t.Helper()
	k, err := ssh.ParseRawPrivateKey(pemKey)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(k, "", []byte(pass))
	require.NoError(t, err)
	return pem.EncodeToMemory(block)
}
