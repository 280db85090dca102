//go:build tools

// Package tools pins Gitea.
package tools

import _ "code.gitea.io/gitea"
