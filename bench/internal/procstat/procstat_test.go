package procstat

import (
	"errors"
	"os"
	"testing"
	"time"
)

func TestParseStatCPUAddsUserAndSystemTicks(t *testing.T) {
	// A command name with spaces and parentheses must not shift the fields.
	stat := []byte("1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 12345 0 0\n")
	got, err := ParseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("ParseStatCPU = %v, want %v (300 ticks)", got, want)
	}
}

func TestParseStatCPURejectsATruncatedLine(t *testing.T) {
	if _, err := ParseStatCPU([]byte("1 (x) S 1 2")); !errors.Is(err, ErrFormat) {
		t.Errorf("err = %v, want ErrFormat", err)
	}
}

func TestParseStatusRSSReadsVmRSSInBytes(t *testing.T) {
	status := []byte("Name:\tpodpilot\nVmPeak:\t  900 kB\nVmRSS:\t   2048 kB\nThreads:\t9\n")
	got, err := ParseStatusRSS(status)
	if err != nil {
		t.Fatal(err)
	}
	if got != 2048*1024 {
		t.Errorf("ParseStatusRSS = %d, want %d", got, 2048*1024)
	}
}

func TestParseStatusRSSWithoutTheLineIsAnError(t *testing.T) {
	if _, err := ParseStatusRSS([]byte("Name:\tx\n")); !errors.Is(err, ErrFormat) {
		t.Errorf("err = %v, want ErrFormat", err)
	}
}

func TestCPUAndRSSOfThisProcess(t *testing.T) {
	if _, err := CPU(os.Getpid()); err != nil {
		t.Errorf("CPU(self): %v", err)
	}
	if rss, err := RSS(os.Getpid()); err != nil || rss <= 0 {
		t.Errorf("RSS(self) = %d, %v; want a positive size", rss, err)
	}
}

func TestParseStatusKBReadsTheNamedField(t *testing.T) {
	status := []byte("VmRSS:\t   3072 kB\nRssAnon:\t   1024 kB\nRssFile:\t   2048 kB\n")
	got, err := ParseStatusKB(status, "RssFile")
	if err != nil {
		t.Fatalf("ParseStatusKB: %v", err)
	}
	if got != 2048*1024 {
		t.Errorf("ParseStatusKB(RssFile) = %d, want %d", got, 2048*1024)
	}
}
