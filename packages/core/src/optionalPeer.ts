import { FerryConfigError } from './errors';

/**
 * What a failed load of an optional peer dependency throws: a missing package is a
 * FerryConfigError on `option` whose message says what needs it and how to install it; any other
 * load error is itself. The caller writes the load, its `require` of the package, inside its own try
 * block: bundlers (esbuild, webpack) follow every `require` of a string, and read one inside a
 * try block as optional (a warning when the package is absent), any other as a missing module that
 * fails the build (review 106: an application bundling @ferry/core without @opentelemetry/api and
 * kysely did not build).
 */
export function optionalPeerError(error: unknown, option: string, reason: string): unknown {
  if ((error as { code?: unknown } | null)?.code !== 'MODULE_NOT_FOUND') return error;
  return new FerryConfigError(option, reason);
}

/**
 * Loads an optional peer dependency through `load` (the caller's own `require`, so it resolves
 * from the package that declares the peer), failing as optionalPeerError says. A bundler reads the
 * `require` in `load` as a required module unless it is inside a try block of its own: prefer
 * optionalPeerError in the caller's try.
 */
export function requireOptionalPeer<T>(load: () => unknown, option: string, reason: string): T {
  try {
    return load() as T;
  } catch (error) {
    throw optionalPeerError(error, option, reason);
  }
}
