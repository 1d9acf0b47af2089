import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.impl.LongStringHelper;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

/**
 * Publishes the hostile matrix of test/java-client.test.ts with the official RabbitMQ Java client
 * (com.rabbitmq:amqp-client), which can put every AMQP field-table type in a header, as Java
 * producers (Spring AMQP, the Java client) do. Run with the source launcher:
 *
 *   java -cp "<amqp-client jars>/*" Publisher.java <amqp uri> <queue> <run> <seed> <maxPayloadBytes> <set>
 *
 * Every message goes through the default exchange to <queue>, with publisher confirms (the
 * process exits 0 only once the broker confirmed them all) and carries `x-case: <name>`. Unless a
 * case says otherwise its identity is the header x-ferry-message-id = "<run>-<name>" (a String,
 * sent as a long string 'S'), its content type application/json and its body {"case":"<name>"}.
 * <seed> makes numeric ids unique to the run; <set> names the cases to send ("matrix" or
 * "neighbour": one delivery dead-lettered, one accepted); one line per case is printed: "sent <name>".
 */
public class Publisher {
  private static final String ID = "x-ferry-message-id";
  private static final String TENANT = "x-ferry-tenant-id";
  private static final String TYPE = "x-ferry-event-type";
  /** Marks a header the case leaves out (a null value is sent as the AMQP void 'V'). */
  private static final Object ABSENT = new Object();

  private final Channel channel;
  private final String queue;
  private final String run;
  private final long seed;

