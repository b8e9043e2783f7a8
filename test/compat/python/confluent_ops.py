"""One confluent-kafka (librdkafka 2.0.2) operation per run, for the compat suites that check what
the broker answers rather than bulk record transfer: topic configs, per-record produce results,
timestamps, offsets by time, watermarks and offset-reset behaviour.

usage: confluent_ops.py   (reads one JSON object on stdin, prints one JSON line on stdout)

Every request has "op" and "bootstrap"; the other fields depend on the op:

  create-topic        topic, partitions, configs {name: value}
                      -> {"error": null | ERR}
  describe-configs    topic
                      -> {"error": null | ERR, "configs": {name: {"value", "source", "is_default", "read_only"}}}
  alter-configs       topic, configs {name: value}   (AlterConfigs: replaces all overrides)
                      -> {"error": null | ERR}
  produce             topic, partition, records [{"key", "value" | "value_size", "timestamp"}],
                      config {librdkafka producer property: value}
                      -> {"results": [{"error": null | ERR, "offset", "partition", "timestamp", "timestamp_type"}]}
  consume             topic, partition, offset ("beginning" or a number), reset ("earliest"|"latest"|"error"),
                      max (records), idle_eof (stop at end of partition)
                      -> {"records": [{"offset", "key", "value", "timestamp", "timestamp_type"}], "error": null | ERR}
  offsets-for-times   topic, partition, timestamps [ms]  -> {"offsets": [offset, ...]} (-1 = none at or after)
  watermarks          topic, partition                   -> {"low", "high"}

ERR is {"code": int, "name": str, "str": str}. Keys and values travel as latin-1 strings (null = null).
Timestamp types: "CreateTime", "LogAppendTime", "NotAvailable".
"""
import json
import sys
import time

from confluent_kafka import (Consumer, KafkaError, KafkaException, Producer, TopicPartition,
                             OFFSET_BEGINNING, TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME)
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic

TIMESTAMP_TYPES = {TIMESTAMP_CREATE_TIME: 'CreateTime', TIMESTAMP_LOG_APPEND_TIME: 'LogAppendTime'}


def err_json(err):
    if err is None:
        return None
    if isinstance(err, KafkaException):
        err = err.args[0]
    if isinstance(err, KafkaError):
        return {'code': err.code(), 'name': err.name(), 'str': err.str()}
    return {'code': -1, 'name': type(err).__name__, 'str': str(err)}


def text(b):
    return None if b is None else b.decode('latin-1')


def data(s):
    return None if s is None else s.encode('latin-1')


def source_name(source):
    """ConfigEntry.source is a plain int in confluent-kafka 1.7 (a ConfigSource in later releases)."""
    try:
        return ConfigSource(int(getattr(source, 'value', source))).name
    except ValueError:
        return str(source)


def admin(req):
    return AdminClient({'bootstrap.servers': req['bootstrap']})


def create_topic(req):
    topic = NewTopic(req['topic'], num_partitions=req.get('partitions', 1), replication_factor=1,
                     config={k: str(v) for k, v in req.get('configs', {}).items()})
    client = admin(req)  # keep a reference: a collected AdminClient fails its futures with _DESTROY
    fut = client.create_topics([topic], request_timeout=15)[req['topic']]
    try:
        fut.result(timeout=20)
        return {'error': None}
    except KafkaException as e:
        return {'error': err_json(e)}


def describe_configs(req):
    resource = ConfigResource(ConfigResource.Type.TOPIC, req['topic'])
    client = admin(req)
    fut = client.describe_configs([resource], request_timeout=15)[resource]
    try:
        entries = fut.result(timeout=20)
    except KafkaException as e:
        return {'error': err_json(e), 'configs': {}}
    configs = {}
    for name, entry in entries.items():
        configs[name] = {'value': entry.value, 'source': source_name(entry.source),
                         'is_default': entry.is_default, 'read_only': entry.is_read_only}
    return {'error': None, 'configs': configs}


def alter_configs(req):
    resource = ConfigResource(ConfigResource.Type.TOPIC, req['topic'],
                              set_config={k: str(v) for k, v in req['configs'].items()})
    client = admin(req)
    fut = client.alter_configs([resource], request_timeout=15)[resource]
    try:
        fut.result(timeout=20)
        return {'error': None}
    except KafkaException as e:
        return {'error': err_json(e)}


