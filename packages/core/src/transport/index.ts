// Helpers for transport authors (`@ferry/core/transport`): option checks, backoff, headers, error
// translation, isolated acceptance, tenant resolution, body parsing, attach/ready/check, the root
// context a consumer starts in, logging, ending a node-postgres client within a deadline, and the
// observer contract every transport's consumer and publisher reports in. The CLI takes its pool
// (endablePool) and its own reads' deadline and translation (boundedExecutor) from here too.
export type {
  TransportConsumerEvent,
  TransportPublisherEvent,
  TransportEvent,
  TransportObserver,
} from './events';
export { observePublish, PublishCalls, type PublishReport } from './publishEvents';
export {
  consumerEmitter,
  reportedMessageId,
  type ConsumerEmit,
  type ConsumerEmitter,
  type ConsumerEventBody,
} from './consumerEvents';
export { safeEmit } from '../observe/safeEmit';
export { defaultLogger, guardLogger, loggerOption, loggerUntil } from '../observe/logger';
export { stripUrlCredentials } from '../redact/urlCredentials';
export { describeError } from '../redact/redact';
export { escapeUnshowable } from '../validate/text';
export { backoffDelay, resolveBackoff, abortableDelay, type BackoffPolicy } from '../backoff';
export { belowOption, describeOption, type OptionValue } from '../optionRelations';
export {
  clearableAny,
  clearableDeadline,
  deadlineSignal,
  onAbort,
  type ClearableDeadline,
  type ClearableSignal,
} from '../deadline';
export { onEvent, type EventSource } from '../sharedListener';
export { discardAnswer } from '../unreadAnswer';
export { settlesWithin } from '../outbox/settle';
export { boundedExecutor } from '../sql/boundedExecutor';
export { translateDbError, withTranslation } from '../sql/dbErrors';
export {
  CONNECTION_END_WAIT_MS,
  destroyClientSocket,
  endClientWithin,
  endablePool,
} from '../sql/endConnection';
export {
  integerOption,
  timerOption,
  MAX_TIMER_MS,
  nonEmptyOption,
  booleanOption,
  oneOfOption,
  functionOption,
  knownKeysOption,
  recordOption,
  arrayOption,
  requiredOptions,
  methodsOption,
  requiredFunctionOption,
  received,
  type OptionKeys,
} from '../optionChecks';
export {
  ferryHeaderValues,
  eventHeaders,
  outboxHeaders,
  readFerryHeaders,
  nonEmptyValue,
  storableHeaderText,
  putStorableHeader,
  type FerryHeaderValues,
  type UnreadableHeader,
} from './headers';
export {
  TRANSPORT_REJECT_REASONS,
  ACCEPTANCE_FAILED_CODE,
  invalidResultReason,
  transportError,
  closedError,
  describeTransportError,
  describeCause,
  isConnectionLevelError,
  type TransportRejectReason,
} from './errors';
export { TRANSPORT_RETRIES, retriesExhaustedDetail } from './retries';
export { closedOutcome, isClosedAnswer, PUBLISHER_CLOSED } from './closedOutcome';
export {
  acceptIsolated,
  isBatchWideFailure,
  invalidFromError,
  sizeMayCause,
  type AcceptManyFn,
} from './isolate';
export { outageReport, type OutagePlace, type OutageReport, type OutageReportOptions } from './outage';
export {
  acceptHolding,
  type AnsweredInput,
  type HoldOptions,
  type HeldAcceptance,
  type SettleAnswered,
} from './hold';
export {
  deadLetterIdentity,
  extractIdentity,
  hasFerryMessageId,
  messageIdFault,
  type ExtractedIdentity,
} from './identity';
export {
  checkTenantSource,
  deadLetterTenant,
  resolveTenant,
  withoutOverruledTenant,
  type DeadLetterTenant,
  type TenantSource,
  type TenantResolution,
} from './tenant';
export { parseJsonObjectBody, parseJsonObjectBytes, type JsonBody } from './body';
export {
  MAX_BYTES_PER_PAYLOAD_BYTE,
  nestedBodyFault,
  oversizeBodyFault,
  payloadSizeFault,
  type PayloadFault,
} from './bodyBound';
export { eventLoopTurns } from './eventLoopTurns';
export { strictUtf8Text } from './utf8';
export { setOwnProperty } from './ownProperty';
export { UnansweredLedger } from './unanswered';
export { consecutiveRuns } from '../sql/statementRuns';
export {
  AttachAttempts,
  awaitReady,
  checkAttachable,
  checkAttached,
  DEFAULT_READY_TIMEOUT_MS,
  type LostPart,
  type ReadyOptions,
} from './attach';
export { inRootContext } from '../tracing/rootContext';
export { traceHeaderName } from '../tracing/w3c';
export { optionalPeerError, requireOptionalPeer, type OptionalPeer } from '../optionalPeer';
