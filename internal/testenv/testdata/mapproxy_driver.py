"""Drives MapProxy (Debian's python3-mapproxy) for the cache interoperability tests
(internal/testenv/mapproxy.go embeds it).

usage: mapproxy_driver.py seed MAPPROXY_YAML SEED_YAML
       mapproxy_driver.py read MAPPROXY_YAML REQUEST_JSON

seed runs mapproxy-seed (one process) and prints {"ok": true}. read loads the MapProxy
configuration and, for each cache named in the request ({"cache": [[x, y, z], ...]}, x the
column and y the row of a grid with origin nw), reads every listed tile through the cache's own
backend and prints {"cache": {"z/y/x": {"sha256": ..., "len": ..., "bbox": [...]}}} for the tiles
it holds (bbox: the grid's bounds of the tile).
"""
import hashlib
import json
import sys

mode = sys.argv[1]
if mode == "seed":
    import contextlib

    from mapproxy.seed.script import main

    sys.argv = ["mapproxy-seed", "-f", sys.argv[2], "-s", sys.argv[3], "-c", "1"]
    # mapproxy-seed reports progress on stdout, which carries only the JSON answer here.
    with contextlib.redirect_stdout(sys.stderr):
        code = main()
    if code:
        sys.exit(code)
    print(json.dumps({"ok": True}))
    sys.exit(0)

from mapproxy.cache.tile import Tile
from mapproxy.config.loader import load_configuration

conf = load_configuration(sys.argv[2])
with open(sys.argv[3]) as f:
    request = json.load(f)
out = {}
for name, coords in request.items():
    [(grid, extent, mgr)] = conf.caches[name].caches()
    found = {}
    for x, y, z in coords:
        t = Tile((x, y, z))
        if not mgr.cache.load_tile(t):
            continue
        buf = t.source.as_buffer()
        buf.seek(0)
        data = buf.read()
        found["%d/%d/%d" % (z, y, x)] = {"sha256": hashlib.sha256(data).hexdigest(), "len": len(data),
                                         "bbox": list(grid.tile_bbox((x, y, z)))}
    out[name] = found
print(json.dumps(out))
