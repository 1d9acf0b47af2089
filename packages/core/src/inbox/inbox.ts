import { checkInboxClient, checkSameDatabase, poolSizeWarning } from './adapterChecks';
import type { InboxAcceptInput, InboxAcceptor, InboxAcceptResult, InboxAdmissionResult } from '../contracts';
import { FerryError, FerryValidationError } from '../errors';
import { defaultLogger, guardLogger } from '../observe/logger';
import { verifySchema } from '../schema/checkSchema';
import {
  isTransactionAdapter,
  prismaTransactions,
  type PrismaClientLike,
  type PrismaClientOf,
  type PrismaTransactionLike,
  type SqlExecutor,
  type StatementOptions,
  type TransactionAdapter,
  type TransactionOptions,
} from '../sql/executor';
import { withTranslation } from '../sql/dbErrors';
import { withStatementDeadline } from '../sql/statementDeadline';
import { acceptBatch, type AcceptOutcome, type AcceptSettings, type BatchOutcome } from './accept';
import { readInputs } from './validateInput';
import { InboxAdmissionRejectedError, InboxFingerprintConflictError } from './errors';
import { acceptHandled, handlerMissingError, handlesConsumer } from './handlerCheck';
import { resolveInboxOptions, type InboxOptions, type ResolvedInboxOptions } from './options';
import { emit } from './process';
import { FULL_RECEIPTS, RECEIPT_KEYS, REQUIRED_COLUMNS, TABLE, type ReceiptShape } from './sql/fragments';
import type { InboxRecord, ReceiptKey } from './types';
import { startAcceptSpans } from '../tracing';
import { InboxWorker, type RunOnceResult } from './worker';
import { SessionOutage, type InboxClaimCycling, type InboxSessionOutage } from './sessionOutage';
import { sqlWorkerOps, type InboxWorkerOps } from './workerOps';
import { withSerializationRetry } from '../sql/serializationRetry';

export type InboxAcceptedReceipt =
  | { readonly kind: 'accepted'; readonly record: InboxRecord }
  | { readonly kind: 'duplicate'; readonly record: InboxRecord };

/** A Prisma client whose interactive transactions hand `TTx` to their callback. */
export type InboxClient<TTx> = PrismaClientOf<TTx>;

export interface InboxInternals<TTx> {
  /** Replace individual worker transitions (fault injection in tests). */
  readonly ops?: Partial<InboxWorkerOps<TTx>>;
  /** How long accepted receipts may wait for an enabled worker nobody started before the warning (30 s). */
  readonly idleWorkerWarningMs?: number;
}

const IDLE_WORKER_WARNING_MS = 30_000;

/**
 * The inbox service: acceptance (the transports' InboxAcceptor) and the worker.
 * `client` is the application's Prisma client, or a transaction adapter (`pgTransactions(pool)`,
 * `kyselyTransactions(db)`, `prismaTransactions(prisma, { db })`); handlers run in its
 * transactions, so `context.tx` is typed TTx (the application's transaction object).
 */
export class Inbox<TTx = PrismaTransactionLike> implements InboxAcceptor {
  readonly options: ResolvedInboxOptions<TTx>;
  readonly maxPayloadBytes: number;
  private readonly db: SqlExecutor;
  private readonly adapter: TransactionAdapter<TTx>;
  private poolSizeWarned = false;
  private readonly worker: InboxWorker<TTx>;
  private readonly settings: AcceptSettings;
  private readonly emitter: Pick<ResolvedInboxOptions<TTx>, 'observer' | 'logger'>;
  private readonly idleWorkerWarningMs: number;
  /** Armed by the first acceptance while an enabled worker was never started; fires at most once. */
  private idleWorkerCheck: NodeJS.Timeout | 'done' | null = null;

