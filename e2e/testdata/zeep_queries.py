"""Calls every query operation of a mapfarm MapServer endpoint (the usa sample service) through
zeep, from a WSDL, and prints a JSON summary of what came back for the Go test to check.

usage: zeep_queries.py WSDL ADDRESS NAMESPACE

The client is generated from the WSDL alone; ADDRESS overrides the WSDL's soap:address.
"""
import json
import sys

import zeep
from zeep import Client, Settings

wsdl, address, ns = sys.argv[1:4]
client = Client(wsdl, settings=Settings(strict=True, xml_huge_tree=True))
svc = client.create_service("{%s}MapServerBinding" % ns, address)
T = lambda name: client.get_type("{%s}%s" % (ns, name))

COUNTIES, STATES, TABLE = 1, 0, 2
# An envelope over the US south-west, in the map's Web Mercator metres.
ENV = dict(XMin=-13000000.0, YMin=4000000.0, XMax=-12000000.0, YMax=5000000.0)
LA = dict(X=-13163590.0, Y=4035932.0)  # downtown Los Angeles


def qf(where="", **kw):
    return T("QueryFilter")(WhereClause=where, Resolution=0.0, **kw)


def sf(where, rel, geom, **kw):
    return T("SpatialFilter")(
        WhereClause=where, Resolution=0.0, SearchOrder="gisSearchOrderSpatial", SpatialRel=rel,
        SpatialRelDescription="", FilterGeometry=geom, GeometryFieldName="Shape", FilterOwnsGeometry=False, **kw)


def ints(fidset):
    """An ArrayOfInt (or a FIDSet holding one) as a list; zeep unwraps arrays of one element type."""
    if fidset is None:
        return []
    arr = getattr(fidset, "FIDArray", fidset)
    if arr is None:
        return []
    return list(getattr(arr, "Int", arr) or [])


def records(rs):
    fields = [f.Name for f in rs.Fields.FieldArray.Field]
    recs = rs.Records.Record if rs.Records else []
    return fields, [list(r.Values.Value) for r in recs]


def simple(v):
    return v if isinstance(v, (int, float, str, type(None))) else type(v).__name__


out = {}
envelope = T("EnvelopeN")(**ENV)
out["countWhere"] = svc.QueryFeatureCount(MapName="", LayerID=COUNTIES, QueryFilter=qf("STATEFP = '06'"))
out["countEnvelope"] = svc.QueryFeatureCount(
    MapName="", LayerID=COUNTIES, QueryFilter=sf("", "gisSpatialRelEnvelopeIntersects", envelope))
out["countEnvelopeWhere"] = svc.QueryFeatureCount(
    MapName="", LayerID=COUNTIES, QueryFilter=sf("STATEFP = '04'", "gisSpatialRelEnvelopeIntersects", envelope))
out["idsWhere"] = ints(svc.QueryFeatureIDs(MapName="", LayerID=COUNTIES, QueryFilter=qf("STATE = 'Utah'")))
point = T("PointN")(**LA)
out["idsPoint"] = ints(svc.QueryFeatureIDs(
    MapName="", LayerID=COUNTIES, QueryFilter=sf("", "gisSpatialRelIntersects", point)))

rs = svc.QueryFeatureData(MapName="", LayerID=COUNTIES, QueryFilter=qf(
    "STATEFP = '49'", SubFields="fid,NAME,Shape", PostfixClause="ORDER BY NAME"))
fields, recs = records(rs)
out["data"] = {"fields": fields, "names": [r[1] for r in recs], "ids": [r[0] for r in recs],
               "shapeTypes": sorted({simple(r[2]) for r in recs})}

ld = T("LayerDescription")(
    LayerID=COUNTIES, Visible=True, ShowLabels=False, ScaleSymbols=False, SetSelectionSymbol=False,
    SelectionBufferDistance=0.0, ShowSelectionBuffer=False, DefinitionExpression="STATEFP = '49'")
out["count2"] = svc.QueryFeatureCount2(MapName="", LayerDescription=ld, QueryFilter=qf())
out["ids2"] = ints(svc.QueryFeatureIDs2(MapName="", LayerDescription=ld, QueryFilter=qf("NAME LIKE 'S%'")))
res = svc.QueryFeatureData2(MapName="", LayerDescription=ld, QueryFilter=qf("NAME LIKE 'S%'", SubFields="fid,NAME"),
                            QueryResultOptions=T("QueryResultOptions")(Format="gisQueryResultJsonAsMime"))
fs = json.loads(res.MimeData)
out["data2Json"] = sorted(f["attributes"]["fid"] for f in fs["features"])

