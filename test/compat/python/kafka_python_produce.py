"""Produces a record file with kafka-python (KafkaProducer), in file order: Debian's 2.0.2 under
/usr/bin/python3, or the PyPI release (3.x) in the project's virtual environment.

usage: kafka_python_produce.py --bootstrap H:P --topic T --input FILE [--acks -1|0|1]
       [--create-partitions N]   (create the topic first with KafkaAdminClient: CreateTopics)
       [--compression none|gzip|snappy|lz4|zstd]   (compression_type)
       [--idempotent]   (enable_idempotence=True with retries: InitProducerId; kafka-python 2.1+ only,
                         and --acks must be -1. Without it the producer sends retries=0, which keeps
                         3.x's default idempotence off, as 2.0.2 has none)
       [--debug]   (DEBUG logging on stderr)

Prints one JSON line: {"produced": n, "offsets": [[partition, offset], ...]} (offsets in file order).
Exits 1 on any delivery error.
"""
import argparse
import json
import logging
import sys
import time

from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

import krec


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--bootstrap', required=True)
    p.add_argument('--topic', required=True)
    p.add_argument('--input', required=True)
    p.add_argument('--acks', type=int, default=-1)
    p.add_argument('--create-partitions', type=int, default=0)
    p.add_argument('--timeout', type=float, default=60.0)
    p.add_argument('--debug', action='store_true')
    p.add_argument('--compression', default='none')
    p.add_argument('--idempotent', action='store_true')
    a = p.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if a.debug else logging.WARNING)

    if a.create_partitions > 0:
        admin = KafkaAdminClient(bootstrap_servers=a.bootstrap, request_timeout_ms=int(a.timeout * 1000))
        admin.create_topics([NewTopic(a.topic, a.create_partitions, 1)], timeout_ms=10000)
        admin.close()

    records = krec.read_records(a.input)
    # retries=0 also turns off kafka-python 3.x's default idempotence (with a warning), so the
    # default run sends the same requests under both releases.
    reliability = {'enable_idempotence': True, 'max_in_flight_requests_per_connection': 5} if a.idempotent \
        else {'retries': 0, 'max_in_flight_requests_per_connection': 1}
    producer = KafkaProducer(
        bootstrap_servers=a.bootstrap,
        acks=a.acks if a.acks != -1 else 'all',
        linger_ms=5,
        batch_size=64 * 1024,
        max_request_size=1048576,
        request_timeout_ms=int(a.timeout * 1000),
        compression_type=None if a.compression == 'none' else a.compression,
        **reliability
    )
    deadline = time.monotonic() + a.timeout
    futures = []
    for r in records:
        headers = [(k, v) for k, v in r['headers']] if r['headers'] else None
        futures.append(producer.send(a.topic, value=r['value'], key=r['key'], headers=headers,
                                     partition=None if r['partition'] < 0 else r['partition']))
    producer.flush(timeout=max(1.0, deadline - time.monotonic()))
    offsets = []
    for i, f in enumerate(futures):
        try:
            md = f.get(timeout=max(0.1, deadline - time.monotonic()))
        except Exception as e:  # delivery failed: report the first one precisely
            krec.log('kafka-python: record %d not delivered: %r' % (i, e))
            producer.close(timeout=1)
            sys.exit(1)
        offsets.append([md.partition, md.offset])
    producer.close(timeout=5)
    print(json.dumps({'produced': len(records), 'offsets': offsets}))


if __name__ == '__main__':
    main()