  constructor(
    client: PrismaClientLike | TransactionAdapter<TTx>,
    options: InboxOptions<TTx> = {},
    internals: InboxInternals<TTx> = {},
  ) {
    const resolved = resolveInboxOptions(options);
    checkInboxClient(client);
    const logger = guardLogger(resolved.logger ?? defaultLogger('ferry.inbox'));
    this.options = { ...resolved, logger };
    this.maxPayloadBytes = resolved.maxPayloadBytes;
    const adapter = isTransactionAdapter(client)
      ? (client as TransactionAdapter<TTx>)
      : prismaTransactions<TTx>(client as PrismaClientOf<TTx>);
    this.adapter = adapter;
    this.db = withTranslation(
      withStatementDeadline(
        withSerializationRetry(adapter.db, resolved.statementTimeoutMs),
        resolved.statementTimeoutMs,
      ),
      'inbox',
      resolved.redact,
      logger,
    );
    this.emitter = { observer: resolved.observer, logger };
    this.settings = {
      maxPayloadBytes: resolved.maxPayloadBytes,
      maxPendingMessages: resolved.maxPendingMessages,
      global: resolved.global,
      maxAttempts: resolved.worker.maxAttempts,
      logger,
    };
    this.idleWorkerWarningMs = internals.idleWorkerWarningMs ?? IDLE_WORKER_WARNING_MS;
    const ops = { ...sqlWorkerOps<TTx>(adapter, this.db, resolved.worker), ...internals.ops };
    this.worker = new InboxWorker<TTx>({
      ops,
      worker: resolved.worker,
      handlers: resolved.handlers,
      wrappers: resolved.wrappers,
      random: resolved.random,
      observer: resolved.observer,
      logger,
      redact: resolved.redact,
      outage: new SessionOutage(),
    });
  }

  /**
   * Checks the schema (FERRY_SCHEMA_NOT_READY if missing; never migrates) and starts an enabled
   * worker. FERRY_CLOSED once close() was called, before it or while it awaits: no statement is
   * sent after close() (the application may be disconnecting the client; Prisma would reconnect).
   */
  async initialize(): Promise<void> {
    await this.verify('initialize()');
    if (this.options.worker.enabled) this.start();
  }

  /**
   * initialize()'s checks, starting nothing: the schema (FERRY_SCHEMA_NOT_READY) and that the
   * adapter's transactions reach ferry's database. For a framework that checks while its
   * application initializes and starts the worker once every part of it did (@ferry/nestjs), so
   * that a failed check leaves nothing running. FERRY_CLOSED as initialize().
   */
  async verify(what = 'verify()'): Promise<void> {
    const open = (): void => this.assertOpen(what);
    const db = whileOpen(this.db, open);
    await verifySchema(db, { tables: { [TABLE]: REQUIRED_COLUMNS }, requireAllMigrations: false });
    await checkSameDatabase(this.adapter, db, this.options.worker.transactionTimeoutMs, open);
    open();
  }

  private assertOpen(what: string): void {
    const state = this.worker.lifecycle;
    if (state === 'closing' || state === 'closed') {
      throw new FerryError('FERRY_CLOSED', `the inbox is closed (close() was called): ${what} runs nothing`);
    }
  }

  /** Starts polling regardless of worker.enabled (explicit control). */
  start(): void {
    this.warnPoolSize();
    this.worker.start();
  }

  /** Warns once when the adapter's pool cannot hold the worker's lanes beside ferry's own statements. */
  private warnPoolSize(): void {
    if (this.poolSizeWarned) return;
    this.poolSizeWarned = true;
    const warning = poolSizeWarning(this.adapter.connections, this.options.worker.concurrency);
    if (warning !== null)
      this.options.logger?.warn({ option: 'worker.concurrency' }, `ferry inbox: ${warning}`);
  }

  /**
   * Accepts one message and returns its receipt. Invalid input throws FerryValidationError
   * (its code says why); a reused message id with another payload throws
   * InboxFingerprintConflictError; database failure or admission throws a retriable FerryError.
   */
  async accept(input: InboxAcceptInput): Promise<InboxAcceptedReceipt> {
    const [outcome] = await this.acceptDetailed([input]);
    if (!outcome) throw new FerryValidationError('input', 'missing');
    if (outcome.kind === 'invalid') {
      const code = outcome.code as FerryValidationError['code'];
      throw new FerryValidationError('input', outcome.reason, code, outcome.rejectReason);
    }
    if (outcome.kind === 'conflict') throw new InboxFingerprintConflictError(outcome.record.id);
    return outcome;
  }

