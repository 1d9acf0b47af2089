export {
  KafkaConnection,
  resolveConnectionOptions,
  type ConnectionOptions,
  type KafkaLogLevel,
} from './connection';
export type { KafkaClientName } from './client/types';
export { KafkaPublisher } from './publisher';
export {
  resolvePublisherOptions,
  type PublisherOptions,
  type ResolvedPublisherOptions,
} from './publisherOptions';
export { attachKafkaConsumer, type KafkaInboxConsumer } from './consumer';
export { VALUE_DROPPED_HEADER } from './deadLetter';
export { ensureTopics, deleteTopics, deleteGroups, type TopicSpec } from './topology';
export { DEFAULTS, resolveConsumerOptions, type ConsumerOptions, type TombstonePolicy } from './options';
export { backoffDelay, type BackoffPolicy } from '@ferry/core/transport';
export { REJECT_REASONS, PERMANENT_KAFKA_ERRORS, classifyKafkaError, type RejectReason } from './errors';
export { topicPartitionOffsetIdentity, type IdentityExtractor, type InboundRecord } from './wire';
export { UNDECODABLE_BATCH, UndecodableBatchError } from './codecs/decoders';
