import { FerryConfigError } from './errors';

/**
 * What a failed load of an optional peer dependency throws: a missing package is a
 * FerryConfigError on `option` whose message says what needs it and how to install it; any other
 * load error (the peer installed but failing to load) is itself. The caller writes the load, its `require` of the package, inside its own try
 * block: bundlers (esbuild, webpack) follow every `require` of a string, and read one inside a
 * try block as optional (a warning when the package is absent), any other as a missing module that
 * fails the build (review 106: an application bundling @ferry/core without @opentelemetry/api and
 * kysely did not build).
 */
export function optionalPeerError(error: unknown, peer: OptionalPeer): unknown {
  if (!peerIsMissing(error, peer.peer)) return error;
  return new FerryConfigError(peer.option, peer.reason);
}

/** An optional peer dependency: its package, the option or entry point needing it, and why (with the install command). */
export interface OptionalPeer {
  readonly peer: string;
  readonly option: string;
  readonly reason: string;
}

/**
 * True when `error` says that `peer` itself cannot be found. A peer that is installed but fails to
 * load is not missing, also when its error is MODULE_NOT_FOUND: one of its own dependencies gone
 * (`Cannot find module 'tdigest'`), or its main file (a path): "not installed" sent the operator
 * to install what they had (review 108). Node, jest and webpack all say `Cannot find module '<name>'`.
 */
function peerIsMissing(error: unknown, peer: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'MODULE_NOT_FOUND' || typeof message !== 'string') return false;
  return /^Cannot find module '([^']*)'/.exec(message)?.[1] === peer;
}

/**
 * Loads an optional peer dependency through `load` (the caller's own `require`, so it resolves
 * from the package that declares the peer), failing as optionalPeerError says. A bundler reads the
 * `require` in `load` as a required module unless it is inside a try block of its own: prefer
 * optionalPeerError in the caller's try.
 */
export function requireOptionalPeer<T>(load: () => unknown, peer: OptionalPeer): T {
  try {
    return load() as T;
  } catch (error) {
    throw optionalPeerError(error, peer);
  }
}
