import { FerryConfigError } from './errors';

/**
 * Loads an optional peer dependency through `load` (the caller's own `require`, so it resolves
 * from the package that declares the peer). A missing package is a FerryConfigError on `option`
 * whose message says what needs it and how to install it; any other load error is rethrown.
 */
export function requireOptionalPeer<T>(load: () => unknown, option: string, reason: string): T {
  try {
    return load() as T;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw error;
    throw new FerryConfigError(option, reason);
  }
}
