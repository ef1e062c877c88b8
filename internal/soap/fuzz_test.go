package soap_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/limits"
)

// FuzzReadRequest feeds arbitrary bytes to the request reader: it must return a request or a
// fault, never panic, and whatever it reads must pass the api's limit check without a panic and
// write back out.
func FuzzReadRequest(f *testing.F) {
	for _, seed := range []string{
		envelope(`<g:GetMapCount/>`),
		envelope(`<g:GetMapName><Index>3</Index></g:GetMapName>`),
		envelope(`<g:ExportMapImage><MapDescription><Name>L</Name><MapArea xsi:type="g:CenterAndScale"><Center xsi:type="g:PointN"><X>1</X><Y>2</Y></Center><Scale>5</Scale></MapArea><LayerDescriptions><LayerDescription><LayerID>1</LayerID></LayerDescription></LayerDescriptions></MapDescription></g:ExportMapImage>`),
		envelope(`<g:QueryFeatureCount><QueryFilter xsi:type="g:SpatialFilter"><FilterGeometry xsi:type="g:PolygonN"><RingArray><Ring><PointArray><Point><X>1</X><Y>1</Y></Point></PointArray></Ring></RingArray></FilterGeometry></QueryFilter></g:QueryFeatureCount>`),
		envelope(`<g:GetMapTile><MapName>x</MapName><Level>1</Level><Format xsi:nil="true"/></g:GetMapTile>`),
		`<!DOCTYPE a>` + envelope(`<g:GetMapCount/>`),
		`not xml at all`,
	} {
		f.Add([]byte(seed))
	}
	c := newCodec()
	f.Fuzz(func(t *testing.T, data []byte) {
		// A stall is a denial of service: fail at once, so the fuzzer keeps the input.
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				panic(fmt.Sprintf("FuzzReadRequest: a %d-byte input has been read for 2 s", len(data)))
			}
		}()
		req, err := c.ReadRequest(bytes.NewReader(data), nil)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "soap:Client: ") {
				t.Fatalf("error is not a client fault: %v", err)
			}
			return
		}
		// The api's limits walk whatever the reader decodes without failing otherwise than
		// with a *limits.Error.
		if err := (limits.Request{}).Check(req.Operation, req.Body); err != nil {
			if _, ok := limits.Of(err); !ok {
				t.Fatalf("limits: %v is no limit's error", err)
			}
		}
		// A decoded request is a valid value of the schema: it writes out again.
		var b bytes.Buffer
		if err := c.WriteResponse(&b, req.Operation, req.Body); err != nil {
			t.Fatalf("re-encoding %s: %v", req.Operation, err)
		}
	})
}
