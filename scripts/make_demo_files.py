#!/usr/bin/env python3
"""Regenerates the demo site's generated files in public/ (committed; run again only to change
them). Deterministic: the same bytes every run on the same Python.

  public/files/sample.txt (+ .gz)  1.5 MB of text: large enough for sendfile and ranges
  public/static/rivet.png          the logo as a 96x96 PNG
  public/static/site.css.gz        the stylesheet precompressed (served to gzip clients)
"""
import gzip
import struct
import zlib
from pathlib import Path

PUBLIC = Path(__file__).resolve().parents[1] / "public"


def sample_text() -> bytes:
    """15,000 lines of exactly 100 bytes: line i is bytes (i-1)*100 .. i*100-1, as it says."""
    lines = []
    for i in range(1, 15001):
        first = (i - 1) * 100
        text = f"line {i:05d} of rivet's sample file is bytes {first}-{first + 99} (curl -r)"
        lines.append(text.ljust(99, ".") + "\n")
    return "".join(lines).encode()


def png(width: int, height: int, pixel) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width))
                   for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def logo_pixel(x: int, y: int):
    """A rivet head: a shaded disc on a transparent background."""
    cx = cy = 47.5
    d2 = (x - cx) ** 2 + (y - cy) ** 2
    if d2 > 44 ** 2:
        return (0, 0, 0, 0)
    light = max(0.0, 1.0 - (((x - 34) ** 2 + (y - 30) ** 2) ** 0.5) / 70)
    r, g, b = 0x2b + int(120 * light), 0x5d + int(110 * light), 0x8c + int(90 * light)
    if d2 > 40 ** 2:  # rim
        r, g, b = r // 2, g // 2, b // 2
    return (min(r, 255), min(g, 255), min(b, 255), 255)


def main() -> None:
    text = sample_text()
    assert len(text) == 1_500_000
    (PUBLIC / "files" / "sample.txt").write_bytes(text)
    (PUBLIC / "files" / "sample.txt.gz").write_bytes(gzip.compress(text, 9, mtime=0))
    (PUBLIC / "static" / "rivet.png").write_bytes(png(96, 96, logo_pixel))
    css = (PUBLIC / "static" / "site.css").read_bytes()
    (PUBLIC / "static" / "site.css.gz").write_bytes(gzip.compress(css, 9, mtime=0))


if __name__ == "__main__":
    main()
