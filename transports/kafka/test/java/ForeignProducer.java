import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Test support: produces records with the official Java client (a client ferry did not write).
 * Arguments: bootstrap servers, topic, compression type. Standard input: one record per line,
 * tab-separated: mode (plain: to partition 0; keyed: to the partition the client's default
 * partitioner chooses for its key; commit or abort: the last two in a transaction of their own;
 * open:SECONDS: in a transaction of its own left open, neither committed nor aborted, while the
 * later lines are sent, until SECONDS after it was sent, then aborted, before the run ends;
 * batched: sent at the end, after the other modes' records, all in one record batch; batched:CODEC:
 * the same, in a batch of its own per codec compressed with CODEC, the codecs in the order they
 * first appear), key,
 * value, then header name=value pairs. "\N" stands for null (key, value or a header value); a
 * header name may repeat. A line "@topic", tab, a topic name sends the records after it to that
 * topic instead (several topics' records in one run: one JVM start for all).
 */
public class ForeignProducer {
  private static byte[] bytes(String text) {
    return text.equals("\\N") ? null : text.getBytes(StandardCharsets.UTF_8);
  }

  private static KafkaProducer<byte[], byte[]> producer(String servers, String compression, String transactionalId) {
    return producer(servers, compression, transactionalId, null);
  }

  private static KafkaProducer<byte[], byte[]> producer(
      String servers, String compression, String transactionalId, String lingerMs) {
    Properties props = new Properties();
    props.put("bootstrap.servers", servers);
    props.put("key.serializer", ByteArraySerializer.class.getName());
    props.put("value.serializer", ByteArraySerializer.class.getName());
    props.put("compression.type", compression);
    props.put("request.timeout.ms", "20000");
    props.put("delivery.timeout.ms", "30000");
    props.put("max.block.ms", "30000");
    if (transactionalId != null) props.put("transactional.id", transactionalId);
    if (lingerMs != null) props.put("linger.ms", lingerMs);
    return new KafkaProducer<>(props);
  }

  public static void main(String[] args) throws Exception {
    String servers = args[0];
    String topic = args[1];
    String compression = args[2];
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (KafkaProducer<byte[], byte[]> plain = producer(servers, compression, null);
        KafkaProducer<byte[], byte[]> transactional =
            producer(servers, compression, "ferry-test-" + topic)) {
      boolean initialized = false;
      long abortOpenAt = -1;
      // Batched records wait in a producer of their own per codec (a long linger) until the end,
      // then go out as one record batch per request.
      Map<String, KafkaProducer<byte[], byte[]>> batchers = new LinkedHashMap<>();
      Map<String, List<Future<RecordMetadata>>> batched = new LinkedHashMap<>();
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isEmpty()) continue;
        String[] fields = line.split("\t", -1);
        if (fields[0].equals("@topic")) {
          topic = fields[1];
          continue;
        }
        // keyed: no partition given, so the client's default partitioner places it by its key.
        Integer partition = fields[0].equals("keyed") ? null : 0;
        ProducerRecord<byte[], byte[]> record =
            new ProducerRecord<>(topic, partition, bytes(fields[1]), bytes(fields[2]));
        for (int i = 3; i < fields.length; i++) {
          int eq = fields[i].indexOf('=');
          record.headers().add(fields[i].substring(0, eq), bytes(fields[i].substring(eq + 1)));
        }
        if (fields[0].equals("plain") || fields[0].equals("keyed")) {
          plain.send(record).get();
          continue;
        }
        if (fields[0].equals("batched") || fields[0].startsWith("batched:")) {
          String codec = fields[0].equals("batched") ? compression : fields[0].substring(8);
          KafkaProducer<byte[], byte[]> batcher =
              batchers.computeIfAbsent(codec, c -> producer(servers, c, null, "5000"));
          batched.computeIfAbsent(codec, c -> new ArrayList<>()).add(batcher.send(record));
          continue;
        }
        if (!initialized) {
          transactional.initTransactions();
          initialized = true;
        }
        if (abortOpenAt >= 0) throw new IllegalStateException("a transaction is open: " + fields[0]);
        transactional.beginTransaction();
        transactional.send(record).get();
        if (fields[0].startsWith("open:")) {
          abortOpenAt = System.currentTimeMillis() + 1000L * Long.parseLong(fields[0].substring(5));
        } else if (fields[0].equals("commit")) transactional.commitTransaction();
        else transactional.abortTransaction();
      }
      if (abortOpenAt >= 0) {
        Thread.sleep(Math.max(0, abortOpenAt - System.currentTimeMillis()));
        transactional.abortTransaction();
      }
      for (Map.Entry<String, KafkaProducer<byte[], byte[]>> entry : batchers.entrySet()) {
        entry.getValue().flush();
        for (Future<RecordMetadata> sent : batched.get(entry.getKey())) sent.get();
        entry.getValue().close();
      }
    }
  }
}
