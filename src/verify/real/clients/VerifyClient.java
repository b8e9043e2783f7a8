/*
 * The Java side of `skiff verify --bootstrap` (src/verify/real/run.ts drives it), the same two roles and
 * the same JSON lines on stdout as verify_client.py, with Apache Kafka's KafkaProducer and KafkaConsumer.
 * Run as a single source file: java -cp <kafka-clients jars> VerifyClient.java produce|consume ...
 *
 * produce --bootstrap B --topic T --acks -1|0|1 [--idempotent] --prefix P --rate N --duration S
 *         [--message-timeout-ms MS]
 *   record i has value "<P>-<i>" (no key); {"a":[i,partition,offset]} per acknowledged record (offset
 *   -1 under acks=0), {"e":[i,"ExceptionName"]} per failed one, {"done":sent} at the end.
 * consume --bootstrap B --topic T --group G --strategy commit-after-processing|commit-before-processing|
 *         auto-commit-5s [--process-ms MS]
 *   {"assigned":[partitions]} per assignment, {"r":[partition,offset,value]} per record processed,
 *   {"c":[[partition,next offset],...]} per acknowledged commit, {"ce":"ExceptionName"} per failed one.
 *   SIGTERM closes the consumer (leaving the group) and exits 0.
 */
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class VerifyClient {
  static synchronized void emit(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  static Map<String, String> parse(String[] argv) {
    Map<String, String> a = new HashMap<>();
    for (int i = 1; i < argv.length; i++) {
      String k = argv[i].substring(2);
      if (k.equals("idempotent")) a.put(k, "true");
      else a.put(k, argv[++i]);
    }
    return a;
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = parse(argv);
    if (argv[0].equals("produce")) produce(a);
    else consume(a);
  }

  static void produce(Map<String, String> a) throws Exception {
    Properties p = new Properties();
    boolean idempotent = a.containsKey("idempotent");
    String acks = a.get("acks").equals("-1") ? "all" : a.get("acks");
    int timeoutMs = Integer.parseInt(a.getOrDefault("message-timeout-ms", "30000"));
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
    p.put(ProducerConfig.ACKS_CONFIG, acks);
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, String.valueOf(idempotent));
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, String.valueOf(Math.min(timeoutMs, 10000)));
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(timeoutMs));
    p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "50");
    p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
    p.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "1000");
    if (!idempotent) p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    String topic = a.get("topic");
    String prefix = a.get("prefix");
    double rate = Double.parseDouble(a.get("rate"));
    long durationNs = (long) (Double.parseDouble(a.get("duration")) * 1e9);
    AtomicBoolean stopping = new AtomicBoolean(false);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> stopping.set(true)));
    AtomicInteger pending = new AtomicInteger();
    int i = 0;
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      long started = System.nanoTime();
      while (!stopping.get() && System.nanoTime() - started < durationNs) {
        long due = started + (long) (i / rate * 1e9);
        long waitNs = due - System.nanoTime();
        if (waitNs > 0) Thread.sleep(waitNs / 1_000_000, (int) (waitNs % 1_000_000));
        final int index = i;
        byte[] value = (prefix + "-" + index).getBytes(StandardCharsets.UTF_8);
        pending.incrementAndGet();
        try {
          producer.send(new ProducerRecord<>(topic, value), (md, err) -> {
            pending.decrementAndGet();
            if (err != null) emit("{\"e\":[" + index + "," + quote(err.getClass().getSimpleName()) + "]}");
            else emit("{\"a\":[" + index + "," + md.partition() + "," + (md.hasOffset() ? md.offset() : -1) + "]}");
          });
        } catch (Exception e) {
          pending.decrementAndGet();
          emit("{\"e\":[" + index + "," + quote(e.getClass().getSimpleName()) + "]}");
        }
        i++;
      }
      producer.flush();
    }
    emit("{\"done\":" + i + "}");
    System.exit(pending.get() == 0 ? 0 : 2);
  }

  static void consume(Map<String, String> a) throws Exception {
    String strategy = a.get("strategy");
    boolean auto = strategy.equals("auto-commit-5s");
    double processMs = Double.parseDouble(a.getOrDefault("process-ms", "2"));
    String topic = a.get("topic");
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
    p.put(ConsumerConfig.GROUP_ID_CONFIG, a.get("group"));
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, String.valueOf(auto));
    p.put(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, "5000");
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
    p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
    p.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
    p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
    // The range assignor, as the librdkafka members of the same group use.
    p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, "org.apache.kafka.clients.consumer.RangeAssignor");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    // Auto-commits have no callback: an interceptor sees each acknowledged one.
    if (auto) p.put(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, List.of(CommitReporter.class));
    KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
    AtomicBoolean stopping = new AtomicBoolean(false);
    Thread main = Thread.currentThread();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stopping.set(true);
      consumer.wakeup();
      try {
        main.join(15_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }));
    consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
      public void onPartitionsRevoked(Collection<TopicPartition> parts) {}

      public void onPartitionsAssigned(Collection<TopicPartition> parts) {
        List<String> ps = new ArrayList<>();
        for (TopicPartition tp : parts) ps.add(String.valueOf(tp.partition()));
        emit("{\"assigned\":[" + String.join(",", ps) + "]}");
      }
    });
    try {
      while (!stopping.get()) {
        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
        if (batch.isEmpty()) continue;
        Map<TopicPartition, OffsetAndMetadata> next = new TreeMap<>((x, y) -> Integer.compare(x.partition(), y.partition()));
        for (ConsumerRecord<byte[], byte[]> r : batch)
          next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        if (strategy.equals("commit-before-processing")) commit(consumer, next);
        for (ConsumerRecord<byte[], byte[]> r : batch) {
          emit("{\"r\":[" + r.partition() + "," + r.offset() + "," + quote(new String(r.value(), StandardCharsets.UTF_8)) + "]}");
          if (processMs > 0) Thread.sleep((long) processMs);
        }
        if (strategy.equals("commit-after-processing")) commit(consumer, next);
      }
    } catch (WakeupException e) {
      // SIGTERM: close below
    } finally {
      consumer.close(Duration.ofSeconds(10));
    }
  }

  /** Prints each commit the coordinator acknowledged (auto-commits included) as a {"c":...} line. */
  public static class CommitReporter implements ConsumerInterceptor<byte[], byte[]> {
    public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
      return records;
    }

    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
      List<String> done = new ArrayList<>();
      for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet())
        done.add("[" + e.getKey().partition() + "," + e.getValue().offset() + "]");
      if (!done.isEmpty()) emit("{\"c\":[" + String.join(",", done) + "]}");
    }

    public void close() {}

    public void configure(Map<String, ?> configs) {}
  }

  static void commit(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, OffsetAndMetadata> offsets) {
    try {
      consumer.commitSync(offsets);
      List<String> done = new ArrayList<>();
      for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet())
        done.add("[" + e.getKey().partition() + "," + e.getValue().offset() + "]");
      emit("{\"c\":[" + String.join(",", done) + "]}");
    } catch (WakeupException e) {
      throw e;
    } catch (Exception e) {
      emit("{\"ce\":" + quote(e.getClass().getSimpleName()) + "}");
    }
  }
}
