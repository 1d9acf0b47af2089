import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency } from '@nestjs/common';
import { FerryConfigError } from '@ferry/core';
import {
  booleanOption,
  deadlineSignal,
  knownKeysOption,
  recordOption,
  onAbort,
  received,
  requiredOptions,
  timerOption,
} from '@ferry/core/transport';

/** How long a forRootAsync factory may take when `factoryTimeoutMs` is not given. */
export const DEFAULT_FACTORY_TIMEOUT_MS = 30_000;

/**
 * Options that register or resolve providers. In forRootAsync they must sit at the top
 * level beside imports / inject / useFactory, because Nest builds the module's provider
 * list before any factory runs. `global` (the inbox's tenant-less scope policy) is here
 * too: like privilegedAdmin it widens what the module may touch, so it is fixed at
 * registration rather than computed from runtime configuration.
 */
export const REGISTRATION_KEYS = [
  'prisma',
  'imports',
  'inject',
  'useFactory',
  'factoryTimeoutMs',
  'publisher',
  'privilegedAdmin',
  'global',
  'isGlobal',
  'handlers',
] as const;

/** The part of forRootAsync every ferry module shares. */
export interface FerryAsyncBase<TFactoryResult> {
  /** Modules that export `prisma` and the factory's injected providers. */
  imports?: ModuleMetadata['imports'];
  inject?: (InjectionToken | OptionalFactoryDependency)[];
  useFactory: (...args: never[]) => TFactoryResult | Promise<TFactoryResult>;
  /** Register the module globally (its services injectable everywhere). Default false. */
  isGlobal?: boolean;
  /**
   * How long `useFactory` may take (ms, at least 1). One that has not resolved by then fails the
   * application's bootstrap with FERRY_CONFIG_INVALID naming the module's factory, instead of
   * holding it for ever. Default 30,000.
   */
  factoryTimeoutMs?: number;
}

// Every key FerryAsyncBase declares is top-level only: one missing from REGISTRATION_KEYS is a
// compile error here, not a factory result refused as "not a known option" (review 95).
type MissingRegistrationKey = Exclude<keyof FerryAsyncBase<unknown>, (typeof REGISTRATION_KEYS)[number]>;
const everyBaseKeyRegistered: [MissingRegistrationKey] extends [never] ? true : MissingRegistrationKey = true;
void everyBaseKeyRegistered;

/**
 * `useFactory` as the module's options provider runs it: its result checked (assertFactoryResult)
 * and its wait bounded by `factoryTimeoutMs` (checked when forRootAsync is called).
 */
export function boundedFactory(
  moduleName: string,
  options: FerryAsyncBase<unknown>,
): (...args: unknown[]) => Promise<Record<string, unknown>> {
  const useFactory = options.useFactory as (...args: unknown[]) => unknown;
  const timeoutMs = timerOption(
    'factoryTimeoutMs',
    options.factoryTimeoutMs ?? DEFAULT_FACTORY_TIMEOUT_MS,
    1,
  );
  return async (...args) => {
    let stop = (): void => undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      stop = onAbort(deadlineSignal(timeoutMs), () =>
        reject(
          new FerryConfigError(
            'useFactory',
            `the ${moduleName}.forRootAsync factory did not resolve within ${timeoutMs} ms (factoryTimeoutMs)`,
          ),
        ),
      );
    });
    try {
      const result = await Promise.race([Promise.resolve().then(() => useFactory(...args)), timedOut]);
      return assertFactoryResult(moduleName, result);
    } finally {
      stop();
    }
  };
}

/** Throws FerryConfigError if a forRootAsync factory returned a registration option. */
export function assertFactoryResult(moduleName: string, result: unknown): Record<string, unknown> {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    throw new FerryConfigError('useFactory', `the ${moduleName}.forRootAsync factory must return an object`);
  }
  for (const key of REGISTRATION_KEYS) {
    if (Object.prototype.hasOwnProperty.call(result, key)) {
      throw new FerryConfigError(
        key,
        `must be a top-level ${moduleName}.forRootAsync option (beside imports, inject and useFactory), not part of the factory result`,
      );
    }
  }
  return result as Record<string, unknown>;
}

/**
 * The registration options both forRoot and forRootAsync check when called (the module's
 * settings are checked at module init): unknown top-level keys of forRootAsync (`known`; forRoot's
 * go to the settings), and isGlobal a boolean, useFactory a function. Returns the options'
 * snapshot, each read once (knownKeysOption; forRoot's: its own keys and the `registration` keys
 * it inherits, recordOption): the module is built from the values checked, not a second read.
 */
export function checkRegistration<T extends object>(
  given: T,
  known?: Readonly<Record<string, true>>,
  registration: readonly string[] = [],
): T {
  // Left out or null: refused naming `options`, not a TypeError reading isGlobal.
  requiredOptions(given, known === undefined ? 'prisma' : 'prisma and useFactory');
  const options =
    known === undefined ? recordOption('', given, registration) : knownKeysOption('', given, known);
  if (known !== undefined) {
    if (typeof (options as { useFactory?: unknown }).useFactory !== 'function') {
      throw new FerryConfigError(
        'useFactory',
        `must be a function, got ${received((options as { useFactory?: unknown }).useFactory)}`,
      );
    }
  }
  booleanOption('isGlobal', (options as { isGlobal?: unknown }).isGlobal ?? false);
  importsOption((options as { imports?: unknown }).imports);
  if (known !== undefined) injectOption((options as { inject?: unknown }).inject);
  return options;
}

/** A class, a non-empty string or a symbol: what Nest takes as an injection token. */
export function isInjectionToken(value: unknown): value is InjectionToken {
  return (
    typeof value === 'function' ||
    typeof value === 'symbol' ||
    (typeof value === 'string' && value.length > 0)
  );
}

/** Left undefined where a module is defined, a class imported in a cycle shows this way. */
const CYCLE_HINT = '(a class imported in a cycle is undefined where the module is defined: use forwardRef)';

/** `imports`: an array of modules (classes, dynamic modules, their promises, forwardRef()). */
function importsOption(imports: unknown): void {
  if (imports === undefined) return;
  if (!Array.isArray(imports)) {
    throw new FerryConfigError('imports', `must be an array of modules, got ${received(imports)}`);
  }
  imports.forEach((entry: unknown, index) => {
    if (typeof entry !== 'function' && (typeof entry !== 'object' || entry === null)) {
      throw new FerryConfigError(
        'imports',
        `entry ${index} must be a module, got ${received(entry)} ${CYCLE_HINT}`,
      );
    }
  });
}

/** `inject`: an array of injection tokens, `{ token, optional }` or forwardRef(). */
function injectOption(inject: unknown): void {
  if (inject === undefined) return;
  if (!Array.isArray(inject)) {
    throw new FerryConfigError('inject', `must be an array of injection tokens, got ${received(inject)}`);
  }
  inject.forEach((entry: unknown, index) => {
    if (!isInjectionToken(entry) && (typeof entry !== 'object' || entry === null)) {
      throw new FerryConfigError(
        'inject',
        `entry ${index} must be an injection token (class, string or symbol) or { token, optional }, got ${received(entry)} ${CYCLE_HINT}`,
      );
    }
  });
}

export function requirePrismaToken(moduleName: string, prisma: unknown): InjectionToken {
  if (!isInjectionToken(prisma)) {
    throw new FerryConfigError(
      'prisma',
      `${moduleName} needs the injection token (class, string or symbol) of the application's Prisma client provider, got ${received(prisma)}`,
    );
  }
  return prisma;
}
