/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// yamlNodes returns, without parsing, an upper bound of the YAML nodes a
// parser builds from data. That is what kustomize's memory grows with
// (measured: about half a KiB of heap per node counted here, whatever the
// shape: block mappings, lists of scalars, flow lists, Deployments), while
// bytes say little (8 MiB in one string cost ~90 MiB of heap; 256 KiB of
// flow list, ~140 MiB). It has to be known before kustomize parses a file:
// a parse cannot be interrupted, and kustomize keeps what it parsed.
//
// The scanner follows the tokenizer of go.yaml.in/yaml/v3 (the parser of
// kustomize) closely enough to know where scalars begin and end and what
// the block indentation is, so that it can leave out text that is only
// text: the content of a block or quoted scalar (a dashboard in a
// ConfigMap is one node, not thousands; so is one in a sequence; its text
// counts apart, readNodes). Every other byte counts, and a
// scalar's content counts as if it were YAML wherever kustomize may parse
// it again: under a key whose string kustomize parses (reparsedKeys) or in
// a sequence under one, anchored, or under a key the scanner cannot read.
// From anything it does not follow exactly (a tab in the indentation, a
// line break other than \n, what YAML rejects) to the end of the document,
// it counts every indicator (crudeNodes), an upper bound whatever the text
// means. Shapes that cost kustomize time with their square count more
// (manyKeys, deepNesting). FuzzYAMLNodes checks the bound against the
// parser.
//
// crude counts the whole input that way; for kustomization files, whose
// inline configs and patches kustomize parses again.
func yamlNodes(data []byte, crude bool) int64 {
	if len(data) == 0 {
		return 0
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if crude || !plainText(data) {
		return crudeNodes(data)
	}
	s := &yamlScanner{n: 1} // the first document
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		s.line(bytes.TrimSuffix(line, []byte("\r")))
	}
	return s.n
}

// plainText reports whether data holds none of what the scanner leaves to
// crudeNodes: a line break other than \n and \r\n (YAML also breaks lines
// at a lone \r and at U+0085, U+2028, U+2029), NUL bytes (UTF-16, which
// go-yaml reads too), a byte order mark past the start, or bytes that
// cannot be UTF-8.
func plainText(data []byte) bool {
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case 0, 0xfe, 0xff:
			return false
		case '\r':
			if i+1 < len(data) && data[i+1] != '\n' {
				return false
			}
		case 0xc2:
			if i+1 < len(data) && data[i+1] == 0x85 {
				return false
			}
		case 0xe2:
			if i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xa8 || data[i+2] == 0xa9) {
				return false
			}
		case 0xef:
			if i+2 < len(data) && data[i+1] == 0xbb && data[i+2] == 0xbf {
				return false
			}
		}
	}
	return true
}

// crudeNodes bounds the nodes of any YAML text, and of its strings parsed
// again. Every node but a document and its first node starts at the
// beginning of a line or after one of the indicators counted here; no
// indicator starts more than three (after ':', a new block mapping, a key
// and a value), and a scalar parsed again adds a document and its root. A
// backslash may be an escape that a double-quoted string turns into any
// indicator once the string is parsed again; a tag may decode a scalar into
// anything (!!binary), so from a tag on every byte counts.
func crudeNodes(b []byte) int64 {
	return 4 + crudeBody(b) // a document and its first node, parsed again
}

// crudeBody is crudeNodes without a document: for text that goes on from
// a line counted already.
func crudeBody(b []byte) int64 {
	var n int64
	for i, c := range b {
		switch c {
		case '\n':
			n += 3
		case ':', '?', '-', ',', '[', '{', '\\', '*':
			n += 5
		case '!':
			return n + 5*int64(len(b)-i)
		}
	}
	return n
}

// reparsedKeys are the keys whose string values kustomize parses as YAML
// again: kustomization fields and builtin plugin config fields, matched
// without case as encoding/json matches them.
var reparsedKeys = map[string]bool{
	"patch": true, "patches": true, "jsonop": true, "patchesstrategicmerge": true,
	"patchesjson6902": true, "generators": true, "transformers": true, "validators": true,
}

// reparsed reports whether the value of a key written as key (quotes
// included) may be parsed again. A key with escapes or non-ASCII bytes may
// decode or fold (encoding/json folds ſ into s and K into k) into one of
// reparsedKeys; an alias may stand for one.
func reparsed(key []byte) bool {
	if len(key) == 0 || key[0] == '*' || bytes.IndexByte(key, '\\') >= 0 {
		return true
	}
	for _, c := range key {
		if c >= 0x80 {
			return true
		}
	}
	k := strings.Trim(string(key), `"'`)
	return reparsedKeys[strings.ToLower(k)]
}

