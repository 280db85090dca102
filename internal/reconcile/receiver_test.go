/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReceiverServerTimeouts: a sender that trickles its body, or keeps a
// connection open after its request, is disconnected by the receiver's
// server instead of holding the connection (and a goroutine) forever.
func TestReceiverServerTimeouts(t *testing.T) {
	saved := receiverLimits
	t.Cleanup(func() { receiverLimits = saved })
	receiverLimits.read, receiverLimits.idle = 300*time.Millisecond, 300*time.Millisecond

	bodyErr := make(chan error, 1)
	srv := receiverServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		if err != nil {
			bodyErr <- err
			http.Error(w, "timeout", http.StatusRequestTimeout)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		// The test's own bound: without server timeouts a read below
		// would block until this deadline.
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		return c
	}
	closedByServer := func(t *testing.T, c net.Conn) {
		t.Helper()
		_, err := io.ReadAll(c)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the server kept the connection open")
		}
	}

	t.Run("slow body", func(t *testing.T) {
		c := dial()
		_, err := io.WriteString(c, "POST /hook/x HTTP/1.1\r\nHost: receiver\r\nContent-Length: 1000\r\n\r\n{\"ref\":")
		require.NoError(t, err)
		closedByServer(t, c)
		select {
		case err := <-bodyErr:
			assert.Error(t, err)
		default:
			t.Fatal("the handler's body read did not fail")
		}
	})

	t.Run("idle keep-alive", func(t *testing.T) {
		c := dial()
		_, err := io.WriteString(c, "POST /hook/x HTTP/1.1\r\nHost: receiver\r\nContent-Length: 2\r\n\r\n{}")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		_ = resp.Body.Close()
		closedByServer(t, c)
	})
}
