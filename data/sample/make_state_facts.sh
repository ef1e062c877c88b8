#!/bin/sh
# Builds us_state_facts_3857.gpkg (table state_facts and its attachments table state_facts__ATTACH)
# from the states and counties GeoPackages next to this script. Needs gdal-bin (with SpatiaLite) and
# python3. Run from this directory: sh make_state_facts.sh
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ogr2ogr -f GPKG "$tmp/w.gpkg" us_states_10m_3857.gpkg states -nln s3857
ogr2ogr -update "$tmp/w.gpkg" us_states_10m_4326.gpkg states -nln s4326
ogr2ogr -update "$tmp/w.gpkg" us_counties_10m_3857.gpkg counties -nln c
rm -f us_state_facts_3857.gpkg
# REGION is the Census region (1 Northeast, 2 Midwest, 3 South, 4 West; 9 for the territories),
# COUNTIES the number of county records, AREA_KM2 the geodesic area of the state's 4326 polygon;
# the python step below adds SWATCH (a raster field) and the attachments.
ogr2ogr -f GPKG us_state_facts_3857.gpkg "$tmp/w.gpkg" -nln state_facts -nlt MULTIPOLYGON -preserve_fid -sql "
SELECT s.fid AS fid, s.geom AS geom, s.NAME AS NAME, s.STATEFP AS STATEFP,
  CAST(CASE
    WHEN s.STATEFP IN ('09','23','25','33','44','50','34','36','42') THEN 1
    WHEN s.STATEFP IN ('17','18','26','39','55','19','20','27','29','31','38','46') THEN 2
    WHEN s.STATEFP IN ('10','11','12','13','24','37','45','51','54','01','21','28','47','05','22','40','48') THEN 3
    WHEN s.STATEFP IN ('04','08','16','30','32','35','49','56','02','06','15','41','53') THEN 4
    ELSE 9 END AS INTEGER) AS REGION,
  CAST((SELECT COUNT(*) FROM c WHERE c.STATEFP = s.STATEFP) AS INTEGER) AS COUNTIES,
  ROUND(ST_Area((SELECT g.geom FROM s4326 g WHERE g.STATEFP = s.STATEFP), 1) / 1000000.0, 1) AS AREA_KM2,
  'https://en.wikipedia.org/wiki/' || REPLACE(s.NAME, ' ', '_') AS WIKI
FROM s3857 s ORDER BY s.fid" 2>/dev/null
python3 - <<'PY'
import sqlite3, struct, zlib

def png(r, g, b, size=2):
    """A size×size PNG of one colour."""
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + bytes([r, g, b]) * size for _ in range(size))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))

db = sqlite3.connect("us_state_facts_3857.gpkg")
db.execute("""CREATE TABLE state_facts__ATTACH (ATTACHMENTID INTEGER PRIMARY KEY AUTOINCREMENT,
  REL_OBJECTID INTEGER NOT NULL, CONTENT_TYPE TEXT NOT NULL, ATT_NAME TEXT NOT NULL,
  DATA_SIZE INTEGER NOT NULL, DATA BLOB)""")
db.execute("""INSERT INTO gpkg_contents (table_name, data_type, identifier, description, last_change)
  VALUES ('state_facts__ATTACH', 'attributes', 'state_facts__ATTACH', 'attachments of state_facts',
  strftime('%Y-%m-%dT%H:%M:%fZ','now'))""")
# Every western state (REGION 4) gets a text note; Texas also gets a PNG swatch.
rows = db.execute("SELECT fid, NAME, COUNTIES, AREA_KM2 FROM state_facts WHERE REGION = 4 OR NAME = 'Texas' ORDER BY fid").fetchall()
for fid, name, counties, area in rows:
    note = ("%s: %d county records, %.1f km2.\n" % (name, counties, area)).encode()
    db.execute("INSERT INTO state_facts__ATTACH (REL_OBJECTID, CONTENT_TYPE, ATT_NAME, DATA_SIZE, DATA) VALUES (?,?,?,?,?)",
               (fid, "text/plain", name.replace(" ", "_") + ".txt", len(note), note))
    if name == "Texas":
        p = png(191, 10, 48)
        db.execute("INSERT INTO state_facts__ATTACH (REL_OBJECTID, CONTENT_TYPE, ATT_NAME, DATA_SIZE, DATA) VALUES (?,?,?,?,?)",
                   (fid, "image/png", "swatch.png", len(p), p))
# SWATCH is a raster field: an 8x8 PNG per state in its Census region's colour.
region_colours = {1: (31, 119, 180), 2: (255, 127, 14), 3: (44, 160, 44), 4: (214, 39, 40), 9: (148, 103, 189)}
# The GeoPackage's R-tree triggers call SpatiaLite functions plain sqlite3 lacks: set them aside
# while updating (the geometries do not change).
triggers = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'state_facts'").fetchall()
for name, _ in triggers:
    db.execute('DROP TRIGGER "%s"' % name)
db.execute("ALTER TABLE state_facts ADD COLUMN SWATCH BLOB")
for fid, region in db.execute("SELECT fid, REGION FROM state_facts").fetchall():
    db.execute("UPDATE state_facts SET SWATCH = ? WHERE fid = ?", (png(*region_colours[region], size=8), fid))
for _, sql in triggers:
    db.execute(sql)
db.commit()
db.close()
PY
