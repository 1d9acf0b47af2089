import type { OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { FerryConfigError } from '@ferry/core';
import { closedError } from './closed';
import type {
  AdminResult,
  AuditOptions,
  CycleResult,
  Emitter,
  HealthThresholds,
  ListQuery,
  ListSummaryQuery,
  OperatorOutboxAdmin,
  OutboxAdmin,
  OutboxEventInput,
  OutboxHealth,
  OutboxPage,
  OutboxRecord,
  OutboxStats,
  OutboxSummary,
  PrismaTransactionLike,
  PurgeSentArgs,
  Relay,
  ReleaseArgs,
  ReleaseResult,
  SqlExecutor,
} from '@ferry/core';

/** Emits outbox events inside the caller's Prisma transaction (`tx` from prisma.$transaction). */
export class OutboxEmitter implements Emitter {
  constructor(private readonly emitter: Emitter) {}

  emit(tx: PrismaTransactionLike | SqlExecutor, event: OutboxEventInput): Promise<{ id: string }> {
    return this.emitter.emit(tx, event);
  }

  emitMany(
    tx: PrismaTransactionLike | SqlExecutor,
    events: readonly OutboxEventInput[],
  ): Promise<{ ids: string[] }> {
    return this.emitter.emitMany(tx, events);
  }
}

/**
 * Cross-tenant outbox operator API (retry, markFailed, release, list, stats, health, purge; the
 * mutations are audited). Inject it
 * only into authorized control-plane code; use OutboxTenantAdminService for tenant-bound work.
 */
export class OutboxOperatorService implements OperatorOutboxAdmin {
  constructor(private readonly admin: OperatorOutboxAdmin) {}

  forTenant(tenantId: string): OutboxAdmin {
    return this.admin.forTenant(tenantId);
  }
  retry(id: string, audit?: AuditOptions): Promise<AdminResult> {
    return this.admin.retry(id, audit);
  }
  retryMany(ids: readonly string[], audit?: AuditOptions): Promise<AdminResult[]> {
    return this.admin.retryMany(ids, audit);
  }
  markFailed(id: string, reason: string, audit?: Omit<AuditOptions, 'reason'>): Promise<AdminResult> {
    return this.admin.markFailed(id, reason, audit);
  }
  release(args?: ReleaseArgs): Promise<ReleaseResult> {
    return this.admin.release(args);
  }
  get(id: string): Promise<OutboxRecord | null> {
    return this.admin.get(id);
  }
  list(query?: ListQuery): Promise<OutboxPage<OutboxRecord>>;
  list(query: ListSummaryQuery): Promise<OutboxPage<OutboxSummary>>;
  list(query?: ListQuery | ListSummaryQuery): Promise<OutboxPage<OutboxRecord> | OutboxPage<OutboxSummary>> {
    // The same call either way, narrowed to each of the admin's overloads (a summary without payloads).
    return query?.payload === false ? this.admin.list(query) : this.admin.list(query);
  }
  stats(): Promise<OutboxStats> {
    return this.admin.stats();
  }
  health(thresholds?: HealthThresholds): Promise<OutboxHealth> {
    return this.admin.health(thresholds);
  }
  purgeSent(args: PurgeSentArgs): Promise<{ deleted: number }> {
    return this.admin.purgeSent(args);
  }
}

/** Tenant-bound outbox admin: bind the tenant from authenticated context with forTenant(). */
export class OutboxTenantAdminService {
  constructor(private readonly admin: OperatorOutboxAdmin) {}

  forTenant(tenantId: string): OutboxAdmin {
    return this.admin.forTenant(tenantId);
  }
}

/**
 * Owns the relay: started on application bootstrap, drained on module destroy (before a
 * Prisma module the outbox module imports is destroyed). `relay` is undefined when no
 * publisher is configured or relay.enabled is false. Closed first (before bootstrap, e.g.
 * app.close() during an HTTP app's init), its bootstrap starts nothing and rejects with
 * FERRY_CLOSED (review 74). The relay's schema is checked at module init (FERRY_SCHEMA_NOT_READY),
 * before any bootstrap hook starts a loop, as the inbox's (review 115).
 */
export class OutboxRelayService implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private closing: Promise<void> | undefined;

  /**
   * `verifyWithoutRelay`: without a relay (emit only), the module's check of the outbox table at
   * init (core's verifyOutboxSchema), so an emit-only application refuses an unmigrated database
   * at start too, not at its first emit (review 119).
   */
  constructor(
    readonly relay: Relay | undefined,
    private readonly verifyWithoutRelay?: () => Promise<void>,
  ) {}

  /** One relay cycle (tests, explicit control). Throws if no relay is configured; FERRY_CLOSED once closed (core's relay). */
  runOnce(): Promise<CycleResult> {
    if (!this.relay) {
      throw new FerryConfigError(
        'publisher',
        'no outbox relay is configured (no publisher, or relay.enabled: false)',
      );
    }
    return this.relay.runOnce();
  }

  /**
   * Checks the relay's table (core's relay.verify(): FERRY_SCHEMA_NOT_READY listing what is
   * missing), starting nothing: an unmigrated database fails app.init() as the InboxModule's does,
   * instead of a relay logging that error at every back-off. FERRY_CLOSED once closed.
   */
  async onModuleInit(): Promise<void> {
    if (this.closing) throw closedError('OutboxRelayService', 'module init');
    if (this.relay) await this.relay.verify();
    else await this.verifyWithoutRelay?.();
  }

  onApplicationBootstrap(): void {
    if (this.closing) throw closedError('OutboxRelayService', 'application bootstrap');
    this.relay?.start();
  }

  /** Drains the relay. Safe to call twice, and before bootstrap: the relay then never starts. */
  onModuleDestroy(): Promise<void> {
    this.closing ??= this.relay?.close() ?? Promise.resolve();
    return this.closing;
  }
}