  /**
   * The transport contract: one result per input, in order, after the rows are committed.
   * At the admission limit it throws InboxAdmissionRejectedError, whose `results` answer
   * every item that is not new (duplicates included) and mark the new ones `refused`.
   * Reads back only each receipt's key (RECEIPT_KEYS): the results carry ids, not receipts.
   */
  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    const outcomes = await this.acceptAs(inputs, RECEIPT_KEYS);
    return outcomes.map((outcome) => toAcceptResult(outcome));
  }

  /** Like acceptMany, with full receipts. */
  acceptDetailed(inputs: readonly InboxAcceptInput[]): Promise<AcceptOutcome[]> {
    return this.acceptAs(inputs, FULL_RECEIPTS);
  }

  private async acceptAs<R extends ReceiptKey>(
    inputs: readonly InboxAcceptInput[],
    shape: ReceiptShape<R>,
  ): Promise<AcceptOutcome<R>[]> {
    const handlers = Object.keys(this.options.handlers);
    // Each input read once (readInputs): the handler check, the spans and the stored rows read the
    // same copy (a getter answering otherwise shifted the handler check's results; review 87).
    const copied = Array.isArray(inputs);
    const read = (copied ? readInputs(inputs) : inputs) as readonly InboxAcceptInput[];
    const spans = startAcceptSpans(read);
    let outcomes: BatchOutcome<R>[];
    try {
      outcomes = await acceptHandled(read, handlers, (ok) =>
        acceptBatch(this.db, ok, this.settings, shape, copied ? 'read' : 'unread'),
      );
    } catch (error) {
      spans.fail(error);
      throw error;
    }
    spans.end(outcomes.map((outcome) => outcome.kind));
    const answered: AcceptOutcome<R>[] = [];
    for (const outcome of outcomes) {
      if (outcome.kind === 'refused') continue;
      answered.push(outcome);
      if (outcome.kind === 'invalid') continue;
      const base = { receiptId: outcome.record.id, consumer: outcome.record.consumer };
      if (outcome.kind === 'accepted') emit(this.emitter, { type: 'accepted', ...base });
      else emit(this.emitter, { type: 'duplicate', ...base, conflict: outcome.kind === 'conflict' });
    }
    if (outcomes.some((outcome) => outcome.kind === 'accepted')) this.checkWorkerStarted();
    if (answered.length < outcomes.length) {
      throw new InboxAdmissionRejectedError(
        this.settings.maxPendingMessages ?? 0,
        outcomes.map((outcome) => toAcceptResult(outcome)),
      );
    }
    return answered;
  }

  /**
   * worker.enabled means "poll once initialize() ran"; an application that accepts but never
   * calls initialize() (nor start()) processes nothing, silently. Said once, at warn, when
   * receipts were accepted and the worker is still idle `idleWorkerWarningMs` later.
   */
  private checkWorkerStarted(): void {
    if (this.idleWorkerCheck !== null || !this.options.worker.enabled) return;
    if (this.worker.lifecycle !== 'idle') {
      this.idleWorkerCheck = 'done';
      return;
    }
    this.idleWorkerCheck = setTimeout(() => {
      this.idleWorkerCheck = 'done';
      if (this.worker.lifecycle !== 'idle') return;
      this.emitter.logger?.warn(
        { consumers: Object.keys(this.options.handlers) },
        'inbox: worker.enabled is set but initialize() was never called: accepted receipts wait unprocessed until initialize() or start() runs',
      );
    }, this.idleWorkerWarningMs);
    this.idleWorkerCheck.unref();
  }

  /**
   * Throws FERRY_HANDLER_MISSING unless this inbox has a handler for `consumer` (an inbox with
   * no handlers at all accepts for any consumer). Transports call it when attached.
   */
  assertHandles(consumer: string): void {
    const handlers = Object.keys(this.options.handlers);
    if (!handlesConsumer(handlers, consumer)) throw handlerMissingError(consumer, handlers);
  }

  /**
   * The worker's lifecycle: 'idle' until started, then 'running', 'closing', 'closed'; 'stopped'
   * when the poll loop stopped on its own because the pool or client it runs on was ended
   * (FERRY_CLOSED: no claim can succeed again; `stopReason` says so, createHealth's liveness
   * reports it down). close() closes a stopped worker as ever; start() starts it again.
   */
  get state(): 'idle' | 'running' | 'stopped' | 'closing' | 'closed' {
    return this.worker.lifecycle;
  }

  /** Why the worker stopped on its own (state 'stopped'), else null. */
  get stopReason(): string | null {
    return this.worker.stopReason;
  }

  /**
   * The worker's outage of the application's pool: its handler transactions got no session since
   * `since` (each claim given back, no attempt spent), whether ferry's own statements work or not;
   * null when there is none (over once one of its handler transactions begins). createHealth's
   * details report it down once it has lasted longer than maxCycleAgeMs.
   */
  get sessionOutage(): InboxSessionOutage | null {
    return this.worker.sessionOutage;
  }

  /**
   * The worker's claims that cycle: given back (uncharged) for leases lost before their handler
   * started, no handler transaction having begun since `since` (a database whose round trips
   * outlast the lease); null when there are none (over once one of its handler transactions
   * begins). createHealth's details report it down once claims were given back so over longer than
   * maxCycleAgeMs (`since` to `lastAt`).
   */
  get claimCycling(): InboxClaimCycling | null {
    return this.worker.claimCycling;
  }

  /** When the worker's poll loop last claimed without an error (createHealth's liveness). */
  get lastCycleAt(): Date | null {
    return this.worker.lastCycleAt;
  }

  /** worker.pollIntervalMs: the idle worker's wait between claims (createHealth's liveness allows it). */
  get pollIntervalMs(): number {
    return this.options.worker.pollIntervalMs;
  }

  /** Claims and processes one batch (up to worker.concurrency receipts). */
  runOnce(): Promise<RunOnceResult> {
    this.warnPoolSize();
    return this.worker.runOnce();
  }

  /** Stops the worker, draining within worker.shutdownTimeoutMs. Safe to call twice. */
  close(): Promise<void> {
    if (this.idleWorkerCheck !== null && this.idleWorkerCheck !== 'done') clearTimeout(this.idleWorkerCheck);
    this.idleWorkerCheck = 'done';
    return this.worker.close();
  }
}

