/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// image.go: images written without docker (WriteImageArchive, the
// controller's in the Dockerfile's layout) and read back (ArchiveLayout).

package cluster

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Image is a one-layer image built FROM scratch.
type Image struct {
	// Files are the regular files of the layer; their parent directories
	// are added as a Dockerfile's COPY adds them.
	Files []ImageFile
	// Entrypoint and User are the image's config (USER, ENTRYPOINT).
	Entrypoint []string
	User       string
}

// ImageFile is one file: its absolute path in the image and the file on
// this machine it is copied from.
type ImageFile struct {
	Path, Source string
	Mode         int64
}

// caBundle is the CA bundle the Dockerfile copies from its build image
// (golang, Debian) to the same path: Debian's, as here.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

// ControllerImage is the Dockerfile's final stage with binary as
// /bg-gitops: FROM scratch, the CA bundle, USER 65532:65532, ENTRYPOINT
// ["/bg-gitops"]. TestControllerImageHasTheDockerfilesLayout checks the two
// agree.
func ControllerImage(binary string) Image {
	return Image{
		Files: []ImageFile{
			{Path: caBundle, Source: caBundle, Mode: 0o644},
			{Path: "/bg-gitops", Source: binary, Mode: 0o755},
		},
		Entrypoint: []string{"/bg-gitops"},
		User:       "65532:65532",
	}
}

// WriteImageArchive writes img tagged ref as a docker-save archive (what
// `ctr images import` reads) to out.
func WriteImageArchive(out, ref string, img Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	layerTar, err := img.layer()
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return err
	}
	i, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cf, err := i.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Config.Entrypoint, cf.Config.User = img.Entrypoint, img.User
	// As docker build sets it in a FROM scratch image.
	cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if i, err = mutate.ConfigFile(i, cf); err != nil {
		return err
	}
	if err := tarball.WriteToFile(out, tag, i); err != nil {
		return fmt.Errorf("write image %s: %w", ref, err)
	}
	return nil
}

// layer is the tar of the files and their parent directories, sorted,
// owned by root, with a fixed time.
func (img Image) layer() ([]byte, error) {
	dirs := map[string]bool{}
	for _, f := range img.Files {
		for d := path.Dir(f.Path); d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	type entry struct {
		name string
		file *ImageFile
	}
	var entries []entry
	for d := range dirs {
		entries = append(entries, entry{name: strings.TrimPrefix(d, "/") + "/"})
	}
	for i := range img.Files {
		entries = append(entries, entry{name: strings.TrimPrefix(img.Files[i].Path, "/"), file: &img.Files[i]})
	}
	sort.Slice(entries, func(a, b int) bool { return entries[a].name < entries[b].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if e.file == nil {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: e.name, Mode: 0o755}); err != nil {
				return nil, err
			}
			continue
		}
		data, err := os.ReadFile(e.file.Source)
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.file.Mode, Size: int64(len(data))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ArchiveLayout reads an archive WriteImageArchive wrote: the paths of its
// layer (directories end in /) and its config.
func ArchiveLayout(archive string) ([]string, *v1.Config, error) {
	i, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		return nil, nil, err
	}
	cf, err := i.ConfigFile()
	if err != nil {
		return nil, nil, err
	}
	layers, err := i.Layers()
	if err != nil {
		return nil, nil, err
	}
	var paths []string
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, nil, err
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				rc.Close()
				return nil, nil, err
			}
			paths = append(paths, "/"+h.Name)
		}
		rc.Close()
	}
	return paths, &cf.Config, nil
}
