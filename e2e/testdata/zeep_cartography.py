"""Calls the cartography operations of a mapfarm MapServer endpoint (the world sample service)
through zeep, from a WSDL: ExportScaleBar (both kinds, MIME data and URL), GetLegendInfo,
GetLegendInfo2 with a drawing description, GetDefaultLayerDrawingDescriptions, and
ExportMapImage with a drawing description (picture fills named by PictureUri among its symbols), a
selection and custom graphics in PNG32, SVG and PDF, and point labels placed by a
LabelPlacementDescription.
Images go to OUTDIR; a JSON summary goes to stdout for the Go test to check.

usage: zeep_cartography.py WSDL ADDRESS NAMESPACE OUTDIR
"""
import base64
import json
import struct
import sys
import zlib

import zeep
from zeep import Client, Settings

wsdl, address, ns, outdir = sys.argv[1:5]
client = Client(wsdl, settings=Settings(strict=True, xml_huge_tree=True))
svc = client.create_service("{%s}MapServerBinding" % ns, address)
T = lambda name: client.get_type("{%s}%s" % (ns, name))

out = {}
name = svc.GetDefaultMapName()
info = svc.GetServerInfo(MapName=name)
md = info.DefaultMapDescription
for ld in md.LayerDescriptions.LayerDescription:
    ld.DefinitionExpression = ld.DefinitionExpression or ""
# 100 km across 1000 px at 96 DPI: 1:377,953, ten pixels per kilometre in the scale bar.
md.MapArea = T("MapExtent")(Extent=T("EnvelopeN")(XMin=0.0, YMin=0.0, XMax=100000.0, YMax=50000.0))
map_display = T("ImageDisplay")(ImageHeight=500, ImageWidth=1000, ImageDPI=96)
rgb = lambda r, g, b: T("RgbColor")(Red=r, Green=g, Blue=b)
mime = lambda fmt="gisImagePNG32": T("ImageType")(ImageFormat=fmt, ImageReturnType="gisImageReturnMimeData")


def save(name, data):
    with open(outdir + "/" + name, "wb") as f:
        f.write(data)


def text_symbol(size, color):
    return T("TextSymbol")(
        Color=color, BreakCharIndex=0, VerticalAlignment="gisTVABaseline", HorizontalAlignment="gisTHALeft",
        Clip=False, RightToLeft=False, Angle=0.0, XOffset=0.0, YOffset=0.0, ShadowXOffset=0.0, ShadowYOffset=0.0,
        TextPosition="gisTPNormal", TextCase="gisTCNormal", CharacterSpacing=0.0, CharacterWidth=100.0,
        WordSpacing=100.0, Kerning=False, Leading=0.0, TextDirection="gisTDHorizontal", FlipAngle=0.0,
        TypeSetting=False, Text="", Size=size, MaskStyle="gisMSNone", MaskSize=0.0, FontName="DejaVu Sans")


fill = lambda r, g, b: T("SimpleFillSymbol")(Color=rgb(r, g, b), Style="gisSFSSolid")

# ExportScaleBar: an alternating bar in kilometres (two 20 km divisions) as MIME data.
alt = T("AlternatingScaleBar")(
    Division=20.0, Divisions=2, Subdivisions=4, Units="gisKilometers", UnitLabel="km",
    LabelFrequency="gisScaleBarDivisionsAndFirstSubdivisions", LabelPosition="gisAbove",
    LabelSymbol=text_symbol(9.0, rgb(0, 0, 0)), ResizeHint="gisScaleBarFixed",
    NumberFormat=T("NumericFormat")(RoundingOption="gisRoundNumberOfDecimals", RoundingValue=1),
    FillSymbol1=fill(0, 0, 0), FillSymbol2=fill(255, 255, 255))
sb_desc = T("ImageDescription")(ImageType=mime(), ImageDisplay=T("ImageDisplay")(ImageHeight=60, ImageWidth=600, ImageDPI=96))
r = svc.ExportScaleBar(ScaleBar=alt, MapDescription=md, MapDisplay=map_display, BackGroundColor=rgb(255, 255, 255), ImageDescription=sb_desc)
save("scalebar_alternating.png", r.ImageData)
out["scalebarMime"] = {"width": r.ImageWidth, "height": r.ImageHeight, "type": r.ImageType}

