package metrics

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

func TestCacheSettingsLeftZeroTakeTheDefaults(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	cases := []struct {
		name               string
		clk                clock.PassiveClock
		freshness, timeout time.Duration
		maxEntries         int
		want               caching
	}{{
		name: "every zero setting takes its default, the clock the real one",
		want: caching{clock: clock.RealClock{}, freshness: DefaultFreshness, retention: DefaultFreshness, maxEntries: DefaultMaxEntries, timeout: DefaultTimeout},
	}, {
		name: "set settings are kept",
		clk:  clk, freshness: time.Second, maxEntries: 3, timeout: time.Minute,
		want: caching{clock: clk, freshness: time.Second, retention: time.Second, maxEntries: 3, timeout: time.Minute},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cachingOf(tc.clk, tc.freshness, tc.maxEntries, tc.timeout)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(caching{}), cmp.Comparer(func(a, b *testingclock.FakeClock) bool { return a == b })); diff != "" {
				t.Errorf("cachingOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNegativeCacheSettingsAreInvalidForFetcherAndScrapeTracker(t *testing.T) {
	src := &landings{clock: testingclock.NewFakeClock(t0), every: 15 * time.Second}
	for name, err := range map[string]error{
		"fetcher, freshness":          second(NewFetcher(FetcherConfig{Freshness: -time.Second})),
		"fetcher, max entries":        second(NewFetcher(FetcherConfig{MaxEntries: -1})),
		"fetcher, timeout":            second(NewFetcher(FetcherConfig{Timeout: -time.Second})),
		"fetcher, retention":          second(NewFetcher(FetcherConfig{Retention: -time.Second})),
		"scrape tracker, freshness":   second(NewScrapeTracker(ScrapeTrackerConfig{Source: src, Freshness: -time.Second})),
		"scrape tracker, max entries": second(NewScrapeTracker(ScrapeTrackerConfig{Source: src, MaxEntries: -1})),
		"scrape tracker, timeout":     second(NewScrapeTracker(ScrapeTrackerConfig{Source: src, Timeout: -time.Second})),
		"scrape tracker, refresh":     second(NewScrapeTracker(ScrapeTrackerConfig{Source: src, Refresh: -time.Second})),
		"scrape tracker, no source":   second(NewScrapeTracker(ScrapeTrackerConfig{})),
	} {
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: err = %v, want %v", name, err, ErrInvalidConfig)
		}
	}
}

func TestTheFetcherKeepsAnswersForItsRetentionNeverShorterThanTheFreshness(t *testing.T) {
	cases := []struct {
		name                 string
		freshness, retention time.Duration
		want                 time.Duration
	}{
		{"left zero, 40 freshness periods", 0, 0, DefaultRetentionRounds * DefaultFreshness},
		{"left zero, 40 of a set freshness", 2 * time.Second, 0, 80 * time.Second},
		{"set, kept", 2 * time.Second, 5 * time.Second, 5 * time.Second},
		{"set below the freshness, the freshness", 2 * time.Second, time.Second, 2 * time.Second},
	}
	for _, tc := range cases {
		f, err := NewFetcher(FetcherConfig{Freshness: tc.freshness, Retention: tc.retention})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.customs.group.Policy().MaxAge; got != tc.want {
			t.Errorf("%s: answers kept %s, want %s", tc.name, got, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }
