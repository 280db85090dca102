/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

// packBuilder writes a packfile object by object, the way a server may
// (tests of the pack check need objects git itself would not produce).
type packBuilder struct {
	objs    [][]byte
	offsets []int
	size    int
}

func (p *packBuilder) add(typ byte, size int, prefix, data []byte) int {
	var b bytes.Buffer
	c := typ<<4 | byte(size&0x0f)
	for size >>= 4; size > 0; size >>= 7 {
		b.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
	}
	b.WriteByte(c)
	b.Write(prefix)
	zw := zlib.NewWriter(&b)
	_, _ = zw.Write(data)
	_ = zw.Close()
	off := 12 + p.size
	p.objs, p.offsets, p.size = append(p.objs, b.Bytes()), append(p.offsets, off), p.size+b.Len()
	return off
}

func (p *packBuilder) blob(data []byte) int { return p.add(objBlob, len(data), nil, data) }

// ofsDelta adds a delta against the object at base that copies base's
// first n bytes times copies.
func (p *packBuilder) ofsDelta(base, baseSize, n, copies int) {
	delta := deltaCopies(baseSize, n, copies)
	off := 12 + p.size
	rel := off - base
	enc := []byte{byte(rel & 0x7f)}
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		enc = append([]byte{byte(0x80 | rel&0x7f)}, enc...)
	}
	p.add(objOfsDelta, len(delta), enc, delta)
}

func (p *packBuilder) refDelta(base []byte, baseSize, n, copies int) {
	delta := deltaCopies(baseSize, n, copies)
	h := sha1.Sum(append([]byte("blob "+strconv.Itoa(len(base))+"\x00"), base...))
	p.add(objRefDelta, len(delta), h[:], delta)
}

func deltaCopies(baseSize, n, copies int) []byte {
	var d []byte
	d = binary.AppendUvarint(d, uint64(baseSize))
	d = binary.AppendUvarint(d, uint64(n*copies))
	for range copies { // copy offset 0, three size bytes
		d = append(d, 0x80|0x10|0x20|0x40, byte(n), byte(n>>8), byte(n>>16))
	}
	return d
}

