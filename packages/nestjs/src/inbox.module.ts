import { Module, type DynamicModule, type InjectionToken, type Provider } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, ModuleRef } from '@nestjs/core';
import { FerryConfigError, type InboxHandler, type StatementTimeoutOptions } from '@ferry/core';
import { booleanOption, oneOfOption, received, type OptionKeys } from '@ferry/core/transport';
import { boundedFactory, checkRegistration, isInjectionToken, requirePrismaToken } from './async-options';
import { discoverDecoratedHandlers, resolveTokenHandlers } from './handler-discovery';
import {
  inboxSettingsOf,
  type InboxModuleAsyncOptions,
  type InboxModuleOptions,
  type InboxRegistration,
  type InboxSettings,
} from './inbox.options';
import { InboxAdminService, InboxPrivilegedAdminService, InboxService } from './inbox.services';
import { asPrismaClient } from './prisma';
import { nameOf, singletonCheck } from './scope';
import { INBOX_MODULE_OPTIONS, INBOX_REGISTRATION } from './tokens';

interface Registration {
  readonly handlers: Readonly<Record<string, InjectionToken>>;
  readonly privilegedAdmin: boolean;
  readonly global: InboxRegistration['global'];
}

/** Checked when forRoot / forRootAsync is called: these decide which providers register. */
function registrationOf(options: InboxRegistration): Registration {
  const handlers: unknown = options.handlers ?? {};
  if (typeof handlers !== 'object' || handlers === null || Array.isArray(handlers)) {
    throw new FerryConfigError(
      'handlers',
      `must be an object of { 'consumer.name': ProviderToken }, got ${received(handlers)}`,
    );
  }
  for (const [consumer, token] of Object.entries(handlers)) {
    if (!isInjectionToken(token)) {
      throw new FerryConfigError(
        `handlers.${consumer}`,
        `must be the injection token (class, string or symbol) of a provider with handle(payload, context), got ${received(token)} (a class imported in a cycle is undefined where the module is defined)`,
      );
    }
  }
  return {
    handlers: handlers as Readonly<Record<string, InjectionToken>>,
    privilegedAdmin: booleanOption('privilegedAdmin', options.privilegedAdmin ?? false),
    global:
      options.global === undefined
        ? undefined
        : oneOfOption('global', options.global, ['reject', 'shared'] as const),
  };
}

/** forRoot's registration options, read from a class's prototype too (checkRegistration). */
const REGISTRATION_KEYS: readonly string[] = [
  'prisma',
  'handlers',
  'privilegedAdmin',
  'global',
  'isGlobal',
  'imports',
];

/** forRootAsync's own keys: the settings come from useFactory. */
const ASYNC_KEYS = {
  imports: true,
  inject: true,
  useFactory: true,
  isGlobal: true,
  factoryTimeoutMs: true,
  prisma: true,
  handlers: true,
  privilegedAdmin: true,
  global: true,
} as const satisfies OptionKeys<InboxModuleAsyncOptions<unknown>>;

/** The module's statement deadline is the admins' too (core checks it, naming `statementTimeoutMs`). */
function adminOptions(settings: InboxSettings<unknown>): StatementTimeoutOptions {
  return settings.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: settings.statementTimeoutMs };
}

