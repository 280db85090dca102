/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRepositoryLinks: every relative link of the repository's Markdown
// files (README, docs/, examples/) leads to a file, directory or heading
// that exists.
func TestRepositoryLinks(t *testing.T) {
	problems, err := check(filepath.Join("..", ".."))
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestCheckFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(path, content string) {
		full := filepath.Join(root, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	write("docs/a.md", "# Title\n\n## What `make demo` shows\n\n## Twice\n\n## Twice\n")
	write("src/main.go", "package main\n")
	write("README.md", `# Readme

[ok file](docs/a.md) [ok dir](src/) [ok anchor](docs/a.md#what-make-demo-shows)
[repeat](docs/a.md#twice-1) [here](#readme) [web](https://example.com/missing)
[missing](docs/b.md) [bad anchor](docs/a.md#nothing) [bad here](#nowhere)
`+"`[in code](nope.md)`"+`
[ref]: reference/missing.md

`+"```"+`
[in a fence](fenced.md)
`+"```"+`
`)
	problems, err := check(root)
	require.NoError(t, err)
	readme := filepath.Join(root, "README.md")
	assert.Equal(t, []string{
		readme + ":5: docs/b.md: no such file or directory",
		readme + ":5: docs/a.md#nothing: no heading with that anchor",
		readme + ":5: #nowhere: no heading with that anchor",
		readme + ":7: reference/missing.md: no such file or directory",
	}, problems)
}
