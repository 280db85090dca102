/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cluster

import (
	"bufio"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The image the cluster tests run is the image users build: the files of
// the archive WriteImageArchive writes for ControllerImage, their
// directories, USER and ENTRYPOINT are those the Dockerfile's final stage
// declares.
func TestControllerImageHasTheDockerfilesLayout(t *testing.T) {
	want := dockerfileFinalStage(t, filepath.Join("..", "..", "..", "Dockerfile"))

	binary := filepath.Join(t.TempDir(), "bg-gitops")
	if err := os.WriteFile(binary, []byte("not a binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "image.tar")
	if err := WriteImageArchive(archive, "bg-gitops:layout", ControllerImage(binary)); err != nil {
		t.Fatal(err)
	}
	paths, cfg, err := ArchiveLayout(archive)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	if !reflect.DeepEqual(paths, want.paths) {
		t.Errorf("archive holds %q, the Dockerfile declares %q", paths, want.paths)
	}
	if cfg.User != want.user {
		t.Errorf("archive USER %q, Dockerfile %q", cfg.User, want.user)
	}
	if !reflect.DeepEqual(cfg.Entrypoint, want.entrypoint) {
		t.Errorf("archive ENTRYPOINT %q, Dockerfile %q", cfg.Entrypoint, want.entrypoint)
	}
}

type stage struct {
	paths      []string // files and the directories COPY creates; directories end in /
	user       string
	entrypoint []string
}

// dockerfileFinalStage reads the FROM scratch stage of a Dockerfile: its
// COPY destinations (a destination ending in / receives the source's base
// name), USER and ENTRYPOINT (exec form).
func dockerfileFinalStage(t *testing.T, file string) stage {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st stage
	final := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			final = fields[1] == "scratch"
			st = stage{}
		case "COPY":
			if !final {
				continue
			}
			var args []string
			for _, a := range fields[1:] {
				if !strings.HasPrefix(a, "--") {
					args = append(args, a)
				}
			}
			dest := args[len(args)-1]
			for _, src := range args[:len(args)-1] {
				p := dest
				if strings.HasSuffix(dest, "/") {
					p = dest + path.Base(src)
				}
				st.paths = append(st.paths, p)
			}
		case "USER":
			if final {
				st.user = fields[1]
			}
		case "ENTRYPOINT":
			if final {
				if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(sc.Text(), fields[0]))), &st.entrypoint); err != nil {
					t.Fatalf("ENTRYPOINT: %v", err)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !final || len(st.paths) == 0 {
		t.Fatalf("%s: no FROM scratch stage with COPY", file)
	}
	dirs := map[string]bool{}
	for _, p := range st.paths {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			dirs[d+"/"] = true
		}
	}
	for d := range dirs {
		st.paths = append(st.paths, d)
	}
	sort.Strings(st.paths)
	return st
}
