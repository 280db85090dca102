/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// pack.go: boundedStorer, which stages a received packfile and checks its
// object count and sizes against the limits before go-git parses it.

package source

import (
	"bufio"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
)

// boundedStorer is the cache repository's storage as a fetch sees it: the
// packfile the server sends is staged in a file (at most MaxFetchBytes),
// its object headers are checked against the limits, and only a pack that
// passes reaches go-git's pack parser.
//
// The check has to come first: go-git's parser reads every object of a
// pack whole into memory to index it (a 256 MiB blob of zeros, 1 MiB on
// the wire, cost about 1.8 GB of allocations), and it runs only once the
// whole pack is there. The headers tell each object's size before it is
// unpacked (for a delta, the first bytes of its data tell the size of the
// object it makes), so the check itself needs a fixed amount of memory.
type boundedStorer struct {
	storage.Storer
	// dir is where the incoming pack is staged (inside the cache, so the
	// cache volume's size limit covers it).
	dir    string
	ctx    context.Context
	lim    Limits // effective
	remote string // scrubbed URL, for messages
}

var _ storer.PackfileWriter = (*boundedStorer)(nil)

func (s *boundedStorer) PackfileWriter() (io.WriteCloser, error) {
	inner, ok := s.Storer.(storer.PackfileWriter)
	if !ok {
		return nil, errors.New("cache storage cannot write packfiles")
	}
	f, err := os.CreateTemp(s.dir, "incoming-*.pack")
	if err != nil {
		return nil, err
	}
	return &stagedPack{s: s, f: f, inner: inner}, nil
}

// stagedPack is the io.WriteCloser go-git copies the received pack into.
type stagedPack struct {
	s      *boundedStorer
	f      *os.File
	inner  storer.PackfileWriter
	n      int64
	failed bool
}

func (w *stagedPack) Write(p []byte) (int, error) {
	if w.failed {
		return 0, errors.New("pack refused")
	}
	if over(w.n+int64(len(p)), w.s.lim.MaxFetchBytes) {
		w.failed = true
		return 0, limitErr(fmt.Sprintf("fetching %s: the server sent more than %s", w.s.remote, humanSize(w.s.lim.MaxFetchBytes)),
			"fetch size limit", w.s.lim.MaxFetchBytes, FlagMaxFetchSize)
	}
	n, err := w.f.Write(p)
	w.n += int64(n)
	if err != nil {
		w.failed = true
	}
	return n, err
}

// Close checks the staged pack and hands it to go-git. go-git closes the
// writer whether the copy failed or not and keeps the copy's error, so a
// refused pack closes quietly.
func (w *stagedPack) Close() (err error) {
	defer func() {
		_ = w.f.Close()
		_ = os.Remove(w.f.Name())
	}()
	if w.failed || w.n == 0 {
		return nil
	}
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := checkPack(w.s.ctx, w.f, w.s.lim, w.s.remote); err != nil {
		return err
	}
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	pw, err := w.inner.PackfileWriter()
	if err != nil {
		return err
	}
	_, err = io.Copy(pw, w.f)
	if cerr := pw.Close(); err == nil {
		err = cerr
	}
	return err
}

// Pack object types (gitformat-pack).
const (
	objCommit   = 1
	objTree     = 2
	objBlob     = 3
	objTag      = 4
	objOfsDelta = 6
	objRefDelta = 7
)

// errMalformedPack: the server sent something that is not a pack go-git
// could index; it is refused here rather than parsed.
var errMalformedPack = errors.New("malformed packfile")

// checkPack reads a whole pack from r and checks its object count against
// lim.MaxObjects, every object's unpacked size against lim.MaxFileBytes
// and their sum against lim.MaxCheckoutBytes. Objects are inflated to find where the next one
// starts, in a fixed-size buffer, and only as far as their header says.
func checkPack(ctx context.Context, r io.Reader, lim Limits, remote string) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil || string(hdr[:4]) != "PACK" {
		return malformed(remote, "no pack header")
	}
	if v := binary.BigEndian.Uint32(hdr[4:8]); v != 2 && v != 3 {
		return malformed(remote, fmt.Sprintf("pack version %d", v))
	}
	count := binary.BigEndian.Uint32(hdr[8:12])
	if over(int64(count), int64(lim.MaxObjects)) {
		return &Error{Reason: ReasonLimitExceeded, sentinel: ErrLimitExceeded, Message: fmt.Sprintf(
			"fetching %s: the pack holds %d objects: %v: object count limit (--%s=%d); %s",
			remote, count, ErrLimitExceeded, FlagMaxObjects, lim.MaxObjects, raiseLimit)}
	}
	var total int64
	var zr io.ReadCloser
	for i := uint32(0); i < count; i++ {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		typ, size, err := objectHeader(br)
		if err != nil {
			return malformed(remote, err.Error())
		}
		if zr, err = inflater(zr, br); err != nil {
			return malformed(remote, "object data: "+err.Error())
		}
		unpacked, err := checkObject(zr, typ, size, lim, remote)
		if err != nil {
			return err
		}
		if total += unpacked; over(total, lim.MaxCheckoutBytes) {
			return limitErr(fmt.Sprintf("fetching %s: the objects received unpack to more than %s", remote, humanSize(lim.MaxCheckoutBytes)),
				"checkout size limit", lim.MaxCheckoutBytes, FlagMaxCheckoutSize)
		}
	}
	return nil
}

