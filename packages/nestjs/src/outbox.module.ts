import { Module, type DynamicModule, type InjectionToken, type Provider } from '@nestjs/common';
import {
  FerryConfigError,
  createEmitter,
  createOutboxAdmin,
  createRelay,
  fromPrisma,
  verifyOutboxSchema,
  type OperatorOutboxAdmin,
  type Publisher,
} from '@ferry/core';
import type { OptionKeys } from '@ferry/core/transport';
import { boundedFactory, checkRegistration, requirePrismaToken } from './async-options';
import {
  outboxSettingsOf,
  resolveOutboxSettings,
  type OutboxModuleAsyncOptions,
  type OutboxModuleOptions,
  type OutboxRegistration,
  type ResolvedOutboxSettings,
} from './outbox.options';
import {
  OutboxEmitter,
  OutboxOperatorService,
  OutboxRelayService,
  OutboxTenantAdminService,
} from './outbox.services';
import { asPrismaClient } from './prisma';
import { nameOf, singletonCheck, type SingletonDependency } from './scope';
import { OUTBOX_MODULE_OPTIONS, OUTBOX_PUBLISHER, OUTBOX_RESOLVED } from './tokens';

const EXPORTS = [OutboxEmitter, OutboxOperatorService, OutboxTenantAdminService, OutboxRelayService];

function isPublisherInstance(value: unknown): value is Publisher {
  return typeof value === 'object' && value !== null && typeof (value as Publisher).publish === 'function';
}

function publisherProvider(publisher: OutboxRegistration['publisher']): Provider | undefined {
  if (publisher === undefined) return undefined;
  if (isPublisherInstance(publisher)) return { provide: OUTBOX_PUBLISHER, useValue: publisher };
  // Nest's injection tokens are classes, strings and symbols: any other value (a transport's
  // connection or options passed by mistake) named neither `publisher` nor the cause in Nest's error.
  const kind = typeof publisher;
  if (kind !== 'function' && kind !== 'string' && kind !== 'symbol') {
    throw new FerryConfigError(
      'publisher',
      `must be a Publisher (an object with a publish() method) or the injection token of one (a class, string or symbol), got ${publisher === null ? 'null' : Array.isArray(publisher) ? 'an array' : kind === 'object' ? 'an object without publish()' : `a ${kind}`}`,
    );
  }
  return { provide: OUTBOX_PUBLISHER, useExisting: publisher as InjectionToken };
}

/** An admin whose statement deadline is the module's `statementTimeout` (the relay's). */
function adminOf(resolved: ResolvedOutboxSettings, client: unknown): OperatorOutboxAdmin {
  return createOutboxAdmin(fromPrisma(asPrismaClient(client)), {
    statementTimeoutMs: resolved.options.statementTimeout,
  });
}

/** What the services depend on, in the order a request-scoped one is blamed (singletonCheck). */
function dependencies(
  prisma: InjectionToken,
  publisher: OutboxRegistration['publisher'],
  settings: 'forRoot' | 'inject',
): SingletonDependency[] {
  return [
    { option: 'prisma', token: prisma, local: false, what: `the Prisma client provider ${nameOf(prisma)}` },
    ...(publisher === undefined || isPublisherInstance(publisher)
      ? []
      : [
          {
            option: 'publisher',
            token: OUTBOX_PUBLISHER,
            local: true,
            what: `the publisher provider ${nameOf(publisher)}`,
          },
        ]),
    ...(settings === 'inject'
      ? [
          {
            option: 'inject',
            token: OUTBOX_MODULE_OPTIONS,
            local: true,
            what: 'a provider the OutboxModule.forRootAsync factory injects',
          },
        ]
      : []),
  ];
}

