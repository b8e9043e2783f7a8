"""The librdkafka side of `skiff verify --bootstrap` (src/verify/real/run.ts drives it): one producer or
one consumer-group member with confluent-kafka (the PyPI release, bundled librdkafka 2.x), reporting
every delivery and every processed record as one JSON line on stdout, so a run that SIGKILLs it still
has everything it printed.

usage: verify_client.py produce --bootstrap B --topic T --acks -1|0|1 [--idempotent]
                                --prefix P --rate N --duration S [--message-timeout-ms MS]
       verify_client.py consume --bootstrap B --topic T --group G
                                --strategy commit-after-processing|commit-before-processing|auto-commit-5s
                                [--process-ms MS]

produce: record i has value "<P>-<i>" (no key). Lines: {"a": [i, partition, offset]} for a delivery
report without error (offset -1 when acks=0 gives none), {"e": [i, "ERROR_NAME"]} for one with an
error, and at the end {"done": sent}. It sends for --duration seconds at --rate records per second,
then flushes for at most the message timeout.

consume: one member of group G subscribed to T. Lines: {"assigned": [partitions]} on each assignment,
{"r": [partition, offset, value]} per record processed (processing takes --process-ms each), and
{"c": [[partition, next offset], ...]} per commit the coordinator acknowledged ({"ce": "NAME"} for a
failed one). commit-after-processing commits synchronously after processing each polled batch,
commit-before-processing before processing it, auto-commit-5s lets librdkafka commit every 5 s.
SIGTERM closes the member (leaving the group) and exits 0.
"""
import argparse
import json
import signal
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

stopping = False


def emit(o):
    sys.stdout.write(json.dumps(o, separators=(',', ':')) + '\n')
    sys.stdout.flush()


def on_sigterm(_signum, _frame):
    global stopping
    stopping = True


def produce(a):
    conf = {
        'bootstrap.servers': a.bootstrap,
        'acks': str(a.acks),
        'linger.ms': 5,
        'enable.idempotence': a.idempotent,
        'message.timeout.ms': a.message_timeout_ms,
        'reconnect.backoff.ms': 50,
        'reconnect.backoff.max.ms': 500,
        'retry.backoff.ms': 50,
        'topic.metadata.refresh.interval.ms': 1000,
    }
    if not a.idempotent:
        # One request in flight: a retried batch cannot overtake another, so an acks=1/all producer's
        # duplicates come from retries alone.
        conf['max.in.flight.requests.per.connection'] = 1
    producer = Producer(conf)
    pending = [0]

    def on_delivery(index):
        def cb(err, msg):
            pending[0] -= 1
            if err is not None:
                emit({'e': [index, err.name()]})
            else:
                offset = msg.offset()
                emit({'a': [index, msg.partition(), offset if offset is not None and offset >= 0 else -1]})
        return cb

    started = time.monotonic()
    end = started + a.duration
    i = 0
    while not stopping and time.monotonic() < end:
        due = started + i / a.rate
        while time.monotonic() < due:
            producer.poll(max(0.0, min(0.01, due - time.monotonic())))
        pending[0] += 1
        try:
            producer.produce(a.topic, value=('%s-%d' % (a.prefix, i)).encode(), on_delivery=on_delivery(i))
        except BufferError:
            pending[0] -= 1
            emit({'e': [i, 'QUEUE_FULL']})
        except KafkaException as e:
            pending[0] -= 1
            emit({'e': [i, e.args[0].name()]})
        producer.poll(0)
        i += 1
    deadline = time.monotonic() + a.message_timeout_ms / 1000.0 + 5
    while pending[0] > 0 and time.monotonic() < deadline:
        producer.flush(1.0)
    emit({'done': i})
    sys.exit(0 if pending[0] == 0 else 2)


def consume(a):
    auto = a.strategy == 'auto-commit-5s'

    def on_commit(err, partitions):
        if err is not None:
            emit({'ce': err.name()})
            return
        done = [[p.partition, p.offset] for p in partitions if p.error is None and p.offset >= 0]
        if done:
            emit({'c': done})

    conf = {
        'bootstrap.servers': a.bootstrap,
        'group.id': a.group,
        'auto.offset.reset': 'earliest',
        'enable.auto.commit': auto,
        'session.timeout.ms': 6000,
        'heartbeat.interval.ms': 1000,
        'reconnect.backoff.ms': 50,
        'reconnect.backoff.max.ms': 500,
        'topic.metadata.refresh.interval.ms': 1000,
        'partition.assignment.strategy': 'range',
    }
    if auto:
        conf['auto.commit.interval.ms'] = 5000
        conf['on_commit'] = on_commit
    consumer = Consumer(conf)

    def on_assign(_c, partitions):
        emit({'assigned': [p.partition for p in partitions]})

    consumer.subscribe([a.topic], on_assign=on_assign)

    def commit(offsets):
        try:
            done = consumer.commit(offsets=offsets, asynchronous=False)
            emit({'c': [[p.partition, p.offset] for p in done if p.error is None and p.offset >= 0]})
        except KafkaException as e:
            emit({'ce': e.args[0].name()})

    def process(msg):
        emit({'r': [msg.partition(), msg.offset(), msg.value().decode()]})
        if a.process_ms > 0:
            time.sleep(a.process_ms / 1000.0)

    while not stopping:
        msgs = consumer.consume(num_messages=50, timeout=0.5)
        batch = []
        for m in msgs:
            if m.error() is None:
                batch.append(m)
            elif m.error().code() != KafkaError._PARTITION_EOF:
                emit({'err': m.error().name()})
        if not batch:
            continue
        next_offsets = {}
        for m in batch:
            next_offsets[m.partition()] = m.offset() + 1
        offsets = [TopicPartition(a.topic, p, o) for p, o in sorted(next_offsets.items())]
        if a.strategy == 'commit-before-processing':
            commit(offsets)
        for m in batch:
            process(m)
        if a.strategy == 'commit-after-processing':
            commit(offsets)
    consumer.close()
    sys.exit(0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('mode', choices=['produce', 'consume'])
    p.add_argument('--bootstrap', required=True)
    p.add_argument('--topic', required=True)
    p.add_argument('--acks', type=int, default=-1)
    p.add_argument('--idempotent', action='store_true')
    p.add_argument('--prefix', default='v')
    p.add_argument('--rate', type=float, default=50.0)
    p.add_argument('--duration', type=float, default=10.0)
    p.add_argument('--message-timeout-ms', type=int, default=30000)
    p.add_argument('--group', default='')
    p.add_argument('--strategy', default='commit-after-processing')
    p.add_argument('--process-ms', type=float, default=2.0)
    a = p.parse_args()
    signal.signal(signal.SIGTERM, on_sigterm)
    if a.mode == 'produce':
        produce(a)
    else:
        consume(a)


if __name__ == '__main__':
    main()