table = T("StandaloneTableDescription")(ID=TABLE)
out["rowCount"] = svc.QueryRowCount(MapName="", MapTableDescription=table, QueryFilter=qf("STATE = 'Texas'"))
out["rowIDs"] = ints(svc.QueryRowIDs(MapName="", MapTableDescription=table, QueryFilter=qf("STATEFP = '10'")))
res = svc.QueryData(MapName="", MapTableDescription=table, QueryFilter=qf("STATEFP = '10'"),
                    QueryResultOptions=T("QueryResultOptions")(Format="gisQueryResultRecordSetAsObject"))
fields, recs = records(res.Object)
out["queryData"] = {"fields": fields, "rows": [[simple(v) for v in r] for r in recs]}

stats = svc.QueryDataStatistics(
    MapName="", MapTableDescription=table,
    StatisticsRequest=T("StatisticsRequest")(
        StatisticDescriptions=T("ArrayOfStatisticDescription")([
            T("StatisticDescription")(StatisticFieldName="fid", StatisticType="gisDataStatTypeCount", ResultFieldName="n"),
            T("StatisticDescription")(StatisticFieldName="fid", StatisticType="gisDataStatTypeMax", ResultFieldName="maxfid"),
        ]),
        GroupByFields="STATEFP", OrderByFields="n DESC, STATEFP"),
    QueryFilter=qf())
fields, recs = records(stats)
out["statistics"] = {"fields": fields, "rows": [[simple(v) for v in r] for r in recs]}

info = svc.GetServerInfo(MapName="")
md = info.DefaultMapDescription
for l in md.LayerDescriptions.LayerDescription:
    l.DefinitionExpression = l.DefinitionExpression or ""
display = T("ImageDisplay")(ImageHeight=600, ImageWidth=800, ImageDPI=96)
found = svc.Find(MapDescription=md, MapImageDisplay=display, SearchString="Utah", Contains=False,
                 SearchFields="NAME", FindOption="gisFindAllLayers", LayerIDs=T("ArrayOfInt")([STATES, COUNTIES]))
out["find"] = [[r.LayerID, r.FeatureID, r.FieldName, r.Value] for r in (found or [])]
ident = svc.Identify(MapDescription=md, MapImageDisplay=display, SearchShape=point, Tolerance=2,
                     IdentifyOption="gisIdentifyAllLayers", LayerIDs=T("ArrayOfInt")([]))
out["identify"] = [[r.LayerID, r.FeatureID, {p.Key: p.Value for p in r.Properties.PropertyArray.PropertySetProperty}.get("County") or
                    {p.Key: p.Value for p in r.Properties.PropertyArray.PropertySetProperty}.get("State")] for r in (ident or [])]

syn = svc.GetSQLSyntaxInfo(MapName="", LayerID=COUNTIES)
out["sql"] = {"predicates": list(syn.SupportedPredicates.String), "caseSensitive": syn.StringComparisonCase,
              "functions": [p.Value for p in syn.FunctionNames.PropertyArray.PropertySetProperty]}

FACTS = 3
ca_ids = svc.QueryFeatureIDs(MapName="", LayerID=STATES, QueryFilter=qf("NAME = 'California'"))
ca_state = ints(ca_ids)[0]
rel = svc.QueryRelatedRecords(
    MapName="", SourceTableID=STATES, SourceFIDSet=T("FIDSet")(FIDArray=T("ArrayOfInt")([ca_state])),
    RelateDescription=T("RelateDescription")(RelationshipID=0, RelatedTableFields="GEOID,STATEFP",
                                             ResultFormat="gisRelateResultRelatedRecordSetAsObject"))
grp = rel.Object.RelatedRecordGroups.RelatedRecordGroup[0]
out["related"] = {"source": grp.SourceRowID, "geoids": sorted(r.Values.Value[0] for r in grp.Records.Record)}

for l in md.LayerDescriptions.LayerDescription:
    if l.LayerID == FACTS:
        l.Visible = True
links = svc.QueryHyperlinks(MapDescription=md, MapImageDisplay=display, LayerIDs=T("ArrayOfInt")([FACTS]))
out["hyperlinks"] = sorted(h.URL for h in (links or []))

tx = ints(svc.QueryFeatureIDs(MapName="", LayerID=FACTS, QueryFilter=qf("NAME = 'Texas'")))[0]
out["texasFacts"] = tx
out["popups"] = list(svc.QueryHTMLPopups(MapName="", TableID=FACTS, RowIDs=T("ArrayOfInt")([tx])) or [])
infos = svc.QueryAttachmentInfos(MapName="", TableID=FACTS, RowIDs=T("ArrayOfInt")([tx])) or []
out["attachments"] = sorted([a.AttachmentID, a.Name, a.ContentType, a.Size] for a in infos)
data = svc.QueryAttachmentData(MapName="", TableID=FACTS, AttachmentIDs=T("ArrayOfInt")([a.AttachmentID for a in infos]),
                               TransportType="gisTransportTypeEmbedded")
