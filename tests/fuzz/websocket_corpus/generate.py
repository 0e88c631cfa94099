#!/usr/bin/env python3
# Writes the seed inputs of websocket_frame_fuzz beside this script: each is one control byte
# (the target's settings: bit 0 an Inflater, bit 1 no context takeover, bit 3 unmasked frames,
# bit 4 small limits) and then a stream of frames. libFuzzer reads this script as an input too,
# which does no harm.
import os
import struct
import zlib

here = os.path.dirname(os.path.abspath(__file__))


def frame(op, payload, fin=True, rsv1=False, mask=b"\x37\xfa\x21\x3d"):
    head = bytes([(0x80 if fin else 0) | (0x40 if rsv1 else 0) | op])
    n = len(payload)
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack(">H", n)
    else:
        head += bytes([bit | 127]) + struct.pack(">Q", n)
    if not mask:
        return head + payload
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def deflate(messages, takeover=True):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    out = []
    for m in messages:
        data = c.compress(m) + c.flush(zlib.Z_SYNC_FLUSH)
        assert data.endswith(b"\x00\x00\xff\xff")
        out.append(data[:-4] or b"\x00")
        if not takeover:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return out


def close(code, reason=b""):
    return frame(0x8, struct.pack(">H", code) + reason)


seeds = {
    "text": b"\x00" + frame(0x1, b"Hello") + close(1000, b"bye"),
    "binary_16bit": b"\x00" + frame(0x2, bytes(range(256)) * 2),
    "fragments_ping": b"\x00" + frame(0x1, "κό".encode(), fin=False) + frame(0x9, b"ping")
    + frame(0x0, "σμε".encode(), fin=False) + frame(0xA, b"") + frame(0x0, b"!") + close(1001),
    "close_empty": b"\x00" + frame(0x8, b""),
    "server_frames": b"\x08" + frame(0x1, b"unmasked", mask=None) + frame(0x9, b"", mask=None),
    "small_limits": b"\x30" + frame(0x2, b"x" * 40, fin=False) + frame(0x0, b"y" * 40),
}
hello, hello_again, big = deflate([b"Hello", b"Hello", b"abc" * 3000])
seeds["deflate"] = (b"\x01" + frame(0x1, hello, rsv1=True) + frame(0x1, hello_again, rsv1=True)
                    + frame(0x2, big[:20], fin=False, rsv1=True) + frame(0x9, b"p")
                    + frame(0x0, big[20:]) + close(1000))
fresh = deflate([b"Hello", b"Hello"], takeover=False)
seeds["deflate_no_takeover"] = b"\x03" + b"".join(frame(0x1, m, rsv1=True) for m in fresh)
bomb = deflate([bytes(2 << 20)])[0]
seeds["deflate_bomb"] = b"\x01" + frame(0x2, bomb, rsv1=True)

for name, data in seeds.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
