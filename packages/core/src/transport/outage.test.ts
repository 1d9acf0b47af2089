import { FerryError } from '../errors';
import type { Logger } from '../observe/logger';
import type { TransportConsumerEvent } from './events';
import { outageReport } from './outage';

/** A logger that keeps every line with its level. */
function capture() {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const at =
    (level: string) =>
    (fields: unknown, msg?: string): void =>
      void lines.push({ level, fields: fields as Record<string, unknown>, msg: msg ?? '' });
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines };
}

describe('outageReport', () => {
  it('warns when an outage begins, logs each further attempt at debug and the recovery at info, with the events', () => {
    const { logger, lines } = capture();
    const events: TransportConsumerEvent[] = [];
    const report = outageReport({
      transport: 'kafka',
      source: 'orders,audit',
      observer: (event) => void events.push(event),
      logger,
      describe: (error) => `described: ${(error as Error).message}`,
    });
    const down = new FerryError('FERRY_DATABASE_UNAVAILABLE', 'down');
    const place = {
      source: 'orders',
      where: 'orders[2] from offset 7',
      fields: { partition: 2, offset: '7' },
    };
    report.unavailable(down, 1, 100, 4, place);
    report.unavailable(down, 2, 200, 4, place);
    report.recovered(2, 4, place);

    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [
        'warn',
        'ferry.kafka: acceptance unavailable (described: down); holding 4 deliveries of orders[2] from offset 7, retry 1 in 100 ms',
      ],
      [
        'debug',
        'ferry.kafka: acceptance unavailable (described: down); holding 4 deliveries of orders[2] from offset 7, retry 2 in 200 ms',
      ],
      ['info', 'ferry.kafka: acceptance available again for orders[2] from offset 7 after 2 failed attempts'],
    ]);
    expect(lines[0]!.fields).toMatchObject({ source: 'orders', partition: 2, offset: '7', attempt: 1 });
    expect(events).toEqual([
      {
        type: 'acceptance-unavailable',
        transport: 'kafka',
        source: 'orders',
        count: 4,
        attempt: 1,
        delayMs: 100,
        error: 'described: down',
      },
      {
        type: 'acceptance-unavailable',
        transport: 'kafka',
        source: 'orders',
        count: 4,
        attempt: 2,
        delayMs: 200,
        error: 'described: down',
      },
      { type: 'acceptance-recovered', transport: 'kafka', source: 'orders', count: 4, failures: 2 },
    ]);
  });

  it("reports under the consumer's own source without a place, its cause as describeCause words it", () => {
    const { logger, lines } = capture();
    const events: TransportConsumerEvent[] = [];
    const report = outageReport({
      transport: 'sqs',
      source: 'q',
      observer: (e) => void events.push(e),
      logger,
    });
    report.unavailable(new FerryError('FERRY_TIMEOUT', 'slow'), 1, 5, 2);
    report.recovered(1, 2);
    expect(lines.map((line) => line.msg)).toEqual([
      'ferry.sqs: acceptance unavailable (FERRY_TIMEOUT: slow); holding 2 deliveries of q, retry 1 in 5 ms',
      'ferry.sqs: acceptance available again after 1 failed attempts',
    ]);
    expect(events.map((event) => [event.type, event.source])).toEqual([
      ['acceptance-unavailable', 'q'],
      ['acceptance-recovered', 'q'],
    ]);
  });
});
