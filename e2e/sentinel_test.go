package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// sentinelMaster is the name the test's sentinels monitor their primary under.
const sentinelMaster = "mapfarm-test"

// sentinelGroup is a Redis primary, one replica and three sentinels, all redis-server processes
// on loopback ports in a temp dir, with a failure detection of one second.
type sentinelGroup struct {
	t         *testing.T
	bin, dir  string
	primary   string // host:port of the first primary
	replica   string // host:port of the replica (the primary after a failover)
	sentinels []string
	procs     map[string]*exec.Cmd // by address
}

func startSentinelGroup(t *testing.T) *sentinelGroup {
	g := &sentinelGroup{t: t, bin: testenv.RedisServerBinary(t), dir: t.TempDir(), procs: map[string]*exec.Cmd{}}
	t.Cleanup(g.stop)
	g.primary, g.replica = freePort(t), freePort(t)
	g.start(g.primary, "primary", "--save", "", "--appendonly", "no")
	_, primaryPort, _ := net.SplitHostPort(g.primary)
	g.start(g.replica, "replica", "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", primaryPort)
	for i := 0; i < 3; i++ {
		addr := freePort(t)
		_, port, _ := net.SplitHostPort(addr)
		dir := filepath.Join(g.dir, "sentinel"+port)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// Sentinels rewrite their configuration file, so each has its own.
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf("bind 127.0.0.1\nport %s\ndir %s\nsentinel monitor %s 127.0.0.1 %s 2\n"+
			"sentinel down-after-milliseconds %[3]s 1000\nsentinel failover-timeout %[3]s 5000\nsentinel parallel-syncs %[3]s 1\n",
			port, dir, sentinelMaster, primaryPort)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		g.start(addr, "sentinel"+port, conf, "--sentinel")
		g.sentinels = append(g.sentinels, addr)
	}
	g.waitSynced()
	return g
}

// start runs one redis-server on addr and waits until it answers PING.
func (g *sentinelGroup) start(addr, name string, args ...string) {
	g.t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	if !strings.HasSuffix(args[len(args)-1], "--sentinel") {
		dir := filepath.Join(g.dir, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			g.t.Fatal(err)
		}
		args = append([]string{"--bind", "127.0.0.1", "--port", port, "--dir", dir}, args...)
	}
	cmd := exec.Command(g.bin, args...)
	logf, err := os.Create(filepath.Join(g.dir, name+".log"))
	if err != nil {
		g.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		g.t.Fatal(err)
	}
	g.procs[addr] = cmd
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(20 * time.Second); c.Ping(context.Background()).Err() != nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf.Name())
			g.t.Fatalf("redis-server %s on %s did not answer within 20 s:\n%s", name, addr, b)
		}
	}
}