func (p *packBuilder) bytes(count int) []byte {
	var b bytes.Buffer
	b.WriteString("PACK")
	_ = binary.Write(&b, binary.BigEndian, uint32(2))
	_ = binary.Write(&b, binary.BigEndian, uint32(count))
	for _, o := range p.objs {
		b.Write(o)
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = io.ReadFull(rand.NewChaCha8([32]byte{7}), b)
	return b
}

// indexPack checks with the real git that a crafted pack is well formed.
func indexPack(t *testing.T, pack []byte) {
	t.Helper()
	gittest.Isolate(t)
	p := filepath.Join(t.TempDir(), "test.pack")
	require.NoError(t, os.WriteFile(p, pack, 0o644))
	gittest.Git(t, filepath.Dir(p), "index-pack", p)
}

func checkBytes(pack []byte, lim Limits) error {
	return checkPack(context.Background(), bytes.NewReader(pack), lim.effective(), "https://h/r.git")
}

// TestCheckPackDeltas: a delta's size is the size of the object it makes,
// read from the delta's first bytes, whatever its instructions weigh; so
// a small delta that copies its base many times is caught like a blob.
func TestCheckPackDeltas(t *testing.T) {
	base := randomBytes(150 << 10)
	var ofs, ref packBuilder
	ofs.ofsDelta(ofs.blob(base), len(base), len(base), 2)
	ref.blob(base)
	ref.refDelta(base, len(base), len(base), 2)
	for name, pack := range map[string][]byte{"ofs-delta": ofs.bytes(2), "ref-delta": ref.bytes(2)} {
		t.Run(name, func(t *testing.T) {
			indexPack(t, pack)
			require.NoError(t, checkBytes(pack, Limits{MaxFileBytes: 300 << 10, MaxCheckoutBytes: 450 << 10}))

			err := checkBytes(pack, Limits{MaxFileBytes: 200 << 10})
			assertFetchErr(t, err, ReasonLimitExceeded, "an object (a file, directory listing or commit) of 300.0 KiB: limit exceeded: file size limit (--git-max-file-size=200Ki)")
			err = checkBytes(pack, Limits{MaxCheckoutBytes: 400 << 10})
			assertFetchErr(t, err, ReasonLimitExceeded, "the objects received unpack to more than 400.0 KiB")
		})
	}
}

func TestCheckPackMalformed(t *testing.T) {
	var p packBuilder
	p.blob([]byte("hello\n"))
	good := p.bytes(1)
	require.NoError(t, checkBytes(good, Limits{}))

	var lying packBuilder
	lying.add(objBlob, 3, nil, []byte("hello\n")) // header says 3 bytes
	var badType packBuilder
	badType.add(5, 1, nil, []byte("x"))
	for name, pack := range map[string][]byte{
		"empty":              nil,
		"not a pack":         []byte("<html>oops</html>"),
		"truncated":          good[:len(good)-30],
		"more objects":       p.bytes(2),
		"longer than header": lying.bytes(1),
		"unknown type":       badType.bytes(1),
		"bad version":        append([]byte("PACK\x00\x00\x00\x09"), good[8:]...),
	} {
		t.Run(name, func(t *testing.T) {
			assertFetchErr(t, checkBytes(pack, Limits{}), ReasonGitFailed, "the server sent a malformed packfile")
		})
	}
}

// TestCheckPackAgreesWithGit: on packs git writes, with deltas, the sizes
// the check finds are the object sizes git reports.
func TestCheckPackAgreesWithGit(t *testing.T) {
	gittest.Isolate(t)
	r := gittest.NewRepo(t, t.TempDir(), "app")
	base := string(randomBytes(40 << 10))
	for i := range 5 { // each version a little longer: deltas against the last
		r.Commit(map[string]string{"a.txt": strings.Repeat(base, i+1), "b.txt": fmt.Sprintf("%d\n%s", i, base)}, "v")
	}
	r.Git("repack", "-adf", "--quiet")
	packs, err := filepath.Glob(filepath.Join(r.Work, ".git", "objects", "pack", "*.pack"))
	require.NoError(t, err)
	require.Len(t, packs, 1)
	pack, err := os.ReadFile(packs[0])
	require.NoError(t, err)
	verify := r.Git("verify-pack", "-v", packs[0])
	require.Contains(t, verify, "chain length = 1", "the pack has deltas")

	var largest, total int64
	for _, s := range strings.Fields(r.Git("cat-file", "--batch-all-objects", "--batch-check=%(objectsize)")) {
		n, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		largest, total = max(largest, n), total+n
	}
	require.NoError(t, checkBytes(pack, Limits{MaxFileBytes: largest, MaxCheckoutBytes: total}))
	assertFetchErr(t, checkBytes(pack, Limits{MaxFileBytes: largest - 1}), ReasonLimitExceeded, "file size limit")
	assertFetchErr(t, checkBytes(pack, Limits{MaxCheckoutBytes: total - 1}), ReasonLimitExceeded, "checkout size limit")
}

// FuzzCheckPack: the check reads what any server sends; it never panics
// and never needs more than its fixed buffers.
func FuzzCheckPack(f *testing.F) {
	var p packBuilder
	base := []byte(strings.Repeat("manifest line\n", 20))
	p.ofsDelta(p.blob(base), len(base), 14, 3)
	p.refDelta(base, len(base), 14, 2)
	f.Add(p.bytes(3))
	f.Add([]byte("PACK\x00\x00\x00\x02\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, pack []byte) {
		_ = checkBytes(pack, Limits{MaxFileBytes: 1 << 20, MaxCheckoutBytes: 4 << 20})
	})
}
