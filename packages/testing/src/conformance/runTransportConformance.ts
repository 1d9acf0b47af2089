/**
 * The behaviour every ferry transport shares, run by each transport's own test file:
 *
 *   runTransportConformance({ name: 'rabbitmq', features, createTransport, restartBroker });
 *
 * Cases and the feature each needs. A case whose feature the transport lacks is registered as a
 * passing case titled `skipped: <feature> not supported by <transport>: <reason>` that checks
 * the features object does declare it unsupported; the summary line counts it as skipped.
 * - every published message is reported sent and accepted exactly once, with its payload (its
 *   non-ASCII text, NON_ASCII_TEXT, exactly), its tenant and the consumer the transport was attached for                 (always)
 * - every delivery offered names the transport's messaging system             (always)
 * - duplicates published on purpose are accepted once                          (always)
 * - a batch whose acceptance failed is redelivered until it is accepted, each failure reported
 *   (acceptance-unavailable / acceptance-failed naming the error)                (always)
 * - at the admission limit a duplicate is settled at once, the refused new
 *   deliveries come back (never dead-lettered) and are accepted once           (always)
 * - closing the publisher twice resolves; what a publish in flight at close or after it did not
 *   have confirmed is `unavailable` (no attempt spent); its observer hears nothing after
 *   close() resolved                                                               (always)
 * - closing a consumer twice resolves (one promise); a closed one takes nothing (always)
 * - the observer hears received, then accepted and settled, with transport and source (always)
 * - each consumer's connection events carry its own instance; close() of a connected one
 *   reports one disconnected with reason 'closed', the other consumer stays connected (always)
 * - the observer hears a poison delivery dead-lettered with its reason and id    (deadLetter)
 * - a delivery whose acceptance alone fails is dead-lettered as acceptance_failed (deadLetter)
 * - invalid deliveries are dead-lettered with a reason, none accepted          (deadLetter)
 * - a body with a number JSON.parse would change (an integer beyond 2^53-1, 1e400, 1e-400, -0)
 *   is dead-lettered as unparseable_body; the neighbour's payload arrives exactly (deadLetter)
 * - a message id that is only whitespace or holds a control character is dead-lettered as
 *   missing_identity                                                             (deadLetter)
 * - a delivery's headers reach the inbox without any reserved name but ferry's own
 *   (X-Ferry-Tenant-Id, x-ferry-transport-attempts, ...)                          (always)
 * - messages sharing an ordering key arrive in publish order                   (orderingPerKey)
 * - a message to an unroutable destination is reported not sent               (unroutableDetection)
 * - nothing is lost or accepted twice across a broker restart mid-stream; the restart is reported
 *   (disconnected lost, then connected) and check() rejects while reported down (redeliveryAfterRestart)
 * - deliveries whose acceptance was in flight when the consumer closed, then failed, reach the
 *   next consumer and are accepted once                                          (always)
 * - the same across a broker restart                                           (redeliveryAfterRestart)
 * - once everything offered, duplicates included, was accepted and the consumer closed, the
 *   broker holds nothing of the source                                           (heldCount)
 */
import { afterEach, beforeEach, describe, expect } from './jest';
import { jestTimeout, MAX_WAIT_TIMEOUT_MS, timedCases } from './timeouts';
import {
  functionOption,
  integerOption,
  knownKeysOption,
  type OptionKeys,
  type TransportConsumerEvent,
  type TransportPublisherEvent,
} from '@ferry/core/transport';
import { registerAdmissionCases } from './admissionCases';
import { BoundedCalls } from './bounded';
import { registerDecodeCases } from './decodeCases';
import { diffIds, waitUntil } from './assertions';
import { registerLifecycleCases } from './lifecycleCases';
import { MemoryAcceptor, REFUSED_BATCH_TEXT } from './memoryAcceptor';
import {
  CARRIED_HEADERS as carried,
  NON_ASCII_TEXT,
  conformanceMessages,
  expectedHeader,
  neverAborted,
} from './messages';
import { publishUntilSent } from './publishing';
import { registerObserverCases } from './observerCases';
import { registerSettlementCases } from './settlementCases';
import { registerAnswerCases } from './answerCases';
import { featureGate } from './unsupported';
import type { OutboxMessage } from '@ferry/core';
import type {
  AttachedConsumer,
  ConformanceFeatures,
  DeadLetter,
  TransportConformanceOptions,
  TransportUnderTest,
} from './types';