// yamlScanner is the state of yamlNodes.
type yamlScanner struct {
	n int64

	// crude: the rest of the document counts with crudeNodes.
	crude bool
	// tagged: a tag was seen; the rest of the document counts 5 per byte.
	tagged bool
	// indents is go-yaml's stack of block collections by indentation; the
	// top's column is go-yaml's parser.indent (-1 when empty).
	indents []level
	// flow holds the open flow collections ('[' or '{'), their columns,
	// and whether their entries may be parsed again.
	flow      []byte
	flowCol   []int
	flowAgain []bool
	flowKeys  []int

	// quote is the quote of a scalar still open at the end of the last
	// line; quoteCounts: its content counts.
	quote       byte
	quoteCounts bool

	// block is set inside the content of a block scalar.
	block       bool
	blockCounts bool
	blockParent int // go-yaml's parser.indent at the scalar
	blockIndent int // indentation of its content once known (0: not yet)
	blockBlank  int // most spaces on its leading empty lines

	// plain: the last line ended inside a plain scalar, which goes on on
	// lines indented more than plainParent (in a flow, on any line).
	plain       bool
	plainParent int
	// again: the last line ended where a node may start that kustomize
	// may parse again (after the ':' of such a key).
	again bool

	// cur is the line being scanned; colAt and colValue cache col.
	cur             []byte
	colAt, colValue int
}

// level is an open block collection.
type level struct {
	col int
	seq bool
	// again: the entries of this sequence, or the value of this
	// mapping's last key, may be parsed again.
	again bool
	keys  int // of a mapping
}

// Two shapes cost kustomize time with their square, with no file operation
// in between: one mapping with many keys, and deep nesting (kyaml's alias
// expansion, on every read, sets every key of a mapping with a linear
// search, and copies every mapping's subtree). They count more: a key
// beyond manyKeys in one mapping counts one node more per manyKeys keys
// before it, and a scalar one more per deepNesting levels it is nested in.
// (Measured without: 80,000 keys in one mapping took 46 s, a mapping
// nested 9,000 deep 18 s.)
const (
	manyKeys    = 1024
	deepNesting = 16
)

// maxDepth is go-yaml's limit of nested collections (max_flow_level and
// max_indents): beyond it go-yaml fails, and the scanner counts crudely.
const maxDepth = 10000

// key counts a key of a mapping that has keys keys now.
func (s *yamlScanner) key(keys int) {
	if keys > manyKeys {
		s.n += int64(keys / manyKeys)
	}
}

// scalar counts a scalar (and what its nesting costs).
func (s *yamlScanner) scalar() {
	s.n += 1 + int64((len(s.indents)+len(s.flow))/deepNesting)
}

func (s *yamlScanner) newDocument() {
	s.n += 2 // a document, and its root if that is empty
	s.crude, s.tagged = false, false
	s.indents = s.indents[:0]
	s.flow, s.flowCol, s.flowAgain, s.flowKeys = s.flow[:0], s.flowCol[:0], s.flowAgain[:0], s.flowKeys[:0]
	s.quote, s.quoteCounts = 0, false
	s.block, s.blockCounts = false, false
	s.plain = false
}

func (s *yamlScanner) indent() int {
	if len(s.indents) == 0 {
		return -1
	}
	return s.indents[len(s.indents)-1].col
}

func (s *yamlScanner) top() *level {
	if len(s.indents) == 0 {
		return nil
	}
	return &s.indents[len(s.indents)-1]
}

// roll opens a block collection at col, as go-yaml does for a key, '-' or
// '?' deeper than the current indentation: one node.
func (s *yamlScanner) roll(col int, seq, again bool) {
	if len(s.indents) >= maxDepth {
		s.crude = true // go-yaml refuses it; and the stack stays small
		return
	}
	if len(s.flow) == 0 && col > s.indent() {
		s.indents = append(s.indents, level{col: col, seq: seq, again: again})
		s.n++
	}
}

// unroll closes the block collections deeper than col, the column of the
// first token of a line.
func (s *yamlScanner) unroll(col int) {
	if len(s.flow) > 0 {
		return
	}
	for len(s.indents) > 0 && s.indents[len(s.indents)-1].col > col {
		s.indents = s.indents[:len(s.indents)-1]
	}
}

