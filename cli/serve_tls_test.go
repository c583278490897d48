package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key; it returns
// their paths and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dispatchtop test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// serve --tls-cert/--tls-key answers HTTPS only: the token never crosses
// the network in clear text; a plain HTTP request is refused, and
// --once --remote reads the https host (trusting it through SSL_CERT_FILE).
func TestServeTLSEndToEnd(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	p := startServe(t, []string{"DISPATCHTOP_TOKEN=tls-token"}, "--tls-cert", certFile, "--tls-key", keyFile, serveTree(t))
	if !strings.HasPrefix(p.url, "https://") {
		t.Fatalf("serve says it listens on %s, want https", p.url)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, p.url+"/api/v1/snapshot", nil)
	req.Header.Set("Authorization", "Bearer tls-token")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET over TLS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Errorf("GET over TLS: %s (TLS %v)", resp.Status, resp.TLS != nil)
	}
	plain := strings.Replace(p.url, "https://", "http://", 1)
	if resp, err := http.Get(plain + "/api/v1/snapshot"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP answered 200")
		}
	}

	cmd := exec.Command(dispatchtopBin, "--remote", "h="+p.url, "--once", "--json", "--fail-on", "none")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "SSL_CERT_FILE="+certFile, "DISPATCHTOP_TOKEN=tls-token")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("--once --remote over https: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"h/S1"`) {
		t.Errorf("the fleet document lacks h/S1:\n%s", out)
	}
}
