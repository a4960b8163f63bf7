#!/usr/bin/python3
"""Writes the archives test-model-archive.c reads, good and hostile:

  make-archives.py RANKS_DIR OUTDIR

RANKS_DIR holds rank-N.json traces (tools/make-rank-traces.py). Good: job.zip
(deflated and stored members, one of them .json.gz, under a folder, with a
README), job.tar, job.tar.gz, job-pax.tar (a path of 150 bytes, pax), and
job64.zip (zip64 central directory). Hostile: bomb.zip (10 MiB of zeros in
10 KiB), lying.zip (inflates past its declared size), overlap.zip (two
members on one deflate stream), badcrc.zip, traversal.zip (../), absolute.tar
(/etc/...), link.tar (a symlink to /etc/passwd named rank-9.json), cut.tar.gz
(cut in a member) and many.zip (5000 members). The zips are written by hand
(struct, zlib) so that every field is ours.
"""
import gzip
import io
import os
import struct
import sys
import tarfile
import zlib


def deflate(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def zip_bytes(members, zip64=False, overlap=False):
    """members: (name, data, method, declared_size or None, crc or None)."""
    out = io.BytesIO()
    central = []
    first_local = None
    for name, data, method, declared, crc in members:
        raw = name.encode()
        comp = deflate(data) if method == 8 else data
        size = len(data) if declared is None else declared
        crc = zlib.crc32(data) if crc is None else crc
        if overlap and first_local is not None:
            # the second member points at the first one's local header and data
            central.append((raw, method, crc, len(comp), size, first_local))
            continue
        local = out.tell()
        if first_local is None:
            first_local = local
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, method, 0, 0, crc, len(comp),
                              size, len(raw), 0))
        out.write(raw)
        out.write(comp)
        central.append((raw, method, crc, len(comp), size, local))
    cd_start = out.tell()
    for raw, method, crc, csize, usize, local in central:
        extra = b""
        if zip64:
            extra = struct.pack("<HHQQQ", 1, 24, usize, csize, local)
            csize32 = usize32 = local32 = 0xFFFFFFFF
        else:
            csize32, usize32, local32 = csize, usize, local
        out.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 0x031e, 20, 0, method, 0, 0, crc,
                              csize32, usize32, len(raw), len(extra), 0, 0, 0, 0o100644 << 16,
                              local32))
        out.write(raw)
        out.write(extra)
    cd_size = out.tell() - cd_start
    n = len(central)
    if zip64:
        rec = out.tell()
        out.write(struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, n, n, cd_size,
                              cd_start))
        out.write(struct.pack("<IIQI", 0x07064b50, 0, rec, 1))
        out.write(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                              0xFFFFFFFF, 0))
    else:
        out.write(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, n, n, cd_size, cd_start, 0))
    return out.getvalue()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def tar_bytes(entries, fmt=tarfile.GNU_FORMAT, mode="w"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=fmt) as t:
        for name, data, kind in entries:
            info = tarfile.TarInfo(name)
            if kind == "link":
                info.type = tarfile.SYMTYPE
                info.linkname = data
                t.addfile(info)
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def main():
    ranks_dir, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    names = sorted((n for n in os.listdir(ranks_dir) if n.startswith("rank-") and n.endswith(".json")),
                   key=lambda n: int(n[5:-5]))
    ranks = [(n, open(os.path.join(ranks_dir, n), "rb").read()) for n in names]

    # good
    members = []
    for i, (n, data) in enumerate(ranks):
        if i == 1:
            members.append(("job/" + n + ".gz", gzip.compress(data, 3), 0, None, None))
        else:
            members.append(("job/" + n, data, 8 if i % 2 == 0 else 0, None, None))
    members.append(("job/README.txt", b"not a trace\n", 8, None, None))
    members.append(("job/", b"", 0, None, None))
    write(os.path.join(out, "job.zip"), zip_bytes(members))
    write(os.path.join(out, "job64.zip"), zip_bytes([(n, d, 8, None, None) for n, d in ranks], zip64=True))
    entries = [("job", None, "dir")] + [("job/" + n, d, "file") for n, d in ranks]
    write(os.path.join(out, "job.tar"), tar_bytes(entries))
    write(os.path.join(out, "job.tar.gz"), gzip.compress(tar_bytes(entries), 3))
    deep = "job/" + "d" * 60 + "/" + "e" * 60 + "/"
    write(os.path.join(out, "job-pax.tar"),
          tar_bytes([(deep + n, d, "file") for n, d in ranks], fmt=tarfile.PAX_FORMAT))

    # hostile
    zeros = bytes(10 << 20)
    write(os.path.join(out, "bomb.zip"), zip_bytes([("rank-0.json", zeros, 8, None, None)]))
    lie = b"[" + b" " * 100000 + b"]"
    write(os.path.join(out, "lying.zip"), zip_bytes([("rank-0.json", lie, 8, 1000, None)]))
    write(os.path.join(out, "overlap.zip"),
          zip_bytes([("rank-0.json", ranks[0][1], 8, None, None),
                     ("rank-1.json", ranks[0][1], 8, None, None)], overlap=True))
    write(os.path.join(out, "badcrc.zip"), zip_bytes([("rank-0.json", ranks[0][1], 8, None, 1234)]))
    write(os.path.join(out, "traversal.zip"),
          zip_bytes([("../../rank-0.json", ranks[0][1], 8, None, None)]))
    write(os.path.join(out, "absolute.tar"), tar_bytes([("/etc/rank-0.json", ranks[0][1], "file")]))
    write(os.path.join(out, "link.tar"),
          tar_bytes([("rank-9.json", "/etc/passwd", "link")] +
                    [(n, d, "file") for n, d in ranks]))
    whole = gzip.compress(tar_bytes([(n, d, "file") for n, d in ranks]), 3)
    write(os.path.join(out, "cut.tar.gz"), whole[: len(whole) // 2])
    write(os.path.join(out, "many.zip"),
          zip_bytes([("m%d.txt" % i, b"x", 0, None, None) for i in range(5000)]))


if __name__ == "__main__":
    main()