// col is the column of cur[i] as go-yaml counts it (characters); i must
// not decrease within a line.
func (s *yamlScanner) col(i int) int {
	if i < s.colAt {
		s.colAt, s.colValue = 0, 0
	}
	s.colValue += utf8.RuneCount(s.cur[s.colAt:i])
	s.colAt = i
	return s.colValue
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// blankz reports whether line[i] is a blank or the end of the line.
func blankz(line []byte, i int) bool { return i >= len(line) || isBlank(line[i]) }

func isDocMarker(line []byte) bool {
	return len(line) >= 3 && (string(line[:3]) == "---" || string(line[:3]) == "...") && blankz(line, 3)
}

// toCrude counts the rest of the document with crudeNodes, from rest.
func (s *yamlScanner) toCrude(rest []byte) {
	s.crude = true
	s.n += crudeNodes(rest)
}

// line scans one line, without its line break.
func (s *yamlScanner) line(line []byte) {
	s.cur, s.colAt, s.colValue = line, 0, 0
	if isDocMarker(line) {
		// go-yaml ends any scalar here (or fails), and kustomize splits
		// its files here.
		s.newDocument()
		s.tokens(line, 3, tokenState{start: true})
		return
	}
	switch {
	case s.tagged:
		s.n += 5 * int64(len(line)+1)
		return
	case s.crude:
		s.n += 3 + crudeBody(line)
		return
	case s.block && s.blockLine(line):
		return
	case s.quote != 0:
		q := s.quote
		end, closed := s.quoted(line, 0, q, s.quoteCounts)
		if closed {
			s.quote = 0
			s.tokens(line, end, tokenState{node: true, cont: true})
		}
		return
	}
	spaces := 0
	for spaces < len(line) && line[spaces] == ' ' {
		spaces++
	}
	switch {
	case spaces == len(line):
		return // empty: part of a plain scalar, or nothing
	case line[spaces] == '\t':
		s.toCrude(line) // go-yaml's rules for tabs are not followed here
		return
	case line[spaces] == '#':
		s.plain = false // a comment ends a plain scalar
		return
	case s.plain && (len(s.flow) > 0 || spaces > s.plainParent):
		// The plain scalar of the last line goes on.
		s.tokens(line, spaces, tokenState{inPlain: true, cont: true, parent: s.plainParent})
		return
	}
	s.plain = false
	if spaces == 0 && line[0] == '%' {
		return // a directive
	}
	s.unroll(spaces)
	s.tokens(line, spaces, tokenState{start: true, again: s.again})
}

// blockLine handles a line inside a block scalar; false when the line ends
// the scalar and is to be scanned as usual. It follows go-yaml: the content
// is indented by the most spaces of its leading empty lines or its first
// line, and at least one more than the parent; a line indented less ends it.
func (s *yamlScanner) blockLine(line []byte) bool {
	spaces := 0
	for spaces < len(line) && line[spaces] == ' ' {
		spaces++
	}
	if spaces < len(line) && line[spaces] == '\t' && (s.blockIndent == 0 || spaces < s.blockIndent) {
		s.block = false
		s.toCrude(line) // go-yaml: a tab where indentation is expected
		return true
	}
	if spaces == len(line) {
		if s.blockIndent == 0 {
			s.blockBlank = max(s.blockBlank, spaces)
		}
		return true
	}
	if s.blockIndent == 0 {
		s.blockIndent = max(s.blockBlank, spaces, s.blockParent+1, 1)
	}
	if spaces < s.blockIndent {
		s.block = false
		return false
	}
	if s.blockCounts {
		s.n += 3 + crudeBody(line)
	}
	return true
}

// tokenState is where the scan of a line stands.
type tokenState struct {
	start   bool // a token may start here
	node    bool // a node just ended (it is a key if ':' follows)
	inPlain bool // inside a plain scalar
	cont    bool // that node began on an earlier line
	alias   bool // that node is an alias
	nodeCol int  // where that node, with its properties, began (column)
	name    int  // where that node's own text began (offset), for its key name
	parent  int  // go-yaml's indentation when the plain scalar began
	// again: the next node may be parsed again by kustomize: the value of
	// a key in reparsedKeys or one that cannot be read here, or an entry of
	// a sequence that is. Only then does a scalar's text count.
	again bool
	// props: the next node has properties (an anchor); propsCol: where
	// they began.
	props    bool
	propsCol int
}

// quoted skips a quoted scalar from line[i] (past the opening quote, or at
// the start of a continuation line); it returns the offset past the
// closing quote, or false when the scalar goes on on the next line.
func (s *yamlScanner) quoted(line []byte, i int, q byte, counts bool) (int, bool) {
	for j := i; j < len(line); j++ {
		switch c := line[j]; {
		case q == '"' && c == '\\':
			j++ // crudeNodes counts the backslash
		case q == '\'' && c == '\'' && j+1 < len(line) && line[j+1] == '\'':
			j++
		case c == q:
			if counts {
				s.n += crudeBody(line[i:j])
			}
			return j + 1, true
		}
	}
	if counts {
		s.n += 3 + crudeBody(line[i:]) // and the next line
	}
	return 0, false
}

// anchorEnd returns the end of an anchor or alias name at line[i] (past
// '&' or '*'): go-yaml takes [0-9A-Za-z_-]+ and wants a blank or one of
// ?:,]}%@` after it.
func anchorEnd(line []byte, i int) (int, bool) {
	j := i
	for j < len(line) {
		c := line[j]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '-') {
			break
		}
		j++
	}
	if j == i {
		return 0, false
	}
	if !blankz(line, j) && strings.IndexByte("?:,]}%@`", line[j]) < 0 {
		return 0, false
	}
	return j, true
}