# A single-division bar in miles, by URL.
single = T("SingleDivisionScaleBar")(Units="gisMiles", DivisionMarkHeight=6.0, MarkPosition="gisBelow",
                                     FillSymbol=fill(255, 255, 200))
sb_desc.ImageType = T("ImageType")(ImageFormat="gisImagePNG", ImageReturnType="gisImageReturnURL")
r = svc.ExportScaleBar(ScaleBar=single, MapDescription=md, MapDisplay=map_display, ImageDescription=sb_desc)
out["scalebarURL"] = {"url": r.ImageURL, "width": r.ImageWidth, "type": r.ImageType}

# GetLegendInfo for all layers.
patch = T("MapServerLegendPatch")(Width=20.0, Height=14.0, ImageDPI=96.0)
legend = svc.GetLegendInfo(MapName=name, LayerIDs=T("ArrayOfInt")([]), LegendPatch=patch, ImageType=mime())
out["legend"] = []
for li in legend:
    classes = []
    for g in li.LegendGroups.MapServerLegendGroup:
        for c in g.LegendClasses.MapServerLegendClass:
            fn = "legend_%d_%d.png" % (li.LayerID, len(classes))
            save(fn, c.SymbolImage.ImageData)
            classes.append({"label": c.Label, "file": fn, "width": c.SymbolImage.ImageWidth})
    out["legend"].append({"layer": li.LayerID, "name": li.Name, "classes": classes})

# A unique value renderer for the countries layer, for GetLegendInfo2 and ExportMapImage.
uv = T("UniqueValueRenderer")(
    Field1="NAME", DefaultSymbol=fill(235, 235, 225), DefaultLabel="Other countries",
    UniqueValueInfos=T("ArrayOfUniqueValueInfo")([
        T("UniqueValueInfo")(Value="Brazil", Label="Brazil", Symbol=fill(0, 150, 0)),
        T("UniqueValueInfo")(Value="Australia", Label="Australia", Symbol=fill(200, 0, 0)),
    ]))
countries = md.LayerDescriptions.LayerDescription[1]
countries.Visible = True
countries.ShowLabels = False
countries.DrawingDescription = T("FeatureLayerDrawingDescription")(FeatureRenderer=uv, Transparency=0)
legend2 = svc.GetLegendInfo2(MapDescription=md, MapImageDisplay=map_display, LayerIDs=T("ArrayOfInt")([1]),
                             LegendPatch=patch, ImageType=mime())
out["legend2"] = [c.Label for c in legend2[0].LegendGroups.MapServerLegendGroup[0].LegendClasses.MapServerLegendClass]
save("legend2_australia.png", legend2[0].LegendGroups.MapServerLegendGroup[0].LegendClasses.MapServerLegendClass[1].SymbolImage.ImageData)

# GetDefaultLayerDrawingDescriptions.
dds = svc.GetDefaultLayerDrawingDescriptions(MapName=name, LayerIDs=T("ArrayOfInt")([]),
                                             SymbolOutputOptions=T("ServerSymbolOutputOptions")(ConvertLabelExpressions=True))
desc_out = []
for dd in dds:
    r = dd.FeatureRenderer
    sym = r.Symbol
    desc_out.append({"type": type(dd).__name__, "renderer": type(r).__name__, "symbol": type(sym).__name__,
                     "color": [sym.Color.Red, sym.Color.Green, sym.Color.Blue],
                     "labels": [lc.LabelExpression for lc in dd.LabelingDescription.LabelClassDescriptions.LabelClassDescription]
                     if dd.LabelingDescription else []})
out["drawingDescriptions"] = desc_out

# Picture fills named by PictureUri: India from a data: URI (a blue PNG), Canada from this farm's
# own output (the Australia legend swatch, asked for by URL).
def png_rgb(w, h, rgb):
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    raw = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


legend2_url = svc.GetLegendInfo2(MapDescription=md, MapImageDisplay=map_display, LayerIDs=T("ArrayOfInt")([1]), LegendPatch=patch,
                                 ImageType=T("ImageType")(ImageFormat="gisImagePNG32", ImageReturnType="gisImageReturnURL"))