// inflater is a zlib reader of br: zr reset, or a new one.
func inflater(zr io.ReadCloser, br *bufio.Reader) (io.ReadCloser, error) {
	if zr == nil {
		return zlib.NewReader(br)
	}
	return zr, zr.(zlib.Resetter).Reset(br, nil)
}

// checkObject reads one object's data from zr, whose header gave typ and
// size, and returns the size it unpacks to; an object over the limit of
// one file is an error.
func checkObject(zr io.Reader, typ byte, size int64, lim Limits, remote string) (int64, error) {
	unpacked := size
	if typ == objOfsDelta || typ == objRefDelta {
		// A delta's header gives the size of its instructions, which
		// go-git also holds in memory; bound both by the object's limit
		// (instructions that insert everything are a little larger than
		// what they make).
		if over(size, 2*lim.MaxFileBytes) {
			return 0, objectTooLarge(remote, size, lim)
		}
		var read int64
		var err error
		if unpacked, read, err = deltaTargetSize(zr); err != nil {
			return 0, malformed(remote, "delta: "+err.Error())
		}
		size -= read
	}
	if over(unpacked, lim.MaxFileBytes) {
		return 0, objectTooLarge(remote, unpacked, lim)
	}
	if err := drain(zr, size); err != nil {
		return 0, malformed(remote, "object data: "+err.Error())
	}
	return unpacked, nil
}

// objectHeader reads an object's type and size (the size of the object,
// or of a delta's instructions) and skips a delta's base reference.
func objectHeader(br *bufio.Reader) (typ byte, size int64, err error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	typ = (c >> 4) & 7
	size = int64(c & 0x0f)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 56 {
			return 0, 0, errors.New("object size overflows")
		}
		if c, err = br.ReadByte(); err != nil {
			return 0, 0, err
		}
		size |= int64(c&0x7f) << shift
	}
	switch typ {
	case objCommit, objTree, objBlob, objTag:
	case objOfsDelta:
		for {
			if c, err = br.ReadByte(); err != nil {
				return 0, 0, err
			}
			if c&0x80 == 0 {
				break
			}
		}
	case objRefDelta:
		if _, err = br.Discard(20); err != nil {
			return 0, 0, err
		}
	default:
		return 0, 0, fmt.Errorf("object type %d", typ)
	}
	return typ, size, nil
}

// deltaTargetSize reads the two sizes that start a delta's instructions
// (base, then result) and returns the result's size and the bytes read.
func deltaTargetSize(r io.Reader) (target, read int64, err error) {
	var b [1]byte
	varint := func() (int64, error) {
		var v int64
		for shift := 0; ; shift += 7 {
			if shift > 56 {
				return 0, errors.New("size overflows")
			}
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return 0, err
			}
			read++
			v |= int64(b[0]&0x7f) << shift
			if b[0]&0x80 == 0 {
				return v, nil
			}
		}
	}
	if _, err = varint(); err != nil {
		return 0, 0, err
	}
	target, err = varint()
	return target, read, err
}

// drain reads exactly n more bytes of an object and its zlib trailer: an
// object that inflates to more than its header said is malformed, and
// stops being read there.
func drain(zr io.Reader, n int64) error {
	if got, err := io.CopyN(io.Discard, zr, n); err != nil {
		return fmt.Errorf("%d of %d bytes: %w", got, n, err)
	}
	var b [1]byte
	if k, err := zr.Read(b[:]); k != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			err = errors.New("longer than its header says")
		}
		return err
	}
	return nil
}

func malformed(remote, why string) error {
	return &Error{Reason: ReasonGitFailed, Message: fmt.Sprintf("fetching %s: the server sent a %v (%s)", remote, errMalformedPack, why)}
}

func objectTooLarge(remote string, size int64, lim Limits) error {
	return limitErr(fmt.Sprintf("fetching %s: the server sent an object (a file, directory listing or commit) of %s", remote, humanSize(size)),
		"file size limit", lim.MaxFileBytes, FlagMaxFileSize)
}
