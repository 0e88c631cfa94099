#!/usr/bin/env python3
# Writes the seed inputs of http2_session_fuzz beside this script: each is one control byte (bit 0:
# the target sends the preface first; bit 1: it writes the input in two pieces, split where the
# second byte says) and then the frames a client sends. Header blocks are compressed by
# libnghttp2's own HPACK deflater (through ctypes: the library the server links, nothing more to
# install). libFuzzer reads this script as an input too, which does no harm.
import ctypes
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20


class Nv(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p),
                ("namelen", ctypes.c_size_t), ("valuelen", ctypes.c_size_t),
                ("flags", ctypes.c_uint8)]


class Deflater:
    """One connection's HPACK encoder: its dynamic table carries over from block to block."""

    def __init__(self):
        self.lib = ctypes.CDLL("libnghttp2.so.14")
        self.lib.nghttp2_hd_deflate_hd.restype = ctypes.c_ssize_t
        self.lib.nghttp2_hd_deflate_bound.restype = ctypes.c_size_t
        self.ptr = ctypes.c_void_p()
        assert self.lib.nghttp2_hd_deflate_new(ctypes.byref(self.ptr), 4096) == 0

    def block(self, fields):
        nva = (Nv * len(fields))()
        for i, (name, value) in enumerate(fields):
            nva[i] = Nv(name, value, len(name), len(value), 0)
        bound = self.lib.nghttp2_hd_deflate_bound(self.ptr, nva, len(fields))
        buf = ctypes.create_string_buffer(bound)
        n = self.lib.nghttp2_hd_deflate_hd(self.ptr, buf, ctypes.c_size_t(bound), nva,
                                           ctypes.c_size_t(len(fields)))
        assert n >= 0
        return buf.raw[:n]


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + \
        struct.pack(">I", stream) + payload


def settings(*pairs, ack=False):
    return frame(SETTINGS, ACK if ack else 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def request(method, path, extra=()):
    return [(b":method", method), (b":scheme", b"http"), (b":authority", b"t"),
            (b":path", path)] + list(extra)


def headers(hpack, stream, fields, end_stream=True):
    return frame(HEADERS, END_HEADERS | (END_STREAM if end_stream else 0), stream,
                 hpack.block(fields))


def window_update(stream, n):
    return frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", n))


def seeds():
    out = {}
    h = Deflater()
    start = settings((0x4, 65535), (0x2, 0)) + settings(ack=True)
    out["get"] = b"\x01" + start + headers(h, 1, request(b"GET", b"/a?q=1", [(b"cookie", b"a=1"),
                                                                            (b"cookie", b"b=2")]))
    h = Deflater()
    body = b"x" * 300
    out["post_body"] = (b"\x01" + start + headers(h, 1, request(b"POST", b"/up", [
        (b"content-length", b"300")]), end_stream=False) + frame(DATA, 0, 1, body[:100])
        + frame(DATA, END_STREAM, 1, body[100:]) + headers(h, 3, request(b"GET", b"/again")))
    h = Deflater()
    out["streamed_body"] = (b"\x03\x40" + start + headers(h, 1, request(b"PUT", b"/stream"),
                                                         end_stream=False)
                            + frame(DATA, 0, 1, b"piece one ") + window_update(0, 1 << 20)
                            + frame(DATA, PADDED | END_STREAM, 1, b"\x04piece two" + b"\0" * 4))
    h = Deflater()
    out["deferred_reset"] = (b"\x01" + start + headers(h, 1, request(b"GET", b"/defer"))
                             + frame(RST_STREAM, 0, 1, struct.pack(">I", 8))
                             + headers(h, 3, request(b"GET", b"/defer")))
    h = Deflater()
    out["producer_trailers"] = (b"\x01" + start + headers(h, 1, request(b"GET", b"/produce"))
                                + window_update(1, 100) + window_update(0, 100))
    h = Deflater()
    block = h.block(request(b"GET", b"/continued", [(b"x-long", b"v" * 200)]))
    out["continuation"] = (b"\x01" + start + frame(HEADERS, END_STREAM, 1, block[:10])
                           + frame(CONTINUATION, 0, 1, block[10:50])
                           + frame(CONTINUATION, END_HEADERS, 1, block[50:]))
    h = Deflater()
    out["control"] = (b"\x01" + start + frame(PING, 0, 0, b"12345678")
                      + frame(PRIORITY, 0, 1, struct.pack(">IB", 0, 15))
                      + headers(h, 1, request(b"GET", b"/p"))
                      + frame(GOAWAY, 0, 0, struct.pack(">II", 0, 0)))  # no server stream was seen
    h = Deflater()
    out["priority_headers"] = (b"\x01" + start + frame(HEADERS, END_HEADERS | END_STREAM |
                                                       PRIORITY_FLAG, 1, struct.pack(">IB", 0, 200)
                                                       + h.block(request(b"HEAD", b"/h"))))
    h = Deflater()
    out["request_trailers"] = (b"\x01" + start + headers(h, 1, request(b"POST", b"/t"),
                                                        end_stream=False)
                               + frame(DATA, 0, 1, b"body") + headers(h, 1, [(b"x-trailer", b"1")]))
    h = Deflater()
    out["too_large"] = (b"\x01" + start + headers(h, 1, request(b"POST", b"/big", [
        (b"content-length", b"100000")]), end_stream=False) + frame(DATA, 0, 1, b"z" * 100)
        + headers(h, 3, request(b"GET", b"/h", [(b"x-big", b"b" * 5000)])))
    h = Deflater()
    # The preface in the input itself, split in the middle of it: HTTP/1.1 hands it over.
    out["preface_split"] = b"\x02\x0b" + PREFACE + start + headers(h, 1, request(b"GET", b"/"))
    out["http11"] = b"\x00GET / HTTP/1.1\r\nHost: t\r\n\r\n"
    return out


for name, data in seeds().items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