function serviceProviders(
  prisma: InjectionToken,
  publisher: OutboxRegistration['publisher'],
  settings: 'forRoot' | 'inject',
): Provider[] {
  const withPublisher = publisher !== undefined;
  return [
    singletonCheck('OutboxModule', dependencies(prisma, publisher, settings)),
    {
      provide: OUTBOX_RESOLVED,
      useFactory: (settings: Record<string, unknown>) => resolveOutboxSettings(settings),
      inject: [OUTBOX_MODULE_OPTIONS],
    },
    {
      provide: OutboxEmitter,
      useFactory: (resolved: ResolvedOutboxSettings) =>
        new OutboxEmitter(
          createEmitter({
            retry: { maxRetries: resolved.options.retry.maxRetries },
            limits: resolved.limits,
            channel: resolved.options.channel,
            observer: resolved.observer,
            logger: resolved.logger,
            statementTimeoutMs: resolved.options.statementTimeout,
          }),
        ),
      inject: [OUTBOX_RESOLVED],
    },
    {
      provide: OutboxOperatorService,
      useFactory: (resolved: ResolvedOutboxSettings, client: unknown) =>
        new OutboxOperatorService(adminOf(resolved, client)),
      inject: [OUTBOX_RESOLVED, prisma],
    },
    {
      provide: OutboxTenantAdminService,
      useFactory: (resolved: ResolvedOutboxSettings, client: unknown) =>
        new OutboxTenantAdminService(adminOf(resolved, client)),
      inject: [OUTBOX_RESOLVED, prisma],
    },
    {
      provide: OutboxRelayService,
      useFactory: (
        resolved: ResolvedOutboxSettings,
        settings: { readonly relay?: { readonly enabled?: unknown } },
        client: unknown,
        publisher?: Publisher,
      ) => {
        // Asked for a relay explicitly, with nothing to publish to: events would stay PENDING.
        if (!publisher && settings.relay?.enabled === true) {
          throw new FerryConfigError(
            'relay.enabled',
            'is true but no publisher is configured: pass publisher (a Publisher or its injection token), or leave relay.enabled out to emit without a relay in this application',
          );
        }
        if (!publisher || !resolved.relay.enabled) {
          const db = fromPrisma(asPrismaClient(client));
          const statementTimeoutMs = resolved.options.statementTimeout;
          return new OutboxRelayService(undefined, () => verifyOutboxSchema(db, { statementTimeoutMs }));
        }
        if (!isPublisherInstance(publisher)) {
          throw new FerryConfigError(
            'publisher',
            'the provider does not implement publish(messages, signal)',
          );
        }
        return new OutboxRelayService(
          createRelay({
            db: fromPrisma(asPrismaClient(client)),
            publisher,
            listenUrl: resolved.relay.listenUrl,
            options: resolved.options,
            observer: resolved.observer,
            logger: resolved.logger,
          }),
        );
      },
      inject: withPublisher
        ? [OUTBOX_RESOLVED, OUTBOX_MODULE_OPTIONS, prisma, OUTBOX_PUBLISHER]
        : [OUTBOX_RESOLVED, OUTBOX_MODULE_OPTIONS, prisma],
    },
  ];
}

/**
 * The transactional outbox for a Nest application: OutboxEmitter to emit inside the
 * application's Prisma transactions, the admin services, and a relay (when a publisher is
 * configured) started on application bootstrap and drained on shutdown.
 */

/** forRoot's registration options, read from a class's prototype too (checkRegistration). */
const REGISTRATION_KEYS: readonly string[] = ['prisma', 'publisher', 'isGlobal', 'imports'];

/** forRootAsync's own keys: the settings come from useFactory. */
const ASYNC_KEYS = {
  imports: true,
  inject: true,
  useFactory: true,
  isGlobal: true,
  factoryTimeoutMs: true,
  prisma: true,
  publisher: true,
} as const satisfies OptionKeys<OutboxModuleAsyncOptions>;

@Module({})
export class OutboxModule {
  static forRoot(given: OutboxModuleOptions): DynamicModule {
    const options = checkRegistration(given, undefined, REGISTRATION_KEYS);
    const prisma = requirePrismaToken('OutboxModule', options.prisma);
    const publisher = publisherProvider(options.publisher);
    return {
      module: OutboxModule,
      global: options.isGlobal ?? false,
      imports: options.imports ?? [],
      providers: [
        { provide: OUTBOX_MODULE_OPTIONS, useValue: outboxSettingsOf(options) },
        ...(publisher ? [publisher] : []),
        ...serviceProviders(prisma, options.publisher, 'forRoot'),
      ],
      exports: EXPORTS,
    };
  }

  /**
   * Registration options (prisma, publisher, isGlobal, imports, inject) sit at the top level;
   * the factory returns the rest. A factory result holding a registration option fails at
   * module init with FerryConfigError naming it.
   */
  static forRootAsync(given: OutboxModuleAsyncOptions): DynamicModule {
    const options = checkRegistration(given, ASYNC_KEYS);
    const prisma = requirePrismaToken('OutboxModule', options.prisma);
    const publisher = publisherProvider(options.publisher);
    const useFactory = boundedFactory('OutboxModule', options);
    return {
      module: OutboxModule,
      global: options.isGlobal ?? false,
      imports: options.imports ?? [],
      providers: [
        {
          provide: OUTBOX_MODULE_OPTIONS,
          useFactory,
          inject: options.inject ?? [],
        },
        ...(publisher ? [publisher] : []),
        ...serviceProviders(prisma, options.publisher, 'inject'),
      ],
      exports: EXPORTS,
    };
  }
}
