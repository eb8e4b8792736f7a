package loadgen

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
)

// ErrTarget means a target is not an address this generator sends to.
var ErrTarget = errors.New("not a loadgen target")

// requestURL checks that target is an http URL whose host is a loopback or
// private IP address (never a name: nothing is resolved), and returns it
// with the query parameter n=batch.
func requestURL(target string, batch int) (string, error) {
	u, err := url.Parse(target)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrTarget, err)
	}
	if u.Scheme != "http" || u.User != nil || u.Opaque != "" {
		return "", fmt.Errorf("%w: %q: want http://IP[:PORT]/PATH", ErrTarget, target)
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return "", fmt.Errorf("%w: %q: the host must be an IP address, not a name: %w", ErrTarget, target, err)
	}
	if !ip.IsLoopback() && !ip.IsPrivate() {
		return "", fmt.Errorf("%w: %q: %s is neither loopback nor private (cluster-internal); loadgen sends nowhere else",
			ErrTarget, target, ip)
	}
	q := u.Query()
	q.Set("n", strconv.Itoa(batch))
	u.RawQuery = q.Encode()
	return u.String(), nil
}
