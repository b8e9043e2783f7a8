"""One kafka-python 2.0.2 operation per run, for the compat suites that check what the broker
answers rather than bulk record transfer: topic configs, per-record produce results, timestamps,
offsets by time, beginning/end offsets and offset-reset behaviour.

usage: kafka_python_ops.py   (reads one JSON object on stdin, prints one JSON line on stdout)

Every request has "op" and "bootstrap"; the other fields depend on the op:

  create-topic        topic, partitions, configs {name: value}      -> {"error": null | ERR}
  describe-configs    topic   (DescribeConfigs with synonyms)
                      -> {"error": null | ERR, "version": n,
                          "configs": {name: {"value", "source", "read_only", "synonyms": [[name, value, source]]}}}
  alter-configs       topic, configs {name: value}   (AlterConfigs)  -> {"error": null | ERR}
  produce             topic, partition, records [{"key", "value" | "value_size", "timestamp"}],
                      config {KafkaProducer keyword: value}
                      -> {"results": [{"error": null | ERR, "offset", "partition", "timestamp"}]}
  consume             topic, partition, offset ("beginning" or a number), reset ("earliest"|"latest"),
                      max (records; default: up to the end offset)
                      -> {"records": [{"offset", "key", "value", "timestamp", "timestamp_type"}], "error": null | ERR}
  offsets-for-times   topic, partition, timestamps [ms]  -> {"offsets": [offset | null, ...]}
  offsets             topic, partition                   -> {"beginning", "end"}

ERR is {"code": errno, "name": exception class name, "str": message}. Keys and values travel as
latin-1 strings. Timestamp types: "CreateTime", "LogAppendTime".
"""
import json
import logging
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
import kafka.errors as Errors

SOURCES = {0: 'UNKNOWN', 1: 'DYNAMIC_TOPIC_CONFIG', 2: 'DYNAMIC_BROKER_CONFIG', 3: 'DYNAMIC_DEFAULT_BROKER_CONFIG',
           4: 'STATIC_BROKER_CONFIG', 5: 'DEFAULT_CONFIG', 6: 'DYNAMIC_BROKER_LOGGER_CONFIG'}


def err_json(e):
    if e is None:
        return None
    return {'code': getattr(e, 'errno', -1), 'name': type(e).__name__, 'str': str(e)}


def code_json(code, message=None):
    if code == 0:
        return None
    t = Errors.for_code(code)
    return {'code': code, 'name': t.__name__, 'str': message or t.__name__}


def text(b):
    return None if b is None else b.decode('latin-1')


def data(s):
    return None if s is None else s.encode('latin-1')


def admin(req):
    return KafkaAdminClient(bootstrap_servers=req['bootstrap'], request_timeout_ms=15000)


def create_topic(req):
    a = admin(req)
    try:
        topic = NewTopic(req['topic'], req.get('partitions', 1), 1,
                         topic_configs={k: str(v) for k, v in req.get('configs', {}).items()})
        a.create_topics([topic], timeout_ms=10000)
        return {'error': None}
    except Errors.KafkaError as e:
        return {'error': err_json(e)}
    finally:
        a.close()


def describe_configs(req):
    a = admin(req)
    try:
        responses = a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, req['topic'])], include_synonyms=True)
    finally:
        a.close()
    resp = responses[0]
    res = resp.resources[0]
    error_code, error_message = res[0], res[1]
    if error_code != 0:
        return {'error': code_json(error_code, error_message), 'configs': {}, 'version': resp.API_VERSION}
    configs = {}
    for entry in res[4]:
        name, value, read_only, source, _sensitive, synonyms = entry
        configs[name] = {'value': value, 'source': SOURCES.get(source, str(source)), 'read_only': read_only,
                         'synonyms': [[s[0], s[1], SOURCES.get(s[2], str(s[2]))] for s in synonyms]}
    return {'error': None, 'configs': configs, 'version': resp.API_VERSION}


