import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A producer ferry did not write: the Java client (kafka-clients from the project's Kafka libs),
 * run with the source launcher by test/javaProducer.ts.
 *
 * Usage: java -cp "<libs>/*" CompressedProducer.java <bootstrap> <topic> <tenant> <count> <codec>...
 *
 * For each codec (Kafka's compression.type: none, gzip, snappy, lz4, zstd) one producer sends
 * <count> records to partition 0 in one batch (linger), then flushes and closes, so each codec's
 * records share one compressed record batch. Record i of codec c has key "c-i", value
 * {"codec":"c","n":i} and the headers x-ferry-message-id "c-i" and x-ferry-tenant-id <tenant>.
 */
public class CompressedProducer {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String topic = args[1];
    String tenant = args[2];
    int count = Integer.parseInt(args[3]);
    for (int c = 4; c < args.length; c++) {
      String codec = args[c];
      Properties props = new Properties();
      props.put("bootstrap.servers", bootstrap);
      props.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
      props.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
      props.put("compression.type", codec);
      props.put("acks", "all");
      props.put("linger.ms", "1000");
      props.put("max.block.ms", "20000");
      props.put("delivery.timeout.ms", "30000");
      props.put("request.timeout.ms", "20000");
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
        for (int i = 0; i < count; i++) {
          String id = codec + "-" + i;
          ProducerRecord<String, String> record =
              new ProducerRecord<>(topic, 0, id, "{\"codec\":\"" + codec + "\",\"n\":" + i + "}");
          record.headers().add("x-ferry-message-id", id.getBytes(StandardCharsets.UTF_8));
          record.headers().add("x-ferry-tenant-id", tenant.getBytes(StandardCharsets.UTF_8));
          producer.send(record);
        }
        producer.flush();
      }
    }
  }
}
