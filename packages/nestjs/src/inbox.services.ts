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

/** Scope-bound inbox admin: forTenant(id) / forGlobal(). Always registered. */
export class InboxAdminService extends InboxAdmin {}

/** Cross-tenant inbox admin. Registered only with `privilegedAdmin: true` (top level). */
export class InboxPrivilegedAdminService extends InboxPrivilegedAdmin {}

export type InboxServiceState = 'created' | 'ready' | 'running' | 'closing' | 'closed';

/** What the module hands the service; handlers are found at module init. */
export interface InboxServiceConfig {
  readonly client: PrismaClientLike;
  readonly options: Omit<InboxOptions<unknown>, 'handlers'>;
  readonly findHandlers: () => Record<string, InboxHandler<unknown>>;
}

/**
 * The inbox of the application: acceptance (pass it to a transport as its InboxAcceptor)
 * and the worker. The core Inbox is created at module init, once handlers are discovered;
 * the schema is checked and an enabled worker started on application bootstrap; the worker
 * drains on module destroy, before a Prisma module the inbox module imports is destroyed.
 */
// Required<>: an optional member core adds to InboxAcceptor (as assertHandles was) cannot be left out here.
export class InboxService
  implements Required<InboxAcceptor>, OnModuleInit, OnApplicationBootstrap, OnModuleDestroy
{
  private current: Inbox<unknown> | undefined;
  private status: InboxServiceState = 'created';
  private closing: Promise<void> | undefined;

  constructor(private readonly config: InboxServiceConfig) {}

  get state(): InboxServiceState {
    return this.status;
  }

  /** The core Inbox; throws FerryError FERRY_CLOSED before module init. */
  get inbox(): Inbox<unknown> {
    if (!this.current) {
      throw new FerryError(
        'FERRY_CLOSED',
        'the inbox is not initialized yet: it is created when the Nest module initializes (app.init() / listen())',
      );
    }
    return this.current;
  }

  get maxPayloadBytes(): number {
    return (
      this.current?.maxPayloadBytes ?? this.config.options.maxPayloadBytes ?? INBOX_DEFAULTS.maxPayloadBytes
    );
  }

  onModuleInit(): void {
    if (this.current) return;
    this.current = new Inbox<unknown>(this.config.client, {
      ...this.config.options,
      handlers: this.config.findHandlers(),
    });
    this.status = 'ready';
  }

  /** Checks the schema (FERRY_SCHEMA_NOT_READY) and starts the worker when worker.enabled. */
  async onApplicationBootstrap(): Promise<void> {
    await this.inbox.initialize();
    if (this.inbox.options.worker.enabled) this.status = 'running';
  }

  async onModuleDestroy(): Promise<void> {
    await this.close();
  }

  async accept(input: InboxAcceptInput): Promise<InboxAcceptedReceipt> {
    return this.accepting().accept(input);
  }

  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    return this.accepting().acceptMany(inputs);
  }

  async acceptDetailed(inputs: readonly InboxAcceptInput[]): Promise<AcceptOutcome[]> {
    return this.accepting().acceptDetailed(inputs);
  }

  /**
   * The inbox, for acceptance: FERRY_CLOSED once the module is being destroyed. A transport
   * consumer still attached then (closed after this module) holds its deliveries for the broker
   * to redeliver, instead of writing through a Prisma client the application disconnects next
   * (Prisma reconnects on the next query, and the process never ends).
   */
  private accepting(): Inbox<unknown> {
    if (this.status === 'closing' || this.status === 'closed') {
      throw new FerryError(
        'FERRY_CLOSED',
        'the inbox module is shutting down (app.close()): acceptance stopped; close transport consumers before it',
      );
    }
    return this.inbox;
  }

  /**
   * Throws FerryError FERRY_HANDLER_MISSING unless a handler is registered for `consumer`:
   * every transport calls it when attached, so a misspelt consumer name fails there instead of
   * attaching. Before module init (handlers not discovered yet) it throws FERRY_CLOSED.
   */
  assertHandles(consumer: string): void {
    this.inbox.assertHandles(consumer);
  }

  /** Claims and processes one batch (explicit bounded execution, tests). */
  async runOnce(): Promise<RunOnceResult> {
    return this.inbox.runOnce();
  }

  /** Starts polling regardless of worker.enabled. */
  start(): void {
    this.inbox.start();
    this.status = 'running';
  }

  /** Stops the worker, draining within worker.shutdownTimeoutMs. Safe to call twice. */
  close(): Promise<void> {
    const inbox = this.current;
    if (!inbox) return Promise.resolve();
    this.closing ??= (async () => {
      this.status = 'closing';
      await inbox.close();
      this.status = 'closed';
    })();
    return this.closing;
  }
}
