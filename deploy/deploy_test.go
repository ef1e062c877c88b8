// Package deploy_test checks the deployment files: the Kubernetes manifests and the compose file
// parse, reference one another consistently, use only configuration the farm reads, and give
// workers the grace and the autoscaling triggers the farm's queues need. When Debian's
// docker-compose is installed (scripts/test.sh installs it), the compose file also passes
// `docker-compose config`.
package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/task"
)

type object struct {
	APIVersion string                `yaml:"apiVersion"`
	Kind       string                `yaml:"kind"`
	Metadata   struct{ Name string } `yaml:"metadata"`
	Spec       map[string]any        `yaml:"spec"`
	Data       map[string]string     `yaml:"data"`
	StringData map[string]string     `yaml:"stringData"`
	Resources  []string              `yaml:"resources"`
}

func readDocs(t *testing.T, path string) []object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []object
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if o.Kind == "" || o.APIVersion == "" {
			t.Fatalf("%s: a document without kind or apiVersion", path)
		}
		out = append(out, o)
	}
}

// envNames are the MAPFARM_* variables the configuration reads.
func envNames(t *testing.T) map[string]bool {
	files, err := filepath.Glob("../internal/config/*.go")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(MAPFARM_[A-Z_]+)"`).FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
			names[m[1]+"_FILE"] = true // secret() reads KEY_FILE too
		}
	}
	return names
}

func get(m any, path ...string) any {
	for _, p := range path {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[p]
	}
	return m
}

