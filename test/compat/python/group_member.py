"""A consumer-group member (or one group offset operation) with confluent-kafka or kafka-python, for
test/compat/groups.test.ts and commits.test.ts. Runs under Debian's /usr/bin/python3 (confluent-kafka
1.7.0 / librdkafka 2.0.2, kafka-python 2.0.2) or the PyPI virtual environment (confluent-kafka 2.x,
kafka-python 3.x).

usage:
  group_member.py member --client confluent|kafka-python --bootstrap H:P --group G --topic T
        [--assignor NAME] [--instance-id ID] [--heartbeat-ms 500] [--session-ms 10000] [--timeout S]
      subscribe(T) in group G with enable.auto.commit off and auto.offset.reset earliest; after
      every poll that returned records, commit (synchronously) the offset after the last record
      of each partition. Reads commands from stdin: "stop" finishes the current poll and commit,
      then closes the consumer (LeaveGroup) and exits 0. Prints JSON lines on stdout:
        {"ev": "assigned", "partitions": [p...], "t": ms}       (the whole assignment after a rebalance)
        {"ev": "revoked", "partitions": [p...], "t": ms}
        {"ev": "records", "records": [[p, offset, value], ...], "t": ms}
        {"ev": "committed", "offsets": {"p": offset}, "t": ms}
        {"ev": "commit-failed", "error": "...", "offsets": {...}, "t": ms}
        {"ev": "closed", "t": ms}
      --instance-id (confluent only) makes it a static member (group.instance.id, KIP-345).
      Exits 2 when --timeout passes before "stop".
  group_member.py commit --client C --bootstrap H:P --group G --topic T --partitions N --offsets JSON
      subscribe, poll until all N partitions are assigned to this member, then commit
      {"p": [offset, metadata]} synchronously and close. Prints {"committed": {"p": offset}}.
  group_member.py committed --client C --bootstrap H:P --group G --topic T --partitions N
      a consumer in group G that does not subscribe asks the coordinator for the committed
      offsets of partitions 0..N-1 (OffsetFetch). Prints
      {"committed": {"p": [offset | null, metadata | null]}}; kafka-python also gives
      "admin": the same from KafkaAdminClient.list_consumer_group_offsets (2.0.2) or
      list_group_offsets (3.x).
Values are printed as latin-1 strings; t is wall-clock ms (time.time()).
"""
import argparse
import json
import sys
import threading
import time


def now_ms():
    return int(time.time() * 1000)


def emit(obj):
    obj.setdefault('t', now_ms())
    sys.stdout.write(json.dumps(obj) + '\n')
    sys.stdout.flush()


def log(msg):
    sys.stderr.write(msg + '\n')
    sys.stderr.flush()


class StopFlag:
    """Set when a "stop" line (or EOF) arrives on stdin."""

    def __init__(self):
        self.event = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in sys.stdin:
            if line.strip() == 'stop':
                break
        self.event.set()

    def is_set(self):
        return self.event.is_set()


# ----------------------------------------------------------------------------- confluent-kafka

def confluent_consumer(a, extra=None):
    from confluent_kafka import Consumer
    conf = {
        'bootstrap.servers': a.bootstrap,
        'group.id': a.group,
        'enable.auto.commit': False,
        'auto.offset.reset': 'earliest',
        'heartbeat.interval.ms': a.heartbeat_ms,
        'session.timeout.ms': a.session_ms,
        'fetch.wait.max.ms': 100,
        'topic.metadata.refresh.interval.ms': 2000,
    }
    if a.assignor:
        conf['partition.assignment.strategy'] = a.assignor
    if a.instance_id:
        conf['group.instance.id'] = a.instance_id  # static membership (KIP-345)
    conf.update(extra or {})
    return Consumer(conf)