// tokens scans the tokens of line from i.
func (s *yamlScanner) tokens(line []byte, i int, st tokenState) {
	s.plain = false // unless the line ends inside a plain scalar
	// A value on the next line is a value of the same key, if any.
	defer func() { s.again = st.start && st.again }()
	for i < len(line) {
		c := line[i]
		if st.inPlain {
			switch {
			case isBlank(c):
				if i+1 < len(line) && line[i+1] == '#' {
					return // a comment ends it
				}
				i++
				continue
			case c == ':' && blankz(line, i+1),
				len(s.flow) > 0 && strings.IndexByte(",?[]{}", c) >= 0:
				st.inPlain, st.node = false, true
				continue // the indicator, below
			}
			i++
			continue
		}
		if isBlank(c) {
			i++
			continue
		}
		if c == '#' {
			return // go-yaml: a comment wherever a token may start
		}
		switch {
		case c == '[' || c == '{':
			if !st.start {
				s.toCrude(line[i:])
				return
			}
			col := st.propsCol
			if !st.props {
				col = s.col(i)
			}
			if len(s.flow) >= maxDepth {
				s.toCrude(line[i:]) // go-yaml refuses it; and the stacks stay small
				return
			}
			again := st.again || st.props || (len(s.flowAgain) > 0 && s.flowAgain[len(s.flowAgain)-1])
			s.flow, s.flowCol, s.flowAgain = append(s.flow, c), append(s.flowCol, col), append(s.flowAgain, again)
			s.flowKeys = append(s.flowKeys, 1)
			s.n++ // the collection
			if c == '{' {
				s.n++ // a null key or value in its first entry
			}
			st = tokenState{start: true, again: again}
			i++
			continue
		case c == ']' || c == '}':
			if len(s.flow) == 0 || (c == ']') != (s.flow[len(s.flow)-1] == '[') {
				s.toCrude(line[i:])
				return
			}
			col := s.flowCol[len(s.flowCol)-1]
			k := len(s.flow) - 1
			s.flow, s.flowCol, s.flowAgain, s.flowKeys = s.flow[:k], s.flowCol[:k], s.flowAgain[:k], s.flowKeys[:k]
			// As a key, its text is not a name: nothing left out after it.
			st = tokenState{node: true, nodeCol: col, name: -1}
			i++
			continue
		case c == ',':
			if len(s.flow) == 0 {
				s.toCrude(line[i:])
				return
			}
			// A null key or value in the next entry of a mapping; in a
			// sequence, a weight: kustomize's heap grows twice as fast
			// with flow entries as with block ones.
			s.n++
			if k := len(s.flowKeys) - 1; s.flow[k] == '{' {
				s.flowKeys[k]++
				s.key(s.flowKeys[k])
			}
			st = tokenState{start: true, again: s.flowAgain[len(s.flowAgain)-1]}
			i++
			continue
		case c == '-' && blankz(line, i+1) && len(s.flow) == 0:
			if !st.start {
				s.toCrude(line[i:])
				return
			}
			// The entries of a sequence under a key parsed again are too.
			again := false
			if t := s.top(); t != nil {
				again = t.again
			}
			s.roll(s.col(i), true, again)
			s.n++ // a null entry, if nothing follows
			st = tokenState{start: true, again: again}
			i++
			continue
		case c == '?' && (len(s.flow) > 0 || blankz(line, i+1)):
			if !st.start {
				s.toCrude(line[i:])
				return
			}
			s.roll(s.col(i), false, true)
			if t := s.top(); t != nil && len(s.flow) == 0 {
				t.again = true // its key cannot be read here
				t.keys++
				s.key(t.keys)
			}
			s.n += 2 // a null key and value, or a flow sequence's pair
			st = tokenState{start: true, again: true}
			i++
			continue
		case c == ':' && (len(s.flow) > 0 || blankz(line, i+1)):
			again := true // unless the key is one kustomize does not parse
			if st.node && !st.cont && !st.alias && st.name >= 0 {
				again = reparsed(bytes.TrimSpace(line[st.name:i]))
			}
			switch {
			case st.node && st.cont && len(s.flow) == 0:
				// A key over several lines: an error for go-yaml.
				s.toCrude(line[i:])
				return
			case st.node && len(s.flow) == 0:
				s.roll(st.nodeCol, false, again) // a key: its mapping starts there
				if t := s.top(); t != nil && !t.seq && t.col == st.nodeCol {
					t.again = again
					t.keys++
					s.key(t.keys)
				}
				s.n++ // a null value, if nothing follows
			case len(s.flow) == 0:
				// An explicit value, or a value with an empty key.
				s.roll(s.col(i), false, true)
				if t := s.top(); t != nil {
					t.again = true
				}
				s.n += 2
			case s.flow[len(s.flow)-1] == '[':
				s.n += 2 // a single-pair mapping, and a null
			}
			st = tokenState{start: true, again: again}
			i++
			continue
		}
		if !st.start {
			// Anything else right after a node: an error for go-yaml.
			s.toCrude(line[i:])
			return
		}
		switch c {
		case '!':
			// A tag may decode the scalar into anything.
			s.tagged = true
			s.n += 5 * int64(len(line)-i+1)
			return
		case '&', '*':
			end, ok := anchorEnd(line, i+1)
			if !ok {
				s.toCrude(line[i:])
				return
			}
			col := st.propsCol
			if !st.props {
				col = s.col(i)
			}
			if c == '&' {
				s.n++ // the node may be an empty one
				st.props, st.propsCol = true, col
				i = end
				continue
			}
			s.scalar() // the alias
			st = tokenState{node: true, alias: true, nodeCol: col}
			i = end
			continue
		case '|', '>':
			if len(s.flow) > 0 || !blockHeader(line[i+1:]) {
				s.toCrude(line[i:])
				return
			}
			s.scalar()
			s.block = true
			s.blockCounts = st.again || st.props
			if s.blockCounts {
				s.n += 2 // the document and root it is parsed into
			}
			s.blockParent = s.indent()
			s.blockIndent, s.blockBlank = 0, 0
			if d := blockIndentDigit(line[i+1:]); d > 0 {
				s.blockIndent = max(s.blockParent, 0) + d
			}
			return
		case '"', '\'':
			s.scalar()
			col := st.propsCol
			if !st.props {
				col = s.col(i)
			}
			counts := st.again || st.props
			if counts {
				s.n += 2 // the document and root it is parsed into
			}
			end, closed := s.quoted(line, i+1, c, counts)
			if !closed {
				s.quote, s.quoteCounts = c, counts
				return
			}
			st = tokenState{node: true, nodeCol: col, name: i}
			i = end
			continue
		case '%', '@', '`':
			s.toCrude(line[i:])
			return
		}
		// A plain scalar (and the document and scalar it may be parsed into).
		s.scalar()
		if st.again || st.props {
			s.n += 2
		}
		col := st.propsCol
		if !st.props {
			col = s.col(i)
		}
		st = tokenState{inPlain: true, nodeCol: col, name: i, parent: s.indent()}
		i++
	}
	// The end of the line.
	s.plain = st.inPlain
	if st.inPlain {
		s.plainParent = st.parent
	}
}

// blockHeader reports whether rest (after '|' or '>') is a well-formed
// block scalar header: an indentation digit and a chomping indicator, in
// either order, then nothing but blanks and a comment.
func blockHeader(rest []byte) bool {
	i := 0
	digit, chomp := false, false
	for ; i < len(rest); i++ {
		c := rest[i]
		if c >= '1' && c <= '9' && !digit {
			digit = true
		} else if (c == '+' || c == '-') && !chomp {
			chomp = true
		} else {
			break
		}
	}
	if i == len(rest) {
		return true
	}
	if !isBlank(rest[i]) {
		return false
	}
	for i < len(rest) && isBlank(rest[i]) {
		i++
	}
	return i == len(rest) || rest[i] == '#'
}

func blockIndentDigit(rest []byte) int {
	for i := 0; i < len(rest) && i < 2; i++ {
		if rest[i] >= '1' && rest[i] <= '9' {
			return int(rest[i] - '0')
		}
	}
	return 0
}
