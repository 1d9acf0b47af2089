import * as application from '@ferry/core';
import * as kysely from '@ferry/core/kysely';
import * as testHooks from '@ferry/core/internal/testing';
import * as metrics from '@ferry/core/metrics';
import * as transport from '@ferry/core/transport';

/**
 * The runtime exports of each entry point of @ferry/core, written out: an export added to (or
 * dropped from) an entry point by accident fails here. Changing a list is a public API change.
 *   '@ferry/core'                  the application API
 *   '@ferry/core/kysely'           Kysely's transaction adapter (kysely is an optional peer)
 *   '@ferry/core/transport'        helpers for transport authors
 *   '@ferry/core/metrics'          Prometheus metrics (needs prom-client)
 *   '@ferry/core/internal/testing' hooks for ferry's own tests and benchmarks (no stability promise)
 */
const EXPECTED: Record<string, readonly string[]> = {
  '@ferry/core': [
    'DATE_ARGUMENT_BOUNDS',
    'DEFAULT_ACTOR',
    'DEFAULT_APP_MIGRATIONS_TABLE',
    'DEFAULT_ENVELOPE_LIMITS',
    'DEFAULT_TENANT_SETTING',
    'ENVELOPE_LIMIT_BOUNDS',
    'ConsumerDisconnectedError',
    'ERROR_CODES',
    'FERRY_HEADERS',
    'FERRY_MIGRATIONS_TABLE',
    'FerryConfigError',
    'FerryError',
    'FerrySchemaError',
    'FerryValidationError',
    'IDENTIFIER_LIMITS',
    'INBOX_CHANNEL',
    'INBOX_DEFAULTS',
    'INBOX_INPUT_LIMITS',
    'INBOX_REQUEUE_HISTORY_LIMIT',
    'INBOX_STATUSES',
    'INBOX_TABLE',
    'INBOX_WORKER_BOUNDS',
    'INBOX_WORKER_DEFAULTS',
    'Inbox',
    'InboxAdmin',
    'InboxAdmissionRejectedError',
    'InboxFingerprintConflictError',
    'InboxGlobalScopeRejectedError',
    'InboxInvalidPayloadError',
    'InboxLeaseLostError',
    'InboxNotFoundError',
    'InboxPermanentError',
    'InboxPrivilegedAdmin',
    'InboxReplayConflictError',
    'InboxScopedAdmin',
    'InboxStateConflictError',
    'InboxUnsupportedSchemaError',
    'InboxWrapperMisuseError',
    'LEGACY_MIGRATIONS_TABLE',
    'MAX_DELAY_BOUND_MS',
    'MAX_PAYLOAD_BYTES_BOUNDS',
    'MIGRATE_TIMEOUT_BOUNDS',
    'OUTBOX_DEFAULTS',
    'OUTBOX_DEFAULT_CHANNEL',
    'OUTBOX_OPTION_KEYS',
    'REPLAY_PAYLOAD_PURGED',
    'ROW_VERSION_BOUNDS',
    'STATEMENT_TIMEOUT_BOUNDS',
    'checkSchema',
    'combineObservers',
    'createAuditLog',
    'createEmitter',
    'createHealth',
    'createInbox',
    'createInboxTenancyContext',
    'createOutboxAdmin',
    'createRedactor',
    'createRelay',
    'defaultMigrationsDir',
    'emit',
    'emitMany',
    'exportPrismaModels',
    'exportSql',
    'ferryStatementNames',
    'fromPg',
    'fromPrisma',
    'interactiveTransaction',
    'isFerryError',
    'isUuid',
    'loadMigrationFiles',
    'migrate',
    'migrationsTableFor',
    'pgTransactions',
    'prismaModelsDir',
    'prismaTransactions',
    'resolveInboxOptions',
    'resolveOutboxOptions',
    'validateEnvelope',
    'verifyOutboxSchema',
  ],
  '@ferry/core/kysely': ['fromKysely', 'kyselyTransactions'],
  '@ferry/core/transport': [
    'ACCEPTANCE_FAILED_CODE',
    'CONNECTION_END_WAIT_MS',
    'DEFAULT_READY_TIMEOUT_MS',
    'MAX_BYTES_PER_PAYLOAD_BYTE',
    'MAX_TIMER_MS',
    'PUBLISHER_CLOSED',
    'TRANSPORT_REJECT_REASONS',
    'TRANSPORT_RETRIES',
    'UnansweredLedger',
    'abortableDelay',
    'acceptHolding',
    'acceptIsolated',
    'arrayOption',
    'consecutiveRuns',
    'AttachAttempts',
    'awaitReady',
    'backoffDelay',
    'belowOption',
    'booleanOption',
    'boundedExecutor',
    'checkAttachable',
    'checkAttached',
    'checkTenantSource',
    'clearableAny',
    'clearableDeadline',
    'closedError',
    'closedOutcome',
    'consumerEmitter',
    'deadLetterIdentity',
    'deadLetterTenant',
    'deadlineSignal',
    'defaultLogger',
    'describeCause',
    'describeError',
    'describeOption',
    'describeTransportError',
    'destroyClientSocket',
    'discardAnswer',
    'endClientWithin',
    'endablePool',
    'escapeUnshowable',
    'eventLoopTurns',
    'eventHeaders',
    'extractIdentity',
    'hasFerryMessageId',
    'ferryHeaderValues',
    'functionOption',
    'guardLogger',
    'inRootContext',
    'integerOption',
    'invalidFromError',
    'invalidResultReason',
    'isBatchWideFailure',
    'isClosedAnswer',
    'isConnectionLevelError',
    'knownKeysOption',
    'recordOption',
    'loggerOption',
    'loggerUntil',
    'messageIdFault',
    'methodsOption',
    'nonEmptyOption',
    'nonEmptyValue',
    'observePublish',
    'PublishCalls',
    'onAbort',
    'onEvent',
    'oneOfOption',
    'optionalPeerError',
    'outboxHeaders',
    'outageReport',
    'nestedBodyFault',
    'oversizeBodyFault',
    'parseJsonObjectBody',
    'parseJsonObjectBytes',
    'payloadSizeFault',
    'putStorableHeader',
    'readFerryHeaders',
    'received',
    'reportedMessageId',
    'requiredFunctionOption',
    'requiredOptions',
    'requireOptionalPeer',
    'resolveBackoff',
    'resolveTenant',
    'retriesExhaustedDetail',
    'safeEmit',
    'setOwnProperty',
    'settlesWithin',
    'sizeMayCause',
    'storableHeaderText',
    'strictUtf8Text',
    'stripUrlCredentials',
    'timerOption',
    'traceHeaderName',
    'translateDbError',
    'transportError',
    'withTranslation',
    'withoutOverruledTenant',
  ],
  '@ferry/core/metrics': [
    'METRICS_DEFAULT_BUCKETS',
    'METRICS_LABEL_VALUES',
    'METRICS_STATS_DEFAULTS',
    'createFerryMetrics',
    'serveMetrics',
  ],
  '@ferry/core/internal/testing': [
    'canonicalJson',
    'inboxRetryCeilingMs',
    'inboxRetryDelayMs',
    'outboxRetryDelayMs',
    'payloadFingerprint',
    'relayStore',
  ],
};

