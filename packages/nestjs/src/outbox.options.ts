import type { InjectionToken, ModuleMetadata } from '@nestjs/common';
import {
  OUTBOX_OPTION_KEYS,
  resolveOutboxOptions,
  type EnvelopeLimits,
  type Logger,
  type OutboxObserver,
  type OutboxOptions,
  type Publisher,
  type ResolvedOutboxOptions,
} from '@ferry/core';
import { booleanOption, knownKeysOption, nonEmptyOption, type OptionKeys } from '@ferry/core/transport';
import type { FerryAsyncBase } from './async-options';

/** Options that may also come from a forRootAsync factory. */
export interface OutboxSettings extends OutboxOptions {
  /** Relay control; the relay exists only when a publisher is configured. */
  relay?: {
    /** Default true (when a publisher is configured). */
    enabled?: boolean;
    /** Connection string for LISTEN wake-ups; without it the relay only polls. */
    listenUrl?: string;
  };
  /** Envelope size limits checked by emit(). */
  limits?: Partial<EnvelopeLimits>;
  /** One function of every OutboxEvent (emit's `inserted` and the relay's); checked by core. */
  observer?: OutboxObserver;
  logger?: Logger;
}

/** Registration options: fixed when the module is built (top level in forRootAsync). */
export interface OutboxRegistration {
  /** Injection token of the application's Prisma client provider (e.g. PrismaService). */
  prisma: InjectionToken;
  /** A Publisher instance or the injection token of a Publisher provider. Without it no relay runs. */
  publisher?: Publisher | InjectionToken;
  /** Register the module globally. Default false. */
  isGlobal?: boolean;
}

export interface OutboxModuleOptions extends OutboxRegistration, OutboxSettings {
  /** Modules that export `prisma` (and a publisher token). */
  imports?: ModuleMetadata['imports'];
}

export interface OutboxModuleAsyncOptions extends FerryAsyncBase<OutboxSettings>, OutboxRegistration {}

/** OutboxSettings after validation. */
export interface ResolvedOutboxSettings {
  /** Resolved once, here; the relay and the emitter take these as they are. */
  readonly options: ResolvedOutboxOptions;
  readonly relay: { readonly enabled: boolean; readonly listenUrl: string | undefined };
  readonly limits: Partial<EnvelopeLimits> | undefined;
  readonly observer: OutboxObserver | undefined;
  readonly logger: Logger | undefined;
}

/** Core's option keys (taken from @ferry/core, so a new core option needs no edit here) and the module's own. */
export const OUTBOX_SETTINGS_KEYS: ReadonlySet<string> = new Set<string>([
  ...OUTBOX_OPTION_KEYS,
  'relay',
  'limits',
  'observer',
  'logger',
]);

const RELAY_KEYS = { enabled: true, listenUrl: true } as const satisfies OptionKeys<
  NonNullable<OutboxSettings['relay']>
>;

function resolveRelay(relay: OutboxSettings['relay']): ResolvedOutboxSettings['relay'] {
  relay = knownKeysOption('relay.', relay, RELAY_KEYS);
  return {
    enabled: booleanOption('relay.enabled', relay?.enabled ?? true),
    listenUrl:
      relay?.listenUrl === undefined ? undefined : nonEmptyOption('relay.listenUrl', relay.listenUrl),
  };
}

/**
 * Validates module settings once, at module init: core's options with core's
 * resolveOutboxOptions, the module's own here. Throws FerryConfigError.
 */
export function resolveOutboxSettings(settings: Record<string, unknown>): ResolvedOutboxSettings {
  settings = knownKeysOption('', settings, [...OUTBOX_SETTINGS_KEYS]);
  const raw: OutboxOptions = {};
  for (const key of OUTBOX_OPTION_KEYS) {
    if (settings[key] !== undefined) (raw as Record<string, unknown>)[key] = settings[key];
  }
  const s = settings as OutboxSettings;
  return {
    options: resolveOutboxOptions(raw),
    relay: resolveRelay(s.relay),
    limits: s.limits,
    observer: s.observer,
    logger: s.logger,
  };
}

/** The non-registration part of forRoot options, as a factory would return it. */
export function outboxSettingsOf(options: OutboxModuleOptions): OutboxSettings {
  const { prisma: _p, publisher: _pub, isGlobal: _g, imports: _i, ...settings } = options;
  return settings;
}