def produce(req):
    conf = {'bootstrap.servers': req['bootstrap'], 'linger.ms': 0, 'message.timeout.ms': 20000,
            'enable.idempotence': False, 'max.in.flight.requests.per.connection': 1, 'acks': 'all'}
    conf.update(req.get('config', {}))
    producer = Producer(conf)
    records = req['records']
    results = [None] * len(records)

    def on_delivery(i):
        def cb(err, msg):
            ts_type, ts = msg.timestamp()
            results[i] = {'error': err_json(err), 'offset': msg.offset(), 'partition': msg.partition(),
                          'timestamp': ts, 'timestamp_type': TIMESTAMP_TYPES.get(ts_type, 'NotAvailable')}
        return cb

    for i, r in enumerate(records):
        value = b'v' * r['value_size'] if 'value_size' in r else data(r.get('value'))
        kwargs = {'value': value, 'key': data(r.get('key')), 'on_delivery': on_delivery(i)}
        if req.get('partition') is not None:
            kwargs['partition'] = req['partition']
        if r.get('timestamp') is not None:
            kwargs['timestamp'] = r['timestamp']
        producer.produce(req['topic'], **kwargs)
        if req.get('one_by_one'):
            producer.flush(30)
        producer.poll(0)
    left = producer.flush(30)
    if left:
        raise SystemExit('confluent-kafka: %d records undelivered after 30 s' % left)
    return {'results': results}


def consumer_for(req, reset):
    return Consumer({'bootstrap.servers': req['bootstrap'], 'group.id': 'skiff-compat-ops',
                     'enable.auto.commit': False, 'enable.auto.offset.store': False,
                     'enable.partition.eof': True, 'auto.offset.reset': reset, 'fetch.wait.max.ms': 100})


def consume(req):
    consumer = consumer_for(req, req.get('reset', 'earliest'))
    offset = req.get('offset', 'beginning')
    start = OFFSET_BEGINNING if offset == 'beginning' else int(offset)
    consumer.assign([TopicPartition(req['topic'], req.get('partition', 0), start)])
    deadline = time.monotonic() + req.get('timeout', 20)
    out = []
    error = None
    limit = req.get('max', 1 << 30)
    done = False
    while not done and time.monotonic() < deadline and len(out) < limit:
        for m in consumer.consume(num_messages=1000, timeout=0.5):
            err = m.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    done = True
                    continue
                error = err_json(err)
                done = True
                break
            ts_type, ts = m.timestamp()
            out.append({'offset': m.offset(), 'key': text(m.key()), 'value': text(m.value()), 'timestamp': ts,
                        'timestamp_type': TIMESTAMP_TYPES.get(ts_type, 'NotAvailable')})
    consumer.close()
    if not done and len(out) < limit and error is None:
        error = {'code': -1, 'name': 'TIMED_OUT', 'str': 'no end of partition within the timeout'}
    return {'records': out[:limit], 'error': error}


def offsets_for_times(req):
    consumer = consumer_for(req, 'earliest')
    tps = [TopicPartition(req['topic'], req.get('partition', 0), ts) for ts in req['timestamps']]
    offsets = []
    for tp in tps:  # one query per timestamp: a partition may appear once per request
        got = consumer.offsets_for_times([tp], timeout=15)
        if got[0].error is not None:
            raise SystemExit('offsets_for_times(%d): %s' % (tp.offset, got[0].error))
        offsets.append(got[0].offset)
    consumer.close()
    return {'offsets': offsets}


def watermarks(req):
    consumer = consumer_for(req, 'earliest')
    low, high = consumer.get_watermark_offsets(TopicPartition(req['topic'], req.get('partition', 0)), timeout=15, cached=False)
    consumer.close()
    return {'low': low, 'high': high}


OPS = {'create-topic': create_topic, 'describe-configs': describe_configs, 'alter-configs': alter_configs,
       'produce': produce, 'consume': consume, 'offsets-for-times': offsets_for_times, 'watermarks': watermarks}


def main():
    req = json.load(sys.stdin)
    print(json.dumps(OPS[req['op']](req)))


if __name__ == '__main__':
    main()
