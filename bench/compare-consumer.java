// Assign-based consumer benchmark for bench/compare (run with Java's source launcher:
// java -cp '<kafka lib>/*' bench/compare-consumer.java BOOTSTRAP TOPIC NUM_RECORDS [TIMEOUT_MS]).
// Kafka's ConsumerPerformance subscribes with a group, which Skiff does not serve yet (consumer-groups
// issue), so this reads partition 0 by assignment with the same consumer settings ConsumerPerformance
// uses (max.partition.fetch.bytes 1 MiB, receive.buffer.bytes 2 MiB, byte-array deserializers) and prints
// ConsumerPerformance's header and summary line, counting key + value bytes as it does
// (rebalance.time.ms is 0: there is no group; the fetch.* columns equal the totals).
import java.time.Duration;
import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class CompareConsumer {
  public static void main(String[] args) {
    String bootstrap = args[0];
    String topic = args[1];
    long want = Long.parseLong(args[2]);
    long idleTimeoutMs = args.length > 3 ? Long.parseLong(args[3]) : 10_000L;
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
    p.put("enable.auto.commit", "false");
    p.put("auto.offset.reset", "earliest");
    p.put("max.partition.fetch.bytes", "1048576");
    p.put("receive.buffer.bytes", "2097152");
    p.put("client.id", "compare-consumer");
    long records = 0;
    long bytes = 0;
    long start = System.currentTimeMillis();
    long end;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long lastRecords = System.currentTimeMillis();
      while (records < want) {
        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(100));
        long now = System.currentTimeMillis();
        if (batch.isEmpty()) {
          if (now - lastRecords > idleTimeoutMs) break;
          continue;
        }
        lastRecords = now;
        for (ConsumerRecord<byte[], byte[]> r : batch) {
          records++;
          if (r.key() != null) bytes += r.key().length;
          if (r.value() != null) bytes += r.value().length;
        }
      }
      end = System.currentTimeMillis();
    }
    if (records < want) System.err.println("WARNING: Exiting before consuming the expected number of records: " + records + " of " + want);
    double elapsedS = Math.max(1, end - start) / 1000.0;
    double mb = bytes / (1024.0 * 1024.0);
    SimpleDateFormat fmt = new SimpleDateFormat("yyyy-MM-dd HH:mm:ss:SSS");
    System.out.println("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec");
    System.out.printf("%s, %s, %.4f, %.4f, %d, %.4f, 0, %d, %.4f, %.4f%n", fmt.format(new Date(start)), fmt.format(new Date(end)), mb,
        mb / elapsedS, records, records / elapsedS, end - start, mb / elapsedS, records / elapsedS);
    System.exit(records < want ? 1 : 0);
  }
}
