import { credentialsProviderFailure } from './errors';
import type { StaticCredentials } from './options';

/** A credential provider function as the SDK calls it (with the identity properties it passes, if any). */
export type CredentialProvider = (identityProperties?: Record<string, unknown>) => Promise<StaticCredentials>;

/** One request in flight through SqsConnection.request (enter() to leave()). */
export type RequestTicket = object;

/**
 * The credential provider of a connection, as the SDK is handed it, the calls of it not answered
 * yet, and the requests that may be waiting for them. The SDK waits for credentials with no
 * deadline and shares one pending call among all its requests, so a provider that never answers
 * would hold every later request too. Each request waits for the shared call until its OWN
 * deadline (SqsConnection.request); the call itself is abandoned (giveUp, and the SDK asks the
 * provider again on its next request) only when the last request that may be waiting for it ended.
 * "May be waiting": every request in flight when the call began or begun while it runs (a request
 * signed before, e.g. a long poll, counts too: a call is never abandoned under a waiting request).
 * What the provider throws reaches the request named `CredentialsProviderError` (errors.ts).
 */
export class CredentialWatch {
  private readonly pending = new Set<(error: unknown) => void>();
  private readonly inFlight = new Set<RequestTicket>();
  private readonly waiters = new Set<RequestTicket>();

  watch(provider: CredentialProvider): CredentialProvider {
    return (identityProperties) =>
      new Promise<StaticCredentials>((resolve, reject) => {
        const end = (settle: () => void) => {
          if (!this.pending.delete(giveUp)) return;
          if (this.pending.size === 0) this.waiters.clear();
          settle();
        };
        const giveUp = (error: unknown) => end(() => reject(error));
        if (this.pending.size === 0) for (const ticket of this.inFlight) this.waiters.add(ticket);
        this.pending.add(giveUp);
        Promise.resolve()
          .then(() => provider(identityProperties))
          .then(
            (credentials) => end(() => resolve(credentials)),
            (error: unknown) => end(() => reject(credentialsProviderFailure(error))),
          );
      });
  }

  /** Whether a call of the provider is pending: a request waiting now may be waiting for it. */
  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /** A request begins: it may wait for a call of the provider (one pending now, or one it starts). */
  enter(): RequestTicket {
    const ticket: RequestTicket = {};
    this.inFlight.add(ticket);
    if (this.pending.size > 0) this.waiters.add(ticket);
    return ticket;
  }

  /** A request ended (answered or failed): it waits for nothing any more. */
  leave(ticket: RequestTicket): void {
    this.inFlight.delete(ticket);
    this.waiters.delete(ticket);
  }

  /**
   * A request its deadline ended: true when it may have been waiting for a call of the provider.
   * When no other request may be waiting for the pending calls, they end with `error`.
   */
  abandon(ticket: RequestTicket, error: unknown): boolean {
    const waited = this.waiters.has(ticket);
    this.leave(ticket);
    if (waited && this.waiters.size === 0) for (const giveUp of [...this.pending]) giveUp(error);
    return waited;
  }
}
