package testenv

import (
	"bufio"
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// GDALEnv is the environment for the GDAL tools a test points at its own server: this
// process's, with GDAL's debug log on (it names the URLs GDAL asked for), a 60 s HTTP timeout
// and GDAL's WMS cache in dir.
func GDALEnv(dir string) []string {
	return append(os.Environ(), "CPL_DEBUG=ON", "GDAL_HTTP_TIMEOUT=60", "GDAL_DEFAULT_WMS_CACHE_PATH="+filepath.Join(dir, "cache"))
}

// GDALTranslatePNG has gdal_translate, run in env, draw src (a dataset name or a file GDAL
// opens) into a PNG in dir, and returns the image and what gdal_translate logged. The test fails
// where gdal_translate does or its output is not a PNG.
func GDALTranslatePNG(t testing.TB, env []string, src, dir string) (image.Image, string) {
	t.Helper()
	out := filepath.Join(dir, "gdal_translate.png")
	cmd := exec.Command("gdal_translate", "-of", "PNG", src, out)
	cmd.Env = env
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gdal_translate %s: %v\n%s", src, err, log)
	}
	return ReadPNG(t, out), string(log)
}

// ReadPNG reads and decodes a PNG file, failing t where it cannot.
func ReadPNG(t testing.TB, path string) image.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

// OGRFids runs query, a SELECT of fids, through ogrinfo on the GeoPackage gpkg and returns the
// fids, sorted. The test fails where ogrinfo does or reports an error.
func OGRFids(t testing.TB, gpkg, query string) []int {
	t.Helper()
	out, err := exec.Command("ogrinfo", "-ro", "-q", "-sql", query, gpkg).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("ERROR")) {
		t.Fatalf("ogrinfo %q: %v\n%s", query, err, out)
	}
	ids := []int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "OGRFeature(SELECT):"); ok {
			id, err := strconv.Atoi(rest)
			if err != nil {
				t.Fatalf("ogrinfo line %q: %v", sc.Text(), err)
			}
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
