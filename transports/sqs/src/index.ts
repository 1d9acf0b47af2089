export { SqsConnection } from './connection';
export { SqsPublisher } from './publisher';
export { attachSqsConsumer, type AttachConsumerOptions, type SqsConsumer } from './consumer';
export {
  declareQueue,
  deleteQueue,
  deadLetterQueueName,
  isFifoQueue,
  queueArn,
  requireRedrivePolicy,
  type DeclaredQueue,
  type QueueSpec,
} from './topology';
export {
  DEFAULTS,
  resolveConnectionOptions,
  resolveConsumerOptions,
  resolvePublisherOptions,
  type ConnectionOptions,
  type ConsumerOptions,
  type DeadLetterOptions,
  type IdentityExtractor,
  type PublisherOptions,
  type StaticCredentials,
} from './options';
export { backoffDelay, type BackoffPolicy } from '@ferry/core/transport';
export { visibilityBackoffSeconds } from './backoff';
export { PERMANENT_ENTRY_CODES, REFUSED_REQUEST_ERRORS, REJECT_REASONS, type RejectReason } from './errors';
export { REJECT_DETAIL_ATTRIBUTE } from './deadLetter';
export { QueueAttributesMismatchError, type QueueAttributeDifference } from './queueMismatch';
export { HEADERS_ATTRIBUTE, identityFromMessageId } from './wire';