out["attachmentData"] = {str(d.AttachmentInfo.AttachmentID): d.Data.hex() for d in data}

subs = svc.GetMapTableSubtypeInfos(MapName="", TableIDs=T("ArrayOfInt")([]))
out["subtypes"] = [{"table": st.TableID, "field": st.SubtypeFieldName,
                    "codes": [si.SubtypeCode for si in st.SubtypeInfos.SubtypeInfo]} for st in subs]

rend = svc.GenerateDataClasses(
    MapName="", MapTableDescription=T("LayerDescription")(
        LayerID=FACTS, Visible=True, ShowLabels=False, ScaleSymbols=False, SetSelectionSymbol=False,
        SelectionBufferDistance=0.0, ShowSelectionBuffer=False, DefinitionExpression=""),
    DataClassificationDef=T("ClassBreaksDef")(ClassificationField="COUNTIES", ClassificationMethod="gisClassifyEqualInterval",
                                              BreakCount=2))
out["classes"] = {"min": rend.MinimumValue, "max": [c.ClassMaximumValue for c in rend.ClassBreakInfos.ClassBreakInfo]}

# The "2" variants, with a LayerDescription whose definition expression keeps the South only.
south = T("LayerDescription")(
    LayerID=FACTS, Visible=True, ShowLabels=False, ScaleSymbols=False, SetSelectionSymbol=False,
    SelectionBufferDistance=0.0, ShowSelectionBuffer=False, DefinitionExpression="REGION = 3")
two = {}
rel2 = svc.QueryRelatedRecords2(
    MapName="", MapTableDescription=south, SourceFIDSet=T("FIDSet")(FIDArray=T("ArrayOfInt")([tx])),
    RelateDescription=T("RelateDescription")(RelationshipID=1, RelatedTableFields="GEOID", IncludeGeometry=False,
                                             ResultFormat="gisRelateResultRelatedRecordSetAsObject"))
two["relatedCount"] = len(rel2.Object.RelatedRecordGroups.RelatedRecordGroup[0].Records.Record)
two["popups"] = len(svc.QueryHTMLPopups2(MapName="", MapTableDescription=south, RowIDs=T("ArrayOfInt")([tx])) or [])
infos2 = svc.QueryAttachmentInfos2(MapName="", MapTableDescription=south, RowIDs=T("ArrayOfInt")([tx])) or []
two["attachments"] = len(infos2)
data2 = svc.QueryAttachmentData2(MapName="", MapTableDescription=south, AttachmentIDs=T("ArrayOfInt")([infos2[0].AttachmentID]),
                                 TransportType="gisTransportTypeUrl")
two["attachmentURL"] = data2[0].URL
two["subtypes"] = [st.TableID for st in svc.GetMapTableSubtypeInfos2(
    MapName="", LayerDescriptions=T("ArrayOfLayerDescription")([south])) or []]
rv = svc.QueryRasterValue(MapName="", SourceTableID=FACTS, RowIDs=T("ArrayOfInt")([tx]), FieldName="SWATCH")
two["raster"] = [rv[0].ImageWidth, rv[0].ImageHeight, rv[0].ImageType, rv[0].ImageData.hex()]
rv2 = svc.QueryRasterValue2(MapName="", MapTableDescription=south, RowIDs=T("ArrayOfInt")([tx]),
                            ImageType=T("ImageType")(ImageFormat="gisImageJPG", ImageReturnType="gisImageReturnURL"))
two["raster2"] = [rv2[0].ImageType, rv2[0].ImageURL]
uv = svc.GenerateDataClasses(MapName="", MapTableDescription=south,
                             DataClassificationDef=T("UniqueValuesDef")(Fields=T("ArrayOfString")(["REGION"])))
two["uniqueValues"] = [u.Value for u in uv.UniqueValueInfos.UniqueValueInfo]
res = svc.QueryFeatureData2(MapName="", LayerDescription=south, QueryFilter=qf("", SubFields="NAME"),
                            QueryResultOptions=T("QueryResultOptions")(Format="gisQueryResultRecordSetAsObject"))
two["data2Names"] = sorted(r.Values.Value[0] for r in res.Object.Records.Record)
out["two"] = two

faults = {}
try:
    svc.QueryFeatureData(MapName="", LayerID=COUNTIES, QueryFilter=qf("NAME = ", SubFields="NAME"))
except zeep.exceptions.Fault as e:
    faults["where"] = [e.code, e.message]
try:
    svc.QueryFeatureData(MapName="", LayerID=COUNTIES, QueryFilter=qf("", SubFields="NAME,NOPE"))
except zeep.exceptions.Fault as e:
    faults["subfields"] = [e.code, e.message]
out["faults"] = faults
print(json.dumps(out))
