import { Scope, type InjectionToken, type OnModuleInit, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { FerryConfigError } from '@ferry/core';

/** How a token or a class reads in an error: its name. */
export function nameOf(token: unknown): string {
  if (typeof token === 'function') return token.name || 'an anonymous class';
  return String(token);
}

/** Nest's InvalidClassScopeException: `get()` of a transient or request-scoped provider (or one depending on it). */
export function isScopeError(error: unknown): boolean {
  return (
    (error as { constructor?: { name?: string } } | null)?.constructor?.name === 'InvalidClassScopeException'
  );
}

/** One dependency of a ferry module's services, and what to say when Nest has no singleton of it. */
export interface SingletonDependency {
  /** The option that brought it in (`prisma`, `publisher`, `inject`). */
  readonly option: string;
  readonly token: InjectionToken;
  /** Provided in the ferry module itself (its internal tokens) rather than imported. */
  readonly local: boolean;
  readonly what: string;
}

const CHECK = Symbol('ferry.singletonCheck');

/**
 * True when `token` has no singleton because it depends on a request: introspect() for the
 * application's tokens (a transient one is fine, the service gets its own instance), get() in the
 * module for its own tokens (introspect() finds the last module's, with the module imported twice).
 */
function requestScoped(moduleRef: ModuleRef, token: InjectionToken, local: boolean): boolean {
  // introspect() is typed for classes, strings and symbols; an abstract class token works the same.
  if (!local)
    return moduleRef.introspect(token as Parameters<ModuleRef['introspect']>[0]).scope === Scope.REQUEST;
  try {
    moduleRef.get<unknown>(token, { strict: true });
    return false;
  } catch (error) {
    return isScopeError(error);
  }
}

/**
 * A provider failing module init with FerryConfigError when a ferry service would depend on a
 * request-scoped provider (`dependencies`, in the order they are blamed). Nest makes such a service
 * request-scoped too: it creates none at init and calls none of its hooks, so the relay and the
 * inbox worker would never start, without an error (review 103). This provider depends on
 * ModuleRef only, so its own onModuleInit runs whatever the services' scope.
 */
export function singletonCheck(moduleName: string, dependencies: readonly SingletonDependency[]): Provider {
  return {
    provide: CHECK,
    useFactory: (moduleRef: ModuleRef): OnModuleInit => ({
      onModuleInit() {
        for (const { option, token, local, what } of dependencies) {
          if (!requestScoped(moduleRef, token, local)) continue;
          throw new FerryConfigError(
            option,
            `${what} is request-scoped (or depends on a request-scoped provider): ${moduleName}'s services would then be created per request, none at application start, and its relay and worker would never run. ferry needs singleton (default-scoped) providers here`,
          );
        }
      },
    }),
    inject: [ModuleRef],
  };
}
