package procstat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat; it
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// ErrFormat means a /proc file did not have the expected format.
var ErrFormat = errors.New("unexpected /proc format")

// CPU returns the user plus system CPU time process pid has used.
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu of pid %d: %w", pid, err)
	}
	return ParseStatCPU(b)
}

// ParseStatCPU returns utime+stime from the contents of /proc/<pid>/stat.
func ParseStatCPU(stat []byte) (time.Duration, error) {
	// The command name (field 2) may hold spaces; the fields after its ")" are fixed.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat has no command name: %w", ErrFormat)
	}
	fields := strings.Fields(string(stat[i+1:]))
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("stat has %d fields after the name: %w", len(fields), ErrFormat)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat cpu field %q: %w", f, ErrFormat)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// RSS returns the resident set size of process pid in bytes.
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read rss of pid %d: %w", pid, err)
	}
	return ParseStatusRSS(b)
}

// ParseStatusRSS returns VmRSS in bytes from the contents of /proc/<pid>/status.
func ParseStatusRSS(status []byte) (int64, error) {
	return ParseStatusKB(status, "VmRSS")
}

// RSSFile returns the file-backed part of process pid's resident set in
// bytes (RssFile: mostly the pages of its binary), the rest being RssAnon
// (heap, stacks, runtime) and RssShmem.
func RSSFile(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read rss of pid %d: %w", pid, err)
	}
	return ParseStatusKB(b, "RssFile")
}

// ParseStatusKB returns the value of a "field:   N kB" line of
// /proc/<pid>/status (VmRSS, RssAnon, RssFile, ...) in bytes.
func ParseStatusKB(status []byte, field string) (int64, error) {
	s := bufio.NewScanner(bytes.NewReader(status))
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), field+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%s line %q: %w", field, s.Text(), ErrFormat)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s value %q: %w", field, f[0], ErrFormat)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s line: %w", field, ErrFormat)
}
