package loadgen

import (
	"errors"
	"testing"
)

func TestRequestURL(t *testing.T) {
	tests := []struct {
		name   string
		target string
		want   string // "" means refused with ErrTarget
	}{
		{"a loopback address is a target, and n carries the batch", "http://127.0.0.1:8080/query", "http://127.0.0.1:8080/query?n=50"},
		{"a ClusterIP in a private range is a target", "http://10.0.0.17/query", "http://10.0.0.17/query?n=50"},
		{"IPv6 loopback is a target", "http://[::1]:8080/query", "http://[::1]:8080/query?n=50"},
		{"the target's own query parameters are kept, n replaced", "http://192.168.7.2/query?zone=a&n=3", "http://192.168.7.2/query?n=50&zone=a"},
		{"a name is refused: nothing is resolved", "http://localhost:8080/query", ""},
		{"a public address is refused", "http://8.8.8.8/query", ""},
		{"a documentation address (this machine's main interface) is refused", "http://192.0.2.10/query", ""},
		{"https is refused", "https://127.0.0.1/query", ""},
		{"credentials are refused", "http://user:pw@127.0.0.1/query", ""},
		{"an address without a scheme is refused", "127.0.0.1:8080", ""},
		{"an unspecified address is refused", "http://0.0.0.0:8080/query", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := requestURL(tt.target, 50)
			if tt.want == "" {
				if !errors.Is(err, ErrTarget) {
					t.Errorf("requestURL(%q) = %q, %v; want ErrTarget", tt.target, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("requestURL(%q) = %q, %v; want %q", tt.target, got, err, tt.want)
			}
		})
	}
}