function providers(
  prisma: InjectionToken,
  registration: Registration,
  settings: 'forRoot' | 'inject',
): Provider[] {
  const list: Provider[] = [
    // What the services depend on, in the order a request-scoped one is blamed.
    singletonCheck('InboxModule', [
      { option: 'prisma', token: prisma, local: false, what: `the Prisma client provider ${nameOf(prisma)}` },
      ...(settings === 'inject'
        ? [
            {
              option: 'inject',
              token: INBOX_MODULE_OPTIONS,
              local: true,
              what: 'a provider the InboxModule.forRootAsync factory injects',
            },
          ]
        : []),
    ]),
    { provide: INBOX_REGISTRATION, useValue: registration },
    {
      provide: InboxService,
      useFactory: (
        client: unknown,
        settings: InboxSettings<unknown>,
        reg: Registration,
        discovery: DiscoveryService,
        moduleRef: ModuleRef,
      ) =>
        new InboxService({
          client: asPrismaClient(client),
          // privilegedAdmin and global pass through core's validation like every other option.
          options: {
            ...settings,
            privilegedAdmin: reg.privilegedAdmin,
            ...(reg.global === undefined ? {} : { global: reg.global }),
          },
          findHandlers: () => {
            const handlers: Record<string, InboxHandler<unknown>> = {};
            resolveTokenHandlers(moduleRef, reg.handlers, handlers);
            discoverDecoratedHandlers(discovery, handlers);
            return handlers;
          },
        }),
      inject: [prisma, INBOX_MODULE_OPTIONS, INBOX_REGISTRATION, DiscoveryService, ModuleRef],
    },
    {
      provide: InboxAdminService,
      useFactory: (client: unknown, settings: InboxSettings<unknown>) =>
        new InboxAdminService(asPrismaClient(client), adminOptions(settings)),
      inject: [prisma, INBOX_MODULE_OPTIONS],
    },
  ];
  if (registration.privilegedAdmin === true) {
    list.push({
      provide: InboxPrivilegedAdminService,
      useFactory: (client: unknown, settings: InboxSettings<unknown>) =>
        new InboxPrivilegedAdminService(asPrismaClient(client), {
          ...adminOptions(settings),
          privilegedAdmin: true,
        }),
      inject: [prisma, INBOX_MODULE_OPTIONS],
    });
  }
  return list;
}

function exportsOf(registration: Registration): InjectionToken[] {
  return [
    InboxService,
    InboxAdminService,
    ...(registration.privilegedAdmin === true ? [InboxPrivilegedAdminService] : []),
  ];
}

/**
 * The inbox for a Nest application: InboxService (acceptance + worker), InboxAdminService,
 * and InboxPrivilegedAdminService only when `privilegedAdmin: true`. Handlers come from
 * @InboxHandler() methods on providers and from `handlers: { consumer: ProviderToken }`.
 */
@Module({})
export class InboxModule {
  static forRoot<TTx>(given: InboxModuleOptions<TTx>): DynamicModule {
    const options = checkRegistration(given, undefined, REGISTRATION_KEYS);
    const prisma = requirePrismaToken('InboxModule', options.prisma);
    const registration = registrationOf(options);
    return {
      module: InboxModule,
      global: options.isGlobal ?? false,
      imports: [DiscoveryModule, ...(options.imports ?? [])],
      providers: [
        { provide: INBOX_MODULE_OPTIONS, useValue: inboxSettingsOf(options) },
        ...providers(prisma, registration, 'forRoot'),
      ],
      exports: exportsOf(registration),
    };
  }

  /**
   * Registration options (prisma, handlers, privilegedAdmin, global, isGlobal, imports, inject)
   * sit at the top level; the factory returns the rest (worker, limits, handlerContext,
   * observer, logger). A factory result holding a registration option fails with FerryConfigError.
   */
  static forRootAsync<TTx>(given: InboxModuleAsyncOptions<TTx>): DynamicModule {
    const options = checkRegistration(given, ASYNC_KEYS);
    const prisma = requirePrismaToken('InboxModule', options.prisma);
    const registration = registrationOf(options);
    const useFactory = boundedFactory('InboxModule', options);
    return {
      module: InboxModule,
      global: options.isGlobal ?? false,
      imports: [DiscoveryModule, ...(options.imports ?? [])],
      providers: [
        {
          provide: INBOX_MODULE_OPTIONS,
          useFactory,
          inject: options.inject ?? [],
        },
        ...providers(prisma, registration, 'inject'),
      ],
      exports: exportsOf(registration),
    };
  }
}
