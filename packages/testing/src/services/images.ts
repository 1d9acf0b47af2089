/**
 * The service versions ferry is tested with: the same images as the repository's
 * docker-compose.yml and the same Kafka / ElasticMQ versions scripts/services runs natively.
 */
export const SERVICE_IMAGES = {
  postgres: 'postgres:15',
  rabbitmq: 'rabbitmq:3.13',
  kafka: 'apache/kafka:4.4.0',
  sqs: 'softwaremill/elasticmq-native:1.7.1',
} as const;

export type FerryService = keyof typeof SERVICE_IMAGES;
export const ALL_SERVICES: readonly FerryService[] = ['postgres', 'rabbitmq', 'kafka', 'sqs'];

/**
 * A single-node KRaft broker listening (and advertised) on `port` inside and outside the
 * container, so clients and the broker itself reach it at 127.0.0.1:port.
 */
export function kafkaEnvironment(port: number): Record<string, string> {
  return {
    CLUSTER_ID: 'F3XiaFHlB_92bFOSuIFNPA',
    KAFKA_NODE_ID: '1',
    KAFKA_PROCESS_ROLES: 'broker,controller',
    KAFKA_CONTROLLER_QUORUM_VOTERS: '1@127.0.0.1:9093',
    KAFKA_LISTENERS: `PLAINTEXT://0.0.0.0:${port},CONTROLLER://127.0.0.1:9093`,
    KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`,
    KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
    KAFKA_INTER_BROKER_LISTENER_NAME: 'PLAINTEXT',
    KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    KAFKA_NUM_PARTITIONS: '1',
    KAFKA_DEFAULT_REPLICATION_FACTOR: '1',
    KAFKA_MIN_INSYNC_REPLICAS: '1',
    KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
    KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
    KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
    KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR: '1',
    KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR: '1',
    KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
    KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
    KAFKA_HEAP_OPTS: '-Xms256m -Xmx512m',
  };
}

/** ElasticMQ listening on `port` in the container, with queue URLs that say 127.0.0.1:port. */
export function elasticMqConfig(port: number): string {
  return [
    'include classpath("application.conf")',
    `node-address { protocol = "http", host = "127.0.0.1", port = ${port}, context-path = "" }`,
    `rest-sqs { enabled = true, bind-hostname = "0.0.0.0", bind-port = ${port}, sqs-limits = strict }`,
    'rest-stats { enabled = false }',
    'generate-node-address = false',
    'aws { region = "us-east-1", accountId = "000000000000" }',
    '',
  ].join('\n');
}
