export { KafkaConnection } from './connection';
export { KafkaPublisher, type PublisherOptions } from './publisher';
export { attachKafkaConsumer, type KafkaInboxConsumer } from './consumer';
export { ensureTopics, deleteTopics, deleteGroups, type TopicSpec } from './topology';
export {
  DEFAULTS,
  resolveConnectionOptions,
  resolveConsumerOptions,
  type ConnectionOptions,
  type ConsumerOptions,
  type KafkaConsumerEvent,
  type KafkaLogLevel,
} from './options';
export { backoffDelay, type BackoffPolicy } from '@ferry/core';
export { REJECT_REASONS, PERMANENT_KAFKA_ERRORS, classifyKafkaError, type RejectReason } from './errors';
export { topicPartitionOffsetIdentity, type IdentityExtractor, type InboundRecord } from './wire';
