import type { StaticCredentials } from './options';

/** A credential provider function as the SDK calls it (with the identity properties it passes, if any). */
export type CredentialProvider = (identityProperties?: Record<string, unknown>) => Promise<StaticCredentials>;

/**
 * The credential provider of a connection, as the SDK is handed it, and the calls of it not
 * answered yet. The SDK waits for credentials with no deadline and shares one pending call among
 * all its requests, so a provider that never answers would hold every later request too: when a
 * request's deadline ends it while it waits (SqsConnection.request), giveUp() ends the pending
 * calls, and the SDK asks the provider again on its next request.
 */
export class CredentialWatch {
  private readonly pending = new Set<(error: unknown) => void>();

  /** True while a call of the provider has not answered: a request ended now was waiting for it. */
  get waiting(): boolean {
    return this.pending.size > 0;
  }

  watch(provider: CredentialProvider): CredentialProvider {
    return (identityProperties) =>
      new Promise<StaticCredentials>((resolve, reject) => {
        const end = (settle: () => void) => {
          if (this.pending.delete(giveUp)) settle();
        };
        const giveUp = (error: unknown) => end(() => reject(error));
        this.pending.add(giveUp);
        Promise.resolve()
          .then(() => provider(identityProperties))
          .then(
            (credentials) => end(() => resolve(credentials)),
            (error: unknown) => end(() => reject(error)),
          );
      });
  }

  /** Ends every call of the provider not answered yet with `error`. */
  giveUp(error: unknown): void {
    for (const giveUp of [...this.pending]) giveUp(error);
  }
}
