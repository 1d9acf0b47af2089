import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Test support: produces records with the official Java client (a client ferry did not write).
 * Arguments: bootstrap servers, topic, compression type. Standard input: one record per line,
 * tab-separated: mode (plain, commit or abort: the last two in a transaction of their own), key,
 * value, then header name=value pairs. "\N" stands for null (key, value or a header value); a
 * header name may repeat.
 */
public class ForeignProducer {
  private static byte[] bytes(String text) {
    return text.equals("\\N") ? null : text.getBytes(StandardCharsets.UTF_8);
  }

  private static KafkaProducer<byte[], byte[]> producer(String servers, String compression, String transactionalId) {
    Properties props = new Properties();
    props.put("bootstrap.servers", servers);
    props.put("key.serializer", ByteArraySerializer.class.getName());
    props.put("value.serializer", ByteArraySerializer.class.getName());
    props.put("compression.type", compression);
    props.put("request.timeout.ms", "20000");
    props.put("delivery.timeout.ms", "30000");
    props.put("max.block.ms", "30000");
    if (transactionalId != null) props.put("transactional.id", transactionalId);
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
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isEmpty()) continue;
        String[] fields = line.split("\t", -1);
        ProducerRecord<byte[], byte[]> record =
            new ProducerRecord<>(topic, 0, bytes(fields[1]), bytes(fields[2]));
        for (int i = 3; i < fields.length; i++) {
          int eq = fields[i].indexOf('=');
          record.headers().add(fields[i].substring(0, eq), bytes(fields[i].substring(eq + 1)));
        }
        if (fields[0].equals("plain")) {
          plain.send(record).get();
          continue;
        }
        if (!initialized) {
          transactional.initTransactions();
          initialized = true;
        }
        transactional.beginTransaction();
        transactional.send(record).get();
        if (fields[0].equals("commit")) transactional.commitTransaction();
        else transactional.abortTransaction();
      }
    }
  }
}
