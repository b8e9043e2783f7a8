"""The record-file format shared by the compat tests (test/compat/record-file.ts) and these scripts.

A file is a sequence of records, each (all integers big-endian):

    int32 partition      -1 in an input file: the client chooses
    int64 offset         -1 in an input file; the consumed offset in an output file
    int32 keyLen         -1 = null key
    bytes key
    int32 valueLen       -1 = null value
    bytes value
    int32 headerCount
    headerCount x (int32 keyLen, bytes key (UTF-8), int32 valueLen (-1 = null), bytes value)

Keeping keys, values and headers as length-prefixed bytes lets a test compare exact bytes and tell
null from empty.
"""
import struct
import sys


def _read_exact(f, n):
    data = f.read(n)
    if len(data) != n:
        raise EOFError('record file truncated')
    return data


def _read_bytes(f):
    (n,) = struct.unpack('>i', _read_exact(f, 4))
    return None if n < 0 else _read_exact(f, n)


def read_records(path):
    """Returns a list of dicts: partition, offset, key, value, headers [(str, bytes|None)]."""
    records = []
    with open(path, 'rb') as f:
        while True:
            head = f.read(12)
            if not head:
                return records
            if len(head) != 12:
                raise EOFError('record file truncated')
            partition, offset = struct.unpack('>iq', head)
            key = _read_bytes(f)
            value = _read_bytes(f)
            (count,) = struct.unpack('>i', _read_exact(f, 4))
            headers = []
            for _ in range(count):
                hkey = _read_bytes(f)
                headers.append((hkey.decode('utf-8'), _read_bytes(f)))
            records.append({'partition': partition, 'offset': offset, 'key': key,
                            'value': value, 'headers': headers})


def _write_bytes(f, b):
    if b is None:
        f.write(struct.pack('>i', -1))
    else:
        f.write(struct.pack('>i', len(b)))
        f.write(b)


class RecordWriter:
    """Appends records to an output file."""

    def __init__(self, path):
        self._f = open(path, 'wb')

    def write(self, partition, offset, key, value, headers):
        f = self._f
        f.write(struct.pack('>iq', partition, offset))
        _write_bytes(f, key)
        _write_bytes(f, value)
        headers = headers or []
        f.write(struct.pack('>i', len(headers)))
        for hkey, hvalue in headers:
            _write_bytes(f, hkey.encode('utf-8') if isinstance(hkey, str) else hkey)
            _write_bytes(f, hvalue)

    def close(self):
        self._f.close()


def log(*args):
    print(*args, file=sys.stderr, flush=True)
