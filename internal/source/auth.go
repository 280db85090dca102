/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// auth.go: Auth and AuthFromSecret — the transport credentials of a
// repository from its Secret (basic, bearer token, SSH key with known_hosts,
// CA bundle) — and scrubbing them from error messages.

package source

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Keys of the Secret named by spec.secretRef.
const (
	UsernameKey    = "username"
	PasswordKey    = "password"
	BearerTokenKey = "bearerToken"
	IdentityKey    = "identity"
	KnownHostsKey  = "known_hosts"
	CAFileKey      = "caFile"
)

// Auth is the transport credentials for one repository.
type Auth struct {
	// Method is handed to go-git; nil for anonymous access.
	Method transport.AuthMethod
	// CABundle is extra PEM CAs trusted for https.
	CABundle []byte
	// SecretName names the Secret in error messages (e.g. "git-auth");
	// empty means "the Secret in spec.secretRef".
	SecretName string

	// secrets are scrubbed from every error message.
	secrets []string
}

func (a *Auth) method() transport.AuthMethod {
	if a == nil {
		return nil
	}
	return a.Method
}

func (a *Auth) caBundle() []byte {
	if a == nil {
		return nil
	}
	return a.CABundle
}

func (a *Auth) secretDesc() string {
	if a == nil || a.SecretName == "" {
		return "the Secret in spec.secretRef"
	}
	return fmt.Sprintf("Secret %q", a.SecretName)
}

// AuthFromSecret builds credentials for rawURL from a Secret's data: username
// and password, or bearerToken (http/https); identity, an optional password
// (the key's passphrase) and known_hosts (ssh); caFile (https). Host keys are
// checked strictly against known_hosts: ssh without it is refused.
func AuthFromSecret(data map[string][]byte, rawURL string) (*Auth, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("url is malformed: %v", scrubURLs(err.Error()))
	}
	a := &Auth{CABundle: data[CAFileKey]}
	switch u.Scheme {
	case "http", "https":
		err = a.httpAuth(data)
	case "ssh":
		err = a.sshAuth(data, u)
	case "file":
	default:
		err = fmt.Errorf("url scheme %q is not supported: use https://, http://, ssh:// or file://", u.Scheme)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Auth) httpAuth(data map[string][]byte) error {
	user, pass, token := string(data[UsernameKey]), string(data[PasswordKey]), string(data[BearerTokenKey])
	if len(data[IdentityKey]) > 0 {
		return errors.New("the Secret has an identity (SSH key) but the url is http(s): use an ssh:// url or username/password")
	}
	switch {
	case token != "" && (user != "" || pass != ""):
		return errors.New("the Secret has both bearerToken and username/password: keep one")
	case token != "":
		a.Method = &githttp.TokenAuth{Token: token}
		a.secrets = []string{token}
	case user != "" || pass != "":
		if user == "" || pass == "" {
			return errors.New("the Secret needs both username and password")
		}
		a.Method = &githttp.BasicAuth{Username: user, Password: pass}
		a.secrets = []string{pass}
	}
	return nil
}

func (a *Auth) sshAuth(data map[string][]byte, u *url.URL) error {
	if len(data[IdentityKey]) == 0 {
		return errors.New("an ssh:// url needs the keys identity (private key) and known_hosts in the Secret")
	}
	if len(data[KnownHostsKey]) == 0 {
		return errors.New("the Secret has no known_hosts: host keys are checked strictly, add the server's key")
	}
	user := u.User.Username()
	if user == "" {
		user = "git"
	}
	pass := string(data[PasswordKey])
	keys, err := gitssh.NewPublicKeys(user, data[IdentityKey], pass)
	if err != nil {
		return identityError(data[IdentityKey], pass)
	}
	cb, algos, err := hostKeyCheck(data[KnownHostsKey])
	if err != nil {
		return err
	}
	keys.HostKeyCallback, keys.HostKeyAlgorithms = cb, algos
	a.Method = keys
	if pass != "" {
		a.secrets = []string{pass}
	}
	return nil
}

