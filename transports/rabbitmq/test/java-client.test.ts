/**
 * Deliveries published by the official RabbitMQ Java client (test/java/Publisher.java), which
 * writes every AMQP field-table type amqplib never sends: each is accepted (with which identity,
 * tenant, type and stored header) or dead-lettered with its reason, the queue never stalls, the
 * consumer's channel never drops, and a neighbour published after them is accepted.
 */
import { FERRY_HEADERS, Inbox, INBOX_TABLE } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import type { GetMessage } from 'amqplib';
import { AMQP_URL, InboxQueue, backOnClose, uniqueName, waitFor } from './support/broker';
import { javaClientJars, runJava } from './support/javaClient';

/** How one case must end: stored with these columns (and `x-h` header), or dead-lettered. */
type Outcome =
  | {
      readonly id: string;
      readonly tenant?: string | null;
      readonly type?: string | null;
      /** The stored `x-h` header; undefined: left out. */
      readonly header?: string;
    }
  | { readonly dead: string };

/** The outcome of every case Publisher.java sends in its "matrix" set, for a run and seed. */
function expectedOutcomes(run: string, seed: number): Record<string, Outcome> {
  const id = (name: string): string => `${run}-${name}`;
  const header = (name: string, value?: string): [string, Outcome] => [
    name,
    value === undefined ? { id: id(name) } : { id: id(name), header: value },
  ];
  const accepted = (
    name: string,
    outcome: Partial<Extract<Outcome, { id: string }>> = {},
  ): [string, Outcome] => [name, { id: id(name), ...outcome }];
  /** The cases dead-lettered with `reason`. */
  const dead = (reason: string, ...names: string[]): Array<[string, Outcome]> =>
    names.map((name) => [name, { dead: reason }]);
  return Object.fromEntries([
    // Application headers: text, UTF-8 bytes and exact numbers are stored as text; what is not
    // text (binary, tables, arrays, decimals, timestamps, void) or not exact is left out.
    header('h-string', 'Zürich'),
    header('h-bytes', 'Zürich'),
    header('h-bytes-binary'),
    header('h-integer', '-2147483648'),
    header('h-long', '1234567890123'),
    header('h-long-unsafe'),
    header('h-long-max'),
    header('h-short', '-7'),
    header('h-byte', '-1'),
    header('h-float', '1.5'),
    header('h-double', '2.25'),
    header('h-decimal'),
    header('h-date'),
    header('h-date-far'),
    header('h-map'),
    header('h-list'),
    header('h-boolean', 'true'),
    header('h-null'),
    ...dead('headers_too_large', 'h-long-string'),
    // amqplib decodes a long string as UTF-8, lossily: an application header keeps U+FFFD.
    header('h-latin1', 'caf\uFFFD'),
    ...dead('headers_too_large', 'h-many'),
    // ferry's identity: text, UTF-8 bytes or an exact integer; anything else present is refused,
    // never replaced by the AMQP messageId.
    ['id-bytes', { id: id('id-bytes-é') }],
    ['id-integer', { id: String((seed % 1_000_000) + 1) }],
    ['id-long', { id: String(seed * 1_000 + 1) }],
    ['id-short', { id: '7' }],
    ...dead(
      'invalid_text',
      'id-long-unsafe-a',
      'id-long-unsafe-b',
      'id-double',
      'id-boolean',
      'id-decimal',
      'id-date',
      'id-map',
      'id-list',
    ),
    ['id-null', { id: id('id-null-amqp') }],
    ['id-empty', { id: id('id-empty-amqp') }],
    ...dead('inbox_invalid', 'id-long-string'),
    ['id-long-string-255', { id: `${'I'.repeat(255 - run.length - 1)}-${run}` }],
    // Ids that differ only in bytes amqplib decodes to U+FFFD, or in digits a 64-bit long loses
    // in a JS number: read as one, the second of a pair with one body would be acked as a duplicate.
    ...dead(
      'invalid_text',
      'id-latin1-fe',
      'id-latin1-ff',
      'id-bytes-ff',
      'same-latin1-fe',
      'same-latin1-ff',
      'same-long-a',
      'same-long-b',
    ),
    accepted('tenant-string', { tenant: 'acme' }),
    accepted('tenant-bytes', { tenant: 'acme' }),
    accepted('tenant-integer', { tenant: '42' }),
    accepted('tenant-null', { tenant: null }),
    ...dead(
      'invalid_text',
      'tenant-map',
      'tenant-list',
      'tenant-decimal',
      'tenant-boolean',
      'tenant-long-unsafe',
      'tenant-latin1',
    ),
    ...dead('inbox_invalid', 'tenant-long-string'),
    accepted('type-string', { type: 'order.placed' }),
    accepted('type-bytes', { type: 'order.placed' }),
    ...dead('invalid_text', 'type-map', 'type-date'),
    // Properties.
    ['p-message-id', { id: id('p-message-id') }],
    ['p-message-id-255', { id: `${'M'.repeat(254 - run.length)}-${run}` }],
    ...dead('missing_identity', 'p-message-id-empty', 'p-no-identity'),
    accepted('p-content-type-params'),
    accepted('p-content-type-case'),
    accepted('p-content-type-empty'),
    accepted('p-content-type-absent'),
    ...dead('unsupported_content_type', 'p-content-type-text'),
    accepted('p-encoding-utf8'),
    ...dead('unparseable_body', 'p-encoding-gzip'),
    accepted('p-encoding-unknown'),
    accepted('p-delivery-mode-1'),
    accepted('p-priority'),
    accepted('p-expiration'),
    accepted('p-timestamp'),
    accepted('p-timestamp-far'),
    accepted('p-correlation-id'),
    accepted('p-type', { type: 'order.placed' }),
    accepted('p-app-id'),
    accepted('p-user-id'),
    accepted('p-reply-to'),
    accepted('p-mandatory'),
    accepted('p-spring'),
    // Bodies.
    ...dead('unparseable_body', 'b-empty', 'b-not-utf8', 'b-array', 'b-string', 'b-null', 'b-not-json'),
    ...dead('payload_too_large', 'b-too-large'),
    ...dead('unparseable_body', 'b-dead-every-type'),
    ...dead('headers_too_large', 'b-huge-headers'),
    ...dead('unparseable_body', 'b-after-huge'),
  ]);
}

