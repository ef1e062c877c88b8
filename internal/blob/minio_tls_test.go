package blob_test

import (
	"context"
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
	// MinIO reads its certificate and key from a directory, as public.crt and private.key.
	files := testenv.TLS(t)
	certs := filepath.Join(dir, "certs")
	if err := os.Mkdir(certs, 0o700); err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{files.Cert: "public.crt", files.Key: "private.key"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(certs, to), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	caFile := files.CA
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const user, pass = "tlsuser", "tlspassword123"
	cmd := exec.Command(bin, "server", "--quiet", "--address", addr, "--certs-dir", certs, filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+user, "MINIO_ROOT_PASSWORD="+pass, "MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	testenv.StartServer(t, "minio", cmd)
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
