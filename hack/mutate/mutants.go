/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// mutants.go: mutant, one change to one file, and generate, which walks the
// package's non-test files and lists the mutants of each kind.

package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Kinds of mutation.
const (
	kindNegate   = "CONDITIONAL_NEGATED"  // == ↔ !=, < ↔ >=, > ↔ <=
	kindBoundary = "CONDITIONAL_BOUNDARY" // < ↔ <=, > ↔ >=
	kindLogical  = "LOGICAL"              // && ↔ ||
	kindNot      = "NOT_REMOVED"          // !x → x
	kindArith    = "ARITHMETIC"           // + ↔ -, * ↔ /
	kindIncDec   = "INCDEC"               // ++ ↔ --
	kindStmt     = "STATEMENT_REMOVED"    // a call, an assignment, an early return, …
	kindReturn   = "RETURN_CONSTANT"      // a returned value replaced by a constant
)

// mutant is one change to one file: the bytes [start, end) of the file
// become repl. Line numbers stay as they are (a removed statement keeps
// its newlines), so a stack trace of a mutant points at the source.
type mutant struct {
	ID         int
	File       string // relative to the package directory
	Line, Col  int
	Func       string // enclosing function, for humans and for keys
	Kind       string
	What       string // the mutation, one line
	start, end int
	repl       string
}

// Where is file:line:col.
func (m *mutant) Where() string { return fmt.Sprintf("%s:%d:%d", m.File, m.Line, m.Col) }

// Key names the mutant without its line number, so that a note about it
// (docs/mutation.md) survives edits elsewhere in the file.
func (m *mutant) Key() string { return fmt.Sprintf("%s %s: %s", m.File, m.Func, m.What) }

// apply returns the file's source with the mutation.
func (m *mutant) apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.repl))
	out = append(out, src[:m.start]...)
	out = append(out, m.repl...)
	return append(out, src[m.end:]...)
}

// generate lists the mutants of the non-test Go files of dir.
func generate(dir string) ([]*mutant, map[string][]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	srcs := map[string][]byte{}
	var all []*mutant
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		name := filepath.Base(path)
		srcs[name] = src
		ms, err := fileMutants(name, src)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, ms...)
	}
	for i, m := range all {
		m.ID = i + 1
	}
	return all, srcs, nil
}

// gen walks one file.
type gen struct {
	name string
	src  []byte
	fset *token.FileSet
	out  []*mutant
	fn   string // current top-level function
}

func fileMutants(name string, src []byte) ([]*mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	g := &gen{name: name, src: src, fset: fset}
	for _, decl := range f.Decls {
		g.fn = "(package)"
		if fd, ok := decl.(*ast.FuncDecl); ok {
			g.fn = fd.Name.Name
		}
		g.walk(decl, nil)
	}
	sort.SliceStable(g.out, func(i, j int) bool { return g.out[i].start < g.out[j].start })
	return g.out, nil
}

// walk visits n; results is the result list of the innermost enclosing
// function (nil outside functions).
func (g *gen) walk(n ast.Node, results *ast.FieldList) {
	ast.Inspect(n, func(c ast.Node) bool {
		switch x := c.(type) {
		case *ast.FuncDecl:
			if x != n {
				return false
			}
			if x.Body != nil {
				g.block(x.Body.List, true)
				g.walk(x.Body, x.Type.Results)
			}
			return false
		case *ast.FuncLit:
			g.block(x.Body.List, true)
			g.walk(x.Body, x.Type.Results)
			return false
		case *ast.BlockStmt:
			if x != n { // a function body is handled by its FuncDecl/FuncLit
				g.block(x.List, false)
			}
		case *ast.CaseClause:
			g.block(x.Body, false)
		case *ast.CommClause:
			g.block(x.Body, false)
		case *ast.BinaryExpr:
			g.binary(x)
		case *ast.UnaryExpr:
			if x.Op == token.NOT {
				g.add(x.OpPos, kindNot, x.OpPos, x.OpPos+1, "", fmt.Sprintf("`%s` → `%s`", g.text(x), g.text(x.X)))
			}
		case *ast.IncDecStmt:
			op, inv := "++", "--"
			if x.Tok == token.DEC {
				op, inv = inv, op
			}
			g.add(x.TokPos, kindIncDec, x.TokPos, x.TokPos+2, inv, fmt.Sprintf("`%s%s` → `%s%s`", g.text(x.X), op, g.text(x.X), inv))
		case *ast.ReturnStmt:
			g.returns(x, results)
		}
		return true
	})
}

var negated = map[token.Token]token.Token{
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.LSS: token.GEQ, token.GEQ: token.LSS,
	token.GTR: token.LEQ, token.LEQ: token.GTR,
}

var boundary = map[token.Token]token.Token{
	token.LSS: token.LEQ, token.LEQ: token.LSS,
	token.GTR: token.GEQ, token.GEQ: token.GTR,
}

