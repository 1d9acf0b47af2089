// Run by transportShape.test.ts with plain Node from the repository root, so it loads the built
// packages (each package.json's `exports`, i.e. dist/) as an application would, without jest's
// mapping to the TypeScript sources. Prints one JSON report of every transport's public shape;
// nothing here connects anywhere: brokers are unreachable ports and every consumer is closed.
const rabbitmq = require('@ferry/rabbitmq');
const kafka = require('@ferry/kafka');
const sqs = require('@ferry/sqs');
const testing = require('@ferry/testing');

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const acceptor = {
  maxPayloadBytes: 1024,
  acceptMany: async (inputs) => inputs.map(() => ({ kind: 'accepted', id: 'x' })),
};
const PROBE = 'zzUnknownProbe';

/** The keys an options check knows, read from the FERRY_CONFIG_INVALID it throws for an unknown one. */
function knownKeys(make) {
  try {
    make({ [PROBE]: 1 });
  } catch (error) {
    const known = /\(known: ([^)]*)\)$/.exec(String(error && error.message));
    if (error && error.code === 'FERRY_CONFIG_INVALID' && error.option === PROBE && known) {
      return known[1].split(', ').sort();
    }
    return { unexpected: String(error && error.message) };
  }
  return { unexpected: 'no error for an unknown key' };
}

async function attachShape(attach, options) {
  const handle = attach(acceptor, options);
  const shape = {
    returnsThenable: typeof (handle && handle.then) === 'function',
    ready: typeof handle.ready,
    check: typeof handle.check,
    close: typeof handle.close,
  };
  // Nothing is reachable: the readiness probe is down, naming the consumer.
  shape.checkBeforeAttach = await handle.check().then(
    () => 'resolved',
    (error) => `${error.name} ${error.code}`,
  );
  const first = handle.close();
  shape.closeSharesPromise = handle.close() === first;
  await first;
  shape.readyAfterClose = await handle.ready().then(
    () => 'resolved',
    (error) => error.code,
  );
  shape.checkAfterClose = await handle.check().then(
    () => 'resolved',
    (error) => error.code,
  );
  return shape;
}

function publisherShape(Publisher, connection) {
  const source = Function.prototype.toString.call(Publisher);
  return {
    isClass: /^class\b/.test(source),
    arity: Publisher.length,
    keys: knownKeys((extra) => new Publisher(connection, extra)),
  };
}

async function main() {
  const transports = {};

  const rabbitConnection = { url: 'amqp://127.0.0.1:1', logger: silent };
  const rabbitConsumer = { connection: rabbitConnection, queue: 'q', consumer: 'orders' };
  transports.rabbitmq = {
    exports: Object.keys(rabbitmq).sort(),
    attach: await attachShape(rabbitmq.attachRabbitConsumer, rabbitConsumer),
    consumerKeys: knownKeys((extra) =>
      rabbitmq.attachRabbitConsumer(acceptor, { ...rabbitConsumer, ...extra }),
    ),
    connectionKeys: knownKeys((extra) => new rabbitmq.RabbitConnection({ ...rabbitConnection, ...extra })),
    publisher: publisherShape(rabbitmq.RabbitPublisher, rabbitConnection),
  };

  const kafkaConnection = () =>
    new kafka.KafkaConnection({ brokers: ['127.0.0.1:1'], kafkaLogLevel: 'nothing', logger: silent });
  const kafkaConsumer = () => ({
    connection: kafkaConnection(),
    topic: 't',
    groupId: 'g',
    consumer: 'orders',
  });
  transports.kafka = {
    exports: Object.keys(kafka).sort(),
    attach: await attachShape(kafka.attachKafkaConsumer, kafkaConsumer()),
    consumerKeys: knownKeys((extra) => kafka.attachKafkaConsumer(acceptor, { ...kafkaConsumer(), ...extra })),
    connectionKeys: knownKeys((extra) => new kafka.KafkaConnection({ brokers: ['127.0.0.1:1'], ...extra })),
    publisher: publisherShape(kafka.KafkaPublisher, kafkaConnection()),
  };

  const sqsConnection = new sqs.SqsConnection({
    endpoint: 'http://127.0.0.1:1',
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    maxAttempts: 1,
    logger: silent,
  });
  const sqsConsumer = { connection: sqsConnection, queueUrl: 'q', consumer: 'orders' };
  transports.sqs = {
    exports: Object.keys(sqs).sort(),
    attach: await attachShape(sqs.attachSqsConsumer, sqsConsumer),
    consumerKeys: knownKeys((extra) => sqs.attachSqsConsumer(acceptor, { ...sqsConsumer, ...extra })),
    connectionKeys: knownKeys((extra) => new sqs.SqsConnection(extra)),
    publisher: publisherShape(sqs.SqsPublisher, sqsConnection),
  };
  await sqsConnection.close();

  const memoryConsumer = { broker: new testing.InMemoryBroker(), queue: 'q', consumer: 'orders' };
  transports.memory = {
    exports: Object.keys(testing).sort(),
    attach: await attachShape(testing.attachInMemoryConsumer, memoryConsumer),
    consumerKeys: knownKeys((extra) =>
      testing.attachInMemoryConsumer(acceptor, { ...memoryConsumer, ...extra }),
    ),
  };

  process.stdout.write(JSON.stringify(transports));
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error && error.stack}\n`);
    process.exit(1);
  },
);
