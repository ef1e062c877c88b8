"""Calls a mapfarm MapServer endpoint through zeep, from a WSDL, and prints a JSON summary.

usage: zeep_client.py WSDL ADDRESS NAMESPACE OUTDIR

The client is generated from the WSDL alone (the served one, or the ArcGIS reference WSDL with its
prefix and namespace rewritten); ADDRESS overrides the WSDL's soap:address.
"""
import json
import sys

import zeep
from zeep import Client, Settings

wsdl, address, ns, outdir = sys.argv[1:5]
client = Client(wsdl, settings=Settings(strict=True, xml_huge_tree=True))
svc = client.create_service("{%s}MapServerBinding" % ns, address)
T = lambda name: client.get_type("{%s}%s" % (ns, name))

out = {}
out["mapCount"] = svc.GetMapCount()
name = svc.GetDefaultMapName()
out["defaultMapName"] = name
out["mapName0"] = svc.GetMapName(Index=0)
info = svc.GetServerInfo(MapName=name)
out["name"] = info.Name
out["units"] = info.Units
out["wkid"] = info.SpatialReference.WKID
out["fullExtent"] = [info.FullExtent.XMin, info.FullExtent.YMin, info.FullExtent.XMax, info.FullExtent.YMax]
out["layers"] = [
    {
        "id": l.LayerID,
        "name": l.Name,
        "fields": [f.Name for f in l.Fields.FieldArray.Field],
        "extent": [l.Extent.XMin, l.Extent.YMin, l.Extent.XMax, l.Extent.YMax],
    }
    for l in info.MapLayerInfos.MapLayerInfo
]


def props(ps):
    """A PropertySet as a dict; zeep unwraps single-element results down to the array."""
    arr = getattr(ps, "PropertyArray", None) or ps
    return {p.Key: p.Value for p in arr.PropertySetProperty}


out["documentInfo"] = props(svc.GetDocumentInfo())
out["config"] = props(svc.GetServiceConfigurationInfo())
out["returnTypes"] = svc.GetSupportedImageReturnTypes()
out["fixedScale"] = svc.IsFixedScaleMap(MapName=name)

# ExportMapImage with the server's own default map description sent back, as MIME data.
md = info.DefaultMapDescription
# zeep reads an empty required string back as None and then refuses to send it: restore "".
for ld in md.LayerDescriptions.LayerDescription:
    ld.DefinitionExpression = ld.DefinitionExpression or ""
display = T("ImageDisplay")(ImageHeight=300, ImageWidth=400, ImageDPI=96)
desc = T("ImageDescription")(
    ImageType=T("ImageType")(ImageFormat="gisImagePNG", ImageReturnType="gisImageReturnMimeData"),
    ImageDisplay=display,
)
img = svc.ExportMapImage(MapDescription=md, ImageDescription=desc)
with open(outdir + "/mime.png", "wb") as f:
    f.write(img.ImageData)
out["mime"] = {
    "width": img.ImageWidth,
    "height": img.ImageHeight,
    "scale": img.MapScale,
    "type": img.ImageType,
    "visible": list(img.VisibleLayerIDs.Int) if img.VisibleLayerIDs else [],
    "extent": [img.Extent.XMin, img.Extent.YMin, img.Extent.XMax, img.Extent.YMax],
}

# The same map by URL, at a centre and scale, as JPEG.
env = T("EnvelopeN")(XMin=-2e6, YMin=4e6, XMax=4e6, YMax=8e6)
md.MapArea = T("MapExtent")(Extent=env)
desc.ImageType.ImageFormat = "gisImageJPG"
desc.ImageType.ImageReturnType = "gisImageReturnURL"
img = svc.ExportMapImage(MapDescription=md, ImageDescription=desc)
out["url"] = {"url": img.ImageURL, "type": img.ImageType, "width": img.ImageWidth}

# Faults are zeep Faults with the server's message.
faults = {}
try:
    svc.GetMapName(Index=7)
except zeep.exceptions.Fault as e:
    faults["index"] = [e.code, e.message]
try:
    svc.GetServerInfo(MapName="NoSuchMap")
except zeep.exceptions.Fault as e:
    faults["map"] = [e.code, e.message]
out["faults"] = faults
print(json.dumps(out))
