package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// minioServer is a MinIO server of the test's own, which it can stop and start again.
type minioServer struct {
	t          *testing.T
	bin, addr  string
	dir        string
	cmd        *exec.Cmd
	user, pass string
}

func newMinIO(t *testing.T) *minioServer {
	m := &minioServer{t: t, bin: testenv.MinIOBinary(t), addr: freePort(t), dir: t.TempDir(), user: "faultuser", pass: "faultpassword123"}
	m.start()
	t.Cleanup(m.stop)
	return m
}

func (m *minioServer) start() {
	m.t.Helper()
	m.cmd = exec.Command(m.bin, "server", "--quiet", "--address", m.addr, m.dir)
	m.cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+m.user, "MINIO_ROOT_PASSWORD="+m.pass, "MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	log, _ := os.Create(filepath.Join(m.t.TempDir(), "minio.log"))
	m.cmd.Stdout, m.cmd.Stderr = log, log
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	// live answers as soon as the process listens; ready only once it serves S3 requests.
	waitReady(m.t, "http://"+m.addr+"/minio/health/ready", 60*time.Second)
	// Even then a fresh server may briefly answer "Server not initialized yet": wait for a real
	// S3 call to work.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st, err := blob.NewMinIO(context.Background(), blob.MinIOConfig{Endpoint: m.addr, AccessKey: m.user, SecretKey: m.pass,
			Bucket: "readiness-probe", CreateBucket: true, MaxRetries: 1})
		if err == nil {
			_, err = st.Stat(context.Background(), "probe")
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				return
			}
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("MinIO does not serve requests: %v", err)
		}
	}
}

func (m *minioServer) stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	m.cmd.Process.Signal(syscall.SIGKILL)
	m.cmd.Wait()
	m.cmd = nil
}

// TestMinIOOutage stops the object store under a running farm: readiness says so at once,
// renders still answer (their bytes come back through Redis and their URLs are served from
// memory), nothing hangs; when the store returns the farm is ready again without a restart.
func TestMinIOOutage(t *testing.T) {
	mi := newMinIO(t)
	t.Setenv("MAPFARM_TEST_MINIO_ENDPOINT", mi.addr)
	t.Setenv("MAPFARM_TEST_MINIO_ACCESS_KEY", mi.user)
	t.Setenv("MAPFARM_TEST_MINIO_SECRET_KEY", mi.pass)
	f := startFarm(t)
	endpoint := f.url + "/arcgis/services/world/MapServer"
	client := &http.Client{Timeout: 20 * time.Second} // an answer later than this is a hang

	status := func(url string) int {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	export := func() (int, string) {
		body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + namespace + `"><soap:Body><gis:ExportMapImage><MapDescription><Name>Layers</Name></MapDescription>` +
			`<ImageDescription><ImageType><ImageFormat>gisImagePNG24</ImageFormat><ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType>` +
			`<ImageDisplay><ImageHeight>128</ImageHeight><ImageWidth>128</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage></soap:Body></soap:Envelope>`
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", endpoint, strings.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("ExportMapImage: %v", err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		fmt.Fprint(&b, resp.Header.Get("Content-Type"))
		buf := make([]byte, 64<<10)
		n, _ := resp.Body.Read(buf)
		return resp.StatusCode, string(buf[:n])
	}
	imageURL := func(resp string) string {
		i := strings.Index(resp, "<ImageURL>")
		j := strings.Index(resp, "</ImageURL>")
		if i < 0 || j < i {
			t.Fatalf("no ImageURL in %.300s", resp)
		}
		return resp[i+len("<ImageURL>") : j]
	}

	if code := status(f.url + "/readyz"); code != 200 {
		t.Fatalf("readyz before the outage: %d", code)
	}
	mi.stop()

	if code := status(f.url + "/readyz"); code != 503 {
		t.Errorf("readyz with the store down: %d, want 503", code)
	}
	code, resp := export()
	if code != 200 {
		t.Fatalf("ExportMapImage with the store down: %d %.300s", code, resp)
	}
	if code := status(imageURL(resp)); code != 200 {
		t.Errorf("a fresh image URL with the store down: %d, want 200 from memory", code)
	}

	mi.start()
	deadline := time.Now().Add(30 * time.Second)
	for status(f.url+"/readyz") != 200 {
		if time.Now().After(deadline) {
			t.Fatal("the farm did not become ready again after the store came back")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, resp := export(); code != 200 || status(imageURL(resp)) != 200 {
		t.Fatalf("ExportMapImage after the outage: %d %.300s", code, resp)
	}
}