interface StoredRow {
  message_id: string;
  tenant_id: string | null;
  message_type: string | null;
  headers: Record<string, string>;
}

describe('RabbitMQ deliveries published by the Java client, into the @ferry/core inbox', () => {
  const setup = new InboxQueue('java-client');
  const { queue } = setup;

  // The first run on a machine downloads the client with Maven (javaClientJars has its deadline).
  beforeAll(() => javaClientJars(), 330_000);

  it('accepts or dead-letters by reason every field-table type and property the Java client sends, never drops its channel, and accepts a neighbour after them', async () => {
    const inbox = new Inbox(setup.database.prisma, { global: 'shared' });
    const events: TransportConsumerEvent[] = [];
    const consumer = attachRabbitConsumer(inbox, {
      connection: setup.connection,
      queue,
      consumer: 'billing',
      observer: (event) => events.push(event),
    });
    setup.attached = consumer;
    await consumer.ready();
    const run = uniqueName('j');
    const seed = Math.floor(Math.random() * 1_000_000_000);
    const java = (set: string) =>
      runJava('Publisher.java', [AMQP_URL, queue, run, String(seed), String(inbox.maxPayloadBytes), set]);

    const sent = (await java('matrix')).trim().split('\n');
    const expected = expectedOutcomes(run, seed);
    expect(sent.map((line) => line.replace(/^sent /, '')).sort()).toEqual(Object.keys(expected).sort());

    // Every delivery settled (a dead letter is confirmed before its delivery is acked, an
    // acceptance committed before): the consumer acked as many as were sent (its settled events;
    // a channel dropped and redelivering shows in `connections` below).
    const acked = () => events.reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0);
    const letters: GetMessage[] = [];
    await waitFor(
      'every delivery settled',
      async () => {
        letters.push(...(await setup.broker.drain(`${queue}.dlq`)));
        return acked() >= sent.length ? true : undefined;
      },
      60_000,
    );
    letters.push(...(await setup.broker.drain(`${queue}.dlq`)));
    const found = await setup.database.db.query<StoredRow & { name: string }>(
      `SELECT payload->>'case' AS name, message_id, tenant_id, message_type, headers FROM ${INBOX_TABLE}`,
    );
    const rows = new Map(found.map(({ name, ...row }) => [name, row]));
    const outcomes: Record<string, Outcome> = {};
    for (const letter of letters) {
      // A second dead letter of one case (a copy and the broker's own dead letter) shows as "a+b".
      const name = String(letter.properties.headers?.['x-case']);
      const reason = String(letter.properties.headers?.[FERRY_HEADERS.rejectReason]);
      const before = outcomes[name];
      outcomes[name] = { dead: before && 'dead' in before ? `${before.dead}+${reason}` : reason };
    }
    for (const [name, row] of rows) {
      const outcome = expected[name];
      const shown: { id: string; tenant?: string | null; type?: string | null; header?: string } = {
        id: row.message_id,
      };
      if (outcome !== undefined && 'id' in outcome) {
        if ('tenant' in outcome) shown.tenant = row.tenant_id;
        if ('type' in outcome) shown.type = row.message_type;
        if (row.headers['x-h'] !== undefined) shown.header = row.headers['x-h'];
      }
      outcomes[name] = name in outcomes ? { dead: 'stored and dead-lettered' } : shown;
    }

    // The neighbours published after them: one dead-lettered once, with its reason, one accepted.
    await java('neighbour');
    const after: GetMessage[] = [];
    await waitFor('the neighbours settled', async () => {
      after.push(...(await setup.broker.drain(`${queue}.dlq`)));
      const found = await setup.database.db.query(`SELECT 1 FROM ${INBOX_TABLE} WHERE message_id = $1`, [
        `${run}-neighbour`,
      ]);
      return found.length > 0 && acked() >= sent.length + 2 ? true : undefined;
    });
    after.push(...(await setup.broker.drain(`${queue}.dlq`)));
    const connections = events
      .filter((e) => e.type === 'connected' || e.type === 'disconnected')
      .map((e) => e.type);
    // Nothing left unacked or ready: closing the consumer returns nothing to the queue.
    const back = await backOnClose(consumer, setup.broker, queue);

    // One comparison, so a failure shows every case that went wrong.
    expect({
      outcomes,
      deadLetters: letters.length,
      dropped: letters
        .filter((m) => m.properties.headers?.['x-case'] === 'b-huge-headers')
        .map((m) => m.properties.headers?.['x-ferry-dropped-headers']),
      neighbours: after.map((m) => [
        m.properties.headers?.['x-case'],
        m.properties.headers?.[FERRY_HEADERS.rejectReason],
      ]),
      connections,
      back,
    }).toEqual({
      outcomes: expected,
      deadLetters: Object.values(expected).filter((o) => 'dead' in o).length,
      // amqplib cannot encode its 70 kB header in the copy: left out, and named.
      dropped: ['x-huge'],
      neighbours: [['neighbour-dead', 'unparseable_body']],
      connections: ['connected'],
      back: 0,
    });
  }, 180_000);
});
