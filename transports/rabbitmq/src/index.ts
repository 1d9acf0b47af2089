export { RabbitConnection, type ConnectionSetup } from './connection';
export { attachRabbitConsumer, type RabbitConsumer, type RabbitConsumerOptions } from './consumer';
export { decodeDelivery, type DeliveryExtractor, type Decoded } from './delivery';
export {
  RabbitPublisher,
  resolveRoute,
  encodeMessage,
  type RabbitPublisherOptions,
  type Route,
} from './publisher';
export {
  declareWorkQueue,
  deleteWorkQueue,
  workQueueNames,
  type QueueBinding,
  type WorkQueueNames,
  type WorkQueueTopology,
} from './topology';
export { REJECT_REASONS, type RejectReason } from './errors';
export { backoffDelay, type BackoffPolicy } from '@ferry/core';
export { DEFAULTS, type ConnectionOptions } from './options';
