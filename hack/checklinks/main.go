/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command checklinks fails when a relative link in a Markdown file of the
// repository points at a file, a directory or a heading that does not
// exist. Links with a scheme (https:, mailto:) and links inside code are
// left alone; directories whose name starts with a dot, bin/ and testdata/
// are not searched.
//
//	go run ./hack/checklinks [ROOT]
//
// make verify runs it; its test runs the same check in make test.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	problems, err := check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Printf("%d broken relative links\n", len(problems))
		os.Exit(1)
	}
}

var (
	// inlineLink is [text](target) and ![alt](target), with an optional
	// "title"; reference is a [label]: target definition.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	reference  = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	heading    = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	linkText   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// check returns one line per broken link: file:line: target and why.
func check(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) (map[string]bool, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		a := headingAnchors(data)
		anchors[file] = a
		return a, nil
	}
	var problems []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		for _, l := range links(data) {
			target, anchor, _ := strings.Cut(l.target, "#")
			dest := file
			if target != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(target))
				if strings.HasPrefix(target, "/") {
					dest = filepath.Join(root, filepath.FromSlash(target))
				}
				info, err := os.Stat(dest)
				if err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: %s: no such file or directory", file, l.line, l.target))
					continue
				}
				if info.IsDir() || !strings.HasSuffix(dest, ".md") {
					continue
				}
			}
			if anchor == "" {
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				return nil, err
			}
			if !a[strings.ToLower(anchor)] {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: no heading with that anchor", file, l.line, l.target))
			}
		}
	}
	return problems, nil
}

type link struct {
	target string
	line   int
}

// links returns the relative link targets of a Markdown text, outside
// fenced code blocks and code spans.
func links(data []byte) []link {
	var out []link
	fence := ""
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := reference.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			if !scheme.MatchString(t) {
				out = append(out, link{target: t, line: n})
			}
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: lower case, punctuation other than - and _ dropped,
// spaces made hyphens, and -1, -2, … appended to repeats.
func headingAnchors(data []byte) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := slugify(linkText.ReplaceAllString(m[1], "$1"))
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

func slugify(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
