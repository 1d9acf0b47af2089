import { otel } from './otel';

/**
 * Runs `start` in OpenTelemetry's root context (no active span) and returns what it returns.
 * Whatever `start` sets going runs there for good: a loop it starts, the sockets it opens and
 * the callbacks their events call. ferry starts every long-lived piece this way (a consumer's
 * delivery callbacks, a connection's reconnect loop, the relay's and the inbox worker's loops),
 * so a span active where the application started it (a traced start-up, the request that
 * attached a consumer lazily) never becomes the parent of every later span: a delivery begins
 * from its own traceparent or a new trace. A plain call without @opentelemetry/api.
 */
export function inRootContext<T>(start: () => T): T {
  const api = otel();
  return api === null ? start() : api.context.with(api.ROOT_CONTEXT, start);
}
