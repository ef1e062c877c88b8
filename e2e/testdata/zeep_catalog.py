"""Calls the mapfarm SOAP Catalog through zeep, from a WSDL, follows every listed service to its
WSDL and endpoint, and prints a JSON summary.

usage: zeep_catalog.py WSDL ADDRESS NAMESPACE [TOKEN]

The client is generated from the WSDL alone (the ArcGIS reference Catalog WSDL with its prefix and
namespace rewritten, or the served one); ADDRESS overrides the WSDL's soap:address. With TOKEN, every
request carries it as ?token=.
"""
import json
import sys
import urllib.request

import zeep
from zeep import Client, Settings

wsdl, address, ns = sys.argv[1:4]
token = sys.argv[4] if len(sys.argv) > 4 else ""
q = ("?token=" + token) if token else ""
settings = Settings(strict=True)
client = Client(wsdl, settings=settings)
cat = client.create_service("{%s}ServiceCatalogBinding" % ns, address + q)


def items(arr, name):
    """The items of an ArrayOfX answer: zeep unwraps a single-element result down to the list of
    items, gives the array object where it does not, and None for an empty array."""
    if arr is None:
        return []
    if isinstance(arr, list):
        return arr
    return list(getattr(arr, name, None) or [])


def describe(sds):
    return [
        {
            "name": s.Name,
            "type": s.Type,
            "url": s.Url,
            "parentType": s.ParentType,
            "capabilities": s.Capabilities,
            "description": s.Description,
        }
        for s in items(sds, "ServiceDescription")
    ]


out = {
    "version": cat.GetMessageVersion(),
    "formats": cat.GetMessageFormats(),
    "requiresTokens": cat.RequiresTokens(),
    "tokenServiceURL": cat.GetTokenServiceURL(),
    "folders": items(cat.GetFolders(), "String"),
    "services": describe(cat.GetServiceDescriptions()),
    "root": describe(cat.GetServiceDescriptionsEx(FolderName="")),
}
try:
    cat.GetServiceDescriptionsEx(FolderName="nosuch")
    out["folderFault"] = None
except zeep.exceptions.Fault as e:
    out["folderFault"] = [e.code, e.message]

# Follow each service: its WSDL at Url?wsdl, a zeep client built from that WSDL, one call.
followed = {}
for s in out["services"]:
    url = s["url"] + "?wsdl" + (("&token=" + token) if token else "")
    with urllib.request.urlopen(url, timeout=30) as resp:
        status, ctype = resp.status, resp.headers.get("Content-Type")
    ms = Client(url, settings=settings)
    port = ms.create_service("{%s}MapServerBinding" % ns, s["url"] + q)
    followed[s["name"]] = {
        "status": status,
        "contentType": ctype,
        "service": list(ms.wsdl.services.keys()),
        "defaultMapName": port.GetDefaultMapName(),
        "mapCount": port.GetMapCount(),
    }
out["followed"] = followed
print(json.dumps(out))
