import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TopicListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Drives Apache Kafka's Java client (kafka-clients 4.x) against a broker for
 * test/compat/java-clients.test.ts. One JVM runs a chain of commands separated by "::", e.g.
 *
 * <pre>
 *   java -cp 'lib/*:classes' SkiffJavaClient create-topics --bootstrap H:P --topic t:1 \
 *       :: produce --bootstrap H:P --input in.krec --out-dir D --target t=zstd \
 *       :: consume --bootstrap H:P --out-dir D --topic t
 * </pre>
 *
 * Commands:
 * <ul>
 *   <li>create-topics --topic NAME:PARTITIONS... (AdminClient, replication factor 1)</li>
 *   <li>produce --input FILE --out-dir D --target TOPIC=CODEC... [--config k=v]...
 *       [--disconnect-every-ms N --max-disconnects K] [--pace-every N --pace-ms M]: one
 *       KafkaProducer per target (default settings: idempotent, acks=all), each on its own
 *       thread, sends every record of the input
 *       record file in order; writes D/TOPIC.acks (int32 partition, int64 offset per input record;
 *       -1/-1 if it failed). With --disconnect-every-ms, a side thread shuts down the input side of
 *       the producer's broker sockets (found by reflection) every N ms, K times at most, so
 *       in-flight Produce requests get no answer and are retried. With --pace-every, the sending
 *       thread sleeps M ms after every N sends, spreading them over time (so a fault the test
 *       injects lands among them).</li>
 *   <li>consume --out-dir D --topic NAME... : one KafkaConsumer, no group.id, assign() all
 *       partitions, seekToBeginning, poll until every position reaches the end offset taken at the
 *       start; writes D/NAME.krec (records in consumption order).</li>
 *   <li>admin --prefix P --data-dir DIR: the AdminClient walk-through (see {@link #admin}).</li>
 *   <li>group-member --group G --topic T [--assignor range|roundrobin|cooperative-sticky] [--config k=v]...:
 *       a KafkaConsumer in group G (classic protocol) subscribed to T, enable.auto.commit=false,
 *       auto.offset.reset=earliest; after every poll with records, commitSync of the offset after
 *       the last record of each partition. "stop" on stdin makes it close (LeaveGroup). Prints the
 *       event lines of test/compat/group-members.ts: {"ev": "assigned"|"revoked"|"records"|
 *       "committed"|"commit-failed"|"closed", ..., "t": wall-clock ms}.</li>
 *   <li>commit-offsets --group G --topic T --partitions N --offset P=OFFSET:METADATA...: subscribe,
 *       poll until all N partitions are assigned, commitSync those offsets, close.</li>
 *   <li>committed --group G --topic T --partitions N: KafkaConsumer.committed() of partitions
 *       0..N-1 (without subscribing) and AdminClient.listConsumerGroupOffsets(G):
 *       {"cmd": "committed", "consumer": {"p": [offset, metadata]}, "admin": {...}}.</li>
 * </ul>
 *
 * Record files use the layout of test/compat/record-file.ts: int32 partition, int64 offset,
 * int32 keyLen (-1 null), key, int32 valueLen (-1 null), value, int32 headerCount, then per header
 * int32 keyLen, key (UTF-8), int32 valueLen (-1 null), value.
 *
 * Every command prints one JSON object per line on stdout; the node test reads them. Failures end
 * the JVM with exit code 1 and the reason on stderr (the client's own logs, WARN and up, go to
 * stderr as well).
 */
public final class SkiffJavaClient {
  private SkiffJavaClient() {}

  private static final long TIMEOUT_MS = Long.getLong("skiff.timeoutMs", 60_000L);

  public static void main(String[] argv) throws Exception {
    List<List<String>> commands = new ArrayList<>();
    List<String> current = new ArrayList<>();
    for (String a : argv) {
      if (a.equals("::")) {
        commands.add(current);
        current = new ArrayList<>();
      } else {
        current.add(a);
      }
    }
    commands.add(current);
    try {
      for (List<String> command : commands) {
        if (command.isEmpty()) throw new IllegalArgumentException("empty command");
        Args args = new Args(command.subList(1, command.size()));
        switch (command.get(0)) {
          case "create-topics": createTopics(args); break;
          case "produce": produce(args); break;
          case "consume": consume(args); break;
          case "admin": admin(args); break;
          case "group-member": groupMember(args); break;
          case "commit-offsets": commitOffsets(args); break;
          case "committed": committed(args); break;
          default: throw new IllegalArgumentException("unknown command " + command.get(0));
        }
        System.out.flush();
      }
    } catch (Throwable t) {
      System.out.flush();
      System.err.println("SkiffJavaClient failed: " + t);
      t.printStackTrace();
      System.err.flush();
      System.exit(1);
    }
    System.exit(0); // do not wait for client threads that linger after close
  }

  // ---------------------------------------------------------------- arguments

  /** --name value pairs; a name may repeat. */
  static final class Args {
    final Map<String, List<String>> values = new HashMap<>();

    Args(List<String> list) {
      for (int i = 0; i < list.size(); i += 2) {
        String name = list.get(i);
        if (!name.startsWith("--") || i + 1 >= list.size()) throw new IllegalArgumentException("bad arguments at " + name);
        values.computeIfAbsent(name.substring(2), k -> new ArrayList<>()).add(list.get(i + 1));
      }
    }

    String get(String name) {
      List<String> v = values.get(name);
      if (v == null) throw new IllegalArgumentException("missing --" + name);
      return v.get(v.size() - 1);
    }

    String get(String name, String dflt) {
      List<String> v = values.get(name);
      return v == null ? dflt : v.get(v.size() - 1);
    }

    List<String> all(String name) {
      return values.getOrDefault(name, List.of());
    }

    /** --config k=v pairs. */
    Map<String, String> configs() {
      Map<String, String> m = new LinkedHashMap<>();
      for (String kv : all("config")) {
        int eq = kv.indexOf('=');
        if (eq < 0) throw new IllegalArgumentException("--config wants key=value, got " + kv);
        m.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
      return m;
    }
  }

  // ---------------------------------------------------------------- record files

  static final class Rec {
    int partition;
    long offset;
    byte[] key;
    byte[] value;
    List<Header> headers = new ArrayList<>();
  }

  static byte[] readBytes(DataInputStream in) throws IOException {
    int n = in.readInt();
    if (n < 0) return null;
    byte[] b = new byte[n];
    in.readFully(b);
    return b;
  }

  static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
    if (b == null) {
      out.writeInt(-1);
      return;
    }
    out.writeInt(b.length);
    out.write(b);
  }

  static List<Rec> readRecordFile(String file) throws IOException {
    List<Rec> records = new ArrayList<>();
    try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(file), 1 << 20))) {
      while (true) {
        int partition;
        try {
          partition = in.readInt();
        } catch (EOFException e) {
          break;
        }
        Rec r = new Rec();
        r.partition = partition;
        r.offset = in.readLong();
        r.key = readBytes(in);
        r.value = readBytes(in);
        int headerCount = in.readInt();
        for (int i = 0; i < headerCount; i++) {
          byte[] hk = readBytes(in);
          if (hk == null) throw new IOException("null header key in " + file);
          r.headers.add(new RecordHeader(new String(hk, StandardCharsets.UTF_8), readBytes(in)));
        }
        records.add(r);
      }
    }
    return records;
  }

  static void writeConsumed(String file, List<ConsumerRecord<byte[], byte[]>> records) throws IOException {
    try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(file), 1 << 20))) {
      for (ConsumerRecord<byte[], byte[]> r : records) {
        out.writeInt(r.partition());
        out.writeLong(r.offset());
        writeBytes(out, r.key());
        writeBytes(out, r.value());
        Header[] headers = r.headers().toArray();
        out.writeInt(headers.length);
        for (Header h : headers) {
          writeBytes(out, h.key().getBytes(StandardCharsets.UTF_8));
          writeBytes(out, h.value());
        }
      }
    }
  }

  // ---------------------------------------------------------------- JSON output

  static String json(Object o) {
    StringBuilder sb = new StringBuilder();
    appendJson(sb, o);
    return sb.toString();
  }

  @SuppressWarnings("unchecked")
  static void appendJson(StringBuilder sb, Object o) {
    if (o == null) {
      sb.append("null");
    } else if (o instanceof String) {
      String s = (String) o;
      sb.append('"');
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c == '"' || c == '\\') sb.append('\\').append(c);
        else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
        else sb.append(c);
      }
      sb.append('"');
    } else if (o instanceof Number || o instanceof Boolean) {
      if (o instanceof Double && !Double.isFinite((Double) o)) sb.append("null");
      else sb.append(o);
    } else if (o instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<Object, Object> e : ((Map<Object, Object>) o).entrySet()) {
        if (!first) sb.append(',');
        first = false;
        appendJson(sb, String.valueOf(e.getKey()));
        sb.append(':');
        appendJson(sb, e.getValue());
      }
      sb.append('}');
    } else if (o instanceof Collection) {
      sb.append('[');
      boolean first = true;
      for (Object e : (Collection<Object>) o) {
        if (!first) sb.append(',');
        first = false;
        appendJson(sb, e);
      }
      sb.append(']');
    } else if (o instanceof Enum) {
      appendJson(sb, ((Enum<?>) o).name());
    } else {
      appendJson(sb, o.toString());
    }
  }

  /** A map literal with insertion order: obj("a", 1, "b", 2). */
  static Map<String, Object> obj(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
    return m;
  }

  static synchronized void emit(Map<String, Object> o) {
    System.out.println(json(o));
  }

  // ---------------------------------------------------------------- client configs

  static Properties adminProps(Args args) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
    p.put(AdminClientConfig.CLIENT_ID_CONFIG, "skiff-java-admin");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
    return p;
  }

  static Admin newAdmin(Args args) {
    return Admin.create(adminProps(args));
  }

  /** The cause of an ExecutionException (what a KafkaFuture failed with). */
  static Throwable unwrap(Throwable t) {
    while ((t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException) && t.getCause() != null) t = t.getCause();
    return t;
  }

  /** Runs `f`: {"ok": value} or {"error": ExceptionSimpleName, "message": ...}. */
  static Map<String, Object> attempt(Callable<Object> f) {
    try {
      return obj("ok", f.call());
    } catch (Exception e) {
      Throwable t = unwrap(e);
      return obj("error", t.getClass().getSimpleName(), "message", t.getMessage());
    }
  }

  // ---------------------------------------------------------------- create-topics

  static void createTopics(Args args) throws Exception {
    try (Admin admin = newAdmin(args)) {
      List<NewTopic> topics = new ArrayList<>();
      for (String spec : args.all("topic")) {
        int colon = spec.lastIndexOf(':');
        topics.add(new NewTopic(spec.substring(0, colon), Integer.parseInt(spec.substring(colon + 1)), (short) 1));
      }
      admin.createTopics(topics).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
      emit(obj("cmd", "create-topics", "created", args.all("topic")));
    }
  }

  // ---------------------------------------------------------------- produce

  static double metric(Map<MetricName, ? extends Metric> metrics, String group, String name) {
    for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
      if (e.getKey().group().equals(group) && e.getKey().name().equals(name) && !e.getKey().tags().containsKey("topic")) {
        Object v = e.getValue().metricValue();
        if (v instanceof Number) return ((Number) v).doubleValue();
      }
    }
    return Double.NaN;
  }

  static Object field(Object target, String name) throws ReflectiveOperationException {
    Class<?> c = target.getClass();
    while (c != null) {
      try {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(target);
      } catch (NoSuchFieldException e) {
        c = c.getSuperclass();
      }
    }
    throw new NoSuchFieldException(name + " in " + target.getClass().getName());
  }

  /**
   * The producer's connected broker sockets that have requests in flight: KafkaProducer.sender ->
   * Sender.client (NetworkClient) -> .selector (Selector) -> .channels (KafkaChannel by node id)
   * -> selectionKey().channel().
   */
  static List<SocketChannel> busyProducerSockets(KafkaProducer<?, ?> producer) throws ReflectiveOperationException {
    Object sender = field(producer, "sender");
    org.apache.kafka.clients.KafkaClient client = (org.apache.kafka.clients.KafkaClient) field(sender, "client");
    Object selector = field(client, "selector");
    Map<?, ?> channels = (Map<?, ?>) field(selector, "channels");
    List<SocketChannel> sockets = new ArrayList<>();
    for (Map.Entry<?, ?> e : new ArrayList<>(channels.entrySet())) {
      if (client.inFlightRequestCount(String.valueOf(e.getKey())) == 0) continue;
      Object channel = e.getValue();
      java.nio.channels.SelectionKey key = (java.nio.channels.SelectionKey) channel.getClass().getMethod("selectionKey").invoke(channel);
      SelectableChannel ch = key.channel();
      if (ch instanceof SocketChannel && ((SocketChannel) ch).isConnected()) sockets.add((SocketChannel) ch);
    }
    return sockets;
  }

  /**
   * The version of each API the producer would use with the first broker it knows: NodeApiVersions
   * (read by reflection: KafkaProducer.apiVersions -> nodeApiVersions) prints
   * "Produce(0): 0 to 9 [usable: 9], ..."; APIs the broker does not list are left out.
   */
  static Map<String, Object> usableVersions(KafkaProducer<?, ?> producer) {
    Map<String, Object> m = new TreeMap<>();
    try {
      Object apiVersions = field(producer, "apiVersions");
      Map<?, ?> byNode = (Map<?, ?>) field(apiVersions, "nodeApiVersions");
      if (byNode.isEmpty()) return m;
      java.util.regex.Matcher matcher = java.util.regex.Pattern.compile("(\\w+)\\((\\d+)\\): (\\d+) to (\\d+) \\[usable: (\\d+)\\]")
          .matcher(String.valueOf(byNode.values().iterator().next()));
      while (matcher.find()) m.put(matcher.group(1), Integer.parseInt(matcher.group(5)));
    } catch (ReflectiveOperationException | RuntimeException e) {
      m.put("unavailable", e.toString());
    }
    return m;
  }

  static void produce(Args args) throws Exception {
    Path outDir = Paths.get(args.get("out-dir"));
    long disconnectEveryMs = Long.parseLong(args.get("disconnect-every-ms", "0"));
    int maxDisconnects = Integer.parseInt(args.get("max-disconnects", "0"));
    List<String> disconnectTargets = args.all("disconnect-target");
    Map<String, List<Rec>> inputs = new HashMap<>();
    List<Thread> threads = new ArrayList<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    for (String target : args.all("target")) {
      // TOPIC=CODEC or TOPIC=CODEC@INPUT_FILE (default: --input)
      int eq = target.indexOf('=');
      int at = target.indexOf('@', eq);
      String topic = target.substring(0, eq);
      String codec = at < 0 ? target.substring(eq + 1) : target.substring(eq + 1, at);
      String file = at < 0 ? args.get("input") : target.substring(at + 1);
      if (!inputs.containsKey(file)) inputs.put(file, readRecordFile(file));
      List<Rec> input = inputs.get(file);
      long every = disconnectTargets.contains(topic) ? disconnectEveryMs : 0;
      Thread t = new Thread(() -> {
        try {
          produceTopic(args, input, topic, codec, outDir, every, maxDisconnects);
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "produce-" + topic);
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) t.join();
    if (failure.get() != null) throw new RuntimeException("produce failed", failure.get());
  }

  static void produceTopic(Args args, List<Rec> input, String topic, String codec, Path outDir, long disconnectEveryMs, int maxDisconnects) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "skiff-java-producer-" + topic);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
    p.putAll(args.configs());
    int n = input.size();
    int[] partitions = new int[n];
    long[] offsets = new long[n];
    Arrays.fill(partitions, -1);
    Arrays.fill(offsets, -1);
    int paceEvery = Integer.parseInt(args.get("pace-every", "0"));
    long paceMs = Long.parseLong(args.get("pace-ms", "0"));
    AtomicInteger errors = new AtomicInteger();
    AtomicInteger acked = new AtomicInteger();
    AtomicReference<String> firstError = new AtomicReference<>();
    AtomicInteger disconnects = new AtomicInteger();
    AtomicReference<String> injectorError = new AtomicReference<>();
    long started = System.nanoTime();
    Map<String, Object> summary;
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      Thread injector = null;
      // Stops the injector once every record is acknowledged.
      java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
      if (disconnectEveryMs > 0) {
        injector = new Thread(() -> {
          try {
            while (disconnects.get() < maxDisconnects && !done.await(disconnectEveryMs, TimeUnit.MILLISECONDS)) {
              if (acked.get() < n / 20) continue; // past InitProducerId and the first batches
              List<SocketChannel> busy;
              try {
                busy = busyProducerSockets(producer);
              } catch (java.util.ConcurrentModificationException | java.util.NoSuchElementException e) {
                continue; // the sender thread changed its (unsynchronized) maps under us: next tick
              }
              for (SocketChannel s : busy) {
                // The broker still gets every request already written; the producer reads EOF,
                // fails its in-flight batches with a NetworkException and retries them.
                try {
                  s.shutdownInput();
                } catch (java.nio.channels.ClosedChannelException e) {
                  continue; // closed by the client meanwhile
                }
                disconnects.incrementAndGet();
              }
            }
          } catch (Throwable e) {
            injectorError.compareAndSet(null, e.toString());
          }
        }, "disconnect-injector");
        injector.setDaemon(true);
        injector.start();
      }
      for (int i = 0; i < n; i++) {
        Rec r = input.get(i);
        final int index = i;
        ProducerRecord<byte[], byte[]> pr = new ProducerRecord<>(topic, r.partition < 0 ? null : r.partition, null, r.key, r.value, r.headers);
        producer.send(pr, (RecordMetadata md, Exception e) -> {
          if (e != null) {
            errors.incrementAndGet();
            firstError.compareAndSet(null, "record " + index + ": " + e);
          } else {
            partitions[index] = md.partition();
            offsets[index] = md.offset();
            acked.incrementAndGet();
          }
        });
        if (paceEvery > 0 && (i + 1) % paceEvery == 0) Thread.sleep(paceMs);
      }
      producer.flush();
      done.countDown();
      if (injector != null) injector.join(10_000);
      Map<MetricName, ? extends Metric> m = producer.metrics();
      summary = obj("cmd", "produce", "topic", topic, "codec", codec, "records", n, "errors", errors.get(), "firstError", firstError.get(),
          "elapsedMs", (System.nanoTime() - started) / 1_000_000,
          "disconnects", disconnects.get(), "injectorError", injectorError.get(),
          "recordRetryTotal", metric(m, "producer-metrics", "record-retry-total"),
          "recordErrorTotal", metric(m, "producer-metrics", "record-error-total"),
          "recordSendTotal", metric(m, "producer-metrics", "record-send-total"),
          "batchSizeAvg", metric(m, "producer-metrics", "batch-size-avg"),
          "recordsPerRequestAvg", metric(m, "producer-metrics", "records-per-request-avg"),
          "compressionRateAvg", metric(m, "producer-metrics", "compression-rate-avg"),
          "usableVersions", usableVersions(producer));
    }
    try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(outDir.resolve(topic + ".acks").toFile()), 1 << 16))) {
      for (int i = 0; i < n; i++) {
        out.writeInt(partitions[i]);
        out.writeLong(offsets[i]);
      }
    }
    emit(summary);
  }

  // ---------------------------------------------------------------- consume

  static Properties producerProps(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    return p;
  }

  static Properties consumerProps(String bootstrap) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "skiff-java-consumer");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    // No group.id: assign() only, no offsets committed (enable.auto.commit is off without a group).
    return p;
  }

  static void consume(Args args) throws Exception {
    Path outDir = Paths.get(args.get("out-dir"));
    long timeoutMs = Long.parseLong(args.get("timeout-ms", String.valueOf(TIMEOUT_MS)));
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps(args.get("bootstrap")))) {
      List<TopicPartition> assignment = new ArrayList<>();
      for (String topic : args.all("topic")) {
        List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofMillis(timeoutMs));
        if (infos == null || infos.isEmpty()) throw new IllegalStateException("no partitions for " + topic);
        for (PartitionInfo info : infos) assignment.add(new TopicPartition(topic, info.partition()));
      }
      consumer.assign(assignment);
      consumer.seekToBeginning(assignment);
      Map<TopicPartition, Long> begin = consumer.beginningOffsets(assignment, Duration.ofMillis(timeoutMs));
      Map<TopicPartition, Long> end = consumer.endOffsets(assignment, Duration.ofMillis(timeoutMs));
      Map<String, List<ConsumerRecord<byte[], byte[]>>> byTopic = new TreeMap<>();
      for (String topic : args.all("topic")) byTopic.put(topic, new ArrayList<>());
      long deadline = System.currentTimeMillis() + timeoutMs;
      long started = System.nanoTime();
      int polls = 0;
      while (true) {
        boolean caughtUp = true;
        for (TopicPartition tp : assignment) {
          if (consumer.position(tp, Duration.ofMillis(timeoutMs)) < end.get(tp)) caughtUp = false;
        }
        if (caughtUp) break;
        if (System.currentTimeMillis() > deadline) {
          Map<String, Object> positions = new TreeMap<>();
          for (TopicPartition tp : assignment) positions.put(tp.toString(), consumer.position(tp) + "/" + end.get(tp));
          throw new IllegalStateException("consume timed out after " + timeoutMs + " ms; position/end: " + positions);
        }
        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
        polls++;
        for (ConsumerRecord<byte[], byte[]> r : batch) byTopic.get(r.topic()).add(r);
      }
      for (Map.Entry<String, List<ConsumerRecord<byte[], byte[]>>> e : byTopic.entrySet()) {
        writeConsumed(outDir.resolve(e.getKey() + ".krec").toString(), e.getValue());
        Map<String, Object> ends = new TreeMap<>();
        for (TopicPartition tp : assignment) {
          if (tp.topic().equals(e.getKey())) ends.put(String.valueOf(tp.partition()), List.of(begin.get(tp), end.get(tp)));
        }
        emit(obj("cmd", "consume", "topic", e.getKey(), "records", e.getValue().size(), "beginEnd", ends));
      }
      emit(obj("cmd", "consume-done", "polls", polls, "elapsedMs", (System.nanoTime() - started) / 1_000_000));
    }
  }

  // ---------------------------------------------------------------- consumer groups

  static Properties groupConsumerProps(Args args) {
    Properties p = consumerProps(args.get("bootstrap"));
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "skiff-java-group-member");
    p.put(ConsumerConfig.GROUP_ID_CONFIG, args.get("group"));
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
    p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "2000");
    String assignor = args.get("assignor", "");
    if (assignor.equals("range")) p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, "org.apache.kafka.clients.consumer.RangeAssignor");
    if (assignor.equals("roundrobin")) p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, "org.apache.kafka.clients.consumer.RoundRobinAssignor");
    if (assignor.equals("cooperative-sticky")) p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
    p.putAll(args.configs());
    return p;
  }

  static List<Integer> partitionsOf(Collection<TopicPartition> tps) {
    List<Integer> ps = new ArrayList<>();
    for (TopicPartition tp : tps) ps.add(tp.partition());
    ps.sort(null);
    return ps;
  }

  static void groupMember(Args args) throws Exception {
    String topic = args.get("topic");
    AtomicBoolean stop = new AtomicBoolean(false);
    Thread stdin = new Thread(() -> {
      try (java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("stop")) {
          // wait for "stop"
        }
      } catch (IOException e) {
        // stdin closed: stop as well
      }
      stop.set(true);
    }, "stdin");
    stdin.setDaemon(true);
    stdin.start();
    long deadline = System.currentTimeMillis() + TIMEOUT_MS;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(groupConsumerProps(args))) {
      consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
          emit(obj("ev", "revoked", "partitions", partitionsOf(partitions), "t", System.currentTimeMillis()));
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          emit(obj("ev", "assigned", "partitions", partitionsOf(consumer.assignment()), "added", partitionsOf(partitions), "t", System.currentTimeMillis()));
        }
      });
      while (!stop.get()) {
        if (System.currentTimeMillis() > deadline) throw new IllegalStateException("group-member: no \"stop\" within " + TIMEOUT_MS + " ms");
        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
        if (batch.isEmpty()) continue;
        List<Object> records = new ArrayList<>();
        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
        Map<String, Object> offsets = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> r : batch) {
          records.add(Arrays.asList(r.partition(), r.offset(), r.value() == null ? null : new String(r.value(), StandardCharsets.ISO_8859_1)));
          next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
          offsets.put(String.valueOf(r.partition()), r.offset() + 1);
        }
        emit(obj("ev", "records", "records", records, "t", System.currentTimeMillis()));
        try {
          consumer.commitSync(next);
          emit(obj("ev", "committed", "offsets", offsets, "t", System.currentTimeMillis()));
        } catch (KafkaException e) {
          emit(obj("ev", "commit-failed", "error", e.toString(), "offsets", offsets, "t", System.currentTimeMillis()));
        }
      }
    }
    emit(obj("ev", "closed", "t", System.currentTimeMillis()));
  }

  static void commitOffsets(Args args) throws Exception {
    String topic = args.get("topic");
    int partitions = Integer.parseInt(args.get("partitions"));
    Map<TopicPartition, OffsetAndMetadata> wanted = new HashMap<>();
    for (String spec : args.all("offset")) {
      int eq = spec.indexOf('=');
      int colon = spec.indexOf(':', eq);
      String metadata = colon < 0 ? "" : spec.substring(colon + 1);
      long offset = Long.parseLong(colon < 0 ? spec.substring(eq + 1) : spec.substring(eq + 1, colon));
      wanted.put(new TopicPartition(topic, Integer.parseInt(spec.substring(0, eq))), new OffsetAndMetadata(offset, metadata));
    }
    long deadline = System.currentTimeMillis() + TIMEOUT_MS;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(groupConsumerProps(args))) {
      consumer.subscribe(List.of(topic));
      while (consumer.assignment().size() != partitions) {
        if (System.currentTimeMillis() > deadline) throw new IllegalStateException("commit-offsets: assignment " + consumer.assignment() + " after " + TIMEOUT_MS + " ms");
        consumer.poll(Duration.ofMillis(200)); // joins the group; positions move, but only the explicit commit below counts
      }
      consumer.commitSync(wanted, Duration.ofMillis(TIMEOUT_MS));
    }
    Map<String, Object> out = new TreeMap<>();
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : wanted.entrySet()) out.put(String.valueOf(e.getKey().partition()), Arrays.asList(e.getValue().offset(), e.getValue().metadata()));
    emit(obj("cmd", "commit-offsets", "committed", out));
  }

  static void committed(Args args) throws Exception {
    String topic = args.get("topic");
    int partitions = Integer.parseInt(args.get("partitions"));
    java.util.Set<TopicPartition> tps = new java.util.HashSet<>();
    for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(topic, p));
    Map<String, Object> viaConsumer = new TreeMap<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(groupConsumerProps(args))) {
      for (Map.Entry<TopicPartition, OffsetAndMetadata> e : consumer.committed(tps, Duration.ofMillis(TIMEOUT_MS)).entrySet()) {
        if (e.getValue() != null) viaConsumer.put(String.valueOf(e.getKey().partition()), Arrays.asList(e.getValue().offset(), e.getValue().metadata()));
      }
    }
    Map<String, Object> viaAdmin = new TreeMap<>();
    try (Admin admin = newAdmin(args)) {
      Map<TopicPartition, OffsetAndMetadata> listed = admin.listConsumerGroupOffsets(args.get("group")).partitionsToOffsetAndMetadata().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
      for (Map.Entry<TopicPartition, OffsetAndMetadata> e : listed.entrySet()) {
        if (e.getKey().topic().equals(topic) && e.getValue() != null) viaAdmin.put(String.valueOf(e.getKey().partition()), Arrays.asList(e.getValue().offset(), e.getValue().metadata()));
      }
    }
    emit(obj("cmd", "committed", "consumer", viaConsumer, "admin", viaAdmin));
  }

  // ---------------------------------------------------------------- admin

  static Map<String, Object> describeTopic(TopicDescription d) {
    List<Object> parts = new ArrayList<>();
    for (TopicPartitionInfo p : d.partitions()) {
      List<Integer> replicas = new ArrayList<>();
      for (Node n : p.replicas()) replicas.add(n.id());
      List<Integer> isr = new ArrayList<>();
      for (Node n : p.isr()) isr.add(n.id());
      parts.add(obj("partition", p.partition(), "leader", p.leader() == null ? null : p.leader().id(), "replicas", replicas, "isr", isr));
    }
    return obj("name", d.name(), "internal", d.isInternal(), "topicId", String.valueOf(d.topicId()), "partitions", parts);
  }

  static Map<String, Object> configMap(Config config, boolean onlyNonDefault) {
    Map<String, Object> m = new TreeMap<>();
    for (ConfigEntry e : config.entries()) {
      if (onlyNonDefault && e.source() == ConfigEntry.ConfigSource.DEFAULT_CONFIG) continue;
      m.put(e.name(), obj("value", e.value(), "source", e.source(), "readOnly", e.isReadOnly(), "sensitive", e.isSensitive(),
          "type", e.type()));
    }
    return m;
  }

  static Map<String, Object> describeConfigs(Admin admin, ConfigResource resource, boolean synonyms) throws Exception {
    Config c = admin.describeConfigs(List.of(resource), new DescribeConfigsOptions().includeSynonyms(synonyms).includeDocumentation(false))
        .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(resource);
    return configMap(c, false);
  }

  static Map<String, Object> listOffsets(Admin admin, Map<TopicPartition, OffsetSpec> specs) throws Exception {
    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> r = admin.listOffsets(specs).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    Map<String, Object> m = new TreeMap<>();
    for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> e : r.entrySet()) {
      ListOffsetsResult.ListOffsetsResultInfo info = e.getValue();
      m.put(e.getKey().toString(), obj("offset", info.offset(), "timestamp", info.timestamp(), "leaderEpoch", info.leaderEpoch().orElse(null)));
    }
    return m;
  }

  static Map<String, Object> oneOffset(Admin admin, TopicPartition tp, OffsetSpec spec) throws Exception {
    ListOffsetsResult.ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    return obj("offset", info.offset(), "timestamp", info.timestamp(), "leaderEpoch", info.leaderEpoch().orElse(null));
  }

  /** ElectLeaders' per-partition outcome ("ok" or the exception's simple name), for partitions of topics starting with `prefix`. */
  static Map<String, Object> electLeaders(Admin admin, ElectionType type, Set<TopicPartition> partitions, String prefix) throws Exception {
    Map<TopicPartition, Optional<Throwable>> r = admin.electLeaders(type, partitions).partitions().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    Map<String, Object> m = new TreeMap<>();
    for (Map.Entry<TopicPartition, Optional<Throwable>> e : r.entrySet()) {
      if (!e.getKey().topic().startsWith(prefix)) continue;
      m.put(e.getKey().toString(), e.getValue().map((t) -> (Object) t.getClass().getSimpleName()).orElse("ok"));
    }
    return m;
  }

  static List<String> listTopicNames(Admin admin) throws Exception {
    List<String> names = new ArrayList<>();
    for (TopicListing l : admin.listTopics().listings().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)) names.add(l.name() + (l.isInternal() ? " (internal)" : ""));
    names.sort(null);
    return names;
  }

  static void step(String name, Callable<Object> f) {
    long started = System.nanoTime();
    Map<String, Object> result = attempt(f);
    emit(obj("cmd", "admin", "step", name, "result", result, "elapsedMs", (System.nanoTime() - started) / 1_000_000));
  }

  /**
   * The AdminClient walk-through, one JSON line per step ({"step", "result": {"ok"} or {"error",
   * "message"}}); the node test checks every value. Topics: P-a (3 partitions, configs), P-b (1
   * partition); records with chosen CreateTime timestamps go to P-a partition 0 for ListOffsets
   * and DeleteRecords.
   */
  static void admin(Args args) throws Exception {
    String prefix = args.get("prefix");
    String a = prefix + "-a";
    String b = prefix + "-b";
    long baseTs = Long.parseLong(args.get("base-timestamp"));
    int nodeId = Integer.parseInt(args.get("node-id", "0"));
    try (Admin admin = newAdmin(args)) {
      step("describeCluster", () -> {
        DescribeClusterResult r = admin.describeCluster();
        List<Object> nodes = new ArrayList<>();
        for (Node n : r.nodes().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)) nodes.add(obj("id", n.id(), "host", n.host(), "port", n.port(), "rack", n.rack()));
        Node controller = r.controller().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return obj("clusterId", r.clusterId().get(TIMEOUT_MS, TimeUnit.MILLISECONDS), "controller", controller == null ? null : controller.id(), "nodes", nodes);
      });
      step("createTopics", () -> {
        Map<String, String> configs = new TreeMap<>();
        configs.put("retention.ms", "3600000");
        configs.put("max.message.bytes", "200000");
        configs.put("cleanup.policy", "delete");
        configs.put("segment.bytes", "1048576");
        CreateTopicsResult r = admin.createTopics(List.of(new NewTopic(a, 3, (short) 1).configs(configs), new NewTopic(b, Optional.empty(), Optional.empty())));
        r.all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        Map<String, Object> out = new TreeMap<>();
        for (String t : List.of(a, b)) {
          out.put(t, obj("partitions", r.numPartitions(t).get(), "replicationFactor", r.replicationFactor(t).get(), "topicId", String.valueOf(r.topicId(t).get()),
              "configs", configMap(r.config(t).get(), true)));
        }
        return out;
      });
      step("createTopics existing", () -> admin.createTopics(List.of(new NewTopic(a, 1, (short) 1))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
      step("createTopics bad name", () -> admin.createTopics(List.of(new NewTopic(prefix + " bad name!", 1, (short) 1))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
      step("createTopics bad config", () -> admin.createTopics(List.of(new NewTopic(prefix + "-c", 1, (short) 1).configs(Map.of("retention.ms", "soon")))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
      step("createTopics validateOnly", () -> {
        admin.createTopics(List.of(new NewTopic(prefix + "-v", 2, (short) 1)), new org.apache.kafka.clients.admin.CreateTopicsOptions().validateOnly(true)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return listTopicNames(admin).contains(prefix + "-v");
      });
      step("listTopics", () -> listTopicNames(admin));
      step("describeTopics", () -> {
        Map<String, TopicDescription> d = admin.describeTopics(List.of(a, b)).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return obj(a, describeTopic(d.get(a)), b, describeTopic(d.get(b)));
      });
      step("describeTopics unknown", () -> admin.describeTopics(List.of(prefix + "-missing")).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
      ConfigResource topicA = new ConfigResource(ConfigResource.Type.TOPIC, a);
      step("describeConfigs topic", () -> describeConfigs(admin, topicA, false));
      step("describeConfigs broker", () -> describeConfigs(admin, new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(nodeId)), false));
      step("incrementalAlterConfigs", () -> {
        Map<ConfigResource, Collection<AlterConfigOp>> ops = Map.of(topicA, List.of(
            new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
            new AlterConfigOp(new ConfigEntry("max.message.bytes", null), AlterConfigOp.OpType.DELETE),
            new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.APPEND),
            new AlterConfigOp(new ConfigEntry("flush.messages", "1000"), AlterConfigOp.OpType.SET)));
        admin.incrementalAlterConfigs(ops).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return describeConfigs(admin, topicA, false);
      });
      step("incrementalAlterConfigs subtract", () -> {
        admin.incrementalAlterConfigs(Map.of(topicA, List.of(new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SUBTRACT))))
            .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return describeConfigs(admin, topicA, false);
      });
      step("incrementalAlterConfigs invalid", () -> admin.incrementalAlterConfigs(Map.of(topicA, List.of(
          new AlterConfigOp(new ConfigEntry("retention.ms", "later"), AlterConfigOp.OpType.SET)))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
      step("createPartitions", () -> {
        admin.createPartitions(Map.of(a, NewPartitions.increaseTo(5))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return describeTopic(admin.describeTopics(List.of(a)).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(a));
      });
      step("createPartitions decrease", () -> admin.createPartitions(Map.of(a, NewPartitions.increaseTo(2))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));

      // Ten records on P-a partition 0 with CreateTime timestamps baseTs + TS_STEPS[i] seconds:
      // not monotonic, so the max timestamp is at offset 6, not the last one.
      long[] steps = {0, 1, 2, 3, 4, 5, 9, 6, 7, 8};
      step("produce timestamps", () -> {
        List<Long> offsets = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(args.get("bootstrap")))) {
          for (int i = 0; i < steps.length; i++) {
            // One batch per record (get() before the next send): ListOffsets by time then works
            // per batch as well as per record.
            RecordMetadata md = producer.send(new ProducerRecord<>(a, 0, baseTs + steps[i] * 1000, null, ("ts-" + i).getBytes(StandardCharsets.UTF_8)))
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            offsets.add(md.offset());
          }
          producer.send(new ProducerRecord<>(a, 1, baseTs, null, "p1".getBytes(StandardCharsets.UTF_8))).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        return offsets;
      });
      TopicPartition a0 = new TopicPartition(a, 0);
      TopicPartition a1 = new TopicPartition(a, 1);
      TopicPartition a4 = new TopicPartition(a, 4);
      step("listOffsets earliest", () -> listOffsets(admin, Map.of(a0, OffsetSpec.earliest(), a1, OffsetSpec.earliest(), a4, OffsetSpec.earliest())));
      step("listOffsets latest", () -> listOffsets(admin, Map.of(a0, OffsetSpec.latest(), a1, OffsetSpec.latest(), a4, OffsetSpec.latest())));
      step("listOffsets maxTimestamp", () -> listOffsets(admin, Map.of(a0, OffsetSpec.maxTimestamp(), a1, OffsetSpec.maxTimestamp(), a4, OffsetSpec.maxTimestamp())));
      step("listOffsets forTimestamp", () -> {
        Map<String, Object> m = new LinkedHashMap<>();
        for (long t : new long[] {baseTs - 1000, baseTs, baseTs + 2500, baseTs + 5500, baseTs + 8000, baseTs + 9000, baseTs + 9001}) {
          m.put(String.valueOf(t - baseTs), oneOffset(admin, a0, OffsetSpec.forTimestamp(t)));
        }
        m.put("empty partition", oneOffset(admin, a4, OffsetSpec.forTimestamp(baseTs)));
        return m;
      });
      step("deleteRecords", () -> {
        long low = admin.deleteRecords(Map.of(a0, RecordsToDelete.beforeOffset(4))).lowWatermarks().get(a0).get(TIMEOUT_MS, TimeUnit.MILLISECONDS).lowWatermark();
        return obj("lowWatermark", low, "earliest", oneOffset(admin, a0, OffsetSpec.earliest()), "latest", oneOffset(admin, a0, OffsetSpec.latest()),
            "forTimestamp0", oneOffset(admin, a0, OffsetSpec.forTimestamp(baseTs)));
      });
      step("deleteRecords past high watermark", () -> admin.deleteRecords(Map.of(a0, RecordsToDelete.beforeOffset(11))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
      step("consume after deleteRecords", () -> {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps(args.get("bootstrap")))) {
          consumer.assign(List.of(a0));
          consumer.seekToBeginning(List.of(a0));
          List<Object> got = new ArrayList<>();
          long deadline = System.currentTimeMillis() + TIMEOUT_MS;
          while (consumer.position(a0) < 10 && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
              got.add(obj("offset", r.offset(), "timestamp", r.timestamp() - baseTs, "timestampType", r.timestampType().name, "value", new String(r.value(), StandardCharsets.UTF_8)));
            }
          }
          return got;
        }
      });
      step("describeLogDirs", () -> {
        Map<Integer, Map<String, LogDirDescription>> all = admin.describeLogDirs(List.of(nodeId)).allDescriptions().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<Integer, Map<String, LogDirDescription>> byBroker : all.entrySet()) {
          Map<String, Object> dirs = new TreeMap<>();
          for (Map.Entry<String, LogDirDescription> dir : byBroker.getValue().entrySet()) {
            LogDirDescription d = dir.getValue();
            Map<String, Object> replicas = new TreeMap<>();
            for (Map.Entry<TopicPartition, ReplicaInfo> r : d.replicaInfos().entrySet()) {
              if (!r.getKey().topic().startsWith(prefix)) continue;
              replicas.put(r.getKey().toString(), obj("size", r.getValue().size(), "offsetLag", r.getValue().offsetLag(), "isFuture", r.getValue().isFuture()));
            }
            dirs.put(dir.getKey(), obj("error", d.error() == null ? null : d.error().getClass().getSimpleName(),
                "totalBytes", d.totalBytes().isPresent() ? d.totalBytes().getAsLong() : null,
                "usableBytes", d.usableBytes().isPresent() ? d.usableBytes().getAsLong() : null, "replicas", replicas));
          }
          out.put(String.valueOf(byBroker.getKey()), dirs);
        }
        return out;
      });
      // cleanup.policy=compact: Kafka refuses a record without a key (INVALID_RECORD).
      step("compacted topic", () -> {
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, b),
            List.of(new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET)))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return null;
      });
      try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(args.get("bootstrap")))) {
        step("compacted topic keyless record", () -> producer.send(new ProducerRecord<>(b, 0, null, "no key".getBytes(StandardCharsets.UTF_8)))
            .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).offset());
        step("compacted topic keyed record", () -> producer.send(new ProducerRecord<>(b, 0, "key".getBytes(StandardCharsets.UTF_8), "keyed".getBytes(StandardCharsets.UTF_8)))
            .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).offset());
      }
      // ElectLeaders: every partition already led by its preferred (only) replica.
      step("electLeaders preferred", () -> electLeaders(admin, ElectionType.PREFERRED, Set.of(a0, a1, new TopicPartition(a, 9), new TopicPartition(prefix + "-missing", 0)), prefix));
      step("electLeaders unclean", () -> electLeaders(admin, ElectionType.UNCLEAN, Set.of(a0), prefix));
      step("electLeaders all", () -> electLeaders(admin, ElectionType.PREFERRED, null, prefix));
      step("deleteTopics", () -> {
        admin.deleteTopics(List.of(a, b)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return listTopicNames(admin);
      });
      step("describeTopics deleted", () -> admin.describeTopics(List.of(a)).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
      step("deleteTopics unknown", () -> admin.deleteTopics(List.of(prefix + "-missing")).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
    }
  }
}
