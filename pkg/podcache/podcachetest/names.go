package podcachetest

import "slices"

// DeploymentPodNames returns n pod names as a Deployment's ReplicaSet names them, e.g.
// "web-7d9f8c6b5d-x2k9p", sorted (as the provider asks for them).
func DeploymentPodNames(n int) []string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789" // the ReplicaSet suffix alphabet
	names := make([]string, n)
	for i := range names {
		suffix := make([]byte, 5)
		for j, k := 0, i; j < 5; j++ {
			suffix[4-j] = alphabet[k%len(alphabet)]
			k /= len(alphabet)
		}
		names[i] = "web-7d9f8c6b5d-" + string(suffix)
	}
	slices.Sort(names)
	return names
}
