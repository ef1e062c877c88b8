// Package soap reads and writes the SOAP 1.1 messages of the MapServer interface: requests
// decoded into the generated gisxml types, responses and faults encoded from them, and the
// WSDL. A Codec is built once per process (NewCodec) and is safe for concurrent use.
//
// Requests are streamed: the reader takes encoding/xml tokens straight into the gisxml values,
// builds no tree, passes unknown elements over without keeping them, and so holds memory in
// proportion to what it decodes, not to the document. Limits bound a message: its XML nesting,
// its elements, and the bytes its decoded values take (counted as they are allocated); DTDs
// and entity declarations are refused. A message over a limit gets a soap:Client fault whose
// Err is a *limits.Error naming the limit. Values at fault are reported with the path of the
// element (ExportMapImage/ImageDescription/ImageType/ImageFormat: ...), and a syntax or limit
// error anywhere in a message outranks an error in its values.
package soap
