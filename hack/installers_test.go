package hack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// machine is a fresh Debian machine played by stubs on PATH: dpkg-query
// answers from a file of installed packages (empty: it knows nothing and
// exits 1, as the real one does), apt-get records its arguments and
// "installs" by adding to that file, or fails for one package as apt does.
type machine struct {
	t     *testing.T
	dir   string // the stubs' state
	bin   string // the only directory on PATH
	cache string // PODPILOT_TOOLS_CACHE
	uid   string
}

const dpkgQueryStub = `#!/usr/bin/env bash
# dpkg-query -W -f FORMAT NAME: known packages are lines "NAME VERSION" in $STUB/dpkg.
name=${@: -1}
line=$(grep -E "^$name " "$STUB/dpkg" 2>/dev/null)
if [[ -z $line ]]; then echo "dpkg-query: no packages found matching $name" >&2; exit 1; fi
printf 'install ok installed %s\n' "${line#* }"
`

const aptGetStub = `#!/usr/bin/env bash
echo "$*" >>"$STUB/apt.log"
if [[ -f $STUB/update-fails && $1 == update ]]; then
  echo "E: The repository 'http://deb.example stable InRelease' is not signed." >&2; exit 100
fi
[[ $1 == update ]] && exit 0
for a in "$@"; do
  case $a in -*|install) continue ;; esac
  name=${a%%=*} want=${a#*=}
  if [[ -f $STUB/fails && $(cat "$STUB/fails") == "$name" ]]; then
    echo "Reading package lists..."
    echo "E: Version '$want' for '$name' was not found" >&2
    exit 100
  fi
  [[ $want == "$name" ]] && want=2.42.0+ds-5
  echo "$name ${want%\*}-1" >>"$STUB/dpkg"
  if [[ $name == prometheus ]]; then
    printf '#!/usr/bin/env bash\necho "prometheus, version 2.42.0+ds"\n' >"$STUB_BIN/prometheus"
    chmod +x "$STUB_BIN/prometheus"
  fi
  if [[ $name == victoria-metrics ]]; then
    printf '#!/usr/bin/env bash\necho\n' >"$STUB_BIN/victoria-metrics"
    chmod +x "$STUB_BIN/victoria-metrics"
  fi
done
`

func newMachine(t *testing.T) *machine {
	t.Helper()
	m := &machine{t: t, dir: t.TempDir(), uid: "0"}
	m.bin = filepath.Join(m.dir, "bin")
	m.cache = filepath.Join(m.dir, "cache")
	for _, d := range []string{m.bin, m.cache} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The real machine's tools the scripts use; everything else is a stub.
	realTools := []string{
		"bash", "env", "awk", "sed", "cat", "date", "dirname", "basename", "mktemp",
		"tail", "head", "rm", "mkdir", "cut", "tr", "grep", "cksum", "uname", "sha256sum", "sort", "chmod",
	}
	for _, tool := range realTools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s is not on this machine's PATH: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(m.bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	m.stub("dpkg-query", dpkgQueryStub)
	m.stub("apt-get", aptGetStub)
	m.stub("id", "#!/usr/bin/env bash\n[[ $1 == -u ]] && { echo \"$STUB_UID\"; exit 0; }\necho \"uid=$STUB_UID\"\n")
	m.stub("go", "#!/usr/bin/env bash\n[[ $1 == env ]] && { echo go1.26.8; exit 0; }\necho \"go $* is not for this test\" >&2; exit 1\n")
	// The preflight's host checks: cgroups mounted, a network namespace
	// made, overlayfs loaded.
	m.stub("mountpoint", "#!/usr/bin/env bash\nexit 0\n")
	m.stub("unshare", "#!/usr/bin/env bash\nexit 0\n")
	m.stub("modprobe", "#!/usr/bin/env bash\nexit 0\n")
	return m
}

func (m *machine) stub(name, script string) {
	m.t.Helper()
	if err := os.WriteFile(filepath.Join(m.bin, name), []byte(script), 0o755); err != nil {
		m.t.Fatal(err)
	}
}

// has records packages as installed: "NAME VERSION" lines.
func (m *machine) has(lines ...string) {
	m.t.Helper()
	f, err := os.OpenFile(filepath.Join(m.dir, "dpkg"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		m.t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			m.t.Fatal(err)
		}
	}
}

// aptFails makes apt-get fail to install the package NAME.
func (m *machine) aptFails(name string) {
	m.t.Helper()
	if err := os.WriteFile(filepath.Join(m.dir, "fails"), []byte(name), 0o644); err != nil {
		m.t.Fatal(err)
	}
}

