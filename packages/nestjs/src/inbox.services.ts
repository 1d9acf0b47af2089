import type { OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import {
  FerryError,
  INBOX_DEFAULTS,
  Inbox,
  InboxAdmin,
  InboxPrivilegedAdmin,
  type AcceptOutcome,
  type InboxAcceptedReceipt,
  type InboxAcceptInput,
  type InboxAcceptor,
  type InboxAcceptResult,
  type InboxHandler,
  type InboxOptions,
  type PrismaClientLike,
  type RunOnceResult,
} from '@ferry/core';
import { closedError } from './closed';

/** Scope-bound inbox admin: forTenant(id) / forGlobal(). Always registered. */
export class InboxAdminService extends InboxAdmin {}

/** Cross-tenant inbox admin. Registered only with `privilegedAdmin: true` (top level). */
export class InboxPrivilegedAdminService extends InboxPrivilegedAdmin {}

export type InboxServiceState = 'created' | 'ready' | 'running' | 'stopped' | 'closing' | 'closed';

/** What the module hands the service; handlers are found at module init. */
export interface InboxServiceConfig {
  readonly client: PrismaClientLike;
  readonly options: Omit<InboxOptions<unknown>, 'handlers'>;
  readonly findHandlers: () => Record<string, InboxHandler<unknown>>;
}

/** InboxService.state from the core inbox's worker: one state, however the inbox is driven. */
const STATE_OF_WORKER = {
  idle: 'ready',
  running: 'running',
  stopped: 'stopped',
  closing: 'closing',
  closed: 'closed',
} as const satisfies Record<Inbox<unknown>['state'], InboxServiceState>;

/**
 * The inbox of the application: acceptance (pass it to a transport as its InboxAcceptor)
 * and the worker. The core Inbox is created at module init, once handlers are discovered;
 * the schema is checked and an enabled worker started on application bootstrap; the worker
 * drains on module destroy, before a Prisma module the inbox module imports is destroyed.
 * A close that comes first (before module init, or while bootstrap awaits) is remembered: the
 * init then creates and starts nothing and rejects with FERRY_CLOSED (review 74).
 */
// Required<>: an optional member core adds to InboxAcceptor (as assertHandles was) cannot be left out here.
export class InboxService
  implements Required<InboxAcceptor>, OnModuleInit, OnApplicationBootstrap, OnModuleDestroy
{
  private current: Inbox<unknown> | undefined;
  /** Set by the first close(), whenever it comes; settled once the worker drained. */
  private closing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly config: InboxServiceConfig) {}

  /**
   * 'created' before module init, then the core inbox's worker ('ready' while idle), however it
   * was started or closed (this service, or `inbox` directly); 'closing' / 'closed' from close();
   * 'stopped' when the worker stopped on its own, its database client ended (core's Inbox.state).
   */
  get state(): InboxServiceState {
    if (this.closing) return this.closed ? 'closed' : 'closing';
    return this.current ? STATE_OF_WORKER[this.current.state] : 'created';
  }

  /** The core Inbox; throws FerryError FERRY_CLOSED before module init (and when closed before it). */
  get inbox(): Inbox<unknown> {
    if (this.current) return this.current;
    if (this.closing)
      throw closedError('InboxService', '`inbox` (not created: the close came before module init)');
    throw new FerryError(
      'FERRY_CLOSED',
      'the inbox is not initialized yet: it is created when the Nest module initializes (app.init() / listen())',
    );
  }

  get maxPayloadBytes(): number {
    return (
      this.current?.maxPayloadBytes ?? this.config.options.maxPayloadBytes ?? INBOX_DEFAULTS.maxPayloadBytes
    );
  }

  /**
   * Creates the core inbox (handlers discovered) and checks the schema (FERRY_SCHEMA_NOT_READY):
   * here, before any bootstrap hook started a relay or a worker, because Nest 11's app.close()
   * rethrows a failed init without running a destroy hook, and what ran went on (review 106).
   * Once the service was closed, the inbox it creates is closed at once (its worker never starts)
   * and module init rejects with FERRY_CLOSED.
   */
  async onModuleInit(): Promise<void> {
    this.current ??= new Inbox<unknown>(this.config.client, {
      ...this.config.options,
      handlers: this.config.findHandlers(),
    });
    if (this.closing) {
      await this.current.close();
      throw closedError('InboxService', 'module init');
    }
    await this.current.verify('module init (the schema check)');
  }

  /** Starts an enabled worker once every provider finished onModuleInit (the schema was checked then). */
  onApplicationBootstrap(): void {
    const inbox = this.open('application bootstrap');
    if (inbox.options.worker.enabled) inbox.start();
  }

  /**
   * Checks the schema (FERRY_SCHEMA_NOT_READY) and starts the worker when worker.enabled (spec
   * 002). FERRY_CLOSED once closed, also when close() came while it awaited: the core inbox then
   * sends no further statement and starts nothing.
   */
  async initialize(): Promise<void> {
    await this.open('initialize()').initialize();
  }

  async onModuleDestroy(): Promise<void> {
    await this.close();
  }

  async accept(input: InboxAcceptInput): Promise<InboxAcceptedReceipt> {
    return this.accepting('accept()').accept(input);
  }

  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    return this.accepting('acceptMany()').acceptMany(inputs);
  }

  async acceptDetailed(inputs: readonly InboxAcceptInput[]): Promise<AcceptOutcome[]> {
    return this.accepting('acceptDetailed()').acceptDetailed(inputs);
  }

  /**
   * The inbox, for acceptance: FERRY_CLOSED once the module is being destroyed (or the core inbox
   * closed). A transport consumer still attached then (closed after this module) holds its
   * deliveries for the broker to redeliver, instead of writing through a Prisma client the
   * application disconnects next (Prisma reconnects on the next query, and the process never ends).
   */
  private accepting(what: string): Inbox<unknown> {
    if (this.state === 'closing' || this.state === 'closed') {
      throw closedError('InboxService', `${what} (acceptance stopped; close transport consumers before it)`);
    }
    return this.inbox;
  }

  /** The core inbox to run something on: FERRY_CLOSED once this service was closed. */
  private open(what: string): Inbox<unknown> {
    if (this.closing) throw closedError('InboxService', what);
    return this.inbox;
  }

  /**
   * Throws FerryError FERRY_HANDLER_MISSING unless a handler is registered for `consumer`:
   * every transport calls it when attached, so a misspelt consumer name fails there instead of
   * attaching. Before module init (handlers not discovered yet) and once closing it throws
   * FERRY_CLOSED: a consumer attached then could accept nothing.
   */
  assertHandles(consumer: string): void {
    this.accepting('a transport attach').assertHandles(consumer);
  }

  /** Claims and processes one batch (explicit bounded execution, tests). */
  async runOnce(): Promise<RunOnceResult> {
    return this.open('runOnce()').runOnce();
  }

  /** Starts polling regardless of worker.enabled. */
  start(): void {
    this.open('start()').start();
  }

  /**
   * Stops the worker, draining within worker.shutdownTimeoutMs. Safe to call twice, and before
   * module init: the service then stays closed (its init creates and starts nothing).
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.current?.close();
      this.closed = true;
    })();
    return this.closing;
  }
}