func TestKubernetes(t *testing.T) {
	var kust object
	for _, o := range readDocs(t, "k8s/kustomization.yaml") {
		kust = o
	}
	byKind := map[string][]object{}
	for _, r := range kust.Resources {
		if _, err := os.Stat(filepath.Join("k8s", r)); err != nil {
			t.Fatalf("kustomization lists %s: %v", r, err)
		}
		for _, o := range readDocs(t, filepath.Join("k8s", r)) {
			byKind[o.Kind] = append(byKind[o.Kind], o)
		}
	}
	for kind, n := range map[string]int{"Deployment": 3, "Service": 2, "ConfigMap": 1, "Secret": 1, "ScaledObject": 1} {
		if len(byKind[kind]) < n {
			t.Errorf("%d %s objects, want at least %d", len(byKind[kind]), kind, n)
		}
	}
	env := envNames(t)
	roles := map[string]object{}
	for _, d := range byKind["Deployment"] {
		containers, _ := get(d.Spec, "template", "spec", "containers").([]any)
		if len(containers) != 1 {
			t.Fatalf("%s: %d containers", d.Metadata.Name, len(containers))
		}
		c := containers[0].(map[string]any)
		args, _ := c["args"].([]any)
		if len(args) == 0 || !slices.Contains([]any{"api", "worker", "coordinator"}, args[0]) {
			t.Errorf("%s: args %v do not start with a role", d.Metadata.Name, args)
			continue
		}
		roles[args[0].(string)] = d
		if get(c, "resources", "limits", "memory") == nil {
			t.Errorf("%s: no memory limit", d.Metadata.Name)
		}
		if get(c, "livenessProbe") == nil {
			t.Errorf("%s: no liveness probe", d.Metadata.Name)
		}
		envs, _ := c["env"].([]any)
		for _, e := range envs {
			name := e.(map[string]any)["name"].(string)
			if !env[name] {
				t.Errorf("%s: env %s is not read by the farm's configuration", d.Metadata.Name, name)
			}
		}
	}
	if api, ok := roles["api"]; !ok || get(api.Spec, "template", "spec", "containers").([]any)[0].(map[string]any)["readinessProbe"] == nil {
		t.Error("the api has no readiness probe")
	}
	// The worker's grace period outlasts the longest render.
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	w := roles["worker"]
	grace, _ := get(w.Spec, "template", "spec", "terminationGracePeriodSeconds").(int)
	if time.Duration(grace)*time.Second <= cfg.Limits.RenderTimeout {
		t.Errorf("worker terminationGracePeriodSeconds %d is not longer than the render timeout %s", grace, cfg.Limits.RenderTimeout)
	}
	// Autoscaling targets the worker and watches every queue.
	so := byKind["ScaledObject"][0]
	if get(so.Spec, "scaleTargetRef", "name") != w.Metadata.Name {
		t.Errorf("ScaledObject scales %v, not the worker %s", get(so.Spec, "scaleTargetRef", "name"), w.Metadata.Name)
	}
	var lists []string
	for _, tr := range so.Spec["triggers"].([]any) {
		if l, ok := get(tr, "metadata", "listName").(string); ok {
			lists = append(lists, l)
		}
	}
	for q := range task.QueuePriorities() {
		if !slices.Contains(lists, "asynq:{"+q+"}:pending") {
			t.Errorf("no autoscaling trigger on queue %s (lists %v)", q, lists)
		}
	}
	// The config maps: a configuration the farm loads, and the service definitions, equal to
	// the repository's (which the tests load and check).
	var conf, services string
	for _, cm := range byKind["ConfigMap"] {
		conf += cm.Data["mapfarm.yaml"]
		services += cm.Data["services.yaml"]
	}
	repoServices, err := os.ReadFile("../services/services.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(services) != strings.TrimSpace(string(repoServices)) {
		t.Error("k8s/services.yaml's services.yaml differs from services/services.yaml: copy it again")
	}
	for _, d := range byKind["Deployment"] {
		if !strings.Contains(fmt.Sprint(d.Spec), "mapfarm-services") && d.Metadata.Name != "mapfarm-coordinator" {
			t.Errorf("%s does not mount the service definitions", d.Metadata.Name)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "mapfarm.yaml")
	os.WriteFile(p, []byte(conf), 0o644)
	t.Setenv("MAPFARM_MINIO_ACCESS_KEY", "x")
	t.Setenv("MAPFARM_MINIO_SECRET_KEY", "y")
	if _, err := config.Load(p); err != nil {
		t.Errorf("the ConfigMap's mapfarm.yaml does not load: %v", err)
	}
}

func TestCompose(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Command     []string       `yaml:"command"`
			Environment map[string]any `yaml:"environment"`
			Secrets     []string       `yaml:"secrets"`
		} `yaml:"services"`
		Secrets map[string]any `yaml:"secrets"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	env := envNames(t)
	for _, name := range []string{"redis", "minio", "minio-init", "api", "coordinator", "worker"} {
		s, ok := c.Services[name]
		if !ok {
			t.Errorf("no %s service", name)
			continue
		}
		for _, sec := range s.Secrets {
			if _, ok := c.Secrets[sec]; !ok {
				t.Errorf("%s uses undefined secret %s", name, sec)
			}
		}
		for k := range s.Environment {
			if strings.HasPrefix(k, "MAPFARM_") && !env[k] {
				t.Errorf("%s: env %s is not read by the farm's configuration", name, k)
			}
		}
	}
	for _, role := range []string{"api", "coordinator", "worker"} {
		if cmd := c.Services[role].Command; len(cmd) == 0 || cmd[0] != role {
			t.Errorf("%s runs %v", role, cmd)
		}
	}

	bin, err := exec.LookPath("docker-compose")
	if err != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") == "1" {
			t.Fatal("docker-compose (Debian package) is not installed; scripts/test.sh installs it")
		}
		t.Skip("docker-compose not installed")
	}
	// docker-compose config resolves the file as Compose does, secrets and anchors included.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "docker-compose.yml"), b, 0o644)
	os.MkdirAll(filepath.Join(dir, "secrets"), 0o755)
	os.WriteFile(filepath.Join(dir, "secrets", "minio_secret_key"), []byte("test-secret-key"), 0o600)
	cmd := exec.Command(bin, "-f", filepath.Join(dir, "docker-compose.yml"), "config", "-q")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker-compose config: %v\n%s", err, out)
	}
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "COPY" || strings.HasPrefix(f[1], "--from") {
			continue
		}
		for _, src := range f[1 : len(f)-1] {
			if src == "." {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", src)); err != nil {
				t.Errorf("Dockerfile copies %s: %v", src, err)
			}
		}
	}
}

// The README's recipe without containers builds before it starts anything: run with a stand-in
// go (slow to build, or failing) and a stand-in binary that records its role, every process
// starts after a good build and none after a failed one.
func TestREADMERecipe(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)Without containers, the same binary:\n\n```sh\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("no recipe after \"Without containers\" in README.md")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct {
		name    string
		goFails bool
		want    []string
	}{
		{"build succeeds", false, []string{"api", "coordinator", "worker", "worker"}},
		{"build fails", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "bin")
			os.Mkdir(bin, 0o755)
			// The stand-in go takes a while, then writes a mapfarm that records its role.
			goStub := "#!/bin/sh\nsleep 0.3\n[ \"$GO_FAILS\" = 1 ] && exit 1\nprintf '#!/bin/sh\\necho \"$1\" >> started\\n' > mapfarm\nchmod +x mapfarm\n"
			if err := os.WriteFile(filepath.Join(bin, "go"), []byte(goStub), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bash, "-c", string(m[1])+"\nwait\n")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin", fmt.Sprintf("GO_FAILS=%v", map[bool]int{true: 1}[tc.goFails]))
			out, _ := cmd.CombinedOutput()
			got, _ := os.ReadFile(filepath.Join(dir, "started"))
			lines := strings.Fields(string(got))
			slices.Sort(lines)
			if !slices.Equal(lines, tc.want) {
				t.Errorf("started %q, want %q; output:\n%s", lines, tc.want, out)
			}
		})
	}
}
