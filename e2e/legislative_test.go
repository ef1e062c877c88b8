package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

// TestLegislativeImport imports datasets with the mapfarm command into the farm's MinIO: a good
// one is served by the running api within its reload interval, without a restart; a bad one is
// refused whole and the served data stays as it was.
func TestLegislativeImport(t *testing.T) {
	t.Setenv("MAPFARM_LEGISLATIVE_RELOAD", "200ms")
	f := startFarm(t)
	bin := buildBinary(t, "github.com/mapfarm/mapfarm")
	list := func() string {
		_, body := do(t, "GET", f.url+"/api/v2/", "")
		return string(body)
	}
	if !strings.Contains(list(), `"general_assembly_122"`) {
		t.Fatal("the built-in dataset lacks GA 122")
	}

	// A dataset without the oldest session.
	raw, err := os.ReadFile("../internal/legislative/data/default.json")
	if err != nil {
		t.Fatal(err)
	}
	var ds map[string][]map[string]any
	if err := json.Unmarshal(raw, &ds); err != nil {
		t.Fatal(err)
	}
	ds["sessions"] = ds["sessions"][:len(ds["sessions"])-1]
	smaller, _ := json.Marshal(ds)
	dir := t.TempDir()
	good, bad := dir+"/good.json", dir+"/bad.json"
	os.WriteFile(good, smaller, 0o644)
	os.WriteFile(bad, []byte(`{"sessions": [{"id": "not a session id"}]}`), 0o644)

	// The command reads the same configuration as the farm (the test's environment).
	env := append(os.Environ(), farmEnvForStore(t, f)...)
	run := func(file string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "import-legislative", file)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := run(bad); err == nil || !strings.Contains(out, "not a session id") {
		t.Fatalf("a bad dataset was accepted or not explained: %v\n%s", err, out)
	}
	time.Sleep(600 * time.Millisecond) // three reload intervals
	if !strings.Contains(list(), `"general_assembly_122"`) {
		t.Fatal("a refused dataset changed what is served")
	}

	if out, err := run(good); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(list(), `"general_assembly_122"`) {
		if time.Now().After(deadline) {
			t.Fatal("the running api did not pick up the imported dataset")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if body := list(); !strings.Contains(body, `"general_assembly_136"`) || !bytes.Contains([]byte(body), []byte(`"general_assembly_123"`)) {
		t.Fatalf("after the import: %.300s", body)
	}
}

// farmEnvForStore is the environment that points the mapfarm command at the farm's MinIO bucket.
func farmEnvForStore(t *testing.T, f *farm) []string {
	mi := testenv.MinIO(t)
	return []string{
		"MAPFARM_STORE=minio",
		"MAPFARM_MINIO_ENDPOINT=" + mi.Endpoint,
		"MAPFARM_MINIO_BUCKET=" + f.store.Bucket(),
		"MAPFARM_MINIO_ACCESS_KEY=" + mi.AccessKey,
		"MAPFARM_MINIO_SECRET_KEY=" + mi.SecretKey,
	}
}