def alter_configs(req):
    a = admin(req)
    try:
        resp = a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, req['topic'],
                                               configs={k: str(v) for k, v in req['configs'].items()})])
    finally:
        a.close()
    error_code, error_message = resp.resources[0][0], resp.resources[0][1]
    return {'error': code_json(error_code, error_message)}


def produce(req):
    conf = {'bootstrap_servers': req['bootstrap'], 'acks': 'all', 'linger_ms': 0, 'retries': 0,
            'request_timeout_ms': 20000, 'max_in_flight_requests_per_connection': 1}
    conf.update(req.get('config', {}))
    producer = KafkaProducer(**conf)
    results = []
    for r in req['records']:
        value = b'v' * r['value_size'] if 'value_size' in r else data(r.get('value'))
        fut = producer.send(req['topic'], value=value, key=data(r.get('key')), partition=req.get('partition'),
                            timestamp_ms=r.get('timestamp'))
        try:
            md = fut.get(timeout=30)  # one at a time: each record gets its own answer
            results.append({'error': None, 'offset': md.offset, 'partition': md.partition, 'timestamp': md.timestamp})
        except Errors.KafkaError as e:
            results.append({'error': err_json(e), 'offset': None, 'partition': None, 'timestamp': None})
    producer.close(timeout=5)
    return {'results': results}


def consumer_for(req, reset='earliest'):
    return KafkaConsumer(bootstrap_servers=req['bootstrap'], group_id=None, enable_auto_commit=False,
                         auto_offset_reset=reset, fetch_max_wait_ms=100, request_timeout_ms=20000,
                         consumer_timeout_ms=1000)


def consume(req):
    consumer = consumer_for(req, req.get('reset', 'earliest'))
    tp = TopicPartition(req['topic'], req.get('partition', 0))
    consumer.assign([tp])
    offset = req.get('offset', 'beginning')
    if offset == 'beginning':
        consumer.seek_to_beginning(tp)
    else:
        consumer.seek(tp, int(offset))
    end = consumer.end_offsets([tp])[tp]
    limit = req.get('max', 1 << 30)
    deadline = time.monotonic() + req.get('timeout', 20)
    out = []
    error = None
    try:
        while len(out) < limit and (not out or out[-1]['offset'] + 1 < end):
            if time.monotonic() > deadline:
                error = {'code': -1, 'name': 'TIMED_OUT', 'str': 'end offset %d not reached; position %s' % (end, consumer.position(tp))}
                break
            for m in consumer.poll(timeout_ms=500, max_records=1000).get(tp, []):
                out.append({'offset': m.offset, 'key': text(m.key), 'value': text(m.value), 'timestamp': m.timestamp,
                            'timestamp_type': 'LogAppendTime' if m.timestamp_type == 1 else 'CreateTime'})
    except Errors.KafkaError as e:
        error = err_json(e)
    consumer.close(autocommit=False)
    return {'records': out[:limit], 'error': error}


def offsets_for_times(req):
    consumer = consumer_for(req)
    tp = TopicPartition(req['topic'], req.get('partition', 0))
    offsets = []
    for ts in req['timestamps']:
        got = consumer.offsets_for_times({tp: ts})[tp]
        offsets.append(None if got is None else got.offset)
    consumer.close(autocommit=False)
    return {'offsets': offsets}


def offsets(req):
    consumer = consumer_for(req)
    tp = TopicPartition(req['topic'], req.get('partition', 0))
    beginning = consumer.beginning_offsets([tp])[tp]
    end = consumer.end_offsets([tp])[tp]
    consumer.close(autocommit=False)
    return {'beginning': beginning, 'end': end}


OPS = {'create-topic': create_topic, 'describe-configs': describe_configs, 'alter-configs': alter_configs,
       'produce': produce, 'consume': consume, 'offsets-for-times': offsets_for_times, 'offsets': offsets}


def main():
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    req = json.load(sys.stdin)
    print(json.dumps(OPS[req['op']](req)))


if __name__ == '__main__':
    main()
