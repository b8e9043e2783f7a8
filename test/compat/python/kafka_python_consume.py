"""Consumes partitions from the beginning with kafka-python (Debian's 2.0.2 under /usr/bin/python3,
or the PyPI release in the project's virtual environment), without a group (assign +
seek_to_beginning), until every partition reaches the end offset it had when the script started.

usage: kafka_python_consume.py --bootstrap H:P --topic T --output FILE [--partitions 0,1,2]
       [--timeout S]

Writes the records, in the order received, to the output record file. Prints one JSON line:
{"consumed": n, "endOffsets": {"0": n0, ...}}. Exits 2 when the deadline passes first.
"""
import argparse
import json
import logging
import sys
import time

from kafka import KafkaConsumer, TopicPartition

import krec


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--bootstrap', required=True)
    p.add_argument('--topic', required=True)
    p.add_argument('--output', required=True)
    p.add_argument('--partitions', default='')
    p.add_argument('--timeout', type=float, default=60.0)
    p.add_argument('--debug', action='store_true')
    a = p.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if a.debug else logging.WARNING)
    deadline = time.monotonic() + a.timeout

    consumer = KafkaConsumer(
        bootstrap_servers=a.bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset='earliest',
        request_timeout_ms=30000,
        fetch_max_wait_ms=100,
        consumer_timeout_ms=1000,
    )
    if a.partitions:
        partitions = [int(x) for x in a.partitions.split(',')]
    else:
        parts = None
        while parts is None and time.monotonic() < deadline:
            parts = consumer.partitions_for_topic(a.topic)
            if parts is None:
                time.sleep(0.1)
        if parts is None:
            krec.log('kafka-python: topic %s has no partitions in metadata' % a.topic)
            sys.exit(2)
        partitions = sorted(parts)
    tps = [TopicPartition(a.topic, x) for x in partitions]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    end = consumer.end_offsets(tps)

    out = krec.RecordWriter(a.output)
    consumed = 0
    while any(consumer.position(tp) < end[tp] for tp in tps):
        if time.monotonic() > deadline:
            krec.log('kafka-python: timed out; positions %s, end offsets %s' % (
                {tp.partition: consumer.position(tp) for tp in tps}, {tp.partition: end[tp] for tp in tps}))
            out.close()
            sys.exit(2)
        batches = consumer.poll(timeout_ms=500, max_records=10000)
        for tp in tps:
            for m in batches.get(tp, []):
                out.write(m.partition, m.offset, m.key, m.value, m.headers)
                consumed += 1
    out.close()
    consumer.close(autocommit=False)
    print(json.dumps({'consumed': consumed, 'endOffsets': {str(tp.partition): end[tp] for tp in tps}}))


if __name__ == '__main__':
    main()
