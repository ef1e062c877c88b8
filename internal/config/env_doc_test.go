package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEnvironmentDocumented: the variables the fields' documentation names (config.go,
// redis.go) are the table's, each secret with its _FILE form, so the two cannot drift apart.
func TestEnvironmentDocumented(t *testing.T) {
	var doc []byte
	for _, f := range []string{"config.go", "redis.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc = append(doc, b...)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`MAPFARM_[A-Z_]*[A-Z]`).FindAll(doc, -1) {
		named[string(m)] = true
	}
	bound := map[string]bool{}
	for _, b := range (&Config{}).envBindings() {
		if bound[b.name] {
			t.Errorf("%s is bound twice", b.name)
		}
		bound[b.name] = true
		if b.secret {
			bound[b.name+"_FILE"] = true
		}
	}
	for name := range named {
		if !bound[name] {
			t.Errorf("%s is documented but not in the table", name)
		}
	}
	for name := range bound {
		if !named[name] && !strings.HasSuffix(name, "_FILE") {
			t.Errorf("%s is in the table but no field's documentation names it", name)
		}
	}
}
