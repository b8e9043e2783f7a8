"""Prints the versions of the Python clients that import under this interpreter, as one JSON line:
{"python", "confluentKafka", "librdkafka", "kafkaPython", "kafkaPythonCodecs": [...]}.
Exits 1 (with the import error on stderr) when either client does not import.
"""
import json
import platform

import confluent_kafka
import kafka
from kafka import codec


def confluent_version():
    v = confluent_kafka.version()  # (str, int) in 1.x; a str in recent releases
    return v[0] if isinstance(v, tuple) else str(v)


def main():
    codecs = [name for name, present in (('gzip', codec.has_gzip()), ('snappy', codec.has_snappy()),
                                         ('lz4', codec.has_lz4()), ('zstd', codec.has_zstd())) if present]
    print(json.dumps({
        'python': platform.python_version(),
        'confluentKafka': confluent_version(),
        'librdkafka': confluent_kafka.libversion()[0],
        'kafkaPython': kafka.__version__,
        'kafkaPythonCodecs': codecs,
    }))


if __name__ == '__main__':
    main()
