export { RabbitConnection, type ConnectionSetup } from './connection';
export { attachRabbitConsumer, type RabbitConsumer } from './consumer';
export {
  resolveConsumerOptions,
  type RabbitConsumerOptions,
  type ResolvedConsumerOptions,
} from './consumerOptions';
export { decodeDelivery, type DeliveryExtractor, type Decoded } from './delivery';
export { RabbitPublisher } from './publisher';
export { resolveRoute, encodeMessage } from './route';
export {
  resolvePublisherOptions,
  type RabbitPublisherOptions,
  type ResolvedPublisherOptions,
  type Route,
} from './publisherOptions';
export {
  declareWorkQueue,
  deleteWorkQueue,
  workQueueNames,
  type ExchangeType,
  type QueueBinding,
  type WorkQueueNames,
  type WorkQueueTopology,
} from './topology';
export { ChannelsExhaustedError, REJECT_REASONS, type RejectReason } from './errors';
export { retryTiers, tierFor, MAX_RETRY_TIERS } from './retryTiers';
export { backoffDelay, type BackoffPolicy } from '@ferry/core/transport';
export { DEFAULTS, resolveConnectionOptions, type ConnectionOptions } from './options';
