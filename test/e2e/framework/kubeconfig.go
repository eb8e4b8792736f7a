package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// ServiceAccountKubeconfig writes a kubeconfig into dir that authenticates to
// the cluster as the ServiceAccount namespace/name, with a token from the
// TokenRequest API valid for ttl (at least 10 minutes), and returns its path.
// A process using it has exactly the ServiceAccount's permissions, as it would
// in a pod.
func (c *Cluster) ServiceAccountKubeconfig(ctx context.Context, dir, namespace, name string, ttl time.Duration) (string, error) {
	tr, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(ttl.Seconds()))},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request a token for service account %s/%s: %w", namespace, name, err)
	}
	ca := c.Config.CAData
	if len(ca) == 0 && c.Config.CAFile != "" {
		if ca, err = os.ReadFile(c.Config.CAFile); err != nil {
			return "", fmt.Errorf("read cluster CA: %w", err)
		}
	}
	user := "system:serviceaccount:" + namespace + ":" + name
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	cfg.CurrentContext = "local"
	path := filepath.Join(dir, namespace+"-"+name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write kubeconfig of %s: %w", user, err)
	}
	return path, nil
}

// DirectConfig returns the cluster-admin client config aimed at podpilot p
// itself instead of the kube-apiserver, so that p authenticates the admin
// client certificate and authorizes the request itself (with a
// SubjectAccessReview), as it does for the aggregator's requests. p's serving
// certificate is self-signed and not verified.
func (c *Cluster) DirectConfig(p *Podpilot) *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", p.Port)
	cfg.CAFile, cfg.CAData = "", nil
	cfg.Insecure = true
	return cfg
}
