import type { InboxAcceptInput, InboxAcceptor, InboxAcceptResult } from '../contracts';
import { FerryValidationError } from '../errors';
import { defaultLogger } from '../observe/logger';
import { checkSchema } from '../schema/checkSchema';
import {
  fromPrisma,
  type PrismaClientLike,
  type PrismaTransactionLike,
  type SqlExecutor,
} from '../sql/executor';
import { acceptBatch, type AcceptOutcome, type AcceptSettings } from './accept';
import { InboxFingerprintConflictError } from './errors';
import { resolveInboxOptions, type InboxOptions, type ResolvedInboxOptions } from './options';
import { emit } from './process';
import { REQUIRED_COLUMNS, TABLE } from './sql/fragments';
import type { InboxRecord } from './types';
import { InboxWorker, type RunOnceResult } from './worker';
import { sqlWorkerOps, type InboxWorkerOps } from './workerOps';

export type InboxAcceptedReceipt =
  | { readonly kind: 'accepted'; readonly record: InboxRecord }
  | { readonly kind: 'duplicate'; readonly record: InboxRecord };

export interface InboxInternals<TTx> {
  /** Replace individual worker transitions (fault injection in tests). */
  readonly ops?: Partial<InboxWorkerOps<TTx>>;
}

/**
 * The inbox service: acceptance (the transports' InboxAcceptor) and the worker.
 * `client` is the application's Prisma client; handler transactions are its interactive
 * transactions, so `context.tx` is typed TTx (the application's transaction client).
 */
export class Inbox<TTx = PrismaTransactionLike> implements InboxAcceptor {
  readonly options: ResolvedInboxOptions<TTx>;
  readonly maxPayloadBytes: number;
  private readonly db: SqlExecutor;
  private readonly worker: InboxWorker<TTx>;
  private readonly settings: AcceptSettings;
  private readonly emitter: Pick<ResolvedInboxOptions<TTx>, 'observer' | 'logger'>;

  constructor(
    client: PrismaClientLike,
    options: InboxOptions<TTx> = {},
    internals: InboxInternals<TTx> = {},
  ) {
    const resolved = resolveInboxOptions(options);
    const logger = resolved.logger ?? defaultLogger('ferry.inbox');
    this.options = { ...resolved, logger };
    this.maxPayloadBytes = resolved.maxPayloadBytes;
    this.db = fromPrisma(client);
    this.emitter = { observer: resolved.observer, logger };
    this.settings = {
      maxPayloadBytes: resolved.maxPayloadBytes,
      maxPendingMessages: resolved.maxPendingMessages,
      global: resolved.global,
      maxAttempts: resolved.worker.maxAttempts,
    };
    const ops = { ...sqlWorkerOps<TTx>(client, this.db, resolved.worker), ...internals.ops };
    this.worker = new InboxWorker<TTx>({
      ops,
      worker: resolved.worker,
      handlers: resolved.handlers,
      wrappers: resolved.wrappers,
      random: resolved.random,
      observer: resolved.observer,
      logger,
    });
  }

  /** Checks the schema (FERRY_SCHEMA_NOT_READY if missing; never migrates) and starts an enabled worker. */
  async initialize(): Promise<void> {
    await checkSchema(this.db, { tables: { [TABLE]: REQUIRED_COLUMNS }, requireAllMigrations: false });
    if (this.options.worker.enabled) this.worker.start();
  }

  /** Starts polling regardless of worker.enabled (explicit control). */
  start(): void {
    this.worker.start();
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
      throw new FerryValidationError('input', outcome.reason, outcome.code as FerryValidationError['code']);
    }
    if (outcome.kind === 'conflict') throw new InboxFingerprintConflictError(outcome.record.id);
    return outcome;
  }

  /** The transport contract: one result per input, in order, after the rows are committed. */
  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    const outcomes = await this.acceptDetailed(inputs);
    return outcomes.map((outcome): InboxAcceptResult => {
      if (outcome.kind === 'invalid') return { kind: 'invalid', code: outcome.code, reason: outcome.reason };
      if (outcome.kind === 'conflict')
        return { kind: 'conflict', id: outcome.record.id, reason: outcome.reason };
      return { kind: outcome.kind, id: outcome.record.id };
    });
  }

  /** Like acceptMany, with full receipts. */
  async acceptDetailed(inputs: readonly InboxAcceptInput[]): Promise<AcceptOutcome[]> {
    const outcomes = await acceptBatch(this.db, inputs, this.settings);
    for (const outcome of outcomes) {
      if (outcome.kind === 'invalid') continue;
      const base = { receiptId: outcome.record.id, consumer: outcome.record.consumer };
      if (outcome.kind === 'accepted') emit(this.emitter, { type: 'accepted', ...base });
      else emit(this.emitter, { type: 'duplicate', ...base, conflict: outcome.kind === 'conflict' });
    }
    return outcomes;
  }

  /** Claims and processes one batch (up to worker.concurrency receipts). */
  runOnce(): Promise<RunOnceResult> {
    return this.worker.runOnce();
  }

  /** Stops the worker, draining within worker.shutdownTimeoutMs. Safe to call twice. */
  close(): Promise<void> {
    return this.worker.close();
  }
}
