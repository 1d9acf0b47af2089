export { backoffDelay, resolveBackoff, abortableDelay, type BackoffPolicy } from './backoff';
export { integerOption, nonEmptyOption } from './optionChecks';
export {
  ferryHeaderValues,
  outboxHeaders,
  readFerryHeaders,
  nonEmptyValue,
  type FerryHeaderValues,
} from './headers';
export { TRANSPORT_REJECT_REASONS, transportError, closedError, describeTransportError } from './errors';
export { parseJsonObjectBody, type JsonBody } from './body';