const KEYS = {
  name: true,
  transport: true,
  system: true,
  features: true,
  createTransport: true,
  restartBroker: true,
  timeoutMs: true,
} as const satisfies OptionKeys<TransportConformanceOptions>;
const FEATURE_KEYS = {
  deadLetter: true,
  orderingPerKey: true,
  redeliveryAfterRestart: true,
  unroutableDetection: true,
  heldCount: true,
} as const satisfies OptionKeys<ConformanceFeatures>;

export function runTransportConformance(options: TransportConformanceOptions): void {
  // A misspelt feature or option would otherwise be skipped or defaulted without a word.
  options = knownKeysOption('', options, KEYS);
  const features = knownKeysOption('features.', options.features, FEATURE_KEYS);
  if (features !== undefined) options = { ...options, features };
  functionOption('createTransport', options.createTransport);
  functionOption('restartBroker', options.restartBroker);
  // Checked here: without it the case naming the system would compare against undefined and
  // pass for a transport that names none.
  const system: unknown = options.system;
  if (typeof system !== 'string' || system.trim() === '') {
    throw new Error(
      `transport conformance (${options.name}): system (the broker's OpenTelemetry messaging.system) must be a non-empty string`,
    );
  }
  const timeoutMs = integerOption('timeoutMs', options.timeoutMs ?? 30_000, 1, MAX_WAIT_TIMEOUT_MS);
  const it = timedCases(timeoutMs);
  const supported = featureGate(options, Object.keys(FEATURE_KEYS) as (keyof ConformanceFeatures)[]);
  const heldCount = supported('heldCount');

  // Every call into the transport under test has the deadline of a wait (review 90).
  const bounded = new BoundedCalls(options.name, timeoutMs);
  const restartGiven = options.restartBroker;
  const restartBroker = restartGiven
    ? () => bounded.call('restartBroker()', () => restartGiven())
    : undefined;

  describe(`transport conformance: ${options.name}`, () => {
    let transport: TransportUnderTest;
    /** Whether this case's createTransport answered: only then has afterEach a transport to clean up. */
    let created = false;
    let acceptor: MemoryAcceptor;
    const consumers: AttachedConsumer[] = [];
    const consumerEvents: TransportConsumerEvent[] = [];
    const publisherEvents: TransportPublisherEvent[] = [];

    beforeEach(async () => {
      consumerEvents.length = 0;
      publisherEvents.length = 0;
      created = false;
      acceptor = new MemoryAcceptor();
      const made = await bounded.call(
        'createTransport()',
        () => options.createTransport({ publisherObserver: (event) => publisherEvents.push(event) }),
        // Arriving after the deadline, it is this case's no more: cleaned up at once.
        (late) => late.cleanup(),
      );
      transport = bounded.transport(made);
      created = true;
    }, jestTimeout(timeoutMs));

    afterEach(async () => {
      acceptor.release();
      // cleanup() runs whatever the consumers' close() did (a hung close left the case's queue or
      // topic on the broker); the first failure is reported after it.
      const closed = await Promise.allSettled(consumers.splice(0).map((consumer) => consumer.close()));
      if (created) await transport.cleanup();
      const failed = closed.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    }, jestTimeout(timeoutMs));

    async function attach(to: MemoryAcceptor = acceptor): Promise<void> {
      const observer = (event: TransportConsumerEvent) => consumerEvents.push(event);
      consumers.push(await transport.attach(to, { consumer: 'conformance', observer }));
    }

    /** Publishes `messages`, again where not reported sent (publishUntilSent). */
    function sendAll(messages: readonly OutboxMessage[]): Promise<void> {
      return publishUntilSent(transport.publisher, messages, timeoutMs);
    }

    async function publishAllSent(count: number): Promise<string[]> {
      const messages = conformanceMessages(count, transport.destination);
      await sendAll(messages);
      return messages.map((m) => m.id);
    }

    /** Every dead letter read so far, once there are at least `count`. */
    function deadLettersAtLeast(count: number, what: string): Promise<readonly DeadLetter[]> {
      return waitUntil(
        what,
        async () => {
          const letters = await transport.readDeadLetters();
          return letters.length >= count ? letters : undefined;
        },
        timeoutMs,
      );
    }

    /**
     * Closes every consumer of the case; with `heldCount`, waits until the broker holds nothing of
     * the source (what was accepted, answered a duplicate or dead-lettered was also settled).
     */
    async function expectNothingHeld(): Promise<void> {
      await Promise.all(consumers.map((consumer) => consumer.close()));
      if (!heldCount) return;
      const read = transport.heldCount;
      expect(typeof read).toBe('function');
      let last = -1;
      try {
        await waitUntil(
          'the broker holding nothing once every delivery was settled and the consumers closed',
          async () => {
            last = await read!.call(transport);
            return last === 0 ? true : undefined;
          },
          timeoutMs,
        );
      } catch (error) {
        throw new Error(`${(error as Error).message} (it still holds ${last})`);
      }
    }

    /** The case's connection events (`connected` / `disconnected`) from index `from` of consumerEvents on. */
    function connectionEvents(from = 0): TransportConsumerEvent[] {
      return consumerEvents
        .slice(from)
        .filter((event) => event.type === 'connected' || event.type === 'disconnected');
    }

    /**
     * Asks `consumer`'s readiness probe while it reports itself disconnected: when its last
     * connection event was `disconnected` before check() and still is once check() answered, the
     * probe must have rejected (FERRY_TRANSPORT_ERROR). A reconnect in between proves nothing.
     */
    async function expectProbeDownWhileReportedDown(consumer: AttachedConsumer): Promise<void> {
      const before = connectionEvents();
      const answer = await consumer.check().then(
        () => 'resolved',
        (error: unknown) => error,
      );
      const after = connectionEvents();
      if (after.length !== before.length || before.at(-1)?.type !== 'disconnected') return;
      expect({ checkWhileReportedDisconnected: answer }).toMatchObject({
        checkWhileReportedDisconnected: { code: 'FERRY_TRANSPORT_ERROR' },
      });
    }

    async function expectAcceptedExactly(expected: readonly string[]): Promise<void> {
      await waitUntil(
        `${expected.length} accepted`,
        () => (diffIds(expected, acceptor.accepted).missing.length === 0 ? true : undefined),
        timeoutMs,
      );
      expect(diffIds(expected, acceptor.accepted)).toEqual({ missing: [], extra: [] });
    }

    it('reports every published message sent and accepts each exactly once, as it was published', async () => {
      await attach();
      const messages = conformanceMessages(50, transport.destination);
      await sendAll(messages);
      await expectAcceptedExactly(messages.map((m) => m.id));
      // What the inbox stores is the message the application emitted: its payload (not an
      // envelope around it), its tenant (a tenant lost makes two tenants' ids one), its type (the
      // handler's messageType), the consumer the transport was attached for, and the headers
      // handlers and tracing read: the event's own, its correlation, causation and trace context.
      const received = messages.map((m) => {
        const input = acceptor.acceptedInputs.get(m.id);
        const headers = input?.headers ?? {};
        return {
          id: input?.messageId,
          payload: input?.payload,
          tenantId: input?.tenantId,
          type: input?.type,
          consumer: input?.consumer,
          headers: carried.map((name) => [name, headers[name]]),
        };
      });
      expect(received).toEqual(
        messages.map((m) => ({
          id: m.id,
          payload: m.payload,
          tenantId: m.tenantId,
          type: m.type,
          consumer: 'conformance',
          headers: carried.map((name) => [name, expectedHeader(m, name)]),
        })),
      );
    });

    it('names its messaging system on every delivery it offers the inbox', async () => {
      await attach();
      const ids = await publishAllSent(3);
      await expectAcceptedExactly(ids);
      expect(acceptor.systems).toHaveLength(acceptor.offered.length);
      expect(new Set(acceptor.systems)).toEqual(new Set([options.system]));
    });

    it('accepts each message once when duplicates are published on purpose', async () => {
      await attach();
      const messages = conformanceMessages(20, transport.destination);
      await sendAll(messages);
      await sendAll(messages.slice(0, 10));
      await waitUntil(
        '30 deliveries offered',
        () => (acceptor.offered.length >= 30 ? true : undefined),
        timeoutMs,
      );
      await expectAcceptedExactly(messages.map((m) => m.id));
    });

    it('redelivers deliveries whose acceptance failed until they are accepted', async () => {
      acceptor.failNext(2);
      await attach();
      const ids = await publishAllSent(5);
      await expectAcceptedExactly(ids);
      expect(acceptor.offered.length).toBeGreaterThan(ids.length);
      // Each failed acceptance is reported, naming its error (an outage `acceptance-unavailable`,
      // anything else `acceptance-failed`): a consumer retrying in silence hides a database outage.
      const reported = consumerEvents.flatMap((event) =>
        event.type === 'acceptance-unavailable' || event.type === 'acceptance-failed'
          ? [{ type: event.type, named: event.count > 0 && event.error.includes(REFUSED_BATCH_TEXT) }]
          : [],
      );
      expect(reported.length).toBeGreaterThan(0);
      expect(reported.filter((event) => !event.named)).toEqual([]);
    });

    if (supported('deadLetter')) {
      it('dead-letters invalid deliveries with a reason and accepts none of them', async () => {
        // Published before the consumer is attached, so one batch can hold both invalid ones.
        await transport.publishRaw({ body: '{"no":"identity"}' });
        await transport.publishRaw({ body: '{not json', messageId: 'conformance-unparseable' });
        const valid = { valid: true, text: NON_ASCII_TEXT };
        await transport.publishRaw({ body: JSON.stringify(valid), messageId: 'conformance-valid' });
        await attach();

        const dead = await deadLettersAtLeast(2, 'two dead letters');
        expect(dead.every((letter) => typeof letter.reason === 'string' && letter.reason.length > 0)).toBe(
          true,
        );
        expect(dead.map((letter) => letter.messageId ?? '(no id)').sort()).toEqual([
          '(no id)',
          'conformance-unparseable',
        ]);
        await expectAcceptedExactly(['conformance-valid']);
        // A raw UTF-8 body arrives as its text, not decoded as latin1.
        expect(acceptor.acceptedInputs.get('conformance-valid')?.payload).toEqual(valid);
        await expectNothingHeld();
      });
    }

    if (supported('deadLetter')) {
      it('dead-letters a delivery whose acceptance alone fails, and accepts its neighbours', async () => {
        acceptor.poison('conformance-poison');
        await attach();
        await transport.publishRaw({ body: '{"n":1}', messageId: 'conformance-before' });
        await transport.publishRaw({ body: '{"n":2}', messageId: 'conformance-poison' });
        await transport.publishRaw({ body: '{"n":3}', messageId: 'conformance-after' });

        const dead = await deadLettersAtLeast(1, 'the poison delivery dead-lettered');
        // The reason is TRANSPORT_REJECT_REASONS' acceptance_failed, not the error's text.
        expect(dead.map((letter) => [letter.messageId, letter.reason])).toEqual([
          ['conformance-poison', 'acceptance_failed'],
        ]);
        await expectAcceptedExactly(['conformance-before', 'conformance-after']);
        // A consumer reports `dead-lettered` once the broker confirmed the copy; a reader of the
        // dead-letter destination can see the copy before that answer reaches the consumer.
        await waitUntil(
          'the dead-lettered event',
          () => (consumerEvents.some((event) => event.type === 'dead-lettered') ? true : undefined),
          timeoutMs,
        );
        expect(
          consumerEvents.flatMap((event) =>
            event.type === 'dead-lettered' ? [[event.messageId, event.reason]] : [],
          ),
        ).toEqual([['conformance-poison', 'acceptance_failed']]);
        await expectNothingHeld();
      });
    }

    if (supported('orderingPerKey')) {
      it('delivers messages sharing an ordering key in publish order', async () => {
        await attach();
        const messages = conformanceMessages(30, transport.destination, { orderingKey: 'conformance-key' });
        await sendAll(messages);
        await expectAcceptedExactly(messages.map((m) => m.id));
        expect(acceptor.accepted).toEqual(messages.map((m) => m.id));
      });
    }

    if (supported('unroutableDetection')) {
      it('reports a message to an unroutable destination as not sent', async () => {
        const destination = transport.unroutableDestination;
        expect(destination).toBeDefined();
        const [message] = conformanceMessages(1, destination ?? null);
        const outcomes = await transport.publisher.publish([message!], neverAborted());
        expect(outcomes).toHaveLength(1);
        expect(outcomes[0]!.status).not.toBe('sent');
      });
    }

    if (supported('redeliveryAfterRestart') && restartBroker) {
      it('loses nothing and accepts nothing twice across a broker restart mid-stream', async () => {
        acceptor.hold();
        await attach();
        const before = await publishAllSent(30);
        await waitUntil('a batch in acceptance', () => (acceptor.held > 0 ? true : undefined), timeoutMs);
        const restartedAt = consumerEvents.length;
        await restartBroker();
        // The restart is reported (the consumer lost its session), and while the consumer says it
        // is disconnected its readiness probe says so too.
        const lostAt = await waitUntil(
          'the consumer reporting the restart (disconnected, reason lost)',
          () => {
            const index = connectionEvents(restartedAt).findIndex(
              (event) => event.type === 'disconnected' && event.reason === 'lost',
            );
            return index < 0 ? undefined : { index };
          },
          timeoutMs,
        );
        await expectProbeDownWhileReportedDown(consumers[consumers.length - 1]!);
        acceptor.release();
        const after = conformanceMessages(20, transport.destination);
        await waitUntil(
          'publishing after the restart',
          async () => {
            const outcomes = await transport.publisher.publish(after, neverAborted());
            return outcomes.every((o) => o.status === 'sent') ? true : undefined;
          },
          timeoutMs,
        );
        await expectAcceptedExactly([...before, ...after.map((m) => m.id)]);
        await waitUntil(
          'the consumer reporting itself connected again after the restart',
          () =>
            connectionEvents(restartedAt)
              .slice(lostAt.index + 1)
              .some((event) => event.type === 'connected')
              ? true
              : undefined,
          timeoutMs,
        );
      });
    }

    registerObserverCases({
      timeoutMs,
      transportName: options.transport,
      deadLetter: supported('deadLetter'),
      transport: () => transport,
      consumerEvents: () => consumerEvents,
      publisherEvents: () => publisherEvents,
      attach: () => attach(),
      consumers,
      publishAllSent,
    });

    registerAdmissionCases({
      timeoutMs,
      deadLetter: supported('deadLetter'),
      expectNothingHeld,
      transport: () => transport,
      acceptor: () => acceptor,
      consumerEvents: () => consumerEvents,
      attach: () => attach(),
      publishAllSent,
      sendAll,
      expectAcceptedExactly,
    });

    registerDecodeCases({
      timeoutMs,
      deadLetter: supported('deadLetter'),
      expectNothingHeld,
      acceptor: () => acceptor,
      transport: () => transport,
      attach: () => attach(),
      deadLettersAtLeast,
      expectAcceptedExactly,
    });

    registerLifecycleCases({
      timeoutMs,
      transport: () => transport,
      publisherEvents: () => publisherEvents,
      acceptor: () => acceptor,
      consumers,
      attach,
      publishAllSent,
      expectAcceptedExactly,
    });

    registerSettlementCases({
      timeoutMs,
      heldCount,
      orderingPerKey: supported('orderingPerKey'),
      restartBroker: supported('redeliveryAfterRestart') ? restartBroker : undefined,
      transport: () => transport,
      acceptor: () => acceptor,
      consumers,
      attach: () => attach(),
      sendAll,
      expectAcceptedExactly,
      expectNothingHeld,
    });

    registerAnswerCases({
      timeoutMs,
      deadLetter: supported('deadLetter'),
      transport: () => transport,
      acceptor: () => acceptor,
      attach,
      deadLettersAtLeast,
      expectAcceptedExactly,
      expectNothingHeld,
    });
  });

  supported.registerSkipped();
}
