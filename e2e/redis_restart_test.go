package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// redisServer is a Redis of the test's own, with an append-only file so that a restart keeps
// the queues and the job state, as a production Redis does.
type redisServer struct {
	t    *testing.T
	bin  string
	addr string
	dir  string
	cmd  *exec.Cmd
}

func newRedis(t *testing.T) *redisServer {
	r := &redisServer{t: t, bin: testenv.RedisServerBinary(t), addr: freePort(t), dir: t.TempDir()}
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *redisServer) start() {
	r.t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	r.cmd = exec.Command(r.bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "yes",
		"--appendfsync", "always", "--dir", r.dir)
	log, _ := os.Create(filepath.Join(r.t.TempDir(), "redis.log"))
	r.cmd.Stdout, r.cmd.Stderr = log, log
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", r.addr, time.Second)
		if err == nil {
			c.Write([]byte("PING\r\n"))
			buf := make([]byte, 16)
			n, _ := c.Read(buf)
			c.Close()
			if strings.HasPrefix(string(buf[:n]), "+PONG") {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatal("redis-server did not start")
		}
	}
}

func (r *redisServer) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		r.cmd = nil
	}
}

// TestSeedSurvivesRedisRestart kills Redis (SIGKILL) in the middle of a seeding job run by
// separate processes and starts it again from its append-only file: the processes reconnect by
// themselves and the job finishes with every tile present and none failed.
func TestSeedSurvivesRedisRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("long: tasks interrupted by the outage are retried after asynq's backoff")
	}
	// Its own Redis and bucket: it runs beside TestSeedSurvivesWorkerKill, mostly waiting.
	t.Parallel()
	r := newRedis(t)
	bin := buildBinary(t, "github.com/mapfarm/mapfarm")
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	addr := freePort(t)
	env := append(farmEnv(t, addr), "MAPFARM_REDIS_ADDR="+r.addr, "MAPFARM_REDIS_DB=0")
	startKillableProcess(t, bin, "worker", env)
	startKillableProcess(t, bin, "worker", env)
	coordMetrics := freePort(t)
	startKillableProcess(t, bin, "coordinator", append(env, "MAPFARM_METRICS_LISTEN="+coordMetrics))
	startKillableProcess(t, bin, "api", env)
	base := "http://" + addr
	waitReady(t, base+"/readyz", 60*time.Second)

	no := false
	id := submitSeed(t, base, seed.Request{Service: "world", Extent: worldExtent(), Levels: []int{0, 1, 2, 3, 4, 5}, SkipEmpty: &no, PartTiles: 16})
	restarted := false
	st := waitJob(t, base, id, 6*time.Minute, func(st seed.Status) bool {
		if !restarted && st.Done >= 100 {
			r.kill()
			time.Sleep(time.Second) // an outage, not a blip
			r.start()
			restarted = true
			t.Logf("restarted Redis at %d/%d tiles", st.Done, st.Total)
		}
		return true
	})
	if !restarted {
		t.Fatalf("the job ended before Redis could be restarted: %+v", st)
	}
	if st.State != seed.StateDone || st.Failed != 0 || st.Done != st.Total {
		t.Fatalf("job ended %s: done %d failed %d of %d (%s)", st.State, st.Done, st.Failed, st.Total, st.Error)
	}
	// The coordinator publishes the job's progress for dashboards.
	checkMetrics(t, "http://"+coordMetrics+"/metrics", `mapfarm_seed_tiles{job="`+id+`",state="done"} 1365`, `mapfarm_seed_tiles{job="`+id+`",state="total"} 1365`)

	cmd := exec.Command(tool, "verify", "-service", "world", "-levels", "0-5")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), " 0 tiles of the area missing, 0 problems") {
		t.Fatalf("cachetool verify after the restart: %v\n%s", err, out)
	}
}
