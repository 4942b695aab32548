package cloudsyaml

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeClouds(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadErrors: every entry a client cannot use is an error naming the
// file, the line and the key, and none panics.
func TestReadErrors(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"no auth section", "clouds:\n  c:\n    region_name: r\n",
			`:2: clouds.c.auth: required with auth_type password`},
		{"unsupported auth type", "clouds:\n  c:\n    auth_type: v3oidc\n",
			`:3: clouds.c.auth_type: "v3oidc" is not supported`},
		{"no auth_url", "clouds:\n  c:\n    auth:\n      username: u\n",
			`:3: clouds.c.auth.auth_url: required with auth_type password`},
		{"no password", "clouds:\n  c:\n    auth:\n      auth_url: http://k/v3\n      username: u\n",
			`:3: clouds.c.auth.password: required with auth_type password`},
		{"http_basic without credentials", "clouds:\n  c:\n    auth_type: http_basic\n",
			`:2: clouds.c.auth: auth.username and auth.password are required with auth_type http_basic`},
		{"token without token", "clouds:\n  c:\n    auth_type: admin_token\n    auth:\n      endpoint: http://x\n",
			`:4: clouds.c.auth.token: required with auth_type admin_token`},
		{"missing cacert", "clouds:\n  c:\n    auth_type: none\n    cacert: /nonexistent/ca.pem\n",
			`:4: clouds.c.cacert: open /nonexistent/ca.pem`},
		{"key without cert", "clouds:\n  c:\n    auth_type: none\n    key: /k.pem\n",
			`:4: clouds.c.key: set without cert`},
		{"bad interface", "clouds:\n  c:\n    auth_type: none\n    interface: private\n",
			`:4: clouds.c.interface: "private" is not an interface`},
		{"unknown cloud", "clouds:\n  other: {}\n", `:1: clouds: cloud "c" not found (clouds: other)`},
		{"no clouds", "other: 1\n", `no clouds: section`},
		{"syntax", "clouds:\n  c:\n    auth: [\n", `:3: did not find expected node content`},
		{"system scope", "clouds:\n  c:\n    auth:\n      auth_url: http://k/v3\n      username: u\n      password: p\n      system_scope: x\n",
			`:7: clouds.c.auth.system_scope: "x" is not supported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeClouds(t, tc.body)
			_, err := Read(Source{File: path, Cloud: "c"})
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %s…%s", err, path, tc.want)
			}
			if !errors.As(err, new(*Error)) {
				t.Errorf("%v is not a *cloudsyaml.Error, so a command would not take it for a configuration error", err)
			}
		})
	}
}

// recorder is a server that records the last request's headers.
type recorder struct{ hdr chan http.Header }

func newRecorder() *recorder { return &recorder{hdr: make(chan http.Header, 10)} }

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h := req.Header.Clone()
	h.Set("X-Path", req.URL.Path)
	r.hdr <- h
	_, _ = w.Write([]byte(`{}`))
}

func get(t *testing.T, e *Entry, service, path string, base *http.Client) error {
	t.Helper()
	hc, err := e.HTTPClient(base)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := e.ServiceClient(context.Background(), hc, service)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sc.Get(context.Background(), sc.ServiceURL(path), nil, nil)
	return err
}

// TestWithoutKeystone: none, http_basic and admin_token reach the
// endpoint override with the right headers; the Ironic root gets /v1.
func TestWithoutKeystone(t *testing.T) {
	rec := newRecorder()
	srv := httptest.NewServer(rec)
	defer srv.Close()
	path := writeClouds(t, `clouds:
  none:
    auth_type: none
    baremetal_endpoint_override: `+srv.URL+`
  basic:
    auth_type: http_basic
    auth:
      username: ironic
      password: s3cret
    endpoint_override: `+srv.URL+`/v1
  token:
    auth_type: admin_token
    auth:
      endpoint: `+srv.URL+`
      token: admin
  nothing:
    auth_type: none
`)
	for _, tc := range []struct{ cloud, service, wantPath, header, value string }{
		{"none", "baremetal", "/v1/nodes", "Authorization", ""},
		{"basic", "baremetal", "/v1/nodes", "Authorization", "Basic aXJvbmljOnMzY3JldA=="},
		{"token", "placement", "/nodes", "X-Auth-Token", "admin"},
	} {
		e, err := Read(Source{File: path, Cloud: tc.cloud})
		if err != nil {
			t.Fatal(err)
		}
		if err := get(t, e, tc.service, "nodes", nil); err != nil {
			t.Fatalf("%s: %v", tc.cloud, err)
		}
		h := <-rec.hdr
		if h.Get("X-Path") != tc.wantPath || h.Get(tc.header) != tc.value {
			t.Errorf("%s: path %s, %s %q; want %s, %q", tc.cloud, h.Get("X-Path"), tc.header, h.Get(tc.header), tc.wantPath, tc.value)
		}
	}
	e, err := Read(Source{File: path, Cloud: "nothing"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.ServiceClient(context.Background(), http.DefaultClient, "baremetal")
	if err == nil || !strings.Contains(err.Error(), path+":16: clouds.nothing: auth_type none needs the baremetal endpoint: set baremetal_endpoint_override") {
		t.Errorf("no endpoint: %v", err)
	}
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTLS: cacert makes a self-signed server trusted, verify: false
// skips the check, and without either the handshake fails.
func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(newRecorder())
	defer srv.Close()
	ca := writePEM(t, t.TempDir(), "ca.pem", "CERTIFICATE", srv.Certificate().Raw)
	path := writeClouds(t, `clouds:
  plain: {auth_type: none, endpoint_override: `+srv.URL+`}
  cacert: {auth_type: none, endpoint_override: `+srv.URL+`, cacert: `+ca+`}
  insecure: {auth_type: none, endpoint_override: `+srv.URL+`, verify: false}
`)
	for cloud, wantErr := range map[string]string{"plain": "x509: certificate signed by unknown authority", "cacert": "", "insecure": ""} {
		e, err := Read(Source{File: path, Cloud: cloud})
		if err != nil {
			t.Fatal(err)
		}
		err = get(t, e, "placement", "", &http.Client{Timeout: 10 * time.Second})
		if (wantErr == "" && err != nil) || (wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr))) {
			t.Errorf("%s: got %v, want %q", cloud, err, wantErr)
		}
	}
}

// issue makes a certificate for cn signed by parent (self-signed when
// nil) and returns it with its key.
func issue(t *testing.T, cn string, parent *tls.Certificate, client bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true, IsCA: parent == nil}
	switch {
	case client:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	case parent != nil:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	signer, signKey := tmpl, any(key)
	if parent != nil {
		signer, signKey = parent.Leaf, parent.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// TestClientCertificate: a server that requires a client certificate
// accepts cert and key from the entry (or one file holding both), and
// refuses the entry without them.
func TestClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := issue(t, "test CA", nil, false)
	srvCert := issue(t, "127.0.0.1", &ca, false)
	cli := issue(t, "agent", &ca, true)
	pool := x509.NewCertPool()
	pool.AddCert(ca.Leaf)
	srv := httptest.NewUnstartedServer(newRecorder())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	caFile := writePEM(t, dir, "ca.pem", "CERTIFICATE", ca.Leaf.Raw)
	certFile := writePEM(t, dir, "cert.pem", "CERTIFICATE", cli.Leaf.Raw)
	keyDER, err := x509.MarshalPKCS8PrivateKey(cli.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := writePEM(t, dir, "key.pem", "PRIVATE KEY", keyDER)
	both, _ := os.ReadFile(certFile)
	keyPEM, _ := os.ReadFile(keyFile)
	bothFile := filepath.Join(dir, "both.pem")
	if err := os.WriteFile(bothFile, append(both, keyPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeClouds(t, `clouds:
  with: {auth_type: none, endpoint_override: `+srv.URL+`, cacert: `+caFile+`, cert: `+certFile+`, key: `+keyFile+`}
  both: {auth_type: none, endpoint_override: `+srv.URL+`, cacert: `+caFile+`, cert: `+bothFile+`}
  without: {auth_type: none, endpoint_override: `+srv.URL+`, cacert: `+caFile+`}
`)
	for cloud, ok := range map[string]bool{"with": true, "both": true, "without": false} {
		e, err := Read(Source{File: path, Cloud: cloud})
		if err != nil {
			t.Fatal(err)
		}
		if err := get(t, e, "placement", "", &http.Client{Timeout: 10 * time.Second}); (err == nil) != ok {
			t.Errorf("%s: got %v, want success %v", cloud, err, ok)
		}
	}
}

// TestCustomTransport: TLS settings that cannot be applied are an error,
// not silently dropped.
func TestCustomTransport(t *testing.T) {
	path := writeClouds(t, "clouds:\n  c: {auth_type: none, verify: false, endpoint_override: http://x}\n")
	e, err := Read(Source{File: path, Cloud: "c"})
	if err != nil {
		t.Fatal(err)
	}
	rt := roundTripper(func(*http.Request) (*http.Response, error) { return nil, nil })
	if _, err := e.HTTPClient(&http.Client{Transport: rt}); err == nil {
		t.Error("TLS settings dropped for a custom transport")
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestSecureYAML: secure.yaml next to clouds.yaml completes and overrides
// an entry; an entry it does not name is left alone.
func TestSecureYAML(t *testing.T) {
	path := writeClouds(t, "clouds:\n  c:\n    auth:\n      auth_url: http://k/v3\n      username: u\n      password: old\n    region_name: r1\n  other:\n    auth_type: none\n")
	secure := "clouds:\n  c:\n    auth:\n      password: from-secure\n    verify: false\n"
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "secure.yaml"), []byte(secure), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := Read(Source{File: path, Cloud: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if a := e.doc.Auth; a.Password != "from-secure" || a.Username != "u" || e.doc.RegionName != "r1" || e.tls == nil || !e.tls.InsecureSkipVerify {
		t.Errorf("merged entry %+v %+v", e.doc, a)
	}
	if _, err := Read(Source{File: path, Cloud: "other"}); err != nil {
		t.Errorf("an entry secure.yaml does not name: %v", err)
	}
}