  private Publisher(Channel channel, String queue, String run, long seed) {
    this.channel = channel;
    this.queue = queue;
    this.run = run;
    this.seed = seed;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 6) {
      System.err.println("usage: Publisher <uri> <queue> <run> <seed> <maxPayloadBytes> <set>");
      System.exit(2);
    }
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(args[0]);
    factory.setConnectionTimeout(10_000);
    try (Connection connection = factory.newConnection("ferry-test-java-publisher")) {
      Channel channel = connection.createChannel();
      channel.confirmSelect();
      Publisher publisher = new Publisher(channel, args[1], args[2], Long.parseLong(args[3]));
      int maxPayloadBytes = Integer.parseInt(args[4]);
      switch (args[5]) {
        case "matrix":
          publisher.headerTypes();
          publisher.ferryHeaders();
          publisher.properties();
          publisher.bodies(maxPayloadBytes);
          break;
        case "neighbour":
          publisher.send("neighbour-dead", headers(), json(), "{not json".getBytes(StandardCharsets.UTF_8), false);
          publisher.send("neighbour", headers(), json(), body("neighbour"), false);
          break;
        default:
          System.err.println("unknown set " + args[5]);
          System.exit(2);
      }
      channel.waitForConfirmsOrDie(30_000);
    }
  }

  /** Every field-table type the Java client writes, on an application header `x-h`. */
  private void headerTypes() throws Exception {
    header("h-string", "Zürich");
    header("h-bytes", "Zürich".getBytes(StandardCharsets.UTF_8));
    header("h-bytes-binary", new byte[] {0x01, (byte) 0xff, 0x00});
    header("h-integer", Integer.MIN_VALUE);
    header("h-long", 1_234_567_890_123L);
    header("h-long-unsafe", 9_007_199_254_740_993L);
    header("h-long-max", Long.MAX_VALUE);
    header("h-short", (short) -7);
    header("h-byte", (byte) -1);
    header("h-float", 1.5f);
    header("h-double", 2.25d);
    header("h-decimal", new BigDecimal("-12.34"));
    header("h-date", new Date(1_700_000_000_000L));
    header("h-date-far", new Date(Long.MAX_VALUE));
    header("h-map", map("a", 1, "b", "two", "c", map("d", 2.5d)));
    header("h-list", Arrays.asList(1, "two", 2.5d, null));
    header("h-boolean", true);
    header("h-null", null);
    header("h-long-string", "L".repeat(20_000));
    header("h-latin1", LongStringHelper.asLongString(new byte[] {0x63, 0x61, 0x66, (byte) 0xe9}));
    Map<String, Object> many = headers();
    for (int i = 0; i < 100; i++) many.put("x-many-" + i, i);
    send("h-many", many, json(), body("h-many"), false);
  }

  /** ferry's own identity, tenant and type headers carried as every type. */
  private void ferryHeaders() throws Exception {
    // Identity: what ferry can read as text, and what it cannot (never replaced by a fallback).
    id("id-bytes", (run + "-id-bytes-é").getBytes(StandardCharsets.UTF_8), null);
    id("id-integer", (int) (seed % 1_000_000) + 1, null);
    id("id-long", seed * 1_000 + 1, null);
    id("id-short", (short) 7, null);
    id("id-long-unsafe-a", 9_007_199_254_740_993L, null);
    id("id-long-unsafe-b", 9_007_199_254_740_992L, null);
    id("id-double", 1.5d, run + "-id-double-amqp");
    id("id-boolean", true, run + "-id-boolean-amqp");
    id("id-decimal", new BigDecimal("1.5"), run + "-id-decimal-amqp");
    id("id-date", new Date(1_700_000_000_000L), run + "-id-date-amqp");
    id("id-map", map("id", run + "-id-map-inner"), run + "-id-map-amqp");
    id("id-list", Arrays.asList(run + "-id-list-inner"), run + "-id-list-amqp");
    id("id-null", null, run + "-id-null-amqp");
    id("id-empty", "", run + "-id-empty-amqp");
    id("id-long-string", "I".repeat(10_000), null);
    id("id-long-string-255", "I".repeat(255 - run.length() - 1) + "-" + run, null);
    // The same id but for a byte that is not UTF-8, as a long string 'S' (LongString of bytes).
    id("id-latin1-fe", LongStringHelper.asLongString(concat(run + "-x", 0xfe)), null);
    id("id-latin1-ff", LongStringHelper.asLongString(concat(run + "-x", 0xff)), null);
    id("id-bytes-ff", concat(run + "-y", 0xff), null);
    // Two messages with one body whose ids differ: read as one id, the second would be lost as a duplicate.
    same("same-latin1-fe", LongStringHelper.asLongString(concat(run + "-z", 0xfe)));
    same("same-latin1-ff", LongStringHelper.asLongString(concat(run + "-z", 0xff)));
    same("same-long-a", 9_007_199_254_740_995L);
    same("same-long-b", 9_007_199_254_740_996L);

    tenant("tenant-string", "acme");
    tenant("tenant-bytes", "acme".getBytes(StandardCharsets.UTF_8));
    tenant("tenant-integer", 42);
    tenant("tenant-null", null);
    tenant("tenant-map", map("tenant", "acme"));
    tenant("tenant-list", Arrays.asList("acme"));
    tenant("tenant-decimal", new BigDecimal("4.2"));
    tenant("tenant-boolean", false);
    tenant("tenant-long-unsafe", -9_007_199_254_740_993L);
    tenant("tenant-latin1", LongStringHelper.asLongString(concat("acm", 0xe9)));
    tenant("tenant-long-string", "t".repeat(5_000));

    type("type-string", "order.placed");
    type("type-bytes", "order.placed".getBytes(StandardCharsets.UTF_8));
    type("type-map", map("type", "order.placed"));
    type("type-date", new Date(1_700_000_000_000L));
  }

  /** The AMQP basic properties a Java or Spring producer sets. */
  private void properties() throws Exception {
    Map<String, Object> noId = headers();
    noId.put(ID, ABSENT);
    send("p-message-id", copy(noId), json().messageId(run + "-p-message-id"), body("p-message-id"), false);
    send("p-message-id-255", copy(noId), json().messageId("M".repeat(254 - run.length()) + "-" + run), body("p-message-id-255"), false);
    send("p-message-id-empty", copy(noId), json().messageId(""), body("p-message-id-empty"), false);
    send("p-no-identity", copy(noId), json(), body("p-no-identity"), false);
    send("p-content-type-params", headers(), props().contentType("application/json; charset=UTF-8"), body("p-content-type-params"), false);
    send("p-content-type-case", headers(), props().contentType("Application/JSON"), body("p-content-type-case"), false);
    send("p-content-type-empty", headers(), props().contentType(""), body("p-content-type-empty"), false);
    send("p-content-type-absent", headers(), props(), body("p-content-type-absent"), false);
    send("p-content-type-text", headers(), props().contentType("text/plain"), body("p-content-type-text"), false);
    send("p-encoding-utf8", headers(), json().contentEncoding("UTF-8"), body("p-encoding-utf8"), false);
    send("p-encoding-gzip", headers(), json().contentEncoding("gzip"), gzip(body("p-encoding-gzip")), false);
    send("p-encoding-unknown", headers(), json().contentEncoding("x-unknown"), body("p-encoding-unknown"), false);
    send("p-delivery-mode-1", headers(), json().deliveryMode(1), body("p-delivery-mode-1"), false);
    send("p-priority", headers(), json().priority(9), body("p-priority"), false);
    send("p-expiration", headers(), json().expiration("600000"), body("p-expiration"), false);
    send("p-timestamp", headers(), json().timestamp(new Date(1_700_000_000_000L)), body("p-timestamp"), false);
    send("p-timestamp-far", headers(), json().timestamp(new Date(Long.MAX_VALUE)), body("p-timestamp-far"), false);
    send("p-correlation-id", headers(), json().correlationId("corr-1"), body("p-correlation-id"), false);
    send("p-type", headers(), json().type("order.placed"), body("p-type"), false);
    send("p-app-id", headers(), json().appId("billing-java"), body("p-app-id"), false);
    send("p-user-id", headers(), json().userId("guest"), body("p-user-id"), false);
    send("p-reply-to", headers(), json().replyTo("replies"), body("p-reply-to"), false);
    send("p-mandatory", headers(), json(), body("p-mandatory"), true);
    // Spring AMQP's Jackson2JsonMessageConverter: content type, encoding and its type-id header.
    Map<String, Object> spring = headers();
    spring.put("__TypeId__", "com.example.OrderPlaced");
    send("p-spring", spring, json().contentEncoding("UTF-8").priority(0).deliveryMode(2), body("p-spring"), false);
  }

  private void bodies(int maxPayloadBytes) throws Exception {
    send("b-empty", headers(), json(), new byte[0], false);
    send("b-not-utf8", headers(), json(), new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xff, '"', '}'}, false);
    send("b-array", headers(), json(), "[1,2]".getBytes(StandardCharsets.UTF_8), false);
    send("b-string", headers(), json(), "\"text\"".getBytes(StandardCharsets.UTF_8), false);
    send("b-null", headers(), json(), "null".getBytes(StandardCharsets.UTF_8), false);
    send("b-not-json", headers(), json(), "{not json".getBytes(StandardCharsets.UTF_8), false);
    String pad = "{\"p\":\"" + "x".repeat(maxPayloadBytes) + "\"}";
    send("b-too-large", headers(), json(), pad.getBytes(StandardCharsets.UTF_8), false);
    // Dead-lettered with every header type and property: its copy must encode them all again.
    Map<String, Object> every = headers();
    every.put("x-string", "Zürich");
    every.put("x-bytes", new byte[] {0x01, (byte) 0xff, 0x00});
    every.put("x-integer", Integer.MIN_VALUE);
    every.put("x-long-max", Long.MAX_VALUE);
    every.put("x-long-min", Long.MIN_VALUE);
    every.put("x-short", (short) -7);
    every.put("x-byte", (byte) -128);
    every.put("x-float", 1.5f);
    every.put("x-double", -2.25d);
    every.put("x-decimal", new BigDecimal("-21474.83648"));
    every.put("x-date", new Date(-1_000L));
    every.put("x-date-far", new Date(Long.MAX_VALUE));
    every.put("x-map", map("a", 1, "b", map("c", Arrays.asList(new BigDecimal("1.5"), new Date(0L), null))));
    every.put("x-list", Arrays.asList(true, (byte) 1, "two", new byte[] {3}));
    every.put("x-boolean", false);
    every.put("x-null", null);
    AMQP.BasicProperties.Builder all = json()
        .contentEncoding("UTF-8")
        .deliveryMode(1)
        .priority(255)
        .correlationId("c".repeat(255))
        .replyTo("replies")
        .expiration("600000")
        .messageId("")
        .timestamp(new Date(-1_000L))
        .type("t".repeat(255))
        .userId("guest")
        .appId("a".repeat(255));
    send("b-dead-every-type", every, all, "{not json".getBytes(StandardCharsets.UTF_8), false);
    // Headers beyond what amqplib can encode in a copy (its 64 KiB scratch buffer), then a
    // delivery dead-lettered after it, whose copy must be confirmed as itself.
    Map<String, Object> huge = headers();
    huge.put("x-huge", "H".repeat(70_000));
    send("b-huge-headers", huge, json(), body("b-huge-headers"), false);
    send("b-after-huge", headers(), json(), "{not json".getBytes(StandardCharsets.UTF_8), false);
  }

  private void header(String name, Object value) throws Exception {
    Map<String, Object> headers = headers();
    headers.put("x-h", value);
    send(name, headers, json(), body(name), false);
  }

  /** x-ferry-message-id = value; `amqpId` is the AMQP messageId, when set. */
  private void id(String name, Object value, String amqpId) throws Exception {
    Map<String, Object> headers = headers();
    headers.put(ID, value);
    AMQP.BasicProperties.Builder props = json();
    if (amqpId != null) props.messageId(amqpId);
    send(name, headers, props, body(name), false);
  }

  /** x-ferry-message-id = value, and the body every "same" case shares. */
  private void same(String name, Object value) throws Exception {
    Map<String, Object> headers = headers();
    headers.put(ID, value);
    send(name, headers, json(), body("same"), false);
  }

  private void tenant(String name, Object value) throws Exception {
    Map<String, Object> headers = headers();
    headers.put(TENANT, value);
    send(name, headers, json(), body(name), false);
  }

  private void type(String name, Object value) throws Exception {
    Map<String, Object> headers = headers();
    headers.put(TYPE, value);
    send(name, headers, json().type("amqp-type"), body(name), false);
  }

  private void send(String name, Map<String, Object> headers, AMQP.BasicProperties.Builder props, byte[] body, boolean mandatory)
      throws Exception {
    Map<String, Object> sent = new LinkedHashMap<>();
    sent.put("x-case", name);
    if (!headers.containsKey(ID)) sent.put(ID, run + "-" + name);
    for (Map.Entry<String, Object> entry : headers.entrySet()) {
      if (entry.getValue() != ABSENT) sent.put(entry.getKey(), entry.getValue());
    }
    channel.basicPublish("", queue, mandatory, props.headers(sent).build(), body);
    System.out.println("sent " + name);
  }

  private static Map<String, Object> headers() {
    return new LinkedHashMap<>();
  }

  private static Map<String, Object> copy(Map<String, Object> headers) {
    return new LinkedHashMap<>(headers);
  }

  private static Map<String, Object> map(Object... keysAndValues) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    return map;
  }

  private static AMQP.BasicProperties.Builder props() {
    return new AMQP.BasicProperties.Builder().deliveryMode(2);
  }

  private static AMQP.BasicProperties.Builder json() {
    return props().contentType("application/json");
  }

  private static byte[] body(String name) {
    return ("{\"case\":\"" + name + "\"}").getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] concat(String text, int last) {
    byte[] head = text.getBytes(StandardCharsets.UTF_8);
    byte[] all = Arrays.copyOf(head, head.length + 1);
    all[head.length] = (byte) last;
    return all;
  }

  private static byte[] gzip(byte[] bytes) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream zip = new GZIPOutputStream(out)) {
      zip.write(bytes);
    }
    return out.toByteArray();
  }
}
