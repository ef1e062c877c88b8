// Command vtload is the HTTP load of bench/vectortiles.sh: C clients ask a tile server for the
// tiles of a block of one zoom, each tile once per pass, and it prints what they got as one line
// of words for the script to parse:
//
//	tiles N seconds S rate R wire W raw B p50 P max M errors E
//
// N tiles answered 200 in S seconds (R a second), W and B their mean bytes on the wire (gzip, as
// both servers send them to a client that accepts it) and inflated (the MVT itself), P and M the
// median and largest latency in ms, E the answers that were not 200 or failed. The tiles are
// those of -tiles z/x0-x1/y0-y1; -url is the template, {z}, {x} and {y} replaced. -passes walks
// the block that many times (a second pass finds the tiles a server keeps in memory); -for, when
// set, walks it again and again until that long has passed, a pass at most -passes times.
//
//	go run ./bench/vtload -url 'http://127.0.0.1:8080/maps/parcels/{z}/{x}/{y}.pbf' -tiles 14/3741-3750/6774-6783 -clients 8
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "", "tile URL template with {z}, {x} and {y}")
	block := flag.String("tiles", "", "the tiles, z/x0-x1/y0-y1 (inclusive)")
	clients := flag.Int("clients", 8, "concurrent clients")
	passes := flag.Int("passes", 1, "times each tile is asked for (at most, with -for)")
	dur := flag.Duration("for", 0, "when set, stop starting passes after this long")
	timeout := flag.Duration("timeout", 5*time.Minute, "the limit of one request")
	inflate := flag.Bool("inflate", true, "inflate gzip answers to count their bytes (raw); without, raw is the wire bytes and the client spends no CPU on it")
	flag.Parse()
	tiles, err := parseBlock(*block)
	if err != nil || *url == "" || *clients < 1 || *passes < 1 {
		fmt.Fprintln(os.Stderr, "vtload: want -url TEMPLATE -tiles z/x0-x1/y0-y1, clients and passes ≥ 1:", err)
		os.Exit(2)
	}
	r := load(*url, tiles, *clients, *passes, *dur, *timeout, *inflate)
	fmt.Println(r)
	if r.errors > 0 {
		fmt.Fprintln(os.Stderr, "vtload: first error:", r.first)
		os.Exit(1)
	}
}

type tile struct{ z, x, y int }

func parseBlock(s string) ([]tile, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return nil, fmt.Errorf("tiles %q: want z/x0-x1/y0-y1", s)
	}
	z, err := strconv.Atoi(parts[0])
	if err != nil {
		return nil, fmt.Errorf("tiles %q: %w", s, err)
	}
	var r [2][2]int
	for i, p := range parts[1:] {
		a, b, ok := strings.Cut(p, "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || hi < lo {
			return nil, fmt.Errorf("tiles %q: want a range lo-hi, not %q", s, p)
		}
		r[i] = [2]int{lo, hi}
	}
	var out []tile
	for y := r[1][0]; y <= r[1][1]; y++ {
		for x := r[0][0]; x <= r[0][1]; x++ {
			out = append(out, tile{z, x, y})
		}
	}
	return out, nil
}

type result struct {
	tiles, errors int
	seconds       float64
	wire, raw     int64
	lat           []float64
	first         error
}

func (r *result) String() string {
	n := max(r.tiles, 1)
	slices.Sort(r.lat)
	p50, top := 0.0, 0.0
	if len(r.lat) > 0 {
		p50, top = r.lat[len(r.lat)/2], r.lat[len(r.lat)-1]
	}
	return fmt.Sprintf("tiles %d seconds %.3f rate %.2f wire %d raw %d p50 %.1f max %.1f errors %d",
		r.tiles, r.seconds, float64(r.tiles)/r.seconds, r.wire/int64(n), r.raw/int64(n), p50, top, r.errors)
}

// load runs the clients: they take the tiles of each pass in turn from one counter.
func load(url string, tiles []tile, clients, passes int, dur, timeout time.Duration, inflate bool) *result {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}
	c := &http.Client{Transport: tr, Timeout: timeout}
	var mu sync.Mutex
	res := &result{}
	next := 0
	total := len(tiles) * passes
	start := time.Now()
	// take hands out the next request, or false when the run is over.
	take := func() (tile, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= total || (dur > 0 && next%len(tiles) == 0 && next > 0 && time.Since(start) > dur) {
			next = total
			return tile{}, false
		}
		t := tiles[next%len(tiles)]
		next++
		return t, true
	}
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var body, raw bytes.Buffer
			for {
				t, ok := take()
				if !ok {
					return
				}
				u := strings.NewReplacer("{z}", strconv.Itoa(t.z), "{x}", strconv.Itoa(t.x), "{y}", strconv.Itoa(t.y)).Replace(url)
				t0 := time.Now()
				wire, n, err := get(c, u, &body, &raw, inflate)
				ms := float64(time.Since(t0).Microseconds()) / 1000
				mu.Lock()
				if err != nil {
					res.errors++
					if res.first == nil {
						res.first = err
					}
				} else {
					res.tiles++
					res.wire += wire
					res.raw += n
					res.lat = append(res.lat, ms)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.seconds = time.Since(start).Seconds()
	return res
}

// get asks for one tile accepting gzip, and returns its bytes on the wire and inflated (when
// inflate says so, else the wire bytes again).
// body and raw are the client's buffers, kept between requests so that reading costs the client
// (on the same cores as the server) as little as it can.
func get(c *http.Client, url string, buf, raw *bytes.Buffer, inflate bool) (int64, int64, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	body := buf.Bytes()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("%s: %s: %.200s", url, resp.Status, body)
	}
	if !inflate || resp.Header.Get("Content-Encoding") != "gzip" || len(body) == 0 {
		return int64(len(body)), int64(len(body)), nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", url, err)
	}
	raw.Reset()
	n, err := raw.ReadFrom(zr)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: inflating: %w", url, err)
	}
	return int64(len(body)), n, nil
}
