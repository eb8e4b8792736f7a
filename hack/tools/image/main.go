// Command image builds a container image from static binaries without a
// Docker engine, a registry or a base image: one layer holding the given
// files, a minimal /etc/passwd and /etc/group for the non-root user, and
// /tmp. The output is a `docker save` tarball, which `docker load`,
// `ctr images import` and `kind load image-archive` read. The build is
// reproducible: every timestamp is the Unix epoch, so the same inputs give
// the same image digest.
//
//	image --tag localhost/podpilot/podpilot:dev --out _output/images/podpilot.tar \
//	  --file bin/podpilot:/podpilot:0755 \
//	  --file /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:0644 \
//	  --entrypoint /podpilot --user 65532:65532
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// options are the command line.
type options struct {
	tags       repeated
	files      repeated
	labels     repeated
	env        repeated
	out        string
	entrypoint string
	user       string
}

// file is one file copied into the layer.
type file struct {
	src, dst string
	mode     int64
}

func main() {
	var o options
	flag.Var(&o.tags, "tag", "image reference to name the image (repeatable)")
	flag.Var(&o.files, "file", "SRC:DST[:MODE] copies SRC to DST in the image (repeatable; MODE octal, default 0644)")
	flag.Var(&o.labels, "label", "KEY=VALUE image label (repeatable)")
	flag.Var(&o.env, "env", "KEY=VALUE environment variable (repeatable)")
	flag.StringVar(&o.out, "out", "", "path of the image tarball to write")
	flag.StringVar(&o.entrypoint, "entrypoint", "", "entrypoint (one path; arguments come from the pod spec)")
	flag.StringVar(&o.user, "user", "65532:65532", "UID:GID the image runs as")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if len(o.tags) == 0 || o.out == "" || o.entrypoint == "" {
		return errors.New("--tag, --out and --entrypoint are required")
	}
	files, err := parseFiles(o.files)
	if err != nil {
		return err
	}
	uid, gid, err := parseUser(o.user)
	if err != nil {
		return err
	}
	layerTar, err := buildLayer(files, uid, gid)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return fmt.Errorf("make layer: %w", err)
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{Layer: layer})
	if err != nil {
		return fmt.Errorf("append layer: %w", err)
	}
	img, err = configure(img, o)
	if err != nil {
		return err
	}
	refs := map[name.Reference]v1.Image{}
	for _, t := range o.tags {
		ref, err := name.NewTag(t)
		if err != nil {
			return fmt.Errorf("parse tag %q: %w", t, err)
		}
		refs[ref] = img
	}
	tmp := o.out + ".tmp"
	if err := tarball.MultiRefWriteToFile(tmp, refs); err != nil {
		return fmt.Errorf("write %s: %w", o.out, err)
	}
	if err := os.Rename(tmp, o.out); err != nil {
		return fmt.Errorf("write %s: %w", o.out, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("digest: %w", err)
	}
	fmt.Printf("%s %s %s\n", o.out, strings.Join(o.tags, ","), digest)
	return nil
}

// configure sets the image configuration: entrypoint, user, environment,
// labels, and the platform of this build.
func configure(img v1.Image, o options) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config.Entrypoint = []string{o.entrypoint}
	cf.Config.User = o.user
	cf.Config.WorkingDir = "/"
	cf.Config.Env = append([]string{"PATH=/"}, o.env...)
	cf.Config.Labels = map[string]string{}
	for _, l := range o.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fmt.Errorf("label %q: want KEY=VALUE", l)
		}
		cf.Config.Labels[k] = v
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set config: %w", err)
	}
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}

func parseFiles(specs []string) ([]file, error) {
	var out []file
	for _, s := range specs {
		parts := strings.Split(s, ":")
		if len(parts) < 2 || len(parts) > 3 || !path.IsAbs(parts[1]) {
			return nil, fmt.Errorf("--file %q: want SRC:/DST[:MODE]", s)
		}
		f := file{src: parts[0], dst: path.Clean(parts[1]), mode: 0o644}
		if len(parts) == 3 {
			m, err := strconv.ParseInt(parts[2], 8, 32)
			if err != nil {
				return nil, fmt.Errorf("--file %q: mode: %w", s, err)
			}
			f.mode = m
		}
		out = append(out, f)
	}
	return out, nil
}

func parseUser(u string) (int, int, error) {
	us, gs, ok := strings.Cut(u, ":")
	if !ok {
		gs = us
	}
	uid, err := strconv.Atoi(us)
	if err != nil {
		return 0, 0, fmt.Errorf("--user %q: numeric UID:GID wanted: %w", u, err)
	}
	gid, err := strconv.Atoi(gs)
	if err != nil {
		return 0, 0, fmt.Errorf("--user %q: numeric UID:GID wanted: %w", u, err)
	}
	return uid, gid, nil
}

// buildLayer writes the layer's tar: the parent directories of every file,
// /etc/passwd and /etc/group naming root and the image's user, /tmp, and
// the files, all owned by root and dated at the epoch.
func buildLayer(files []file, uid, gid int) ([]byte, error) {
	contents := map[string][]byte{
		"/etc/passwd": fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", uid, gid),
		"/etc/group":  fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", gid),
	}
	modes := map[string]int64{"/etc/passwd": 0o644, "/etc/group": 0o644}
	for _, f := range files {
		b, err := os.ReadFile(f.src)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.src, err)
		}
		contents[f.dst], modes[f.dst] = b, f.mode
	}
	dirs := map[string]int64{"/tmp": 0o1777, "/home": 0o755, "/home/nonroot": 0o755}
	for p := range contents {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := dirs[d]; !ok {
				dirs[d] = 0o755
			}
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	for _, d := range sortedKeys(dirs) {
		h := &tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: dirs[d], ModTime: epoch, Format: tar.FormatPAX}
		if d == "/home/nonroot" {
			h.Uid, h.Gid = uid, gid
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("write layer: %w", err)
		}
	}
	for _, p := range sortedKeys(contents) {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(p, "/"), Mode: modes[p], Size: int64(len(contents[p])), ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("write layer: %w", err)
		}
		if _, err := tw.Write(contents[p]); err != nil {
			return nil, fmt.Errorf("write layer: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("write layer: %w", err)
	}
	return buf.Bytes(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
