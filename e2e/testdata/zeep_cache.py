"""Calls every cache operation of a mapfarm MapServer endpoint through zeep, from a WSDL, and
prints a JSON summary. The default map must have a seeded cache: the fused one when LAYER is -1,
else per-layer caches, of which layer LAYER's holds tile (LEVEL, ROW, COL); tile (LEVEL, 0, 0)
must be missing.

usage: zeep_cache.py WSDL ADDRESS NAMESPACE LAYER LEVEL ROW COL
"""
import base64
import json
import sys
import urllib.request

import zeep
from zeep import Client, Settings

wsdl, address, ns = sys.argv[1:4]
layer, level, row, col = (int(v) for v in sys.argv[4:8])
client = Client(wsdl, settings=Settings(strict=True, xml_huge_tree=True))
svc = client.create_service("{%s}MapServerBinding" % ns, address)
name = svc.GetDefaultMapName()


def fault(call):
    """Runs call and returns the fault's message, or "" when it succeeds."""
    try:
        call()
    except zeep.exceptions.Fault as f:
        return f.message
    return ""


out = {}
out["fused"] = svc.HasSingleFusedMapCache(MapName=name)
tci = svc.GetTileCacheInfo(MapName=name)
out["tileCacheInfo"] = {
    "cols": tci.TileCols,
    "rows": tci.TileRows,
    "dpi": tci.DPI,
    "origin": [tci.TileOrigin.X, tci.TileOrigin.Y],
    "wkid": tci.SpatialReference.WKID,
    "levels": [l.LevelID for l in tci.LODInfos.LODInfo],
}
tii = svc.GetTileImageInfo(MapName=name)
out["format"] = tii.CacheTileFormat
cci = svc.GetCacheControlInfo(MapName=name)
# zeep unwraps a type with a single element (CacheControlInfo) to that element's value.
out["clientCaching"] = cci if isinstance(cci, bool) else cci.ClientCachingAllowed
st = svc.GetCacheStorageInfo(MapName=name)
out["storage"] = [st.StorageFormat, st.PacketSize]

# GetCacheDescriptionInfo sends one LayerCacheInfo per layer, as ArcGIS does. The 10.7 reference
# schema declares ArrayOfLayerCacheInfo with exactly one LayerCacheInfo (a slip in Esri's schema),
# so a strict client built from it refuses a map of several layers; mapfarm's own WSDL declares
# the element repeating. A lenient client (strict=False) from the reference keeps the first
# element typed and the others as raw XML elements, which are parsed here with the schema's
# LayerCacheInfo type: nothing is lost.
try:
    cdi = svc.GetCacheDescriptionInfo(MapName=name)
    out["cdiClient"] = "strict"
except zeep.exceptions.XMLParseError as e:
    out["strictCdiError"] = str(e)
    lenient = Client(wsdl, settings=Settings(strict=False, xml_huge_tree=True))
    cdi = lenient.create_service("{%s}MapServerBinding" % ns, address).GetCacheDescriptionInfo(MapName=name)
    out["cdiClient"] = "lenient"
else:
    lenient = client
out["serviceType"] = cdi.ServiceType
arr = cdi.LayerCacheInfos
lci = arr.LayerCacheInfo
lci = list(lci) if isinstance(lci, list) else [lci]
item_type = lenient.get_type("{%s}LayerCacheInfo" % ns)
for el in getattr(arr, "_raw_elements", None) or []:
    lci.append(item_type.parse_xmlelement(el, lenient.wsdl.types))
out["layerCaches"] = [[l.LayerID, l.HasCache] for l in lci]
out["cdiLevels"] = [l.LevelID for l in cdi.TileCacheInfo.LODInfos.LODInfo]

layer_ids = [-1] + [l.LayerID for l in lci]
out["hasLayerCache"] = {str(i): svc.HasLayerCache(MapName=name, LayerID=i) for i in layer_ids}
out["cacheName"] = svc.GetCacheName(MapName=name, LayerID=layer)
out["otherCacheNameFault"] = fault(lambda: svc.GetCacheName(MapName=name, LayerID=-1 if layer >= 0 else 0))
vdir = svc.GetVirtualCacheDirectory(MapName=name, LayerID=layer)
out["virtualDirectory"] = vdir
with urllib.request.urlopen("%s/L%02d/R%08x/C%08x.png" % (vdir, level, row, col), timeout=60) as resp:
    out["virtualTile"] = base64.b64encode(resp.read()).decode()
    out["virtualTileType"] = resp.headers.get("Content-Type")
tile = svc.GetLayerTile(MapName=name, LayerID=layer, Level=level, Row=row, Column=col, Format="png")
out["tile"] = base64.b64encode(tile).decode()
if layer == -1:
    out["mapTileSame"] = svc.GetMapTile(MapName=name, Level=level, Row=row, Column=col) == tile
    out["mapTileFault"] = ""
else:
    # A map with per-layer caches has no fused cache to take a map tile from.
    out["mapTileSame"] = False
    out["mapTileFault"] = fault(lambda: svc.GetMapTile(MapName=name, Level=level, Row=row, Column=col))
out["missingFault"] = fault(lambda: svc.GetLayerTile(MapName=name, LayerID=layer, Level=level, Row=0, Column=0))
print(json.dumps(out))