def confluent_member(a):
    from confluent_kafka import KafkaException, TopicPartition
    stop = StopFlag()
    deadline = time.monotonic() + a.timeout
    consumer = confluent_consumer(a)
    owned = set()

    def on_assign(c, partitions):
        ps = [tp.partition for tp in partitions]
        if a.assignor == 'cooperative-sticky':
            c.incremental_assign(partitions)
            owned.update(ps)
        else:
            owned.clear()
            owned.update(ps)
        emit({'ev': 'assigned', 'partitions': sorted(owned), 'added': sorted(ps)})

    def on_revoke(c, partitions):
        ps = [tp.partition for tp in partitions]
        if a.assignor == 'cooperative-sticky':
            c.incremental_unassign(partitions)
        owned.difference_update(ps)
        emit({'ev': 'revoked', 'partitions': sorted(ps)})

    consumer.subscribe([a.topic], on_assign=on_assign, on_revoke=on_revoke)
    while not stop.is_set():
        if time.monotonic() > deadline:
            log('confluent-kafka member: timed out before stop')
            sys.exit(2)
        msgs = consumer.consume(num_messages=500, timeout=0.2)
        records = []
        last = {}
        for m in msgs:
            err = m.error()
            if err is not None:
                log('confluent-kafka member: consume error: %s' % err)
                continue
            v = m.value()
            records.append([m.partition(), m.offset(), None if v is None else v.decode('latin-1')])
            last[m.partition()] = m.offset() + 1
        if not records:
            continue
        emit({'ev': 'records', 'records': records})
        offsets = {str(p): o for p, o in last.items()}
        try:
            consumer.commit(offsets=[TopicPartition(a.topic, p, o) for p, o in last.items()], asynchronous=False)
            emit({'ev': 'committed', 'offsets': offsets})
        except KafkaException as e:
            emit({'ev': 'commit-failed', 'error': str(e), 'offsets': offsets})
    consumer.close()
    emit({'ev': 'closed'})


def confluent_wait_assigned(consumer, a, partitions):
    deadline = time.monotonic() + a.timeout
    while True:
        if time.monotonic() > deadline:
            log('confluent-kafka: no assignment of %d partitions within %s s (have %s)' % (partitions, a.timeout, consumer.assignment()))
            sys.exit(2)
        consumer.poll(0.2)  # serves the rebalance callbacks; records are not needed here
        if len(consumer.assignment()) == partitions:
            return


def confluent_commit(a):
    from confluent_kafka import TopicPartition
    consumer = confluent_consumer(a)
    consumer.subscribe([a.topic])
    confluent_wait_assigned(consumer, a, a.partitions)
    wanted = json.loads(a.offsets)
    tps = []
    for p, (o, md) in sorted(wanted.items()):
        # confluent-kafka 1.7's TopicPartition takes no metadata (the test passes null for it).
        tps.append(TopicPartition(a.topic, int(p), o) if md is None else TopicPartition(a.topic, int(p), o, metadata=md))
    result = consumer.commit(offsets=tps, asynchronous=False)
    bad = [(tp.partition, str(tp.error)) for tp in result if tp.error is not None]
    if bad:
        log('confluent-kafka: commit errors %s' % bad)
        sys.exit(1)
    consumer.close()
    emit({'committed': {str(tp.partition): tp.offset for tp in result}})


def confluent_committed(a):
    from confluent_kafka import TopicPartition
    consumer = confluent_consumer(a)
    result = consumer.committed([TopicPartition(a.topic, p) for p in range(a.partitions)], timeout=30)
    out = {}
    for tp in result:
        if tp.error is not None:
            log('confluent-kafka: committed() error for partition %d: %s' % (tp.partition, tp.error))
            sys.exit(1)
        out[str(tp.partition)] = [tp.offset if tp.offset >= 0 else None, getattr(tp, 'metadata', None)]
    consumer.close()
    emit({'committed': out})


# ----------------------------------------------------------------------------- kafka-python

def kafka_python_consumer(a):
    from kafka import KafkaConsumer
    kwargs = dict(bootstrap_servers=a.bootstrap, group_id=a.group, enable_auto_commit=False, auto_offset_reset='earliest',
                  heartbeat_interval_ms=a.heartbeat_ms, session_timeout_ms=a.session_ms, fetch_max_wait_ms=100,
                  metadata_max_age_ms=2000)
    if a.assignor == 'roundrobin':
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
        kwargs['partition_assignment_strategy'] = [RoundRobinPartitionAssignor]
    return KafkaConsumer(**kwargs)


def offset_and_metadata(offset, metadata):
    from kafka.structs import OffsetAndMetadata
    if 'leader_epoch' in OffsetAndMetadata._fields:  # kafka-python 2.1+/3.x
        return OffsetAndMetadata(offset, metadata, -1)
    return OffsetAndMetadata(offset, metadata)