func (g *gen) binary(x *ast.BinaryExpr) {
	if op, ok := negated[x.Op]; ok {
		g.swapOp(x, kindNegate, op)
	}
	if op, ok := boundary[x.Op]; ok {
		g.swapOp(x, kindBoundary, op)
	}
	switch x.Op {
	case token.LAND:
		g.swapOp(x, kindLogical, token.LOR)
	case token.LOR:
		g.swapOp(x, kindLogical, token.LAND)
	case token.ADD:
		// String concatenation has no minus: skip the obvious cases
		// (a string literal on either side); the rest do not compile
		// and are reported as not viable.
		if !stringy(x) {
			g.swapOp(x, kindArith, token.SUB)
		}
	case token.SUB:
		g.swapOp(x, kindArith, token.ADD)
	case token.MUL:
		g.swapOp(x, kindArith, token.QUO)
	case token.QUO:
		g.swapOp(x, kindArith, token.MUL)
	}
}

// stringy reports whether a + chain has a string literal operand.
func stringy(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.STRING || x.Kind == token.CHAR
	case *ast.BinaryExpr:
		return x.Op == token.ADD && (stringy(x.X) || stringy(x.Y))
	case *ast.ParenExpr:
		return stringy(x.X)
	}
	return false
}

// swapOp replaces the operator of x. The expression is rewritten with
// parentheses, so that an operator of another precedence (&& ↔ ||) keeps
// the tree it had.
func (g *gen) swapOp(x *ast.BinaryExpr, kind string, op token.Token) {
	repl := "(" + g.paren(x.X) + " " + op.String() + " " + g.paren(x.Y) + ")"
	g.add(x.OpPos, kind, x.Pos(), x.End(), repl, fmt.Sprintf("`%s` → `%s` in `%s`", x.Op, op, g.text(x)))
}

func (g *gen) paren(e ast.Expr) string {
	if _, ok := e.(*ast.BinaryExpr); ok {
		return "(" + g.text(e) + ")"
	}
	return g.src0(e)
}

// block offers each removable statement of a statement list. top is a
// function body, whose last bare return does nothing.
func (g *gen) block(list []ast.Stmt, top bool) {
	for i, s := range list {
		switch x := s.(type) {
		case *ast.ExprStmt, *ast.IncDecStmt, *ast.DeferStmt, *ast.GoStmt, *ast.SendStmt:
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				continue
			}
		case *ast.ReturnStmt:
			if len(x.Results) != 0 || (top && i == len(list)-1) {
				continue
			}
		case *ast.BranchStmt:
			if x.Tok != token.BREAK && x.Tok != token.CONTINUE {
				continue
			}
		default:
			continue
		}
		// Keep the newlines of a statement spread over lines.
		repl := strings.Repeat("\n", strings.Count(g.src0(s), "\n"))
		g.add(s.Pos(), kindStmt, s.Pos(), s.End(), repl, fmt.Sprintf("removed `%s`", g.text(s)))
	}
}

// returns replaces each returned value of a type with an obvious constant
// (bool, string, integer, pointer, error, slice, map) by that constant.
func (g *gen) returns(r *ast.ReturnStmt, results *ast.FieldList) {
	if results == nil || len(r.Results) == 0 {
		return
	}
	var types []string
	for _, f := range results.List {
		n := len(f.Names)
		if n == 0 {
			n = 1
		}
		for i := 0; i < n; i++ {
			types = append(types, g.src0(f.Type))
		}
	}
	if len(types) != len(r.Results) {
		return // return f() of a multi-valued f
	}
	for i, e := range r.Results {
		for _, c := range constantsFor(types[i], g.src0(e)) {
			what := fmt.Sprintf("returns `%s` instead of `%s`", c, g.text(e))
			if len(types) > 1 {
				what = fmt.Sprintf("result %d: %s", i+1, what)
			}
			g.add(e.Pos(), kindReturn, e.Pos(), e.End(), c, what)
		}
	}
}

func constantsFor(typ, expr string) []string {
	var cs []string
	switch {
	case typ == "bool":
		cs = []string{"true", "false"}
	case typ == "string":
		cs = []string{`""`}
	case typ == "int" || typ == "int64" || typ == "int32" || typ == "time.Duration" || typ == "float64":
		cs = []string{"0"}
	case typ == "error" || strings.HasPrefix(typ, "*") || strings.HasPrefix(typ, "[]") || strings.HasPrefix(typ, "map["):
		cs = []string{"nil"}
	}
	var out []string
	for _, c := range cs {
		if c != expr {
			out = append(out, c)
		}
	}
	return out
}

func (g *gen) add(at token.Pos, kind string, start, end token.Pos, repl, what string) {
	p := g.fset.Position(at)
	g.out = append(g.out, &mutant{
		File: g.name, Line: p.Line, Col: p.Column, Func: g.fn, Kind: kind, What: what,
		start: g.fset.Position(start).Offset, end: g.fset.Position(end).Offset, repl: repl,
	})
}

// src0 is the exact source of n.
func (g *gen) src0(n ast.Node) string {
	return string(g.src[g.fset.Position(n.Pos()).Offset:g.fset.Position(n.End()).Offset])
}

// text is the source of n on one line, shortened.
func (g *gen) text(n ast.Node) string {
	s := strings.Join(strings.Fields(g.src0(n)), " ")
	if r := []rune(s); len(r) > 70 {
		s = string(r[:69]) + "…"
	}
	return s
}