function toAcceptResult(outcome: AcceptOutcome<ReceiptKey>): InboxAcceptResult;
function toAcceptResult(outcome: BatchOutcome<ReceiptKey>): InboxAdmissionResult;
function toAcceptResult(outcome: BatchOutcome<ReceiptKey>): InboxAdmissionResult {
  if (outcome.kind === 'refused') return { kind: 'refused', code: outcome.code, reason: outcome.reason };
  if (outcome.kind === 'invalid') {
    const { code, reason, rejectReason } = outcome;
    return { kind: 'invalid', code, reason, rejectReason };
  }
  if (outcome.kind === 'conflict') return { kind: 'conflict', id: outcome.record.id, reason: outcome.reason };
  return { kind: outcome.kind, id: outcome.record.id };
}

/**
 * Creates an Inbox whose handlers' `context.tx` is the client's own transaction type, inferred
 * from `client` (Prisma's generated `Prisma.TransactionClient`) or from the adapter (`PoolClient`
 * for `pgTransactions`, `Transaction<DB>` for `kyselyTransactions`), with no type argument to
 * write. `new Inbox(prisma)` keeps the `PrismaTransactionLike` default unless given `Inbox<Tx>`.
 */
export function createInbox<TTx = PrismaTransactionLike>(
  client: InboxClient<TTx> | TransactionAdapter<TTx>,
  options: InboxOptions<TTx> = {},
  internals: InboxInternals<TTx> = {},
): Inbox<TTx> {
  return new Inbox<TTx>(client, options, internals);
}

/** `db`, each statement and transaction first calling `open()` (which throws once its owner closed). */
function whileOpen(db: SqlExecutor, open: () => void): SqlExecutor {
  return {
    inTransaction: db.inTransaction,
    async query<T>(text: string, values?: readonly unknown[], options?: StatementOptions): Promise<T[]> {
      open();
      return db.query<T>(text, values, options);
    },
    async execute(text: string, values?: readonly unknown[], options?: StatementOptions): Promise<number> {
      open();
      return db.execute(text, values, options);
    },
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T> {
      open();
      return db.transaction(work, options);
    },
  };
}