const ENTRIES: Record<string, object> = {
  '@ferry/core': application,
  '@ferry/core/kysely': kysely,
  '@ferry/core/transport': transport,
  '@ferry/core/metrics': metrics,
  '@ferry/core/internal/testing': testHooks,
};

describe.each(Object.keys(EXPECTED))('the %s entry point', (entry) => {
  it('exports exactly its listed names', () => {
    expect(Object.keys(ENTRIES[entry]!).sort()).toEqual([...EXPECTED[entry]!].sort());
  });
});

it('exports each name from one entry point only (no aliases, no second home)', () => {
  const seen = new Map<string, string>();
  const twice: string[] = [];
  for (const [entry, names] of Object.entries(EXPECTED)) {
    for (const name of names) {
      if (seen.has(name)) twice.push(`${name} in ${seen.get(name)} and ${entry}`);
      seen.set(name, entry);
    }
  }
  expect(twice).toEqual([]);
});

it('has one function behind each exported name (no name exported twice under two names)', () => {
  const byValue = new Map<unknown, string>();
  const aliases: string[] = [];
  for (const [entry, module] of Object.entries(ENTRIES)) {
    for (const [name, value] of Object.entries(module)) {
      if (typeof value !== 'function') continue;
      const first = byValue.get(value);
      if (first !== undefined) aliases.push(`${entry} ${name} = ${first}`);
      else byValue.set(value, `${entry} ${name}`);
    }
  }
  expect(aliases).toEqual([]);
});

/**
 * Types leave no runtime export, so the compiler checks these (tsconfig.tests.json): the outbox
 * observer contract comes from the application entry point.
 */
it('exports the outbox observer contract (OutboxEvent, OutboxObserver) from @ferry/core', () => {
  const seen: application.OutboxEvent['type'][] = [];
  const observer: application.OutboxObserver = (event) => void seen.push(event.type);
  observer({ type: 'infrastructure-error', operation: 'claim', error: 'connection refused' });
  expect(seen).toEqual(['infrastructure-error']);
});

it('exports the relay circuit outage type (CircuitOutage) from @ferry/core, as a loop source reads it (checked by the compiler)', () => {
  const outage: application.CircuitOutage = {
    state: 'open',
    since: new Date(0),
    error: 'connect ECONNREFUSED',
    publisherClosed: false,
    openings: 1,
    nextProbeAt: new Date(1_000),
  };
  const source: application.LoopSource = { lastCycleAt: null, circuitOutage: outage };
  const relayOutage: application.Relay['circuitOutage'] = source.circuitOutage ?? null;
  expect(relayOutage?.state).toBe('open');
});

it('exports the transport observer contract types from @ferry/core/transport (checked by the compiler)', () => {
  const seen: transport.TransportEvent[] = [];
  const observer: transport.TransportObserver = (event) => seen.push(event);
  const consumerEvent: transport.TransportConsumerEvent = {
    type: 'received',
    transport: 'memory',
    source: 'q',
    count: 1,
  };
  const publisherEvent: transport.TransportPublisherEvent = {
    type: 'published',
    transport: 'memory',
    destination: 'q',
    count: 1,
    durationMs: 0,
  };
  observer(consumerEvent);
  observer(publisherEvent);
  expect(seen.map((event) => event.type)).toEqual(['received', 'published']);
});
