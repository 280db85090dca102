/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// json.go: WriteJSON, the report as JSON.

package review

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the report as indented JSON (schema SchemaVersion).
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
