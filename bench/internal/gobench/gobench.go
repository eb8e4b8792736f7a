package gobench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Result is one benchmark's line.
type Result struct {
	Package, Name string
	Iterations    int64
	// Values are the line's measurements by unit (ns/op, B/op, allocs/op, custom units).
	Values map[string]float64
}

var benchFunc = regexp.MustCompile(`(?m)^func Benchmark[A-Z_0-9]\w*\(b \*testing\.B\)`)

// Discover returns the directories (relative to root, "./"-prefixed) whose
// _test.go files declare a Benchmark function, skipping _output and hidden
// directories.
func Discover(root string) ([]string, error) {
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "_output" || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		if benchFunc.Match(b) {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return fmt.Errorf("relative path of %s: %w", path, err)
			}
			seen["./"+filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find benchmarks: %w", err)
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// Run runs the benchmarks of pkgs in root with -benchmem and benchtime and
// returns the parsed results and the raw output.
func Run(ctx context.Context, root, benchtime string, pkgs []string) ([]Result, string, error) {
	if len(pkgs) == 0 {
		return nil, "", nil
	}
	args := append([]string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", benchtime, "-count", "1"}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	res := Parse(out.String())
	if err != nil {
		return res, out.String(), fmt.Errorf("go test -bench: %w", err)
	}
	return res, out.String(), nil
}

// Parse reads `go test -bench` output: "pkg:" lines name the package of the
// benchmark lines after them.
func Parse(output string) []Result {
	var out []Result
	pkg := ""
	s := bufio.NewScanner(strings.NewReader(output))
	for s.Scan() {
		line := s.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		if r, ok := parseLine(line); ok {
			r.Package = pkg
			out = append(out, r)
		}
	}
	return out
}

func parseLine(line string) (Result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
		return Result{}, false
	}
	iters, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return Result{}, false
	}
	r := Result{Name: f[0], Iterations: iters, Values: map[string]float64{}}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Result{}, false
		}
		r.Values[f[i+1]] = v
	}
	return r, true
}
