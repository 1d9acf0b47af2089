export {
  currentMessageScope,
  inheritScope,
  messageScopeOf,
  runInMessageScope,
  type MessageScope,
} from './messageScope';
export {
  describeEmitted,
  endProcessSpan,
  MESSAGING_ATTRIBUTES,
  startAcceptSpans,
  startEmitSpan,
  startProcessSpan,
  startPublishSpans,
  type AcceptSpans,
  type PublishSpans,
} from './messaging';
export { inRootContext } from './rootContext';
export { FERRY_TRACER_NAME, inSpan, startSpan, type FerrySpan, type TraceContext } from './span';
export { formatTraceparent, MAX_TRACESTATE, parseTraceparent, TRACEPARENT_PATTERN } from './w3c';
