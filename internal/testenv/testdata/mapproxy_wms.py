"""Answers one WMS request through MapProxy (Debian's python3-mapproxy), in process, for the
REST and WMS interoperability tests (internal/testenv/mapproxy_cascade.go embeds it).

usage: mapproxy_wms.py MAPPROXY_YAML QUERY_STRING

Loads the configuration as MapProxy's WSGI application, sends it GET /service?QUERY_STRING and
writes the answer's body to stdout; the status and content type go to stderr. Exits 1 when the
status is not 200 or the answer is no image.
"""
import sys
from wsgiref.util import setup_testing_defaults

from mapproxy.wsgiapp import make_wsgi_app

app = make_wsgi_app(sys.argv[1])
environ = {}
setup_testing_defaults(environ)
environ["PATH_INFO"] = "/service"
environ["QUERY_STRING"] = sys.argv[2]
answer = {}


def start_response(status, headers, exc_info=None):
    answer["status"] = status
    answer["headers"] = dict(headers)


body = b"".join(app(environ, start_response))
ctype = answer.get("headers", {}).get("Content-type", answer.get("headers", {}).get("Content-Type", ""))
print(answer.get("status"), ctype, file=sys.stderr)
if not answer.get("status", "").startswith("200") or not ctype.startswith("image/"):
    sys.stderr.write(body.decode("utf-8", "replace")[:2000])
    sys.exit(1)
sys.stdout.buffer.write(body)
