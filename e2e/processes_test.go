package e2e

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startProcess runs one role of the farm as its own process until the test ends, then stops it
// with SIGTERM (a graceful shutdown) and waits.
func startProcess(t testing.TB, bin, role string, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, role)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	logf, err := os.Create(filepath.Join(t.TempDir(), role+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Waited for from the start, so that a process that ends on its own (it should run until
	// the SIGTERM below) is reported with when it ended, not only at the end of the test.
	started := time.Now()
	var ended time.Duration
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		ended = time.Since(started)
		done <- err
	}()
	t.Cleanup(func() {
		select {
		case err := <-done:
			t.Errorf("%s ended on its own %v after its start, before the test's SIGTERM: %v", role, ended.Round(time.Millisecond), err)
		default:
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s exited with %v", role, err)
				}
			case <-time.After(40 * time.Second):
				cmd.Process.Kill()
				t.Errorf("%s did not stop within 40s of SIGTERM", role)
			}
		}
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s log (%d bytes):\n%s", role, len(b), b)
		}
	})
	return cmd
}

// farmEnv configures processes of one farm on the test Redis and MinIO.
func farmEnv(t testing.TB, addr string) []string {
	mi := testenv.MinIO(t)
	return []string{
		"MAPFARM_LISTEN=" + addr,
		"MAPFARM_REDIS_ADDR=" + testenv.Redis(t),
		"MAPFARM_REDIS_DB=" + strconv.Itoa(testenv.RedisDB(t)),
		"MAPFARM_STORE=minio",
		"MAPFARM_MINIO_ENDPOINT=" + mi.Endpoint,
		"MAPFARM_MINIO_BUCKET=" + testenv.Bucket(t),
		"MAPFARM_MINIO_ACCESS_KEY=" + mi.AccessKey,
		"MAPFARM_MINIO_SECRET_KEY=" + mi.SecretKey,
		"MAPFARM_WORKER_CONCURRENCY=1",
		"MAPFARM_LOG_LEVEL=warn",
	}
}

// TestSeparateProcesses runs api, coordinator and two workers as separate processes on real
// Redis and MinIO and checks that both workers render.
func TestSeparateProcesses(t *testing.T) {
	bin := buildBinary(t, "github.com/mapfarm/mapfarm")
	addr := freePort(t)
	env := farmEnv(t, addr)
	// Each worker serves /readyz once it has checked the farm's store identity, which it waits
	// for while the api (started last) has not published it: the renders below start only when
	// both workers are past that wait, or one worker could do them all.
	workerMetrics := []string{freePort(t), freePort(t)}
	for _, m := range workerMetrics {
		startProcess(t, bin, "worker", append(env, "MAPFARM_METRICS_LISTEN="+m))
	}
	coordMetrics := freePort(t)
	startProcess(t, bin, "coordinator", append(env, "MAPFARM_METRICS_LISTEN="+coordMetrics))
	startProcess(t, bin, "api", env)

	base := "http://" + addr
	waitReady(t, base+"/readyz", 60*time.Second)
	for _, m := range workerMetrics {
		waitReady(t, "http://"+m+"/readyz", 60*time.Second)
	}
	endpoint := base + "/arcgis/services/world/MapServer"

	const requests, clients = 24, 4
	workers := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	desc := regexp.MustCompile(`desc="([^"]+)"`)
	work := make(chan int, requests)
	for i := 0; i < requests; i++ {
		work <- i
	}
	close(work)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + namespace + `"><soap:Body><gis:ExportMapImage>` +
					`<MapDescription><Name>Layers</Name><Rotation>` + strconv.Itoa(i) + `</Rotation></MapDescription><ImageDescription>` +
					`<ImageType><ImageFormat>gisImagePNG</ImageFormat><ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType>` +
					`<ImageDisplay><ImageHeight>256</ImageHeight><ImageWidth>256</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage></soap:Body></soap:Envelope>`
				resp, err := http.Post(endpoint, "text/xml", strings.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				m := desc.FindStringSubmatch(resp.Header.Get("Server-Timing"))
				if resp.StatusCode != 200 || m == nil {
					t.Errorf("request %d: %s, Server-Timing %q", i, resp.Status, resp.Header.Get("Server-Timing"))
					continue
				}
				mu.Lock()
				workers[m[1]]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("renders per worker: %v", workers)
	if len(workers) != 2 {
		t.Fatalf("renders were done by %d worker(s) %v, want both", len(workers), workers)
	}

	// The api counts the requests; the coordinator publishes the queues for autoscaling.
	checkMetrics(t, base+"/metrics", `mapfarm_soap_requests_total{operation="ExportMapImage",outcome="ok"} 24`)
	checkMetrics(t, "http://"+coordMetrics+"/metrics", `mapfarm_queue_tasks{queue="interactive",state="pending"}`, `mapfarm_queue_latency_seconds{queue="seed"}`,
		`mapfarm_queue_tasks{queue="heavy",state="pending"}`)
	checkMetrics(t, "http://"+coordMetrics+"/readyz", "ready")

	// The operator's tool reads the same service.
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	out, err := exec.Command(tool, "info", "-endpoint", endpoint, "-timeout", "20s").CombinedOutput()
	if err != nil {
		t.Fatalf("cachetool info: %v\n%s", err, out)
	}
	for _, want := range []string{`map "Layers"  spatial reference 3857  units gisMeters`, `layer 1 "Countries"  Feature Layer`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("cachetool info lacks %q:\n%s", want, out)
		}
	}
}

// checkMetrics fetches a /metrics page and looks for lines.
func checkMetrics(t *testing.T, url string, want ...string) {
	t.Helper()
	var body string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
		missing := false
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = true
			}
		}
		if !missing {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s lacks some of %q:\n%.3000s", url, want, body)
		}
	}
}

func waitReady(t testing.TB, url string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s not ready within %s", url, limit)
}