// waitSynced waits until the replica is in sync and every sentinel knows the replica and the
// two other sentinels (sentinels find each other through the primary, every 2 s), so that a
// failover can be agreed on.
func (g *sentinelGroup) waitSynced() {
	g.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	rep := redis.NewClient(&redis.Options{Addr: g.replica})
	defer rep.Close()
	for !strings.Contains(rep.Info(ctx, "replication").Val(), "master_link_status:up") {
		if time.Now().After(deadline) {
			g.t.Fatalf("the replica did not sync within 30 s:\n%s", rep.Info(ctx, "replication").Val())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, addr := range g.sentinels {
		s := redis.NewSentinelClient(&redis.Options{Addr: addr})
		for {
			m, err := s.Master(ctx, sentinelMaster).Result()
			if err == nil && m["num-other-sentinels"] == "2" && m["num-slaves"] == "1" {
				break
			}
			if time.Now().After(deadline) {
				s.Close()
				g.t.Fatalf("sentinel %s does not see the group within 30 s: %v %v", addr, m, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		s.Close()
	}
}

// kill stops the server at addr with SIGKILL.
func (g *sentinelGroup) kill(addr string) {
	if cmd := g.procs[addr]; cmd != nil {
		cmd.Process.Kill()
		cmd.Wait()
		delete(g.procs, addr)
	}
}

func (g *sentinelGroup) stop() {
	for addr := range g.procs {
		g.kill(addr)
	}
	if g.t.Failed() {
		logs, _ := filepath.Glob(filepath.Join(g.dir, "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			g.t.Logf("%s:\n%s", filepath.Base(l), b)
		}
	}
}

// masterAddr asks a sentinel which server is the primary now.
func (g *sentinelGroup) masterAddr(ctx context.Context) string {
	for _, addr := range g.sentinels {
		s := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1})
		a, err := s.GetMasterAddrByName(ctx, sentinelMaster).Result()
		s.Close()
		if err == nil && len(a) == 2 {
			return net.JoinHostPort(a[0], a[1])
		}
	}
	return ""
}

// probe is one ExportMapImage request of the loop that runs through the failover.
type probe struct {
	start, end time.Time
	err        error
}

// exportLoop sends an ExportMapImage every interval, each in its own goroutine (so a request
// that hangs in the failover does not delay the next), until stop is closed or max requests
// have been sent; it returns every request's outcome once all have ended.
func exportLoop(endpoint string, interval time.Duration, max int, stop <-chan struct{}) func() []probe {
	client := &http.Client{Timeout: 15 * time.Second}
	body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + namespace + `"><soap:Body><gis:ExportMapImage>` +
		`<MapDescription><Name>Layers</Name></MapDescription><ImageDescription>` +
		`<ImageType><ImageFormat>gisImagePNG</ImageFormat><ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType>` +
		`<ImageDisplay><ImageHeight>128</ImageHeight><ImageWidth>128</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage></soap:Body></soap:Envelope>`
	one := func() probe {
		p := probe{start: time.Now()}
		resp, err := client.Post(endpoint, "text/xml", strings.NewReader(body))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "<ImageURL>") {
				err = fmt.Errorf("%s: %.300s", resp.Status, b)
			}
		}
		p.end, p.err = time.Now(), err
		return p
	}
	var (
		mu     sync.Mutex
		probes []probe
		wg     sync.WaitGroup
		done   = make(chan struct{})
	)
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for i := 0; i < max; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := one()
				mu.Lock()
				probes = append(probes, p)
				mu.Unlock()
			}()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() []probe {
		<-done
		wg.Wait()
		slices.SortFunc(probes, func(a, b probe) int { return a.start.Compare(b.start) })
		return probes
	}
}

// TestSentinelFailoverMidSeed runs a farm (api, coordinator, two workers as separate processes)
// on a Redis Sentinel group, kills the primary with SIGKILL in the middle of a seeding job, and
// checks that the job completes with every tile stored and that ExportMapImage requests sent
// throughout fail only around the failover; it logs how long that window was.
func TestSentinelFailoverMidSeed(t *testing.T) {
	g := startSentinelGroup(t)
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	f := startProcessFarm(t, []string{
		"MAPFARM_REDIS_ADDR=", "MAPFARM_REDIS_DB=0", // the farm's Redis is the Sentinel group's, not the test Redis
		"MAPFARM_REDIS_SENTINEL_MASTER=" + sentinelMaster,
		"MAPFARM_REDIS_SENTINELS=" + strings.Join(g.sentinels, ","),
	}, "worker", "worker", "coordinator", "api")
	base, env := f.base, f.env

	stop := make(chan struct{})
	stopOnce := sync.OnceFunc(func() { close(stop) })
	defer stopOnce()
	results := exportLoop(base+"/arcgis/services/world/MapServer", 100*time.Millisecond, 3000, stop)

	no := false
	id := submitSeed(t, base, seed.Request{Service: "world", Extent: worldExtent(), Levels: []int{0, 1, 2, 3, 4, 5}, SkipEmpty: &no, PartTiles: 16})
	var killed, switched, logged time.Time
	submitted := time.Now()
	st := waitJob(t, base, id, 4*time.Minute, func(st seed.Status) bool {
		if !killed.IsZero() && time.Since(logged) >= 5*time.Second {
			logged = time.Now()
			t.Logf("%.0f s after the kill: %d/%d tiles", time.Since(killed).Seconds(), st.Done, st.Total)
		}
		if killed.IsZero() && st.Done >= st.Total/4 && st.Total > 0 {
			g.kill(g.primary)
			killed = time.Now()
			t.Logf("killed the primary %s at %d/%d tiles", g.primary, st.Done, st.Total)
			// The sentinels' own view: when they name the replica as the primary.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for ctx.Err() == nil && g.masterAddr(ctx) != g.replica {
				time.Sleep(20 * time.Millisecond)
			}
			if ctx.Err() != nil {
				t.Fatalf("the sentinels did not promote the replica within 30 s (primary: %q)", g.masterAddr(context.Background()))
			}
			switched = time.Now()
			t.Logf("the sentinels promoted %s %.2f s after the kill", g.replica, switched.Sub(killed).Seconds())
		}
		return true
	})
	t.Logf("the job ended %.1f s after it was submitted, %.1f s after the kill", time.Since(submitted).Seconds(), time.Since(killed).Seconds())
	// More requests after the job (at least 8 s after the kill, so that the window is followed by
	// enough of them), then stop the loop and collect every request.
	if !killed.IsZero() {
		time.Sleep(max(2*time.Second, time.Until(killed.Add(8*time.Second))))
	}
	stopOnce()
	probes := results()

	if killed.IsZero() {
		t.Fatalf("the job ended before the primary could be killed: %+v", st)
	}
	if st.State != seed.StateDone || st.Failed != 0 || st.Done != st.Total {
		t.Fatalf("job ended %s: done %d failed %d of %d (%s)", st.State, st.Done, st.Failed, st.Total, st.Error)
	}
	cmd := exec.Command(tool, "verify", "-service", "world", "-levels", "0-5")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), " 0 tiles of the area missing, 0 problems") {
		t.Fatalf("cachetool verify after the failover: %v\n%s", err, out)
	}

	// ExportMapImage: every request that ended before the kill succeeded; the failures are
	// requests under way at the kill or started after it, and all started within a bounded
	// window; requests started after the window all succeeded.
	var before, after, failed int
	var lastFailStart, lastFailEnd time.Time
	for _, p := range probes {
		switch {
		case p.err != nil:
			failed++
			if p.end.Before(killed) {
				t.Errorf("a request failed before the primary was killed (%s): %v", killed.Sub(p.end), p.err)
			}
			if p.start.After(lastFailStart) {
				lastFailStart = p.start
			}
			if p.end.After(lastFailEnd) {
				lastFailEnd = p.end
			}
		case p.end.Before(killed):
			before++
		}
	}
	window := time.Duration(0)
	if failed > 0 {
		window = lastFailStart.Sub(killed)
	}
	// The farm answers again when the first request sent after the kill succeeds; requests
	// sent before that wait (go-redis retries) or fail.
	var firstOK time.Time
	var slowest time.Duration
	for _, p := range probes {
		if p.err != nil || !p.start.After(killed) {
			continue
		}
		if firstOK.IsZero() || p.end.Before(firstOK) {
			firstOK = p.end
		}
		if p.start.After(lastFailStart) {
			after++
		}
		slowest = max(slowest, p.end.Sub(p.start))
	}
	t.Logf("ExportMapImage: %d requests, %d succeeded before the kill, %d failed, %d succeeded after the last failure", len(probes), before, failed, after)
	t.Logf("failover window: the sentinels promoted the replica %.2f s after the kill; the first request sent after the kill to succeed ended %.2f s after it; "+
		"requests sent up to %.2f s after the kill failed (the last failure ended %.2f s after it); the slowest success sent after the kill took %.2f s",
		switched.Sub(killed).Seconds(), firstOK.Sub(killed).Seconds(), window.Seconds(), lastFailEnd.Sub(killed).Seconds(), slowest.Seconds())
	if firstOK.IsZero() || firstOK.Sub(killed) > 15*time.Second {
		t.Errorf("no request sent after the kill succeeded within 15 s of it (first success %v after)", firstOK.Sub(killed))
	}
	if before < 5 {
		t.Errorf("only %d requests succeeded before the kill; the loop did not run", before)
	}
	if after < 20 {
		t.Errorf("only %d requests succeeded after the failover window; want the farm serving again", after)
	}
	if limit := 15 * time.Second; window > limit {
		t.Errorf("ExportMapImage failed for %s after the kill, more than %s", window, limit)
	}
	shown := 0
	for _, p := range probes {
		if p.err != nil && shown < 10 {
			shown++
			t.Logf("a failed request started %+.2f s after the kill, ended %+.2f s after it: %v",
				p.start.Sub(killed).Seconds(), p.end.Sub(killed).Seconds(), p.err)
		}
	}
}
