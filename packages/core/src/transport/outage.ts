import { guardLogger, type Logger } from '../observe/logger';
import { consumerEmitter } from './consumerEvents';
import { describeCause } from './errors';
import type { TransportConsumerEvent, TransportObserver } from './events';

export interface OutageReportOptions {
  /** The consumer: `transport` and `source` of its events and log lines. */
  readonly transport: string;
  readonly source: string;
  readonly observer?: TransportObserver<TransportConsumerEvent> | undefined;
  readonly logger?: Logger | undefined;
  /** How an error reads in the events and log lines (default describeCause). */
  readonly describe?: ((error: unknown) => string) | undefined;
}

/**
 * Where the held deliveries are, when that is narrower than the consumer's source (a Kafka
 * partition of one of its topics): `source` of the events, `where` named in the log line instead
 * of the source, `fields` added to it.
 */
export interface OutagePlace {
  readonly source: string;
  readonly where: string;
  readonly fields?: Readonly<Record<string, unknown>> | undefined;
}

/** What a consumer tells its observer and logger of an acceptance outage (see outageReport). */
export interface OutageReport {
  /**
   * Acceptance failed batch-wide (the database cannot accept, or the admission limit refused
   * `count` deliveries): retry `attempt` of the outage in `delayMs`.
   */
  unavailable(error: unknown, attempt: number, delayMs: number, count: number, place?: OutagePlace): void;
  /** Acceptance answered again after `failures` attempts of the outage. */
  recovered(failures: number, count: number, place?: OutagePlace): void;
}

/**
 * The one way a consumer reports an acceptance outage, so that every transport reports it alike
 * (acceptHolding for RabbitMQ, SQS and the in-memory consumer, the Kafka consumer's seek-back):
 * `acceptance-unavailable` for each attempt, logged at warn when the outage begins (`attempt` 1)
 * and at debug for each further one; `acceptance-recovered`, logged at info, once acceptance
 * answers again.
 */
export function outageReport(options: OutageReportOptions): OutageReport {
  const { transport, source, observer } = options;
  const describe = options.describe ?? describeCause;
  // A third-party transport may hand over the application's logger as it came.
  const logger = options.logger === undefined ? undefined : guardLogger(options.logger);
  const emit = consumerEmitter(transport, source, observer, logger);
  return {
    unavailable(error, attempt, delayMs, count, place) {
      const cause = describe(error);
      logger?.[attempt === 1 ? 'warn' : 'debug'](
        { err: error, source: place?.source ?? source, ...place?.fields, count, attempt, delayMs },
        `ferry.${transport}: acceptance unavailable (${cause}); holding ${count} deliveries of ` +
          `${place?.where ?? source}, retry ${attempt} in ${delayMs} ms`,
      );
      emit({ type: 'acceptance-unavailable', count, attempt, delayMs, error: cause }, place?.source);
    },
    recovered(failures, count, place) {
      const of = place === undefined ? '' : ` for ${place.where}`;
      logger?.info(
        { source: place?.source ?? source, ...place?.fields, count, failures },
        `ferry.${transport}: acceptance available again${of} after ${failures} failed attempts`,
      );
      emit({ type: 'acceptance-recovered', count, failures }, place?.source);
    },
  };
}
