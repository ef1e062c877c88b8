"""Calls every cache operation of a mapfarm MapServer endpoint through zeep, from a WSDL, and
prints a JSON summary. The map must have a seeded fused cache holding tile (LEVEL, ROW, COL).

usage: zeep_cache.py WSDL ADDRESS NAMESPACE LEVEL ROW COL
"""
import base64
import json
import sys

import zeep
from zeep import Client, Settings

wsdl, address, ns = sys.argv[1:4]
level, row, col = (int(v) for v in sys.argv[4:7])
client = Client(wsdl, settings=Settings(strict=True, xml_huge_tree=True))
svc = client.create_service("{%s}MapServerBinding" % ns, address)
name = svc.GetDefaultMapName()

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
# The 10.7 schema declares ArrayOfLayerCacheInfo with exactly one LayerCacheInfo (a schema
# slip: it is an array); mapfarm sends one per layer, which strict zeep refuses with the
# reference WSDL. This call uses a lenient client, which keeps the first element there.
lenient = Client(wsdl, settings=Settings(strict=False, xml_huge_tree=True)).create_service("{%s}MapServerBinding" % ns, address)
cdi = lenient.GetCacheDescriptionInfo(MapName=name)
out["serviceType"] = cdi.ServiceType
lci = cdi.LayerCacheInfos.LayerCacheInfo
lci = lci if isinstance(lci, list) else [lci]
out["layerCaches"] = [[l.LayerID, l.HasCache] for l in lci]
out["hasLayerCache"] = [svc.HasLayerCache(MapName=name, LayerID=-1), svc.HasLayerCache(MapName=name, LayerID=1)]
out["cacheName"] = svc.GetCacheName(MapName=name, LayerID=-1)
out["virtualDirectory"] = svc.GetVirtualCacheDirectory(MapName=name, LayerID=-1)
tile = svc.GetMapTile(MapName=name, Level=level, Row=row, Column=col, Format="png")
ltile = svc.GetLayerTile(MapName=name, LayerID=-1, Level=level, Row=row, Column=col)
out["tile"] = base64.b64encode(tile).decode()
out["layerTileSame"] = tile == ltile
try:
    svc.GetMapTile(MapName=name, Level=level, Row=0, Column=0)
    out["missingFault"] = ""
except zeep.exceptions.Fault as f:
    out["missingFault"] = f.message
print(json.dumps(out))
