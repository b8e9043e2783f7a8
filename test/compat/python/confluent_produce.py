"""Produces a record file with confluent-kafka, in file order: Debian's python3-confluent-kafka
(librdkafka 2.0.2) under /usr/bin/python3, or the PyPI release (its bundled librdkafka) in the
project's virtual environment.

usage: confluent_produce.py --bootstrap H:P --topic T --input FILE [--acks -1|0|1]
       [--create-partitions N]   (create the topic first with AdminClient.create_topics)
       [--compression none|gzip|snappy|lz4|zstd]   (compression.type)
       [--linger-ms MS]   (linger.ms, default 5)
       [--idempotent]   (enable.idempotence=true: InitProducerId; otherwise false)
       [--debug CONTEXTS]   (librdkafka debug contexts, e.g. protocol,broker; logged on stderr)

Prints one JSON line: {"produced": n, "offsets": [[partition, offset], ...]} (offsets in file order).
Exits 1 on any delivery error.
"""
import argparse
import json
import sys
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

import krec


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--bootstrap', required=True)
    p.add_argument('--topic', required=True)
    p.add_argument('--input', required=True)
    p.add_argument('--acks', type=int, default=-1)
    p.add_argument('--create-partitions', type=int, default=0)
    p.add_argument('--timeout', type=float, default=60.0)
    p.add_argument('--debug', default='')
    p.add_argument('--compression', default='none')
    p.add_argument('--linger-ms', type=int, default=5)
    p.add_argument('--idempotent', action='store_true')
    a = p.parse_args()
    deadline = time.monotonic() + a.timeout

    if a.create_partitions > 0:
        admin = AdminClient({'bootstrap.servers': a.bootstrap, })
        futures = admin.create_topics([NewTopic(a.topic, num_partitions=a.create_partitions,
                                                replication_factor=1)], request_timeout=10)
        futures[a.topic].result(timeout=15)

    conf = {
        'bootstrap.servers': a.bootstrap,
        'acks': str(a.acks),
        'linger.ms': a.linger_ms,
        'enable.idempotence': a.idempotent,
        'message.timeout.ms': int(a.timeout * 1000),
        'max.in.flight.requests.per.connection': 5 if a.idempotent else 1,
        'queue.buffering.max.messages': 100000,
        'compression.type': a.compression,
    }
    if a.debug:
        conf['debug'] = a.debug
    producer = Producer(conf)
    records = krec.read_records(a.input)
    offsets = [None] * len(records)
    errors = []

    def on_delivery(index):
        def cb(err, msg):
            if err is not None:
                errors.append((index, err))
            else:
                offsets[index] = [msg.partition(), msg.offset()]
        return cb

    for i, r in enumerate(records):
        kwargs = {'value': r['value'], 'key': r['key'], 'on_delivery': on_delivery(i)}
        if r['partition'] >= 0:
            kwargs['partition'] = r['partition']
        if r['headers']:
            kwargs['headers'] = list(r['headers'])
        while True:
            try:
                producer.produce(a.topic, **kwargs)
                break
            except BufferError:
                producer.poll(0.05)
                if time.monotonic() > deadline:
                    krec.log('confluent-kafka: local queue stayed full until the deadline')
                    sys.exit(1)
        producer.poll(0)
    remaining = producer.flush(max(1.0, deadline - time.monotonic()))
    if remaining > 0:
        krec.log('confluent-kafka: %d records still undelivered at the deadline' % remaining)
        sys.exit(1)
    if errors:
        krec.log('confluent-kafka: %d delivery errors, first: record %d: %s' % (len(errors), errors[0][0], errors[0][1]))
        sys.exit(1)
    print(json.dumps({'produced': len(records), 'offsets': offsets}))


if __name__ == '__main__':
    main()