swatch_url = legend2_url[0].LegendGroups.MapServerLegendGroup[0].LegendClasses.MapServerLegendClass[1].SymbolImage.ImageURL
blue_uri = "data:image/png;base64," + base64.b64encode(png_rgb(4, 4, (0, 0, 200))).decode()
uv.UniqueValueInfos.UniqueValueInfo.append(
    T("UniqueValueInfo")(Value="India", Label="India", Symbol=T("PictureFillSymbol")(PictureUri=blue_uri, Width=3.0)))
uv.UniqueValueInfos.UniqueValueInfo.append(
    T("UniqueValueInfo")(Value="Canada", Label="Canada", Symbol=T("PictureFillSymbol")(PictureUri=swatch_url)))
out["pictureSwatchURL"] = swatch_url

# ExportMapImage of the world with the unique value renderer, Russia selected, and a marker in
# the Pacific, as PNG32, SVG and PDF.
md.MapArea = T("MapExtent")(Extent=T("EnvelopeN")(XMin=-2e7, YMin=-1e7, XMax=2e7, YMax=1e7))
countries.SelectionFeatures = T("ArrayOfInt")([76])
countries.SelectionColor = rgb(255, 0, 255)
md.CustomGraphics = T("ArrayOfGraphicElement")([
    T("MarkerElement")(Point=T("PointN")(X=-1.5e7, Y=0.0),
                       Symbol=T("SimpleMarkerSymbol")(Angle=0.0, Color=rgb(0, 0, 255), Size=16.0, XOffset=0.0, YOffset=0.0,
                                                      Outline=False, OutlineSize=0.0, OutlineColor=rgb(0, 0, 0), Style="gisSMSSquare")),
])
display = T("ImageDisplay")(ImageHeight=200, ImageWidth=400, ImageDPI=96)
out["exports"] = {}
for fmt, ext in (("gisImagePNG32", "png"), ("gisImageSVG", "svg"), ("gisImagePDF", "pdf")):
    img = svc.ExportMapImage(MapDescription=md, ImageDescription=T("ImageDescription")(ImageType=mime(fmt), ImageDisplay=display))
    save("export." + ext, img.ImageData)
    out["exports"][ext] = {"type": img.ImageType, "width": img.ImageWidth}

# Label placement from the request: the country points labelled above, then below, their
# markers (only the points layer drawn, over South America).
md.CustomGraphics = T("ArrayOfGraphicElement")([])
md.MapArea = T("MapExtent")(Extent=T("EnvelopeN")(XMin=-9.5e6, YMin=-6.5e6, XMax=-3.5e6, YMax=1.5e6))
countries.Visible = False
points = md.LayerDescriptions.LayerDescription[0]
points.Visible = True
points.ShowLabels = True
label_display = T("ImageDisplay")(ImageHeight=400, ImageWidth=300, ImageDPI=96)
for where in ("AboveCenter", "BelowCenter"):
    points.DrawingDescription = T("FeatureLayerDrawingDescription")(LabelingDescription=T("LabelingDescription")(
        LabelClassDescriptions=T("ArrayOfLabelClassDescription")([T("LabelClassDescription")(
            LabelPlacementDescription=T("PointLabelPlacementDescription")(Type="gisServerPointLabelPlacement" + where),
            LabelExpression="[NAME]",
            Symbol=T("SimpleTextSymbol")(Color=rgb(0, 0, 0), Size=11.0))])))
    img = svc.ExportMapImage(MapDescription=md, ImageDescription=T("ImageDescription")(ImageType=mime(), ImageDisplay=label_display))
    save("labels_%s.png" % where, img.ImageData)
points.DrawingDescription = None

faults = {}
try:
    svc.ExportMapImage(MapDescription=md, ImageDescription=T("ImageDescription")(ImageType=mime("gisImageEMF"), ImageDisplay=display))
except zeep.exceptions.Fault as e:
    faults["emf"] = [e.code, e.message]
out["faults"] = faults
print(json.dumps(out))
