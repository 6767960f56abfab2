"""The value blob (tensor_values.value, docs/BLOB_FORMAT.md) decoded to numpy, exactly as the
extension decodes it, strings and bfloat16 included, so no extension is needed to read values."""
import struct
import zlib

MAGIC = 0xB1
FLAG_COMPRESSED = 1
FLAG_BYTES_NOT_STORED = 2   # the header alone (ingest --values none)
DTYPE_BFLOAT16 = 10
DTYPE_STRING = 15
# numpy dtypes by blob dtype code; bfloat16 and string are decoded apart.
NUMPY_DTYPES = ["?", "i1", "u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", None, "<f4", "<f8", "<c8", "<c16"]
HEADER_BYTES = 4
DIM_BYTES = 8
COMPRESSED_LENGTH_BYTES = 8   # the uncompressed length before the zlib stream

BYTES_NOT_STORED_MESSAGE = ("this value's bytes were not stored: its trial was ingested with --values none; add them "
                            "with 'trialdb ingest PATH --db FILE --values all', which reads only the missing values")


def shape(blob):
    """A value blob's shape as a tuple, from its header alone (a 0-d value's is ())."""
    b = bytes(blob[:HEADER_BYTES + DIM_BYTES * 255])
    if len(b) < HEADER_BYTES or b[0] != MAGIC:
        raise ValueError("not a trialdb value blob")
    return struct.unpack_from("<%dq" % b[2], b, HEADER_BYTES)


def decode(blob):
    """A value blob as a numpy array; strings as an array of str. None stays None."""
    import numpy as np
    if blob is None:
        return None
    b = bytes(blob)
    if len(b) < HEADER_BYTES or b[0] != MAGIC:
        raise ValueError("not a trialdb value blob")
    code, ndim, flags = b[1], b[2], b[3]
    if flags == FLAG_BYTES_NOT_STORED:
        raise ValueError(BYTES_NOT_STORED_MESSAGE)
    dims = struct.unpack_from("<%dq" % ndim, b, HEADER_BYTES)
    data = b[HEADER_BYTES + DIM_BYTES * ndim:]
    if flags & FLAG_COMPRESSED:
        data = zlib.decompress(data[COMPRESSED_LENGTH_BYTES:])
    if code == DTYPE_STRING:
        out, at = [], 0
        for _ in range(int(np.prod(dims, dtype=np.int64)) if ndim else 1):
            (n,) = struct.unpack_from("<I", data, at)
            out.append(data[at + 4:at + 4 + n].decode("utf-8", "replace"))
            at += 4 + n
        return np.array(out, dtype=object).reshape(dims)
    if code == DTYPE_BFLOAT16:   # the top half of a float32
        halves = np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16
        return halves.view(np.float32).reshape(dims)
    return np.frombuffer(data, dtype=NUMPY_DTYPES[code]).reshape(dims)
