/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

const sample = `package p

func f(a, b, c bool, n int) (bool, string) {
	if a || b && c {
		n++
		return !a, "x"
	}
	for n > 0 {
		n = n - 1
		g(n,
			2)
	}
	return n <= 3, ""
}

func g(int, int) {}

func h() {
	if true {
		return
	}
	g(1, 2)
	return
}
`

// Every mutant is valid Go with the lines where they were, and changes
// exactly one thing.
func TestMutantsParseAndKeepLines(t *testing.T) {
	ms, err := fileMutants("p.go", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(sample, "\n")
	kinds := map[string]int{}
	for _, m := range ms {
		kinds[m.Kind]++
		out := string(m.apply([]byte(sample)))
		if out == sample {
			t.Errorf("%s %s changes nothing", m.Where(), m.What)
		}
		if got := strings.Count(out, "\n"); got != lines {
			t.Errorf("%s %s: %d lines, want %d", m.Where(), m.What, got, lines)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "p.go", out, 0); err != nil {
			t.Errorf("%s %s does not parse: %v\n%s", m.Where(), m.What, err, out)
		}
	}
	for _, k := range []string{kindNegate, kindBoundary, kindLogical, kindNot, kindArith, kindIncDec, kindStmt, kindReturn} {
		if kinds[k] == 0 {
			t.Errorf("no %s mutant in the sample", k)
		}
	}
	// The last bare return of a function does nothing: not a mutant.
	for _, m := range ms {
		if m.Func == "h" && m.Kind == kindStmt && m.Line == 23 {
			t.Errorf("the last return of h is offered: %s", m.What)
		}
	}
}

// Swapping && and || keeps the shape of the expression: a || b && c
// becomes a || (b || c), not (a || b) || c.
func TestLogicalSwapKeepsPrecedence(t *testing.T) {
	ms, err := fileMutants("p.go", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Kind != kindLogical || !strings.Contains(m.What, "`&&` → `||`") {
			continue
		}
		out := m.apply([]byte(sample))
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", out, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if be, ok := n.(*ast.BinaryExpr); ok && be.Op == token.LOR {
				if _, ok := be.X.(*ast.Ident); ok {
					if p, ok := be.Y.(*ast.ParenExpr); !ok || p.X.(*ast.BinaryExpr).Op != token.LOR {
						t.Errorf("a || b && c mutated to %s", out[be.Pos()-1:be.End()-1])
					}
				}
				return false
			}
			return true
		})
		return
	}
	t.Fatal("no && mutant")
}