func identityError(identity []byte, pass string) error {
	_, err := ssh.ParsePrivateKey(identity)
	var missing *ssh.PassphraseMissingError
	switch {
	case !errors.As(err, &missing):
		return errors.New("the identity in the Secret is not a valid private key (PEM or OpenSSH format)")
	case pass == "":
		return errors.New("the identity in the Secret is encrypted: set password to its passphrase")
	default:
		return errors.New("the identity in the Secret could not be decrypted: check password (the key's passphrase)")
	}
}

// hostKeyCheck builds a strict callback from known_hosts content. Offering
// only the key types listed keeps the server from negotiating a key type we
// do not know and reporting a known host as unknown.
func hostKeyCheck(content []byte) (ssh.HostKeyCallback, []string, error) {
	dir, err := os.MkdirTemp("", "known-hosts-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		return nil, nil, err
	}
	cb, err := knownhosts.New(path) // reads the file now; removing it is fine
	if err != nil {
		return nil, nil, fmt.Errorf("known_hosts in the Secret is malformed: %v", strings.ReplaceAll(err.Error(), path, "known_hosts"))
	}
	return strictCallback(cb), hostKeyAlgorithms(content), nil
}

// HostKeyError is an SSH host key that known_hosts does not vouch for.
type HostKeyError struct {
	Host    string
	Changed bool
}

func (e *HostKeyError) Error() string {
	if e.Changed {
		return fmt.Sprintf("the SSH host key of %s does not match known_hosts (it changed, or someone intercepts the connection): refusing to connect; if the change is expected, update known_hosts in the Secret", e.Host)
	}
	return fmt.Sprintf("the SSH host %s is not in known_hosts: refusing to connect; add its key (ssh-keyscan) to known_hosts in the Secret", e.Host)
}

func strictCallback(cb ssh.HostKeyCallback) ssh.HostKeyCallback {
	return func(host string, remote net.Addr, key ssh.PublicKey) error {
		err := cb(host, remote, key)
		var ke *knownhosts.KeyError
		var re *knownhosts.RevokedError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &ke):
			return &HostKeyError{Host: host, Changed: len(ke.Want) > 0}
		case errors.As(err, &re):
			return &HostKeyError{Host: host, Changed: true}
		default:
			return err
		}
	}
}

func hostKeyAlgorithms(content []byte) []string {
	seen := map[string]bool{}
	var algos []string
	add := func(a ...string) {
		for _, s := range a {
			if !seen[s] {
				seen[s] = true
				algos = append(algos, s)
			}
		}
	}
	for rest := content; len(rest) > 0; {
		marker, _, key, _, next, err := ssh.ParseKnownHosts(rest)
		if err != nil {
			break
		}
		rest = next
		if marker == "cert-authority" {
			return nil // certificates: let the library negotiate
		}
		if key.Type() == ssh.KeyAlgoRSA {
			add(ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256)
		}
		add(key.Type())
	}
	return algos
}

// scrub removes secrets and URL userinfo from an error message.
func (a *Auth) scrub(msg string) string {
	msg = scrubURLs(msg)
	if a == nil {
		return msg
	}
	for _, s := range a.secrets {
		if len(s) >= 3 {
			msg = strings.ReplaceAll(msg, s, "***")
			msg = strings.ReplaceAll(msg, url.QueryEscape(s), "***")
			msg = strings.ReplaceAll(msg, url.PathEscape(s), "***")
		}
	}
	return msg
}

// scrubURLs drops the userinfo of any URL in msg ("https://u:p@h/x" becomes
// "https://h/x").
func scrubURLs(msg string) string {
	var b bytes.Buffer
	for {
		i := strings.Index(msg, "://")
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i+3])
		msg = msg[i+3:]
		end := strings.IndexAny(msg, "/ \t\n\"'")
		if end < 0 {
			end = len(msg)
		}
		if at := strings.LastIndex(msg[:end], "@"); at >= 0 {
			msg = msg[at+1:]
		}
	}
}
