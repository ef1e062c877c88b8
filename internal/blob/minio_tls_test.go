package blob_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// TestMinIOTLS runs a MinIO server of the test's own over https, with a certificate from a CA
// made for the test: the store works with that CA file, and without it the connection is
// refused for the unknown authority.
func TestMinIOTLS(t *testing.T) {
	bin := testenv.MinIOBinary(t)
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	caFile := filepath.Join(dir, "ca.pem")
	writeTLSFiles(t, certs, caFile)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const user, pass = "tlsuser", "tlspassword123"
	cmd := exec.Command(bin, "server", "--quiet", "--address", addr, "--certs-dir", certs, filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+user, "MINIO_ROOT_PASSWORD="+pass, "MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("minio:\n%s", logs.String())
		}
	})
	cfg := blob.MinIOConfig{Endpoint: addr, AccessKey: user, SecretKey: pass, Bucket: "tls", UseSSL: true, CAFile: caFile,
		CreateBucket: true, MaxRetries: 1}
	var store *blob.MinIO
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		store, err = blob.NewMinIO(ctx, cfg)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("MinIO over https with the CA file: %v", err)
		}
	}
	ctx := context.Background()
	if err := store.Put(ctx, "hello.txt", []byte("over TLS"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	if b, err := store.Get(ctx, "hello.txt"); err != nil || string(b) != "over TLS" {
		t.Fatalf("Get: %q, %v", b, err)
	}
	// An https:// endpoint sets TLS as UseSSL does.
	https := cfg
	https.Endpoint, https.UseSSL = "https://"+addr, false
	if _, err := blob.NewMinIO(ctx, https); err != nil {
		t.Errorf("https:// endpoint with the CA file: %v", err)
	}

	noCA := cfg
	noCA.CAFile = ""
	if _, err := blob.NewMinIO(ctx, noCA); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA file: %v, want a certificate error", err)
	}
	plain := cfg
	plain.UseSSL = false
	if _, err := blob.NewMinIO(ctx, plain); err == nil || !strings.Contains(err.Error(), "CA file is set but the endpoint is plain http") {
		t.Errorf("CA file on plain http: %v", err)
	}
	bad := cfg
	bad.CAFile = filepath.Join(dir, "missing.pem")
	if _, err := blob.NewMinIO(ctx, bad); err == nil || !strings.Contains(err.Error(), "missing.pem") {
		t.Errorf("missing CA file: %v", err)
	}
}

// writeTLSFiles makes a CA and a server certificate for 127.0.0.1 signed by it, writes the
// server's pair into dir as MinIO expects (public.crt, private.key) and the CA to caFile.
func writeTLSFiles(t *testing.T, dir, caFile string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	caKey := newKey()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mapfarm test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey := newKey()
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(path, typ string, der []byte) {
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "public.crt"), "CERTIFICATE", srvDER)
	write(filepath.Join(dir, "private.key"), "PRIVATE KEY", keyDER)
	write(caFile, "CERTIFICATE", caDER)
}
