import type { LoggerService } from '@nestjs/common';
import {
  createHealth,
  type FerryHealth,
  type HealthCheck,
  type HealthOptions,
  type LogFn,
  type Logger,
  type LoopSource,
} from '@ferry/core';
import type { InboxService } from './inbox.services';
import type { OutboxRelayService } from './outbox.services';

/** Nest's health-indicator result shape (`@nestjs/terminus`): `{ [key]: { status, ...details } }`. */
export type FerryHealthResult = Record<string, { status: 'up' | 'down'; checks: readonly HealthCheck[] }>;

export type HealthProbe = 'liveness' | 'readiness' | 'details';

/**
 * ferry's health as a Nest health indicator, without depending on @nestjs/terminus: call
 * `isHealthy()` from a terminus HealthCheck (throw when `status` is `down`) or from your own
 * controller. Build it with `FerryHealthIndicator.create()` from the module services.
 */
export class FerryHealthIndicator {
  constructor(readonly health: FerryHealth) {}

  static create(
    options: Omit<HealthOptions, 'relay' | 'inbox'> & { relay?: OutboxRelayService; inbox?: InboxService },
  ): FerryHealthIndicator {
    const { relay, inbox, ...rest } = options;
    return new FerryHealthIndicator(
      createHealth({
        ...rest,
        relay: relay?.relay,
        inbox: inbox === undefined ? undefined : inboxSource(inbox),
      }),
    );
  }

  async isHealthy(key = 'ferry', probe: HealthProbe = 'readiness'): Promise<FerryHealthResult> {
    const report = await this.health[probe]();
    return { [key]: { status: report.status, checks: report.checks } };
  }
}

/** The InboxService's worker as a liveness source (not alive before init or once closing; left out when disabled). */
function inboxSource(service: InboxService): LoopSource {
  return {
    get lastCycleAt() {
      return service.state === 'running' ? service.inbox.lastCycleAt : null;
    },
    get state() {
      // Before app.init() and until the worker started: not live (README), not "starting". A
      // worker switched off (worker.enabled false) and not started by hand is left out, as an
      // OutboxRelayService without a relay is.
      if (service.state === 'ready' && !service.inbox.options.worker.enabled) return 'disabled';
      return service.state === 'created' || service.state === 'ready' ? 'not started' : service.state;
    },
    get stopReason() {
      // The worker stopped on its own: its client was ended (core's Inbox.stopReason).
      return service.state === 'stopped' ? service.inbox.stopReason : null;
    },
    get sessionOutage() {
      // The worker's outage of the application's pool (core's Inbox.sessionOutage): details only.
      const started = service.state === 'running' || service.state === 'stopped';
      return started ? service.inbox.sessionOutage : null;
    },
    get claimCycling() {
      // The worker's claims that cycle (core's Inbox.claimCycling): details only.
      const started = service.state === 'running' || service.state === 'stopped';
      return started ? service.inbox.claimCycling : null;
    },
    get pollIntervalMs() {
      // Read only of a running worker: in every other state it is not live (or left out) anyway,
      // and a service closed before module init has no core Inbox.
      return service.state === 'running' ? service.inbox.pollIntervalMs : undefined;
    },
  };
}

function text(fields: object | string, message?: string): string {
  if (typeof fields === 'string') return fields;
  const shown = Object.fromEntries(
    Object.entries(fields).map(([k, v]) => [k, v instanceof Error ? `${v.name}: ${v.message}` : v]),
  );
  return `${message ?? ''} ${JSON.stringify(shown)}`.trim();
}

/**
 * Adapts Nest's LoggerService to ferry's `logger` option (fields become a JSON suffix). What
 * Nest's method returns is passed back, so that ferry's guard (guardLogger) handles the
 * rejection of an async LoggerService instead of leaving it unhandled.
 */
export function fromNestLogger(nest: LoggerService, context = 'ferry'): Logger {
  const at = (write: (message: string, context: string) => unknown): LogFn =>
    ((fields: object | string, message?: string) => write(text(fields, message), context)) as LogFn;
  return {
    error: at((m, c) => nest.error(m, c)),
    warn: at((m, c) => nest.warn(m, c)),
    info: at((m, c) => nest.log(m, c)),
    debug: at((m, c) => (nest.debug ?? nest.verbose)?.call(nest, m, c)),
  };
}
