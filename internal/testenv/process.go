package testenv

import (
	"bytes"
	"os/exec"
	"testing"
)

// StartServer starts cmd, a server a test runs for itself (a TLS MinIO, a TLS Redis), and kills
// it when the test ends; what the server wrote to stdout and stderr is logged, under name, when
// the test failed.
func StartServer(t testing.TB, name string, cmd *exec.Cmd) {
	t.Helper()
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s:\n%s", name, logs.String())
		}
	})
}