// aptCalls returns apt-get's argument lists, one a call.
func (m *machine) aptCalls() []string {
	m.t.Helper()
	b, err := os.ReadFile(filepath.Join(m.dir, "apt.log"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		m.t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs a script of hack/ on the stubbed machine.
func (m *machine) run(script string, args ...string) result {
	m.t.Helper()
	cmd := exec.Command(filepath.Join(m.bin, "bash"), append([]string{script}, args...)...)
	cmd.Env = []string{
		"PATH=" + m.bin, "HOME=" + m.dir, "STUB=" + m.dir, "STUB_BIN=" + m.bin, "STUB_UID=" + m.uid,
		"PODPILOT_TOOLS_CACHE=" + m.cache, "LANG=C",
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			m.t.Fatalf("run %s: %v", script, err)
		}
		code = ee.ExitCode()
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func TestInstallNodeOnAFreshMachineAsksAptForEachPinnedPackage(t *testing.T) {
	nodePackages := []string{"containerd=1.6.20*", "runc=1.1.5*", "containernetworking-plugins=1.1.1*", "iptables=1.8.9*"}
	m := newMachine(t)
	r := m.run("install-node.sh")
	if r.code != 0 {
		t.Fatalf("install-node.sh on a fresh machine: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	want := []string{"update -qq"}
	for _, p := range nodePackages {
		want = append(want, "install -y -qq --no-install-recommends "+p)
	}
	if got := m.aptCalls(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("apt-get calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(r.stderr, "installed: containerd=1.6.20") {
		t.Errorf("stderr does not say what it installed:\n%s", r.stderr)
	}
}

func TestInstallNodeNamesThePackageAndShowsAptsOwnErrorWhenAptFails(t *testing.T) {
	m := newMachine(t)
	m.aptFails("runc")
	r := m.run("install-node.sh")
	if r.code == 0 {
		t.Fatalf("install-node.sh with apt failing on runc: exit 0, want non-zero; stderr:\n%s", r.stderr)
	}
	last := lastLine(r.stderr)
	for _, w := range []string{"apt-get install 'runc=1.1.5*' failed (exit 100)", "E: Version '1.1.5*' for 'runc' was not found"} {
		if !strings.Contains(last, w) {
			t.Errorf("the last line of stderr does not contain %q:\n%s", w, r.stderr)
		}
	}
}

func TestInstallNodeShowsAptsErrorWhenTheUpdateFails(t *testing.T) {
	m := newMachine(t)
	if err := os.WriteFile(filepath.Join(m.dir, "update-fails"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := m.run("install-node.sh")
	if r.code == 0 || !strings.Contains(lastLine(r.stderr), "apt-get update failed (exit 100): E: The repository") {
		t.Fatalf("exit %d; want non-zero and the update's own error in the last line:\n%s", r.code, r.stderr)
	}
}

func TestInstallNodeLeavesPackagesAtThePinnedVersionAlone(t *testing.T) {
	m := newMachine(t)
	m.has("containerd 1.6.20~ds1-1+deb12u3", "runc 1.1.5+ds1-1+deb12u1", "containernetworking-plugins 1.1.1+ds1-3+b5", "iptables 1.8.9-2")
	r := m.run("install-node.sh")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.code, r.stderr)
	}
	if calls := m.aptCalls(); len(calls) != 0 {
		t.Errorf("apt-get was called with every package present: %q", calls)
	}
}

func TestInstallNodeInstallsOnlyWhatIsMissing(t *testing.T) {
	m := newMachine(t)
	m.has("iptables 1.8.9-2", "runc 1.1.5+ds1-1+deb12u1")
	r := m.run("install-node.sh")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.code, r.stderr)
	}
	want := "update -qq\ninstall -y -qq --no-install-recommends containerd=1.6.20*\ninstall -y -qq --no-install-recommends containernetworking-plugins=1.1.1*"
	if got := strings.Join(m.aptCalls(), "\n"); got != want {
		t.Errorf("apt-get calls:\n%s\nwant:\n%s", got, want)
	}
}

func TestInstallNodeRefusesAnotherVersionNamingTheFix(t *testing.T) {
	m := newMachine(t)
	m.has("containerd 1.7.24~ds1-1")
	r := m.run("install-node.sh")
	if r.code == 0 || !strings.Contains(r.stderr, "containerd 1.7.24~ds1-1 is installed, the real node is pinned to 1.6.20") {
		t.Fatalf("exit %d; want non-zero naming the installed and the pinned version:\n%s", r.code, r.stderr)
	}
	if calls := m.aptCalls(); len(calls) != 0 {
		t.Errorf("apt-get was called although a version conflict was found: %q", calls)
	}
}

func TestInstallNodeAsNonRootWithoutSudoSaysItNeedsRoot(t *testing.T) {
	m := newMachine(t)
	m.uid = "1000"
	r := m.run("install-node.sh")
	if r.code == 0 || !strings.Contains(r.stderr, "needs root") {
		t.Fatalf("exit %d; want non-zero saying it needs root:\n%s", r.code, r.stderr)
	}
}

// checkInstallsOnAFreshMachine runs script, the installer of the one Debian package pkg, on a
// fresh machine: it asks apt for pkg, exits 0, names the installed version (installed), and a
// second run finds it and asks apt nothing.
func checkInstallsOnAFreshMachine(t *testing.T, script, pkg, installed string) {
	t.Helper()
	m := newMachine(t)
	r := m.run(script)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.code, r.stderr)
	}
	if got, want := strings.Join(m.aptCalls(), "\n"), "update -qq\ninstall -y -qq --no-install-recommends "+pkg; got != want {
		t.Errorf("apt-get calls:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(r.stderr, installed) {
		t.Errorf("stderr does not name the installed version:\n%s", r.stderr)
	}
	before := len(m.aptCalls())
	if r := m.run(script); r.code != 0 || len(m.aptCalls()) != before {
		t.Errorf("second run: exit %d, apt calls %d → %d; want 0 and none:\n%s", r.code, before, len(m.aptCalls()), r.stderr)
	}
}

func TestInstallPrometheusOnAFreshMachine(t *testing.T) {
	checkInstallsOnAFreshMachine(t, "install-prometheus.sh", "prometheus", "installed: prometheus, version 2.42.0")
}

func TestInstallPrometheusShowsAptsOwnErrorWhenAptFails(t *testing.T) {
	m := newMachine(t)
	m.aptFails("prometheus")
	r := m.run("install-prometheus.sh")
	if r.code == 0 || !strings.Contains(lastLine(r.stderr), "apt-get install 'prometheus' failed (exit 100): E: Version 'prometheus' for 'prometheus' was not found") {
		t.Fatalf("exit %d; want non-zero with apt's error in the last line:\n%s", r.code, r.stderr)
	}
}

func TestInstallVictoriaMetricsOnAFreshMachine(t *testing.T) {
	checkInstallsOnAFreshMachine(t, "install-victoriametrics.sh", "victoria-metrics", "installed: victoria-metrics 2.42.0+ds-5-1")
}

func TestInstallVictoriaMetricsShowsAptsOwnErrorWhenAptFails(t *testing.T) {
	m := newMachine(t)
	m.aptFails("victoria-metrics")
	r := m.run("install-victoriametrics.sh")
	if r.code == 0 || !strings.Contains(lastLine(r.stderr), "apt-get install 'victoria-metrics' failed (exit 100): E: Version 'victoria-metrics' for 'victoria-metrics' was not found") {
		t.Fatalf("exit %d; want non-zero with apt's error in the last line:\n%s", r.code, r.stderr)
	}
}

// fillToolsCache puts executables where hack/build-tools.sh node looks, so
// the preflight's install reaches install-node.sh without building.
func (m *machine) fillToolsCache() {
	m.t.Helper()
	r := m.run("-c", `source lib.sh; echo "$KUBE_SCHEDULER $KUBELET $KUBE_PROXY $METRICS_SERVER $PROMETHEUS_NODE"`)
	if r.code != 0 {
		m.t.Fatalf("lib.sh: exit %d:\n%s", r.code, r.stderr)
	}
	for _, p := range strings.Fields(r.stdout) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			m.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/true\n"), 0o755); err != nil {
			m.t.Fatal(err)
		}
	}
}

func TestPreflightAFailedInstallIsAnErrorNotAReasonToFallBack(t *testing.T) {
	m := newMachine(t)
	m.fillToolsCache()
	m.aptFails("containerd")
	r := m.run("node-preflight.sh", "--install", "--log", filepath.Join(m.dir, "node-tools.log"))
	if r.code != 2 {
		t.Fatalf("exit %d, want 2 (could run, install failed); stdout %q stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{"hack/install-node.sh", "failed", "E: Version '1.6.20*' for 'containerd' was not found"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("the reason does not contain %q: %q", w, r.stdout)
		}
	}
}

func TestPreflightNotRootIsAReasonToFallBack(t *testing.T) {
	m := newMachine(t)
	m.uid = "1000"
	r := m.run("node-preflight.sh", "--install", "--log", filepath.Join(m.dir, "node-tools.log"))
	if r.code != 1 || !strings.Contains(r.stdout, "needs root") {
		t.Fatalf("exit %d, stdout %q; want 1 and the reason:\n%s", r.code, r.stdout, r.stderr)
	}
	if calls := m.aptCalls(); len(calls) != 0 {
		t.Errorf("apt-get was called on a machine that cannot run the node: %q", calls)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// ssStub plays `ss -Htan`: one socket line for each port in $STUB/held,
// local address 127.0.0.1.
const ssStub = `#!/usr/bin/env bash
[[ $* == -Htan ]] || { echo "ss $* is not for this test" >&2; exit 1; }
while read -r p; do echo "ESTAB 0 0 127.0.0.1:$p 127.0.0.1:2379"; done <"$STUB/held"
`

// takePorts runs take_ports once per call, each with its variables, in one
// shell on a machine whose ephemeral range is ephemeral ("LO HI") and whose
// sockets hold the ports held, and returns the ports set, in order.
func takePorts(t *testing.T, ephemeral string, held []int, calls ...[]string) ([]int, result) {
	t.Helper()
	m := newMachine(t)
	m.stub("ss", ssStub)
	lines := make([]string, len(held))
	for i, p := range held {
		lines[i] = strconv.Itoa(p)
	}
	if err := os.WriteFile(filepath.Join(m.dir, "held"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rangeFile := filepath.Join(m.dir, "ip_local_port_range")
	if err := os.WriteFile(rangeFile, []byte(ephemeral+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "set -euo pipefail; source lib.sh; export PODPILOT_EPHEMERAL_PORTS=" + rangeFile
	var vars []string
	for _, c := range calls {
		script += "; take_ports " + strings.Join(c, " ")
		vars = append(vars, c...)
	}
	script += fmt.Sprintf(`; for v in %s; do echo "${!v}"; done`, strings.Join(vars, " "))
	r := m.run("-c", script)
	var got []int
	for _, f := range strings.Fields(r.stdout) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("take_ports set %q, not a port:\n%s", f, r.stderr)
		}
		got = append(got, p)
	}
	return got, r
}

func TestTakePortsPicksBelowTheEphemeralRangeSoNoClientConnectionTakesThem(t *testing.T) {
	got, r := takePorts(t, "32768 60999", nil, []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"})
	if r.code != 0 || len(got) != 10 {
		t.Fatalf("exit %d, ports %v; want 10:\n%s", r.code, got, r.stderr)
	}
	for _, p := range got {
		if p < 10000 || p >= 32768 {
			t.Errorf("port %d is outside 10000-32767", p)
		}
	}
}

func TestTakePortsSkipsEveryHeldPortAndNeverGivesOneTwice(t *testing.T) {
	// 1,000 candidates (10000-10999); all but 25 held by sockets in any
	// state. Asking for 25 must return exactly the 25 free ones, each once,
	// across two calls (the second must remember what the first took).
	free := map[int]bool{}
	var held []int
	for p := 10000; p < 11000; p++ {
		if p%40 == 7 {
			free[p] = true
			continue
		}
		held = append(held, p)
	}
	vars := make([]string, 25)
	for i := range vars {
		vars[i] = fmt.Sprintf("P%d", i)
	}
	got, r := takePorts(t, "11000 60999", held, vars[:12], vars[12:])
	if r.code != 0 || len(got) != 25 {
		t.Fatalf("exit %d, ports %v; want 25:\n%s", r.code, got, r.stderr)
	}
	seen := map[int]bool{}
	for _, p := range got {
		if !free[p] || seen[p] {
			t.Errorf("port %d: held or given twice (all %v)", p, got)
		}
		seen[p] = true
	}
}

func TestTakePortsNamesTheSysctlWhenTheEphemeralRangeLeavesNoRoom(t *testing.T) {
	_, r := takePorts(t, "1024 65000", nil, []string{"A"})
	if r.code == 0 || !strings.Contains(r.stderr, "net.ipv4.ip_local_port_range") {
		t.Fatalf("exit %d; want non-zero naming the sysctl:\n%s", r.code, r.stderr)
	}
}

func TestTakePortsSaysWhenEveryCandidateIsHeld(t *testing.T) {
	var held []int
	for p := 10000; p < 11000; p++ {
		held = append(held, p)
	}
	_, r := takePorts(t, "11000 60999", held, []string{"ETCD_PORT"})
	if r.code == 0 || !strings.Contains(r.stderr, "no free TCP port for ETCD_PORT in 10000-10999") {
		t.Fatalf("exit %d; want non-zero naming the variable and range:\n%s", r.code, r.stderr)
	}
}