def kafka_python_member(a):
    from kafka import ConsumerRebalanceListener, TopicPartition
    from kafka.errors import KafkaError
    stop = StopFlag()
    deadline = time.monotonic() + a.timeout
    consumer = kafka_python_consumer(a)

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            emit({'ev': 'revoked', 'partitions': sorted(tp.partition for tp in revoked)})

        def on_partitions_assigned(self, assigned):
            emit({'ev': 'assigned', 'partitions': sorted(tp.partition for tp in assigned)})

    # Learn the topic's partitions before joining: kafka-python's leader assigns from its own metadata.
    for _ in range(50):
        if consumer.partitions_for_topic(a.topic):
            break
        time.sleep(0.1)
    consumer.subscribe([a.topic], listener=Listener())
    # Refresh the metadata once more after subscribing, so the coordinator's metadata snapshot of the
    # subscribed topic is taken before the first JoinGroup. Without it the leader's first generation
    # records an empty snapshot, the next metadata response differs, and the leader rejoins at once
    # (a second generation within ~100 ms of the first). kafka-python 3.0.12 then sometimes never
    # returns from poll(): its main thread waits forever on a task handed to the IO thread, which
    # sits idle in select(), so no heartbeat goes out and the member's session expires; the frames are
    # the same against Kafka 4.4 and Skiff (a client bug, seen in ~1 of 30 such rejoins on both).
    consumer.topics()
    while not stop.is_set():
        if time.monotonic() > deadline:
            log('kafka-python member: timed out before stop')
            sys.exit(2)
        batches = consumer.poll(timeout_ms=200, max_records=500)
        records = []
        last = {}
        for tp, msgs in batches.items():
            for m in msgs:
                records.append([tp.partition, m.offset, None if m.value is None else m.value.decode('latin-1')])
                last[tp.partition] = m.offset + 1
        if not records:
            continue
        emit({'ev': 'records', 'records': records})
        offsets = {str(p): o for p, o in last.items()}
        try:
            consumer.commit({TopicPartition(a.topic, p): offset_and_metadata(o, '') for p, o in last.items()})
            emit({'ev': 'committed', 'offsets': offsets})
        except KafkaError as e:
            emit({'ev': 'commit-failed', 'error': '%s: %s' % (type(e).__name__, e), 'offsets': offsets})
    consumer.close(autocommit=False)
    emit({'ev': 'closed'})


def kafka_python_commit(a):
    from kafka import TopicPartition
    consumer = kafka_python_consumer(a)
    consumer.subscribe([a.topic])
    deadline = time.monotonic() + a.timeout
    while len(consumer.assignment()) != a.partitions:
        if time.monotonic() > deadline:
            log('kafka-python: no assignment of %d partitions within %s s (have %s)' % (a.partitions, a.timeout, consumer.assignment()))
            sys.exit(2)
        consumer.poll(timeout_ms=200, max_records=1)
        # poll may fetch records and move positions; only the explicit commit below counts.
    wanted = json.loads(a.offsets)
    consumer.commit({TopicPartition(a.topic, int(p)): offset_and_metadata(o, md if md is not None else '') for p, (o, md) in wanted.items()})
    consumer.close(autocommit=False)
    emit({'committed': {p: o for p, (o, md) in wanted.items()}})


def kafka_python_committed(a):
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient
    consumer = kafka_python_consumer(a)
    out = {}
    for p in range(a.partitions):
        om = consumer.committed(TopicPartition(a.topic, p), metadata=True)
        out[str(p)] = [None, None] if om is None else [om.offset, om.metadata]
    consumer.close(autocommit=False)
    admin = KafkaAdminClient(bootstrap_servers=a.bootstrap)
    if hasattr(admin, 'list_group_offsets'):  # kafka-python 3.x (OffsetFetch v8+: groups in one request)
        listed = admin.list_group_offsets({a.group: None})[a.group]
    else:  # kafka-python 2.0.2
        listed = admin.list_consumer_group_offsets(a.group)
    admin.close()
    via_admin = {str(tp.partition): [om.offset, om.metadata] for tp, om in listed.items() if tp.topic == a.topic}
    emit({'committed': out, 'admin': via_admin})


OPS = {
    ('member', 'confluent'): confluent_member,
    ('commit', 'confluent'): confluent_commit,
    ('committed', 'confluent'): confluent_committed,
    ('member', 'kafka-python'): kafka_python_member,
    ('commit', 'kafka-python'): kafka_python_commit,
    ('committed', 'kafka-python'): kafka_python_committed,
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument('op', choices=['member', 'commit', 'committed'])
    p.add_argument('--client', required=True, choices=['confluent', 'kafka-python'])
    p.add_argument('--bootstrap', required=True)
    p.add_argument('--group', required=True)
    p.add_argument('--topic', required=True)
    p.add_argument('--assignor', default='')
    p.add_argument('--instance-id', default='')
    p.add_argument('--heartbeat-ms', type=int, default=500)
    p.add_argument('--session-ms', type=int, default=10000)
    p.add_argument('--partitions', type=int, default=0)
    p.add_argument('--offsets', default='{}')
    p.add_argument('--timeout', type=float, default=60.0)
    a = p.parse_args()
    OPS[(a.op, a.client)](a)
    sys.exit(0)


if __name__ == '__main__':
    main()
