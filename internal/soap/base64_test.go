package soap_test

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// A tile answer carries its bytes as base64 text that reads back to the same bytes, with
// nothing escaped or added around it (the encoder writes it straight into the buffer).
func TestWriteResponseBase64(t *testing.T) {
	for _, data := range [][]byte{nil, {0}, []byte("\x89PNG\r\n\x1a\n<&>\"'"), bytes.Repeat([]byte{0xff, 0xfe, 0x00, '<'}, 5000)} {
		var buf bytes.Buffer
		if err := newCodec().WriteResponse(&buf, "GetMapTile", &gisxml.GetMapTileResponse{Result: data}); err != nil {
			t.Fatal(err)
		}
		want := "<Result>" + base64.StdEncoding.EncodeToString(data) + "</Result>"
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Fatalf("%d bytes: response %.200s… does not hold %.60s…", len(data), buf.Bytes(), want)
		}
		var got gisxml.GetMapTileResponse
		if err := newCodec().ReadResponse(&buf, "GetMapTile", &got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Result, data) {
			t.Errorf("%d bytes read back as %d bytes", len(data), len(got.Result))
		}
	}
}
