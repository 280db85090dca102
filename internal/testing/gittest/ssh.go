/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// ssh.go: SSHServer (ServeSSH), an in-process SSH server that runs
// `git upload-pack`, and NewKey.

package gittest

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SSHServer is an in-process SSH server on 127.0.0.1 that runs the real
// `git upload-pack` for the bare repositories under its root.
type SSHServer struct {
	// Addr is host:port.
	Addr string
	// HostKey is the server's public host key.
	HostKey ssh.PublicKey

	// Flood, when set, makes the server answer every upload-pack with a
	// ref advertisement of FloodBytes (512 MiB when 0), as a hostile
	// server would, instead of running git.
	Flood      atomic.Bool
	FloodBytes int64

	uploadPacks atomic.Int64
	ln          net.Listener
	wg          sync.WaitGroup
}

// UploadPacks counts upload-pack sessions (listings and fetches).
func (s *SSHServer) UploadPacks() int64 { return s.uploadPacks.Load() }

// KnownHosts is a known_hosts line for this server.
func (s *SSHServer) KnownHosts() []byte {
	return []byte(knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey) + "\n")
}

// URL of a repository on this server.
func (s *SSHServer) URL(repo string) string { return "ssh://git@" + s.Addr + "/" + repo }

// NewKey returns a fresh ed25519 key: its OpenSSH private key PEM and its
// public key.
func NewKey(tb testing.TB) ([]byte, ssh.PublicKey) {
	tb.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		tb.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		tb.Fatal(err)
	}
	return pem.EncodeToMemory(block), sp
}

// ServeSSH starts an SSH server for root accepting only clientKey.
func ServeSSH(tb testing.TB, root string, clientKey ssh.PublicKey) *SSHServer {
	tb.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			if bytes.Equal(k.Marshal(), clientKey.Marshal()) {
				return nil, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &SSHServer{Addr: ln.Addr().String(), HostKey: signer.PublicKey(), ln: ln}
	s.wg.Add(1)
	go s.accept(cfg, root)
	tb.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *SSHServer) accept(cfg *ssh.ServerConfig, root string) {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(c, cfg, root)
		}()
	}
}

func (s *SSHServer) serveConn(c net.Conn, cfg *ssh.ServerConfig, root string) {
	defer c.Close()
	conn, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer conn.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			return
		}
		go s.serveSession(ch, chReqs, root)
	}
}

func (s *SSHServer) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request, root string) {
	defer ch.Close()
	for req := range reqs {
		if req.Type != "exec" {
			req.Reply(req.Type == "env", nil)
			continue
		}
		dir, ok := uploadPackDir(req.Payload, root)
		req.Reply(ok, nil)
		if !ok {
			return
		}
		s.uploadPacks.Add(1)
		if s.Flood.Load() {
			s.flood(ch)
			sendExit(ch, 0)
			return
		}
		sendExit(ch, runUploadPack(ch, dir))
		return
	}
}

// flood writes a ref advertisement of s.FloodBytes: a branch per line,
// then the flush-pkt; it stops early when the client goes.
func (s *SSHServer) flood(ch ssh.Channel) {
	limit := s.FloodBytes
	if limit == 0 {
		limit = 512 << 20
	}
	sha := strings.Repeat("1", 40)
	w := bufio.NewWriterSize(ch, 1<<16)
	line := sha + " HEAD\x00multi_ack ofs-delta side-band-64k\n"
	for n, i := int64(0), 0; n < limit; i++ {
		k, err := fmt.Fprintf(w, "%04x%s", len(line)+4, line)
		if err != nil {
			return
		}
		n += int64(k)
		line = fmt.Sprintf("%s refs/heads/b%09d\n", sha, i)
	}
	_, _ = w.WriteString("0000")
	_ = w.Flush()
}

// uploadPackDir parses "git-upload-pack '/x.git'" into root/x.git.
func uploadPackDir(payload []byte, root string) (string, bool) {
	if len(payload) < 4 {
		return "", false
	}
	n := binary.BigEndian.Uint32(payload)
	if int(n) != len(payload)-4 {
		return "", false
	}
	prog, arg, ok := strings.Cut(string(payload[4:]), " ")
	if !ok || prog != "git-upload-pack" {
		return "", false
	}
	arg = strings.Trim(arg, "'\"")
	clean := filepath.Clean("/" + arg)
	return filepath.Join(root, clean), true
}

func runUploadPack(ch ssh.Channel, dir string) int {
	cmd := exec.Command("git", "upload-pack", dir)
	cmd.Env = gitEnv()
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 1
	}
	if err := cmd.Start(); err != nil {
		return 1
	}
	go func() { io.Copy(stdin, ch); stdin.Close() }()
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}

func sendExit(ch ssh.Channel, code int) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(code))
	ch.SendRequest("exit-status", false, b[:])
}
