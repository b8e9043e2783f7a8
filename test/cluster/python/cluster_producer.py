"""Produces numbered keyed records with confluent-kafka (the PyPI release in the project's virtual
environment, or Debian's under /usr/bin/python3) at a steady rate, for the cluster suites that crash
brokers while a producer runs.

usage: cluster_producer.py --bootstrap H:P[,H:P...] --topic T --count N
       [--acks -1|0|1] [--idempotent] [--rate RECORDS_PER_S] [--keys K]
       [--retries N] [--timeout S] [--message-timeout-ms MS] [--partition P]

Record i has key "k-<i mod K>" and value "v-<i>" (zero-padded to 7 digits). While it runs it prints
{"progress": {"acked": a, "failed": f}} after every 1000 delivery reports; at the end one line
{"acks": [[i, partition, offset], ...], "errors": [[i, "ERROR_NAME"], ...], "sent": N}: every record
gets exactly one delivery report, and ERROR_NAME is librdkafka's name for the error (for a broker
error, Kafka's: NOT_ENOUGH_REPLICAS, ...). Exits 0 even when deliveries failed; 2 when some record got
no report before the timeout.
"""
import argparse
import json
import sys
import time

from confluent_kafka import KafkaException, Producer


def value_of(i):
    return 'v-%07d' % i


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--bootstrap', required=True)
    p.add_argument('--topic', required=True)
    p.add_argument('--count', type=int, required=True)
    p.add_argument('--acks', type=int, default=-1)
    p.add_argument('--idempotent', action='store_true')
    p.add_argument('--rate', type=int, default=0, help='records per second, 0: as fast as possible')
    p.add_argument('--keys', type=int, default=1000)
    p.add_argument('--retries', type=int, default=-1, help='-1: librdkafka default')
    p.add_argument('--timeout', type=float, default=120.0)
    p.add_argument('--message-timeout-ms', type=int, default=0, help='0: the whole --timeout')
    p.add_argument('--partition', type=int, default=-1)
    a = p.parse_args()
    deadline = time.monotonic() + a.timeout

    conf = {
        'bootstrap.servers': a.bootstrap,
        'acks': str(a.acks),
        'linger.ms': 5,
        'enable.idempotence': a.idempotent,
        'message.timeout.ms': a.message_timeout_ms or int(a.timeout * 1000),
        'queue.buffering.max.messages': max(100000, a.count),
        'reconnect.backoff.ms': 50,
        'reconnect.backoff.max.ms': 500,
        'retry.backoff.ms': 50,
        'topic.metadata.refresh.interval.ms': 1000,
    }
    if not a.idempotent:
        conf['max.in.flight.requests.per.connection'] = 1
    if a.retries >= 0:
        conf['retries'] = a.retries
    producer = Producer(conf)
    acks = []
    errors = []

    def report():
        n = len(acks) + len(errors)
        if n % 1000 == 0:
            print(json.dumps({'progress': {'acked': len(acks), 'failed': len(errors)}}), flush=True)

    def on_delivery(index):
        def cb(err, msg):
            if err is not None:
                errors.append([index, err.name()])
            else:
                acks.append([index, msg.partition(), msg.offset()])
            report()
        return cb

    started = time.monotonic()
    for i in range(a.count):
        if a.rate > 0:
            due = started + i / a.rate
            while time.monotonic() < due:
                producer.poll(max(0.0, min(0.01, due - time.monotonic())))
        kwargs = {'key': 'k-%d' % (i % a.keys), 'value': value_of(i), 'on_delivery': on_delivery(i)}
        if a.partition >= 0:
            kwargs['partition'] = a.partition
        while True:
            try:
                producer.produce(a.topic, **kwargs)
                break
            except BufferError:
                producer.poll(0.05)
            except KafkaException as e:
                errors.append([i, e.args[0].name()])
                break
        producer.poll(0)
    while len(acks) + len(errors) < a.count and time.monotonic() < deadline:
        producer.flush(min(1.0, max(0.0, deadline - time.monotonic())))
    print(json.dumps({'acks': acks, 'errors': errors, 'sent': a.count}), flush=True)
    sys.exit(0 if len(acks) + len(errors) == a.count else 2)


if __name__ == '__main__':
    main()
