"""Consumes partitions from the beginning with confluent-kafka (Debian's 1.7.0 with librdkafka
2.0.2 under /usr/bin/python3, or the PyPI release in the project's virtual environment) by assignment
(assign() to OFFSET_BEGINNING), with enable.auto.commit=false and no commits, until every assigned
partition reports end of partition. librdkafka requires a group.id even for assign(); the script
never subscribes, so no group is joined.

usage: confluent_consume.py --bootstrap H:P --topic T --output FILE [--partitions 0,1,2]
       [--timeout S] [--debug CONTEXTS]
       [--start-offset N [--leader-epoch E]]   (start every partition at offset N instead of the
           beginning; with a leader epoch (confluent-kafka 2.x) librdkafka first validates the
           position with OffsetForLeaderEpoch)

Writes the records, in the order received, to the output record file. Prints one JSON line:
{"consumed": n, "eof": {"0": offset, ...}}, plus with --leader-epoch "epochValidations": the
number of librdkafka's "offset and epoch validation succeeded" log lines. Exits 2 when the
deadline passes first.
"""
import argparse
import json
import logging
import sys
import time

from confluent_kafka import Consumer, KafkaError, TopicPartition, OFFSET_BEGINNING

import krec


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--bootstrap', required=True)
    p.add_argument('--topic', required=True)
    p.add_argument('--output', required=True)
    p.add_argument('--partitions', default='')
    p.add_argument('--timeout', type=float, default=60.0)
    p.add_argument('--debug', default='')
    p.add_argument('--start-offset', type=int, default=None)
    p.add_argument('--leader-epoch', type=int, default=None)
    a = p.parse_args()
    deadline = time.monotonic() + a.timeout

    conf = {
        'bootstrap.servers': a.bootstrap,
        'group.id': 'skiff-compat-assign-only',
        'enable.auto.commit': False,
        'enable.auto.offset.store': False,
        'enable.partition.eof': True,
        'auto.offset.reset': 'earliest',
        'fetch.wait.max.ms': 100,
    }
    if a.debug:
        conf['debug'] = a.debug
    validations = EpochValidationCounter()
    if a.leader_epoch is not None:
        # librdkafka logs the outcome of each OffsetForLeaderEpoch validation under debug 'fetch'.
        conf['debug'] = ','.join(x for x in (a.debug, 'fetch') if x)
        logger = logging.getLogger('librdkafka')
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        logger.addHandler(validations)
        if a.debug:
            logger.addHandler(logging.StreamHandler(sys.stderr))
        conf['logger'] = logger
    consumer = Consumer(conf)
    if a.partitions:
        partitions = [int(x) for x in a.partitions.split(',')]
    else:
        md = consumer.list_topics(a.topic, timeout=10)
        t = md.topics.get(a.topic)
        if t is None or t.error is not None or not t.partitions:
            krec.log('confluent-kafka: no metadata for topic %s: %s' % (a.topic, t and t.error))
            sys.exit(2)
        partitions = sorted(t.partitions.keys())
    if a.start_offset is None:
        consumer.assign([TopicPartition(a.topic, x, OFFSET_BEGINNING) for x in partitions])
    elif a.leader_epoch is None:
        consumer.assign([TopicPartition(a.topic, x, a.start_offset) for x in partitions])
    else:
        consumer.assign([TopicPartition(a.topic, x, a.start_offset, leader_epoch=a.leader_epoch) for x in partitions])

    out = krec.RecordWriter(a.output)
    eof = {}
    consumed = 0
    while len(eof) < len(partitions):
        if time.monotonic() > deadline:
            krec.log('confluent-kafka: timed out; %d consumed, EOF seen for %s of %s' % (consumed, sorted(eof), partitions))
            out.close()
            sys.exit(2)
        for m in consumer.consume(num_messages=10000, timeout=0.5):
            err = m.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    eof[m.partition()] = m.offset()
                    continue
                krec.log('confluent-kafka: consume error: %s' % err)
                out.close()
                sys.exit(1)
            eof.pop(m.partition(), None)
            out.write(m.partition(), m.offset(), m.key(), m.value(), m.headers())
            consumed += 1
    out.close()
    consumer.close()
    result = {'consumed': consumed, 'eof': {str(k): v for k, v in eof.items()}}
    if a.leader_epoch is not None:
        result['epochValidations'] = validations.count
    print(json.dumps(result))


class EpochValidationCounter(logging.Handler):
    """Counts librdkafka's log lines for a successful OffsetForLeaderEpoch position validation."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def emit(self, record):
        if 'offset and epoch validation succeeded' in record.getMessage():
            self.count += 1


if __name__ == '__main__':
    main()
