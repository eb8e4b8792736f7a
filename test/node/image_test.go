package node

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// savedImage is what an image tarball (`docker save` format) holds.
type savedImage struct {
	tags   []string
	config imageConfig
	// files maps each regular file's path in the image to its content.
	files map[string][]byte
	// modes maps each entry's path to its mode and owner.
	modes map[string]string
}

type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		Entrypoint []string `json:"Entrypoint"`
		Cmd        []string `json:"Cmd"`
		User       string   `json:"User"`
		Env        []string `json:"Env"`
	} `json:"config"`
}

// readSavedImage reads the single image of a `docker save` tarball and the
// files of its layers, later layers over earlier ones.
func readSavedImage(p string) (*savedImage, error) {
	entries := map[string][]byte{}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open image %s: %w", p, err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read image %s: %w", p, err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("read %s in %s: %w", h.Name, p, err)
		}
		entries[h.Name] = b
	}
	var manifest []struct {
		Config   string   `json:"Config"`
		RepoTags []string `json:"RepoTags"`
		Layers   []string `json:"Layers"`
	}
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil {
		return nil, fmt.Errorf("image %s: manifest.json: %w", p, err)
	}
	if len(manifest) != 1 {
		return nil, fmt.Errorf("image %s: manifest.json lists %d images, want 1", p, len(manifest))
	}
	img := &savedImage{tags: manifest[0].RepoTags, files: map[string][]byte{}, modes: map[string]string{}}
	if err := json.Unmarshal(entries[manifest[0].Config], &img.config); err != nil {
		return nil, fmt.Errorf("image %s: config: %w", p, err)
	}
	for _, l := range manifest[0].Layers {
		if err := img.addLayer(entries[l]); err != nil {
			return nil, fmt.Errorf("image %s: layer %s: %w", p, l, err)
		}
	}
	return img, nil
}

func (img *savedImage) addLayer(b []byte) error {
	var r io.Reader = bytes.NewReader(b)
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("gunzip: %w", err)
		}
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read layer: %w", err)
		}
		name := path.Clean("/" + h.Name)
		img.modes[name] = fmt.Sprintf("%c %o %d:%d", h.Typeflag, h.Mode, h.Uid, h.Gid)
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if img.files[name], err = io.ReadAll(tr); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
}

// shells are the names of programs an image without a shell must not hold.
var shells = []string{"sh", "bash", "ash", "dash", "zsh", "busybox", "toybox"}

// TestImage checks the image `make image` builds offline: it runs bin/podpilot
// (byte for byte what `make build` produced) as 65532, with the CA
// certificates and nothing else: no shell.
func TestImage(t *testing.T) {
	checkGuards(t)
	img, err := readSavedImage(imageTarball("podpilot"))
	if err != nil {
		t.Fatal(err)
	}
	want := imageConfig{Architecture: img.config.Architecture, OS: "linux"}
	want.Config.Entrypoint = []string{"/podpilot"}
	want.Config.User = "65532:65532"
	want.Config.Env = []string{"PATH=/"}
	if diff := cmp.Diff(want, img.config); diff != "" {
		t.Errorf("image config (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"localhost/podpilot/podpilot:" + imageTag}, img.tags); diff != "" {
		t.Errorf("image tags (-want +got):\n%s", diff)
	}
	built, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "bin", "podpilot"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(img.files["/podpilot"], built) {
		t.Errorf("/podpilot in the image (%d bytes) is not bin/podpilot (%d bytes)", len(img.files["/podpilot"]), len(built))
	}
	if got := img.modes["/podpilot"]; got != "0 755 0:0" {
		t.Errorf("/podpilot: mode and owner %q, want regular 755 root-owned (the user cannot change it)", got)
	}
	system, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(img.files["/etc/ssl/certs/ca-certificates.crt"], system) {
		t.Error("the image's CA certificates are not the build machine's /etc/ssl/certs/ca-certificates.crt")
	}
	var names []string
	for p := range img.modes {
		names = append(names, p)
		for _, sh := range shells {
			if path.Base(p) == sh {
				t.Errorf("the image holds %s: no shell wanted", p)
			}
		}
	}
	var files []string
	for p := range img.files {
		files = append(files, p)
	}
	sort.Strings(files)
	wantFiles := []string{"/etc/group", "/etc/passwd", "/etc/ssl/certs/ca-certificates.crt", "/podpilot"}
	if diff := cmp.Diff(wantFiles, files); diff != "" {
		t.Errorf("files in the image (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(img.files["/etc/passwd"]), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd does not name the user 65532:\n%s", img.files["/etc/passwd"])
	}
	sort.Strings(names)
	t.Logf("image: tags %q, entries %q, podpilot %d bytes", img.tags, names, len(built))
}
