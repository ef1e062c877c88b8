package config

import (
	"path/filepath"
	"slices"
	"testing"
)

// The state directory: MAPFARM_STATE_DIR, else $XDG_STATE_HOME/mapfarm, else
// ~/.local/state/mapfarm; and MAPFARM_ADMIN_HOSTS as a list.
func TestStateDirAndAdminHosts(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("MAPFARM_STATE_DIR", "")
	t.Setenv("MAPFARM_ADMIN_HOSTS", " ops.internal, ,10.0.0.5 ")
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".local", "state", "mapfarm"); c.StateDir != want || StateDirFromEnv() != want {
		t.Errorf("state dir %q (from env %q), want %q", c.StateDir, StateDirFromEnv(), want)
	}
	if !slices.Equal(c.Security.AdminHosts, []string{"ops.internal", "10.0.0.5"}) {
		t.Errorf("admin hosts %q", c.Security.AdminHosts)
	}
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	if got := DefaultStateDir(); got != "/xdg/state/mapfarm" {
		t.Errorf("with XDG_STATE_HOME: %q", got)
	}
	t.Setenv("MAPFARM_STATE_DIR", "/srv/mapfarm-state")
	if c, err = Load(""); err != nil || c.StateDir != "/srv/mapfarm-state" || StateDirFromEnv() != "/srv/mapfarm-state" {
		t.Errorf("MAPFARM_STATE_DIR: %q, %v", c.StateDir, err)
	}
}
